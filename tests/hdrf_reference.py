"""A stepped reference of hierarchical DRF, written apart from ``schedulers/exact/hdrf.py``.

The paper's descent (Bhattacharya et al., SoCC 2013, Section 3), one small step at a time: from
the root, descend into the child that is not blocked with the smallest level (the first in
declaration order on an exact tie) and give the user reached ``eps`` of weighted dominant share
(fewer tasks if a capacity or ``max_tasks`` is closer). A queue's consumption vector is the sum
of its children's, the children that are not blocked rescaled to the smallest level among them
(``rescale="nonblocked"``, the paper), among all of them (``"all"``: the minimum taken over the
blocked children too, the variant the paper's second example shows going wrong) or not at all
(``None``, naive H-DRF); its level is its largest entry over the resources not saturated for it
(``ignore_saturated``) divided by its weight. No guarantees; limits in pool units.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def stepped_hdrf(
    data: dict[str, Any],
    *,
    eps: float = 1e-3,
    rescale: str | None = "nonblocked",
    ignore_saturated: bool = True,
    start: list[float] | None = None,
) -> np.ndarray:
    """Tasks per user (shape (n_users,)) of the stepped descent on instance ``data`` (JSON)."""
    cap = np.sum([s["capacity"] for s in data["servers"]], axis=0).astype(float)
    users = data["users"]
    queues = data.get("queues", [])
    qids = [q["id"] for q in queues]
    n_u = len(users)
    dem = np.array([u["demand"] for u in users], dtype=float)
    share = np.where(cap > 0, dem / np.where(cap > 0, cap, 1), 0.0)
    mt = np.array([np.inf if u.get("max_tasks") is None else u["max_tasks"] for u in users])
    # nodes: ("q", i) queues, ("u", n) users; the root is None
    kids: dict[Any, list[Any]] = {None: []}
    for i in range(len(queues)):
        kids[("q", i)] = []
    for i, q in enumerate(queues):
        p = q.get("parent")
        kids[None if p is None else ("q", qids.index(p))].append(("q", i))
    for n, u in enumerate(users):
        p = u.get("queue")
        kids[None if p is None else ("q", qids.index(p))].append(("u", n))
    weight = {("q", i): float(q.get("weight", 1)) for i, q in enumerate(queues)}
    weight.update({("u", n): float(u.get("weight", 1)) for n, u in enumerate(users)})
    limit = {
        ("q", i): np.array(
            [np.inf if v is None else float(v) for v in q.get("limit", [None] * len(cap))]
        )
        / np.where(cap > 0, cap, 1)
        for i, q in enumerate(queues)
    }
    x = np.zeros(n_u) if start is None else np.array(start, dtype=float)
    unservable = ((dem > 0) & (cap <= 0)).any(axis=1) | (mt <= 0)
    zero = np.zeros(len(cap))

    def usage(node: Any, out: dict[Any, np.ndarray]) -> np.ndarray:
        if node is not None and node[0] == "u":
            out[node] = x[node[1]] * share[node[1]]
        else:
            out[node] = sum((usage(c, out) for c in kids[node]), zero)
        return out[node]

    def evaluate(
        node: Any, sat_above: np.ndarray, use: dict[Any, Any], out: dict[Any, Any]
    ) -> None:
        """Fill ``out[node] = (vector, level, blocked, usage)`` for ``node`` and below;
        ``sat_above``: resources used up by the pool or the limits above ``node``."""
        if node is not None and node[0] == "u":
            n = node[1]
            blocked = bool(
                unservable[n] or x[n] >= mt[n] - 1e-12 or ((share[n] > 0) & sat_above).any()
            )
            out[node] = (use[node], float(x[n] * share[n].max() / weight[node]), blocked)
            return
        sat = sat_above | (use[node] >= limit[node] - 1e-12) if node in limit else sat_above
        for c in kids[node]:
            evaluate(c, sat, use, out)
        parts = [out[c] for c in kids[node]]
        blocked = all(p[2] for p in parts)
        live = [p[1] for p in parts if not p[2]]
        if rescale == "nonblocked" and live:
            m = min(live)
            vec = sum((p[0] if p[2] or p[1] <= 0 else p[0] * m / p[1] for p in parts), zero)
        elif rescale == "all" and parts:
            m = min(p[1] for p in parts)
            vec = sum((p[0] * m / p[1] if p[1] > 0 else p[0] for p in parts), zero)
        else:
            vec = sum((p[0] for p in parts), zero)
        counted = ~sat if ignore_saturated else np.ones(len(cap), dtype=bool)
        w = weight.get(node, 1.0)
        level = float(vec[counted].max()) / w if counted.any() else 0.0
        out[node] = (vec, level, blocked, use[node])

    for _ in range(10_000_000):
        out: dict[Any, Any] = {}
        use: dict[Any, np.ndarray] = {}
        usage(None, use)
        evaluate(None, use[None] >= 1 - 1e-12, use, out)
        if out[None][2]:
            break
        node, path = None, []
        while node is None or node[0] == "q":
            best = None
            for c in kids[node]:
                _, lv, blk = out[c][:3]
                if not blk and (best is None or lv < best[0]):
                    best = (lv, c)
            assert best is not None
            path.append(node)
            node = best[1]
        n = node[1]
        step = eps * weight[node] / share[n].max()
        step = min(step, mt[n] - x[n])
        free = 1 - out[None][3]
        for b in path[1:]:
            if b in limit:
                free = np.minimum(free, limit[b] - out[b][3])
        need = share[n] > 0
        step = min(step, float((free[need] / share[n][need]).min()))
        x[n] += max(step, 0.0)
    return x
