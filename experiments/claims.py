"""One claim model for every paper reproduction: a statement, our estimate with its 95 % interval,
the rule that decides the verdict, and the claim's kind.

Every reproduction (:mod:`fairsim.experiments.reproductions`) builds a list of :class:`Claim`
records from its ``paper.py``'s :class:`Statement` records (read from its ``statements.md`` by
:func:`load_statements`), writes them to ``claims.json`` beside ``report.md``
(:func:`write_claims`) and generates the report's table of statements from that list
(:func:`claims_markdown`). The estimates (:func:`across_seeds`, :func:`bootstrap_units`,
:func:`spearman_trend`), the rules (:func:`agrees`, :func:`agrees_range`, :func:`exceeds`,
:func:`bounded`, :func:`trend`, :func:`every_setting`, :func:`one_reading`, :func:`deterministic`,
:func:`judged`, :func:`consistency`, :func:`identical`, :func:`by_construction`,
:func:`not_applicable`) and the kinds
(``paper``, ``consistency``, ``by-construction``) are described once, with what makes each PASS, in
``docs/claims.md``. Every rule has three outcomes (:class:`Region`): PASS when the 95 % interval
lies within the rule's region, FAIL when it lies entirely outside, INCONCLUSIVE when it straddles an
end, with the seeds it would take to decide (:func:`seeds_to_decide`). A number the paper prints is
a :class:`Printed`; its tolerance is its printed precision plus the reproduction's model tolerance
(:func:`tolerance`). With one seed (``--seeds 1``) there is no interval across seeds: the verdict
uses the point estimate and the reason says so.
"""

from __future__ import annotations

import bisect
import itertools
import json
import logging
import math
import os
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from fairsim.atomic import json_text, write_text
from fairsim.errors import ConfigError
from fairsim.experiments.kit import UNITS, Spec, Template, interval, number
from fairsim.scenario.reporting.markdown import table

log = logging.getLogger(__name__)

Kind = Literal["paper", "consistency", "by-construction"]
Verdict = Literal["PASS", "FAIL", "INCONCLUSIVE", "n/a"]

#: The verdicts, in the order counts and headlines list them.
VERDICTS: tuple[str, ...] = ("PASS", "FAIL", "INCONCLUSIVE", "n/a")

#: The kinds, in the order the report lists them.
KINDS: tuple[str, ...] = ("paper", "consistency", "by-construction")
#: Confidence level of every interval.
LEVEL = 0.95
#: Slack of every comparison with a boundary, for floating-point noise (not a tolerance).
EPS = 1e-12
#: Bootstrap resamples (percentile method).
N_RESAMPLES = 2000
#: The prose of the report's section of claims (:func:`claims_markdown`): the Markdown blocks of
#: ``claims_template.md`` beside this module.
_TEXT = Template(Path(__file__).with_name("claims_template.md"))


class Printed(float):
    """A number as the paper prints it: a ``float`` (the value, in the claim's unit) that keeps
    the printed digits, so its printed precision is known.

    ``Printed("26.3", percent=True)`` is 0.263 (the paper's "26.3 %" as a fraction) with
    :attr:`precision` 0.0005 (half a unit of the last printed digit: ±0.05 pp);
    ``Printed("2", percent=True)`` is 0.02 with precision 0.005 (±0.5 pp);
    ``Printed("82.5")`` is 82.5 with precision 0.05. The value is the correctly rounded float of
    the printed decimal (``Printed("35.1", percent=True) == 0.351``), so it is used wherever the
    plain number was.

    Parameters
    ----------
    text : str
        The digits as printed, without the unit ("35.1", "2", "58.33").
    percent : bool
        The paper prints a percentage of a fraction we store in [0, 1] (value and precision are
        divided by 100).
    """

    text: str
    percent: bool

    def __new__(cls, text: str, percent: bool = False) -> Printed:
        from decimal import Decimal

        d = Decimal(text.strip())
        self = super().__new__(cls, float(d / 100 if percent else d))
        self.text = text.strip()
        self.percent = percent
        return self

    def __getnewargs__(self) -> tuple[str, bool]:  # type: ignore[override]
        return (self.text, self.percent)

    @property
    def precision(self) -> float:
        """Half a unit of the last printed digit, in the value's unit (for a
        :func:`printed_sum`, the sum of its terms')."""
        summed = self.__dict__.get("_precision")
        if summed is not None:
            return float(summed)
        half = 0.5 * 10.0 ** -len(self.text.partition(".")[2])  # digits after the point
        return half / 100 if self.percent else half

    @property
    def shown(self) -> str:
        """The value as printed ("26.3 %", "82.5")."""
        return f"{self.text} %" if self.percent else self.text


def printed_sum(*terms: Printed) -> Printed:
    """The sum of printed values (a table's cells added) as one :class:`Printed` whose
    :attr:`~Printed.precision` is the sum of the precisions of its non-zero terms: the largest
    rounding error the printed sum can carry (``40`` + ``170`` → 210 ± 1.0). A printed 0 is taken
    as exact: a table that prints "58.33" and "8.05" prints a user's share of a class as such, and
    its 0 cells are the classes the user gets nothing of (``58.33`` + three ``0`` → ± 0.005).

    Raises
    ------
    ValueError
        For no terms, or terms mixing percentages and plain numbers.
    """
    from decimal import Decimal

    if not terms or len({t.percent for t in terms}) != 1:
        raise ValueError("printed_sum: give one or more terms of the same kind")
    total = sum((Decimal(t.text) for t in terms), Decimal(0))
    out = Printed(str(total), terms[0].percent)
    out._precision = sum(t.precision for t in terms if float(t) != 0.0)  # type: ignore[attr-defined]
    return out


@dataclass(frozen=True)
class Statement:
    """One statement of a paper that its reproduction checks: what every ``paper.py`` lists.

    Attributes
    ----------
    key : str
        Its short name, unique within the paper (the claims built from it are found by it).
    text : str
        The statement in our words, close to the paper's: the claim's ``statement``. It may hold
        ``str.format`` fields (``{slots}``) that the claim fills, for a statement the paper makes
        once per setting.
    source : str
        Where the paper makes it (section, figure or table): the claim's ``source``.
    quote : str
        The paper's words (empty when the paper states it in a figure only).
    """

    key: str
    text: str
    source: str
    quote: str = ""

    def format(self, **fields: Any) -> str:
        """:attr:`text` with its fields filled."""
        return self.text.format(**fields)

    def where(self, **fields: Any) -> tuple[str, str]:
        """The claim's ``statement`` (:meth:`format`; :attr:`text` as it is without fields) and
        ``source``: the first two arguments of every rule."""
        return (self.format(**fields) if fields else self.text), self.source


def load_statements(path: str | os.PathLike[str]) -> tuple[Statement, ...]:
    """The statements a reproduction checks, read from its ``statements.md``.

    The file holds a paper's :class:`Statement` records in the report's order, in the blocks of
    a :class:`~fairsim.experiments.kit.Template`: a line ``<!-- key -->`` starts the statement
    ``key``, and its next lines are, one line each, the statement's text (its ``{fields}`` kept
    as they are), where the paper makes it, and the paper's words (a block of two lines: no
    quote). Text before the first block is a comment; a block whose name starts with ``text.``
    is prose the paper's modules read themselves (:attr:`Template.blocks
    <fairsim.experiments.kit.Template.blocks>`), not a statement.

    Parameters
    ----------
    path : path-like
        The ``statements.md`` file.

    Returns
    -------
    tuple of Statement
        In the file's order.

    Raises
    ------
    fairsim.errors.ConfigError
        One line naming the file and the block: a block that is not two or three non-empty
        lines, a key given twice, or a file without statements.
    OSError
        When the file cannot be read.
    """
    template = Template(path)
    for key, n in Counter(template.names).items():
        if n > 1:
            raise ConfigError(f"{path}: block {key}: the key is given {n} times")
    out = []
    for key, body in template.blocks.items():
        if key.startswith("text."):
            continue
        lines = body.split("\n")
        if not 2 <= len(lines) <= 3 or not all(x.strip() for x in lines):
            raise ConfigError(
                f"{path}: block {key}: expected 2 or 3 non-empty lines (text, source, quote), "
                f"got {len(lines)} lines"
            )
        out.append(Statement(key, *lines))
    if not out:
        raise ConfigError(f"{path}: no statements (a line '<!-- key -->' starts each)")
    return tuple(out)


class Claim(BaseModel):
    """One statement checked by a reproduction: the ``claims.json`` record.

    Attributes
    ----------
    statement : str
        The statement, in words.
    source : str
        Where the paper makes it (section, figure or table).
    id : str
        Stable and unique in its ``claims.json``: the :class:`Statement`'s key, then the values
        of its fields (``table2.slots-10.resource-cpu``); set by :func:`identify` (empty until
        then).
    quote : str
        The paper's words the claim checks (:attr:`Statement.quote`), or the table row it checks
        as printed, after the table's caption and header (a claim on a table cell); empty when
        the paper states it in a figure only, and for our own checks.
    paper : float, str or None
        The paper's value: a number (in ``unit``) or text.
    ours : float, str or None
        Our estimate: a number (in ``unit``, the mean over seeds or the statistic on all units)
        or text.
    ci_low, ci_high : float or None
        The 95 % interval of ``ours`` (``None`` when ``ours`` is not numeric, or for one seed).
    seeds : int
        The number of seeds ``ours`` comes from.
    rule : str
        How the verdict is decided.
    verdict : {"PASS", "FAIL", "INCONCLUSIVE", "n/a"}
        The verdict (``docs/claims.md``): PASS when the interval lies within the rule's region,
        FAIL when it lies entirely outside it, INCONCLUSIVE when it straddles the region's
        boundary, ``n/a`` when it cannot be decided (``reason`` says why).
    seeds_to_decide : int, "undecidable" or None
        For an INCONCLUSIVE verdict, the number of seeds at which the interval would be narrower
        than the distance from the estimate to the boundary it straddles
        (:func:`seeds_to_decide`); ``"undecidable"`` when the estimate lies on the boundary;
        ``None`` for the other verdicts.
    reason : str
        Why ``n/a``, and for every difference what we know of its cause.
    kind : {"paper", "consistency", "by-construction"}
        ``paper``: the paper states it; ``consistency``: our own internal check;
        ``by-construction``: holds because of how the experiment is built, because a theorem
        guarantees it, or because the model was calibrated on it.
    unit : str
        How numbers are shown: ``"share"`` (a fraction, printed in per cent), ``"pp"`` (a
        difference of fractions, printed in percentage points), ``"s"`` (seconds), ``""`` (as
        is). Not part of the verdict.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    statement: str
    source: str
    id: str = ""
    quote: str = ""
    paper: float | str | None
    ours: float | str | None
    ci_low: float | None = None
    ci_high: float | None = None
    seeds: int
    rule: str
    verdict: Verdict
    seeds_to_decide: int | Literal["undecidable"] | None = None
    reason: str = ""
    kind: Kind = "paper"
    unit: str = ""


# --------------------------------------------------------------------------- estimates


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its 95 % interval.

    Attributes
    ----------
    value : float
        The estimate (NaN when there was nothing to estimate from).
    low, high : float or None
        The interval; ``None`` when there is none (one seed, or too few units).
    seeds : int
        The number of seeds behind the estimate.
    method : str
        How the interval was obtained, for the report.
    sd : float or None
        The standard deviation of the per-seed values (:func:`across_seeds`), from which
        :func:`seeds_to_decide` computes the seeds an INCONCLUSIVE verdict needs; ``None`` for
        other intervals (bootstrap), where it is estimated from the interval's width.
    """

    value: float
    low: float | None
    high: float | None
    seeds: int
    method: str
    sd: float | None = None

    @property
    def finite(self) -> bool:
        """Whether the point estimate is a finite number."""
        return math.isfinite(self.value)

    def bounds(self) -> tuple[float, float]:
        """The interval, or the point estimate twice when there is none."""
        if self.low is None or self.high is None:
            return self.value, self.value
        return self.low, self.high

    @classmethod
    def exact(cls, value: float, seeds: int = 0, method: str = "deterministic") -> Estimate:
        """A number known exactly (a deterministic computation): a zero-width interval."""
        return cls(value, value, value, seeds, method)


@dataclass(frozen=True)
class Ranged:
    """A deterministic quantity (no seeds) known within error bounds, such as a quantity of a
    truncated Markov chain within its truncation-error bounds: what :func:`deterministic`
    judges.

    Attributes
    ----------
    value : float
        The quantity (for a minimum or maximum over points, the extreme one).
    low, high : float
        Its smallest and largest value within the error bounds.
    where : str
        The point that gives ``value``, for the reason.
    """

    value: float
    low: float
    high: float
    where: str


def across_seeds(values: Iterable[float]) -> Estimate:
    """The mean of a run-level quantity over seeds and its Student-t 95 % interval.

    Parameters
    ----------
    values : iterable of float
        One value per seed; non-finite values are dropped (and counted out of ``seeds``).

    Returns
    -------
    Estimate
        ``value`` the mean; ``low``/``high`` ``mean ± t(0.975, n-1) * s / sqrt(n)``
        (``scipy.stats.t``), ``None`` for fewer than two values; equal values give a
        zero-width interval.
    """
    from scipy import stats

    x = np.asarray([float(v) for v in values], dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    if n == 0:
        return Estimate(math.nan, None, None, 0, "no finite value")
    mean = float(x.mean())
    if n == 1:
        return Estimate(mean, None, None, 1, "one seed: no interval")
    sd = float(x.std(ddof=1))
    sem = sd / math.sqrt(n)
    if sem == 0.0:
        return Estimate(mean, mean, mean, n, f"t interval over {n} seeds (all equal)", 0.0)
    low, high = stats.t.interval(LEVEL, n - 1, loc=mean, scale=sem)
    return Estimate(mean, float(low), float(high), n, f"t interval over {n} seeds", sd)


def bootstrap_units(
    n_units: int,
    statistic: Callable[[np.ndarray], float],
    *,
    seeds: int,
    what: str = "units",
    n_resamples: int = N_RESAMPLES,
    random_seed: int = 0,
    clusters: Sequence[int] | np.ndarray | None = None,
) -> Estimate:
    """A statistic of ``n_units`` units with its percentile-bootstrap 95 % interval.

    The units (jobs, users, samples) are resampled with replacement; ``statistic`` receives the
    indices of one resample (an int array of length ``n_units``) and returns the statistic on
    those units. The point estimate is the statistic on all units, ``np.arange(n_units)``.

    Parameters
    ----------
    n_units : int
        The number of units.
    statistic : callable
        ``statistic(idx) -> float``; may return NaN for a degenerate resample (dropped).
    seeds : int
        The number of seeds the units' values come from (reported, not resampled).
    what : str
        The units' name, for the method text ("jobs", "users").
    n_resamples : int
        Bootstrap resamples.
    random_seed : int
        Seed of the resampling (the interval is reproducible).
    clusters : sequence of int, optional
        The seed (or other cluster) of each unit, length ``n_units``. Given, the bootstrap is
        two-level: the clusters are resampled with replacement, then the units within each drawn
        cluster, so the interval carries the variation between seeds as well as between units
        (units of different seeds pooled as if independent would hide a trend that one seed
        shows and another reverses).

    Returns
    -------
    Estimate
        ``low``/``high`` the 2.5 and 97.5 percentiles of the resampled statistic (``None``
        for fewer than two units or when fewer than half the resamples are finite).

    Notes
    -----
    The percentile method of ``scipy.stats.bootstrap``, written out over the unit indices:
    the statistics here (ratios of means per group, rank correlations over a few groups) are
    undefined on some resamples (an empty group), which are dropped, and degenerate for BCa's
    jackknife.
    """
    point = float(statistic(np.arange(n_units)))
    if n_units < 2:
        return Estimate(point, None, None, seeds, f"bootstrap needs 2 {what} or more")
    rng = np.random.default_rng(random_seed)
    draws: Iterable[np.ndarray]
    if clusters is None:
        draws = (rng.integers(0, n_units, size=n_units) for _ in range(n_resamples))
        method = f"bootstrap over {n_units} {what}, {n_resamples} resamples"
    else:
        labels = np.asarray(clusters)
        if labels.shape != (n_units,):
            raise ValueError(f"clusters: expected {n_units} labels, got shape {labels.shape}")
        members = [np.flatnonzero(labels == c) for c in np.unique(labels)]

        def draw() -> np.ndarray:  # the seeds drawn, then the units within each drawn seed
            picked = [members[c] for c in rng.integers(0, len(members), size=len(members))]
            return np.concatenate([m[rng.integers(0, m.size, size=m.size)] for m in picked])

        draws = (draw() for _ in range(n_resamples))
        method = (
            f"two-level bootstrap over {len(members)} seeds, then {n_units} {what} "
            f"within them, {n_resamples} resamples"
        )
    values = np.array([float(statistic(idx.astype(int))) for idx in draws])
    finite = values[np.isfinite(values)]
    if finite.size < n_resamples / 2:
        return Estimate(point, None, None, seeds, method + " (too many undefined)")
    low, high = np.quantile(finite, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return Estimate(point, float(low), float(high), seeds, method)


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of ``x`` and ``y`` (NaN for fewer than 3 finite pairs or a
    constant side), ``scipy.stats.spearmanr``."""
    from scipy import stats

    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(stats.spearmanr(a, b).statistic)


def spearman_trend(
    n_units: int,
    groups: Callable[[np.ndarray], tuple[Sequence[float], Sequence[float]]],
    *,
    seeds: int,
    **bootstrap: Any,
) -> Estimate:
    """Spearman's rho of a grouped trend with its bootstrap interval over the units.

    Parameters
    ----------
    n_units : int
        The number of units (jobs, users) the groups are made of.
    groups : callable
        ``groups(idx) -> (keys, values)``: for the units ``idx`` (a resample), each group's key
        (the x of the trend: a size bin, a repetition count) and its value (the y: a mean, a
        reduction).
    seeds, **bootstrap
        As in :func:`bootstrap_units` (``what``, ``n_resamples``, ``random_seed``,
        ``clusters``); give ``clusters`` (each unit's seed) when the units of several seeds are
        pooled.

    Returns
    -------
    Estimate
        Spearman's rho over the groups on all units, and its percentile-bootstrap interval.
    """
    return bootstrap_units(n_units, lambda idx: spearman(*groups(idx)), seeds=seeds, **bootstrap)


# --------------------------------------------------------------------------- rules


def _num(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(float(value)) else float(value)


@dataclass(frozen=True)
class Region:
    """The values of a quantity for which a rule holds: ``[low, high]``, either end open (a
    strict inequality) or infinite.

    Attributes
    ----------
    low, high : float
        The ends (``-inf``/``inf`` for none).
    low_open, high_open : bool
        Whether the end itself is outside the region ("strictly above").
    """

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def contains(self, x: float) -> bool:
        """Whether ``x`` lies in the region (closed ends with :data:`EPS` of slack)."""
        above = x > self.low if self.low_open else x >= self.low - EPS
        below = x < self.high if self.high_open else x <= self.high + EPS
        return above and below

    def outcome(self, lo: float, hi: float) -> Verdict:
        """PASS when ``[lo, hi]`` lies within the region, FAIL when entirely outside it,
        INCONCLUSIVE when it straddles one of its ends."""
        if self.contains(lo) and self.contains(hi):
            return "PASS"
        left = hi <= self.low if self.low_open else hi < self.low - EPS
        right = lo >= self.high if self.high_open else lo > self.high + EPS
        return "FAIL" if left or right else "INCONCLUSIVE"

    def straddled(self, lo: float, hi: float) -> list[float]:
        """The finite ends of the region that lie within ``[lo, hi]``."""
        return [b for b in (self.low, self.high) if math.isfinite(b) and lo <= b <= hi]


def seeds_to_decide(est: Estimate, boundary: float) -> int | None:
    """The seeds it would take for ``est``'s interval to stop straddling ``boundary``.

    With the per-seed standard deviation ``s`` (:attr:`Estimate.sd`) and ``d`` the distance from
    the estimate to the boundary, the smallest ``n ≥ 2`` with ``t(0.975, n-1)·s/√n < d`` (the
    Student-t half-width of :func:`across_seeds`). For an interval without ``sd`` (bootstrap), its
    half-width ``w`` is taken to shrink as ``1/√seeds``: ``n = ⌈seeds·(w/d)²⌉`` (at least one
    more seed than now).

    Parameters
    ----------
    est : Estimate
        An estimate whose interval straddles ``boundary``.
    boundary : float
        The end of the rule's region.

    Returns
    -------
    int or None
        ``None`` ("undecidable") when the estimate lies on the boundary (no number of seeds moves
        the interval off it) or the interval has no width to scale.
    """
    from scipy import stats

    d = abs(est.value - boundary)
    if not math.isfinite(d) or d <= EPS:
        return None
    if est.sd is not None:
        if est.sd <= 0:
            return None
        sd = est.sd

        def wide(n: int) -> bool:
            return float(stats.t.ppf((1 + LEVEL) / 2, n - 1)) * sd / math.sqrt(n) >= d

        lo, hi = 2, 4
        while wide(hi):
            lo, hi = hi, 2 * hi
        # the smallest n in [lo, hi] that is not wide (the half-width falls as n grows)
        return lo + bisect.bisect_left(range(lo, hi), True, key=lambda n: not wide(n))
    if est.low is None or est.high is None or est.high <= est.low:
        return None
    w = (est.high - est.low) / 2
    n = max(est.seeds, 1)
    return max(n + 1, math.ceil(n * (w / d) ** 2))


def _inconclusive(
    est: Estimate, region: Region, unit: str
) -> tuple[int | Literal["undecidable"], str]:
    """The seeds an INCONCLUSIVE verdict needs (the most over the ends it straddles) and why."""
    lo, hi = est.bounds()
    ends = region.straddled(lo, hi) or [region.low if math.isfinite(region.low) else region.high]
    needs = [seeds_to_decide(est, b) for b in ends]
    where = " and ".join(_show(b, unit) for b in ends)
    if any(n is None for n in needs):
        return "undecidable", (
            f"INCONCLUSIVE: the interval straddles {where} with the estimate on it "
            "(undecidable by more seeds)"
        )
    n = max(int(x) for x in needs if x is not None)
    how = (
        f"s.d. {est.sd:.3g} over seeds"
        if est.sd is not None
        else "half-width taken to shrink as 1/√seeds"
    )
    return n, f"INCONCLUSIVE: the interval straddles {where}; about {n} seeds would decide ({how})"


def _decide(
    statement: str,
    source: str,
    paper: float | str | None,
    est: Estimate,
    rule: str,
    region: Region,
    reason: str,
    kind: Kind,
    unit: str,
    missing: str = "no estimate",
) -> Claim:
    """The claim of a rule: ``n/a`` (``missing``) without a finite ``est``, else its region's."""
    verdict: Verdict = region.outcome(*est.bounds()) if est.finite else "n/a"
    need: int | Literal["undecidable"] | None = None
    if verdict == "n/a":
        reason = reason or missing
    elif est.low is None:
        why = "one seed" if est.seeds == 1 else f"no interval ({est.method})"
        reason = "; ".join(x for x in (reason, f"{why}: decided on the point estimate") if x)
    if verdict == "INCONCLUSIVE":
        need, why = _inconclusive(est, region, unit)
        reason = "; ".join(x for x in (why, reason) if x)
    claim = judged(
        statement,
        source,
        paper,
        est.value,
        verdict,
        rule=rule,
        seeds=est.seeds,
        kind=kind,
        unit=unit,
        reason=reason,
        ci=(est.low, est.high),
    )
    return claim.model_copy(update={"seeds_to_decide": need}) if need is not None else claim


def _sign(
    statement: str,
    source: str,
    paper: float | str | None,
    est: Estimate,
    positive: bool,
    what: str,
    reason: str,
    kind: Kind,
    unit: str,
    missing: str = "no estimate",
    min_effect: float = 0.0,
) -> Claim:
    """The rule of :func:`exceeds` and :func:`trend` (a zero-width interval at 0: a tie)."""
    m = abs(min_effect)
    shown = _show(m, unit, tol=True) if m > 0 else "0"
    if positive:
        rule = f"{what} strictly above {shown}"
        region = Region(low=m, low_open=True)
    else:
        rule = f"{what} strictly below {'-' if m > 0 else ''}{shown}"
        region = Region(high=-m, high_open=True)
    if est.finite and est.bounds() == (0.0, 0.0):
        reason = "; ".join(x for x in ("a tie (exactly 0)", reason) if x)
    return _decide(statement, source, paper, est, rule, region, reason, kind, unit, missing)


def tolerance(paper: float, model_tol: float, precision: float | None = None) -> float:
    """The tolerance of a numeric claim: the paper's printed precision plus the reproduction's
    model tolerance (``docs/claims.md``).

    Parameters
    ----------
    paper : float
        The paper's value; a :class:`Printed` carries its precision.
    model_tol : float
        The reproduction's model tolerance, in the quantity's unit (its docs page says why).
    precision : float, optional
        The printed precision, for a ``paper`` that is a plain float.

    Raises
    ------
    ValueError
        When ``paper`` is not :class:`Printed` and ``precision`` is not given, or a part is
        negative.
    """
    if precision is None:
        if not isinstance(paper, Printed):
            raise ValueError(
                f"tolerance: {paper!r} is not a Printed value; give its printed precision"
            )
        precision = paper.precision
    if precision < 0 or model_tol < 0:
        raise ValueError("tolerance: precision and model tolerance must be ≥ 0")
    return float(precision) + float(model_tol)


def agrees(
    statement: str,
    source: str,
    paper: float,
    est: Estimate,
    *,
    model_tol: float,
    precision: float | None = None,
    unit: str = "",
    kind: Kind = "paper",
    reason: str = "",
) -> Claim:
    """A number the paper prints: PASS when our 95 % interval lies within the paper's value ±
    the tolerance, FAIL when it lies entirely outside, INCONCLUSIVE when it straddles an end.

    The tolerance (:func:`tolerance`) is the paper's printed precision (half a unit of its last
    printed digit: "2 %" ±0.5 pp, "26.3 %" ±0.05 pp) plus the reproduction's model tolerance.

    Parameters
    ----------
    statement, source : str
        The statement and where the paper makes it.
    paper : float
        The paper's value, in ``unit``: a :class:`Printed` (or give ``precision``).
    est : Estimate
        Ours.
    model_tol : float
        The reproduction's model tolerance, in ``unit`` (its docs page states and justifies it).
    precision : float, optional
        The printed precision, when ``paper`` is not :class:`Printed`.
    unit, kind, reason
        As in :class:`Claim`.

    Returns
    -------
    Claim
        ``n/a`` when our estimate is not finite.
    """
    prec = paper.precision if precision is None and isinstance(paper, Printed) else precision
    tol = tolerance(paper, model_tol, prec)
    shown = paper.shown if isinstance(paper, Printed) else f"{paper:g}"
    rule = (
        f"95 % interval within the paper's value ± {_show(tol, unit, tol=True, digits=2)} "
        f"(printed precision of {shown}: ± {_show(prec, unit, tol=True, digits=3)}, "
        f"+ model tolerance {_show(model_tol, unit, tol=True, digits=2)})"
    )
    region = Region(float(paper) - tol, float(paper) + tol)
    return _decide(statement, source, float(paper), est, rule, region, reason, kind, unit)


def exceeds(
    statement: str,
    source: str,
    paper: float | str | None,
    diff: Estimate,
    *,
    direction: Literal[">", "<"] = ">",
    unit: str = "",
    kind: Kind = "paper",
    what: str = "the difference",
    reason: str = "",
    min_effect: float = 0.0,
) -> Claim:
    """An order the paper states ("higher", "lower"): PASS when the interval of ``diff`` lies
    strictly above 0 on the paper's side (strictly beyond ``min_effect``), FAIL when it lies
    entirely on the other side (a tie, an exact 0, is reported as one), INCONCLUSIVE when it
    straddles it (``docs/claims.md``, comparative words).

    Parameters
    ----------
    diff : Estimate
        The difference (e.g. A − B, paired per seed) whose sign the paper states.
    direction : {">", "<"}
        ``">"``: the paper says the difference is positive.
    what : str
        The difference's name, for the rule text.
    min_effect : float
        The smallest difference that counts, in ``unit`` (0: any; "significantly" names one).
    """
    what = f"95 % interval of {what}"
    args = (paper, diff, direction == ">", what, reason, kind, unit)
    return _sign(statement, source, *args, min_effect=min_effect)


def bounded(
    statement: str,
    source: str,
    paper: float | str | None,
    est: Estimate,
    *,
    low: float | None = None,
    high: float | None = None,
    unit: str = "",
    kind: Kind = "paper",
    reason: str = "",
) -> Claim:
    """A threshold: PASS when our whole interval lies within ``[low, high]`` (either may be
    absent), FAIL when it lies entirely outside, INCONCLUSIVE when it straddles ``low`` or
    ``high``.

    Raises
    ------
    ValueError
        When neither bound is given.
    """
    if low is None and high is None:
        raise ValueError("bounded: give low, high or both")
    parts = [f"{op} {_show(b, unit)}" for op, b in (("≥", low), ("≤", high)) if b is not None]
    rule = "95 % interval entirely " + " and ".join(parts)
    region = Region(-math.inf if low is None else low, math.inf if high is None else high)
    return _decide(statement, source, paper, est, rule, region, reason, kind, unit)


def trend(
    statement: str,
    source: str,
    paper: float | str | None,
    rho: Estimate,
    *,
    direction: Literal["increasing", "decreasing"] = "increasing",
    kind: Kind = "paper",
    reason: str = "",
) -> Claim:
    """A monotone trend: PASS when the interval of Spearman's rho lies strictly beyond 0 in its
    direction, FAIL when entirely on the other side (or at 0), INCONCLUSIVE when it straddles 0.

    Parameters
    ----------
    rho : Estimate
        From :func:`spearman_trend`.
    direction : {"increasing", "decreasing"}
        The paper's direction.
    """
    what = "95 % bootstrap interval of Spearman's rho"
    up = direction == "increasing"
    return _sign(statement, source, paper, rho, up, what, reason, kind, "", "fewer than 3 groups")


def judged(
    statement: str,
    source: str,
    paper: float | str | None,
    ours: float | str | None,
    ok: bool | Verdict | None,
    *,
    rule: str,
    seeds: int,
    reason: str = "",
    kind: Kind = "paper",
    unit: str = "",
    ci: tuple[float | None, float | None] | None = None,
) -> Claim:
    """A statement decided by an explicit test ``ok`` (``None`` gives ``n/a``; a verdict string
    is taken as it is)."""
    verdict: Verdict = (
        ok if isinstance(ok, str) else "n/a" if ok is None else ("PASS" if ok else "FAIL")
    )
    return Claim(
        statement=statement,
        source=source,
        paper=paper,
        ours=ours if isinstance(ours, str) else _num(ours),
        ci_low=None if ci is None else _num(ci[0]),
        ci_high=None if ci is None else _num(ci[1]),
        seeds=seeds,
        rule=rule,
        verdict=verdict,
        reason=reason,
        kind=kind,
        unit=unit,
    )


def consistency(
    statement: str, source: str, ours: float | str | None, ok: bool | None, **kw: Any
) -> Claim:
    """A check of our own runs decided by ``ok`` (kind ``consistency``; no paper value unless
    ``paper`` is given): :func:`judged`, ``kw`` as there (``rule`` and ``seeds`` required)."""
    return judged(statement, source, kw.pop("paper", None), ours, ok, kind="consistency", **kw)


def identical(
    statement: str,
    source: str,
    gap: float,
    *,
    seeds: int,
    reason: str,
    what: str = "difference",
    units: str = "",
    tol: float = 1e-6,
) -> Claim:
    """A consistency check that two computations of the same numbers agree: PASS when the largest
    difference between them, ``gap``, is at most ``tol`` (the rule reads "largest ``what`` ≤
    ``tol`` ``units``"; the paper's value is 0)."""
    rule = f"largest {what} ≤ {tol:g}" + (f" {units}" if units else "")
    return consistency(
        statement, source, gap, gap <= tol, paper=0.0, rule=rule, seeds=seeds, reason=reason
    )


def by_construction(
    statement: str,
    source: str,
    paper: float | str | None,
    ours: float | str | None,
    *,
    reason: str,
    seeds: int,
    holds: bool = True,
    unit: str = "",
) -> Claim:
    """A statement that holds because of how the experiment is built, a theorem, or calibration.

    ``reason`` says which; ``holds`` is the check that it did hold (a FAIL here is a bug)."""
    return judged(
        statement,
        source,
        paper,
        ours,
        holds,
        rule="holds by construction",
        seeds=seeds,
        reason=reason,
        kind="by-construction",
        unit=unit,
    )


def not_applicable(
    statement: str, source: str, paper: float | str | None, *, reason: str, seeds: int
) -> Claim:
    """A paper statement we cannot decide; ``reason`` says why."""
    return judged(statement, source, paper, None, None, rule="—", seeds=seeds, reason=reason)


def agrees_range(
    statement: str,
    source: str,
    low: Printed,
    high: Printed,
    est: Estimate,
    *,
    model_tol: float,
    kind: Kind = "paper",
    reason: str = "",
) -> Claim:
    """A range the paper prints ("80-85 %"): PASS when our 95 % interval lies within the range
    widened at each end by that end's tolerance (:func:`tolerance`: its printed precision plus
    the model tolerance), FAIL when it lies entirely outside, INCONCLUSIVE when it straddles an
    end (:func:`agrees` for a range).

    Parameters
    ----------
    statement, source : str
        The statement and where the paper makes it.
    low, high : Printed
        The paper's range (fractions; the claim's unit is ``share``).
    est : Estimate
        Ours.
    model_tol : float
        The reproduction's model tolerance (a fraction).
    kind, reason
        As in :class:`Claim`.

    Returns
    -------
    Claim
        ``paper`` is the range as text (``"80-85 %"``); ``n/a`` when our estimate is not finite.
    """
    a = float(low) - tolerance(low, model_tol)
    b = float(high) + tolerance(high, model_tol)
    rule = (
        f"95 % interval within the paper's range widened by its printed precision "
        f"(± {_show(low.precision, 'pp', tol=True, digits=3)} and "
        f"± {_show(high.precision, 'pp', tol=True, digits=3)}) + model tolerance "
        f"{_show(model_tol, 'pp', tol=True, digits=2)}: {number(a, 'share', '.4g')} to "
        f"{number(b, 'share', '.4g')}"
    )
    pct = isinstance(low, Printed) and low.percent
    text = (
        f"{low.text}-{high.text} %"
        if pct and isinstance(high, Printed)
        else f"{100 * low:.4g}-{100 * high:.4g} %"
    )
    return _decide(statement, source, text, est, rule, Region(a, b), reason, kind, "share")


def _distance(c: Claim, low: float, high: float) -> float:
    if not isinstance(c.ours, float):
        return -math.inf
    return max(low - c.ours, c.ours - high, 0.0)


def seeds_needed(c: Claim) -> float:
    """The seeds an INCONCLUSIVE claim needs (:attr:`Claim.seeds_to_decide`), ``inf`` when
    undecidable or not given (for ranking)."""
    n = c.seeds_to_decide
    return math.inf if n == "undecidable" or n is None else float(n)


def every_setting(
    statement: str,
    parts: Sequence[tuple[str, Claim]],
    *,
    target: tuple[float, float],
    what: str = "settings",
    source: str | None = None,
) -> Claim:
    """A statement "at every setting": each setting judged by its own claim; the result is the
    worst one (a FAIL if any, the one farthest from ``target``; else an ``n/a`` if any; else an
    INCONCLUSIVE if any, the one needing the most seeds to decide; else the PASS farthest from
    ``target``), with the statement replaced and every setting listed in the reason.

    Parameters
    ----------
    statement : str
        The combined statement.
    parts : sequence of (label, Claim)
        One claim per setting, decided by the same rule.
    target : (float, float)
        The paper's value or range, to rank the settings by their distance to it.
    what : str
        The settings' name, for the reason.
    source : str, optional
        Where the paper makes the statement (default: the worst part's).

    Returns
    -------
    Claim
    """
    fails = [(lab, c) for lab, c in parts if c.verdict == "FAIL"]
    undecided = [(lab, c) for lab, c in parts if c.verdict == "n/a"]
    open_ = [(lab, c) for lab, c in parts if c.verdict == "INCONCLUSIVE"]
    if open_ and not fails and not undecided:
        label, worst = max(open_, key=lambda lc: seeds_needed(lc[1]))
    else:
        pool = fails or undecided or list(parts)
        label, worst = max(pool, key=lambda lc: _distance(lc[1], *target))
    listing = "; ".join(f"{lab}: {show_ours(c)} {c.verdict}" for lab, c in parts)
    reason = f"worst of {len(parts)} {what}: {label}; every one: {listing}"
    if worst.reason:
        reason += f". {worst.reason}"
    update = {"statement": statement, "reason": reason}
    return worst.model_copy(update=update if source is None else {**update, "source": source})


def one_reading(
    chosen: Claim,
    others: Sequence[tuple[str, Claim]],
    *,
    reading: str,
    why: str,
) -> Claim:
    """One paper statement that can be read two (or more) ways, judged once: by ``chosen``, the
    claim under the reading the paper's text supports, with every other reading's estimate and
    verdict shown beside it in the reason (issue 44: "one statement, one claim").

    Parameters
    ----------
    chosen : Claim
        The claim under the reading that decides the verdict; its statement, source, estimate,
        rule and verdict are kept.
    others : sequence of (label, Claim)
        The claims under the other readings, each named by ``label``; shown, not judged.
    reading : str
        The name of the chosen reading.
    why : str
        Why the paper's text supports it (its words, with their section).

    Returns
    -------
    Claim
        ``chosen`` with the reason ``judged by <reading> (<why>); <chosen's reason>; the other
        reading, <label>: <ours [interval]> <verdict> (<its reason>)``.
    """
    parts = [f"judged by {reading} ({why})"]
    if chosen.reason:
        parts.append(chosen.reason)
    for label, c in others:
        beside = f"the other reading, {label}: {show_ours(c)} {c.verdict}"
        parts.append(f"{beside} ({c.reason})" if c.reason else beside)
    return chosen.model_copy(update={"reason": "; ".join(parts)})


def deterministic(
    rule: Callable[..., Claim],
    statement: str,
    source: str,
    paper: float | str | None,
    q: Ranged,
    *,
    how: str,
    bounds: str,
    reason: str = "",
    **kw: Any,
) -> Claim:
    """A statement judged on a deterministic quantity known within error bounds: ``rule``
    (:func:`exceeds`, :func:`bounded`, ...) on ``q.value`` as an exact number
    (:meth:`Estimate.exact`), the reason giving ``how`` it is computed, ``q.where``, its range
    within the error bounds (named ``bounds``) and whether the verdict is the same at both ends,
    then ``reason``; ``kw`` goes to the rule (``unit``, ``low``, ``high``, ``what``, ...).
    """
    ends = {
        rule(statement, source, paper, Estimate.exact(v), **kw).verdict for v in (q.low, q.high)
    }
    unit = kw.get("unit", "")
    span = f"{number(q.low, unit, '.2f')} to {number(q.high, unit, '.2f')} within the {bounds}"
    span += ", same verdict" if len(ends) == 1 else ", where the verdict is not decided"
    why = "; ".join(x for x in (how, q.where, span, reason) if x)
    return rule(statement, source, paper, Estimate.exact(q.value), reason=why, **kw)


# --------------------------------------------------------------------------- files and report


def _slug(value: str) -> str:
    """A field value as a piece of an id: lower case, runs of other characters as ``-``."""
    return re.sub(r"[^a-z0-9.+]+", "-", value.lower()).strip("-")


def _pattern(text: str) -> tuple[re.Pattern[str], list[str]]:
    """A :attr:`Statement.text` as a pattern of its formatted claims, and its field names."""
    names: list[str] = []
    parts: list[str] = []
    for literal, name, _, _ in string.Formatter().parse(text):
        parts.append(re.escape(literal))
        if name is not None:
            names.append(name)
            parts.append("(.+?)")
    return re.compile("".join(parts) + r"\Z", re.S), names


def identify(claims: Sequence[Claim], statements: Sequence[Statement]) -> list[Claim]:
    """Give every claim its ``id`` and ``quote`` from the paper statement it checks.

    A claim checks the statement of the same ``source`` whose :attr:`Statement.text` formats to
    the claim's ``statement`` (the most specific: the one with fewest fields); its id is the
    statement's key, then each field as ``name-value`` (``table2.slots-10.resource-cpu``).

    Parameters
    ----------
    claims : sequence of Claim
        A reproduction's claims, in order.
    statements : sequence of Statement
        Its ``paper.STATEMENTS``.

    Returns
    -------
    list of Claim
        The claims with ``id`` and ``quote`` set (a claim that already has an id keeps it, and
        one built with its own quote, such as the table row it checks, keeps that quote). A
        claim that matches no statement gets its own words as id, and a second claim with an id
        already given gets ``.2`` (``.3``, ...) after it; both are logged as warnings.
    """
    compiled = sorted(((st, *_pattern(st.text)) for st in statements), key=lambda x: len(x[2]))
    out: list[Claim] = []
    seen: dict[str, str] = {}
    for c in claims:
        if not c.id:
            for st, pattern, names in compiled:
                m = pattern.match(c.statement)
                if st.source == c.source and m:
                    pieces = [f"{n}-{_slug(v)}" for n, v in zip(names, m.groups(), strict=True)]
                    ident = ".".join([st.key, *pieces])
                    c = c.model_copy(update={"id": ident, "quote": c.quote or st.quote})
                    break
            else:  # a statement the paper.py does not list: its words as the id
                log.warning("claim %r (%s): no statement of the paper", c.statement, c.source)
                c = c.model_copy(update={"id": _slug(c.statement)})
        if c.id in seen:  # one statement counted twice: kept apart, and said
            log.warning("claim id %r given twice (%r, %r)", c.id, seen[c.id], c.statement)
            k = next(k for k in itertools.count(2) if f"{c.id}.{k}" not in seen)
            c = c.model_copy(update={"id": f"{c.id}.{k}"})
        seen[c.id] = c.statement
        out.append(c)
    return out


def write_claims(
    out: str | os.PathLike[str],
    claims: Sequence[Claim],
    statements: Sequence[Statement] | None = None,
) -> Path:
    """Write ``out/claims.json`` (atomically): the list of claims, in order.

    Parameters
    ----------
    out : path-like
        The reproduction's folder.
    claims : sequence of Claim
    statements : sequence of Statement, optional
        The paper's statements: each claim gets its ``id`` and ``quote`` (:func:`identify`).

    Returns
    -------
    pathlib.Path
        The written file.
    """
    if statements is not None:
        claims = identify(claims, statements)
    dest = Path(out) / "claims.json"
    write_text(dest, json_text([c.model_dump() for c in claims], sort_keys=False) + "\n")
    return dest


def read_claims(path: str | os.PathLike[str]) -> list[Claim]:
    """Read a ``claims.json`` (a file, or the folder holding it).

    Raises
    ------
    fairsim.errors.ConfigError
        When the file is not a list of claim records (naming the first bad field).
    """
    p = Path(path)
    if p.is_dir():
        p = p / "claims.json"
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read claims ({exc})") from None
    if not isinstance(data, list):
        raise ConfigError(f"{p}: expected a JSON list of claims, got {type(data).__name__}")
    out = []
    for i, item in enumerate(data):
        try:
            out.append(Claim.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(x) for x in err["loc"])
            raise ConfigError(f"{p}: claim {i}: {field}: {err['msg']}") from None
    return out


def counts(claims: Iterable[Claim], kind: str = "paper") -> dict[str, int]:
    """The number of claims of ``kind`` per verdict.

    Returns
    -------
    dict
        ``{"PASS": n, "FAIL": n, "INCONCLUSIVE": n, "n/a": n, "all": n}``.
    """
    c = dict.fromkeys(VERDICTS, 0) | Counter(x.verdict for x in claims if x.kind == kind)
    c["all"] = sum(c[v] for v in VERDICTS)
    return c


def headline(claims: Sequence[Claim]) -> str:
    """The report's headline sentence: counts of ``paper`` claims only, the others apart."""
    p = counts(claims, "paper")
    paper = [c for c in claims if c.kind == "paper"]
    random = [c.seeds for c in paper if c.seeds > 0]
    n_det = sum(c.seeds == 0 for c in paper)
    notes = []
    if random and max(random) > 1:
        notes.append(f"Numbers are means over {max(random)} seeds with 95 % intervals")
    elif random:
        notes.append("One seed: no intervals; verdicts rest on point estimates")
    if n_det:
        notes.append(f"{n_det} of the statements rest on a deterministic computation (0 seeds)")
    seed_txt = f" {'; '.join(notes)}." if notes else ""
    others = [f"{counts(claims, k)['all']} {k}" for k in KINDS[1:] if counts(claims, k)["all"] > 0]
    other_txt = _TEXT.text("headline.others", others=" and ".join(others)) if others else ""
    return _TEXT.text("headline", p=p, seeds=seed_txt, others=other_txt)


def _claim_spec(unit: str) -> Spec:
    """The digits of a claim's numbers (3 significant figures for seconds, 5 for plain ones)."""
    if unit == "s":
        return lambda v: ",.0f" if abs(v) >= 100 else ".3g"
    if unit in ("share", "pp"):
        return None
    return lambda v: ",.0f" if abs(v) >= 1e5 else ".5g"


def _show(value: Any, unit: str, *, tol: bool = False, digits: int | None = None) -> str:
    """A claim's number in its unit; ``tol``: a tolerance (unsigned points), ``digits`` long."""
    unit = unit if unit in UNITS else ""
    if tol and unit in ("share", "pp"):
        return number(value, "pp", ".1f" if digits is None else f".{digits}g")
    return number(value, unit, f".{digits}g" if tol and digits is not None else _claim_spec(unit))


def show_ours(claim: Claim) -> str:
    """``ours [low, high]`` in the claim's unit (``—`` when there is nothing)."""
    unit = claim.unit if claim.unit in UNITS else ""
    return interval(claim.ours, claim.ci_low, claim.ci_high, unit, _claim_spec(unit), each=True)


def claims_table(claims: Sequence[Claim]) -> list[str]:
    """Markdown table of ``claims`` (any kinds), one row each."""
    head = ["statement", "source", "paper", "ours [95 % CI]", "seeds", "rule", "verdict", "reason"]
    rows = [
        [
            c.statement,
            c.source,
            _show(c.paper, c.unit),
            show_ours(c),
            str(c.seeds),
            c.rule,
            f"**{c.verdict}**" if c.verdict == "FAIL" else c.verdict,
            c.reason or "—",
        ]
        for c in claims
    ]
    return table(head, rows, escape=True)


def claims_markdown(
    claims: Sequence[Claim], *, title: str = "The paper's statements, checked"
) -> list[str]:
    """The report section generated from the claims: headline, the ``paper`` claims' table,
    then one table per other kind (not counted in the headline)."""
    lines = [f"## {title}", "", headline(claims), ""]
    paper = [c for c in claims if c.kind == "paper"]
    if paper:
        lines += claims_table(paper)
    for kind in KINDS[1:]:
        some = [c for c in claims if c.kind == kind]
        if some:
            lines += [*_TEXT.lines("kind." + kind.replace("-", "_")), *claims_table(some)]
    return lines


# --------------------------------------------------------------------------- seeds


def seed_list(n: int) -> list[int]:
    """The seeds of an ``n``-seed reproduction: ``1 .. n`` (seed 1 is the single-seed run).

    Raises
    ------
    fairsim.errors.ConfigError
        For ``n < 1``.
    """
    if n < 1:
        raise ConfigError(f"--seeds: must be at least 1 (got {n})")
    return list(range(1, n + 1))
