"""The papers' reproductions, registered by name: ``fairsim experiment NAME`` and the
``make reproduce-*`` targets dispatch through this table (one entry point each, no if-chain).

Every reproduction subpackage (:mod:`fairsim.experiments.drfh`, ``psdsf``, ``udrf``, ``lmm_mms``,
``bonald_roberts``) has the same shape: ``paper.py`` (the paper's numbers, its statements as
:class:`~fairsim.experiments.claims.Statement` records, our thresholds), ``experiment.py`` (the
runs, one seed at a time), ``claims.py`` (one claim of :mod:`fairsim.experiments.claims` per
statement), ``figures.py`` (drawing) and ``report.py`` (``claims.json`` and ``report.md``); some
have a ``numbers.py`` between the runs and the claims. They share one entry point,
:func:`fairsim.experiments.kit.reproduce`: ``experiment.run_experiment(options)`` runs seeds
``1 .. seeds`` over ``jobs`` worker processes (:class:`fairsim.experiments.kit.Options`) and writes
the result files into ``out``, then ``report.write_report(out, run)`` writes the figures,
``claims.json`` and ``report.md``.
"""

from __future__ import annotations

import importlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from fairsim.errors import ConfigError, unknown_key
from fairsim.experiments import kit
from fairsim.experiments.claims import seed_list


@dataclass(frozen=True)
class Reproduction:
    """One paper's evaluation, reproduced (what it reproduces: its subpackage's docstring and its
    documentation page).

    Attributes
    ----------
    name : str
        Its command-line name (``fairsim experiment NAME``).
    package : str
        Its subpackage (:func:`fairsim.experiments.kit.reproduce` runs its experiment and
        report).
    docs : str
        The documentation page of its results.
    """

    name: str
    package: str
    docs: str


#: Every reproduction, by name: the only list of them.
REPRODUCTIONS: dict[str, Reproduction] = {
    r.name: r
    for r in (
        Reproduction("drfh-google", "fairsim.experiments.drfh", "docs/drfh-google.md"),
        Reproduction("psdsf", "fairsim.experiments.psdsf", "docs/psdsf.md"),
        Reproduction("udrf", "fairsim.experiments.udrf", "docs/udrf.md"),
        Reproduction("lmm-mms", "fairsim.experiments.lmm_mms", "docs/lmm-mms.md"),
        Reproduction(
            "bonald-roberts", "fairsim.experiments.bonald_roberts", "docs/bonald-roberts.md"
        ),
    )
}


def reproduce(name: str, options: kit.Options) -> Path:
    """Run the reproduction registered under ``name``.

    Parameters
    ----------
    name : str
        A key of :data:`REPRODUCTIONS`.
    options : fairsim.experiments.kit.Options
        How to run it.

    Returns
    -------
    pathlib.Path
        The written ``report.md``.

    Raises
    ------
    fairsim.errors.ConfigError
        For an unknown name (the message suggests the closest known one), or ``seeds < 1``.
    """
    seed_list(options.seeds)  # refuses seeds < 1 before anything runs
    spec = REPRODUCTIONS.get(name)
    if spec is None:
        raise ConfigError(f"experiment: {unknown_key(name, REPRODUCTIONS)}")
    return kit.reproduce(spec.package, options)


def _statement_keys(name: str) -> frozenset[str]:
    """The keys of the statements the reproduction ``name`` checks (its ``paper.STATEMENTS``)."""
    paper = importlib.import_module(f"{REPRODUCTIONS[name].package}.paper")
    return frozenset(s.key for s in paper.STATEMENTS)


def holds_reproduction(folder: str | os.PathLike[str], name: str) -> bool:
    """Whether ``folder`` holds an earlier run of the reproduction ``name``: the folder
    ``fairsim experiment NAME --out`` may replace without ``--overwrite``.

    Such a folder has the ``report.md`` and ``claims.json`` every reproduction writes, and the
    claims' ids (each starts with the key of the paper statement it checks, ``table2.slots-10``)
    are mostly ``name``'s: more of them name one of its statements than one of any other
    reproduction's (a few keys, ``fig4``, are shared between papers).

    Parameters
    ----------
    folder : path-like
    name : str
        A key of :data:`REPRODUCTIONS`.

    Returns
    -------
    bool
        False for a missing or unreadable ``claims.json`` or ``report.md``, a ``claims.json``
        that is not a list of claims, and another reproduction's folder.
    """
    p = Path(folder)
    try:
        if not (p / "report.md").is_file():
            return False
        data = json.loads((p / "claims.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, list):
        return False
    keys = [
        c["id"].split(".", 1)[0]
        for c in data
        if isinstance(c, dict) and isinstance(c.get("id"), str)
    ]
    counts = {n: sum(k in _statement_keys(n) for k in keys) for n in REPRODUCTIONS}
    best = max(counts.values())
    return best > 0 and counts[name] == best and list(counts.values()).count(best) == 1
