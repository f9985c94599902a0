"""Static allocation instances: the JSON input of ``fairsim solve`` (docs/mechanisms.md).

::

    {"resources": ["cpu", "mem", "bw"],
     "servers": [{"id": "s1", "capacity": [9, 12, 100]}, {"id": "s2", "capacity": [12, 12, 0]}],
     "users":   [{"id": "u1", "demand": [1, 2, 10], "weight": 1, "max_tasks": null,
                  "eligible": ["s1"]}]}

``weight`` (default 1), ``max_tasks`` (default unbounded) and ``eligible`` (default every server)
are optional. Every validation error is a :class:`InstanceError` whose one-line message names
the field (``users[0].demand`` ...) and the value.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fairsim.errors import FairsimError, read_input_text


class InstanceError(FairsimError, ValueError):
    """An allocation instance is malformed."""


class NumericalRangeError(InstanceError):
    """An instance's numbers are out of the range the exact solvers can answer reliably.

    Raised up front when a quantity every mechanism derives from the instance (pooled capacity,
    demand-to-capacity ratios, task counts) is not a normal float64 number (:func:`check_range`),
    and after a solve when the solver does not report an optimum or its answer fails the
    independent check (:func:`fairsim.schedulers.exact.verification.verify`). The message is one
    line: what is out of range and why.
    """


@dataclass(frozen=True)
class Instance:
    """A validated allocation instance.

    Attributes
    ----------
    resources : tuple of str
    server_ids, user_ids : tuple of str
    capacity : ndarray, shape (n_servers, n_resources)
    demand : ndarray, shape (n_users, n_resources)
        Per-task demand of each user.
    weight : ndarray, shape (n_users,)
    max_tasks : ndarray, shape (n_users,)
        ``inf`` where unbounded.
    eligible : ndarray of bool, shape (n_users, n_servers)
    """

    resources: tuple[str, ...]
    server_ids: tuple[str, ...]
    user_ids: tuple[str, ...]
    capacity: np.ndarray
    demand: np.ndarray
    weight: np.ndarray
    max_tasks: np.ndarray
    eligible: np.ndarray


#: Smallest positive normal float64; ratios below it lose precision (subnormal) or vanish.
_TINY = float(np.finfo(np.float64).tiny)
#: Largest ratio whose reciprocal is still a normal float64 (about 4.5e307).
_HUGE = 1.0 / _TINY


def check_range(inst: Instance) -> None:
    """Refuse an instance whose derived quantities overflow or underflow float64.

    Every mechanism computes the pooled capacity ``C_r = sum_l c[l, r]``, the per-task shares
    ``d[n, r] / C_r`` and their reciprocals (tasks that fit, ``c / d``), sums of task counts
    over servers and users, and weight fractions ``w_n / sum_m w_m``. Each must be a finite,
    normal float64 number (between 2.2e-308 and 4.5e307 for ratios, finite for sums): beyond that
    the arithmetic itself, before any solver, overflows to ``inf`` or loses every digit. Anything
    inside the range is left to the solver and the check after it.

    Raises
    ------
    NumericalRangeError
        Naming the field and the value.
    """
    cap, dem = inst.capacity, inst.demand
    with np.errstate(over="ignore", invalid="ignore"):
        pooled = cap.sum(axis=0)
    for r in np.flatnonzero(~np.isfinite(pooled)):
        raise NumericalRangeError(
            f"servers[*].capacity[{r}]: the total {inst.resources[r]!r} capacity over the servers "
            "overflows float64 (above 1.8e308); express the resource in larger units"
        )
    # every (user, resource) pair at once; the first bad pair in row-major order is named
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ratios = pooled[None, :] / dem
    bad = (dem > 0) & (pooled[None, :] > 0) & ~((ratios >= _TINY) & (ratios <= _HUGE))
    if bad.any():
        u, k = (int(i[0]) for i in np.nonzero(bad))
        raise NumericalRangeError(
            f"users[{u}].demand[{k}]: {dem[u, k]:g} per task against a total "
            f"{inst.resources[k]!r} capacity of {pooled[k]:g}: the ratio {ratios[u, k]:.3g} is "
            "outside float64's normal range (2.2e-308 to 4.5e307)"
        )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        most = np.where(dem > 0, pooled[None, :] / dem, np.inf).min(axis=1)
        total = float(np.minimum(most, inst.max_tasks).sum())
    if not np.isfinite(total):
        raise NumericalRangeError(
            "users: the users' task counts together overflow float64 (above 1.8e308)"
        )
    with np.errstate(over="ignore"):
        wsum = float(inst.weight.sum())
    if not np.isfinite(wsum):
        raise NumericalRangeError("users[*].weight: the weights' sum overflows float64")
    small = np.flatnonzero(inst.weight / wsum < _TINY)
    if small.size:
        n = int(small[0])
        raise NumericalRangeError(
            f"users[{n}].weight: {inst.weight[n]:g} is below 2.2e-308 of the weights' sum "
            f"{wsum:g} (float64 underflow)"
        )


def _number(value: Any, field: str, *, minimum: float = 0.0, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(f"{field}: {value!r} is not a number")
    v = float(value)
    if not math.isfinite(v) or v < minimum or (strict and v <= minimum):
        rel = ">" if strict else ">="
        raise InstanceError(f"{field}: {value!r} (expected a finite number {rel} {minimum:g})")
    return v


def _vector(value: Any, field: str, n: int) -> list[float]:
    if not isinstance(value, list):
        raise InstanceError(f"{field}: expected a list of {n} numbers, got {value!r}")
    if len(value) != n:
        raise InstanceError(f"{field}: has {len(value)} entries, expected {n} (one per resource)")
    return [_number(x, f"{field}[{k}]") for k, x in enumerate(value)]


def check_top_level(data: Any) -> list[str]:
    """Check an instance's top level (an object with ``resources``, ``servers``, ``users``).

    Returns
    -------
    list of str
        The resource names.

    Raises
    ------
    InstanceError
        For a non-object, an unknown key, or a missing or malformed ``resources`` list. The key
        ``violation`` is allowed and not read: it is what a counterexample file of ``fairsim
        properties`` says about its instance, which stays replayable with ``fairsim solve``.
    """
    if not isinstance(data, dict):
        raise InstanceError(f"instance: expected a JSON object, got {type(data).__name__}")
    for key in data:
        if key not in ("resources", "servers", "users", "violation"):
            raise InstanceError(f"instance: unknown key {key!r} (known: resources, servers, users)")
    resources = data.get("resources")
    if (
        not isinstance(resources, list)
        or not resources
        or not all(isinstance(r, str) for r in resources)
    ):
        raise InstanceError(f"resources: expected a non-empty list of names, got {resources!r}")
    return resources


def parse_servers(
    data: dict[str, Any], n_resources: int, kind: str = "server", kinds: str = ""
) -> tuple[list[str], list[list[float]]]:
    """The ``servers`` of an instance (checked by :func:`check_top_level`): ids and capacities.

    Parameters
    ----------
    data : dict
        The instance.
    n_resources : int
        Length of every capacity vector.
    kind, kinds : str
        What a server is, in the messages: ``"server"``, or ``"machine class"`` and ``"machine
        classes"`` for the UDRF instance (:mod:`fairsim.schedulers.exact.udrf`).

    Returns
    -------
    ids : list of str
    capacities : list of list of float
        One vector of ``n_resources`` numbers per server.

    Raises
    ------
    InstanceError
        For a missing or empty list, a malformed entry or capacity, or a duplicate id.
    """
    servers = data.get("servers")
    if not isinstance(servers, list) or not servers:
        listed = f" of {kinds}" if kinds else ""
        raise InstanceError(f"servers: expected a non-empty list{listed}, got {servers!r}")
    ids: list[str] = []
    caps = []
    for j, s in enumerate(servers):
        if not isinstance(s, dict) or "id" not in s or "capacity" not in s:
            raise InstanceError(f"servers[{j}]: expected an object with 'id' and 'capacity'")
        sid = str(s["id"])
        if sid in ids:
            raise InstanceError(f"servers[{j}].id: duplicate {kind} id {sid!r}")
        ids.append(sid)
        caps.append(_vector(s["capacity"], f"servers[{j}].capacity", n_resources))
    return ids, caps


def parse_instance(data: Any) -> Instance:
    """Validate an instance mapping.

    Raises
    ------
    InstanceError
        Naming the first invalid field.
    NumericalRangeError
        If the numbers overflow or underflow float64 in the mechanisms' arithmetic
        (:func:`check_range`).
    """
    resources = check_top_level(data)
    n_r = len(resources)
    sids, caps = parse_servers(data, n_r)
    users = data.get("users")
    if not isinstance(users, list) or not users:
        raise InstanceError(f"users: expected a non-empty list, got {users!r}")
    uids: list[str] = []
    dem, wts, mts, elig = [], [], [], []
    for i, u in enumerate(users):
        if not isinstance(u, dict) or "id" not in u or "demand" not in u:
            raise InstanceError(f"users[{i}]: expected an object with 'id' and 'demand'")
        for key in u:
            if key not in ("id", "demand", "weight", "max_tasks", "eligible"):
                raise InstanceError(f"users[{i}]: unknown key {key!r}")
        uid = str(u["id"])
        if uid in uids:
            raise InstanceError(f"users[{i}].id: duplicate user id {uid!r}")
        uids.append(uid)
        d = _vector(u["demand"], f"users[{i}].demand", n_r)
        if not any(x > 0 for x in d):
            raise InstanceError(f"users[{i}].demand: {u['demand']!r} is all zero")
        dem.append(d)
        wts.append(_number(u.get("weight", 1), f"users[{i}].weight", strict=True))
        mt = u.get("max_tasks")
        if mt is None:
            mts.append(math.inf)
        else:
            mts.append(_number(mt, f"users[{i}].max_tasks"))
        e = u.get("eligible")
        if e is None:
            elig.append([True] * len(sids))
        else:
            if not isinstance(e, list):
                raise InstanceError(
                    f"users[{i}].eligible: expected a list of server ids, got {e!r}"
                )
            for sid in e:
                if str(sid) not in sids:
                    raise InstanceError(f"users[{i}].eligible: unknown server id {sid!r}")
            es = {str(x) for x in e}
            elig.append([sid in es for sid in sids])
    inst = Instance(
        resources=tuple(resources),
        server_ids=tuple(sids),
        user_ids=tuple(uids),
        capacity=np.array(caps, dtype=np.float64),
        demand=np.array(dem, dtype=np.float64),
        weight=np.array(wts),
        max_tasks=np.array(mts),
        eligible=np.array(elig, dtype=bool),
    )
    check_range(inst)
    return inst


def read_instance_json(path: str | Path) -> Any:
    """The JSON content of an instance file, unvalidated.

    Raises
    ------
    InstanceError
        If the file is missing, a directory, not UTF-8, not JSON, or nested too deeply.
    """
    p = Path(path)
    text = read_input_text(p, "instance", "JSON file", InstanceError)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InstanceError(f"instance: {p} is not valid JSON (line {exc.lineno})") from None
    except RecursionError:
        raise InstanceError(f"instance: {p} is nested too deeply to be an instance") from None


def load_instance(path: str | Path) -> Instance:
    """Read and validate an instance file.

    Raises
    ------
    InstanceError
        If the file is missing, is not JSON, or is invalid.
    """
    return parse_instance(read_instance_json(path))
