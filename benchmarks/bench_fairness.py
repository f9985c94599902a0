"""``make bench``: the cost of fairness over time (``collect.fairness``, docs/fairness.md).

Target (DESIGN.md, engineering targets): fairness collection at its default interval (600 s) adds
at most 10 % to a run. The point is the one of the issue that set it: Best-Fit DRFH on the DRFH
experiment (``configs/drfh-google.yaml``: the real Google sample, task_events parts 0-13, on
2,000 Table I servers drawn with the config's seed, 7 classes of identical servers), whose
reference is the exact DRFH allocation (DRFH paper, Wang, Li and Liang, Section IV, eq. 4).

* ``overhead``: the run without and with ``collect.fairness: {interval_s: 600}``, each in a
  fresh child process, paired A B A B ... (``--pairs``, default 3); per pair the ratio of the
  engine's wall times (``summary.json``'s ``wall_s``: the engine's loop, which calls the probe at
  every instant), and the median ratio. With fairness on, the child also reports the probe's own
  seconds (``solve_s``: the exact solves; ``metrics_s``: the rest of the probe), the number of
  instants and the mean number of active users.
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
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.child import child_json
from benchmarks.targets import Target, parser, start, write_result
from fairsim.experiments import config_path

CONFIG = config_path("drfh-google.yaml")
SCHEDULER = "bf-drfh"
INTERVAL_S = 600.0
#: The target: fairness collection adds at most this fraction to a run's wall time.
MAX_OVERHEAD = 0.10
REPO = Path(__file__).resolve().parents[1]
CHILD_TIMEOUT_S = 3600.0


def _config(shared: Path, fairness: bool, scheduler: str, horizon_s: float | None) -> Any:
    from fairsim.scenario.config import load_config

    over = [
        f"trace.path={Path(shared) / 'traces' / 'google-2011'}",
        f"schedulers=[{scheduler}]",
    ]
    if fairness:
        over.append(f"collect.fairness={{interval_s: {INTERVAL_S}}}")
    if horizon_s is not None:
        over.append(f"collect.horizon_s={horizon_s}")
    return load_config(CONFIG, overrides=over)


def run_one(
    shared: Path, fairness: bool, scheduler: str = SCHEDULER, horizon_s: float | None = None
) -> dict[str, Any]:
    """One run of ``scheduler`` on the DRFH experiment's workload and pool, in this process
    (``horizon_s``: stop there instead of at the end of the trace, for smoke tests)."""
    import fairsim

    cfg = _config(shared, fairness, scheduler, horizon_s)
    r = fairsim.simulate(cfg)[scheduler]
    out: dict[str, Any] = {
        "scheduler": scheduler,
        "fairness": fairness,
        "wall_s": float(r.summary["wall_s"]),
        "tasks": int(r.summary["tasks"]),
    }
    if fairness:
        f = r.summary["fairness"]
        fs = r.fairness_summary
        assert fs is not None
        out.update(
            instants=int(f["instants"]),
            solve_s=float(f["solve_s"]),
            metrics_s=float(f["metrics_s"]),
            mean_active_users=float(fs["active_users"].mean()),
            max_active_users=int(fs["active_users"].max()),
            per_instant=_per_instant(r, cfg),
        )
    return out


def _per_instant(r: Any, cfg: Any, n_points: int = 5, repeat: int = 3) -> list[dict[str, Any]]:
    """Time the reference solve alone on instants spread over the range of active users."""
    from fairsim.scenario.fairness import reference_dominant_shares
    from fairsim.scenario.pool import build_pool, pool_capacity
    from fairsim.schedulers.exact.aggregate import aggregate_servers

    cap = pool_capacity(build_pool(cfg))
    classes = aggregate_servers(cap)
    fs, fr = r.fairness_summary, r.fairness
    res = [c[len("demand_") :] for c in fr.columns if c.startswith("demand_")]
    order = fs.sort_values(["active_users", "time_s"]).reset_index(drop=True)
    picks = sorted({round(q * (len(order) - 1)) for q in np.linspace(0, 1, n_points)})
    out = []
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
        out.append(
            {
                "time_s": t,
                "active_users": len(rows),
                "classes": len(classes.count),
                "solve_ms": 1e3 * float(np.median(times)),
            }
        )
    return out


def _child(shared: Path, fairness: bool) -> dict[str, Any]:
    argv = [sys.executable, "-m", "benchmarks.bench_fairness", "--one", "--shared", str(shared)]
    if fairness:
        argv.append("--fairness")
    return child_json(argv, cwd=REPO, timeout_s=CHILD_TIMEOUT_S)


def bench_overhead(shared: Path, pairs: int = 3) -> dict[str, Any]:
    """Runs without (A) and with (B) fairness collection, A B A B ..., in child processes."""
    off, on, ratios = [], [], []
    for _ in range(pairs):
        a, b = _child(shared, False), _child(shared, True)
        for side in (a, b):
            if "error" in side:
                return {"error": side["error"]}
        off.append(a)
        on.append(b)
        ratios.append(b["wall_s"] / a["wall_s"])
    overhead = float(np.median(ratios)) - 1.0
    last = on[-1]
    return {
        "scheduler": SCHEDULER,
        "config": "configs/drfh-google.yaml",
        "interval_s": INTERVAL_S,
        "pairs": pairs,
        "wall_off_s": [x["wall_s"] for x in off],
        "wall_on_s": [x["wall_s"] for x in on],
        "ratios": ratios,
        "overhead": overhead,
        "instants": last["instants"],
        "mean_active_users": last["mean_active_users"],
        "max_active_users": last["max_active_users"],
        "solve_s": float(np.median([x["solve_s"] for x in on])),
        "metrics_s": float(np.median([x["metrics_s"] for x in on])),
        "ms_per_instant": 1e3
        * float(np.median([(x["solve_s"] + x["metrics_s"]) / x["instants"] for x in on])),
        "per_instant": last["per_instant"],
    }


def target(res: dict[str, Any]) -> Target:
    """Fairness collection adds at most :data:`MAX_OVERHEAD` to the engine's wall time (in %)."""
    what = (
        f"{res.get('scheduler', SCHEDULER)}, engine wall time with fairness collection over without"
    )
    if "error" in res:
        return Target.check("overhead", what, None, "%", "<=", 100 * MAX_OVERHEAD, res["error"])
    ctx = (
        f"median of {res['pairs']} pairs' ratios ({min(res['ratios']):.2f}–"
        f"{max(res['ratios']):.2f}), each run in a child process; {res['ms_per_instant']:.1f} ms "
        f"per instant at {res['instants']} instants"
    )
    return Target.check("overhead", what, 100 * res["overhead"], "%", "<=", 100 * MAX_OVERHEAD, ctx)


def summary_markdown(res: dict[str, Any]) -> str:
    """The result as a short Markdown table."""
    if "error" in res:
        return f"fairness overhead: ERROR {res['error']}\n"
    lines = [
        f"Fairness over time, {res['scheduler']} on {res['config']}, interval "
        f"{res['interval_s']:.0f} s ({res['instants']} instants, mean "
        f"{res['mean_active_users']:.0f} active users), {res['pairs']} pairs A B:",
        "",
        "| run | wall (s), per pair |",
        "|---|---|",
        "| without fairness | " + ", ".join(f"{x:.2f}" for x in res["wall_off_s"]) + " |",
        "| with fairness | " + ", ".join(f"{x:.2f}" for x in res["wall_on_s"]) + " |",
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
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--fairness", action="store_true", help=argparse.SUPPRESS)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.one:
        sys.stdout.write(json.dumps(run_one(args.shared, args.fairness)) + "\n")
        return 0
    run = start()
    res = bench_overhead(args.shared, args.pairs)
    record = run.record("fairness", [target(res)], **res)
    sys.stdout.write(write_result(args.out, record, summary_markdown(record)))
    return 0 if "error" not in res else 1


if __name__ == "__main__":
    sys.exit(main())
