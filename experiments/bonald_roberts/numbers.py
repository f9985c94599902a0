"""The numbers of the Bonald-Roberts reproduction (Section 4, Figs. 1-3): the per-point summary
over seeds, and the quantities of the claims computed from the Markov chain with their range within
its truncation-error bounds.

Which numbers carry which uncertainty
-------------------------------------
* The statements of Section 4.3 (Figs. 1-2) are judged on the Markov chain, which has no
  randomness: its quantities (:func:`ratio_quantity`) have no interval over seeds, but a range
  within the chain's truncation-error bounds (:class:`~fairsim.experiments.claims.Ranged`).
* The packet-level statement (Section 4.4, Fig. 3) and the checks of the SimPy simulation against
  the chain are random: one value per seed, the mean over seeds and its Student-t 95 % interval
  (:func:`fairsim.experiments.claims.across_seeds`, :func:`seed_summary`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

import numpy as np
import pandas as pd

from fairsim.experiments.claims import Ranged, across_seeds

#: How a ratio ``r = gamma_a / gamma_b`` of two Markov rates becomes the claim's quantity.
Form = Literal["r-1", "1-r", "|r-1|"]

#: Key of one point (one curve value of one figure).
POINT = ("scenario", "allocation", "method", "load", "class")


def curve(
    summary: pd.DataFrame, sc: str, alloc: str, method: str = "markov", values: str = "gamma"
) -> pd.DataFrame:
    """``values`` per (load, class) of one curve as a wide table (index load, columns class)."""
    sel = summary[
        (summary.scenario == sc) & (summary.allocation == alloc) & (summary.method == method)
    ]
    return sel.pivot_table(index="load", columns="class", values=values)


def seed_summary(details: pd.DataFrame) -> pd.DataFrame:
    """Per point: the mean of ``gamma`` over seeds and its 95 % interval.

    Parameters
    ----------
    details : DataFrame
        The Markov rows and every seed's rows
        (:func:`fairsim.experiments.bonald_roberts.experiment.run_experiment`).

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
        if key[POINT.index("method")] == "markov":
            rows.append((*key, float(g.gamma.iloc[0]), np.nan, np.nan, 0))
        elif len(g) == 1:
            r = g.iloc[0]
            rows.append((*key, r.gamma, r.gamma_lo, r.gamma_hi, 1))
        else:
            est = across_seeds(g.gamma)
            rows.append((*key, est.value, *est.bounds(), est.seeds))
    out = pd.DataFrame(rows, columns=[*POINT, "gamma", "ci_low", "ci_high", "seeds"])
    out["class"] = out["class"].astype("int64")
    out["seeds"] = out["seeds"].astype("int64")
    return out


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
    return Ranged(best[0], pick(x[1] for x in vals), pick(x[2] for x in vals), best[3])


class Markov:
    """The Markov rows as wide tables: ``gamma`` and ``error_bound`` per (load, class).

    Parameters
    ----------
    details : DataFrame
        The reproduction's rows (only ``method == "markov"`` are kept, as ``d``).
    """

    def __init__(self, details: pd.DataFrame) -> None:
        self.d = details[details.method == "markov"]

    def g(self, sc: str, al: str) -> pd.DataFrame:
        """``gamma`` of scenario ``sc`` and allocation ``al``, index load, columns class."""
        return curve(self.d, sc, al)

    def e(self, sc: str, al: str) -> pd.DataFrame:
        """The relative truncation-error bound of each ``gamma`` of :meth:`g`."""
        return curve(self.d, sc, al, values="error_bound")

    def ratio(
        self,
        sc: str,
        pairs: Iterable[tuple[tuple[str, int], tuple[str, int]]],
        form: Form,
        agg: Literal["min", "max"],
        loads: Iterable[float] | None = None,
    ) -> Ranged:
        """:func:`ratio_quantity` over the points (every load, or ``loads``) of every
        (allocation, class) pair ``(a, b)`` of scenario ``sc``, in order: ``gamma_a / gamma_b``."""
        points = []
        for a, b in pairs:
            ga, ea = self.g(sc, a[0])[a[1]], self.e(sc, a[0])[a[1]]
            gb, eb = self.g(sc, b[0])[b[1]], self.e(sc, b[0])[b[1]]
            where = f"{a[0].upper()} class {a[1]} / {b[0].upper()} class {b[1]}"
            points += [
                (f"{where} at load {x:g}", float(ga[x]), float(ea[x]), float(gb[x]), float(eb[x]))
                for x in (ga.index if loads is None else loads)
            ]
        return ratio_quantity(points, form, agg)


def per_class_gaps(m: Markov, sc: str) -> str:
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


def join_markov(details: pd.DataFrame, method: str) -> pd.DataFrame:
    """The rows of ``method`` with the Markov ``gamma`` of their point beside, as ``gamma_m``."""
    mk = details[details.method == "markov"][["scenario", "allocation", "load", "class", "gamma"]]
    other = details[details.method == method]
    return other.merge(mk, on=["scenario", "allocation", "load", "class"], suffixes=("", "_m"))
