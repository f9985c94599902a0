"""Claims and ``report.md`` of the Bonald-Roberts reproduction (Section 4, Figs. 1-3).

:func:`build_claims` turns the runs' rows into :class:`fairsim.experiments.claims.Claim`
records; :func:`write_outputs` writes ``claims.json``, ``run.json``, the figures and
``report.md`` (its statements table generated from the claims).

Which numbers carry which uncertainty
-------------------------------------
* The statements of Section 4.3 (Figs. 1-2) are judged on the Markov chain, which has no
  randomness: the claims have ``seeds = 0`` and a zero-width interval, and their reason gives the
  range of the quantity within the chain's truncation-error bounds and whether the verdict is the
  same at both ends of it.
* The packet-level statement (Section 4.4, Fig. 3) and the checks of the SimPy simulation against
  the chain are random: one value per seed, the mean over seeds and its Student-t 95 % interval
  (:func:`fairsim.experiments.claims.across_seeds`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from fairsim.atomic import write_text
from fairsim.experiments.bonald_roberts import paper as paper
from fairsim.experiments.bonald_roberts.figures import curve, figure_fluid, figure_packet
from fairsim.experiments.bonald_roberts.markov_chain import ALLOCATIONS
from fairsim.experiments.claims import (
    Claim,
    Estimate,
    across_seeds,
    bounded,
    by_construction,
    claims_markdown,
    counts,
    exceeds,
    judged,
    write_claims,
)
from fairsim.simulator.results import write_json

log = logging.getLogger(__name__)

#: How a ratio ``r = gamma_a / gamma_b`` of two Markov rates becomes the claim's quantity.
Form = Literal["r-1", "1-r", "|r-1|"]

_DETERMINISTIC = "deterministic (truncated Markov chain, no seed): zero-width interval"

#: Key of one point (one curve value of one figure).
POINT = ("scenario", "allocation", "method", "load", "class")


def seed_summary(details: pd.DataFrame) -> pd.DataFrame:
    """Per point: the mean of ``gamma`` over seeds and its 95 % interval.

    Parameters
    ----------
    details : DataFrame
        The rows of :func:`fairsim.experiments.bonald_roberts.experiment.run_points`, or the
        Markov rows and every seed's rows.

    Returns
    -------
    DataFrame
        Columns :data:`POINT`, ``gamma`` (mean over seeds), ``ci_low``, ``ci_high`` and
        ``seeds``. The interval is the Student-t interval over seeds
        (:func:`fairsim.experiments.claims.across_seeds`) for two seeds or more; for one seed it
        is the run's own batch-means 95 % CI; for ``markov`` (deterministic, ``seeds`` 0) NaN.
    """
    rows = []
    for key, g in details.groupby(list(POINT), sort=False):
        row = dict(zip(POINT, key, strict=True))
        if row["method"] == "markov":
            row |= {"gamma": float(g.gamma.iloc[0]), "ci_low": np.nan, "ci_high": np.nan}
            row["seeds"] = 0
        elif len(g) == 1:
            r = g.iloc[0]
            row |= {"gamma": r.gamma, "ci_low": r.gamma_lo, "ci_high": r.gamma_hi, "seeds": 1}
        else:
            est = across_seeds(g.gamma)
            lo, hi = est.bounds()
            row |= {"gamma": est.value, "ci_low": lo, "ci_high": hi, "seeds": est.seeds}
        rows.append(row)
    out = pd.DataFrame(rows, columns=[*POINT, "gamma", "ci_low", "ci_high", "seeds"])
    out["class"] = out["class"].astype("int64")
    out["seeds"] = out["seeds"].astype("int64")
    return out


# --------------------------------------------------------------------------- Markov quantities


@dataclass(frozen=True)
class Ranged:
    """A quantity computed from the Markov chain, with its range within the truncation bounds.

    Attributes
    ----------
    value : float
        The quantity (a minimum or maximum over points).
    low, high : float
        Its smallest and largest value when every ``gamma_k`` moves within its relative
        truncation-error bound (``error_bound`` of the chain).
    where : str
        The point that gives ``value``.
    """

    value: float
    low: float
    high: float
    where: str


def _ratio_range(form: Form, r: float, rlo: float, rhi: float) -> tuple[float, float, float]:
    if form == "r-1":
        return r - 1, rlo - 1, rhi - 1
    if form == "1-r":
        return 1 - r, 1 - rhi, 1 - rlo
    low = 0.0 if rlo <= 1 <= rhi else min(abs(rlo - 1), abs(rhi - 1))
    return abs(r - 1), low, max(abs(rlo - 1), abs(rhi - 1))


def ratio_quantity(
    pairs: Iterable[tuple[str, float, float, float, float]],
    form: Form,
    agg: Literal["min", "max"],
) -> Ranged:
    """The min or max over points of a function of ``r = gamma_a / gamma_b``.

    Parameters
    ----------
    pairs : iterable of (where, gamma_a, err_a, gamma_b, err_b)
        One entry per point: a label, the two rates and their relative truncation-error bounds.
    form : {"r-1", "1-r", "|r-1|"}
        The quantity of one point: a relative gain ``r - 1``, a relative loss or margin
        ``1 - r``, or a relative gap ``|r - 1|``.
    agg : {"min", "max"}
        Over the points.

    Returns
    -------
    Ranged
        The aggregate, and its range when each rate moves within its bound
        (``r`` between ``r (1 - e_a) / (1 + e_b)`` and ``r (1 + e_a) / (1 - e_b)``).

    Raises
    ------
    ValueError
        When there is no point.
    """
    vals: list[tuple[float, float, float, str]] = []
    for where, ga, ea, gb, eb in pairs:
        r = ga / gb
        rlo = r * (1 - ea) / (1 + eb)
        rhi = r * (1 + ea) / (1 - eb) if eb < 1 else math.inf
        v, lo, hi = _ratio_range(form, r, rlo, rhi)
        vals.append((v, lo, hi, where))
    if not vals:
        raise ValueError("ratio_quantity: no point")
    pick = min if agg == "min" else max
    best = pick(vals, key=lambda x: x[0])
    return Ranged(
        value=best[0],
        low=pick(x[1] for x in vals),
        high=pick(x[2] for x in vals),
        where=best[3],
    )


class _Markov:
    """The Markov rows as wide tables: ``gamma`` and ``error_bound`` per (load, class)."""

    def __init__(self, details: pd.DataFrame) -> None:
        self.d = details[details.method == "markov"]

    def g(self, sc: str, al: str) -> pd.DataFrame:
        return curve(self.d, sc, al)

    def e(self, sc: str, al: str) -> pd.DataFrame:
        sel = self.d[(self.d.scenario == sc) & (self.d.allocation == al)]
        return sel.pivot_table(index="load", columns="class", values="error_bound")

    def pairs(
        self,
        sc: str,
        a: tuple[str, int],
        b: tuple[str, int],
        loads: Iterable[float] | None = None,
        label: str = "",
    ) -> list[tuple[str, float, float, float, float]]:
        """(where, gamma_a, err_a, gamma_b, err_b) for allocation/class ``a`` over ``b``."""
        ga, ea = self.g(sc, a[0])[a[1]], self.e(sc, a[0])[a[1]]
        gb, eb = self.g(sc, b[0])[b[1]], self.e(sc, b[0])[b[1]]
        out = []
        for load in ga.index if loads is None else loads:
            where = label or f"{a[0].upper()} class {a[1]} / {b[0].upper()} class {b[1]}"
            out.append(
                (
                    f"{where} at load {load:g}",
                    float(ga[load]),
                    float(ea[load]),
                    float(gb[load]),
                    float(eb[load]),
                )
            )
        return out


def _deterministic(
    rule: Callable[..., Claim], statement: str, source: str, paper_text: str, q: Ranged, **kw: Any
) -> Claim:
    """A claim on a Markov quantity: zero-width interval, ``seeds = 0``, and in the reason the
    point behind the value and whether the verdict holds across the truncation range."""
    extra = kw.pop("reason", "")

    def est(v: float) -> Estimate:
        return Estimate(v, v, v, 0, "deterministic")

    ends = {rule(statement, source, paper_text, est(v), **kw).verdict for v in (q.low, q.high)}
    unit = kw.get("unit", "")
    span = f"{_fmt(q.low, unit)} to {_fmt(q.high, unit)} within the truncation-error bounds" + (
        ", same verdict" if len(ends) == 1 else ", where the verdict is not decided"
    )
    reason = "; ".join(x for x in (f"{_DETERMINISTIC}; {q.where}; {span}", extra) if x)
    return rule(statement, source, paper_text, est(q.value), reason=reason, **kw)


def _pc(v: float) -> str:
    return f"{100 * v:g} %"


def _fmt(v: float, unit: str) -> str:
    if unit == "share":
        return f"{100 * v:.2f} %"
    return f"{v:.3g}"


# --------------------------------------------------------------------------- claims


def build_claims(details: pd.DataFrame, *, truncation_target: float = 2e-3) -> list[Claim]:
    """Every claim of the reproduction, in report order.

    Parameters
    ----------
    details : DataFrame
        The Markov rows and every seed's simulation and packet rows
        (:func:`fairsim.experiments.bonald_roberts.experiment.run_points` or the concatenation
        over seeds).
    truncation_target : float
        The config's ``markov.tol``, reported beside the truncation check.

    Returns
    -------
    list of Claim
        Kind ``paper``: the statements of Sections 4.3-4.4; ``consistency``: the truncation bound
        and the SimPy simulation against the chain; ``by-construction``: gamma1 = gamma2 under
        balanced load (symmetry).
    """
    m = _Markov(details)
    allocs = [x for x in ALLOCATIONS if x in set(m.d.allocation)]
    scen = set(m.d.scenario)
    three = {"drf", "pf", "bmf"} <= set(allocs)
    out: list[Claim] = []
    if "balanced" in scen:
        out += _balanced(m, allocs, three)
    if "unbalanced" in scen:
        out += _unbalanced(m, details, allocs, three)
    out += _packet(details)
    out += _consistency(details, truncation_target)
    return out


def _balanced(m: _Markov, allocs: list[str], three: bool) -> list[Claim]:
    out: list[Claim] = []
    sym = ratio_quantity(
        (p for al in allocs for p in m.pairs("balanced", (al, 1), (al, 2))), "|r-1|", "max"
    )
    order = ratio_quantity(
        (p for al in allocs for p in m.pairs("balanced", (al, 3), (al, 2))), "1-r", "min"
    )
    out.append(
        _deterministic(
            exceeds,
            paper.FIG1_ORDER,
            "Fig. 1 caption",
            "γ1 = γ2 > γ3",
            order,
            unit="share",
            what="the smallest margin 1 − γ3/γ2 over allocations and loads",
        )
    )
    if three:
        gap = ratio_quantity(
            (p for k in (1, 2, 3) for p in m.pairs("balanced", ("bmf", k), ("pf", k))),
            "|r-1|",
            "max",
        )
        out.append(
            _deterministic(
                bounded,
                paper.FIG1_BMF_CLOSE_PF,
                "Section 4.3, Fig. 1(b)",
                "“BMF is very close to PF”",
                gap,
                high=paper.CLOSE_REL,
                unit="share",
                reason=(
                    "quantity: the largest relative gap |γ_BMF/γ_PF − 1| over classes and loads "
                    f"(per class: {per_class_gaps(m, 'balanced')}); rule: every class within "
                    f"{_pc(paper.CLOSE_REL)}"
                ),
            )
        )
        top = max(m.g("balanced", "drf").index)
        gain = ratio_quantity(
            (
                p
                for al in ("pf", "bmf")
                for k in (1, 2, 3)
                for p in m.pairs("balanced", (al, k), ("drf", k), [top])
            ),
            "r-1",
            "min",
        )
        every = ratio_quantity(
            (
                p
                for al in ("pf", "bmf")
                for k in (1, 2, 3)
                for p in m.pairs("balanced", (al, k), ("drf", k))
            ),
            "r-1",
            "min",
        )
        out.append(
            _deterministic(
                exceeds,
                paper.FIG1_BETTER_THAN_DRF,
                "Section 4.3, Fig. 1(a)",
                "“both are somewhat better than DRF, especially at high load”",
                gain,
                unit="share",
                what=f"the smallest relative gain γ/γ_DRF − 1 over classes at load {top:g}",
                reason=(
                    f"judged at the highest load; over all loads the smallest gain is "
                    f"{_fmt(every.value, 'share')} ({every.where})"
                ),
            )
        )
    out.append(
        by_construction(
            paper.FIG1_EQUAL,
            "Fig. 1 caption",
            "γ1 = γ2",
            sym.value,
            holds=sym.value <= 1e-6,
            seeds=0,
            reason=(
                "the model is symmetric: swapping the two resources swaps a1 = (.1, 1) and "
                "a2 = (1, .1), leaves a3 = (1, 1) and the balanced loads unchanged, so every "
                "allocation gives classes 1 and 2 the same rate (ours: the largest |γ1/γ2 − 1|; "
                "check 1e-6); deterministic (Markov chain, no seed)"
            ),
        )
    )
    return out


def _packet_order(details: pd.DataFrame) -> str:
    """How often the packet runs (Fig. 3's crosses) show gamma2 > gamma1 and gamma1 > gamma3
    with the interval over seeds above 0, per (allocation, load)."""
    pk = details[(details.method == "packet") & (details.scenario == "unbalanced")]
    if not len(pk):
        return ""
    w = pk.pivot_table(index=["allocation", "load", "seed"], columns="class", values="gamma")
    n21 = n13 = total = 0
    for _, g in w.groupby(level=[0, 1]):
        total += 1
        n21 += int(across_seeds(g[2] / g[1] - 1).bounds()[0] > 0)
        n13 += int(across_seeds(g[1] / g[3] - 1).bounds()[0] > 0)
    return (
        f"; on the packet runs (Fig. 3's crosses) the interval over seeds of γ2/γ1 − 1 lies "
        f"above 0 at {n21}/{total} (allocation, load) points and that of γ1/γ3 − 1 at "
        f"{n13}/{total} (γ1 and γ3 differ by a few per cent, within the packet runs' noise)"
    )


def _unbalanced(m: _Markov, details: pd.DataFrame, allocs: list[str], three: bool) -> list[Claim]:
    out: list[Claim] = []
    margin = ratio_quantity(
        [
            *(p for al in allocs for p in m.pairs("unbalanced", (al, 2), (al, 1))),
            *(p for al in allocs for p in m.pairs("unbalanced", (al, 1), (al, 3))),
        ],
        "r-1",
        "min",
    )
    out.append(
        _deterministic(
            exceeds,
            paper.FIG2_ORDER,
            "Figs. 2-3 captions",
            "γ2 > γ1 > γ3",
            margin,
            unit="share",
            what="the smallest of γ2/γ1 − 1 and γ1/γ3 − 1 over allocations and loads",
            reason="judged on the fluid model (the lines of Figs. 2-3)" + _packet_order(details),
        )
    )
    if not three:
        return out
    gap = ratio_quantity(
        (p for k in (1, 2, 3) for p in m.pairs("unbalanced", ("bmf", k), ("pf", k))),
        "|r-1|",
        "max",
    )
    out.append(
        _deterministic(
            bounded,
            paper.FIG2_PF_BMF_EQUIVALENT,
            "Section 4.3, Fig. 2",
            "“The service rates of PF and BMF are roughly equivalent”",
            gap,
            high=paper.CLOSE_REL,
            unit="share",
            reason=(
                "quantity: the largest relative gap |γ_BMF/γ_PF − 1| over classes and loads "
                f"(per class: {per_class_gaps(m, 'unbalanced')}); rule: every class within "
                f"{_pc(paper.CLOSE_REL)}"
            ),
        )
    )
    top = max(m.g("unbalanced", "drf").index)
    gain = ratio_quantity(
        (p for al in ("pf", "bmf") for p in m.pairs("unbalanced", (al, 2), ("drf", 2), [top])),
        "r-1",
        "min",
    )
    out.append(
        _deterministic(
            bounded,
            paper.FIG2_GAIN,
            "Section 4.3, Fig. 2",
            "“a significant gain in γ2”",
            gain,
            low=paper.GAIN_MIN,
            unit="share",
            reason=(
                f"quantity: the smaller of PF's and BMF's γ2/γ2_DRF − 1 at load {top:g}; "
                f"rule: a gain of at least {_pc(paper.GAIN_MIN)}"
            ),
        )
    )
    loss = ratio_quantity(
        (
            p
            for al in ("pf", "bmf")
            for k in (1, 3)
            for p in m.pairs("unbalanced", (al, k), ("drf", k))
        ),
        "1-r",
        "max",
    )
    out.append(
        _deterministic(
            bounded,
            paper.FIG2_NEGLIGIBLE_LOSS,
            "Section 4.3, Fig. 2",
            "“for negligible reductions in γ1 and γ3”",
            loss,
            high=paper.LOSS_MAX,
            unit="share",
            reason=(
                "quantity: the largest relative loss 1 − γ/γ_DRF of class 1 or 3 under PF or "
                f"BMF at any load (negative: a gain); rule: at most {_pc(paper.LOSS_MAX)}"
            ),
        )
    )
    return out


def per_class_gaps(m: _Markov, sc: str) -> str:
    """``class k: x % (load l)`` for each class: its largest |gamma_BMF / gamma_PF - 1|."""
    pf, bmf = m.g(sc, "pf"), m.g(sc, "bmf")
    gap = (bmf / pf - 1).abs()
    parts = []
    for k in gap.columns:
        load = float(gap[k].idxmax())  # type: ignore[arg-type]
        parts.append(
            f"class {k}: {100 * gap[k].max():.1f} % at load {load:g} "
            f"(PF {pf[k].loc[load]:.4f}, BMF {bmf[k].loc[load]:.4f})"
        )
    return "; ".join(parts)


def _join_markov(details: pd.DataFrame, method: str) -> pd.DataFrame:
    mk = details[details.method == "markov"][["scenario", "allocation", "load", "class", "gamma"]]
    other = details[details.method == method]
    return other.merge(mk, on=["scenario", "allocation", "load", "class"], suffixes=("", "_m"))


def _packet(details: pd.DataFrame) -> list[Claim]:
    pk = _join_markov(details, "packet")
    if not len(pk):
        return []
    pk = pk.assign(dev=pk.gamma / pk.gamma_m - 1)
    ests: list[tuple[str, Estimate]] = []
    inside = 0
    sd = float(pk.groupby(["allocation", "load", "class"]).dev.std(ddof=1).max())
    for (al, load, k), g in pk.groupby(["allocation", "load", "class"], sort=True):
        est = across_seeds(g.dev)
        ests.append((f"{str(al).upper()} class {k} at load {load:g}", est))
        lo, hi = est.bounds()
        inside += int(lo <= 0 <= hi)
    tol = paper.PACKET_REL
    within = [w for w, e in ests if -tol <= e.bounds()[0] and e.bounds()[1] <= tol]
    outside = [w for w, e in ests if e.bounds()[1] < -tol or e.bounds()[0] > tol]
    mean_far = [f"{w} ({_fmt(e.value, 'share')})" for w, e in ests if abs(e.value) > tol]
    where, worst = max(ests, key=lambda x: max(abs(v) for v in x[1].bounds()))
    n = worst.seeds
    med = float(np.median([abs(e.value) for _, e in ests]))
    reason = (
        "quantity: the relative deviation γ_packet/γ_fluid − 1 "
        + (f"(mean over {n} seeds, t interval)" if n > 1 else "(one seed)")
        + f" at the point whose interval reaches furthest from 0 ({where}); rule: every point's "
        f"interval within ±{_pc(tol)}; {len(within)}/{len(ests)} points are, "
        f"{len(outside)} lie entirely outside; mean beyond ±{_pc(tol)}: "
        + (", ".join(mean_far) if mean_far else "none")
        + f"; the fluid value lies inside the packet interval at {inside}/{len(ests)}; median "
        f"|mean deviation| {100 * med:.1f} %"
        + (
            f"; one point's deviation has a standard deviation of up to {100 * sd:.0f} % between "
            "seeds"
            if n > 1
            else ""
        )
        + "; our runs are shorter than the paper's (flows of mean 1,000 packets and 10,000 "
        "arrivals against 20,000 and 1e5)"
    )
    return [
        bounded(
            paper.FIG3_PACKET_CLOSE,
            "Section 4.4, Fig. 3",
            "“closely approximate the service rates of the ideal allocations”",
            worst,
            low=-tol,
            high=tol,
            unit="share",
            reason=reason,
        )
    ]


def _consistency(details: pd.DataFrame, target: float) -> list[Claim]:
    out: list[Claim] = []
    mk = details[details.method == "markov"]
    if len(mk):
        worst = float(mk.error_bound.max())
        met = int((mk.error_bound <= target).sum())
        row = mk.iloc[int(np.argmax(mk.error_bound.to_numpy()))]
        out.append(
            bounded(
                "Markov truncation error bounded: relative bound on every γ_k",
                "ours (method)",
                None,
                Estimate(worst, worst, worst, 0, "deterministic"),
                high=paper.TRUNCATION_MAX,
                unit="share",
                kind="consistency",
                reason=(
                    f"{_DETERMINISTIC}; largest at {row.scenario} {str(row.allocation).upper()} "
                    f"load {row.load:g} class {row['class']}; target {target:g} met at "
                    f"{met}/{len(mk)} class-points (levels used: "
                    f"{sorted({int(x) for x in mk.level})})"
                ),
            )
        )
    sim = _join_markov(details, "simulation")
    if not len(sim):
        return out
    sim = sim.assign(inside=(sim.gamma_m >= sim.gamma_lo) & (sim.gamma_m <= sim.gamma_hi))
    per_seed = sim.groupby("seed").inside.mean()
    n_points = int(len(sim) / max(1, len(per_seed)))
    raw = across_seeds(per_seed.to_numpy(dtype=float))
    # a share: the t interval clipped to [0, 1]
    cov = Estimate(
        raw.value,
        None if raw.low is None else max(0.0, raw.low),
        None if raw.high is None else min(1.0, raw.high),
        raw.seeds,
        raw.method,
    )
    out.append(
        bounded(
            "SimPy batch-means 95 % CIs cover the Markov service rates",
            "ours (a consistency check)",
            None,
            cov,
            low=paper.COVERAGE_MIN,
            unit="share",
            kind="consistency",
            reason=(
                f"per seed: the share of the {n_points} (scenario, allocation, load, class) "
                "points whose Markov γ lies inside the run's batch-means 95 % CI (95 % expected; "
                "batches are correlated at high load, so somewhat optimistic); per seed "
                + ", ".join(f"{100 * v:.0f} %" for v in per_seed.to_numpy())
            ),
        )
    )
    summ = seed_summary(details)
    ssim = summ[summ.method == "simulation"].merge(
        mk[["scenario", "allocation", "load", "class", "gamma"]],
        on=["scenario", "allocation", "load", "class"],
        suffixes=("", "_m"),
    )
    n_seeds = int(ssim.seeds.max()) if len(ssim) else 0
    rule = (
        f"at least {_pc(paper.COVERAGE_MIN)} of the Markov values inside the 95 % t interval "
        "over seeds of the simulated γ (95 % expected)"
    )
    statement = "Mean SimPy service rates over seeds agree with the Markov chain"
    if n_seeds < 2:
        out.append(
            judged(
                statement,
                "ours (a consistency check)",
                None,
                None,
                None,
                rule=rule,
                seeds=n_seeds,
                reason="needs two seeds or more",
                kind="consistency",
            )
        )
        return out
    ok = (ssim.gamma_m >= ssim.ci_low) & (ssim.gamma_m <= ssim.ci_high)
    rel = (ssim.gamma / ssim.gamma_m - 1).abs()
    far = ssim.iloc[int(np.argmax(rel.to_numpy()))]
    out.append(
        judged(
            statement,
            "ours (a consistency check)",
            None,
            float(ok.mean()),
            bool(ok.mean() >= paper.COVERAGE_MIN),
            rule=rule,
            seeds=n_seeds,
            kind="consistency",
            unit="share",
            reason=(
                f"{int(ok.sum())}/{len(ok)} points inside; largest |mean/Markov − 1| "
                f"{100 * rel.max():.1f} % ({far.scenario} {str(far.allocation).upper()} load "
                f"{far.load:g} class {far['class']})"
            ),
        )
    )
    return out


# --------------------------------------------------------------------------- report


def _fmt_ci(gamma: float, lo: float, hi: float) -> str:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{gamma:.4f}"
    return f"{gamma:.4f} [{lo:.4f}, {hi:.4f}]"


def _bmf_pf_table(m: _Markov, scen: list[str]) -> list[str]:
    lines = [
        "## BMF versus PF, per class (Markov)",
        "",
        "γ_k of PF and BMF and the relative gap |γ_BMF/γ_PF − 1| (the quantity of the two "
        f"closeness claims; rule: within {_pc(paper.CLOSE_REL)} for every class).",
        "",
        "| scenario | load | class 1: PF / BMF (gap) | class 2: PF / BMF (gap) | "
        "class 3: PF / BMF (gap) |",
        "|---|---|---|---|---|",
    ]
    for sc in scen:
        pf, bmf = m.g(sc, "pf"), m.g(sc, "bmf")
        for load in pf.index:
            cells = [
                f"{pf.loc[load, k]:.4f} / {bmf.loc[load, k]:.4f} "
                f"({100 * abs(bmf.loc[load, k] / pf.loc[load, k] - 1):.1f} %)"
                for k in pf.columns
            ]
            lines.append(f"| {sc} | {load:g} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def write_report(
    details: pd.DataFrame,
    claims: list[Claim],
    timing: dict[str, Any],
    path: Path,
    *,
    setup: str,
) -> Path:
    """``report.md``: ``setup`` (the run's parameters), the claims (generated from ``claims``),
    per-class BMF v PF, service rates at the highest load, figures and wall times."""
    summ = seed_summary(details)
    seeds = list(timing.get("seeds") or sorted({int(s) for s in details.seed.dropna()}))
    m = _Markov(details)
    lines = [
        "# Bonald & Roberts, Section 4: DRF vs PF vs BMF under dynamic demand",
        "",
        setup,
        "",
        "The Markov chain has no randomness: its claims show `seeds` 0 and a zero-width interval, "
        "and their reason gives the range within the truncation-error bounds. Simulated numbers "
        + (
            f"are means over {len(seeds)} seeds with the Student-t 95 % interval over seeds. "
            if len(seeds) > 1
            else "come from one seed (no interval over seeds). "
        )
        + "The paper prints no numbers for Figs. 1-3; the thresholds are ours and each claim "
        "states its rule.",
        "",
        *claims_markdown(claims),
    ]
    scen = [str(x) for x in m.d.scenario.unique()]
    if {"pf", "bmf"} <= set(m.d.allocation):
        lines += _bmf_pf_table(m, scen)
    n = max(1, len(seeds))
    lines += [
        "## Service rates at the highest load",
        "",
        "γ_k = (mean work) / (mean completion time). Markov: truncated chain (relative error "
        "bound in brackets); SimPy and packet: "
        + (
            f"mean over {n} seeds [95 % t interval over seeds]."
            if n > 1
            else "one seed [its batch-means 95 % CI]."
        )
        + " Packet rows: at the highest packet load.",
        "",
        "| scenario | allocation | load | class | Markov | SimPy | packet |",
        "|---|---|---|---|---|---|---|",
    ]
    for sc in scen:
        top = float(m.d.load.max())
        for al in [x for x in ALLOCATIONS if x in set(m.d.allocation)]:
            for k in range(1, int(m.d["class"].max()) + 1):
                mk = m.d[
                    (m.d.scenario == sc)
                    & (m.d.allocation == al)
                    & (m.d["class"] == k)
                    & (m.d.load == top)
                ]
                sel = summ[(summ.scenario == sc) & (summ.allocation == al) & (summ["class"] == k)]
                sm = sel[(sel.method == "simulation") & (sel.load == top)]
                pk_all = sel[sel.method == "packet"]
                pk = pk_all[pk_all.load == pk_all.load.max()] if len(pk_all) else pk_all
                m_txt = (
                    f"{mk.gamma.iloc[0]:.4f} (±{mk.error_bound.iloc[0]:.0e})" if len(mk) else "-"
                )
                s_txt = (
                    _fmt_ci(sm.gamma.iloc[0], sm.ci_low.iloc[0], sm.ci_high.iloc[0])
                    if len(sm)
                    else "-"
                )
                p_txt = (
                    f"{_fmt_ci(pk.gamma.iloc[0], pk.ci_low.iloc[0], pk.ci_high.iloc[0])} "
                    f"at load {pk.load.iloc[0]:g}"
                    if len(pk)
                    else "-"
                )
                lines.append(
                    f"| {sc} | {al.upper()} | {top:g} | {k} | {m_txt} | {s_txt} | {p_txt} |"
                )
    packets = timing.get("packets", 0)
    lines += [
        "",
        "## Figures",
        "",
        "- `fig1_balanced.png` (Fig. 1), `fig2_unbalanced.png` (Fig. 2): lines = Markov, markers "
        "= SimPy mean over seeds with its 95 % interval.",
        "- `fig3_packet.png` (Fig. 3): lines = fluid (Markov), crosses = packet simulation, mean "
        "over seeds with its 95 % interval.",
        "",
        "## Run",
        "",
        f"Wall time {timing.get('total_s', math.nan):.0f} s: Markov "
        f"{timing.get('markov_s', math.nan):.0f} s (once, deterministic), then {n} seed(s) in "
        f"{timing.get('seeds_wall_s', math.nan):.0f} s over the worker processes (SimPy "
        f"{timing.get('simulation_s', math.nan):.0f} s and packet "
        f"{timing.get('packet_s', math.nan):.0f} s summed over seeds; {packets:,} packets).",
    ]
    return write_text(path, "\n".join(lines) + "\n")


def write_outputs(
    details: pd.DataFrame,
    timing: dict[str, Any],
    out: Path,
    *,
    setup: str,
    truncation_target: float,
) -> Path:
    """Claims (``claims.json``), ``run.json`` (wall times), figures and ``report.md``; returns
    the report's path.

    Parameters
    ----------
    details : DataFrame
        The Markov rows and every seed's rows.
    timing : dict
        Wall times (``markov_s``, ``seeds_wall_s``, ``simulation_s``, ``packet_s``,
        ``total_s``), ``packets`` and ``seeds``.
    out : Path
        The results folder.
    setup : str
        The report's paragraph on the run's parameters.
    truncation_target : float
        The config's ``markov.tol``.
    """
    claims = build_claims(details, truncation_target=truncation_target)
    write_claims(out, claims)
    write_json({"timing": timing}, out / "run.json")
    summ = seed_summary(details)
    scen = set(details[details.method == "markov"].scenario)
    if "balanced" in scen:
        figure_fluid(summ, "balanced", out / "fig1_balanced.png")
    if "unbalanced" in scen:
        figure_fluid(summ, "unbalanced", out / "fig2_unbalanced.png")
    for sc in details[details.method == "packet"].scenario.unique()[:1]:
        figure_packet(summ, str(sc), out / "fig3_packet.png")
    path = write_report(details, claims, timing, out / "report.md", setup=setup)
    c = counts(claims)
    log.info("bonald-roberts: %d of %d paper statements PASS", c["PASS"], c["all"])
    return path
