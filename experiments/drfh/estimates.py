"""The DRFH reproduction's numbers over seeds: every quantity of Table II and Figs. 4-8 as an
estimate with its 95 % interval, as ``docs/drfh-google.md`` ("Intervals") describes: a run-level
quantity's mean over seeds with its Student-t interval
(:func:`fairsim.experiments.claims.across_seeds`); Fig. 6b's reductions and Fig. 8's mean
decrease bootstrapped over jobs and users, every seed's pairs pooled
(:func:`fairsim.experiments.claims.bootstrap_units`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairsim.experiments import kit
from fairsim.experiments.claims import Estimate, across_seeds, bootstrap_units
from fairsim.experiments.drfh import numbers as N
from fairsim.experiments.drfh import paper
from fairsim.scenario.reporting.plotting import scheduler_label

#: The time averages of ``fairness_summary.parquet`` the report gives for the Google runs, with
#: their unit (:func:`fmt`'s; ``"share"`` and ``""`` are also :class:`fairsim.experiments.claims.
#: Claim` units) and their name.
FAIRNESS_AVERAGES = {
    "max_deficit": ("share", "largest deficit to the DRFH allocation"),
    "jain_entitlement": ("", "Jain's index of the users' fractions of their DRFH share"),
    "jain_index": ("", "Jain's index of the raw dominant shares"),
    "l1_distance": ("share", "L1 distance to the DRFH allocation (sum over users)"),
    "active_users": ("n", "active users"),
    "si_violations": ("", "users with waiting tasks below their sharing-incentive share"),
    "envious_pairs": ("n", "envious pairs of users"),
}


#: The resources of every utilisation and share.
RES = ("cpu", "mem")
#: Fig. 5's comparisons (a, b) of "a's utilisation at least b's" (``slots``: the best Slots run).
FIG5_PAIRS = (("bf-drfh", "ff-drfh"), ("bf-drfh", "slots"), ("ff-drfh", "slots"))


def across(values: Sequence[Any]) -> Estimate:
    """:func:`fairsim.experiments.claims.across_seeds` of values that may be ``None`` (NaN)."""
    return across_seeds(float("nan") if v is None else float(v) for v in values)


def fig6_estimates(
    pairs_by_seed: dict[int, pd.DataFrame], *, n_resamples: int | None = None
) -> dict[str, Any]:
    """Fig. 6b over seeds: both reductions per bin and over all jobs, and their trends.

    Parameters
    ----------
    pairs_by_seed : dict
        Seed → the jobs finished under both of that seed's schedulers
        (:func:`fairsim.experiments.drfh.numbers.fig6_pairs`).
    n_resamples : int, optional
        Bootstrap resamples (default :data:`fairsim.experiments.claims.N_RESAMPLES`).

    Returns
    -------
    dict
        ``bins`` (:func:`fairsim.experiments.drfh.numbers.fig6_bin_estimates`, with the row
        ``all``; bootstrap over jobs, a job with all its seeds), ``trend`` (``{measure:
        Estimate of Spearman's rho}``, the two-level bootstrap over seeds, then the jobs of each:
        :func:`fairsim.experiments.drfh.numbers.fig6_trend` with ``clusters``),
        ``trend_per_seed`` (``{measure: [rho of each seed alone]}``), ``large`` (the mean of
        per-job reductions of the jobs of more than 50 tasks, pooled), ``cdf`` (Fig. 6a:
        ``behind`` and ``ahead``, :func:`fairsim.experiments.drfh.numbers.fig6_cdf_gaps` over
        seeds), ``pairs`` (the pooled frame, with ``seed``) and ``seeds``.
    """
    kw = {} if n_resamples is None else {"n_resamples": n_resamples}
    pairs = pd.concat([p.assign(seed=s) for s, p in pairs_by_seed.items()], ignore_index=True)
    units = N.fig6_units(pairs)
    n = len(pairs_by_seed)
    per_seed = N.fig6_seed_units(pairs)
    clusters = per_seed["seed"].to_numpy()
    gaps = [N.fig6_cdf_gaps(p) for p in pairs_by_seed.values()]
    return {
        "bins": N.fig6_bin_estimates(units, seeds=n, **kw),
        "trend": {
            m: N.fig6_trend(per_seed, m, seeds=n, clusters=clusters, **kw) for m in N.FIG6_MEASURES
        },
        "trend_per_seed": {m: N.fig6_seed_rhos(per_seed, m) for m in N.FIG6_MEASURES},
        "large": N.fig6_pooled(
            units[units["bin_code"] > 0], paper.FIG6_VERDICT_MEASURE, seeds=n, **kw
        ),
        "cdf": {k: across([g[i] for g in gaps]) for i, k in enumerate(("behind", "ahead"))},
        "pairs": pairs,
        "seeds": n,
    }


def mean_decrease(worse_by_seed: dict[int, pd.DataFrame]) -> Estimate:
    """Fig. 8's mean decrease of the worse-off users' completion ratio over seeds: the worse-off
    (user, seed) pairs pooled, bootstrapped over users (a user's seeds stay together)."""
    pooled = pd.concat([w.assign(seed=s) for s, w in worse_by_seed.items()], ignore_index=True)
    n_seeds = len(worse_by_seed)
    if pooled.empty:
        return Estimate(math.nan, None, None, n_seeds, "no worse-off user")
    g = pooled.groupby("user", sort=True)["decrease"]
    sums, counts = g.sum().to_numpy(float), g.count().to_numpy(float)

    def stat(idx: np.ndarray) -> float:
        return float(sums[idx].sum() / counts[idx].sum())

    return bootstrap_units(len(sums), stat, seeds=n_seeds, what="users")


def _users_estimates(per_seed: dict[int, dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """Fig. 7's or 8's quantities ``keys`` over seeds (Fig. 8's mean decrease:
    :func:`mean_decrease`), and every seed's users (and Fig. 8's worse-off users)."""
    runs = per_seed.values()
    out: dict[str, Any] = {k: across([n[k] for n in runs]) for k in keys if k != "mean_decrease"}
    if "mean_decrease" in keys:
        out["mean_decrease"] = mean_decrease({s: n["worse"] for s, n in per_seed.items()})
        out["worse_off"] = [n["worse_off"] for n in runs]
    return out | {"users": [n["users"] for n in runs]}


#: Figs. 6-8's estimates over seeds from every seed's numbers of the figure (for the main runs
#: and those under the older rule ``complete``).
_FIG678: dict[str, Callable[[dict[int, dict[str, Any]]], dict[str, Any]]] = {
    "fig6": lambda runs: fig6_estimates({s: v["pairs"] for s, v in runs.items()}),
    "fig7": lambda runs: _users_estimates(runs, list(N.FIG7_FRACTIONS)),
    "fig8": lambda runs: _users_estimates(runs, list(N.FIG8_FRACTIONS)),
}


def _table_ii_estimates(
    per_seed: dict[int, dict[str, Any]], key: str
) -> list[dict[str, Any]] | None:
    tables = [{int(r["slots"]): r for r in n.get(key) or []} for n in per_seed.values()]
    if not tables or not all(tables):
        return None
    common = sorted(set.intersection(*(set(t) for t in tables)))
    rows = []
    for s in common:
        p_cpu, p_mem = paper.TABLE_II.get(s, (math.nan, math.nan))
        ours = {r: across([t[s][r] for t in tables]) for r in ("cpu", "mem")}
        rows.append({"slots": s, **ours, "paper_cpu": p_cpu, "paper_mem": p_mem})
    return rows


def _table_ii_orders(per_seed: dict[int, dict[str, Any]]) -> dict[str, Estimate]:
    """Per seed: CPU at 16 slots minus the highest CPU at another slot count, and the mean of
    CPU and memory at 14 slots minus the highest at another; their estimates over seeds."""
    peak16, best14 = [], []
    for n in per_seed.values():
        by = {int(r["slots"]): r for r in n.get("table_ii") or []}
        if 16 in by and len(by) > 1:
            peak16.append(by[16]["cpu"] - max(r["cpu"] for s, r in by.items() if s != 16))
        if 14 in by and len(by) > 1:
            score = {s: (r["cpu"] + r["mem"]) / 2 for s, r in by.items()}
            best14.append(score[14] - max(v for s, v in score.items() if s != 14))
    return {"peak16": across_seeds(peak16), "best14": across_seeds(best14)}


def _fig5_estimates(per_seed: dict[int, dict[str, Any]], slots: str) -> dict[str, Any]:
    roles = {"slots": slots, "ff-drfh": "First-Fit DRFH", "bf-drfh": "Best-Fit DRFH"}
    runs = list(per_seed.values())

    def name(n: dict[str, Any], role: str) -> str:
        return str(n["best_slots"]) if role == "slots" else role

    def above_of(n: dict[str, Any], a: str, b: str) -> dict[str, float]:
        return dict(n["fig5"]["above"][f"{a}>={name(n, b)}"])

    def mean(n: dict[str, Any], role: str, r: str) -> float:
        return float(n["fig5"]["mean"][name(n, role)][r])

    means = {role: {r: across([mean(n, role, r) for n in runs]) for r in RES} for role in roles}
    above: dict[tuple[str, str, str], Estimate] = {}
    for a, b in FIG5_PAIRS:
        for res in RES:
            above[(a, b, res)] = across([above_of(n, a, b)[res] for n in runs])
        above[(a, b, "min")] = across([min(above_of(n, a, b).values()) for n in runs])
    diff = {
        a: across([min(mean(n, a, r) - mean(n, "slots", r) for r in RES) for n in runs])
        for a in ("bf-drfh", "ff-drfh")
    }
    return {"roles": roles, "mean": means, "above": above, "diff": diff}


def _fig4_estimates(per_seed: dict[int, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for phase in paper.FIG4_PHASES:
        users = sorted({u for n in per_seed.values() for u in n["fig4"].get(phase, {})})
        out[phase] = {
            u: {
                r: across([n["fig4"].get(phase, {}).get(u, {}).get(r) for n in per_seed.values()])
                for r in ("cpu", "mem", "dominant")
            }
            for u in users
        }
    return out


def _fig4_deficit_estimates(per_seed: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Fig. 4's deficit numbers over seeds: every phase's numbers (one value per seed),
    ``worst``, the largest settled deficit to the divisible DRFH allocation over the phases of
    each seed, and ``worst_whole``, the same to the whole-task DRFH allocation (the verdict's:
    :func:`fairsim.experiments.drfh.numbers.whole_task_deficits`)."""
    phases: dict[str, dict[str, Any]] = {}
    for phase in N.FIG4_DEFICIT_PHASES:
        vals = [n["fig4_deficit"][phase] for n in per_seed.values()]
        keys = [k for k in vals[0] if k not in ("instants", "users")]
        phases[phase] = {k: across([v[k] for v in vals]) for k in keys}
        phases[phase]["users"] = sorted({u for v in vals for u in v["users"]})
    worst = {
        k: across([max(v[k] for v in n["fig4_deficit"].values()) for n in per_seed.values()])
        for k in ("max_deficit_max", "max_deficit_whole_max")
    }
    return {
        "phases": phases,
        "worst": worst["max_deficit_max"],
        "worst_whole": worst["max_deficit_whole_max"],
    }


def _fairness_estimates(per_seed: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The Google runs' fairness over seeds: each time average (one value per seed), whether
    every schedule equals step 1's, and the time spent in the reference solves."""
    runs = [n["fairness"] for n in per_seed.values()]
    keys = ("averages", "context", "same_schedule", "solve_s", "wall_s")
    out: dict[str, Any] = {k: {} for k in keys}
    for s in N.FAIRNESS_SCHEDULERS:
        out["context"][s] = {
            k: across([f["context"][s][k] for f in runs]) for k in runs[0]["context"][s]
        }
        out["averages"][s] = {
            k: across([f["averages"][s].get(k) for f in runs]) for k in FAIRNESS_AVERAGES
        }
        out["same_schedule"][s] = [f["same_schedule"][s] for f in runs]
        out["solve_s"][s] = across([f["fairness"][s].get("solve_s") for f in runs])
        out["wall_s"][s] = across([f["wall_s"][s] for f in runs])
    first = runs[0]["fairness"]
    out["interval_s"] = first[N.FAIRNESS_SCHEDULERS[0]].get("interval_s")
    out["instants"] = first[N.FAIRNESS_SCHEDULERS[0]].get("instants")
    return out


def collect_numbers(
    out: str | os.PathLike[str], seeds: Sequence[int] | None = None
) -> dict[str, Any]:
    """Every seed's numbers and their estimates over seeds.

    Parameters
    ----------
    out : path-like
        The reproduction's folder, holding ``seed-<k>/`` per seed.
    seeds : sequence of int, optional
        The seeds to read (default: every ``seed-<k>`` folder present).

    Returns
    -------
    dict
        ``seeds``, ``per_seed`` (:func:`~fairsim.experiments.drfh.numbers.seed_numbers` of
        each), ``best_slots`` (seed → name),
        ``table_ii``/``table_ii_single`` (rows with :class:`Estimate` columns ``cpu`` and
        ``mem``), ``table_ii_orders``, ``fig4``, ``fig5``, ``fig6`` (:func:`fig6_estimates`),
        ``fig7``, ``fig8``, ``sensitivity`` (``fig6``/``fig7``/``fig8`` under the older rule),
        ``fig4_deficit`` (:func:`_fig4_deficit_estimates`), ``fairness``
        (:func:`_fairness_estimates`),
        ``figures`` (empty: :func:`fairsim.experiments.drfh.figures.draw` records the file
        name of every figure it draws), ``skipped`` (``{key: reason}``) and an empty
        ``explanations`` dict for the caller to fill.

    Raises
    ------
    FileNotFoundError
        If ``out`` holds no ``seed-<k>`` folder (or not one of ``seeds``).
    """
    root = Path(out)
    folders = kit.seed_folders(root)
    if seeds is not None:
        missing = [s for s in seeds if s not in folders]
        if missing:
            raise FileNotFoundError(f"{root}: no seed-{missing[0]} folder")
        folders = {s: folders[s] for s in seeds}
    if not folders:
        raise FileNotFoundError(f"{root}: no seed-<k> folder (nothing was run)")
    per_seed = {s: N.seed_numbers(d) for s, d in folders.items()}
    numbers: dict[str, Any] = {
        "results": str(root),
        "seeds": list(per_seed),
        "per_seed": per_seed,
        "best_slots": {s: v.get("best_slots") for s, v in per_seed.items()},
        "figures": {},
        "skipped": {},
        "explanations": {},
    }

    def everywhere(key: str, source: dict[int, dict[str, Any]] = per_seed) -> bool:
        lacking = [s for s, v in source.items() if key not in v]
        if lacking:
            why = per_seed[lacking[0]]["skipped"].get(key, "inputs missing")
            numbers["skipped"].setdefault(key, f"seed {lacking[0]}: {why}")
        return not lacking

    multi = _table_ii_estimates(per_seed, "table_ii") if everywhere("table_ii") else None
    if multi:
        numbers["table_ii"] = multi
        numbers["table_ii_orders"] = _table_ii_orders(per_seed)
        single = _table_ii_estimates(per_seed, "table_ii_single")
        if single:
            numbers["table_ii_single"] = single
    if everywhere("fig4"):
        numbers["fig4"] = _fig4_estimates(per_seed)
    if everywhere("fig4_deficit"):
        numbers["fig4_deficit"] = _fig4_deficit_estimates(per_seed)
    if everywhere("fairness"):
        numbers["fairness"] = _fairness_estimates(per_seed)
    if everywhere("fig5"):
        numbers["fig5"] = _fig5_estimates(per_seed, slots_label(numbers))
    for key, estimate in _FIG678.items():
        if everywhere(key):
            numbers[key] = estimate({s: v[key] for s, v in per_seed.items()})
    sens_seeds = {s: v["sensitivity"] for s, v in per_seed.items() if v.get("sensitivity")}
    if len(sens_seeds) == len(per_seed):
        sens: dict[str, Any] = {"completed": across([v["completed"] for v in sens_seeds.values()])}
        for key, estimate in _FIG678.items():
            if all(key in v for v in sens_seeds.values()):
                sens[key] = estimate({s: v[key] for s, v in sens_seeds.items()})
        numbers["sensitivity"] = sens
    production = root / N.PRODUCTION_DIR
    if production.is_dir():
        try:
            numbers["production"] = N.production_numbers(production)
        except FileNotFoundError as e:
            numbers["skipped"]["production"] = f"inputs missing ({e.filename or e})"
    else:
        numbers["skipped"]["production"] = f"no {N.PRODUCTION_DIR}/ folder (step 6 not run)"
    return numbers


def slots_label(numbers: dict[str, Any]) -> str:
    """The Slots baseline's label when every seed chose the same, else 'Slots (best per seed)'."""
    best = {b for b in numbers["best_slots"].values() if b}
    if len(best) == 1:
        return scheduler_label(best.pop())
    return "Slots (best per seed)"
