"""Static allocations: ``fairsim solve`` and ``fairsim.solve``.

One function, :func:`solve`, allocates the users of an instance (servers, users' demand vectors,
optional weights, task caps and eligible servers) with one mechanism and returns the ``fairsim
solve`` JSON contract as a dict. An exact mechanism (:data:`fairsim.schedulers.exact.EXACT`)
returns fractional task counts; an online heuristic (a registered scheduler) runs as static
progressive filling of indivisible tasks (:mod:`fairsim.schedulers.static_fill`) and returns
integer counts. ``udrf`` takes an instance of jobs over machine classes
(:mod:`fairsim.schedulers.exact.udrf`). The command line calls this function.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fairsim.errors import ConfigError, FairsimError
from fairsim.schedulers.exact import EXACT, JOB_EXACT, solve_exact_json
from fairsim.schedulers.exact.instance import Instance, InstanceError, load_instance, parse_instance
from fairsim.schedulers.exact.udrf import JobInstance, load_job_instance, parse_job_instance

#: PS-DSF's multiplexing models (PS-DSF paper, eqs. 9 and 10).
SHARING = ("rdm", "tdm")

InstanceLike = Mapping[str, Any] | str | os.PathLike[str] | Instance | JobInstance


def _instance(instance: InstanceLike, jobs: bool) -> Any:
    """The validated instance: a mapping (the JSON contract), a JSON file, or a parsed one."""
    if isinstance(instance, Instance | JobInstance):
        if jobs != isinstance(instance, JobInstance):
            want = "a jobs instance (JobInstance)" if jobs else "an Instance"
            got = type(instance).__name__
            raise InstanceError(f"instance: this mechanism takes {want}, got {got}")
        return instance
    if isinstance(instance, str | os.PathLike):
        path = Path(instance)
        return load_job_instance(path) if jobs else load_instance(path)
    if isinstance(instance, Mapping):
        return parse_job_instance(dict(instance)) if jobs else parse_instance(dict(instance))
    raise InstanceError(
        "instance: expected a mapping (the JSON contract), a JSON file path or a parsed "
        f"instance, got {type(instance).__name__}"
    )


def solve(
    instance: InstanceLike,
    mechanism: str,
    *,
    sharing: str | None = None,
    online: bool = False,
) -> dict[str, Any]:
    """Allocate the users of ``instance`` with ``mechanism``: the ``fairsim solve`` output.

    Parameters
    ----------
    instance : mapping, path-like or Instance
        ``{"resources": [...], "servers": [{"id", "capacity"}], "users": [{"id", "demand",
        "weight", "max_tasks", "eligible"}]}`` (the last three optional), a JSON file holding
        it, or a parsed :class:`~fairsim.schedulers.exact.instance.Instance`. For ``udrf``, an
        instance of jobs over machine classes (:mod:`fairsim.schedulers.exact.udrf`).
    mechanism : str
        An exact mechanism (``drf``, ``drfh``, ``c-drfh``, ``tsf``, ``af``, ``lmm-mms``,
        ``psdsf``, ``pf``, ``bmf``, ``udrf``) or an online heuristic (a registered scheduler
        name: ``ff-drfh``, ``bf-drfh``, ``slots-<S>``, ...).
    sharing : {"rdm", "tdm"}, optional
        PS-DSF's multiplexing model (PS-DSF paper, eqs. 9 and 10); default ``"rdm"``. Only the
        exact ``psdsf`` has it: given with another mechanism (or with ``online``), it is an error.
    online : bool
        For a name that is both an exact mechanism and an online scheduler (``drf``,
        ``c-drfh``, ``tsf``, ``af``, ``pf``, ``bmf``, ``lmm-mms``, ``udrf``): run the online
        scheduler as static progressive filling of integer tasks instead of the exact
        allocation.

    Returns
    -------
    dict
        ``{"mechanism", "users", "servers", "tasks", "dominant_shares"}``: ``tasks[i][l]`` is
        the number of tasks of user i on server l (fractional for an exact mechanism, rounded to
        the decimals the check after the solve resolves,
        :func:`~fairsim.schedulers.exact.task_decimals`; a pooled mechanism, ``drf``, ``af``,
        ``bmf``, has the one server ``"pool"``); ``dominant_shares[i]`` is user i's global
        dominant share (:func:`~fairsim.schedulers.exact.dominant_shares`, 6 decimals). An
        online heuristic adds ``"online": true``, ``total_tasks`` and ``max_tasks``; ``udrf``
        gives the runs of every job.

    Raises
    ------
    fairsim.errors.ConfigError
        For an unknown mechanism (suggesting the closest name) or ``sharing``, ``sharing`` given
        with a mechanism that has no such option, or ``online`` with a name that has no online
        scheduler.
    fairsim.schedulers.exact.instance.InstanceError
        For an invalid instance, naming the first invalid field (negative or non-numeric
        capacity, a demand vector of the wrong length, an unknown server id in ``eligible``,
        an all-zero demand, ...), or numbers out of the solvers' range.

    Examples
    --------
    The DRF paper's worked example (Ghodsi et al., Section 4): 9 CPUs and 18 GB, user A's
    tasks need <1 CPU, 4 GB>, user B's <3 CPUs, 1 GB>; DRF gives A 3 tasks and B 2.

    >>> import fairsim
    >>> out = fairsim.solve({"resources": ["cpu", "mem"],
    ...                      "servers": [{"id": "s", "capacity": [9, 18]}],
    ...                      "users": [{"id": "A", "demand": [1, 4]},
    ...                                {"id": "B", "demand": [3, 1]}]}, "drf")
    >>> out["tasks"], out["dominant_shares"]
    ([[3.0], [2.0]], [0.666667, 0.666667])
    """
    from fairsim.schedulers.registry import available, validate_name
    from fairsim.schedulers.static_fill import solve_heuristic, udrf_online_json

    if sharing is not None:
        if sharing not in SHARING:
            raise ConfigError(f"sharing: {sharing!r} (expected one of {', '.join(SHARING)})")
        if mechanism != "psdsf" or online:
            what = f"{mechanism} --online" if online else str(mechanism)
            raise ConfigError(
                f"sharing: {what!r} has no sharing option (only the exact psdsf takes rdm or tdm, "
                "PS-DSF paper eqs. 9 and 10)"
            )
    if online and mechanism in EXACT and mechanism not in available():
        raise ConfigError(
            f"online: {mechanism!r} has no online scheduler of that name (online: "
            f"{', '.join(n for n in available() if n in EXACT or n in JOB_EXACT)}; the online "
            "DRFH heuristics are ff-drfh and bf-drfh)"
        )
    if mechanism in JOB_EXACT:
        jobs = _instance(instance, jobs=True)
        return udrf_online_json(jobs) if online else JOB_EXACT[mechanism][1](jobs)
    if mechanism in EXACT and not online:
        return solve_exact_json(mechanism, _instance(instance, jobs=False), sharing or "rdm")
    try:
        validate_name(mechanism)
    except FairsimError:
        known = available()
        names = [*EXACT, *JOB_EXACT, *(k for k in known if "<" not in k), "slots-14"]
        close = difflib.get_close_matches(str(mechanism), names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"unknown scheduler {mechanism!r}{hint} (known: exact "
            f"{', '.join([*EXACT, *JOB_EXACT])}; heuristic {', '.join(known)})"
        ) from None
    return solve_heuristic(mechanism, _instance(instance, jobs=False))
