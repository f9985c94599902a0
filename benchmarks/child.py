"""A benchmark's child process and its own peak memory: one way for every benchmark.

:func:`run_child` runs a command through this file as a small wrapper process, which starts the
command, waits for it and reports the command's wall time, CPU time and peak resident set size
(``ru_maxrss`` of ``RUSAGE_CHILDREN``: the largest RSS of the waited-for command).

Why a wrapper: Linux carries the peak RSS of the process that started a child into the child's
own ``ru_maxrss`` across ``exec`` (a harness that has just resampled a trace would add its 0.5
GB to the child's figure). The wrapper imports nothing beyond the standard library and is run by
its file path (so it works from a checkout of another revision too); the command then starts
from the wrapper's small resident set, and its peak is its own. The same helper serves commands
that cannot report their own memory (``fairsim trace convert``, ``fairsim run``).

:func:`child_json` is the usual case: a ``python -m benchmarks.X --one ...`` child that prints one
JSON object on its last line of stdout; the wrapper's figures are added to it, and a failure
becomes ``{"error": "exit N: <last lines of stderr>"}``.

Only the standard library at import time: this file is the wrapper's program.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WRAPPER = Path(__file__).resolve()
#: Lines of stderr kept in a failed child's ``error``.
ERROR_TAIL = 5


@dataclass(frozen=True)
class ChildRun:
    """What one child process did.

    Attributes
    ----------
    returncode : int or None
        The command's exit status; None when it was stopped at the time limit.
    stdout, stderr : str
        Its output ("" when not captured).
    wall_s : float
        Seconds from the wrapper's start of the command to its end (start-up included).
    cpu_s : float
        User and system CPU seconds of the command (and of its waited-for children).
    peak_rss_mb : float
        The command's peak resident set size, MB (2**20 bytes).
    """

    returncode: int | None
    stdout: str
    stderr: str
    wall_s: float
    cpu_s: float
    peak_rss_mb: float

    @property
    def error(self) -> str | None:
        """None when the command exited 0, else a one-line reason with stderr's last lines."""
        if self.returncode == 0:
            return None
        what = "timed out" if self.returncode is None else f"exit {self.returncode}"
        tail = self.stderr.strip().splitlines()[-ERROR_TAIL:]
        return f"{what}: " + " | ".join(tail) if tail else what


def fairsim_command(args: Sequence[str]) -> list[str]:
    """``fairsim ARGS`` as run by this interpreter (``python -m fairsim.cli ARGS``), for
    :func:`run_child`: the checkout's own package, whichever ``fairsim`` is on the PATH."""
    return [sys.executable, "-m", "fairsim.cli", *args]


def run_child(
    cmd: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    capture: bool = True,
) -> ChildRun:
    """Run ``cmd`` in a child process and measure it (module docstring: why a wrapper).

    Parameters
    ----------
    cmd : sequence of str
        The command (``[sys.executable, "-m", ...]``, ``fairsim ...``).
    cwd, env : optional
        Its working folder and environment (default: this process's).
    timeout_s : float, optional
        The wrapper stops the command after this many seconds (``returncode`` None).
    capture : bool
        Capture stdout and stderr; False lets them through (progress bars).

    Returns
    -------
    ChildRun
        Never raises for a failing command: see ``returncode`` and ``error``.
    """
    with tempfile.TemporaryDirectory(prefix="fairsim-child-") as tmp:
        report = Path(tmp) / "usage.json"
        wrapped = [sys.executable, str(WRAPPER), str(report), repr(timeout_s), "--", *cmd]
        proc = subprocess.run(
            wrapped,
            cwd=cwd,
            env=None if env is None else dict(env),
            capture_output=capture,
            text=True,
            check=False,
        )
        usage = json.loads(report.read_text()) if report.is_file() else None
    if usage is None:  # the wrapper itself failed (it reports in every other case)
        return ChildRun(proc.returncode, proc.stdout or "", proc.stderr or "", 0.0, 0.0, 0.0)
    return ChildRun(
        returncode=usage["returncode"],
        stdout=proc.stdout or "",
        stderr=proc.stderr or "",
        wall_s=usage["wall_s"],
        cpu_s=usage["cpu_s"],
        peak_rss_mb=usage["peak_rss_mb"],
    )


def child_json(
    cmd: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
) -> dict[str, Any]:
    """Run a child that prints one JSON object on its last line of stdout; return that object
    with the child's ``peak_rss_mb``, ``cpu_s`` and ``child_wall_s`` (:func:`run_child`) added,
    or ``{"error": ...}`` when it failed or printed no JSON object."""
    run = run_child(cmd, cwd=cwd, env=env, timeout_s=timeout_s)
    lines = [ln for ln in run.stdout.splitlines() if ln.strip().startswith("{")]
    if run.error is not None or not lines:
        return {"error": run.error or "no JSON object on stdout"}
    out: dict[str, Any] = json.loads(lines[-1])
    out.update(peak_rss_mb=run.peak_rss_mb, cpu_s=run.cpu_s, child_wall_s=run.wall_s)
    return out


def _wrapper(report: Path, timeout_s: float | None, cmd: list[str]) -> int:
    """The wrapper process: run ``cmd``, write its usage into ``report``, exit with its status."""
    t0 = time.perf_counter()
    try:
        rc: int | None = subprocess.run(cmd, check=False, timeout=timeout_s).returncode
    except subprocess.TimeoutExpired:  # subprocess.run has killed and waited for it
        rc = None
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = ru.ru_maxrss / 1024.0 if sys.platform != "darwin" else ru.ru_maxrss / 2**20
    usage = {
        "returncode": rc,
        "wall_s": wall,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "peak_rss_mb": peak,
    }
    report.write_text(json.dumps(usage))
    return 1 if rc is None else rc


if __name__ == "__main__":
    # python child.py REPORT TIMEOUT_S -- CMD ... (started by run_child)
    _timeout = None if sys.argv[2] == "None" else float(sys.argv[2])
    sys.exit(_wrapper(Path(sys.argv[1]), _timeout, sys.argv[4:]))
