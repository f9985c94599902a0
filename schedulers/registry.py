"""Names of the registered online schedulers and how to build them.

Names follow ``../shared/DESIGN.md`` ("Config"): ``slots-<S>`` (optionally ``slots-<S>-single`` or
``slots-<S>-cpu`` for the other slot models of :class:`fairsim.schedulers.slots.Slots`),
``ff-drfh`` and ``bf-drfh``, and the online baselines of :mod:`fairsim.schedulers.online_baselines`
(``drf``,
``c-drfh``, ``tsf``, ``af``, ``pf``, ``bmf``, ``lmm-mms``), distributed PS-DSF ``psdsf``
(:mod:`fairsim.schedulers.psdsf_distributed`), online UDRF ``udrf``
(:mod:`fairsim.schedulers.udrf_online`), the UDRF paper's
Section V DRF baseline ``drf-lockstep`` (:mod:`fairsim.schedulers.drf_lockstep`: a user's jobs
advance
together, one instance each) and its task-level variant ``drf-classes``
(:mod:`fairsim.schedulers.drf_classes`). The table below is the only place a scheduler is
registered; it is
not mutated at run time.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fairsim.errors import ConfigError
from fairsim.schedulers.drf_classes import DRFClasses
from fairsim.schedulers.drf_lockstep import DRFLockstep
from fairsim.schedulers.drfh import BestFitDRFH, FirstFitDRFH
from fairsim.schedulers.online_baselines import AF, BMF, CDRFH, DRF, LMMMMS, PF, TSF
from fairsim.schedulers.psdsf_distributed import DistributedPSDSF
from fairsim.schedulers.slots import Slots
from fairsim.schedulers.udrf_online import UDRF
from fairsim.simulator.scheduler import Scheduler

_FIXED: dict[str, Callable[..., Scheduler]] = {
    "ff-drfh": FirstFitDRFH,
    "bf-drfh": BestFitDRFH,
    "drf": DRF,
    "c-drfh": CDRFH,
    "tsf": TSF,
    "af": AF,
    "pf": PF,
    "bmf": BMF,
    "lmm-mms": LMMMMS,
    "psdsf": DistributedPSDSF,
    "drf-classes": DRFClasses,
    "drf-lockstep": DRFLockstep,
    "udrf": UDRF,
}
_SLOTS = re.compile(r"^slots-(\d+)(?:-(multi|single|cpu))?$")

#: Names shown in error messages and ``fairsim run --help`` (slot counts are examples).
KNOWN = (
    "slots-<S>",
    "slots-<S>-single",
    "slots-<S>-cpu",
    "ff-drfh",
    "bf-drfh",
    "drf",
    "c-drfh",
    "tsf",
    "af",
    "pf",
    "bmf",
    "lmm-mms",
    "psdsf",
    "drf-classes",
    "drf-lockstep",
    "udrf",
)

#: The online baselines of :mod:`fairsim.schedulers.online_baselines` (issue #5); each shares its
# name with an exact
#: mechanism of :data:`fairsim.schedulers.exact.EXACT` (``fairsim solve NAME --online`` runs this
# one).
ONLINE_BASELINES = ("drf", "c-drfh", "tsf", "af", "pf", "bmf", "lmm-mms")


def available() -> tuple[str, ...]:
    """Registered scheduler names (``slots-<S>`` stands for any positive S)."""
    return KNOWN


def validate_name(name: str) -> str:
    """Return ``name`` if it names a registered scheduler.

    Raises
    ------
    ConfigError
        If it does not; the message suggests the closest known name.
    """
    if name in _FIXED:
        return name
    m = _SLOTS.match(name)
    if m and int(m.group(1)) >= 1:
        return name
    candidates = [*_FIXED, "slots-14", "slots-14-single", "slots-14-cpu"]
    close = difflib.get_close_matches(name, candidates, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise ConfigError(f"unknown scheduler {name!r}{hint} (known: {', '.join(KNOWN)})")


def make_scheduler(
    name: str,
    *,
    weights: Mapping[int, float] | None = None,
    eligible: Mapping[int, np.ndarray] | None = None,
    bounds: Mapping[int, float] | None = None,
) -> Scheduler:
    """Build the scheduler registered under ``name``.

    Parameters
    ----------
    name : str
        A registered name (see :func:`available`).
    weights, eligible
        Passed to the scheduler (see
        :class:`fairsim.schedulers.progressive_filling.ProgressiveFilling`).
    bounds : mapping of int to float, optional
        Task bound per user, for ``lmm-mms`` only
        (:class:`fairsim.schedulers.online_baselines.LMMMMS`); ignored
        by the other schedulers.

    Raises
    ------
    ConfigError
        For an unknown name.
    """
    validate_name(name)
    kw: dict[str, Any] = {"weights": weights, "eligible": eligible}
    if name == "lmm-mms":
        kw["bounds"] = bounds
    if name in _FIXED:
        return _FIXED[name](**kw)
    m = _SLOTS.match(name)
    assert m is not None
    return Slots(slots=int(m.group(1)), model=m.group(2) or "multi", **kw)
