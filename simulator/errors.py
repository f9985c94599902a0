"""Exceptions raised by the simulator. Each message is one line naming the offending value."""

from __future__ import annotations


class FairsimError(Exception):
    """Base class of the errors fairsim reports to users as a one-line message."""


class ConfigError(FairsimError, ValueError):
    """A scenario configuration is invalid (unknown key, bad value, unknown scheduler)."""


class PlacementError(FairsimError, RuntimeError):
    """A scheduler proposed a placement that the engine cannot commit."""
