"""fairsim schedulers: online policies (indivisible tasks) and static allocators.

A progressive-filling scheduler is a :class:`ProgressiveFilling` subclass that names two parts:
its user selection, a :class:`UserOrder` (which waiting user goes next, by a key read from the
scheduler's :class:`FillingState`; :mod:`fairsim.schedulers.user_selection`), and its placement,
a :class:`ServerChoice` (on which server its head task goes; :mod:`fairsim.schedulers.placement`).
"""

from fairsim.schedulers.placement import BestFit, FirstFit, ServerChoice
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.registry import (
    available,
    make_scheduler,
    register_scheduler,
    validate_name,
)
from fairsim.schedulers.user_selection import (
    DominantShare,
    FillingState,
    PooledDominantShare,
    UserOrder,
)
from fairsim.simulator.scheduler import Scheduler

__all__ = [
    "BestFit",
    "DominantShare",
    "FillingState",
    "FirstFit",
    "PooledDominantShare",
    "ProgressiveFilling",
    "Scheduler",
    "ServerChoice",
    "UserOrder",
    "available",
    "make_scheduler",
    "register_scheduler",
    "validate_name",
]
