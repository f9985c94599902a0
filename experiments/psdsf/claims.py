"""The PS-DSF reproduction's claims: one function per statement of
:data:`fairsim.experiments.psdsf.paper.STATEMENTS`.

Every quantity of the online runs is estimated across seeds
(:func:`~fairsim.experiments.claims.across_seeds`, Student-t 95 % interval); the exact
allocations are the same in every seed (a zero-width interval). Table IV's printed numbers are
judged with :func:`~fairsim.experiments.claims.agrees`, cell by cell (the online PS-DSF run as
the paper's statement; the exact solvers of every mechanism as a consistency check), Fig. 6's
orders with :func:`~fairsim.experiments.claims.exceeds` on per-seed differences, the "promptly
converges" and "fully utilized" statements with :func:`~fairsim.experiments.claims.bounded`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairsim.experiments import kit
from fairsim.experiments.claims import (
    Claim,
    Estimate,
    Printed,
    across_seeds,
    agrees,
    bounded,
    exceeds,
    printed_sum,
)
from fairsim.experiments.psdsf import paper
from fairsim.experiments.psdsf.experiment import CONVERGED, SETTLE_WINDOW_S, SPLIT, scenario_users
from fairsim.experiments.psdsf.paper import LABELS
from fairsim.scenario.config import RunConfig

#: Differences of utilisation smaller than this are floating-point ties, counted as 0
#: (``docs/claims.md``: the tie band of "greater").
TIE = 1e-9
#: The mechanisms the paper compares PS-DSF with in Fig. 6, computed exactly as it does.
BASELINES = ("tsf", "c-drfh")
_ST = paper.BY_KEY


def show(e: Estimate, unit: str = "share") -> str:
    """``mean [low, high]`` of an estimate, the unit after each bound, and no interval when it
    has no width (an exact allocation's number)."""
    return kit.estimate(
        e, unit, ".1f" if unit in ("", "s") else None, each=True, min_width=math.ulp(0.0)
    )


@dataclass(frozen=True)
class Runs:
    """The summary's parts every claim reads.

    Attributes
    ----------
    runs : list of dict
        Per seed, each online scheduler's summary.
    exact : dict
        Each exact mechanism's summary.
    cfg : RunConfig
        The scenario.
    sensitivity : list of dict
        The summary's ``d2_sensitivity`` (empty when absent).
    """

    runs: list[dict[str, Any]]
    exact: dict[str, Any]
    cfg: RunConfig
    sensitivity: list[dict[str, Any]]

    def seeds_of(self, f: Callable[..., Any]) -> Estimate:
        """``f`` of every seed's schedulers, across seeds."""
        return across_seeds([float(f(s)) for s in self.runs])

    def has(self, *mechanisms: str) -> bool:
        """Whether every seed ran the online ``mechanisms``."""
        return all(all(m in s for m in mechanisms) for s in self.runs)


def tasks(s: dict[str, Any], mech: str) -> np.ndarray:
    """Paper tasks per user and class of ``mech`` in the first phase (all users active)."""
    return np.asarray(s[mech]["phases"][0]["tasks"], dtype=float)


#: Why every comparison of an exact solver's output with Table IV is of kind ``consistency``, for
#: every mechanism (issue 44).
EXACT_KIND = paper.TEXT["text.exact_kind"]

#: The cells of Table IV that the instance determines, per user (0-based): the classes (0-based
#: column indices) added into one cell. Users 1 and 2 have equal VDS on classes A and B, so only
#: their total there is determined (the split 40 / 170 is one of many); users 3 and 4 may not use
#: classes A and B.
_WHERE = {(0, 1): "classes A and B", (2,): "class C", (3,): "class D"}
CELLS: tuple[tuple[int, tuple[int, ...], str], ...] = tuple(
    (u, cols, where) for u in range(4) for cols, where in _WHERE.items() if u < 2 or 0 not in cols
)


def _printed_cell(mech: str, user: int, cols: tuple[int, ...]) -> Printed:
    """Table IV's cell (or the total of the cells ``cols``) of ``user`` under ``mech``."""
    row = paper.TABLE_IV[mech][user]
    return printed_sum(*(row[j] for j in cols)) if len(cols) > 1 else row[cols[0]]


def _agrees_cell(
    paper_v: Printed,
    est: Estimate,
    where: tuple[str, str] = ("", ""),
    reason: str = "",
) -> Claim:
    """``agrees`` for one Table IV cell (``where``: the claim's statement and source); a printed 0
    (a class the user gets nothing of) is exact (its precision 0), as in
    :func:`~fairsim.experiments.claims.printed_sum`."""
    prec = 0.0 if float(paper_v) == 0.0 else None
    return agrees(*where, paper_v, est, model_tol=paper.MODEL_TOL, precision=prec, reason=reason)


def _table_iv_psdsf(r: Runs) -> list[Claim]:
    avg = "mean over the second half of (0, 100) s, in paper tasks"
    ab, zero = f"{avg}; only the total on A and B is determined", f"{avg}; a printed 0 is exact"
    vds = " (users 1 and 2 have equal VDS there, the split 40 / 170 is one of many)"
    # (user, classes added into the cell, why); users 1 and 2 on C and D: table4_split
    cells = [(2, (2,), avg), (3, (3,), avg), (0, (0, 1), ab + vds), (1, (0, 1), ab)]
    cells += [(2, (3,), zero), (3, (2,), zero)]  # the zero cells of users 3 and 4
    out = []
    for u, cols, why in cells:
        v = _printed_cell("psdsf", u, cols)
        est = r.seeds_of(lambda s, u=u, cols=cols: tasks(s, "psdsf")[u, list(cols)].sum())
        stmt = _ST["table4_psdsf"].where(user=u + 1, tasks=v, classes=_WHERE[cols])
        claim = _agrees_cell(v, est, stmt, why)
        out.append(claim.model_copy(update={"quote": paper.table_iv_row("psdsf", u)}))
    return out


def _table_iv_exact(r: Runs) -> list[Claim]:
    """Table IV against the exact allocations of the recovered instance, every determined cell,
    one claim per mechanism (kind ``consistency``: :data:`EXACT_KIND`)."""
    out = []
    order = {"FAIL": 0, "INCONCLUSIVE": 1, "n/a": 2, "PASS": 3}
    for mech in ("psdsf", "tsf"):
        got = tasks(r.exact, mech)
        parts = []
        for u, cols, where in CELLS:
            p = _printed_cell(mech, u, cols)
            # the exact solvers' residue (below 1e-6 tasks) is shown as 0
            x = round(float(got[u, list(cols)].sum()), 6)
            # the same in every seed: a zero-width interval
            same = Estimate(x, x, x, len(r.runs), "exact: same in every seed")
            parts.append((f"user {u + 1} on {where}", p, _agrees_cell(p, same)))

        def badness(part: tuple[str, Printed, Claim]) -> tuple[int, float]:
            _, p, c = part
            tol = paper.MODEL_TOL + (0.0 if float(p) == 0.0 else p.precision)
            return order[c.verdict], -abs(float(c.ours or 0.0) - float(p)) / tol

        label, p, worst = min(parts, key=badness)
        listing = "; ".join(
            f"{lab}: {kit.number(c.ours, '', '.6g')} vs {q.shown} {c.verdict}"
            for lab, q, c in parts
        )
        dev = float(np.abs(got - np.asarray(paper.TABLE_IV[mech], dtype=float)).max())
        why = paper.TEXT["text.table4_exact"].format(
            cells=len(parts), label=label, listing=listing, dev=dev, kind=EXACT_KIND
        )
        if mech == "tsf":
            why += paper.TEXT["text.table4_exact.tsf"]
        if r.has(mech):
            online = np.mean([tasks(s, mech) for s in r.runs], axis=0)
            totals = ", ".join(f"{x:.4g}" for x in online.sum(axis=1))
            why += f"; our online {LABELS[mech]} (extra), row totals: {totals}"
        st = _ST["table4_exact"]
        update = {"statement": st.format(mech=LABELS[mech]), "source": st.source, "reason": why}
        out.append(worst.model_copy(update={**update, "kind": "consistency"}))
    return out


def _table_iv_split(r: Runs) -> list[Claim]:
    # judged on the online PS-DSF run; exact PS-DSF's and TSF's split are cells of table4_exact
    def cd(v: dict[str, Any], m: str) -> float:  # tasks of users 1 and 2 on classes C and D
        return float(tasks(v, m)[:2, 2:].sum())

    exact = ", ".join(f"exact {LABELS[m]} {round(cd(r.exact, m), 6):g}" for m in ("psdsf", "tsf"))
    why = paper.TEXT["text.table4_split"].format(exact=exact)
    if r.has("tsf"):
        why += f", online TSF {show(r.seeds_of(lambda s: cd(s, 'tsf')), '')}"
    online = r.seeds_of(lambda s: cd(s, "psdsf"))
    return [bounded(*_ST["table4_split"].where(), 0.0, online, high=paper.MODEL_TOL, reason=why)]


def _class_d_tie(r: Runs, diff: Estimate) -> str:
    """Why class D is a tie at best, and how that depends on user 2's CPU demand."""
    why = paper.TEXT["text.class_d_tie"].format(diff=100 * diff.value)
    if r.sensitivity:
        lead = max(e["psdsf"]["mean"] - max(e[m]["mean"] for m in BASELINES) for e in r.sensitivity)
        cpus = ", ".join(f"{c:.3g}" for c in sorted(e["cpu"] for e in r.sensitivity))
        above = "never above the better of exact TSF and C-DRFH"
        if lead > 1e-9:
            above = f"at most {100 * lead:+.2f} pp above the better of them"
        why += paper.TEXT["text.class_d_tie.grid"].format(cpus=cpus, above=above)
    return why


def _greater(key: str, k: str, diff: Estimate, why: str, while_: str = "") -> Claim:
    """PS-DSF's CPU of class ``k`` greater than exact TSF's and C-DRFH's (statement ``key``)."""
    what = f"PS-DSF minus the higher of exact TSF and C-DRFH, per seed{while_}"
    return exceeds(*_ST[key].where(cls=k), "greater", diff, what=what, unit="pp", reason=why)


def _fig6_greater(r: Runs) -> list[Claim]:
    # PS-DSF (online) against TSF and C-DRFH exact every second, as the paper computes them;
    # the exact numbers do not depend on the seed, so the difference is paired per seed
    def one(k: str) -> Claim:
        col = f"cpu_{k}"

        def lead(s: dict[str, Any], best: float) -> float:  # online PS-DSF's minus best
            return float(s["psdsf"]["mean_util"][col] - best)

        best = max(r.exact[m]["mean_util"][col] for m in BASELINES)
        diff = r.seeds_of(lambda s: lead(s, best))
        ps = r.seeds_of(lambda s: s["psdsf"]["mean_util"][col])
        why = f"PS-DSF (online) {show(ps)}; exact every second: " + ", ".join(
            f"{LABELS[m]} {kit.number(r.exact[m]['mean_util'][col], 'share')}"
            for m in (*BASELINES, "psdsf")
        )
        if r.has(*BASELINES):
            extra = r.seeds_of(lambda s: lead(s, max(s[m]["mean_util"][col] for m in BASELINES)))
            why += paper.TEXT["text.fig6_greater.extra"].format(extra=show(extra, "pp"))
        return _greater("fig6_greater", k, diff, why + (_class_d_tie(r, diff) if k == "D" else ""))

    return [one(k) for k in ("C", "D")]


def _fig6_away(r: Runs) -> list[Claim]:
    """Fig. 6 phase by phase: the phase while user 4 is away, where the active users (and so the
    allocations) differ from Table IV's; the phases with every user active are in the reason."""
    # the phase that starts when user 4 leaves (the paper's time scaled by --quick)
    windows = [ph["window"] for ph in r.exact["psdsf"]["phases"]]
    leaves = paper.USER4_INACTIVE_S[0] * (windows[-1][1] / paper.INTERVAL_S[1])
    away = min(range(len(windows)), key=lambda i: abs(windows[i][0] - leaves))

    def one(k: str) -> Claim:
        def util(v: dict[str, Any], i: int) -> float:
            return float(v["phases"][i]["util"][f"cpu_{k}"])

        def lead(s: dict[str, Any], i: int) -> float:
            d = util(s["psdsf"], i) - max(util(r.exact[m], i) for m in BASELINES)
            return 0.0 if abs(d) < TIE else d  # a floating-point tie is a tie

        phases = []
        for i, (a, b) in enumerate(windows):
            ps = r.seeds_of(lambda s, i=i: util(s["psdsf"], i))
            phases.append(
                f"({a:g}, {b:g}) s: PS-DSF (online) {show(ps)}, "
                + ", ".join(
                    f"exact {LABELS[m]} {kit.number(util(r.exact[m], i), 'share')}"
                    for m in (*BASELINES, "psdsf")
                )
                + f", lead {show(r.seeds_of(lambda s, i=i: lead(s, i)), 'pp')}"
            )
        why = "steady state (second half of each phase), phase by phase: " + "; ".join(phases)
        if k == "D":
            why += paper.TEXT["text.fig6_away.d"]
        diff = r.seeds_of(lambda s: lead(s, away))
        return _greater("fig6_away", k, diff, why, ", while user 4 is away")

    return [one(k) for k in ("C", "D")]


def _lowest(r: Runs, low: Callable[[dict[str, Any]], float]) -> tuple[Estimate, str]:
    """The lowest ``low`` of online PS-DSF and exact TSF and C-DRFH, per seed, and each one's."""
    exact_low = {m: low(r.exact[m]) for m in BASELINES}
    est = r.seeds_of(lambda s: min(low(s["psdsf"]), *exact_low.values()))
    each = f"PS-DSF (online) {show(r.seeds_of(lambda s: low(s['psdsf'])))}, " + ", ".join(
        f"exact {LABELS[m]} {kit.number(v, 'share')}" for m, v in exact_low.items()
    )
    return est, each


def _not_full_cd(r: Runs) -> list[Claim]:
    """The resource the "fully utilized" sentence leaves out: the CPU of classes C and D."""

    def low(v: dict[str, Any]) -> float:
        return min(ph["util"][f"cpu_{k}"] for ph in v["phases"] for k in ("C", "D"))

    est, each = _lowest(r, low)
    why = paper.TEXT["text.not_full_cd"].format(
        each=each, exact=kit.number(low(r.exact["psdsf"]), "share"), full=100 * paper.FULL
    )
    stmt = _ST["not_full_cd"].where()
    return [bounded(*stmt, "not fully", est, high=paper.FULL, unit="share", reason=why)]


def _fig6_converges(r: Runs) -> list[Claim]:
    settle = r.seeds_of(lambda s: max(x["settle_s"] for x in s["psdsf"]["settle"]))
    never = sum(not x["settled"] for s in r.runs for x in s["psdsf"]["settle"])
    per_change = "; ".join(
        f"after {x['change_s']:g} s: "
        + show(r.seeds_of(lambda s, i=i: s["psdsf"]["settle"][i]["settle_s"]), "s")
        for i, x in enumerate(r.runs[0]["psdsf"]["settle"])
    )
    why = paper.TEXT["text.fig6_converges"].format(
        converged=100 * CONVERGED, window=SETTLE_WINDOW_S, per_change=per_change
    )
    if never:
        why += f"; {never} change(s) never settled (counted as the whole phase)"
    stmt = _ST["fig6_converges"].where()
    return [bounded(*stmt, "promptly", settle, high=paper.SETTLE_S, unit="s", reason=why)]


def _fully_used(r: Runs) -> list[Claim]:
    cfg = r.cfg
    names = [c.name for c in cfg.cluster.classes or []]
    d2 = next((u.demand for u in scenario_users(cfg) if u.name == "user2"), None)

    def one(resource: str, groups: list[list[str]], text: str, how: str) -> Claim:
        i = 0 if resource == "cpu" else 1
        cap = {c.name: c.count * c.capacity[i] for c in cfg.cluster.classes or []}

        def low(v: dict[str, Any]) -> float:
            """Lowest steady state over the phases and the groups (capacity-weighted)."""
            return min(
                sum(ph["util"][f"{resource}_{k}"] * cap[k] for k in g) / sum(cap[k] for k in g)
                for ph in v["phases"]
                for g in groups
            )

        est, each = _lowest(r, low)
        why = f"lowest steady state over the phases, {how}: {each}; for information: exact "
        why += f"PS-DSF {kit.number(low(r.exact['psdsf']), 'share')}" + "".join(
            f", online {LABELS[m]} " + show(r.seeds_of(lambda s, m=m: low(s[m])))
            for m in BASELINES
            if r.has(m)
        )
        if resource == "cpu" and d2 is not None:
            why += paper.TEXT["text.fully_used.cpu"].format(cpu=d2[0] * SPLIT, mem=d2[1] * SPLIT)
        stmt = _ST["fully_used"].where(what=text)
        return bounded(*stmt, "fully", est, low=paper.FULL, unit="share", reason=why)

    return [
        one("mem", [[k] for k in names], "the memory of every class", "every class"),
        one("cpu", [["A", "B"]], "the CPU of classes A and B", "classes A and B together"),
    ]


#: The claim builders, in the report's order.
BUILDERS = (
    _table_iv_psdsf,
    _table_iv_split,
    _fig6_greater,
    _fig6_away,
    _fig6_converges,
    _fully_used,
    _not_full_cd,
    _table_iv_exact,
)


def build_claims(summary: dict[str, Any], cfg: RunConfig) -> list[Claim]:
    """The claims of the reproduction, in the report's order.

    Parameters
    ----------
    summary : dict
        :func:`fairsim.experiments.psdsf.experiment.run_experiment`'s summary.
    cfg : RunConfig
        The scenario.

    Returns
    -------
    list of Claim
        Kind ``paper``: Table IV's PS-DSF cells, judged on the online run (users 3 and 4 on
        classes C and D, each cell; users 1 and 2 on A and B, their total; users 1 and 2 on C and
        D, the split), Fig. 6 (class C and D greater than exact TSF and C-DRFH over (0, 300) s and
        while user 4 is away; prompt convergence) and the "fully utilized" sentence (memory of
        every class; CPU of classes A and B; the CPU of C and D it leaves out, not fully used).
        Kind ``consistency``, the same for every exact mechanism (:data:`EXACT_KIND`): exact
        PS-DSF and exact TSF on the recovered instance give Table IV's determined cells.
    """
    runs = [x["schedulers"] for x in summary["runs"]]
    r = Runs(runs, summary["exact"], cfg, summary.get("d2_sensitivity") or [])
    return [c for build in BUILDERS for c in build(r)]
