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
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fairsim.errors import ConfigError, FairsimError
from fairsim.schedulers.exact import EXACT, JOB_EXACT, refuse_queues, solve_exact_json
from fairsim.schedulers.exact.instance import Instance, InstanceError, load_instance, parse_instance
from fairsim.schedulers.exact.udrf import JobInstance, load_job_instance, parse_job_instance

#: PS-DSF's multiplexing models (PS-DSF paper, eqs. 9 and 10).
SHARING = ("rdm", "tdm")

InstanceLike = Mapping[str, Any] | str | os.PathLike[str] | Instance | JobInstance


def online_heuristics() -> tuple[str, ...]:
    """The online schedulers :func:`solve` runs as static progressive filling, as ``--help``
    lists them (alias forms such as ``slots-<S>``).

    A scheduler that needs more than an instance to run (:attr:`Registration.requires
    <fairsim.schedulers.registry.Registration>`: ``recorded`` replays a trace's recorded
    placements) is left out; :func:`solve` refuses it.

    Returns
    -------
    tuple of str
    """
    from fairsim.schedulers.registry import registrations

    out: list[str] = []
    for r in registrations():
        if r.requires is None:
            out.extend(r.alias.forms if r.alias is not None else (r.name,))
    return tuple(out)


def _refuse_replays(mechanism: str) -> None:
    """Refuse a registered scheduler that needs more than an instance (``recorded``)."""
    from fairsim.schedulers.registry import registrations

    for r in registrations():
        if r.requires is not None and r.name == mechanism:
            raise ConfigError(
                f"mechanism: {mechanism!r} replays a trace and needs {r.requires}; a static "
                "instance has none (run it with fairsim run)"
            )


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
        "weight", "max_tasks", "eligible", "queue"}], "queues": [...]}`` (the last four and
        ``queues`` optional; only ``hdrf`` reads the queue tree, the other mechanisms refuse it),
        a JSON file holding it, or a parsed
        :class:`~fairsim.schedulers.exact.instance.Instance`. For ``udrf``, an instance of jobs
        over machine classes (:mod:`fairsim.schedulers.exact.udrf`).
    mechanism : str
        An exact mechanism (``drf``, ``drfh``, ``c-drfh``, ``tsf``, ``af``, ``lmm-mms``,
        ``psdsf``, ``pf``, ``bmf``, ``udrf``, ``hdrf``) or an online heuristic (a registered
        scheduler name: ``ff-drfh``, ``bf-drfh``, ``slots-<S>``, ...).
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
        the number of tasks of user i on server l (a pooled mechanism, ``drf``, ``af``,
        ``bmf``, has the one server ``"pool"``); ``dominant_shares[i]`` is user i's global
        dominant share of those counts (:func:`~fairsim.schedulers.exact.dominant_shares`).
        Both at full float precision: an exact mechanism's counts are the verified solver
        output, snapped only to a bound the check proves (a user's ``max_tasks``, 0) and never
        above a capacity (``tasks`` times the demands sums to at most each capacity, in float;
        :func:`~fairsim.schedulers.exact.snap.printed_allocation`). An online heuristic gives
        integer counts and adds ``"online": true``, ``total_tasks`` and ``max_tasks`` (the
        bound in whole tasks that the fill used, ``floor(max_tasks)``); ``udrf`` gives the runs
        of every job. Rounded for people: :func:`solve_table`.

    Raises
    ------
    fairsim.errors.ConfigError
        For an unknown mechanism (suggesting the closest name) or ``sharing``, ``sharing`` given
        with a mechanism that has no such option, ``online`` with a name that has no online
        scheduler, or a scheduler that needs more than an instance (``recorded`` replays a
        trace's recorded placements; :func:`online_heuristics` leaves it out).
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
    ([[3.0], [2.0]], [0.6666666666666666, 0.6666666666666666])

    The same answer for people (``fairsim solve drf INSTANCE.json --format table``):

    >>> print(solve_table(out), end="")
    drf (tasks of each user on each server)
    user   pool  total  dominant share
    A     3.000  3.000          0.6667
    B     2.000  2.000          0.6667
    Rounded for reading: counts to 3 decimals (0 means none at all), dominant shares to 4 decimals;
    --format json gives every digit.
    """
    from fairsim.schedulers.registry import validate_name
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
    known = online_heuristics()
    if online and mechanism in EXACT and mechanism not in known:
        raise ConfigError(
            f"online: {mechanism!r} has no online scheduler of that name (online: "
            f"{', '.join(n for n in known if n in EXACT or n in JOB_EXACT)}; the online "
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
        names = [*EXACT, *JOB_EXACT, *(k for k in known if "<" not in k), "slots-14"]
        close = difflib.get_close_matches(str(mechanism), names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ConfigError(
            f"unknown scheduler {mechanism!r}{hint} (known: exact "
            f"{', '.join([*EXACT, *JOB_EXACT])}; heuristic {', '.join(known)})"
        ) from None
    _refuse_replays(mechanism)
    inst = _instance(instance, jobs=False)
    refuse_queues(mechanism, inst)  # the online heuristics allocate the users as one flat set
    return solve_heuristic(mechanism, inst)


#: Decimals of a task count in :func:`solve_table` (the JSON keeps every digit).
TABLE_TASK_DECIMALS = 3
#: Decimals of a dominant share in :func:`solve_table`.
TABLE_SHARE_DECIMALS = 4
#: Most server columns :func:`solve_table` shows; beyond it, only the servers holding tasks.
TABLE_SERVERS = 12


def _cell(v: float | int) -> str:
    """A task count for people: an int as it is, ``0`` for an exact zero, else 3 decimals."""
    if isinstance(v, int):
        return str(v)
    if v == 0:
        return "0"
    text = f"{v:.{TABLE_TASK_DECIMALS}f}"
    return text.lstrip("-") if float(text) == 0 else text  # no "-0.000"


def _grid(header: list[str], rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell: the first left-aligned, the others right-aligned."""
    width = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    return [
        "  ".join(
            c.ljust(w) if k == 0 else c.rjust(w)
            for k, (c, w) in enumerate(zip(r, width, strict=True))
        )
        for r in [header, *rows]
    ]


def solve_table(result: Mapping[str, Any]) -> str:
    """A :func:`solve` result as a table for people (``fairsim solve --format table``).

    One row per user: its tasks on each server, its total and its dominant share. Rounded for
    reading: fractional counts to :data:`TABLE_TASK_DECIMALS` decimals (an exact zero prints
    ``0``), whole counts (online heuristics) as they are, totals from the unrounded counts
    (``math.fsum``), dominant shares to :data:`TABLE_SHARE_DECIMALS` decimals; the last line
    states this rule. With more than :data:`TABLE_SERVERS` servers, only those holding tasks
    are shown (the line above the rule says how many are left out), and if still more, none.
    The JSON (:func:`solve`, ``--format json``) keeps every digit.

    Parameters
    ----------
    result : mapping
        A :func:`solve` result (``mechanism``, ``users``, ``servers``, ``tasks``,
        ``dominant_shares``).

    Returns
    -------
    str
        Lines ending in a newline.
    """
    tasks = result["tasks"]
    servers = list(result["servers"])
    cols = list(range(len(servers)))
    note = ""
    if len(cols) > TABLE_SERVERS:
        cols = [k for k in cols if any(row[k] != 0 for row in tasks)]
        note = f"{len(servers) - len(cols)} of {len(servers)} servers hold no tasks, not shown"
        if len(cols) > TABLE_SERVERS:
            note = f"{len(cols)} servers hold tasks: per-server counts in --format json"
            cols = []
    integer = all(isinstance(v, int) for row in tasks for v in row)
    rows = []
    for user, row, share in zip(result["users"], tasks, result["dominant_shares"], strict=True):
        total: float | int = sum(row) if integer else math.fsum(row)
        rows.append(
            [
                str(user),
                *(_cell(row[k]) for k in cols),
                _cell(total),
                f"{share:.{TABLE_SHARE_DECIMALS}f}",
            ]
        )
    kind = "online, whole tasks" if result.get("online") else "tasks"
    lines = [f"{result['mechanism']} ({kind} of each user on each server)"]
    lines += _grid(["user", *(servers[k] for k in cols), "total", "dominant share"], rows)
    if note:
        lines.append(note)
    counts = (
        "counts are whole tasks"
        if integer
        else f"counts to {TABLE_TASK_DECIMALS} decimals (0 means none at all)"
    )
    lines.append(
        f"Rounded for reading: {counts}, dominant shares to {TABLE_SHARE_DECIMALS} decimals;"
    )
    lines.append("--format json gives every digit.")
    return "\n".join(lines) + "\n"


def compare_table(outs: list[Mapping[str, Any]], gap: Mapping[str, Any]) -> str:
    """``fairsim solve --compare A,B --format table``: both allocations (:func:`solve_table`)
    and each user's totals and their gap ``B - A``, rounded as :func:`solve_table` rounds.

    Parameters
    ----------
    outs : list of two mappings
        The :func:`solve` results of A and B.
    gap : mapping
        ``{"users", "total": {A: [...], B: [...]}, "gap": [...]}``, as ``--compare`` prints it.

    Returns
    -------
    str
    """
    a, b = (str(o["mechanism"]) for o in outs)
    ta, tb = gap["total"][a], gap["total"][b]
    rows = [
        [str(u), _cell(x), _cell(y), _cell(g)]
        for u, x, y, g in zip(gap["users"], ta, tb, gap["gap"], strict=True)
    ]
    lines = [solve_table(outs[0]), solve_table(outs[1]), f"total tasks per user, gap {b} - {a}"]
    lines += _grid(["user", a, b, "gap"], rows)
    return "\n".join(lines) + "\n"
