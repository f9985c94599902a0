"""``make bench`` (memory part): a run's peak memory at two trace lengths (issue 45).

Two raw-format traces are resampled from the shared sample exactly as the conversion benchmark
does (:func:`benchmarks.bench_convert.build_raw`: seed 1, the whole-trace case's arrival rate of
25 million tasks in 29 days, one part per 50,000 tasks): ``300k`` (about 300,000 tasks over
8.4 h) and ``3M`` (about 3,000,000 tasks over 3.5 days). Each is converted (``fairsim trace
convert google-2011``) and run with FF-DRFH on the trace's 12,583 machines with the scenario's
own keys only (:func:`benchmarks.bench_scale._scenario`: streamed task results in arrival order,
the default of a run with an output folder), ``fairsim run`` as a whole process in a child
(:mod:`benchmarks.child`): workload, engine, result files, figures and report.

The raw and converted traces are kept in ``OUT/memory-<name>/`` for the next call with the same
parameters (``params.json``); the run's results folder is deleted after the step.

Targets (issue 45, docs/bench.md): the 3M run's peak RSS at most 1.2x the 300k run's, and both
below 1,024 MB.

Outputs (atomic): ``OUT/memory.json`` (:meth:`benchmarks.targets.RunInfo.record`: the targets,
the commit and the machine, then ``points``) and ``OUT/memory.md``.

Usage: ``python -m benchmarks.bench_memory --shared ../shared --out results/bench``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.bench_convert import SCALE_DAYS, SCALE_TASKS, TASKS_PER_PART, build_raw
from benchmarks.bench_scale import _scenario, measured
from benchmarks.child import fairsim_command
from benchmarks.targets import Target, parser, start, write_result
from fairsim.atomic import write_text
from fairsim.scenario.reporting.markdown import table

log = logging.getLogger("benchmarks.bench_memory")

#: name -> tasks of the resampled raw trace
SIZES = {"300k": 300_000, "3M": 3_000_000}
SCHEDULER = "ff-drfh"
TARGET_RATIO = 1.2
TARGET_PEAK_MB = 1024.0


def _trace(shared: Path, work: Path, tasks: int) -> tuple[Path, Path]:
    """The raw and converted trace of ``tasks`` tasks in ``work`` (kept when ``params.json``
    matches)."""
    raw, canonical = work / "raw", work / "canonical"
    params = {"tasks": tasks, "seed": 1, "rate": [SCALE_TASKS, SCALE_DAYS], "per": TASKS_PER_PART}
    stamp = work / "params.json"
    if stamp.is_file() and json.loads(stamp.read_text()) == params:
        log.info("trace %s kept (same parameters)", work)
        return raw, canonical
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    log.info("resampling %d tasks into %s", tasks, raw)
    build_raw(shared, raw, tasks)
    cmd = ["trace", "convert", "google-2011", str(raw), "--out", str(canonical), "--no-progress"]
    measured(fairsim_command(cmd))
    write_text(stamp, json.dumps(params) + "\n")
    return raw, canonical


def memory_point(shared: Path, out: Path, name: str, tasks: int) -> dict[str, Any]:
    """Resample (or keep) and convert the ``name`` trace, run FF-DRFH on it in a child process;
    the child's ``wall_s``, ``cpu_s``, ``peak_rss_mb`` and the run's tasks and events."""
    work = out / f"memory-{name}"
    raw, canonical = _trace(shared, work, tasks)
    cfg = work / f"{SCHEDULER}.yaml"
    write_text(cfg, _scenario(canonical, raw, SCHEDULER))
    dest = work / "run"
    if dest.exists():
        shutil.rmtree(dest)
    log.info("running %s on the %s trace", SCHEDULER, name)
    usage = measured(fairsim_command(["run", str(cfg), "--out", str(dest), "--no-progress"]))
    summary = json.loads((dest / SCHEDULER / "summary.json").read_text())
    shutil.rmtree(dest)
    ended = summary.get("ended", {})
    return {
        **usage,
        "tasks": summary.get("tasks"),
        "events": summary.get("events"),
        "horizon_s": summary.get("horizon_s"),
        "live_at_horizon": sum(ended.get(k, 0) for k in ("censored", "running", "queued")),
        "loadavg_1m_at_end": os.getloadavg()[0],
    }


def targets(points: dict[str, dict[str, Any]]) -> list[Target]:
    """3M / 300k peak RSS <= 1.2x, both below 1,024 MB (a failed point: None, not met)."""
    small, large = points.get("300k", {}), points.get("3M", {})
    ok = "peak_rss_mb" in small and "peak_rss_mb" in large
    peak = max(small["peak_rss_mb"], large["peak_rss_mb"]) if ok else None
    ratio = large["peak_rss_mb"] / small["peak_rss_mb"] if ok else None
    loads = [p["loadavg_1m_at_end"] for p in (small, large) if "loadavg_1m_at_end" in p]
    ctx = f"{small.get('peak_rss_mb', 0):.0f} → {large.get('peak_rss_mb', 0):.0f} MB; "
    ctx += "fairsim run in a child process each" + (
        f"; load {max(loads):.1f} at the end" if loads else ""
    )
    grows = "FF-DRFH run's peak RSS, 3M resampled tasks over 300k"
    both = "FF-DRFH run's peak RSS at 300k and 3M resampled tasks"
    return [
        Target.check("peak 3M / 300k", grows, ratio, "×", "<=", TARGET_RATIO, ctx),
        Target.check("peak", both, peak, "MB", "<", TARGET_PEAK_MB, ctx),
    ]


def _markdown(res: dict[str, Any]) -> str:
    head = "trace|tasks|events|live at the horizon|wall (s)|CPU (s)|peak RSS (MB)".split("|")
    keys = ["tasks", "events", "live_at_horizon", "wall_s", "cpu_s", "peak_rss_mb"]
    specs = [",", ",", ",", ".1f", ".1f", ".0f"]
    rows = [
        (name, *(format(p[k], spec) for k, spec in zip(keys, specs, strict=True)))
        for name, p in res["points"].items()
    ]
    title = "# A run's peak memory against the trace's length (FF-DRFH, 12,583 machines)"
    return "\n".join([title, "", *table(head, rows)])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.bench_memory --shared ../shared --out results/bench``."""
    p = parser("benchmarks.bench_memory", __doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--sizes", default=",".join(SIZES), help="comma-separated, of 300k,3M")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    shared, out = Path(args.shared).resolve(), Path(args.out).resolve()
    run = start()
    points = {
        name: memory_point(shared, out, name, SIZES[name])
        for name in (s.strip() for s in args.sizes.split(","))
        if name
    }
    record = run.record("memory", targets(points), points=points)
    write_result(out, record, _markdown(record))
    log.info("%s", out / "memory.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
