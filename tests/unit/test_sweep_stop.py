"""Stopping ``fairsim sweep``: Ctrl-C stops the sweep and its pool workers and leaves no temporary
run folder; workers whose sweep process was killed stop by themselves.

Real processes: a ``fairsim sweep`` subprocess on ``local:2`` is signalled while both workers are
inside a run. Each run of the sweep takes longer than the deadlines below, so a worker that did
not stop would still be alive (and writing) when they pass. Processes are read from ``/proc``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from fairsim.traces.synth import SAMPLE_DURATION_S

ROOT = Path(__file__).resolve().parents[2]

#: How long the test waits for the processes to be gone before it fails (a failure timeout, not
#: a speed claim: a stopped sweep is gone in about 1 s; each run takes several seconds of CPU,
#: so a worker left running outlives it by far).
GONE_WITHIN_S = 10.0

# 8 runs of 100,000 tasks on 20 servers (4-5 s of CPU each on an idle core).
SLOW = {
    "name": "slow-test",
    "base": {
        "trace": {"format": "synthetic", "n_tasks": 100_000, "duration_s": SAMPLE_DURATION_S},
        "cluster": {"servers": 20, "source": "table-i"},
        "schedulers": ["bf-drfh"],
        "collect": {"utilization_interval_s": 120},
    },
    "seeds": list(range(1, 9)),
}


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process from ``/proc``; None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid = text.rsplit(")", 1)[1].split()[:2]
    return state, int(ppid)


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None and st[1] == pid:
                kids.append(int(entry.name))
    return kids


def _alive(pids: list[int]) -> list[int]:
    """The processes of ``pids`` still running (a zombie nobody reaped yet counts as gone)."""
    return [p for p in pids if (st := _stat(p)) is not None and st[0] != "Z"]


def _wait_gone(pids: list[int], timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return _alive(pids)


def _run_folders_in_progress(out: Path) -> list[Path]:
    """The temporary folders of runs being written (``OUT/.<run_id>.*.tmp``)."""
    return [p for p in out.glob(".*.tmp") if not p.name.startswith("..")]


def _start_busy_sweep(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, list[int]]:
    """Start the slow sweep on two workers; return once both are inside a run, with the sweep
    process's children (the two workers and multiprocessing's resource tracker)."""
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(SLOW))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "fairsim.cli", "sweep", str(path), "--out", str(out)]
    # A job started with `&` by a non-interactive shell ignores SIGINT, and its children inherit
    # that: give the sweep Python's own Ctrl-C handling, as in a terminal.
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        proc = subprocess.Popen(
            [*cmd, "--executor", "local:2", "--no-progress"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group, as a terminal job
        )
    finally:
        signal.signal(signal.SIGINT, old)
    deadline = time.monotonic() + 120
    while len(_run_folders_in_progress(out)) < 2 and proc.poll() is None:
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail("the sweep's two workers did not start a run within 120 s")
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()[1]
    kids = _children(proc.pid)
    assert len(kids) >= 2, kids  # two workers (and the resource tracker)
    return proc, out, kids


def _kill_leftovers(proc: subprocess.Popen[str], kids: list[int]) -> None:
    for pid in [proc.pid, *_alive(kids)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


@pytest.mark.parametrize("target", ["group", "process"])
def test_ctrl_c_stops_sweep_and_workers(tmp_path: Path, target: str) -> None:
    proc, out, kids = _start_busy_sweep(tmp_path)
    try:
        if target == "group":  # what a terminal's Ctrl-C does
            os.killpg(proc.pid, signal.SIGINT)
        else:  # kill -INT <sweep>: the workers get no signal
            os.kill(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=GONE_WITHIN_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the sweep is still running {GONE_WITHIN_S} s after SIGINT")
        left = _wait_gone(kids, GONE_WITHIN_S)
        assert left == [], f"children of the sweep still running after SIGINT: {left}"
    finally:
        _kill_leftovers(proc, kids)
    assert proc.returncode == 130, err
    # One line: no traceback from the pool, no resource tracker warning about leaked semaphores.
    assert err == "fairsim: interrupted; finished results were kept\n", err
    leftovers = sorted(p.name for p in out.iterdir() if p.name.startswith("."))
    assert leftovers == [], leftovers
    assert (out / "runs.parquet").is_file()


def test_workers_stop_when_the_sweep_is_killed(tmp_path: Path) -> None:
    proc, out, kids = _start_busy_sweep(tmp_path)
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=GONE_WITHIN_S)
        left = _wait_gone(kids, GONE_WITHIN_S)
        assert left == [], f"workers still running after their sweep was killed: {left}"
    finally:
        _kill_leftovers(proc, kids)
    assert proc.returncode == -signal.SIGKILL
    # The workers unwound their runs before exiting: no temporary run folder is left.
    assert _run_folders_in_progress(out) == []


# A stop request (SIGTERM → ``_Stopped``) can arrive while a run executes a class body: a lazy
# import does (numba's, the first time a kernel runs). Python wraps an exception raised in
# ``__set_name__`` in a RuntimeError, so the run used to end as "failed", logged from the
# worker, and the worker went on to the next run with a half-imported module.
RUN = {
    **SLOW["base"],
    "name": "stop-test",
    "seed": 1,
    "trace": {**SLOW["base"]["trace"], "n_tasks": 50},
}


class _StopsWhenNamed:
    def __set_name__(self, owner: type, name: str) -> None:
        from fairsim.scenario import sweep

        sweep._STOPPING.set()
        raise sweep._Stopped


def _class_body_interrupted(*args: object, **kwargs: object) -> dict[str, object]:
    class Lazy:  # what importing a module in the middle of a run executes
        attr = _StopsWhenNamed()

    return {}


@pytest.fixture
def stopping():
    from fairsim.scenario import sweep

    sweep._STOPPING.clear()
    yield sweep
    sweep._STOPPING.clear()


def test_a_stop_wrapped_in_another_error_stops_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, stopping
) -> None:
    monkeypatch.setattr("fairsim.scenario.output.run_to_folder", _class_body_interrupted)
    with pytest.raises(stopping._Stopped) as info:
        stopping.execute_run(RUN, str(tmp_path), "r1", None)
    assert isinstance(info.value.__cause__, RuntimeError)  # how Python delivered it
    assert "failed" not in caplog.text
    assert list(tmp_path.iterdir()) == []  # the temporary run folder was removed


def test_the_same_error_without_a_stop_is_a_failed_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stopping
) -> None:
    def broken(*args: object, **kwargs: object) -> dict[str, object]:
        raise RuntimeError("Error calling __set_name__")

    monkeypatch.setattr("fairsim.scenario.output.run_to_folder", broken)
    res = stopping.execute_run(RUN, str(tmp_path), "r1", None)
    assert res["status"] == "failed"
    assert res["error"] == "RuntimeError: Error calling __set_name__"


def test_a_worker_told_to_stop_sends_no_result(monkeypatch: pytest.MonkeyPatch, stopping) -> None:
    def exits(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(os, "_exit", exits)

    def swallows_the_stop() -> dict[str, str]:
        stopping._STOPPING.set()
        return {"status": "failed"}

    with pytest.raises(SystemExit) as info:
        stopping._run_in_worker(swallows_the_stop)
    assert info.value.code == 128 + signal.SIGTERM
    stopping._STOPPING.clear()
    assert stopping._run_in_worker(lambda: {"status": "ok"}) == {"status": "ok"}
