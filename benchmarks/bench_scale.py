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
least 83,000 tasks/s; conversion + First-Fit run under 15 minutes, each process below 2 GB.
Best-Fit's cost per event at 12,583 servers against 2,000 is measured by ``make bench``
(``benchmarks.bench_online``, the servers curve), not here.

Writes ``OUT/scale.json`` (the steps, their numbers and a check per target) and
``OUT/scale.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("bench_scale")

#: The whole Google 2011 trace's size: 25 million tasks over 29 days.
SCALE_TASKS = 25_000_000
SCALE_DAYS = 29.0
SCALE_PARTS = 500
SEED = 1
SCHEDULERS = ("ff-drfh", "bf-drfh")
TARGET_CONVERT_RSS_MB = 1024.0
TARGET_CONVERT_TASKS_PER_S = 83_000.0
TARGET_PATH_WALL_S = 900.0
TARGET_PROCESS_RSS_MB = 2048.0
CHILD_TIMEOUT_S = 7_200.0


def write_text(path: Path, text: str) -> None:
    """:func:`fairsim.atomic.write_text`, imported here: the ``--child`` wrapper imports nothing
    from fairsim, so that its own memory stays small (a child's ``ru_maxrss`` starts from the
    forking process's resident set)."""
    from fairsim.atomic import write_text as atomic

    atomic(path, text)


def _cli(args: Sequence[str]) -> list[str]:
    return [sys.executable, "-m", "fairsim.cli", *args]


def measured(cmd: Sequence[str], *, timeout_s: float = CHILD_TIMEOUT_S) -> dict[str, Any]:
    """Run ``cmd`` in a child process (through this module's ``--child`` wrapper, which
    measures its own peak RSS and CPU time) and return ``wall_s``, ``cpu_s``, ``peak_rss_mb``
    and ``returncode``.

    Raises
    ------
    subprocess.CalledProcessError
        When the command fails (its stderr is passed through).
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fairsim-scale-") as tmp:
        report = Path(tmp) / "usage.json"
        wrapped = [sys.executable, "-m", "benchmarks.bench_scale", "--child", str(report), "--"]
        t0 = time.perf_counter()
        subprocess.run([*wrapped, *cmd], check=True, timeout=timeout_s)
        wall = time.perf_counter() - t0
        usage = json.loads(report.read_text())
    return {"wall_s": round(wall, 2), **usage}


def _child(report: Path, cmd: list[str]) -> int:
    """Run ``cmd`` as a grandchild and write its CPU time and peak RSS into ``report``
    (``RUSAGE_CHILDREN``: the largest RSS of the waited-for child, i.e. of that command)."""
    rc = subprocess.run(cmd, check=False).returncode
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = ru.ru_maxrss / 1024.0 if sys.platform != "darwin" else ru.ru_maxrss / 2**20
    report.write_text(
        json.dumps(
            {
                "cpu_s": round(ru.ru_utime + ru.ru_stime, 2),
                "peak_rss_mb": round(peak, 1),
                "returncode": rc,
            }
        )
    )
    return rc


def _generate(
    shared: Path, raw: Path, tasks: int, days: float, parts: int, progress: bool
) -> dict[str, Any]:
    stamp = raw / "params.json"
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
    usage = measured(_cli([*cmd, *([] if progress else ["--no-progress"])]))
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
    out: Path,
    shared: Path,
    *,
    tasks: int = SCALE_TASKS,
    days: float = SCALE_DAYS,
    parts: int = SCALE_PARTS,
    schedulers: Sequence[str] = SCHEDULERS,
    progress: bool = True,
) -> dict[str, Any]:
    """Generate (or keep), convert and run; return the ``scale.json`` content.

    Parameters
    ----------
    out : Path
        Working folder: ``scale-raw/`` (the raw trace, kept), ``scale-canonical/`` (the
        converted tables) and a temporary results folder per run.
    shared : Path
        The shared folder with ``traces/google-2011`` (the sample that is resampled).
    tasks, days, parts : int, float, int
        Size of the raw trace and its number of task_events parts.
    schedulers : sequence of str
        The schedulers run on the converted trace, each in its own process.
    progress : bool
        Progress bars in the children.

    Returns
    -------
    dict
        ``generate``, ``convert``, ``runs`` (scheduler → usage and the run's headline numbers),
        ``checks`` (target → ``{target, value, pass}``) and ``note``.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    raw, canonical = out / "scale-raw", out / "scale-canonical"
    gen = _generate(shared, raw, tasks, days, parts, progress)
    log.info("converting %s", raw)
    cmd = ["trace", "convert", "google-2011", str(raw), "--out", str(canonical), "--overwrite"]
    conv = measured(_cli([*cmd, *([] if progress else ["--no-progress"])]))
    report = json.loads((canonical / "conversion.json").read_text())
    conv["tasks"] = int(report["tasks"])
    conv["rows_read"] = int(report["rows_read"]["task_events"])
    conv["tasks_per_s"] = round(conv["tasks"] / conv["wall_s"], 1)
    runs: dict[str, Any] = {}
    for s in schedulers:
        cfg = out / f"scale-{s}.yaml"
        write_text(cfg, _scenario(canonical, raw, s))
        dest = out / f"scale-run-{s}"
        if dest.exists():
            shutil.rmtree(dest)
        log.info("running %s", s)
        cmd = ["run", str(cfg), "--out", str(dest), *([] if progress else ["--no-progress"])]
        usage = measured(_cli(cmd))
        summary = json.loads((dest / s / "summary.json").read_text())
        runs[s] = {
            **usage,
            "engine_wall_s": summary.get("wall_s"),
            "tasks": summary.get("tasks"),
            "tasks_completed": summary.get("tasks_completed"),
            "events": summary.get("events"),
            "servers": summary.get("servers"),
            "tasks_file_mb": round((dest / s / "tasks.parquet").stat().st_size / 2**20, 1),
        }
        shutil.rmtree(dest)
    checks: dict[str, Any] = {
        "convert_memory": {
            "target": f"convert peak_rss_mb < {TARGET_CONVERT_RSS_MB:.0f}",
            "value": conv["peak_rss_mb"],
            "pass": conv["peak_rss_mb"] < TARGET_CONVERT_RSS_MB,
        },
        "convert_rate": {
            "target": f"convert tasks_per_s >= {TARGET_CONVERT_TASKS_PER_S:.0f}",
            "value": conv["tasks_per_s"],
            "pass": conv["tasks_per_s"] >= TARGET_CONVERT_TASKS_PER_S,
        },
    }
    if "ff-drfh" in runs:
        path = conv["wall_s"] + runs["ff-drfh"]["wall_s"]
        checks["path_wall"] = {
            "target": f"convert + ff-drfh wall_s < {TARGET_PATH_WALL_S:.0f}",
            "value": round(path, 1),
            "pass": path < TARGET_PATH_WALL_S,
        }
    for s, r in runs.items():
        checks[f"{s}_memory"] = {
            "target": f"run {s} peak_rss_mb < {TARGET_PROCESS_RSS_MB:.0f}",
            "value": r["peak_rss_mb"],
            "pass": r["peak_rss_mb"] < TARGET_PROCESS_RSS_MB,
        }
    return {
        "benchmark": "scale",
        "generate": gen,
        "convert": conv,
        "runs": runs,
        "checks": checks,
        "note": f"{tasks:,} raw tasks over {days:g} days resampled from the Google sample "
        "(fairsim trace synth --raw), converted by fairsim trace convert, then fairsim run on "
        "the trace's machines; each step in its own process; wall_s includes start-up.",
    }


def scale_markdown(res: dict[str, Any]) -> str:
    """A short table of ``scale.json``."""
    conv = res["convert"]
    lines = [
        "# make bench-scale",
        "",
        res["note"],
        "",
        "| step | wall (s) | CPU (s) | peak RSS (MB) | tasks/s |",
        "|---|---|---|---|---|",
        f"| convert | {conv['wall_s']:,.1f} | {conv['cpu_s']:,.1f} | {conv['peak_rss_mb']:,.0f} "
        f"| {conv['tasks_per_s']:,.0f} |",
    ]
    for s, r in res["runs"].items():
        rate = r["tasks"] / r["wall_s"] if r.get("tasks") else float("nan")
        lines.append(
            f"| run {s} | {r['wall_s']:,.1f} | {r['cpu_s']:,.1f} | {r['peak_rss_mb']:,.0f} "
            f"| {rate:,.0f} |"
        )
    lines += ["", "| target | value | |", "|---|---|---|"]
    for c in res["checks"].values():
        lines.append(f"| {c['target']} | {c['value']:,} | {'PASS' if c['pass'] else 'FAIL'} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.bench_scale --shared ../shared --out results/bench``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--child"]:
        return _child(Path(argv[1]), argv[3:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--shared", type=Path, default=Path("../shared"))
    ap.add_argument("--out", type=Path, default=Path("results/bench"))
    ap.add_argument("--tasks", type=int, default=SCALE_TASKS)
    ap.add_argument("--days", type=float, default=SCALE_DAYS)
    ap.add_argument("--parts", type=int, default=SCALE_PARTS)
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    res = bench_scale(
        args.out,
        args.shared,
        tasks=args.tasks,
        days=args.days,
        parts=args.parts,
        progress=not args.no_progress,
    )
    from fairsim.atomic import json_text

    write_text(args.out / "scale.json", json_text(res, sort_keys=False) + "\n")
    write_text(args.out / "scale.md", scale_markdown(res))
    passed = sum(c["pass"] for c in res["checks"].values())
    log.info("%d/%d checks passed; %s", passed, len(res["checks"]), args.out / "scale.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
