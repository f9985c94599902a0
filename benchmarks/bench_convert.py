"""``make bench`` (conversion part): ``fairsim trace convert google-2011`` at two trace lengths.

Two raw-format traces are resampled from the shared sample's jobs
(:func:`fairsim.traces.synth_raw.resample_google_2011`, seed 1, the whole-trace case's arrival
rate of 25 million tasks in 29 days, one part per 50,000 tasks): ``300k`` (about 300,000 tasks
in 6 parts) and ``3M`` (about 3,000,000 tasks in 60 parts). Each is converted by the converter
in a fresh child process, so that its peak RSS (``VmHWM``) is its own.

Targets (issue 33, docs/bench.md): peak RSS below 1 GB at both lengths and within 1.5x between
them, and at least 83,000 tasks/s (25 million tasks in 5 minutes) on the 3M trace.

Outputs (atomic): ``OUT/convert.json`` and ``OUT/convert.md``.

Usage: ``python -m benchmarks.bench_convert --shared ../shared --out results/bench``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fairsim.atomic import json_text, write_text

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


def _peak_rss_mb() -> float:
    """This process's peak RSS since it started its program (``VmHWM``).

    Not ``ru_maxrss``: Linux carries the RSS of the process that forked (or vforked) the child
    into the child's ``ru_maxrss`` across ``exec``, and here that parent has just resampled a
    trace (about 0.5 GB).
    """
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # pragma: no cover


def convert_point(src: Path) -> dict[str, Any]:
    """Convert ``src`` into a temporary folder (this process); time, tasks, rows, buckets."""
    from fairsim.traces.google2011 import auto_buckets, convert_google_2011
    from fairsim.traces.google_parts import list_parts

    files = [f for _, f in list_parts(src / "task_events", None, "task_events")]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        report = convert_google_2011(src, Path(tmp) / "out", progress=False)
        wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "parts": len(files),
        "gzip_mb": sum(f.stat().st_size for f in files) / 2**20,
        "buckets": auto_buckets(files),
        "rows_read": report["rows_read"]["task_events"],
        "tasks": report["tasks"],
        "wall_s": wall,
        "tasks_per_s": report["tasks"] / wall if wall > 0 else None,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": _peak_rss_mb(),
        "loadavg_1m_at_end": os.getloadavg()[0],
    }


def _run_child(src: Path) -> dict[str, Any]:
    argv = [sys.executable, "-m", "benchmarks.bench_convert", "--one", str(src)]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no output)"]
        return {"error": tail[0]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def checks(points: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The targets, each with its value and whether it is met."""
    small, large = points.get("300k", {}), points.get("3M", {})
    if "peak_rss_mb" not in small or "peak_rss_mb" not in large:
        return {"error": "a point failed"}
    peak = max(small["peak_rss_mb"], large["peak_rss_mb"])
    ratio = large["peak_rss_mb"] / small["peak_rss_mb"]
    rate = large["tasks_per_s"]
    return {
        "peak_below_1gb": {"value_mb": peak, "target_mb": TARGET_PEAK_MB, "met": peak < 1024},
        "peak_ratio_3m_300k": {"value": ratio, "target": TARGET_RATIO, "met": ratio <= 1.5},
        "tasks_per_s_3m": {"value": rate, "target": TARGET_TASKS_PER_S, "met": rate >= 83_000},
    }


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
    lines += ["", "## Targets", ""]
    for name, c in res["checks"].items():
        if name == "error":
            lines.append(f"- error: {c}")
            continue
        value = c.get("value_mb", c.get("value"))
        target = c.get("target_mb", c.get("target"))
        verdict = "met" if c["met"] else "NOT met"
        lines.append(f"- {name}: {value:,.2f} (target {target:,}): {verdict}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_convert", description=__doc__)
    p.add_argument("--shared", default="../shared")
    p.add_argument("--out", default="results/bench")
    p.add_argument("--one", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        sys.stdout.write(json.dumps(convert_point(Path(args.one))) + "\n")
        return 0
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    shared = Path(args.shared).resolve()
    res: dict[str, Any] = {"points": {}}
    with tempfile.TemporaryDirectory(prefix="fairsim-bench-convert-") as tmp:
        for name, tasks in SIZES.items():
            log.info("resampling the %s raw trace (%d tasks)", name, tasks)
            src = build_raw(shared, Path(tmp) / name, tasks)
            log.info("converting the %s trace", name)
            res["points"][name] = _run_child(src)
            shutil.rmtree(src)
    res["checks"] = checks(res["points"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "convert.json", json_text(res) + "\n")
    write_text(out / "convert.md", _markdown(res))
    sys.stdout.write(_markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
