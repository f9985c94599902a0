"""Sizes this machine can hold: checks that depend on where a config runs, not on the config.

A config is valid or not wherever it is read (:mod:`fairsim.scenario.config`); whether its
sizes fit in this machine's memory is checked when it is about to run, by the pipeline
(:func:`fairsim.scenario.pipeline.prepare_scenario`) and by a local sweep before its first run
(:func:`fairsim.scenario.sweep.run_sweep`). :func:`check_limits` refuses, before anything is
allocated, a number of servers (``cluster.servers``, ``cluster.classes``), of generated or inline
tasks (``trace.n_tasks``, ``trace.users``) or of utilisation samples over the window whose
estimated memory exceeds the machine's physical memory.
"""

from __future__ import annotations

import math
import os
from typing import Any

from fairsim.errors import ConfigError
from fairsim.scenario.config import InlineTrace, RunConfig, SyntheticTrace

#: Rough peak memory of one unit of a run, in bytes (measured: a Table I pool with the Best-Fit
#: index, a synthetic workload and the engine's per-task columns, utilisation samples and their
#: copies into the result tables); used to refuse sizes that cannot fit before allocating.
BYTES_PER_SERVER = 300
BYTES_PER_TASK = 600
BYTES_PER_SAMPLE_AND_RESOURCE = 24


def memory_bytes() -> int:
    """Physical memory of this machine in bytes (the budget the size checks compare with)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 1 << 40


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PB"  # pragma: no cover


def check_memory(field: str, value: Any, what: str, needed: float) -> None:
    """Refuse a size whose estimated memory exceeds the machine's physical memory.

    Parameters
    ----------
    field : str
        Dotted config path named in the message.
    value : object
        The offending value.
    what : str
        What is being sized (``"servers"``, ``"tasks"``, ``"utilisation samples"``).
    needed : float
        Estimated bytes.

    Raises
    ------
    ValueError
        ``<field>: <value> <what> need about X of memory, more than this machine's Y``.
    """
    budget = memory_bytes()
    if needed > budget:
        raise ValueError(
            f"{field}: {value!r} {what} need about {_size(needed)} of memory (estimate), more "
            f"than this machine's {_size(budget)}"
        )


def check_limits(
    cfg: RunConfig,
    *,
    start_s: float | None = None,
    horizon_s: float | None = None,
    n_resources: int = 2,
) -> None:
    """Refuse a config whose sizes would not fit in this machine's memory.

    Parameters
    ----------
    cfg : RunConfig
    start_s, horizon_s : float, optional
        The simulated window in seconds, once known (the pipeline resolves it from the trace);
        default: ``trace.start_s`` and ``collect.horizon_s`` or ``trace.end_s``.
    n_resources : int
        Resources per utilisation sample.

    Raises
    ------
    ConfigError
        ``config: <field>: <value> <what> need about X of memory (estimate), more than this
        machine's Y``, naming ``cluster.servers``, ``cluster.classes``, ``trace.n_tasks``,
        ``trace.users`` or ``collect.utilization_interval_s``.
    """
    try:
        cl = cfg.cluster
        if cl.classes is not None:
            n = sum(c.count for c in cl.classes)
            check_memory("cluster.classes", n, "servers (in all)", n * BYTES_PER_SERVER)
        if cl.servers is not None:
            check_memory("cluster.servers", cl.servers, "servers", cl.servers * BYTES_PER_SERVER)
        trace = cfg.trace
        if isinstance(trace, SyntheticTrace):
            check_memory("trace.n_tasks", trace.n_tasks, "tasks", trace.n_tasks * BYTES_PER_TASK)
        if isinstance(trace, InlineTrace):
            n = sum(u.tasks or 0 for u in trace.users)
            check_memory("trace.users", n, "tasks (in all)", n * BYTES_PER_TASK)
        start = trace.start_s if start_s is None else start_s
        end = (cfg.collect.horizon_s or trace.end_s) if horizon_s is None else horizon_s
        if end is not None and math.isfinite(end) and end > start:
            dt = cfg.collect.utilization_interval_s
            samples = (end - start) / dt + 1
            needed = samples * (1 + n_resources) * BYTES_PER_SAMPLE_AND_RESOURCE
            if needed > memory_bytes():
                raise ValueError(
                    f"collect.utilization_interval_s: {dt:g} s gives {samples:.3g} samples over "
                    f"{end - start:g} s, which need about {_size(needed)} of memory (estimate), "
                    f"more than this machine's {_size(memory_bytes())}"
                )
    except ValueError as exc:
        raise ConfigError(f"config: {exc}") from None
