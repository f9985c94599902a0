"""``make bench`` (Alibaba part): conversion rates and the full v2017 replay (targets:
docs/bench.md).

Two measurements, each in a fresh child process so that its peak RSS is its own
(:mod:`benchmarks.child`):

``convert``
    ``fairsim trace convert`` of each Alibaba sample in ``../shared/traces`` (2017 batch_task +
    server_event, the 2018 derived sample, GPU 2023): rows read per second of wall time.
``replay-2017``
    Convert the whole v2017 batch_task table (71,536 rows, 11,059,704 instances) and replay every
    instance on the 1,313 machines of server_event (the v2017 cluster) with First-Fit DRFH
    (``configs/alibaba-2017.yaml``), then write the contract's result files. Targets: under 10
    minutes of wall time and under 2 GB peak memory (issue 45), conversion and writing included.

Outputs (atomic): ``OUT/alibaba.json`` (:meth:`benchmarks.targets.RunInfo.record`: the targets,
the commit and the machine, then ``convert`` and ``replay-2017``) and ``OUT/alibaba.md``.

Usage: ``python -m benchmarks.bench_alibaba --shared ../shared --out
results/bench``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.child import child_json
from benchmarks.targets import Target, parser, start, write_result
from fairsim.experiments import config_path

log = logging.getLogger("benchmarks.bench_alibaba")

CONFIG_2017 = config_path("alibaba-2017.yaml")
SAMPLES = {
    "alibaba-2017": "alibaba-2017",
    "alibaba-2018-spar": "alibaba-2018/spar-derived",
    "alibaba-gpu-2023": "alibaba-gpu-2023",
}
TARGET_WALL_S = 600.0
TARGET_PEAK_MB = 2048.0
REPO = Path(__file__).resolve().parents[1]


def convert_point(fmt: str, shared: Path) -> dict[str, Any]:
    """Convert one sample into a temporary folder; rows read per second."""
    from fairsim.traces.alibaba import convert_alibaba

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        report = convert_alibaba(fmt, shared / "traces" / SAMPLES[fmt], Path(tmp))
        wall = time.perf_counter() - t0
    rows = int(sum(report["rows_read"].values()))
    return {
        "format": fmt,
        "rows_read": report["rows_read"],
        "tasks": report.get("tasks"),
        "instances": report.get("instances"),
        "wall_s": wall,
        "rows_per_s": rows / wall if wall > 0 else None,
    }


def replay_2017(shared: Path) -> dict[str, Any]:
    """Convert the v2017 table, replay all instances with FF-DRFH, write the result files."""
    from fairsim.scenario.config import load_config
    from fairsim.scenario.output import run_to_folder

    with tempfile.TemporaryDirectory() as tmp:
        cfg = load_config(
            CONFIG_2017,
            overrides=[
                f"trace.path={shared / 'traces' / 'alibaba-2017'}",
                f"trace.cache_dir={Path(tmp) / 'cache'}",
            ],
        )
        t0 = time.perf_counter()
        summary = run_to_folder(cfg, Path(tmp) / "out", progress=False, report=False)["ff-drfh"]
        wall = time.perf_counter() - t0
    return {
        "scheduler": "ff-drfh",
        "servers": summary["servers"],
        "tasks": summary["tasks"],
        "tasks_completed": summary["tasks_completed"],
        "engine_wall_s": summary["wall_s"],
        "engine_tasks_per_s": summary["tasks_per_s"],
        "total_wall_s": wall,
        "mean_utilization": summary["mean_utilization"],
        "horizon_s": summary["horizon_s"],
    }


def _child(kind: str, arg: str, shared: Path) -> dict[str, Any]:
    res = replay_2017(shared) if kind == "replay-2017" else convert_point(arg, shared)
    res["loadavg_1m_at_end"] = os.getloadavg()[0]
    return res


def _run_child(kind: str, arg: str, shared: Path) -> dict[str, Any]:
    """One measurement in a child process, its peak RSS its own (:mod:`benchmarks.child`)."""
    argv = [sys.executable, "-m", "benchmarks.bench_alibaba", "--one", kind, "--arg", arg]
    res = child_json([*argv, "--shared", str(shared)], cwd=REPO)
    return {"kind": kind, "arg": arg, **res} if "error" in res else res


def targets(replay: dict[str, Any]) -> list[Target]:
    """The replay's targets: wall time (conversion, replay and writing) and peak RSS."""
    ok = "error" not in replay
    load = replay.get("loadavg_1m_at_end")
    ctx = "one run in a child process" + (f"; load {load:.1f} at the end" if load else "")
    wall, peak = (replay["total_wall_s"], replay["peak_rss_mb"]) if ok else (None, None)
    what = "full v2017 replay (FF-DRFH), wall time of conversion, replay and writing"
    mem = "full v2017 replay, peak RSS"
    cpu = f"{replay['cpu_s']:.0f} s CPU; " if "cpu_s" in replay else ""
    return [
        Target.check("replay-2017 wall", what, wall, "s", "<", TARGET_WALL_S, cpu + ctx),
        Target.check("replay-2017 memory", mem, peak, "MB", "<", TARGET_PEAK_MB, ctx),
    ]


def _markdown(res: dict[str, Any]) -> str:
    lines = ["# Alibaba benchmarks", "", "## Conversion rates", ""]
    lines += ["| format | rows read | wall (s) | rows/s | peak RSS (MB) |", "|---|---|---|---|---|"]
    for c in res["convert"]:
        if "error" in c:
            lines.append(f"| {c['arg']} | error: {c['error']} | | | |")
            continue
        rows = sum(c["rows_read"].values())
        lines.append(
            f"| {c['format']} | {rows:,} | {c['wall_s']:.2f} | {c['rows_per_s']:,.0f} "
            f"| {c['peak_rss_mb']:.0f} |"
        )
    r = res["replay-2017"]
    lines += ["", "## Full v2017 replay (FF-DRFH, all instances)", ""]
    if "error" in r:
        lines.append(f"error: {r['error']}")
    else:
        lines += [
            f"- {r['tasks']:,} instances on {r['servers']} servers, "
            f"{r['tasks_completed']:,} completed",
            f"- engine: {r['engine_wall_s']:.0f} s, {r['engine_tasks_per_s']:,.0f} tasks/s",
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = parser("benchmarks.bench_alibaba", __doc__)
    p.add_argument("--one", choices=("convert", "replay-2017"), help=argparse.SUPPRESS)
    p.add_argument("--arg", default="", help=argparse.SUPPRESS)
    p.add_argument("--skip-replay", action="store_true", help="only the conversion rates")
    args = p.parse_args(argv)
    shared = Path(args.shared).resolve()
    if args.one:
        sys.stdout.write(json.dumps(_child(args.one, args.arg, shared)) + "\n")
        return 0
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    run = start()
    convert = []
    for fmt in SAMPLES:
        log.info("converting %s", fmt)
        convert.append(_run_child("convert", fmt, shared))
    if args.skip_replay:
        replay: dict[str, Any] = {"error": "skipped (--skip-replay)"}
    else:
        log.info("replaying the whole v2017 table (several minutes)")
        replay = _run_child("replay-2017", "", shared)
    goals = targets(replay)
    record = run.record("alibaba", goals, convert=convert, **{"replay-2017": replay})
    sys.stdout.write(write_result(args.out, record, _markdown(record)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
