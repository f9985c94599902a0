"""``make bench`` (Alibaba part): conversion rates and the full v2017 replay (targets:
docs/bench.md).

Two measurements, each in a fresh child process so that its peak RSS (``ru_maxrss``) is its own:

``convert``
    ``fairsim trace convert`` of each Alibaba sample in ``../shared/traces`` (2017 batch_task +
    server_event, the 2018 derived sample, GPU 2023): rows read per second of wall time.
``replay-2017``
    Convert the whole v2017 batch_task table (71,536 rows, 11,059,704 instances) and replay every
    instance on the 1,313 machines of server_event (the v2017 cluster) with First-Fit DRFH
    (``configs/alibaba-2017.yaml``), then write the contract's result files. Target: under 10
    minutes of wall time and under 4 GB peak memory, conversion and writing included.

Outputs (atomic): ``OUT/alibaba.json`` and ``OUT/alibaba.md``.

Usage: ``python -m benchmarks.bench_alibaba --shared ../shared --out
results/bench``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fairsim.atomic import json_text, write_text
from fairsim.experiments import config_path

log = logging.getLogger("benchmarks.bench_alibaba")

CONFIG_2017 = config_path("alibaba-2017.yaml")
SAMPLES = {
    "alibaba-2017": "alibaba-2017",
    "alibaba-2018-spar": "alibaba-2018/spar-derived",
    "alibaba-gpu-2023": "alibaba-gpu-2023",
}
TARGET_WALL_S = 600.0
TARGET_PEAK_MB = 4096.0


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


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
        "target_wall_s": TARGET_WALL_S,
        "target_peak_mb": TARGET_PEAK_MB,
    }


def _child(kind: str, arg: str, shared: Path) -> dict[str, Any]:
    res = replay_2017(shared) if kind == "replay-2017" else convert_point(arg, shared)
    res["peak_rss_mb"] = _peak_rss_mb()
    res["loadavg_1m_at_end"] = os.getloadavg()[0]
    return res


def _run_child(kind: str, arg: str, shared: Path) -> dict[str, Any]:
    argv = [
        sys.executable,
        "-m",
        "benchmarks.bench_alibaba",
        "--one",
        kind,
        "--arg",
        arg,
    ]
    proc = subprocess.run(
        [*argv, "--shared", str(shared)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["(no output)"]
        return {"kind": kind, "arg": arg, "error": tail[0]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


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
        ok_t = r["total_wall_s"] < TARGET_WALL_S
        ok_m = r["peak_rss_mb"] < TARGET_PEAK_MB
        lines += [
            f"- {r['tasks']:,} instances on {r['servers']} servers, "
            f"{r['tasks_completed']:,} completed",
            f"- total wall (convert + replay + write): {r['total_wall_s']:.0f} s "
            f"(target < {TARGET_WALL_S:.0f} s: {'met' if ok_t else 'NOT met'})",
            f"- engine: {r['engine_wall_s']:.0f} s, {r['engine_tasks_per_s']:,.0f} tasks/s",
            f"- peak RSS: {r['peak_rss_mb']:.0f} MB "
            f"(target < {TARGET_PEAK_MB:.0f} MB: {'met' if ok_m else 'NOT met'})",
            f"- load average at the end: {r['loadavg_1m_at_end']:.1f}",
        ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_alibaba", description=__doc__)
    p.add_argument("--shared", default="../shared")
    p.add_argument("--out", default="results/bench")
    p.add_argument("--one", choices=("convert", "replay-2017"), help=argparse.SUPPRESS)
    p.add_argument("--arg", default="", help=argparse.SUPPRESS)
    p.add_argument("--skip-replay", action="store_true", help="only the conversion rates")
    args = p.parse_args(argv)
    shared = Path(args.shared).resolve()
    if args.one:
        sys.stdout.write(json.dumps(_child(args.one, args.arg, shared)) + "\n")
        return 0
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    res: dict[str, Any] = {"convert": []}
    for fmt in SAMPLES:
        log.info("converting %s", fmt)
        res["convert"].append(_run_child("convert", fmt, shared))
    if args.skip_replay:
        res["replay-2017"] = {"error": "skipped (--skip-replay)"}
    else:
        log.info("replaying the whole v2017 table (several minutes)")
        res["replay-2017"] = _run_child("replay-2017", "", shared)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_text(out / "alibaba.json", json_text(res) + "\n")
    write_text(out / "alibaba.md", _markdown(res))
    sys.stdout.write(_markdown(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
