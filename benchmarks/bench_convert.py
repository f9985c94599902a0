"""``make bench`` (conversion part): ``fairsim trace convert google-2011`` at two trace lengths.

Two raw-format traces are built from the shared sample's ``task_events`` parts 0-13 (613,827
tasks in 2,609,335 rows): ``300k`` is parts 0-6 once (371,702 tasks, 7 parts), ``3M`` is parts
0-13 five times (3,070,095 tasks, 70 parts), each copy's job IDs shifted by 10^10 and its non-zero
times by 20 hours, so that the copies are distinct jobs later in time (the sample's
machine_events are copied along). Each trace is converted by the converter in a fresh child
process, so that its peak RSS (``ru_maxrss``) is its own.

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

#: name -> (copies of the sample, parts of the sample per copy)
SIZES = {"300k": (1, 7), "3M": (5, 14)}
JOB_SHIFT = 10_000_000_000
TIME_SHIFT_US = 72_000_000_000  # 20 h: beyond the sample's 19.7 h
TARGET_PEAK_MB = 1024.0
TARGET_RATIO = 1.5
TARGET_TASKS_PER_S = 83_000.0


def build_raw(shared: Path, out: Path, copies: int, parts: int) -> Path:
    """A raw google-2011 folder of ``copies`` x sample parts ``0..parts-1`` (see module doc).

    The job ID (column 3) and non-zero times (column 1) are shifted per copy; every other field
    is copied as it is. Returns ``out``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    src = shared / "traces" / "google-2011"
    (out / "task_events").mkdir(parents=True, exist_ok=True)
    (out / "machine_events").mkdir(parents=True, exist_ok=True)
    me = "machine_events/part-00000-of-00001.csv.gz"
    shutil.copy(src / me, out / me)
    names = [f"c{i}" for i in range(13)]
    read = pacsv.ReadOptions(column_names=names)
    conv = pacsv.ConvertOptions(
        column_types=dict.fromkeys(names, pa.string()), strings_can_be_null=False
    )
    write = pacsv.WriteOptions(include_header=False, quoting_style="none")
    n = 0
    for c in range(copies):
        for p in range(parts):
            t = pacsv.read_csv(
                src / f"task_events/part-{p:05d}-of-00500.csv.gz",
                read_options=read,
                convert_options=conv,
            )
            if c:
                tm = pc.cast(t["c0"], pa.int64())
                tm = pc.if_else(pc.equal(tm, 0), tm, pc.add(tm, c * TIME_SHIFT_US))
                job = pc.add(pc.cast(t["c2"], pa.int64()), c * JOB_SHIFT)
                t = t.set_column(0, "c0", pc.cast(tm, pa.string()))
                t = t.set_column(2, "c2", pc.cast(job, pa.string()))
            dst = out / f"task_events/part-{n:05d}-of-00500.csv.gz"
            with pa.CompressedOutputStream(str(dst), "gzip") as stream:
                pacsv.write_csv(t, stream, write_options=write)
            n += 1
    return out


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
        "peak_rss_mb": usage.ru_maxrss / 1024.0,
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
        for name, (copies, parts) in SIZES.items():
            log.info("building the %s raw trace (%d x %d sample parts)", name, copies, parts)
            src = build_raw(shared, Path(tmp) / name, copies, parts)
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
