"""``make bench`` (conversion part): ``fairsim trace convert google-2011`` at two trace lengths.

Two raw-format traces are resampled from the shared sample's jobs
(:func:`fairsim.traces.synth_raw.resample_google_2011`, seed 1, the whole-trace case's arrival
rate of 25 million tasks in 29 days, one part per 50,000 tasks): ``300k`` (about 300,000 tasks
in 6 parts) and ``3M`` (about 3,000,000 tasks in 60 parts). Each is converted by the converter
in a fresh child process, so that its peak RSS is its own (:mod:`benchmarks.child`).

Targets (issue 33, docs/bench.md): peak RSS below 1 GB at both lengths and within 1.5x between
them, and at least 83,000 tasks/s (25 million tasks in 5 minutes) on the 3M trace.

Outputs (atomic): ``OUT/convert.json`` (:meth:`benchmarks.targets.RunInfo.record`: the targets,
the commit and the machine, then ``points``) and ``OUT/convert.md``.

Usage: ``python -m benchmarks.bench_convert --shared ../shared --out results/bench``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.child import child_json
from benchmarks.targets import Target, parser, start, write_result

log = logging.getLogger("benchmarks.bench_convert")

#: name -> tasks of the resampled raw trace
SIZES = {"300k": 300_000, "3M": 3_000_000}
SCALE_TASKS, SCALE_DAYS = 25_000_000, 29  # the whole-trace case's arrival rate (9.98 tasks/s)
TASKS_PER_PART = 50_000
TARGET_PEAK_MB = 1024.0
TARGET_RATIO = 1.5
TARGET_TASKS_PER_S = 83_000.0


def build_raw(shared: Path, out: Path, tasks: int) -> Path:
    """A raw google-2011 folder of about ``tasks`` tasks resampled from the shared sample.

    :func:`fairsim.traces.synth_raw.resample_google_2011` with seed 1, the whole-trace case's
    arrival rate (25 million tasks in 29 days) and one part per 50,000 tasks. Returns ``out``.
    """
    from fairsim.traces.synth_raw import resample_google_2011

    resample_google_2011(
        shared / "traces" / "google-2011",
        out,
        tasks=tasks,
        duration_s=tasks * SCALE_DAYS * 86_400 / SCALE_TASKS,
        seed=1,
        parts=max(1, tasks // TASKS_PER_PART),
        progress=False,
    )
    return out


def convert_point(src: Path) -> dict[str, Any]:
    """Convert ``src`` into a temporary folder (this process); time, tasks, rows, buckets (the
    CPU time and peak RSS are measured by the parent, :func:`_run_child`)."""
    from fairsim.traces.google2011 import auto_buckets, convert_google_2011
    from fairsim.traces.google_parts import list_parts

    files = [f for _, f in list_parts(src / "task_events", None, "task_events")]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        report = convert_google_2011(src, Path(tmp) / "out", progress=False)
        wall = time.perf_counter() - t0
    return {
        "parts": len(files),
        "gzip_mb": sum(f.stat().st_size for f in files) / 2**20,
        "buckets": auto_buckets(files),
        "rows_read": report["rows_read"]["task_events"],
        "tasks": report["tasks"],
        "wall_s": wall,
        "tasks_per_s": report["tasks"] / wall if wall > 0 else None,
        "loadavg_1m_at_end": os.getloadavg()[0],
    }


def _run_child(src: Path) -> dict[str, Any]:
    """Convert ``src`` in a child process: :func:`convert_point`'s figures, with the child's
    ``peak_rss_mb`` and ``cpu_s`` (:func:`benchmarks.child.child_json`)."""
    return child_json([sys.executable, "-m", "benchmarks.bench_convert", "--one", str(src)])


def targets(points: dict[str, dict[str, Any]]) -> list[Target]:
    """The three targets: peak RSS below 1,024 MB at both lengths, 3M / 300k within 1.5x, and
    >= 83,000 tasks/s on the 3M trace (a failed point: value None, not met)."""
    small, large = points.get("300k", {}), points.get("3M", {})
    ok = "peak_rss_mb" in small and "peak_rss_mb" in large
    peak = max(small["peak_rss_mb"], large["peak_rss_mb"]) if ok else None
    ratio = large["peak_rss_mb"] / small["peak_rss_mb"] if ok else None
    rate = large.get("tasks_per_s")
    loads = [p["loadavg_1m_at_end"] for p in (small, large) if "loadavg_1m_at_end" in p]
    ctx = "one run each in a child process" + (
        f"; load {max(loads):.1f} at the end" if loads else ""
    )
    peaks = f"{small.get('peak_rss_mb', 0):.0f} → {large.get('peak_rss_mb', 0):.0f} MB; {ctx}"
    cpu = f"{large['cpu_s']:.1f} s CPU in {large['wall_s']:.1f} s; " if "cpu_s" in large else ""
    both = "peak RSS of the 300k and 3M conversions"
    grows = "peak RSS of the 3M conversion over the 300k one"
    speed = "conversion of the 3M trace, tasks per second"
    return [
        Target.check("peak", both, peak, "MB", "<", TARGET_PEAK_MB, peaks),
        Target.check("peak 3M / 300k", grows, ratio, "×", "<=", TARGET_RATIO, peaks),
        Target.check("3M speed", speed, rate, "tasks/s", ">=", TARGET_TASKS_PER_S, cpu + ctx),
    ]


def _markdown(res: dict[str, Any]) -> str:
    lines = ["# Google 2011 conversion (raw parts to canonical tables)", ""]
    lines += [
        "| trace | parts | gzip (MB) | buckets | rows | tasks | wall (s) | tasks/s "
        "| peak RSS (MB) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, p in res["points"].items():
        if "error" in p:
            lines.append(f"| {name} | error: {p['error']} | | | | | | | |")
            continue
        lines.append(
            f"| {name} | {p['parts']} | {p['gzip_mb']:.0f} | {p['buckets']} | "
            f"{p['rows_read']:,} | {p['tasks']:,} | {p['wall_s']:.1f} | "
            f"{p['tasks_per_s']:,.0f} | {p['peak_rss_mb']:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = parser("benchmarks.bench_convert", __doc__)
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        sys.stdout.write(json.dumps(convert_point(Path(args.one))) + "\n")
        return 0
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    shared = Path(args.shared).resolve()
    run = start()
    points: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="fairsim-bench-convert-") as tmp:
        for name, tasks in SIZES.items():
            log.info("resampling the %s raw trace (%d tasks)", name, tasks)
            src = build_raw(shared, Path(tmp) / name, tasks)
            log.info("converting the %s trace", name)
            points[name] = _run_child(src)
            shutil.rmtree(src)
    record = run.record("convert", targets(points), points=points)
    sys.stdout.write(write_result(args.out, record, _markdown(record)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
