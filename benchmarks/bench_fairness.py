"""``make bench``: the cost of fairness over time (``collect.fairness``, docs/fairness.md).

Target (DESIGN.md, engineering targets): fairness collection at its default interval (600 s) adds
at most 10 % to a run. The point is the one of the issue that set it: Best-Fit DRFH on the DRFH
experiment (``configs/drfh-google.yaml``: the real Google sample, task_events parts 0-13, on
2,000 Table I servers drawn with the config's seed, 7 classes of identical servers), whose
reference is the exact DRFH allocation (DRFH paper, Wang, Li and Liang, Section IV, eq. 4).

* ``overhead``: ``fairsim run`` of that scenario without and with ``collect.fairness:
  {interval_s: 600}``, each a whole process (:func:`benchmarks.child.run_child`: interpreter
  start-up, imports, the run, its result files, figures and report), paired A B A B ...
  (``--pairs``, default 3) after one untimed warm-up run of each; per pair the ratio of the
  two processes' wall times, and the median ratio (issue 45: measured as a whole process).
  Beside it, the same ratio of the engine's wall times alone (``summary.json``'s ``wall_s``:
  the engine's loop, which calls the probe at every instant), the probe's own seconds
  (``solve_s``: the exact solves; ``metrics_s``: the rest of the probe), the number of instants
  and the mean number of active users.
* ``per-instant``: the reference solve alone
  (:func:`fairsim.scenario.fairness.reference_dominant_shares`, solve and check) on instants
  of that run chosen across the range of active users: the cost of one instant against the
  number of active users, with the pool's 7 server classes.
  ``python -m benchmarks.bench_exact`` times the solvers against the number of classes.

Output (atomic): ``fairness.json`` in ``--out`` (:meth:`benchmarks.targets.RunInfo.record`: the
target, the commit and the machine, then the figures) and a table on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.child import fairsim_command, run_child
from benchmarks.targets import Target, parser, start, write_result
from fairsim.experiments import config_path

CONFIG = config_path("drfh-google.yaml")
SCHEDULER = "bf-drfh"
INTERVAL_S = 600.0
#: The target: fairness collection adds at most this fraction to a whole ``fairsim run``.
MAX_OVERHEAD = 0.10


def _overrides(shared: Path, fairness: bool, scheduler: str, horizon_s: float | None) -> list[str]:
    over = [
        f"trace.path={Path(shared) / 'traces' / 'google-2011'}",
        f"schedulers=[{scheduler}]",
    ]
    if fairness:
        over.append(f"collect.fairness={{interval_s: {INTERVAL_S}}}")
    if horizon_s is not None:
        over.append(f"collect.horizon_s={horizon_s}")
    return over


def _config(shared: Path, fairness: bool, scheduler: str, horizon_s: float | None) -> Any:
    from fairsim.scenario.config import load_config

    return load_config(CONFIG, overrides=_overrides(shared, fairness, scheduler, horizon_s))


def run_command(
    shared: Path,
    fairness: bool,
    out: Path,
    scheduler: str = SCHEDULER,
    horizon_s: float | None = None,
) -> list[str]:
    """The arguments of ``fairsim run`` (after ``fairsim``) of the benchmark's scenario into
    ``out`` (``horizon_s``: stop there instead of at the end of the trace, for smoke tests)."""
    cmd = ["run", str(CONFIG), "--out", str(out), "--no-progress"]
    for o in _overrides(shared, fairness, scheduler, horizon_s):
        cmd += ["--set", o]
    return cmd


def read_run(out: Path, fairness: bool, scheduler: str = SCHEDULER) -> dict[str, Any]:
    """What a run's folder says: the engine's ``wall_s`` and the tasks; with fairness, the
    instants, the probe's seconds and the active users."""
    import pandas as pd

    from fairsim.scenario.reporting.fairness_panel import FAIRNESS_SUMMARY_FILE

    summary = json.loads((out / scheduler / "summary.json").read_text())
    res: dict[str, Any] = {
        "scheduler": scheduler,
        "fairness": fairness,
        "wall_s": float(summary["wall_s"]),
        "tasks": int(summary["tasks"]),
    }
    if fairness:
        f = summary["fairness"]
        active = pd.read_parquet(out / scheduler / FAIRNESS_SUMMARY_FILE)["active_users"]
        res.update(
            instants=int(f["instants"]),
            solve_s=float(f["solve_s"]),
            metrics_s=float(f["metrics_s"]),
            mean_active_users=float(active.mean()),
            max_active_users=int(active.max()),
        )
    return res


def run_one(
    shared: Path,
    fairness: bool,
    out: Path,
    scheduler: str = SCHEDULER,
    horizon_s: float | None = None,
) -> dict[str, Any]:
    """``fairsim run`` of the benchmark's scenario into ``out``, in this process
    (:func:`run_command`), then :func:`read_run` and, with fairness, :func:`per_instant`."""
    from fairsim.cli import main as fairsim_main

    code = fairsim_main(run_command(shared, fairness, out, scheduler, horizon_s))
    if code != 0:
        raise RuntimeError(f"fairsim run exited {code}")
    res = read_run(out, fairness, scheduler)
    if fairness:
        res["per_instant"] = per_instant(out, _config(shared, True, scheduler, horizon_s))
    return res


def per_instant(
    out: Path, cfg: Any, scheduler: str = SCHEDULER, n_points: int = 5, repeat: int = 3
) -> list[dict[str, Any]]:
    """Time the reference solve alone on instants of the run in ``out`` spread over the range of
    active users (``cfg``: its config)."""
    import pandas as pd

    from fairsim.scenario.fairness import reference_dominant_shares
    from fairsim.scenario.pool import build_pool, pool_capacity
    from fairsim.scenario.reporting.fairness_panel import FAIRNESS_FILE, FAIRNESS_SUMMARY_FILE
    from fairsim.schedulers.exact.aggregate import aggregate_servers

    cap = pool_capacity(build_pool(cfg))
    classes = aggregate_servers(cap)

    fs = pd.read_parquet(out / scheduler / FAIRNESS_SUMMARY_FILE)
    fr = pd.read_parquet(out / scheduler / FAIRNESS_FILE)
    res = [c[len("demand_") :] for c in fr.columns if c.startswith("demand_")]
    order = fs.sort_values(["active_users", "time_s"]).reset_index(drop=True)
    picks = sorted({round(q * (len(order) - 1)) for q in np.linspace(0, 1, n_points)})
    found: list[dict[str, Any]] = []
    for i in picks:
        t = float(order.loc[i, "time_s"])
        rows = fr[fr["time_s"] == t]
        demand = rows[[f"demand_{x}" for x in res]].to_numpy(np.float64)
        bound = (rows["tasks_running"] + rows["tasks_waiting"]).to_numpy(np.float64)
        weight = np.ones(len(rows))
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            reference_dominant_shares(
                "drfh", tuple(res), cap, demand, bound, weight, classes=classes
            )
            times.append(time.perf_counter() - t0)
        found.append(
            {
                "time_s": t,
                "active_users": len(rows),
                "classes": len(classes.count),
                "solve_ms": 1e3 * float(np.median(times)),
            }
        )
    return found


def _whole_run(shared: Path, fairness: bool, out: Path) -> dict[str, Any]:
    """``fairsim run`` in a child process (:func:`run_command`): its folder's figures
    (:func:`read_run`) with the process's ``process_wall_s``, or ``{"error": ...}``."""
    run = run_child(fairsim_command(run_command(shared, fairness, out)))
    if run.error is not None:
        return {"error": run.error}
    return {**read_run(out, fairness), "process_wall_s": run.wall_s, "cpu_s": run.cpu_s}


def bench_overhead(shared: Path, pairs: int = 3) -> dict[str, Any]:
    """Whole ``fairsim run`` processes without (A) and with (B) fairness collection, A B A B,
    after one untimed warm-up run of each (the page cache, the interpreter's byte code and the
    machine's clock then favour neither side of the first pair)."""
    off, on, ratios, engine = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="fairsim-bench-fairness-") as tmp:
        for fairness in (False, True):
            warm = _whole_run(shared, fairness, Path(tmp) / f"warm-up-{fairness}")
            if "error" in warm:
                return {"error": warm["error"]}
        for k in range(pairs):
            a = _whole_run(shared, False, Path(tmp) / f"off{k}")
            b = _whole_run(shared, True, Path(tmp) / f"on{k}")
            for side in (a, b):
                if "error" in side:
                    return {"error": side["error"]}
            off.append(a)
            on.append(b)
            ratios.append(b["process_wall_s"] / a["process_wall_s"])
            engine.append(b["wall_s"] / a["wall_s"])
        instants = per_instant(Path(tmp) / f"on{pairs - 1}", _config(shared, True, SCHEDULER, None))
    last = on[-1]
    return {
        "scheduler": SCHEDULER,
        "config": "configs/drfh-google.yaml",
        "interval_s": INTERVAL_S,
        "pairs": pairs,
        "wall_off_s": [x["process_wall_s"] for x in off],
        "wall_on_s": [x["process_wall_s"] for x in on],
        "ratios": ratios,
        "overhead": float(np.median(ratios)) - 1.0,
        "engine_wall_off_s": [x["wall_s"] for x in off],
        "engine_wall_on_s": [x["wall_s"] for x in on],
        "engine_ratios": engine,
        "engine_overhead": float(np.median(engine)) - 1.0,
        "instants": last["instants"],
        "mean_active_users": last["mean_active_users"],
        "max_active_users": last["max_active_users"],
        "solve_s": float(np.median([x["solve_s"] for x in on])),
        "metrics_s": float(np.median([x["metrics_s"] for x in on])),
        "ms_per_instant": 1e3
        * float(np.median([(x["solve_s"] + x["metrics_s"]) / x["instants"] for x in on])),
        "per_instant": instants,
    }


def target(res: dict[str, Any]) -> Target:
    """Fairness collection adds at most :data:`MAX_OVERHEAD` to a whole ``fairsim run`` (in %)."""
    what = (
        f"{res.get('scheduler', SCHEDULER)}, whole `fairsim run` process with fairness collection "
        "over without"
    )
    if "error" in res:
        return Target.check("overhead", what, None, "%", "<=", 100 * MAX_OVERHEAD, res["error"])
    engine = res.get("engine_overhead")
    ctx = (
        f"median of {res['pairs']} pairs' ratios ({min(res['ratios']):.2f}–"
        f"{max(res['ratios']):.2f}), each run a child process"
        + ("" if engine is None else f"; the engine alone {100 * engine:+.1f} %")
        + f"; {res['ms_per_instant']:.1f} ms per instant at {res['instants']} instants"
    )
    return Target.check("overhead", what, 100 * res["overhead"], "%", "<=", 100 * MAX_OVERHEAD, ctx)


def summary_markdown(res: dict[str, Any]) -> str:
    """The result as a short Markdown table."""
    if "error" in res:
        return f"fairness overhead: ERROR {res['error']}\n"

    def walls(key: str) -> str:
        return ", ".join(f"{x:.2f}" for x in res.get(key, []))

    lines = [
        f"Fairness over time, {res['scheduler']} on {res['config']}, interval "
        f"{res['interval_s']:.0f} s ({res['instants']} instants, mean "
        f"{res['mean_active_users']:.0f} active users), {res['pairs']} pairs A B:",
        "",
        "| run | whole process wall (s), per pair | engine wall (s), per pair |",
        "|---|---|---|",
        f"| without fairness | {walls('wall_off_s')} | {walls('engine_wall_off_s')} |",
        f"| with fairness | {walls('wall_on_s')} | {walls('engine_wall_on_s')} |",
        "",
        f"Probe: solves {res['solve_s']:.2f} s, the rest {res['metrics_s']:.2f} s, "
        f"{res['ms_per_instant']:.1f} ms per instant.",
        "",
        "| instant (s) | active users | server classes | reference solve (ms) |",
        "|---|---|---|---|",
    ]
    for p in res["per_instant"]:
        lines.append(
            f"| {p['time_s']:,.0f} | {p['active_users']} | {p['classes']} | {p['solve_ms']:.1f} |"
        )
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    p = parser("benchmarks.bench_fairness", __doc__)
    p.add_argument("--pairs", type=int, default=3)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    run = start()
    res = bench_overhead(args.shared, args.pairs)
    record = run.record("fairness", [target(res)], **res)
    sys.stdout.write(write_result(args.out, record, summary_markdown(record)))
    return 0 if "error" not in res else 1


if __name__ == "__main__":
    sys.exit(main())
