"""fairsim schedulers: online policies (indivisible tasks) and static allocators.

A progressive-filling scheduler is a :class:`ProgressiveFilling` subclass that names two parts
(:mod:`fairsim.schedulers.filling_parts`): a :class:`UserOrder` (which waiting user goes next)
and a :class:`ServerChoice` (on which server its head task goes).
"""

from fairsim.schedulers.filling_parts import (
    BestFit,
    DominantShare,
    FirstFit,
    PooledDominantShare,
    ServerChoice,
    UserOrder,
)
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.registry import (
    available,
    make_scheduler,
    register_scheduler,
    validate_name,
)
from fairsim.simulator.scheduler import Scheduler

__all__ = [
    "BestFit",
    "DominantShare",
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
