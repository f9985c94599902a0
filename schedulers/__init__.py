"""fairsim schedulers: online policies (indivisible tasks) and static allocators."""

from fairsim.schedulers.registry import (
    available,
    make_scheduler,
    register_scheduler,
    validate_name,
)
from fairsim.simulator.scheduler import Scheduler

__all__ = ["Scheduler", "available", "make_scheduler", "register_scheduler", "validate_name"]
