"""The queue tree of an allocation instance: ``"queues"`` and each user's ``"queue"``.

::

    {"resources": ["cpu", "gpu"],
     "servers": [{"id": "s", "capacity": [10, 10]}],
     "queues": [{"id": "A", "weight": 1},
                {"id": "B", "parent": null, "weight": 1, "guarantee": [2, 2], "limit": [null, 8]},
                {"id": "B1", "parent": "B", "weight": 2, "guarantee_share": [0.1, 0.1]}],
     "users": [{"id": "u1", "demand": [0, 1], "queue": "A"},
               {"id": "u2", "demand": [1, 0], "queue": "B1"},
               {"id": "u3", "demand": [1, 1]}]}

A queue has an ``id``, a ``parent`` (``null`` or absent: a child of the root), a ``weight``
(default 1, positive) and optionally a ``guarantee`` and a ``limit``, one entry per resource, in
the instance's units (the units of the capacities, summed over the servers: the *pool*), or as
fractions of the pool with ``guarantee_share`` / ``limit_share`` (at most one of the two forms per
queue). A ``limit`` entry may be ``null`` (no limit on that resource). A user's ``queue`` names its
queue; absent, the user hangs at the root. Users are the leaves of the tree; a queue may hold
users and queues alike. The weights, the tree and the users' demands define hierarchical DRF
(Bhattacharya et al., SoCC 2013); guarantees and limits are fairsim's extension
(:mod:`fairsim.schedulers.exact.hdrf`, ``docs/hdrf.md``).

Validation (every error a one-line :class:`~fairsim.schedulers.instance.InstanceError` naming the
field and the queue): unknown keys, duplicate ids, a parent that is not a queue, a cycle, a weight
that is not a positive number, a vector of the wrong length or with negative entries, a share
outside [0, 1], a limit below the queue's own guarantee, a guarantee above the one of its nearest
guaranteed ancestor (or the pool), the guarantees of the queues under one guaranteed ancestor (or
at the top) summing above it, a user's queue that is not declared.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairsim.schedulers.instance import InstanceError, _number, _vector

#: The keys of a queue object.
QUEUE_KEYS = ("id", "parent", "weight", "guarantee", "guarantee_share", "limit", "limit_share")


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


def _limit_vector(value: Any, field: str, n: int) -> list[float]:
    """A limit: numbers >= 0 or ``null`` (no limit), one per resource."""
    if not isinstance(value, list):
        raise InstanceError(f"{field}: expected a list of {n} numbers or nulls, got {value!r}")
    if len(value) != n:
        raise InstanceError(f"{field}: has {len(value)} entries, expected {n} (one per resource)")
    return [math.inf if v is None else _number(v, f"{field}[{k}]") for k, v in enumerate(value)]


def _shares(values: list[float], field: str) -> None:
    for k, v in enumerate(values):
        if math.isfinite(v) and v > 1:
            raise InstanceError(f"{field}[{k}]: {v!r} (expected a fraction of the pool, at most 1)")


def _amounts(
    q: dict[str, Any], i: int, kind: str, resources: list[str], pool: np.ndarray
) -> np.ndarray | None:
    """A queue's ``guarantee`` or ``limit`` in pool units (``None`` when absent)."""
    n_r = len(resources)
    share_key = f"{kind}_share"
    if kind in q and share_key in q:
        raise InstanceError(
            f"queues[{i}]: both {kind!r} and {share_key!r} given for queue {q['id']!r} "
            "(amounts in pool units or fractions of the pool, not both)"
        )
    read = _limit_vector if kind == "limit" else _vector
    if kind in q:
        return np.array(read(q[kind], f"queues[{i}].{kind}", n_r))
    if share_key in q:
        frac = read(q[share_key], f"queues[{i}].{share_key}", n_r)
        _shares(frac, f"queues[{i}].{share_key}")
        return np.array(frac) * pool
    return None


def parse_queues(
    queues: Any, user_queues: list[Any], resources: list[str], pool: np.ndarray
) -> QueueTree | None:
    """Validate an instance's ``"queues"`` and its users' ``"queue"`` entries.

    Parameters
    ----------
    queues : list or None
        The ``"queues"`` value (``None`` when absent).
    user_queues : list
        Each user's ``"queue"`` value, in user order (``None`` when absent).
    resources : list of str
    pool : ndarray, shape (n_resources,)
        The pooled capacity (sum over the servers), the unit of the ``*_share`` forms.

    Returns
    -------
    QueueTree or None
        ``None`` when there are no queues and no user names one (a one-level tree).

    Raises
    ------
    InstanceError
        One line naming the field and the queue (module docstring).
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
    """Limits at least the own guarantee; guarantees nested within the nearest guaranteed
    ancestor (or the pool), one by one and together."""
    for q in range(len(ids)):
        low = np.flatnonzero(limit[q] < guarantee[q])
        if guaranteed[q] and low.size:
            r = int(low[0])
            raise InstanceError(
                f"queues[{q}].limit[{r}]: queue {ids[q]!r} is limited to {limit[q, r]:g} of "
                f"{resources[r]!r}, below its guarantee {guarantee[q, r]:g}"
            )
    owner = np.full(len(ids), -1, dtype=int)  # nearest guaranteed ancestor, -1 for the pool
    for q in range(len(ids)):
        k = int(parent[q])
        while k >= 0 and not guaranteed[k]:
            k = int(parent[k])
        owner[q] = k
    for q in np.flatnonzero(guaranteed):
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
