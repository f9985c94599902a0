"""fairsim schedulers: online policies (indivisible tasks) and static allocators."""

from schedulers.base import Scheduler
from schedulers.registry import available, make_scheduler, validate_name

__all__ = ["Scheduler", "available", "make_scheduler", "validate_name"]
