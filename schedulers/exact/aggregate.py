"""Identical servers aggregated into classes before an exact solve.

A pool of 2,000 servers drawn from the DRFH paper's Table I has only a handful of distinct
capacity vectors. For the mechanisms of :data:`EXACT_UNDER_AGGREGATION` the divisible allocation
depends on the servers only through per-class sums, so one server per class, holding the class's
summed capacity, gives the same per-user task totals (and hence the same dominant shares) as the
servers one by one, with LPs of ``classes x resources`` capacity rows instead of ``servers x
resources``. :func:`aggregate_servers` builds the classes, :func:`aggregate_instance` the
aggregated :class:`~fairsim.schedulers.exact.instance.Instance`.

Why aggregation is exact
------------------------
Let the classes partition the servers into groups ``G_k`` of servers with the same capacity
vector ``c_k`` *and* the same eligibility (every user may use all servers of ``G_k`` or none),
and let ``C_k = |G_k| c_k``. Write ``F`` for the set of feasible per-user totals of the
per-server instance::

    F = {(x_n) : x_n = sum_l x[n, l], x[n, l] >= 0, x[n, l] = 0 where l cannot serve n,
                 sum_n d[n, r] x[n, l] <= c[l, r] for every l and r, x_n <= max_tasks[n]}

and ``F'`` for the same set of the aggregated instance (one server of capacity ``C_k`` per
class). Then ``F = F'``:

* ``F ⊆ F'``: sum a per-server allocation over each class, ``X[n, k] = sum_{l in G_k} x[n,
  l]``. Capacity: ``sum_n d[n, r] X[n, k] = sum_{l in G_k} sum_n d[n, r] x[n, l] <= |G_k| c[k,
  r]``. Eligibility and the totals are unchanged.
* ``F' ⊆ F``: split a class allocation evenly, ``x[n, l] = X[n, k] / |G_k|`` for ``l`` in
  ``G_k``. Each server then carries ``1 / |G_k|`` of the class's load, which fits ``c_k``
  because the class's load fits ``|G_k| c_k`` (demands are linear in the task counts). The
  totals are unchanged.

(A server *serves* a user when the user may use it and it has every resource the user demands;
both are the same for all servers of a class, and ``C_k`` has a resource exactly when ``c_k``
does.) The mechanisms below choose per-user totals in ``F`` by a rule that reads the servers
only through quantities additive over the servers of a class, so they choose the same totals on
both instances:

* ``drfh``, ``c-drfh``, ``tsf``, ``lmm-mms``: the lexicographic max-min over ``F`` of ``x_n a_n
  / w_n``. The leximin point of a compact convex set is unique, so the totals are determined by
  ``F`` and the constants ``a_n``. DRFH's ``a_n = max_r d[n, r] / sum_l c[l, r]`` over the
  servers that serve ``n`` (C-DRFH: over all servers) sums capacities; TSF's and LMM-MMS's
  ``gamma_n = sum_l min_r c[l, r] / d[n, r]`` (PS-DSF paper, eq. 7) is additive too, because
  ``min_r |G_k| c[k, r] / d[n, r] = |G_k| min_r c[k, r] / d[n, r]``.
* ``pf``: the maximiser over ``F`` of ``sum_n w_n log x_n``, strictly concave in the totals,
  hence unique.
* ``drf``, ``af``, ``bmf``: defined on the pooled cluster, ``sum_l c[l]``.

Not aggregated: ``psdsf``. PS-DSF compares *per-server* virtual dominant shares ``x_n / gamma[n,
i]`` (PS-DSF paper, eq. 8, Theorems 1 and 2), so its allocation is not a function of ``F``.
Splitting a class-level PS-DSF allocation evenly does give an allocation that meets the
per-server conditions (saturation, the users present and the order of their virtual shares are
the same on every server of the class), but the paper proves existence, not uniqueness, and our
solver (Gauss-Seidel sweeps over the servers, :func:`~fairsim.schedulers.exact.psdsf.solve_psdsf`)
may stop at another PS-DSF allocation of the per-server instance. It does: on two servers of
capacity ``(5, 7, 7)`` with users ``u0`` (demand ``(0, 0, 1.102)``, 8 tasks) and ``u1``
(``(2.875, 1.487, 0.857)``, 9 tasks), equal weights, ``fairsim solve psdsf`` gives ``u1`` 3.17
tasks on the two servers and 3.48 on their class of capacity ``(10, 14, 14)`` (about 1 random
small instance in 40 differs, RDM or TDM). So ``psdsf`` is solved on the servers themselves.
``udrf`` takes machine classes already.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from fairsim.schedulers.exact.instance import Instance

#: Mechanisms whose divisible allocation (per-user task totals) is the same on the aggregated
#: instance (module docstring): every exact mechanism of ``fairsim solve`` except ``psdsf``.
EXACT_UNDER_AGGREGATION = frozenset({"drf", "drfh", "c-drfh", "tsf", "af", "pf", "bmf", "lmm-mms"})


@dataclass(frozen=True)
class ServerClasses:
    """Servers grouped into classes of identical capacity and eligibility.

    Attributes
    ----------
    capacity : ndarray, shape (n_classes, n_resources)
        Summed capacity of each class (``count`` times the capacity of one of its servers).
    count : ndarray of int64, shape (n_classes,)
        Servers in each class.
    members : ndarray of int64, shape (n_servers,)
        Class of every server.
    eligible : ndarray of bool, shape (n_users, n_classes), or None
        Whether each user may use the servers of each class (None when no eligibility was
        given).
    """

    capacity: np.ndarray
    count: np.ndarray
    members: np.ndarray
    eligible: np.ndarray | None


def aggregate_servers(capacity: np.ndarray, eligible: np.ndarray | None = None) -> ServerClasses:
    """Group identical servers into classes whose capacity is summed.

    Two servers share a class when their capacity vectors are equal and, if ``eligible`` is
    given, every user may use both or neither. Classes are numbered in the order of their first
    server, so the result does not depend on anything but the input's order.

    Parameters
    ----------
    capacity : ndarray, shape (n_servers, n_resources)
    eligible : ndarray of bool, shape (n_users, n_servers), optional
        Which user may use which server (placement constraints).

    Returns
    -------
    ServerClasses

    Raises
    ------
    ValueError
        If ``eligible`` does not have one column per server.

    Examples
    --------
    >>> import numpy as np
    >>> classes = aggregate_servers(np.array([[1.0, 0.5], [0.5, 0.5], [1.0, 0.5]]))
    >>> classes.capacity.tolist(), classes.count.tolist(), classes.members.tolist()
    ([[2.0, 1.0], [0.5, 0.5]], [2, 1], [0, 1, 0])
    """
    cap = np.asarray(capacity, dtype=np.float64)
    key = cap
    if eligible is not None:
        elig = np.asarray(eligible, dtype=bool)
        if elig.ndim != 2 or elig.shape[1] != cap.shape[0]:
            raise ValueError(
                f"eligible: shape {elig.shape}, expected (n_users, {cap.shape[0]}) (one column "
                "per server)"
            )
        key = np.column_stack([cap, elig.T.astype(np.float64)])
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    # number the classes by their first server
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    members = rank[inverse].astype(np.int64)
    n_classes = len(order)
    count = np.bincount(members, minlength=n_classes).astype(np.int64)
    firsts = np.sort(first)
    return ServerClasses(
        capacity=cap[firsts] * count[:, None],
        count=count,
        members=members,
        eligible=None if eligible is None else np.asarray(eligible, dtype=bool)[:, firsts],
    )


def aggregate_instance(inst: Instance) -> tuple[Instance, ServerClasses]:
    """The instance with its identical servers aggregated (:func:`aggregate_servers`).

    Exact for the mechanisms of :data:`EXACT_UNDER_AGGREGATION` (module docstring): their
    per-user task totals, and hence the dominant shares
    (:func:`~fairsim.schedulers.exact.dominant_shares`), are those of ``inst``.

    Returns
    -------
    (Instance, ServerClasses)
        Server ids of the aggregated instance are ``"class-<k>"``.
    """
    classes = aggregate_servers(inst.capacity, inst.eligible)
    assert classes.eligible is not None
    agg = replace(
        inst,
        server_ids=tuple(f"class-{k}" for k in range(len(classes.count))),
        capacity=classes.capacity,
        eligible=classes.eligible,
    )
    return agg, classes
