"""``make bench-scale``: the whole path from raw ``task_events`` files to results (issue 33).

Three steps, each in a process of its own, timed (wall and CPU) with its peak resident memory:

1. **generate** (kept for the next call with the same parameters): ``fairsim trace synth --raw
   google-2011``, a raw clusterdata-2011-2 trace of ``tasks`` tasks over ``days`` days resampled
   from the real sample (:func:`fairsim.traces.synth_raw.resample_google_2011`: 500 gzip parts
   and a copy of ``machine_events``, so the pool is the trace's 12,583 machines). Not a target:
   it stands in for the downloaded trace.
2. **convert**: ``fairsim trace convert google-2011`` of those files to the canonical tables
   (:func:`fairsim.traces.google2011.convert_google_2011`, out of core).
3. **run**: ``fairsim run`` of a scenario with only the scenario's own keys (the converted
   ``tasks.parquet``, ``cluster: {source: machine-events}``, one scheduler, the utilisation grid),
   once per scheduler (First-Fit and Best-Fit DRFH), into a results folder (result files,
   figures and report, as a researcher's run writes them) that is deleted after the step.

Targets (``docs/bench.md``; DESIGN.md "Engineering targets"): conversion below 1 GB peak and at
least 83,000 tasks/s; conversion + First-Fit run under 15 minutes, each run below 1 GB (issue 45).
Best-Fit's cost per event at 12,583 servers against 2,000 is measured by ``make bench``
(``benchmarks.bench_online``, the servers curve), not here.

Writes ``OUT/scale.json`` (:meth:`benchmarks.targets.RunInfo.record`: the targets, the commit and
the machine, then the steps and their numbers) and ``OUT/scale.md``.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.child import fairsim_command, run_child
from benchmarks.targets import Target, parser, start, write_result
from fairsim.atomic import write_text
from fairsim.scenario.reporting.markdown import table

log = logging.getLogger("bench_scale")

#: The whole Google 2011 trace's size: 25 million tasks over 29 days.
SCALE_TASKS = 25_000_000
SCALE_DAYS = 29.0
SCALE_PARTS = 500
SEED = 1
SCHEDULERS = ("ff-drfh", "bf-drfh")
TARGET_CONVERT_RSS_MB = 1024.0
TARGET_CONVERT_TASKS_PER_S = 83_000.0
#: Conversion + the FF-DRFH run of the whole trace (issue 45: at most 10 minutes).
TARGET_PATH_WALL_S = 600.0
#: A run's own peak on the whole trace (issue 45: a run's memory does not grow with the trace).
TARGET_RUN_RSS_MB = 1024.0
CHILD_TIMEOUT_S = 7_200.0


@dataclass(frozen=True)
class ScaleCase:
    """The raw trace's size, ``tasks`` tasks over ``days`` days in ``parts`` task_events parts
    (default: the whole Google 2011 trace's, 25 million tasks over 29 days in 500 parts), and
    the schedulers run on it, each in a process of its own."""

    tasks: int = SCALE_TASKS
    days: float = SCALE_DAYS
    parts: int = SCALE_PARTS
    schedulers: tuple[str, ...] = SCHEDULERS


def measured(cmd: Sequence[str], *, timeout_s: float = CHILD_TIMEOUT_S) -> dict[str, Any]:
    """Run ``cmd`` in a child process (:func:`benchmarks.child.run_child`, its output let
    through) and return its ``wall_s``, ``cpu_s``, ``peak_rss_mb`` and ``returncode``.

    Raises
    ------
    RuntimeError
        When the command fails or runs past ``timeout_s`` (its stderr is passed through).
    """
    run = run_child(cmd, timeout_s=timeout_s, capture=False)
    if run.error is not None:
        raise RuntimeError(f"{' '.join(cmd[1:])}: {run.error}")
    return {k: getattr(run, k) for k in ("wall_s", "cpu_s", "peak_rss_mb", "returncode")}


def _generate(shared: Path, raw: Path, case: ScaleCase, progress: bool) -> dict[str, Any]:
    stamp = raw / "params.json"
    tasks, days, parts = case.tasks, case.days, case.parts
    params = {"tasks": tasks, "days": days, "parts": parts, "seed": SEED}
    if stamp.is_file() and json.loads(stamp.read_text()) == params:
        log.info("raw trace %s kept (same parameters)", raw)
        return {"kept": True, **json.loads((raw / "synth.json").read_text())}
    if raw.exists():
        shutil.rmtree(raw)
    log.info("generating %s raw tasks over %g days into %s", f"{tasks:,}", days, raw)
    cmd = ["trace", "synth", "--raw", "google-2011", "--src", str(shared / "traces/google-2011")]
    cmd += ["--tasks", str(tasks), "--days", repr(days), "--parts", str(parts)]
    cmd += ["--seed", str(SEED), "--out", str(raw)]
    usage = measured(fairsim_command([*cmd, *([] if progress else ["--no-progress"])]))
    write_text(stamp, json.dumps(params) + "\n")
    return {"kept": False, **usage, **json.loads((raw / "synth.json").read_text())}


def _scenario(canonical: Path, raw: Path, scheduler: str) -> str:
    """The run step's config: the scenario's own keys only (streamed task results are the
    default with an output folder)."""
    return (
        "name: scale\n"
        "seed: 1\n"
        f"trace: {{format: canonical, path: {json.dumps(str(canonical / 'tasks.parquet'))}}}\n"
        f"cluster: {{source: machine-events, path: {json.dumps(str(raw))}}}\n"
        f"schedulers: [{scheduler}]\n"
        "collect: {utilization_interval_s: 60}\n"
    )


def bench_scale(
    out: Path, shared: Path, case: ScaleCase | None = None, progress: bool = True
) -> dict[str, Any]:
    """Generate (or keep), convert and run; return the steps' figures and the targets.

    Parameters
    ----------
    out : Path
        Working folder: ``scale-raw/`` (the raw trace, kept), ``scale-canonical/`` (the
        converted tables) and a temporary results folder per run.
    shared : Path
        The shared folder with ``traces/google-2011`` (the sample that is resampled).
    case : ScaleCase, optional
        The raw trace's size and the schedulers run on it (default: the whole trace's, FF- and
        BF-DRFH).
    progress : bool
        Progress bars in the children.

    Returns
    -------
    dict
        ``generate``, ``convert``, ``runs`` (scheduler → usage and the run's headline numbers),
        ``targets`` (list of :class:`~benchmarks.targets.Target`) and ``note``.
    """
    case = case or ScaleCase()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw, canonical = out / "scale-raw", out / "scale-canonical"
    gen = _generate(shared, raw, case, progress)
    log.info("converting %s", raw)
    cmd = ["trace", "convert", "google-2011", str(raw), "--out", str(canonical), "--overwrite"]
    conv = measured(fairsim_command([*cmd, *([] if progress else ["--no-progress"])]))
    report = json.loads((canonical / "conversion.json").read_text())
    conv["tasks"] = int(report["tasks"])
    conv["rows_read"] = int(report["rows_read"]["task_events"])
    conv["tasks_per_s"] = conv["tasks"] / conv["wall_s"]
    runs: dict[str, Any] = {}
    for s in case.schedulers:
        cfg = out / f"scale-{s}.yaml"
        write_text(cfg, _scenario(canonical, raw, s))
        dest = out / f"scale-run-{s}"
        if dest.exists():
            shutil.rmtree(dest)
        log.info("running %s", s)
        cmd = ["run", str(cfg), "--out", str(dest), *([] if progress else ["--no-progress"])]
        usage = measured(fairsim_command(cmd))
        summary = json.loads((dest / s / "summary.json").read_text())
        runs[s] = {
            **usage,
            "engine_wall_s": summary.get("wall_s"),
            "tasks": summary.get("tasks"),
            "tasks_completed": summary.get("tasks_completed"),
            "events": summary.get("events"),
            "servers": summary.get("servers"),
            "tasks_file_mb": (dest / s / "tasks.parquet").stat().st_size / 2**20,
        }
        shutil.rmtree(dest)
    return {
        "generate": gen,
        "convert": conv,
        "runs": runs,
        "targets": targets(conv, runs),
        "note": f"{case.tasks:,} raw tasks over {case.days:g} days resampled from the Google "
        "sample (fairsim trace synth --raw), converted by fairsim trace convert, then fairsim run "
        "on the trace's machines; each step in its own process; wall_s includes start-up.",
    }


def targets(conv: dict[str, Any], runs: dict[str, Any]) -> list[Target]:
    """Conversion below 1,024 MB and >= 83,000 tasks/s, conversion + FF-DRFH run under 600 s,
    every run below 1,024 MB (issue 45)."""
    ctx = "one run, each step a process of its own"
    peak, rate = conv["peak_rss_mb"], conv["tasks_per_s"]
    mem, speed = "conversion, peak RSS", "conversion, tasks per second"
    out = [
        Target.check("convert memory", mem, peak, "MB", "<", TARGET_CONVERT_RSS_MB, ctx),
        Target.check(
            "convert speed", speed, rate, "tasks/s", ">=", TARGET_CONVERT_TASKS_PER_S, ctx
        ),
    ]
    if "ff-drfh" in runs:
        path = conv["wall_s"] + runs["ff-drfh"]["wall_s"]
        what = "conversion + FF-DRFH run, wall time"
        out.append(Target.check("path wall", what, path, "s", "<", TARGET_PATH_WALL_S, ctx))
    for s, r in runs.items():
        what = f"run {s}, peak RSS"
        peak = r["peak_rss_mb"]
        out.append(Target.check(f"{s} memory", what, peak, "MB", "<", TARGET_RUN_RSS_MB, ctx))
    return out


def scale_markdown(res: dict[str, Any]) -> str:
    """A short table of ``scale.json``."""
    conv = res["convert"]
    rows = [("convert", conv["wall_s"], conv["cpu_s"], conv["peak_rss_mb"], conv["tasks_per_s"])]
    for s, r in res["runs"].items():
        rate = r["tasks"] / r["wall_s"] if r.get("tasks") else float("nan")
        rows.append((f"run {s}", r["wall_s"], r["cpu_s"], r["peak_rss_mb"], rate))
    head = ["step", "wall (s)", "CPU (s)", "peak RSS (MB)", "tasks/s"]
    cells = [
        (step, f"{w:,.1f}", f"{c:,.1f}", f"{m:,.0f}", f"{t:,.0f}") for step, w, c, m, t in rows
    ]
    return "\n".join(["# make bench-scale", "", res["note"], "", *table(head, cells)])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.bench_scale --shared ../shared --out results/bench``."""
    ap = parser("benchmarks.bench_scale", __doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--tasks", type=int, default=SCALE_TASKS)
    ap.add_argument("--days", type=float, default=SCALE_DAYS)
    ap.add_argument("--parts", type=int, default=SCALE_PARTS)
    ap.add_argument("--schedulers", default=",".join(SCHEDULERS), help="comma-separated")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    run = start()
    schedulers = tuple(x.strip() for x in args.schedulers.split(",") if x.strip())
    case = ScaleCase(args.tasks, args.days, args.parts, schedulers)
    res = bench_scale(args.out, args.shared, case, progress=not args.no_progress)
    record = run.record("scale", res.pop("targets"), **res)
    write_result(args.out, record, scale_markdown(record))
    met = sum(t["met"] for t in record["targets"])
    log.info("%d/%d targets met; %s", met, len(record["targets"]), args.out / "scale.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
