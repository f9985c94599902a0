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
