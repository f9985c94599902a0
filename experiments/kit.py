"""The report kit every paper reproduction shares: numbers in their units, estimates with their
intervals, the set-up table and the Markdown templates, and the default entry point of a
reproduction.

Numbers
-------
A number is shown in its *unit* (the units of :class:`fairsim.experiments.claims.Claim`):

======== ========================================= =================
unit     what                                      shown as
======== ========================================= =================
share    a fraction of a whole                     per cent, ``" %"``
pp       a difference of fractions                 points, ``" pp"``
s        seconds                                   ``" s"``
n        a count                                   no suffix
""       a plain number                            no suffix
======== ========================================= =================

:func:`number` shows one number (``—`` when there is none), :func:`interval` shows
``value [low, high]``, and :func:`estimate` does so for an estimate (anything with ``value``,
``low`` and ``high``, such as :class:`fairsim.experiments.claims.Estimate`). Each takes a format
specification for the digits (:data:`SPECS` by default), because a table of utilisations wants
one decimal and a table of service rates four. The Student-t intervals themselves come from
:mod:`fairsim.scenario.reporting.intervals`.

Markdown
--------
A table is :func:`fairsim.scenario.reporting.markdown.table`'s (a header and rows; the run and
sweep reports use it too); :func:`setup_table` writes the set-up table
at the top of every report (:class:`Setup`: trace and window, servers, schedulers, seeds, quick
or full, model tolerance); :class:`Template` keeps a report's prose in a
Markdown file of named blocks (every paper's ``report_template.md`` beside its ``report.py``),
which the report fills with its numbers.

The entry point
---------------
Every reproduction subpackage has ``experiment.run_experiment(options)`` (the runs, with the
:class:`Options` of ``fairsim experiment``; its result is whatever its report needs) and
``report.write_report(out, run)`` (claims, figures and ``report.md``); :func:`reproduce` runs the
two, so a paper needs no entry point of its own. A seed's runs kept apart go to :func:`seed_dir`.
"""

from __future__ import annotations

import importlib
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fairsim.scenario.reporting.markdown import table

#: How each unit shows: the factor a value is multiplied by, and the suffix after it.
UNITS: dict[str, tuple[float, str]] = {
    "share": (100.0, " %"),
    "pp": (100.0, " pp"),
    "s": (1.0, " s"),
    "n": (1.0, ""),
    "": (1.0, ""),
}
#: The default format specification of each unit (after the factor).
SPECS: dict[str, str] = {"share": ".1f", "pp": "+.1f", "s": ",.0f", "n": ",.0f", "": ".2f"}

#: A format specification, or a function of the value giving one.
Spec = str | Callable[[float], str] | None


class HasInterval(Protocol):
    """What :func:`estimate` reads: a point estimate and its interval (``None``: none)."""

    @property
    def value(self) -> float: ...  # pragma: no cover - a protocol

    @property
    def low(self) -> float | None: ...  # pragma: no cover

    @property
    def high(self) -> float | None: ...  # pragma: no cover


def _finite(x: Any) -> bool:
    return x is not None and math.isfinite(float(x))


def number(x: Any, unit: str = "", spec: Spec = None, *, suffix: bool = True) -> str:
    """One number in ``unit``.

    Parameters
    ----------
    x : float, str or None
        The value (a fraction for ``share`` and ``pp``); a string is shown as it is.
    unit : {"share", "pp", "s", "n", ""}
        Its unit (:data:`UNITS`).
    spec : str or callable, optional
        The format specification of the scaled value (default :data:`SPECS`), or a function of
        the scaled value returning one.
    suffix : bool
        Append the unit's suffix (``" %"``, ``" pp"``, ``" s"``).

    Returns
    -------
    str
        ``—`` for ``None`` or a value that is not finite.

    Raises
    ------
    KeyError
        For an unknown unit.
    """
    if isinstance(x, str):
        return x
    factor, tail = UNITS[unit]
    if not _finite(x):
        return "—"
    v = factor * float(x)
    s = SPECS[unit] if spec is None else spec if isinstance(spec, str) else spec(v)
    return f"{v:{s}}" + (tail if suffix else "")


def interval(
    value: Any,
    low: float | None,
    high: float | None,
    unit: str = "",
    spec: Spec = None,
    *,
    each: bool = False,
    suffix: bool = True,
    min_width: float | None = None,
) -> str:
    """``value [low, high]`` in ``unit`` (:func:`number` for each).

    Parameters
    ----------
    value, low, high : float or None
        The estimate and its interval; without both (finite) bounds only the value shows.
    unit, spec, suffix
        As in :func:`number`.
    each : bool
        The unit's suffix after each bound as well (``35.1 % [33.0 %, 37.2 %]``); by default
        only after the value (``35.1 % [33.0, 37.2]``).
    min_width : float, optional
        Show the interval only when ``high - low`` is at least this (``math.ulp(0.0)``: not a
        zero-width interval, an exact number's).

    Returns
    -------
    str
    """
    text = number(value, unit, spec, suffix=suffix)
    if low is None or high is None or not (_finite(low) and _finite(high)):
        return text
    if min_width is not None and not high - low >= min_width:
        return text
    ends = [number(x, unit, spec, suffix=suffix and each) for x in (low, high)]
    return f"{text} [{ends[0]}, {ends[1]}]"


def estimate(
    est: HasInterval | None,
    unit: str = "share",
    spec: Spec = None,
    *,
    each: bool = False,
    min_width: float | None = None,
) -> str:
    """:func:`interval` of an estimate (``—`` for ``None`` or a value that is not finite)."""
    if est is None or not _finite(est.value):
        return "—"
    return interval(est.value, est.low, est.high, unit, spec, each=each, min_width=min_width)


# --------------------------------------------------------------------------- Markdown


class Template:
    """The prose of a report, kept in a Markdown file of named blocks and filled with
    :meth:`str.format`.

    A line ``<!-- name -->`` starts the block ``name``, which runs to the next such line (text
    before the first block is a comment). A block's lines are the report's lines, empty ones
    included: a block that ends with an empty line gives a last line ``""``. ``{field}`` is a
    :meth:`str.format` field, ``{{`` and ``}}`` are braces.

    Parameters
    ----------
    path : path-like
        The template file.

    Attributes
    ----------
    blocks : dict of str to str
        Every block's text, by name, its lines joined by ``"\n"`` (of a name given twice, the
        last block).
    names : list of str
        The blocks' names in the file's order, a name given twice listed twice.

    Raises
    ------
    KeyError
        From :meth:`lines` for an unknown block or a field not given.
    """

    _MARK = re.compile(r"^<!-- ([\w.]+) -->(?:\n|\Z)", re.M)

    def __init__(self, path: str | os.PathLike[str]) -> None:
        parts = self._MARK.split(Path(path).read_text())[1:]  # name, text, name, text, ...
        self.names: list[str] = parts[::2]
        self.blocks = {
            k: v.removesuffix("\n") for k, v in zip(parts[::2], parts[1::2], strict=True)
        }

    def lines(self, block: str, /, **fields: Any) -> list[str]:
        """Block ``block`` with its fields filled, line by line."""
        return self.blocks[block].format(**fields).split("\n")

    def text(self, block: str, /, **fields: Any) -> str:
        """Block ``block`` with its fields filled, as one string (a one-line block: that line)."""
        return self.blocks[block].format(**fields)

    def rows(self, block: str, /, **fields: Any) -> dict[str, str]:
        """Block ``block`` with its fields filled, one ``label: value`` a line (the label ends
        at the line's first ``": "``), by label: e.g. the paper's column of :class:`Setup`."""
        return {k: v for k, _, v in (x.partition(": ") for x in self.lines(block, **fields))}

    def cells(self, block: str, /, **fields: Any) -> list[str]:
        """One-line block ``block`` with its fields filled, split at ``" | "``: the cells of a
        Markdown table's row, e.g. its heading."""
        return self.text(block, **fields).split(" | ")

    def title(self, block: str) -> str:
        """The heading that starts block ``block``, without its ``#`` marks."""
        return self.blocks[block].split("\n", 1)[0].lstrip("#").strip()


# --------------------------------------------------------------------------- set-up table


@dataclass(frozen=True)
class Setup:
    """The configuration behind every number of a reproduction's report: the set-up table at the
    top of every ``report.md`` (:func:`setup_table`; issue 44, "the set-up beside every number").

    Attributes
    ----------
    trace : str
        The trace (or model) the workload comes from.
    window : str
        The part of it used: the time window, the sample, or the settings.
    servers : str
        The servers: their count and where it comes from.
    schedulers : sequence of str
        The schedulers (mechanisms) compared.
    seeds : sequence of int
        The seeds run.
    quick : bool
        ``--quick``: a small slice for a smoke test, not the paper's size.
    model_tol : str
        The model tolerance the claims use (in the quantity's units, or "none" and why).
    notes : sequence of (str, str)
        Further rows (label, value) a paper needs.
    paper : dict, optional
        The paper's set-up by row label (``trace``, ``window``, ``servers``, ``schedulers``,
        or a note's label): shown as a third column when given.
    """

    trace: str
    window: str
    servers: str
    schedulers: Sequence[str]
    seeds: Sequence[int]
    quick: bool
    model_tol: str
    notes: Sequence[tuple[str, str]] = ()
    paper: dict[str, str] | None = None


def _seed_range(seeds: Sequence[int]) -> str:
    s = sorted(int(x) for x in seeds)
    if not s:
        return "—"
    if s == list(range(s[0], s[-1] + 1)) and len(s) > 2:
        return f"{s[0]}-{s[-1]} ({len(s)})"
    return f"{', '.join(map(str, s))} ({len(s)})"


def setup_table(setup: Setup) -> list[str]:
    """The set-up table of a report: the configuration behind every number, built once for all
    five reproductions.

    Parameters
    ----------
    setup : Setup
        The reproduction's configuration.

    Returns
    -------
    list of str
        ``## Set-up`` and a Markdown table (rows: trace, window, servers, schedulers, seeds, run,
        model tolerance, then the notes; a ``paper`` column when ``setup.paper`` is given).
    """
    rows = [
        ("trace", setup.trace),
        ("window", setup.window),
        ("servers", setup.servers),
        ("schedulers", ", ".join(f"`{x}`" for x in setup.schedulers)),
        ("seeds", _seed_range(setup.seeds)),
        ("run", "quick (`--quick`: a smoke-test slice)" if setup.quick else "full"),
        ("model tolerance", setup.model_tol),
        *setup.notes,
    ]
    paper = setup.paper
    if paper is None:
        return ["## Set-up", "", *table(["set-up", "this run"], rows, escape=True)]
    beside = [(label, value, paper.get(label, "—")) for label, value in rows]
    return ["## Set-up", "", *table(["set-up", "this run", "paper"], beside, escape=True)]


# --------------------------------------------------------------------------- seed folders

#: A seed's folder under a reproduction's output: ``seed-<k>``.
_SEED_DIR = re.compile(r"^seed-(\d+)$")


def seed_dir(out: str | os.PathLike[str], seed: int) -> Path:
    """The folder of one seed's runs: ``out/seed-<seed>``."""
    return Path(out) / f"seed-{seed}"


def seed_folders(out: str | os.PathLike[str]) -> dict[int, Path]:
    """The ``seed-<k>`` folders of a reproduction (:func:`seed_dir`), by seed, in order."""
    root = Path(out)
    found = {}
    for d in root.iterdir() if root.is_dir() else []:
        m = _SEED_DIR.match(d.name)
        if m and d.is_dir():
            found[int(m.group(1))] = d
    return dict(sorted(found.items()))


# --------------------------------------------------------------------------- entry point

#: Default number of seeds of ``fairsim experiment`` and ``make experiment``/``reproduce-*``.
DEFAULT_SEEDS = 5


@dataclass(frozen=True)
class Options:
    """How a reproduction runs: the options of ``fairsim experiment``, which every
    ``experiment.run_experiment`` takes.

    Attributes
    ----------
    out : pathlib.Path
        Output folder (written in place; the command line wraps it in an atomic folder).
    shared : pathlib.Path, optional
        The folder holding ``traces/`` with the real trace samples (reproductions that need no
        trace ignore it).
    quick : bool
        A small version, for smoke tests.
    progress : bool
        Show progress bars.
    seeds : int
        Run seeds ``1 .. seeds`` (every numeric claim gets a 95 % interval over them; 1 gives a
        quick look without intervals).
    jobs : int, optional
        Worker processes for the seeds (default: one per core, at most one per seed).
    """

    out: Path
    shared: Path | None = None
    quick: bool = False
    progress: bool = True
    seeds: int = DEFAULT_SEEDS
    jobs: int | None = None


def reproduce(package: str, options: Options) -> Path:
    """Run a reproduction: its ``experiment.run_experiment``, then its ``report.write_report``.

    Parameters
    ----------
    package : str
        The reproduction's subpackage (e.g. ``"fairsim.experiments.psdsf"``).
    options : Options
        How to run it.

    Returns
    -------
    pathlib.Path
        The written ``report.md``.
    """
    experiment = importlib.import_module(f"{package}.experiment")
    report = importlib.import_module(f"{package}.report")
    run = experiment.run_experiment(options)
    return Path(report.write_report(Path(options.out), run))
