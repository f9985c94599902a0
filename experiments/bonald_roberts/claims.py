"""The Bonald-Roberts reproduction's claims (Section 4, Figs. 1-3): one per statement of
:data:`fairsim.experiments.bonald_roberts.paper.STATEMENTS`.

The statements of Section 4.3 are judged on the Markov chain: their claims have ``seeds = 0`` and
a zero-width interval, and their reason gives the range of the quantity within the chain's
truncation-error bounds and whether the verdict is the same at both ends of it
(:mod:`fairsim.experiments.bonald_roberts.numbers`). The packet-level statement and the checks of
the SimPy simulation against the chain are random: means over seeds with their Student-t 95 %
interval.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from fairsim.experiments import kit
from fairsim.experiments.bonald_roberts import paper
from fairsim.experiments.bonald_roberts.numbers import (
    Markov,
    join_markov,
    per_class_gaps,
    seed_summary,
)
from fairsim.experiments.claims import (
    Claim,
    Estimate,
    Ranged,
    across_seeds,
    bounded,
    by_construction,
    consistency,
    deterministic,
    every_setting,
    exceeds,
    seeds_needed,
)
from fairsim.schedulers.flows.markov_chain import ALLOCATIONS

_ST = paper.BY_KEY
_DETERMINISTIC = "deterministic (truncated Markov chain, no seed): zero-width interval"
_BOUNDS = "truncation-error bounds"


def _shorter(packet_run: tuple[float, int]) -> str:
    """Our packet runs (mean packets per flow, flow arrivals per point) against the paper's
    (Section 4.4)."""
    packets, flows = packet_run
    return paper.TEXT["text.shorter"].format(packets=packets, flows=flows)


def _noted(claim: Claim, note: str) -> list[Claim]:
    """``claim`` alone, with ``note`` after its reason (``"; "`` between)."""
    return [claim.model_copy(update={"reason": f"{claim.reason}; {note}"})]


def _markov(rule: Callable[..., Claim], key: str, quote: str, q: Ranged, **kw: Any) -> Claim:
    """Statement ``key`` (a share) judged by ``rule`` on a Markov quantity within its bounds."""
    return deterministic(
        rule, *_ST[key].where(), quote, q, how=_DETERMINISTIC, bounds=_BOUNDS, unit="share", **kw
    )


def _threshold(key: str, quote: str, q: Ranged, quantity: str, rule: str, **kw: float) -> Claim:
    """Statement ``key``: the Markov ``quantity`` within ``low``/``high`` (``rule`` in words)."""
    return _markov(bounded, key, quote, q, reason=f"quantity: {quantity}; rule: {rule}", **kw)


def _pc(v: float) -> str:
    return kit.number(v, "share", "g")


def _fmt(v: float) -> str:
    return kit.number(v, "share", ".2f")


def build_claims(
    details: pd.DataFrame, *, packet_run: tuple[float, int], truncation_target: float = 2e-3
) -> list[Claim]:
    """Every claim of the reproduction, in report order.

    Parameters
    ----------
    details : DataFrame
        The Markov rows and every seed's simulation and packet rows
        (:func:`fairsim.experiments.bonald_roberts.experiment.markov_points` and
        :func:`~fairsim.experiments.bonald_roberts.experiment.seed_points` of every seed).
    packet_run : (float, int)
        The packet runs' mean packets per flow and flow arrivals per point (the config's
        ``packet.mean_packets`` and ``packet.flows``), named in the packet claims' reasons.
    truncation_target : float
        The config's ``markov.tol``, reported beside the truncation check.

    Returns
    -------
    list of Claim
        Kind ``paper``: the statements of Sections 4.3-4.4; ``consistency``: the truncation bound
        and the SimPy simulation against the chain; ``by-construction``: gamma1 = gamma2 under
        balanced load (symmetry).
    """
    m = Markov(details)
    allocs = [x for x in ALLOCATIONS if x in set(m.d.allocation)]
    scen = set(m.d.scenario)
    three = {"drf", "pf", "bmf"} <= set(allocs)
    out: list[Claim] = []
    if "balanced" in scen:
        out += _balanced(m, allocs, three)
    if "unbalanced" in scen:
        out += _unbalanced(m, details, allocs, three)
    if three and {"balanced", "unbalanced"} <= scen:
        out.append(_accentuated(m))
    out += _packet(details, _shorter(packet_run))
    out += _packet_order_claim(details, _shorter(packet_run))
    out += _packet_pf_bmf(details)
    out += _consistency(details, truncation_target)
    return out


def _balanced(m: Markov, allocs: list[str], three: bool) -> list[Claim]:
    bal = partial(m.ratio, "balanced")
    sym = bal([((al, 1), (al, 2)) for al in allocs], "|r-1|", "max")
    out = [
        _markov(
            exceeds,
            "fig1_order",
            "γ1 = γ2 > γ3",
            bal([((al, 3), (al, 2)) for al in allocs], "1-r", "min"),
            what="the smallest margin 1 − γ3/γ2 over allocations and loads",
        )
    ]
    if three:
        top = max(m.g("balanced", "drf").index)
        every = bal(_FROM_DRF, "r-1", "min")
        out += [
            _threshold(
                "fig1_similar",
                "“performance is similar for all three allocations”",
                bal(_ALL_PAIRS, "|r-1|", "max"),
                paper.TEXT["text.fig1_similar.quantity"],
                paper.TEXT["text.fig1_similar"].format(
                    similar=_pc(paper.SIMILAR_REL), close=_pc(paper.CLOSE_REL)
                ),
                high=paper.SIMILAR_REL,
            ),
            _close_to_pf(m, "balanced", "fig1_bmf_close_pf", "“BMF is very close to PF”"),
            _markov(
                exceeds,
                "fig1_better_than_drf",
                "“both are somewhat better than DRF, especially at high load”",
                bal(_FROM_DRF, "r-1", "min", [top]),
                what=f"the smallest relative gain γ/γ_DRF − 1 over classes at load {top:g}",
                reason=paper.TEXT["text.at_top"].format(gain=_fmt(every.value), at=every.where),
            ),
        ]
    out.append(
        by_construction(
            *_ST["fig1_equal"].where(),
            "γ1 = γ2",
            sym.value,
            holds=sym.value <= 1e-6,
            seeds=0,
            reason=paper.TEXT["text.fig1_equal"],
        )
    )
    return out


def _close_to_pf(m: Markov, scenario: str, key: str, quote: str) -> Claim:
    """Statement ``key``: BMF's rates within :data:`~fairsim.experiments.bonald_roberts.paper.
    CLOSE_REL` of PF's, every class and load of ``scenario`` (Markov)."""
    return _threshold(
        key,
        quote,
        m.ratio(scenario, [(("bmf", k), ("pf", k)) for k in (1, 2, 3)], "|r-1|", "max"),
        paper.TEXT["text.close_to_pf"].format(per_class=per_class_gaps(m, scenario)),
        f"every class within {_pc(paper.CLOSE_REL)}",
        high=paper.CLOSE_REL,
    )


#: Every pair of allocations and class, for "similar for all three allocations".
_ALL_PAIRS = [
    ((a, k), (b, k)) for a, b in (("pf", "drf"), ("bmf", "drf"), ("bmf", "pf")) for k in (1, 2, 3)
]
#: PF and BMF against DRF, every class: "the difference in performance".
_FROM_DRF = [((al, k), ("drf", k)) for al in ("pf", "bmf") for k in (1, 2, 3)]


def _accentuated(m: Markov) -> Claim:
    """Section 4.3: the difference between the allocations is larger under unbalanced load: the
    largest relative gap of PF and BMF from DRF (any class and load), unbalanced minus
    balanced, with its range over both chains' truncation bounds."""
    unb = m.ratio("unbalanced", _FROM_DRF, "|r-1|", "max")
    bal = m.ratio("balanced", _FROM_DRF, "|r-1|", "max")
    diff = Ranged(
        unb.value - bal.value,
        unb.low - bal.high,
        unb.high - bal.low,
        f"unbalanced {_fmt(unb.value)} ({unb.where}), balanced {_fmt(bal.value)} ({bal.where})",
    )
    return _markov(
        exceeds,
        "fig2_accentuated",
        "“accentuated under unbalanced load”",
        diff,
        what=paper.TEXT["text.fig2_accentuated.what"],
    )


def _unbalanced(m: Markov, details: pd.DataFrame, allocs: list[str], three: bool) -> list[Claim]:
    unb = partial(m.ratio, "unbalanced")
    order = [*(((al, 2), (al, 1)) for al in allocs), *(((al, 1), (al, 3)) for al in allocs)]
    out = [
        _markov(
            exceeds,
            "fig2_order",
            "γ2 > γ1 > γ3",
            unb(order, "r-1", "min"),
            what="the smallest of γ2/γ1 − 1 and γ1/γ3 − 1 over allocations and loads",
            reason="judged on the fluid model (the lines of Figs. 2-3)" + _packet_order(details),
        )
    ]
    if not three:
        return out
    quote = "“The service rates of PF and BMF are roughly equivalent”"
    top = max(m.g("unbalanced", "drf").index)
    loss = [((al, k), ("drf", k)) for al in ("pf", "bmf") for k in (1, 3)]
    return [
        *out,
        _close_to_pf(m, "unbalanced", "fig2_pf_bmf_equivalent", quote),
        _threshold(
            "fig2_gain",
            "“a significant gain in γ2”",
            unb([((al, 2), ("drf", 2)) for al in ("pf", "bmf")], "r-1", "min", [top]),
            f"the smaller of PF's and BMF's γ2/γ2_DRF − 1 at load {top:g}",
            f"a gain of at least {_pc(paper.GAIN_MIN)}",
            low=paper.GAIN_MIN,
        ),
        _threshold(
            "fig2_negligible_loss",
            "“for negligible reductions in γ1 and γ3”",
            unb(loss, "1-r", "max"),
            paper.TEXT["text.fig2_negligible_loss"],
            f"at most {_pc(paper.LOSS_MAX)}",
            high=paper.LOSS_MAX,
        ),
    ]


def _packet_margins(details: pd.DataFrame) -> list[tuple[str, pd.Series, pd.Series]]:
    """Per (algorithm, load) of the unbalanced packet runs, in order: its label and the per-seed
    γ2/γ1 − 1 and γ1/γ3 − 1."""
    w = _packet_wide(details)
    return [
        (
            f"{paper.PACKET_ALGORITHM.get(str(al), str(al)).upper()} at load {load:g}",
            g[2] / g[1] - 1,
            g[1] / g[3] - 1,
        )
        for (al, load), g in w.groupby(level=[0, 1])
    ]


def _packet_wide(details: pd.DataFrame) -> pd.DataFrame:
    """The unbalanced packet runs' γ, index (allocation, load, seed), columns class."""
    pk = details[(details.method == "packet") & (details.scenario == "unbalanced")]
    return pk.pivot_table(index=["allocation", "load", "seed"], columns="class", values="gamma")


def _packet_order(details: pd.DataFrame) -> str:
    """How often the packet runs (Fig. 3's crosses) show gamma2 > gamma1 and gamma1 > gamma3
    with the interval over seeds above 0, per (allocation, load)."""
    points = _packet_margins(details)
    if not points:
        return ""
    n21 = sum(across_seeds(r21).bounds()[0] > 0 for _, r21, _ in points)
    n13 = sum(across_seeds(r13).bounds()[0] > 0 for _, _, r13 in points)
    total = len(points)
    return paper.TEXT["text.packet_order"].format(n21=n21, n13=n13, total=total)


def _packet_order_claim(details: pd.DataFrame, shorter: str) -> list[Claim]:
    """Fig. 3's caption on its crosses: γ2 > γ1 > γ3 in the packet runs, every algorithm and
    load, each point's margin min(γ2/γ1 − 1, γ1/γ3 − 1) across seeds; the worst point."""
    points = _packet_margins(details)
    if not points:
        return []
    statement, source = _ST["fig3_packet_order"].where()
    what = "the smaller of γ2/γ1 − 1 and γ1/γ3 − 1 (packet runs, mean over seeds)"
    order = partial(exceeds, statement, source, "γ2 > γ1 > γ3", unit="share", what=what)
    parts = [(at, order(across_seeds(np.minimum(r21, r13)))) for at, r21, r13 in points]
    claim = every_setting(statement, parts, target=(1.0, 1.0), what="(algorithm, load) points")
    return _noted(claim, paper.TEXT["text.packet_order_claim"].format(shorter=shorter))


def _packet_pf_bmf(details: pd.DataFrame) -> list[Claim]:
    """Section 4.4's "similarity of the results for PF and BMF" in the packet runs: per class
    and load, γ_BMF-SFQ/γ_PF-SFQ − 1 across seeds within ±:data:`~fairsim.experiments.
    bonald_roberts.paper.CLOSE_REL` (the rule of Fig. 2's "roughly equivalent"); the worst."""
    w = _packet_wide(details)
    als = set(w.index.get_level_values(0)) if len(w) else set()
    if not {"pf", "bmf"} <= als:
        return []
    statement, source = _ST["fig3_packet_pf_bmf"].where()
    tol = paper.CLOSE_REL
    similar = partial(bounded, statement, source, "similar", low=-tol, high=tol, unit="share")
    parts = []
    for load in sorted(set(w.index.get_level_values(1))):
        pf, bmf = w.loc[("pf", load)], w.loc[("bmf", load)]
        seeds = sorted(set(pf.index) & set(bmf.index))
        for k in (1, 2, 3):
            rel = bmf.loc[seeds, k] / pf.loc[seeds, k] - 1
            parts.append((f"class {k} at load {load:g}", similar(across_seeds(rel))))
    claim = every_setting(statement, parts, target=(0.0, 0.0), what="(class, load) points")
    return _noted(claim, paper.TEXT["text.packet_pf_bmf"].format(tol=_pc(tol)))


def _packet(details: pd.DataFrame, shorter: str) -> list[Claim]:
    pk = join_markov(details, "packet")
    if not len(pk):
        return []
    pk = pk.assign(dev=pk.gamma / pk.gamma_m - 1)
    points = pk.groupby(["allocation", "load", "class"], sort=True).dev
    sd = float(points.std(ddof=1).max())
    ests = [
        (f"{str(al).upper()} class {k} at load {load:g}", across_seeds(g))
        for (al, load, k), g in points
    ]
    inside = sum(lo <= 0 <= hi for lo, hi in (e.bounds() for _, e in ests))
    tol = paper.PACKET_REL
    within = [w for w, e in ests if -tol <= e.bounds()[0] and e.bounds()[1] <= tol]
    outside = [w for w, e in ests if e.bounds()[1] < -tol or e.bounds()[0] > tol]
    mean_far = [f"{w} ({_fmt(e.value)})" for w, e in ests if abs(e.value) > tol]
    where, worst = max(ests, key=lambda x: max(abs(v) for v in x[1].bounds()))
    n = worst.seeds
    med = float(np.median([abs(e.value) for _, e in ests]))
    reason = paper.TEXT["text.packet_close"].format(
        over=paper.TEXT["text.packet_close.seeds"].format(n=n) if n > 1 else "(one seed)",
        where=where,
        tol=_pc(tol),
        within=len(within),
        points=len(ests),
        outside=len(outside),
        far=", ".join(mean_far) if mean_far else "none",
        inside=inside,
        med=100 * med,
        sd=paper.TEXT["text.packet_close.sd"].format(sd=100 * sd) if n > 1 else "",
        shorter=shorter,
    )
    # every point judged by the same rule: FAIL if one lies entirely outside ±tol, INCONCLUSIVE
    # if none does but one straddles it (our runs are short: noise, not a difference)
    quote = "“closely approximate the service rates of the ideal allocations”"
    st = _ST["fig3_packet_close"]
    close = partial(bounded, *st.where(), quote, low=-tol, high=tol, unit="share")
    parts = [(w, close(e)) for w, e in ests]
    fails = [(w, c) for w, c in parts if c.verdict == "FAIL"]
    open_ = [(w, c) for w, c in parts if c.verdict == "INCONCLUSIVE"]
    if fails:
        at, claim = max(fails, key=lambda x: min(abs(x[1].ci_low or 0), abs(x[1].ci_high or 0)))
        head = "FAIL"
    elif open_:
        at, claim = max(open_, key=lambda x: seeds_needed(x[1]))
        head = claim.reason.split(";")[0]
    else:
        return [close(worst, reason=reason)]
    return [claim.model_copy(update={"reason": f"{head}, judged at {at}; {reason}"})]


def _consistency(details: pd.DataFrame, target: float) -> list[Claim]:
    out: list[Claim] = []
    mk = details[details.method == "markov"]
    if len(mk):
        worst = float(mk.error_bound.max())
        met = int((mk.error_bound <= target).sum())
        row = mk.iloc[int(np.argmax(mk.error_bound.to_numpy()))]
        out.append(
            bounded(
                *_ST["truncation"].where(),
                None,
                Estimate.exact(worst),
                high=paper.TRUNCATION_MAX,
                unit="share",
                kind="consistency",
                reason=paper.TEXT["text.truncation"].format(
                    how=_DETERMINISTIC,
                    row=row,
                    allocation=str(row.allocation).upper(),
                    target=target,
                    met=met,
                    points=len(mk),
                    levels=sorted({int(x) for x in mk.level}),
                ),
            )
        )
    sim = join_markov(details, "simulation")
    if not len(sim):
        return out
    sim = sim.assign(inside=(sim.gamma_m >= sim.gamma_lo) & (sim.gamma_m <= sim.gamma_hi))
    per_seed = sim.groupby("seed").inside.mean()
    n_points = int(len(sim) / max(1, len(per_seed)))
    raw = across_seeds(per_seed.to_numpy(dtype=float))
    # a share: the t interval clipped to [0, 1]
    lo, hi = raw.low, raw.high
    lo, hi = None if lo is None else max(0.0, lo), None if hi is None else min(1.0, hi)
    cov = replace(raw, low=lo, high=hi, sd=None)
    out.append(
        bounded(
            *_ST["coverage"].where(),
            None,
            cov,
            low=paper.COVERAGE_MIN,
            unit="share",
            kind="consistency",
            reason=paper.TEXT["text.coverage"].format(
                points=n_points, shares=", ".join(f"{100 * v:.0f} %" for v in per_seed.to_numpy())
            ),
        )
    )
    ssim = join_markov(seed_summary(details), "simulation")
    n_seeds = int(ssim.seeds.max()) if len(ssim) else 0
    ok = (ssim.gamma_m >= ssim.ci_low) & (ssim.gamma_m <= ssim.ci_high)
    rel = (ssim.gamma / ssim.gamma_m - 1).abs()
    many = n_seeds >= 2
    if many:
        far = ssim.iloc[int(np.argmax(rel.to_numpy()))]
        why = (
            f"{int(ok.sum())}/{len(ok)} points inside; largest |mean/Markov − 1| "
            f"{100 * rel.max():.1f} % ({far.scenario} {str(far.allocation).upper()} load "
            f"{far.load:g} class {far['class']})"
        )
    out.append(
        consistency(
            *_ST["seed_means"].where(),
            float(ok.mean()) if many else None,
            bool(ok.mean() >= paper.COVERAGE_MIN) if many else None,
            rule=paper.TEXT["text.seed_means.rule"].format(least=_pc(paper.COVERAGE_MIN)),
            seeds=n_seeds,
            unit="share" if many else "",
            reason=why if many else "needs two seeds or more",
        )
    )
    return out
