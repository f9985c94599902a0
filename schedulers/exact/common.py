"""Shared pieces of the exact (divisible-task) allocators.

Notation follows the PS-DSF paper (Khamse-Ashari et al., Section III): ``c[l, r]`` is the capacity
of resource r on server l, ``d[n, r]`` the per-task demand of user n, ``gamma[n, l]`` (eq. 7) the
tasks user n runs when it monopolises server l.
"""

from __future__ import annotations

import numpy as np

from schedulers.instance import Instance

#: Relative tolerance used when deciding that a resource is saturated.
TOL = 1e-9


def serving(inst: Instance) -> np.ndarray:
    """Servers that can actually serve each user.

    A server serves user n when ``eligible[n, l]`` holds and it has a positive capacity of every
    resource the user demands (DESIGN.md: "a server with capacity 0 for a resource a user needs
    cannot serve that user"); this is ``delta[n, l] = 1`` of the PS-DSF paper, eq. 7.

    Returns
    -------
    ndarray of bool, shape (n_users, n_servers)
    """
    needs = inst.demand > 0  # (n, R)
    has = inst.capacity > 0  # (L, R)
    # server l lacks a needed resource of user n
    lacks = (needs[:, None, :] & ~has[None, :, :]).any(axis=2)
    return inst.eligible & ~lacks


def monopoly_tasks(capacity: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """``gamma[n, l] = min_r c[l, r] / d[n, r]`` over demanded resources (PS-DSF eq. 7, delta=1).

    Parameters
    ----------
    capacity : ndarray, shape (n_servers, n_resources)
    demand : ndarray, shape (n_users, n_resources)

    Returns
    -------
    ndarray, shape (n_users, n_servers)
        ``0`` where a demanded resource has zero capacity.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(demand[:, None, :] > 0, capacity[None, :, :] / demand[:, None, :], np.inf)
    g = ratio.min(axis=2)
    return np.where(np.isfinite(g), g, 0.0)


def waterfill(
    demand: np.ndarray,
    capacity: np.ndarray,
    rate: np.ndarray,
    *,
    base: np.ndarray | None = None,
    upper: np.ndarray | None = None,
) -> np.ndarray:
    """Exact progressive filling (water-filling) on one pool of divisible resources.

    A common level ``L`` rises from 0; user n holds ``clip(L * rate[n] - base[n], 0, upper[n])``
    tasks. When a resource saturates, every still-rising user that demands it is frozen (DRF's
    progressive filling, Ghodsi et al. NSDI 2011, Section 4; with ``base`` it is the per-server
    update of PS-DSF, Section III-C). The level is followed exactly from breakpoint to breakpoint
    (the usage is piecewise linear in ``L``), so no step size is involved.

    Parameters
    ----------
    demand : ndarray, shape (n_users, n_resources)
        Per-task demand; rows of users with ``rate == 0`` are ignored (they get 0).
    capacity : ndarray, shape (n_resources,)
    rate : ndarray, shape (n_users,)
        Tasks per unit of level (for DRF ``w_n / D_n``).
    base : ndarray, shape (n_users,), optional
        Level offset: a user starts receiving tasks once ``L * rate >= base`` (default 0).
    upper : ndarray, shape (n_users,), optional
        Most tasks a user may receive here (default unbounded).

    Returns
    -------
    ndarray, shape (n_users,)
    """
    n = demand.shape[0]
    base = np.zeros(n) if base is None else np.asarray(base, dtype=float)
    upper = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float)
    x = np.zeros(n)
    active = (rate > 0) & (upper > 0)
    used_fixed = np.zeros(capacity.shape[0])
    level = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        start = np.where(rate > 0, base / rate, np.inf)
        stop = np.where(rate > 0, (base + upper) / rate, np.inf)
    for _ in range(4 * n + 4):
        if not active.any():
            break
        # breakpoints strictly above the current level
        bps = np.concatenate([start[active], stop[active]])
        bps = np.unique(bps[(bps > level) & np.isfinite(bps)])
        seg_ends = [*bps.tolist(), np.inf]
        saturated_at = None
        for end in seg_ends:
            # usage is linear on [level, end]: u(L) = u0 + slope * L on running users
            mid = level + 1.0 if not np.isfinite(end) else 0.5 * (level + end)
            running = active & (mid * rate > base) & (mid * rate < base + upper)
            capped = active & (mid * rate >= base + upper)
            const = used_fixed + (upper[capped, None] * demand[capped]).sum(axis=0)
            const = const - (base[running, None] * demand[running]).sum(axis=0)
            slope = (rate[running, None] * demand[running]).sum(axis=0)
            with np.errstate(divide="ignore", invalid="ignore"):
                hit = np.where(slope > 0, (capacity - const) / slope, np.inf)
            hit = np.maximum(hit, level)
            lstar = float(hit.min())
            if np.isfinite(lstar) and lstar <= end:
                saturated_at = lstar
                break
            level = end
            if not np.isfinite(end):
                break
        if saturated_at is None:
            # nothing saturates: every active user reached its upper bound
            x[active] = upper[active]
            break
        level = saturated_at
        cur = np.clip(level * rate - base, 0.0, upper)
        usage = used_fixed + (cur[active, None] * demand[active]).sum(axis=0)
        full = usage >= capacity - TOL * np.maximum(capacity, 1.0)
        freeze = active & ((demand[:, full] > 0).any(axis=1) | (cur >= upper))
        if not freeze.any():  # numerical safety: freeze the users of the tightest resource
            r = int(np.argmax(usage - capacity))
            freeze = active & (demand[:, r] > 0)
        x[freeze] = cur[freeze]
        used_fixed = used_fixed + (x[freeze, None] * demand[freeze]).sum(axis=0)
        active &= ~freeze
    return x
