"""Static allocation instances: the JSON input of ``fairsim solve`` (docs/mechanisms.md).

::

    {"resources": ["cpu", "mem", "bw"],
     "servers": [{"id": "s1", "capacity": [9, 12, 100]}, {"id": "s2", "capacity": [12, 12, 0]}],
     "users":   [{"id": "u1", "demand": [1, 2, 10], "weight": 1, "max_tasks": null,
                  "eligible": ["s1"]}]}

``weight`` (default 1), ``max_tasks`` (default unbounded) and ``eligible`` (default every server)
are optional, and so are a queue tree (``"queues"`` and each user's ``"queue"``,
below), which only ``hdrf`` reads. Every validation error is a
:class:`InstanceError` whose one-line message names the field (``users[0].demand`` ...) and the
value.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
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
    queues : QueueTree or None
        The queue tree (:func:`parse_queues`); ``None``: every user hangs at the root (a
        one-level tree).
    """

    resources: tuple[str, ...]
    server_ids: tuple[str, ...]
    user_ids: tuple[str, ...]
    capacity: np.ndarray
    demand: np.ndarray
    weight: np.ndarray
    max_tasks: np.ndarray
    eligible: np.ndarray
    queues: QueueTree | None = None


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


#: Most digits of an integer Python reads from text or writes as text
#: (``sys.get_int_max_str_digits``'s default).
_MAX_INT_DIGITS = 4300


def _int_size(value: int) -> str:
    """``an integer of 401 digits``, without turning a huge integer into text."""
    if value.bit_length() > 14_000:  # about 4,215 digits: str() may refuse it
        return "an integer of more than 4000 digits"
    return f"an integer of {len(str(abs(value)))} digits"


def _number(value: Any, field: str, *, minimum: float = 0.0, strict: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InstanceError(f"{field}: {value!r} is not a number")
    rel = ">" if strict else ">="
    try:
        v = float(value)
    except OverflowError:  # an int beyond float64's range (1e308): never a usable amount
        raise InstanceError(
            f"{field}: {_int_size(int(value))} is out of float64's range "
            f"(expected a finite number {rel} {minimum:g})"
        ) from None
    if not math.isfinite(v) or v < minimum or (strict and v <= minimum):
        raise InstanceError(f"{field}: {value!r} (expected a finite number {rel} {minimum:g})")
    return v


def _vector(value: Any, field: str, n: int, *, nulls: bool = False) -> list[float]:
    """Numbers >= 0, one per resource; with ``nulls``, a limit: an entry may be ``null`` (no
    limit), read as ``inf``."""
    what = "numbers or nulls" if nulls else "numbers"
    if not isinstance(value, list):
        raise InstanceError(f"{field}: expected a list of {n} {what}, got {value!r}")
    if len(value) != n:
        raise InstanceError(f"{field}: has {len(value)} entries, expected {n} (one per resource)")
    return [
        math.inf if nulls and x is None else _number(x, f"{field}[{k}]")
        for k, x in enumerate(value)
    ]


def _shown(value: Any) -> str:
    """``value`` as JSON text for a message (``null``, ``3``, ``["a"]``), cut after 40
    characters."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):  # not JSON data (a Python caller's object)
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def identifier(value: Any, field: str) -> str:
    """An id of the instance (a server, user or job): a JSON string, never a number, ``null``,
    a list or an object turned into text.

    Raises
    ------
    InstanceError
        ``servers[0].id: expected a string, got null``.
    """
    if not isinstance(value, str):
        raise InstanceError(f"{field}: expected a string, got {_shown(value)}")
    return value


def check_top_level(data: Any, extra: tuple[str, ...] = ()) -> list[str]:
    """Check an instance's top level (an object with ``resources``, ``servers``, ``users``).

    Returns
    -------
    list of str
        The resource names.

    Raises
    ------
    InstanceError
        For a non-object, an unknown key, or a missing or malformed ``resources`` list (a name
        that is not a string, is empty or repeats an earlier one is named). The key
        ``violation`` is allowed and not read: it is what a counterexample file of ``fairsim
        properties`` says about its instance, which stays replayable with ``fairsim solve``.
        ``extra`` keys are allowed too (``queues`` for :func:`parse_instance`).
    """
    if not isinstance(data, dict):
        raise InstanceError(f"instance: expected a JSON object, got {type(data).__name__}")
    known = ("resources", "servers", "users", *extra)
    for key in data:
        if key not in (*known, "violation"):
            raise InstanceError(f"instance: unknown key {key!r} (known: {', '.join(known)})")
    resources = data.get("resources")
    if (
        not isinstance(resources, list)
        or not resources
        or not all(isinstance(r, str) for r in resources)
    ):
        raise InstanceError(f"resources: expected a non-empty list of names, got {resources!r}")
    for r, name in enumerate(resources):
        if not name:
            raise InstanceError(f"resources[{r}]: empty name")
        if name in resources[:r]:
            raise InstanceError(f"resources[{r}]: duplicate {name!r}")
    return resources


#: The keys of a server object.
SERVER_KEYS = ("id", "capacity")


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
        For a missing or empty list, a malformed entry or capacity, an unknown key, an id that
        is not a string, or a duplicate id.
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
        for key in s:
            if key not in SERVER_KEYS:
                raise InstanceError(
                    f"servers[{j}]: unknown key {key!r} (known: {', '.join(SERVER_KEYS)})"
                )
        sid = identifier(s["id"], f"servers[{j}].id")
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
    resources = check_top_level(data, extra=("queues",))
    n_r = len(resources)
    sids, caps = parse_servers(data, n_r)
    users = data.get("users")
    if not isinstance(users, list) or not users:
        raise InstanceError(f"users: expected a non-empty list, got {users!r}")
    uids: list[str] = []
    dem, wts, mts, elig, queue = [], [], [], [], []
    for i, u in enumerate(users):
        if not isinstance(u, dict) or "id" not in u or "demand" not in u:
            raise InstanceError(f"users[{i}]: expected an object with 'id' and 'demand'")
        for key in u:
            if key not in ("id", "demand", "weight", "max_tasks", "eligible", "queue"):
                raise InstanceError(f"users[{i}]: unknown key {key!r}")
        uid = identifier(u["id"], f"users[{i}].id")
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
            for k, sid in enumerate(e):
                identifier(sid, f"users[{i}].eligible[{k}]")
                if sid not in sids:
                    raise InstanceError(f"users[{i}].eligible: unknown server id {sid!r}")
            es = set(e)
            elig.append([sid in es for sid in sids])
        queue.append(u.get("queue"))
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
    if "queues" in data or any(q is not None for q in queue):
        tree = parse_queues(data.get("queues"), queue, resources, inst.capacity.sum(axis=0))
        inst = replace(inst, queues=tree)
    check_range(inst)
    return inst


#: The keys of a queue object.
QUEUE_KEYS = ("id", "parent", "weight", "guarantee", "guarantee_share", "limit", "limit_share")
#: The deepest queue of a tree, in levels below the root (a queue at the root is at level 1).
#: Hierarchies in use are a few levels deep; the exact H-DRF and ``yarn-fair`` walk the tree
#: recursively, and Python's recursion limit (1,000 frames) ends a chain of some hundreds.
MAX_QUEUE_DEPTH = 100
#: The name of the tree's root, where users without a queue hang (``queues.parquet`` and the
#: per-queue fairness rows of a scenario name it so): no queue may take it.
ROOT = "(root)"


@dataclass(frozen=True)
class QueueTree:
    """A validated queue tree (the root is implicit).

    Attributes
    ----------
    ids : tuple of str
        Queue ids in declaration order (queue ``q`` is row ``q`` of the arrays).
    parent : ndarray of int, shape (n_queues,)
        The parent queue of each queue, ``-1`` for a child of the root.
    weight : ndarray, shape (n_queues,)
        Positive weights.
    guarantee : ndarray, shape (n_queues, n_resources)
        Guaranteed amounts in pool units (0 where none).
    guaranteed : ndarray of bool, shape (n_queues,)
        The queue declared a guarantee.
    limit : ndarray, shape (n_queues, n_resources)
        Most the queue's users may hold together, in pool units (``inf`` where none).
    user_queue : ndarray of int, shape (n_users,)
        Each user's queue, ``-1`` for a user at the root.
    """

    ids: tuple[str, ...]
    parent: np.ndarray
    weight: np.ndarray
    guarantee: np.ndarray
    guaranteed: np.ndarray
    limit: np.ndarray
    user_queue: np.ndarray

    def to_data(self) -> list[dict[str, Any]]:
        """The ``"queues"`` list of the instance JSON (amounts in pool units, shares as amounts)."""
        out: list[dict[str, Any]] = []
        for q, qid in enumerate(self.ids):
            d: dict[str, Any] = {"id": qid}
            if self.parent[q] >= 0:
                d["parent"] = self.ids[int(self.parent[q])]
            if self.weight[q] != 1:
                d["weight"] = float(self.weight[q])
            if self.guaranteed[q]:
                d["guarantee"] = [float(v) for v in self.guarantee[q]]
            if np.isfinite(self.limit[q]).any():
                d["limit"] = [float(v) if math.isfinite(v) else None for v in self.limit[q]]
            out.append(d)
        return out


def _shares(values: list[float], field: str) -> None:
    for k, v in enumerate(values):
        if math.isfinite(v) and v > 1:
            raise InstanceError(f"{field}[{k}]: {v!r} (expected a fraction of the pool, at most 1)")


def _amounts(
    q: dict[str, Any], i: int, kind: str, resources: list[str], pool: np.ndarray | None
) -> np.ndarray | None:
    """A queue's ``guarantee`` or ``limit`` in pool units (``None`` when absent)."""
    n_r = len(resources)
    share_key = f"{kind}_share"
    if kind in q and share_key in q:
        raise InstanceError(
            f"queues[{i}]: both {kind!r} and {share_key!r} given for queue {q['id']!r} "
            "(amounts in pool units or fractions of the pool, not both)"
        )
    nulls = kind == "limit"
    if kind in q:
        return np.array(_vector(q[kind], f"queues[{i}].{kind}", n_r, nulls=nulls))
    if share_key in q:
        frac = _vector(q[share_key], f"queues[{i}].{share_key}", n_r, nulls=nulls)
        _shares(frac, f"queues[{i}].{share_key}")
        return np.array(frac) * (1.0 if pool is None else pool)
    return None


def parse_queues(
    queues: Any, user_queues: list[Any], resources: list[str], pool: np.ndarray | None
) -> QueueTree | None:
    """Validate an instance's ``"queues"`` and its users' ``"queue"`` entries::

        {"resources": ["cpu", "gpu"],
         "servers": [{"id": "s", "capacity": [10, 10]}],
         "queues": [{"id": "A", "weight": 1},
                    {"id": "B", "parent": null, "guarantee": [2, 2], "limit": [null, 8]},
                    {"id": "B1", "parent": "B", "weight": 2, "guarantee_share": [0.1, 0.1]}],
         "users": [{"id": "u1", "demand": [0, 1], "queue": "A"},
                   {"id": "u2", "demand": [1, 0], "queue": "B1"},
                   {"id": "u3", "demand": [1, 1]}]}

    A queue has an ``id``, a ``parent`` (``null`` or absent: a child of the root), a ``weight``
    (default 1, positive) and optionally a ``guarantee`` and a ``limit``, one entry per resource,
    in the instance's units (the units of the capacities, summed over the servers: the *pool*),
    or as fractions of the pool with ``guarantee_share`` / ``limit_share`` (one of the two forms
    per queue). A ``limit`` entry may be ``null`` (no limit on that resource). A user's ``queue``
    names its queue; absent, the user hangs at the root. Users are the leaves of the tree; a
    queue may hold users and queues alike. The weights and the tree define hierarchical DRF
    (Bhattacharya et al., SoCC 2013); guarantees and limits are fairsim's extension
    (:mod:`fairsim.schedulers.exact.hdrf`, ``docs/hdrf.md``).

    Parameters
    ----------
    queues : list or None
        The ``"queues"`` value (``None`` when absent).
    user_queues : list
        Each user's ``"queue"`` value, in user order (``None`` when absent).
    resources : list of str
    pool : ndarray, shape (n_resources,), or None
        The pooled capacity (sum over the servers), the unit of the ``*_share`` forms. None:
        the pool is not known yet (a scenario's config, whose pool is drawn when it runs): every
        amount is read and checked on its own (length, sign, a share at most 1), not against
        the pool or the other queues' amounts, and the ``*_share`` forms are kept as fractions;
        parse the tree again with the pool before using its amounts.

    Returns
    -------
    QueueTree or None
        ``None`` when there are no queues and no user names one (a one-level tree).

    Raises
    ------
    InstanceError
        One line naming the field and the queue: an unknown key, a duplicate id, a parent that
        is not a queue, a cycle, a weight that is not a positive number, a vector of the wrong
        length or with negative entries, a share above 1, a limit below the queue's own
        guarantee, a guarantee above the one of its nearest guaranteed ancestor (or the pool),
        weights whose largest over smallest is outside float64's normal range, a queue deeper
        than :data:`MAX_QUEUE_DEPTH`,
        the guarantees of the queues under one guaranteed ancestor (or at the top) summing above
        it, a guarantee above an ancestor's limit, a queue named :data:`ROOT`, a user's queue
        that is not declared.
    """
    if queues is None and all(u is None for u in user_queues):
        return None
    if queues is None:
        queues = []
    if not isinstance(queues, list):
        raise InstanceError(f"queues: expected a list of queue objects, got {queues!r}")
    n_r = len(resources)
    ids: list[str] = []
    for i, q in enumerate(queues):
        if not isinstance(q, dict) or "id" not in q:
            raise InstanceError(f"queues[{i}]: expected an object with an 'id'")
        for key in q:
            if key not in QUEUE_KEYS:
                raise InstanceError(
                    f"queues[{i}]: unknown key {key!r} for queue {q['id']!r} "
                    f"(known: {', '.join(QUEUE_KEYS)})"
                )
        if not isinstance(q["id"], str | int) or isinstance(q["id"], bool):
            raise InstanceError(f"queues[{i}].id: expected a name, got {q['id']!r}")
        qid = str(q["id"])
        if qid == ROOT:
            raise InstanceError(f"queues[{i}].id: {ROOT!r} names the tree's root, reserved")
        if qid in ids:
            raise InstanceError(f"queues[{i}].id: duplicate queue id {qid!r}")
        ids.append(qid)
    index = {qid: k for k, qid in enumerate(ids)}
    known = ", ".join(ids) if ids else "none declared"
    parent = np.full(len(ids), -1, dtype=int)
    weight = np.ones(len(ids))
    guarantee = np.zeros((len(ids), n_r))
    guaranteed = np.zeros(len(ids), dtype=bool)
    limit = np.full((len(ids), n_r), math.inf)
    for i, q in enumerate(queues):
        p = q.get("parent")
        if p is not None:
            if str(p) not in index:
                raise InstanceError(
                    f"queues[{i}].parent: unknown queue {p!r} for queue {ids[i]!r} (known: {known})"
                )
            parent[i] = index[str(p)]
        weight[i] = _number(q.get("weight", 1), f"queues[{i}].weight", strict=True)
        g = _amounts(q, i, "guarantee", resources, pool)
        if g is not None:
            guarantee[i], guaranteed[i] = g, True
        lim = _amounts(q, i, "limit", resources, pool)
        if lim is not None:
            limit[i] = lim
    if len(ids):
        lo, hi = int(weight.argmin()), int(weight.argmax())
        if not weight[hi] / _HUGE <= weight[lo]:  # H-DRF divides shares by weights
            raise InstanceError(
                f"queues[{hi}].weight: {weight[hi]:g}, and {weight[lo]:g} for queue {ids[lo]!r}: "
                f"a ratio outside float64's normal range (at most {_HUGE:.2g})"
            )
    depth = np.zeros(len(ids), dtype=int)
    for i in range(len(ids)):  # cycles: follow the parents at most len(ids) steps
        path = [i]
        k = int(parent[i])
        while k >= 0:
            if k == i:
                chain = " -> ".join(ids[j] for j in [*path, i])
                raise InstanceError(
                    f"queues[{i}].parent: queue {ids[i]!r} is its own ancestor ({chain})"
                )
            if len(path) > len(ids):
                break
            path.append(k)
            k = int(parent[k])
        depth[i] = len(path)
    for i in np.flatnonzero(depth > MAX_QUEUE_DEPTH)[:1]:  # no cycle: these are real depths
        raise InstanceError(
            f"queues[{i}].parent: queue {ids[i]!r} is {depth[i]} levels deep, more than the "
            f"{MAX_QUEUE_DEPTH} fairsim handles (the solvers descend the tree recursively)"
        )
    if pool is not None:
        _check_amounts(ids, parent, guarantee, guaranteed, limit, resources, pool)
    user_queue = np.full(len(user_queues), -1, dtype=int)
    for n, uq in enumerate(user_queues):
        if uq is None:
            continue
        if str(uq) not in index or not isinstance(uq, str | int) or isinstance(uq, bool):
            raise InstanceError(f"users[{n}].queue: unknown queue {uq!r} (known: {known})")
        user_queue[n] = index[str(uq)]
    return QueueTree(
        ids=tuple(ids),
        parent=parent,
        weight=weight,
        guarantee=guarantee,
        guaranteed=guaranteed,
        limit=limit,
        user_queue=user_queue,
    )


def _check_amounts(
    ids: list[str],
    parent: np.ndarray,
    guarantee: np.ndarray,
    guaranteed: np.ndarray,
    limit: np.ndarray,
    resources: list[str],
    pool: np.ndarray,
) -> None:
    """Limits at least the own guarantee and the guarantees below; guarantees nested within the
    nearest guaranteed ancestor (or the pool), one by one and together."""
    for q in range(len(ids)):
        low = np.flatnonzero(limit[q] < guarantee[q])
        if guaranteed[q] and low.size:
            r = int(low[0])
            raise InstanceError(
                f"queues[{q}].limit[{r}]: queue {ids[q]!r} is limited to {limit[q, r]:g} of "
                f"{resources[r]!r}, below its guarantee {guarantee[q, r]:g}"
            )
    for q in (int(j) for j in np.flatnonzero(guaranteed)):
        # a queue never holds more than an ancestor's limit: a guarantee above it is one no
        # allocation can give
        k = int(parent[q])
        while k >= 0:
            low = np.flatnonzero(limit[k] < guarantee[q])
            if low.size:
                r = int(low[0])
                raise InstanceError(
                    f"queues[{q}].guarantee[{r}]: queue {ids[q]!r} is guaranteed "
                    f"{guarantee[q, r]:g} of {resources[r]!r}, above the limit {limit[k, r]:g} "
                    f"of its ancestor {ids[k]!r}"
                )
            k = int(parent[k])
    owner = np.full(len(ids), -1, dtype=int)  # nearest guaranteed ancestor, -1 for the pool
    for q in range(len(ids)):
        k = int(parent[q])
        while k >= 0 and not guaranteed[k]:
            k = int(parent[k])
        owner[q] = k
    for q in (int(j) for j in np.flatnonzero(guaranteed)):
        a = int(owner[q])
        above = pool if a < 0 else guarantee[a]
        over = np.flatnonzero(guarantee[q] > above * (1 + 1e-12))
        if over.size:
            r = int(over[0])
            cap = (
                f"the pool's {above[r]:g}"
                if a < 0
                else f"the {above[r]:g} of its guaranteed ancestor {ids[a]!r}"
            )
            raise InstanceError(
                f"queues[{q}].guarantee[{r}]: queue {ids[q]!r} is guaranteed {guarantee[q, r]:g} "
                f"of {resources[r]!r}, above {cap}"
            )
    for a in sorted({int(owner[q]) for q in np.flatnonzero(guaranteed)}):
        members = np.flatnonzero(guaranteed & (owner == a))
        above = pool if a < 0 else guarantee[a]
        total = guarantee[members].sum(axis=0)
        over = np.flatnonzero(total > above * (1 + 1e-12))
        if over.size:
            r, q = int(over[0]), int(members[-1])
            whose = "at the top" if a < 0 else f"under {ids[a]!r}"
            cap = f"the pool's {above[r]:g}" if a < 0 else f"{ids[a]!r}'s {above[r]:g}"
            raise InstanceError(
                f"queues[{q}].guarantee[{r}]: the queues guaranteed {whose} "
                f"({', '.join(repr(ids[j]) for j in members)}) are guaranteed {total[r]:g} of "
                f"{resources[r]!r} together, above {cap}"
            )


def read_instance_json(path: str | Path) -> Any:
    """The JSON content of an instance file, unvalidated.

    Raises
    ------
    InstanceError
        If the file is missing, a directory, not UTF-8, not JSON, nested too deeply, or holds
        an integer of more than 4,300 digits (which Python does not read).
    """
    p = Path(path)
    text = read_input_text(p, "instance", "JSON file", InstanceError)

    def parse_int(digits: str) -> int:
        n = len(digits.lstrip("-"))
        if n > _MAX_INT_DIGITS:  # int() refuses it (ValueError); no amount is that large
            raise InstanceError(
                f"instance: {p} holds an integer of {n} digits, out of float64's range "
                f"(Python reads at most {_MAX_INT_DIGITS})"
            )
        return int(digits)

    try:
        return json.loads(text, parse_int=parse_int)
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
