"""Where a ``fairsim run``'s memory goes: resident memory by phase and the engine's structures.

``python -m benchmarks.mem_profile CONFIG --out DIR`` runs ``fairsim run CONFIG --out DIR`` in this
process with a thread that reads the resident set size (``/proc/self/statm``) every
``--every`` seconds, and marks the run's phases by wrapping the functions that start them:

* ``engine``: :meth:`fairsim.simulator.engine.Engine.run`'s event loop;
* ``close``: the recorder's close (a streamed run's ``tasks.parquet`` in arrival order);
* ``results``: :func:`fairsim.simulator.results.write_run` (the other result tables);
* ``report``: :func:`fairsim.scenario.reporting.run_report.write_run_report` (figures, Markdown).

At the end of the event loop (the horizon, before the recorder closes) it also counts what the
engine holds: live tasks, running tasks, the stream's per-job totals and buffered rows, the
utilisation samples; with ``--tracemalloc`` the largest Python and NumPy allocations then (by
line), which tracemalloc sees (not Arrow's own buffers). Prints one JSON object: per phase the
RSS at its start and its peak (MB), the counts, and the allocations. Not a target: it explains
the peak that ``make bench-scale`` measures (``docs/bench.md`` "Memory").
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    """This process's resident set size now (MB of 2**20 bytes)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE / 2**20


class Phases:
    """RSS samples labelled by the phase the run is in."""

    def __init__(self, every_s: float) -> None:
        self.every_s = every_s
        self.phase = "setup"
        self.stats: dict[str, dict[str, float]] = {}
        self._stop = threading.Event()
        self._mark("setup")
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _mark(self, phase: str) -> None:
        now = rss_mb()
        self.phase = phase
        st = self.stats.setdefault(phase, {"start_mb": now, "peak_mb": now, **heaps()})
        st["peak_mb"] = max(st["peak_mb"], now)

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            st = self.stats[self.phase]
            st["peak_mb"] = max(st["peak_mb"], rss_mb())

    def wrap(self, owner: Any, name: str, phase: str, after: str | None = None) -> None:
        """Mark ``phase`` while ``owner.name`` runs (``after`` once it returns)."""
        fn: Callable[..., Any] = getattr(owner, name)

        def wrapped(*args: Any, **kwargs: Any) -> Any:
            back = self.phase
            self._mark(phase)
            try:
                return fn(*args, **kwargs)
            finally:
                self._mark(after or back)

        setattr(owner, name, wrapped)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        self._mark(self.phase)


def heaps() -> dict[str, float]:
    """The allocators' figures now (MB): glibc's heap in use and held free (``mallinfo2``:
    NumPy's arrays and Python's large objects), its mmapped blocks, pymalloc's blocks in use
    (count), and Arrow's memory pool (allocated now, its peak)."""
    import ctypes

    import pyarrow as pa

    class _MallInfo2(ctypes.Structure):
        _fields_ = [
            (n, ctypes.c_size_t)
            for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                      "uordblks", "fordblks", "keepcost")
        ]  # fmt: skip

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    mi = libc.mallinfo2()
    pool = pa.default_memory_pool()
    return {
        "malloc_in_use_mb": mi.uordblks / 2**20,
        "malloc_free_held_mb": mi.fordblks / 2**20,
        "malloc_mmap_mb": mi.hblkhd / 2**20,
        "pymalloc_blocks": float(sys.getallocatedblocks()),
        "arrow_allocated_mb": pool.bytes_allocated() / 2**20,
        "arrow_peak_mb": pool.max_memory() / 2**20,
    }


def pymalloc_stats() -> dict[str, float]:
    """pymalloc's arenas now (``sys._debugmallocstats``): MB of arenas mapped and MB in
    allocated blocks (the difference is free space in partly used pools and arenas)."""
    import re
    import tempfile

    with tempfile.TemporaryFile(mode="w+") as tmp:
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(tmp.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read()

    def field(name: str) -> float:
        m = re.search(rf"# {name}\s*=\s*([\d,]+)", text)
        return float(m.group(1).replace(",", "")) if m else float("nan")

    return {
        "pymalloc_arenas_mb": field("arenas allocated current"),
        "pymalloc_in_blocks_mb": field("bytes in allocated blocks") / 2**20,
    }


def _deep_sizes(engine: Any) -> dict[str, Any]:
    """Counts of what the engine holds at the horizon."""
    rec = engine._recorder
    out: dict[str, Any] = {
        **heaps(),
        **pymalloc_stats(),
        "live_tasks": len(rec.live),
        "running_tasks": len(engine._running),
        "completions_heap": len(engine._completions),
        "utilization_blocks": len(engine._samples),
        "share_blocks": len(engine._share_samples),
        "users": len(engine._user_codes),
        "tasks_read": rec.n,
    }
    stream = getattr(rec, "stream", None)
    if stream is not None:
        out["stream_pending_values"] = len(stream.pending)
        out["stream_spill_blocks"] = len(stream._blocks)
        jt = getattr(stream, "_arrived", None)
        if jt is not None and hasattr(jt, "_chunks"):
            out["job_totals_entries"] = sum(len(c["job"]) for c in jt._chunks) + sum(
                len(c["job"]) for c in stream._finished._chunks
            )
            out["job_totals_mb"] = (
                sum(a.nbytes for c in jt._chunks for a in c.values())
                + sum(a.nbytes for c in stream._finished._chunks for a in c.values())
            ) / 2**20
        for k in ("open_jobs", "jobs_closed"):
            v = getattr(stream, k, None)
            if v is not None:
                out[k] = len(v) if hasattr(v, "__len__") else v
    return out


def profile(argv: Sequence[str], every_s: float, trace: bool, top: int) -> dict[str, Any]:
    """Run ``fairsim run *argv`` here and return the phases, counts and allocations."""
    from fairsim import cli
    from fairsim.scenario.reporting import run_report
    from fairsim.simulator import engine as engine_mod
    from fairsim.simulator import recording, results

    if trace:
        tracemalloc.start(1)
    phases = Phases(every_s)
    found: dict[str, Any] = {}
    phases.wrap(engine_mod.Engine, "run", "engine", after="after-engine")
    for cls in (recording.StreamingRecorder, recording.TaskTable):
        phases.wrap(cls, "close", "close", after="engine")
    phases.wrap(results, "write_run", "results", after="after-results")
    phases.wrap(run_report, "write_run_report", "report", after="after-report")

    end = recording.TaskRecorder.end
    originals: dict[type, Callable[..., None]] = {}

    def at_horizon(self: Any, n_arrived: int, running: dict[int, int]) -> None:
        frame = sys._getframe(1)
        eng = frame.f_locals.get("self")
        if eng is not None and hasattr(eng, "_recorder"):
            found["at_horizon"] = {"rss_mb": rss_mb(), **_deep_sizes(eng)}
            if trace:
                snap = tracemalloc.take_snapshot()
                stats = snap.statistics("lineno")[:top]
                found["tracemalloc_top"] = [
                    {"where": str(s.traceback), "mb": s.size / 2**20, "blocks": s.count}
                    for s in stats
                ]
                found["tracemalloc_total_mb"] = sum(s.size for s in snap.statistics("filename")) / (
                    2**20
                )
        return originals[type(self)](self, n_arrived, running)

    classes = (
        recording.StreamingRecorder,
        recording.EvictingStreamingRecorder,
        recording.TaskTable,
    )
    originals.update({cls: cls.end for cls in classes})  # all before any is replaced
    for cls in classes:
        cls.end = at_horizon  # type: ignore[method-assign]
    del end
    t0 = time.perf_counter()
    code = cli.main(["run", *argv])
    phases.stop()
    return {
        "argv": list(argv),
        "returncode": code,
        "wall_s": time.perf_counter() - t0,
        "peak_rss_mb": max(p["peak_mb"] for p in phases.stats.values()),
        "phases": phases.stats,
        **found,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.mem_profile CONFIG --out DIR [--tracemalloc]``."""
    ap = argparse.ArgumentParser("benchmarks.mem_profile", description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--out", required=True)
    ap.add_argument("--every", type=float, default=0.1, help="seconds between RSS samples")
    ap.add_argument("--tracemalloc", action="store_true")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args(argv)
    res = profile(
        [args.config, "--out", args.out, "--overwrite", "--no-progress"],
        args.every,
        args.tracemalloc,
        args.top,
    )
    sys.stdout.write(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
