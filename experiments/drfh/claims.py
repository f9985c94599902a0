"""The DRFH reproduction's claims: the statements of
:data:`fairsim.experiments.drfh.paper.STATEMENTS` (Sec. VI: Table II, Figs. 4-8; one builder per
table or figure, Figs. 7 and 8 from the table :data:`_USERS_CLAIMS`), and our checks of the
fairness runs, each decided by its rule of :mod:`fairsim.experiments.claims` (the rules and
our readings of the paper's words: ``docs/drfh-google.md``). Table II's CPU column at 10-14
slots is kind ``by-construction`` (:data:`CALIBRATION`). A failed claim's reason ends with the
explanation given for it (``numbers["explanations"]``,
:data:`fairsim.experiments.drfh.experiment.EXPLANATIONS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pandas as pd

from fairsim.experiments import kit
from fairsim.experiments.claims import (
    Claim,
    Estimate,
    agrees,
    bounded,
    consistency,
    every_setting,
    exceeds,
    trend,
)
from fairsim.experiments.drfh import estimates as E
from fairsim.experiments.drfh import numbers as N
from fairsim.experiments.drfh import paper
from fairsim.experiments.drfh.estimates import FAIRNESS_AVERAGES
from fairsim.scenario.reporting.plotting import scheduler_label

#: The measures of :data:`~fairsim.experiments.drfh.estimates.FAIRNESS_AVERAGES` listed as claims
#: (measured, not judged).
FAIRNESS_CLAIMED = ("max_deficit", "jain_entitlement", "jain_index")
#: Table II's CPU column at 10-14 slots is where the slot model was fitted.
CALIBRATION = paper.TEXT["text.calibration"]
_ST = paper.BY_KEY
_MEASURE = paper.FIG6_VERDICT_MEASURE


def join(*parts: str) -> str:
    """The non-empty parts, joined by '; '."""
    return "; ".join(p for p in parts if p)


def _explain(numbers: dict[str, Any], claim: Claim, *keys: str) -> Claim:
    """Add the first explanation found under ``keys`` to a failed claim's reason."""
    if claim.verdict != "FAIL":
        return claim
    expl = numbers.get("explanations") or {}
    for key in keys:
        if key in expl:
            reason = join(claim.reason, str(expl[key]))
            return claim.model_copy(update={"reason": reason})
    return claim


def _old_rule(numbers: dict[str, Any], fig: str, key: str, unit: str = "share") -> str:
    """``under rule `complete`: <estimate>`` for a claim's reason, or ''."""
    sens = (numbers.get("sensitivity") or {}).get(fig)
    if not sens:
        return ""
    if fig == "fig6":
        bins = sens["bins"]
        est = (
            bins.loc[bins["bin"] == key, _MEASURE].iloc[0]
            if key != "trend"
            else sens["trend"][_MEASURE]
        )
    else:
        est = sens[key]
    return f"under the older censoring rule `complete`: {kit.estimate(est, unit)}"


def fig4_pools(numbers: dict[str, Any]) -> str:
    """Which of the Table I draws Fig. 4's numbers are over (a reason and a section's text)."""
    per_seed = numbers.get("per_seed") or {}
    pools = [str((v.get("fig4_config") or {}).get("seed", "?")) for v in per_seed.values()]
    if len(pools) < 2:
        return f"one pool (config seed {', '.join(pools)}): no interval"
    return paper.TEXT["text.fig4_pools"].format(n=len(pools), seeds=", ".join(pools))


def _table_ii(numbers: dict[str, Any]) -> list[Claim]:
    out = []
    for i, (res, name) in enumerate((("cpu", "CPU"), ("mem", "memory"))):
        for r in numbers.get("table_ii") or []:
            s = int(r["slots"])
            if s not in paper.TABLE_II:
                continue
            ref = paper.TABLE_II[s][i]
            calibrated = res == "cpu" and s in (10, 12, 14)
            c = agrees(
                *_ST["table2"].where(slots=s, resource=name),
                ref,
                r[res],
                model_tol=paper.MODEL_TOL,
                unit="share",
                kind="by-construction" if calibrated else "paper",
                reason=CALIBRATION if calibrated else "",
            )
            keys = ("table_ii:memory",) if res == "mem" else (f"table_ii:{s}:cpu", "table_ii")
            c = c.model_copy(update={"quote": paper.table_ii_row(s)})
            out.append(_explain(numbers, c, *keys))
    return out


def _table_ii_orders(numbers: dict[str, Any]) -> list[Claim]:
    orders = numbers.get("table_ii_orders")
    if not orders:
        return []
    counts = pd.Series([b for b in (numbers.get("best_slots") or {}).values() if b]).value_counts()
    peak = exceeds(
        *_ST["table2_peak16"].where(),
        "peak at 16, 20 slots 4.8 pp lower",
        orders["peak16"],
        unit="pp",
        what="CPU at 16 slots minus the highest CPU at another slot count (per seed)",
    )
    best = exceeds(
        *_ST["table2_best14"].where(),
        f"{paper.TABLE_II_BEST_SLOTS} slots",
        orders["best14"],
        unit="pp",
        what=paper.TEXT["text.table2_best14.what"],
        reason="best per seed: " + ", ".join(f"`{k}` in {v}" for k, v in counts.items()),
    )
    return [_explain(numbers, c, "table_ii") for c in (peak, best)]


def _fig4(numbers: dict[str, Any]) -> list[Claim]:
    """Fig. 4's shares, one claim per statement of the paper: user 1 alone's CPU and memory
    shares (its dominant share is the memory share: :data:`~fairsim.experiments.drfh.paper.
    FIG4_SAME_AS`), and in each later phase "the same dominant share to every user" as one claim
    over the users (the worst user decides, :func:`~fairsim.experiments.claims.every_setting`)."""
    out = []
    for phase, per_user in (numbers.get("fig4") or {}).items():
        wanted = paper.FIG4_SHARES.get(phase, {})
        by_res: dict[str, list[tuple[str, Claim]]] = {}
        for user, shares in wanted.items():
            for res, want in shares.items():
                if (phase, user, res) in paper.FIG4_SAME_AS:
                    continue
                est = (per_user.get(user) or {}).get(res) or Estimate(math.nan, None, None, 0, "")
                c = agrees(
                    *_ST["fig4"].where(phase=phase, user=user, resource=res),
                    want,
                    est,
                    model_tol=paper.MODEL_TOL,
                    unit="share",
                    reason=fig4_pools(numbers),
                )
                c = _explain(numbers, c, f"fig4:{phase}:{user}:{res}", "fig4")
                by_res.setdefault(res, []).append((user, c))
        for res, parts in by_res.items():
            if len(parts) == 1:
                out.append(parts[0][1])
                continue
            level = float(wanted[parts[0][0]][res])
            statement = _ST["fig4"].format(phase=phase, user="every user", resource=res)
            out.append(every_setting(statement, parts, target=(level, level), what="users"))
    return out


def _fig4_deficit(numbers: dict[str, Any]) -> list[Claim]:
    """Fig. 4's "precisely achieves the DRFH allocation at all times": the largest deficit of
    Best-Fit DRFH to the DRFH allocation restricted to whole tasks (an exact integer solve,
    :func:`~fairsim.schedulers.exact.whole_task.whole_task_drfh`) over every phase's settled
    instants, within :data:`~fairsim.experiments.drfh.paper.FIG4_DEFICIT_BOUND`; the deficit to
    the divisible allocation, which no scheduler of whole tasks can reach, beside it."""
    deficit = numbers.get("fig4_deficit")
    if not deficit or "worst_whole" not in deficit:
        return []
    phases = deficit["phases"]
    per_phase = ", ".join(
        f"{ph} {kit.estimate(v['max_deficit_whole_max'])}" for ph, v in phases.items()
    )
    divisible = ", ".join(f"{ph} {kit.estimate(v['max_deficit_max'])}" for ph, v in phases.items())
    alone = phases[N.FIG4_DEFICIT_PHASES[0]]
    return _within_one_task(
        numbers,
        "fig4_deficit",
        '"precisely ... at all times"',
        deficit["worst_whole"],
        paper.FIG4_DEFICIT_BOUND,
        paper.TEXT["text.fig4_deficit"].format(settle=alone["settle_s"].value),
        f"bound: {paper.FIG4_BOUND_WHY}",
        f"per phase: {per_phase}",
        paper.TEXT["text.fig4_deficit_all"].format(
            phases=", ".join(
                f"{ph} {kit.estimate(v['max_deficit_whole_max_all'])}" for ph, v in phases.items()
            )
        ),
        paper.TEXT["text.fig4_divisible"].format(
            worst=kit.estimate(deficit["worst"]),
            phases=divisible,
            user=alone["users"][0] if alone["users"] else "the first user",
            **{k: kit.estimate(alone[k]) for k in ("online", "whole_exact", "divisible")},
        ),
    )


def _fig4_two_users(numbers: dict[str, Any]) -> list[Claim]:
    """Fig. 4 after user 1 departs: "only users 2 and 3 share the system, each receiving the
    same share": the largest spread of their dominant shares while both have tasks waiting,
    within one task (:data:`~fairsim.experiments.drfh.paper.FIG4_SAME_SHARE_BOUND`)."""
    deficit = numbers.get("fig4_deficit")
    phase = N.FIG4_DEFICIT_PHASES[-1]
    v = ((deficit or {}).get("phases") or {}).get(phase)
    if not v or "equal_gap_max" not in v:
        return []
    return _within_one_task(
        numbers,
        "fig4_two_users",
        '"the same share"',
        v["equal_gap_max"],
        paper.FIG4_SAME_SHARE_BOUND,
        paper.TEXT["text.fig4_two_users"].format(phase=phase),
        f'"the same" read as within one task: {paper.FIG4_BOUND_WHY}',
        f"users {', '.join(v['users'])}; mean share {kit.estimate(v['online'])}",
    )


def _within_one_task(
    numbers: dict[str, Any], key: str, words: str, est: Estimate, bound: float, *reason: str
) -> list[Claim]:
    """Statement ``key`` of Fig. 4 read as "within one task" (``bound``); the reason ends with
    the pools, and a failed claim's with the explanation ``fig4:<rest of key>``."""
    why = join(*reason, fig4_pools(numbers))
    claim = bounded(*_ST[key].where(), words, est, high=bound, unit="share", reason=why)
    return [_explain(numbers, claim, key.replace("_", ":", 1))]


def _pct0(x: float) -> str:
    """A share as a whole percentage (``5 %``)."""
    return kit.number(x, "share", ".0f")


def _fig5(numbers: dict[str, Any]) -> list[Claim]:
    f5 = numbers.get("fig5")
    if not f5:
        return []
    out = [
        bounded(
            *_ST["fig5_bf_ff"].where(),
            "at all times",
            f5["above"][("bf-drfh", "ff-drfh", "min")],
            low=paper.AT_ALL_TIMES,
            unit="share",
            reason=paper.TEXT["text.fig5_bf_ff"].format(at_all=_pct0(paper.AT_ALL_TIMES)),
        )
    ]
    for a in ("bf-drfh", "ff-drfh"):
        c = exceeds(
            *_ST["fig5_above_slots"].where(scheduler=scheduler_label(a)),
            "much higher",
            f5["diff"][a],
            unit="pp",
            min_effect=paper.SIGNIFICANTLY,
            what=paper.TEXT["text.fig5_above_slots"].format(scheduler=scheduler_label(a)),
        )
        out.append(_explain(numbers, c, "fig5"))
    return out


def _trend_claim(statement: str, source: str, paper_: str, rho: Estimate, *, reason: str) -> Claim:
    """:func:`fairsim.experiments.claims.trend`, but ``n/a`` when rho has no bootstrap interval
    (most resamples leave fewer than 3 bins with jobs): a trend passes only on an interval."""
    claim = trend(statement, source, paper_, rho, reason=reason)
    if rho.finite and (rho.low is None or rho.high is None):
        why = f"no bootstrap interval of rho ({rho.method})"
        return claim.model_copy(update={"verdict": "n/a", "reason": join(why, claim.reason)})
    return claim


def _rhos(values: list[float]) -> str:
    """Per-seed rhos, ``+0.70, +0.90`` (``—`` without any)."""
    return ", ".join(kit.number(v, "", "+.2f") for v in values) or "—"


def _fig6(numbers: dict[str, Any]) -> list[Claim]:
    f6 = numbers.get("fig6")
    if not f6:
        return []
    bins, rho = f6["bins"], f6["trend"]
    small = bins.loc[bins["bin"] == paper.FIG6_BIN_LABELS[0]].iloc[0]
    other = "ratio_of_means"
    no_gain = bounded(
        *_ST["fig6_small"].where(),
        "≈ 0 %",
        small[_MEASURE],
        low=-paper.NO_IMPROVEMENT,
        high=paper.NO_IMPROVEMENT,
        unit="share",
        reason=join(
            paper.TEXT["text.fig6_small"].format(jobs=small["jobs"], pairs=small["pairs"]),
            f"reduction of the mean JCT: {kit.estimate(small[other])}",
            _old_rule(numbers, "fig6", paper.FIG6_BIN_LABELS[0]),
        ),
    )
    per_bin = ", ".join(_pct0(e.value) for e in bins[bins["bin"] != "all"][_MEASURE])
    grows = _trend_claim(
        *_ST["fig6_trend"].where(),
        "growing with size",
        rho[_MEASURE],
        reason=join(
            paper.TEXT["text.fig6_trend"].format(per_bin=per_bin),
            f"rho per seed: {_rhos((f6.get('trend_per_seed') or {}).get(_MEASURE, []))}",
            f"with the reduction of the mean JCT: rho {kit.estimate(rho[other], '')}",
            _old_rule(numbers, "fig6", "trend", ""),
        ),
    )
    out = []
    cdf = f6.get("cdf")
    if cdf:
        out.append(
            bounded(
                *_ST["fig6a"].where(),
                "shorter JCTs (the CDFs)",
                cdf["behind"],
                high=paper.CDF_BEHIND,
                unit="share",
                reason=paper.TEXT["text.fig6a"].format(
                    slots=E.slots_label(numbers),
                    behind=_pct0(paper.CDF_BEHIND),
                    ahead=kit.estimate(cdf["ahead"]),
                ),
            )
        )
    out.append(_explain(numbers, no_gain, "fig6:small", "fig6"))
    large = f6.get("large")
    if isinstance(large, Estimate):
        big = bins[~bins["bin"].isin([paper.FIG6_BIN_LABELS[0], "all"])]
        c = exceeds(
            *_ST["fig6_large"].where(),
            "significant",
            large,
            unit="share",
            min_effect=paper.SIGNIFICANT_REDUCTION,
            what=paper.TEXT["text.fig6_large.what"],
            reason=join(
                f"{int(big['jobs'].sum()):,} jobs; per bin: "
                + ", ".join(
                    f"{b} {kit.estimate(e)}" for b, e in zip(big["bin"], big[_MEASURE], strict=True)
                ),
                paper.TEXT["text.fig6_large"].format(bound=_pct0(paper.SIGNIFICANT_REDUCTION)),
            ),
        )
        out.append(_explain(numbers, c, "fig6:large", "fig6"))
    out.append(_explain(numbers, grows, "fig6:trend"))
    return out


#: Figs. 7 and 8's claims: the statement, the number's key, the paper's value (``agrees``) or
#: words (``bounded``, with our reading of them as ``low`` or ``high``) and the unit; the reason
#: is the block ``text.<statement>`` of ``statements.md`` when there is one (its fields:
#: :func:`_users_fields`).
_USERS_CLAIMS: dict[str, tuple[tuple[str, str, Any, dict[str, float], str], ...]] = {
    "fig7": (
        ("fig7_full", "full_under_a_not_b", paper.FIG7_FULL_UNDER_BF_NOT_SLOTS, {}, "share"),
        ("fig7_higher", "higher_under_a", '"almost all"', {"low": paper.ALMOST_ALL}, "share"),
    ),
    "fig8": (
        ("fig8_most", "better_off_fraction", '"most of them"', {"low": paper.MOST}, "share"),
        ("fig8_worse", "worse_off_fraction", paper.FIG8_WORSE_OFF_FRACTION, {}, "share"),
        ("fig8_slightly", "mean_decrease", '"only slightly"', {"high": paper.ONLY_SLIGHTLY}, "pp"),
    ),
}
#: The fractions of users whose sum is 1 minus the ties, per figure (:func:`_ties`).
_USERS_TIES = {
    "fig7": ("higher_under_a", "lower_under_a"),
    "fig8": ("better_off_fraction", "worse_off_fraction"),
}


def _users_fields(f: dict[str, Any], fig: str) -> dict[str, str]:
    """The fields of Figs. 7 and 8's reasons (the ``text.fig7_*`` and ``text.fig8_*`` blocks):
    our readings of the paper's words, the ties, the lower fraction and the worse-off users."""
    return {
        "almost_all": _pct0(paper.ALMOST_ALL),
        "most": _pct0(paper.MOST),
        "slightly": f"{100 * paper.ONLY_SLIGHTLY:.0f}",
        "ties": _ties(f, *_USERS_TIES[fig]),
        "lower": kit.estimate(f.get("lower_under_a"), "share"),
        "worse_off": ", ".join(map(str, f.get("worse_off", []))),
    }


def _ties(f: dict[str, Any], higher: str, lower: str) -> str:
    """The fraction of users whose completion ratios tie (``—`` without both fractions)."""
    hi, lo = f.get(higher), f.get(lower)
    if not isinstance(hi, Estimate) or not isinstance(lo, Estimate):
        return "—"
    return kit.number(1.0 - hi.value - lo.value, "share", ".1f")


def _users_claims(numbers: dict[str, Any], fig: str) -> list[Claim]:
    """The claims of Fig. 7 or 8 (:data:`_USERS_CLAIMS`)."""
    f = numbers.get(fig)
    if not f:
        return []
    out = []
    for key, value, paper_, bound, unit in _USERS_CLAIMS[fig]:
        if value not in f:  # numbers without this quantity: no claim
            continue
        why = paper.TEXT.get(f"text.{key}", "").format(**_users_fields(f, fig))
        reason = join(why, _old_rule(numbers, fig, value, unit))
        where = _ST[key].where()
        if bound:
            low, high = bound.get("low"), bound.get("high")
            c = bounded(*where, paper_, f[value], low=low, high=high, unit=unit, reason=reason)
        else:
            c = agrees(
                *where, paper_, f[value], model_tol=paper.MODEL_TOL, unit=unit, reason=reason
            )
        out.append(_explain(numbers, c, fig))
    return out


def _fairness(numbers: dict[str, Any]) -> list[Claim]:
    """The Google runs' fairness over time as claims of kind ``consistency``: the time averages
    (measured, not judged: the paper gives no number) and the check that collecting fairness
    left every schedule as step 1's."""
    fair = numbers.get("fairness")
    if not fair:
        return []
    out: list[Claim] = []
    for s in N.FAIRNESS_SCHEDULERS:
        for key in FAIRNESS_CLAIMED:
            unit, what = FAIRNESS_AVERAGES[key]
            est = fair["averages"][s][key]
            out.append(
                consistency(
                    *_ST["fairness"].where(scheduler=scheduler_label(s), what=what),
                    est.value,
                    None,
                    rule="measured, not judged (the paper gives no number)",
                    seeds=est.seeds,
                    reason=f"mean over the instants every {fair['interval_s']:g} s "
                    "(`collect.fairness`), then over seeds",
                    unit=unit,
                    ci=None if est.low is None or est.high is None else (est.low, est.high),
                )
            )
    same = [v for s in N.FAIRNESS_SCHEDULERS for v in fair["same_schedule"][s]]
    known = [v for v in same if v is not None]
    out.append(
        consistency(
            *_ST["fairness_same"].where(),
            f"{sum(known)} of {len(known)} identical",
            None if not known else all(known),
            rule="every (seed, scheduler) tasks.parquet byte-identical to the main run's",
            seeds=len(numbers.get("seeds") or []),
            reason="" if len(known) == len(same) else "a main run's tasks.parquet is missing",
        )
    )
    return out


#: The claim builders, in the paper's order (a piece whose numbers are missing gives no claim).
BUILDERS: tuple[Callable[[dict[str, Any]], list[Claim]], ...] = (
    _table_ii,
    _table_ii_orders,
    _fig4,
    _fig4_deficit,
    _fig4_two_users,
    _fig5,
    _fig6,
    lambda numbers: _users_claims(numbers, "fig7"),
    lambda numbers: _users_claims(numbers, "fig8"),
    _fairness,
)


def build_claims(numbers: dict[str, Any]) -> list[Claim]:
    """One claim per statement of the paper's Section VI (Table II, Figs. 4-8), then the
    fairness runs' measures and check.

    Parameters
    ----------
    numbers : dict
        :func:`fairsim.experiments.drfh.estimates.collect_numbers`'s result, optionally with
        ``explanations`` filled.

    Returns
    -------
    list of Claim
        In the paper's order; empty pieces (skipped) give no claim.
    """
    return [c for build in BUILDERS for c in build(numbers)]
