"""Schedulers that decide in periods: the period grid and the parameters they share.

Dynamic DRF (:mod:`fairsim.schedulers.dynamic_drf`, Fikioris et al.'s time step), distributed
PS-DSF (:mod:`fairsim.schedulers.psdsf_distributed`, the period T of Khamse-Ashari et al.,
Section III-D) and the job-level schedulers of :mod:`fairsim.schedulers.jobfit` (UDRF,
Section V: "Resource scheduling decisions are made on a per-second basis") place tasks only at
multiples of ``period_s`` seconds from time 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from fairsim.simulator.scheduler import Scheduler


def next_period_start(now: float, period_s: float) -> float:
    """The first multiple of ``period_s`` after ``now``.

    Parameters
    ----------
    now : float
        The engine's clock, seconds.
    period_s : float
        The period, seconds (> 0).

    Returns
    -------
    float
        ``(floor(now / period_s + 1e-9) + 1) * period_s``: a ``now`` within ``1e-9`` periods
        below a period start counts as that start, so a tick at ``k * period_s`` that lands a
        rounding error early is not followed by a second tick at the same start. Always after
        ``now``, even when ``period_s`` is below the clock's resolution there.
    """
    t = (math.floor(now / period_s + 1e-9) + 1) * period_s
    return t if t > now else _later(now, t, period_s)


def next_multiple_after(now: float, step: float) -> float:
    """The first multiple of ``step`` strictly after ``now``: ``(floor(now / step) + 1) * step``,
    or one ``step`` more when rounding puts that at or before ``now`` (the engine needs a wake-up
    later than its clock). ``now`` and ``step`` as ``now`` and ``period_s`` of
    :func:`next_period_start`."""
    t = (math.floor(now / step) + 1) * step
    return t if t > now else _later(now, t, step)


def _later(now: float, t: float, step: float) -> float:
    """A wake-up strictly after ``now`` when the multiple ``t`` rounded to ``now`` or before:
    ``t + step``, or the float right after ``now`` when ``step`` is below the clock's resolution
    there (``now + step == now``): the engine's clock then still moves on (the scenario refuses
    a period that small relative to the window,
    :data:`~fairsim.scenario.config.MAX_SCHEDULER_TICKS`)."""
    t += step
    return t if t > now else math.nextafter(now, math.inf)


class EveryPeriod(Scheduler):
    """Base of a scheduler that takes the user weights, their eligible servers and a period
    ``period_s`` > 0 (its only parameter of its own).

    Parameters
    ----------
    weights : mapping of int to float, optional
        Weight w_i of a user code (default 1 for every user).
    eligible : mapping of int to ndarray of bool, optional
        Per-user mask of shape ``(n_servers,)`` of the servers the user's tasks may run on
        (placement constraints). Users not in the mapping may use every server.
    period_s : float
        Length of a period, seconds (> 0).
    """

    period_parameter: ClassVar[str | None] = "period_s"

    def __init__(
        self,
        *,
        weights: Mapping[int, float] | None = None,
        eligible: Mapping[int, np.ndarray] | None = None,
        period_s: Annotated[float, Field(gt=0)] = 1.0,
    ) -> None:
        self.weights = weights
        self.eligible = eligible
        self.period_s = period_s
