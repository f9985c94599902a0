"""Lexicographic max-min of per-user normalised shares: pooled water-filling, or sequential LPs.

DRFH (Wang, Li, Liang, Section IV, eqs. 4-7; weighted users with finite tasks, Section V-A),
C-DRFH and TSF (PS-DSF paper, Section II-B) and the heterogeneous LMM-MMS all have the same shape:
user n's *share* is ``x_n * a_n / w_n`` with ``x_n = sum_l x[n, l]`` and a per-user constant
``a_n``; the allocation lexicographically maximises the vector of shares subject to the per-server
capacities (PS-DSF eq. 9), ``x[n, l] = 0`` where server l cannot serve n, and ``x_n <= max_tasks``.
The vector of shares (hence of task totals ``x_n``) is unique; the per-server split is one of
possibly many.

:func:`lex_max_min` computes it in three steps, each exact:

1. **One server**: exact progressive filling
   (:func:`~fairsim.schedulers.exact.common.waterfill`), max-min fairness for linear capacity
   constraints (Bertsekas and Gallager, *Data Networks*, Section 6.5.2).
2. **Pooled relaxation** (:func:`pooled_totals`, :func:`split_totals`): the same filling on the
   servers pooled into one (``C_r = sum_l c[l, r]``, constraints dropped) gives task totals whose
   shares lexicographically dominate those of every feasible allocation (a relaxation). If one LP
   finds a per-server split of those totals, they are the answer (proof in :func:`lex_max_min`).
3. **Otherwise, sequential LPs** (:func:`bisected_lps`): Nace and Pioro's max-min LP (Nace and
   Pioro, "Max-min fairness and its applications to routing and load-balancing in communication
   networks: a tutorial", IEEE Communications Surveys & Tutorials 10(4), 2008, Section III-B):
   maximise a common level ``t`` with every unfrozen share ``>= t`` and every frozen share ``>=
   its level``; the fairness rows' duals sum to 1 and a user whose row has a positive dual cannot
   exceed ``t`` in any optimum, so it is frozen at ``t``. Users whose task bound caps them below
   the level are frozen at the bound without an LP each: the bound levels are bisected, one LP per
   step, so that one round freezes every user the level passes.

:func:`sequential_lps_fallback` keeps the former algorithm (one user or more frozen per LP, up
to ``n_users`` LPs): :func:`lex_max_min` falls back on it when the bisected LPs fail, and the tests
compare both (``tests/properties/test_lex_fast.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from scipy import sparse

from fairsim.schedulers.exact.common import (
    DENSE_CELLS,
    FILL_TOL,
    LPResult,
    fill_idle,
    monopoly_tasks,
    room,
    serving,
    solve_lp,
    waterfill,
    waterfill_bounded,
)
from fairsim.schedulers.exact.instance import Instance, NumericalRangeError

#: Relative slack of a frozen user's level in later LPs (the level was computed to ~1e-9).
FREEZE_SLACK = 1e-9
#: HiGHS method of the sequential LPs of :func:`bisected_lps`.
LEVEL_METHOD = "highs-ipm"
#: HiGHS method of the master LPs of :func:`split_totals` (phase 1 from the slack basis: the dual
#: simplex without presolve; the interior-point method is several times slower there).
SPLIT_METHOD = "highs-ds"
#: The master LPs of :func:`split_totals` go to HiGHS through highspy, not ``linprog``
#: (:func:`~fairsim.schedulers.exact.common.solve_lp`, ``direct``).
SPLIT_DIRECT = True
#: Relative capacity excess (and reduced cost, in tasks of a variable's natural unit) below which
#: :func:`split_totals` takes the split as found.
SPLIT_RTOL = 1e-9
#: Most column-generation rounds of :func:`split_totals` (the DRFH experiment's instants need
#: one to three).
SPLIT_ROUNDS = 12
#: The first master LP of :func:`split_totals` may move users holding this many times a row's
#: excess.
FIRST_MOVES = 4.0
#: :func:`split_totals` gives up when a master LP leaves more than this fraction of the previous
#: excess (a stalled column generation; on benchmarks/bench_exact.py's instances a round removes
#: 5 % or more of it until the excess is 0 or no move improves).
SPLIT_STALL = 0.98
#: Largest ``(distinct sets)**2 * n_servers`` :func:`eligible_sets_fit` checks.
ELIGIBLE_CELLS = 5_000_000
#: The first master LP of :func:`split_totals` moves a user towards at most this many servers
#: (those with the most room, relative to their capacity, in the overfilled resource).
FIRST_TARGETS = 8
#: :func:`lex_max_min` hands an answer of the bisected LPs that still leaves this fraction of
#: ``gamma[n, l]`` room for some user to the fallback LPs (the check after the solve refuses above
#: ``CHECK_RTOL = 1e-6``).
ROOM_RTOL = 5e-7
#: Users per block of :func:`crash_assignment`.
CRASH_BLOCK = 16


def task_scale(inst: Instance, users: np.ndarray, servers: np.ndarray) -> np.ndarray:
    """Natural unit of the variable ``x[n, l]``: the most tasks user n can run on server l.

    ``min(gamma[n, l], max_tasks[n])`` (PS-DSF eq. 7 and the task bound): the LPs see
    ``y = x / task_scale`` in [0, 1] whatever the units of the resources and the size of a task.

    Returns
    -------
    ndarray, shape (len(users),)
    """
    gamma = monopoly_tasks(inst.capacity, inst.demand)[users, servers]
    return np.minimum(gamma, inst.max_tasks[users])


def _served(inst: Instance, a: np.ndarray, serve: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Users the lexicographic max-min serves, which server may run which, and share per task."""
    serve = serving(inst) if serve is None else serve
    ok = np.isfinite(a) & (a > 0) & serve.any(axis=1) & (inst.max_tasks > 0)
    serve = serve & ok[:, None]
    coef = np.where(ok, a, 0.0) / inst.weight  # share per task
    return ok, serve, coef


def _without_lps(
    inst: Instance, ok: np.ndarray, serve: np.ndarray, coef: np.ndarray
) -> np.ndarray | None:
    """The lexicographic max-min where it needs no LP, shape (n_users, n_servers), else None:
    nothing when no user is served; on one server, exact progressive filling of the shares
    (max-min fairness with linear capacities, Bertsekas and Gallager 6.5.2), no LP tolerance
    involved."""
    out = np.zeros(serve.shape)
    if not serve.any():
        return out
    if serve.shape[1] != 1:
        return None
    out[:, 0] = waterfill(inst.demand, inst.capacity[0], _rate(ok, coef), upper=inst.max_tasks)
    return out


def _rate(ok: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """Tasks per unit of share, ``1 / coef``, of the served users (0 for the others)."""
    with np.errstate(divide="ignore"):
        return np.where(ok, 1.0 / np.where(ok, coef, 1.0), 0.0)


def lex_max_min(inst: Instance, a: np.ndarray, serve: np.ndarray | None = None) -> np.ndarray:
    """Lexicographic max-min of ``x_n * a_n / w_n`` over feasible per-server allocations.

    On one server, exact progressive filling. On several, the pooled relaxation first: the task
    totals ``X`` of progressive filling on the pooled cluster (:func:`pooled_totals`), then a
    per-server split of ``X`` (:func:`split_totals`, small phase-1 LPs). If a split exists, it is
    the answer:

    *Proof.* Let ``P`` be the set of task-total vectors of feasible allocations and ``Q`` that of
    the pooled cluster (``sum_n d[n, r] X_n <= C_r``, ``0 <= X_n <= max_tasks``) restricted to the
    users some server serves. Summing the per-server capacities of a feasible allocation over the
    servers shows ``P ⊆ Q``. Progressive filling on ``Q`` gives the lexicographic max-min ``X*`` of
    the shares over ``Q`` (one set of linear capacities; Bertsekas and Gallager, Section 6.5.2),
    so the sorted share vector of ``X*`` is lexicographically at least that of every point of
    ``P``. If ``X* ∈ P`` (the split exists), it is therefore the lexicographic max-min over ``P``,
    and that optimum is unique (the share vector of a lexicographic max-min over a convex set is
    unique). ∎

    Otherwise, sequential LPs (:func:`bisected_lps`). Both ways end with
    :func:`~fairsim.schedulers.exact.common.fill_idle`, which changes nothing unless an LP's
    tolerance left a server idle. If HiGHS fails a level LP (seen once in 1,200 random
    instances), or the bisected LPs' answer still leaves room above :data:`ROOM_RTOL` after the
    fill LP (seen on one synthetic instance of 1,000 users), the fallback LPs
    (:func:`sequential_lps_fallback`), which hold users at the levels they reached rather than
    exactly at their bounds, decide, at their cost.

    On the DRFH experiment's instants (``benchmarks/bench_exact.py``: about 510 users with task
    bounds, 2,000 servers aggregated into 7 classes, 2 resources) the split exists: one filling and
    one to three small LPs, against one LP per user frozen at its bound before
    (:func:`sequential_lps_fallback`). The task totals are those of the former LPs (to their
    tolerance); where several per-server splits are optimal, the one returned may differ.

    Parameters
    ----------
    inst : Instance
    a : ndarray, shape (n_users,)
        Share per task of each user; users with ``a <= 0`` or ``inf`` or no serving server get 0.
    serve : ndarray of bool, shape (n_users, n_servers), optional
        Which server may run which user (default :func:`~fairsim.schedulers.exact.common.serving`).

    Returns
    -------
    ndarray, shape (n_users, n_servers)
        Fractional task counts ``x[n, l]``.

    Raises
    ------
    NumericalRangeError
        If an LP has no optimum by HiGHS (:func:`~fairsim.schedulers.exact.common.solve_lp`).
    """
    ok, serve, coef = _served(inst, a, serve)
    done = _without_lps(inst, ok, serve, coef)
    if done is not None:
        return done
    x = split_totals(inst, pooled_totals(inst, _rate(ok, coef)), serve)
    if x is not None and ok.all() and x.any():
        # every user served: split_totals accepted the split only with no room above FILL_TOL
        # on any server that serves a user, fill_idle's own test (it would return x as it is)
        return x
    if x is not None:
        return fill_idle(inst, x, what="lexicographic max-min fill LP")
    try:
        x = fill_idle(
            inst, bisected_lps(inst, coef, ok, serve), what="lexicographic max-min fill LP"
        )
    except NumericalRangeError:
        # a level LP met a feasible set thinner than HiGHS's tolerance (users held exactly at
        # their bounds next to saturated servers); the fallback LPs, which hold users at the
        # levels they reached, decide (and raise if they fail too)
        return sequential_lps_fallback(inst, a, serve)
    gamma = monopoly_tasks(inst.capacity, inst.demand)
    if (room(inst, x, rounding=True) > ROOM_RTOL * gamma)[serve].any():
        # the last level LP left room the fill LP's tolerance did not see (1.7e-6 of a user's
        # tasks on one of 9 classes, 1,000 users): the fallback LPs decide
        return sequential_lps_fallback(inst, a, serve)
    return x


def pooled_totals(inst: Instance, rate: np.ndarray) -> np.ndarray:
    """Task totals of progressive filling on the pooled cluster: the relaxation's lex max-min.

    Parameters
    ----------
    inst : Instance
    rate : ndarray, shape (n_users,)
        Tasks per unit of share, ``w_n / a_n`` (0 for users no server serves).

    Returns
    -------
    ndarray, shape (n_users,)
        ``X_n``: every user either holds ``max_tasks`` or demands a resource the pooled cluster
        has saturated, and holds the largest share among the users of that resource.
    """
    return waterfill_bounded(inst.demand, inst.capacity.sum(axis=0), rate, inst.max_tasks)


def split_totals(inst: Instance, totals: np.ndarray, serve: np.ndarray) -> np.ndarray | None:
    """A per-server allocation with the given task totals, or ``None`` if none is found.

    The split must satisfy ``sum_l x[n, l] = X_n``, ``sum_n d[n, r] x[n, l] <= c[l, r]``, ``x[n, l]
    >= 0`` and 0 where server l cannot serve n. Each user first gets one server
    (:func:`crash_assignment`); the LP then moves tasks away from it, by column generation on the
    phase-1 problem "minimise the capacity excess": the master LP holds only the moves priced as
    improving by the previous duals (reduced cost ``sum_r d[n, r] (pi[l, r] - pi[ref_n, r]) +
    pi_n < 0``) and one excess variable per capacity row, each in its natural unit (the LPs are
    scaled by :func:`~fairsim.schedulers.exact.common.solve_lp`); it stops when the excess is 0
    (a split) or no move is priced as improving (no split exists: the excess is the phase-1
    optimum over all moves), or when a round removes less than 2 % of the excess
    (:data:`SPLIT_STALL`; the sequential LPs then decide, as they do when Hall's condition on the
    users' sets of servers already fails, :func:`eligible_sets_fit`). On the DRFH experiment's
    instants one to three master LPs of a few
    hundred columns, instead of one LP over every user and server. A split is accepted only if it
    meets the capacities to :data:`SPLIT_RTOL` in the instance's units and leaves no room for any
    user on any server (:func:`~fairsim.schedulers.exact.common.room` above ``FILL_TOL`` of
    ``gamma[n, l]``): the pooled totals leave none in the pool, so an exact split leaves none
    anywhere, and room shows an LP that met a saturated resource only to its tolerance (one
    server's excess of 1e-10 of 1e10 hiding a small server's whole capacity of 4).

    Parameters
    ----------
    inst : Instance
    totals : ndarray, shape (n_users,)
    serve : ndarray of bool, shape (n_users, n_servers)

    Returns
    -------
    ndarray, shape (n_users, n_servers), or None
    """
    n_u, n_s = serve.shape
    n_r = inst.capacity.shape[1]
    out = np.zeros((n_u, n_s))
    pos = totals > 0
    if not pos.any():
        return out
    if (pos & ~serve.any(axis=1)).any():
        return None
    if not eligible_sets_fit(inst, totals, serve):
        return None
    ref = crash_assignment(inst, totals, serve)
    who = np.flatnonzero(pos)
    dem = inst.demand
    base = np.zeros((n_s, n_r))
    np.add.at(base, ref[who], totals[who, None] * dem[who])
    cap = inst.capacity
    rows = np.flatnonzero(cap.ravel() > 0)  # (l, r) rows; no user is served where c[l, r] = 0
    cap_rows = cap.ravel()[rows]
    slack = cap_rows - base.ravel()[rows]
    gamma = monopoly_tasks(cap, dem)
    candidate = serve & pos[:, None]
    candidate[who, ref[who]] = False
    columns = np.zeros((n_u, n_s), dtype=bool)
    new = _first_moves(inst, totals, ref, candidate, slack, rows)
    excess = float((np.maximum(-slack, 0.0) / cap_rows).sum())  # the crash's, as the LP counts it
    x_moves = np.zeros(0)
    users = servers = np.zeros(0, dtype=int)
    for _ in range(SPLIT_ROUNDS if excess > SPLIT_RTOL else 0):
        if not new.any():
            break
        columns |= new
        users, servers = np.nonzero(columns)
        n_m = len(users)
        # moves of user n from ref_n to l: +d on (l, r), -d on (ref_n, r); excess -1 on its row
        pos_row = np.searchsorted(rows, servers[:, None] * n_r + np.arange(n_r))
        neg_row = np.searchsorted(rows, ref[users][:, None] * n_r + np.arange(n_r))
        d_m = dem[users]
        has = d_m > 0
        col = np.broadcast_to(np.arange(n_m)[:, None], d_m.shape)
        n_rows = len(rows)
        moved = np.unique(users)
        # (row, column, value) of the capacity rows, then of the moved users' rows: no entry
        # repeats (a move's target is never its user's crash server)
        user_row = n_rows + np.searchsorted(moved, users)
        entries = (
            np.concatenate([pos_row[has], neg_row[has], np.arange(n_rows), user_row]),
            np.concatenate([col[has], col[has], n_m + np.arange(n_rows), np.arange(n_m)]),
            np.concatenate([d_m[has], -d_m[has], -np.ones(n_rows), np.ones(n_m)]),
        )
        shape = (n_rows + len(moved), n_m + n_rows)
        if shape[0] * shape[1] <= DENSE_CELLS:  # what solve_lp makes of it: built dense at once
            a_split: np.ndarray | sparse.csr_matrix = np.zeros(shape)
            a_split[entries[0], entries[1]] = entries[2]
        else:
            a_split = sparse.csr_matrix((entries[2], (entries[0], entries[1])), shape=shape)
        try:
            res = solve_lp(
                np.r_[np.zeros(n_m), 1.0 / cap_rows],
                a_split,
                np.r_[slack, totals[moved]],
                scale=np.r_[np.minimum(gamma[users, servers], totals[users]), cap_rows],
                method=SPLIT_METHOD,
                what="lexicographic max-min split LP",
                presolve=False,
                direct=SPLIT_DIRECT,
            )
        except NumericalRangeError:
            return None  # no verdict here: the sequential LPs decide
        assert res is not None
        x_moves = res.x[:n_m]
        if res.fun > SPLIT_STALL * excess:
            return None  # the excess hardly falls: give the sequential LPs the instance
        excess = res.fun
        if excess <= SPLIT_RTOL:
            break
        duals = -res.ineq_marginals
        price = np.zeros(n_s * n_r)
        price[rows] = duals[:n_rows]
        per_task = dem @ price.reshape(n_s, n_r).T  # (N, L): price of one task of n on l
        reduced = per_task - per_task[np.arange(n_u), ref][:, None]
        reduced[moved] += duals[n_rows:, None]
        gain = np.where(candidate & ~columns, reduced * np.minimum(gamma, totals[:, None]), 0.0)
        best = gain.argmin(axis=1)
        new = np.zeros_like(columns)
        value = gain[np.arange(n_u), best]
        improving = np.flatnonzero(value < -SPLIT_RTOL)
        # the most improving moves, a few per capacity row
        improving = improving[np.argsort(value[improving], kind="stable")[: 4 * n_rows]]
        new[improving, best[improving]] = True
    if excess > SPLIT_RTOL:
        return None
    out[who, ref[who]] = totals[who]
    np.add.at(out, (users, servers), x_moves)
    np.add.at(out, (users, ref[users]), -x_moves)
    out = np.maximum(out, 0.0)
    use = out.T @ dem
    if (use > cap * (1 + SPLIT_RTOL)).any():
        return None
    # the pooled totals leave no room in the pool, so an exact split leaves none on any server;
    # room here means the LP met a saturated resource only to its tolerance, where one server's
    # small excess (1e-10 of 1e10) hides another's whole capacity (4): not taken as a split
    if (room(inst, out) > FILL_TOL * gamma)[serve].any():
        return None
    return out


def _first_moves(
    inst: Instance,
    totals: np.ndarray,
    ref: np.ndarray,
    candidate: np.ndarray,
    slack: np.ndarray,
    rows: np.ndarray,
) -> np.ndarray:
    """The first master LP's moves in :func:`split_totals`: for every capacity row ``(l, r)`` the
    crash overfills, users of ``r`` on ``l`` until they hold :data:`FIRST_MOVES` times the excess
    (the largest no larger than that first), each towards the :data:`FIRST_TARGETS` servers with
    the most room in ``r``. Any choice is exact (the later rounds price moves by the LP's duals);
    this one keeps the first LP small.

    Returns
    -------
    ndarray of bool, shape (n_users, n_servers)
    """
    n_s, n_r = inst.capacity.shape
    new = np.zeros(candidate.shape, dtype=bool)
    room = np.zeros(n_s * n_r, dtype=bool)
    room[rows] = slack > 0
    room = room.reshape(n_s, n_r)
    slack_of = np.zeros(n_s * n_r)
    slack_of[rows] = slack / inst.capacity.ravel()[rows]
    slack_of = slack_of.reshape(n_s, n_r)
    for i in np.flatnonzero(slack < 0):
        srv, r = divmod(int(rows[i]), n_r)
        mine = np.flatnonzero((ref == srv) & (totals > 0) & (inst.demand[:, r] > 0))
        size = totals[mine] * inst.demand[mine, r]
        # the largest users no larger than the target first, then the larger ones
        target = -FIRST_MOVES * slack[i]
        order = np.lexsort((-size, size > target))
        take = np.searchsorted(np.cumsum(size[order]), target) + 1
        pick = mine[order[:take]]
        # towards the servers with the most room in r
        targets = np.flatnonzero(room[:, r])
        order_t = np.argsort(-slack_of[targets, r], kind="stable")[:FIRST_TARGETS]
        to = np.zeros(n_s, dtype=bool)
        to[targets[order_t]] = True
        new[pick] |= candidate[pick] & to[None, :]
    return new


def eligible_sets_fit(inst: Instance, totals: np.ndarray, serve: np.ndarray) -> bool:
    """A necessary condition for a split of ``totals`` (Hall's condition on the users' sets of
    serving servers): for every user's set ``S``, the users that only ``S`` serves fit in ``S``'s
    pooled capacity, ``sum_{m: S_m ⊆ S} X_m d[m] <= sum_{l in S} c[l]``.

    Checked over the distinct sets (skipped, ``True``, when they are too many for a quick check);
    without placement constraints it is the pooled capacity itself. ``False`` proves that no split
    exists, so :func:`split_totals` leaves the instance to the sequential LPs at once.
    """
    pos = totals > 0
    if serve[pos].all():  # one set, every server (np.unique's answer, without its sort)
        sets, group = np.ones((1, serve.shape[1]), dtype=bool), np.zeros(int(pos.sum()), int)
    else:
        sets, group = np.unique(serve[pos], axis=0, return_inverse=True)
    if len(sets) ** 2 * serve.shape[1] > ELIGIBLE_CELLS:
        return True
    need = np.zeros((len(sets), inst.capacity.shape[1]))
    np.add.at(need, group.ravel(), totals[pos, None] * inst.demand[pos])
    inside = ~(sets[:, None, :] & ~sets[None, :, :]).any(axis=2)  # inside[i, j]: set i ⊆ set j
    held = inside.T.astype(float) @ need  # (K, R)
    room_in = sets.astype(float) @ inst.capacity  # (K, R)
    return bool((held <= room_in * (1 + SPLIT_RTOL)).all())


def crash_assignment(inst: Instance, totals: np.ndarray, serve: np.ndarray) -> np.ndarray:
    """One serving server per user for all its ``X_n`` tasks: the start of :func:`split_totals`.

    Users in decreasing order of their largest share of a pooled resource, in blocks of
    :data:`CRASH_BLOCK`; each user of a block takes the server where its tasks fit the most times
    into what the previous blocks left (``max_l min_r free[l, r] / (X_n d[n, r])``). The result
    only sets where the column generation starts (how many moves it needs), not whether a split is
    found.

    Returns
    -------
    ndarray of int, shape (n_users,)
        The server of each user with ``X_n > 0``; 0 for the others.
    """
    use = totals[:, None] * inst.demand
    pooled = inst.capacity.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        size = np.where(pooled > 0, use / np.where(pooled > 0, pooled, 1.0), 0.0).max(axis=1)
    order = np.argsort(-size, kind="stable")
    order = order[totals[order] > 0]
    free = inst.capacity.astype(float)
    ref = np.zeros(len(totals), dtype=int)
    use_o, serve_o = use[order], serve[order]
    pos_o = use_o > 0
    n_l, n_r = free.shape
    masked = not serve_o.all()
    # tasks_that_fit's divisions and minima (inf where a user does not demand a resource), in
    # buffers
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(0, len(order), CRASH_BLOCK):
            need, pos = use_o[i : i + CRASH_BLOCK], pos_o[i : i + CRASH_BLOCK]  # (B, R)
            fits = np.full((len(need), n_l), np.inf)  # (B, L): times each fits in what is free
            q = np.empty_like(fits)
            for r in range(n_r):
                q.fill(np.inf)
                np.divide(free[None, :, r], need[:, r, None], out=q, where=pos[:, r, None])
                np.minimum(fits, q, out=fits)
            if masked:
                fits[~serve_o[i : i + CRASH_BLOCK]] = -np.inf
            choice = fits.argmax(axis=1)
            ref[order[i : i + CRASH_BLOCK]] = choice
            np.add.at(free, choice, -need)
    return ref


class _LevelLPs:
    """Nace and Pioro's sequential max-min LPs (2008, Section III-B) over the allocation's serving
    pairs, and the users frozen so far.

    The variables are ``x[n, l]`` for every pair that ``serve`` allows (in ``np.nonzero`` order)
    and a common level ``t`` (the last column), which an LP maximises subject to the servers'
    capacities, the task bounds, ``share_n >= t`` for every *rising* user and ``share_n >=
    level_n`` (relaxed by :data:`FREEZE_SLACK`) for every *held* one (:meth:`solve`). Rounds
    (:meth:`rounds`) go on until every served user is frozen at a level (:meth:`freeze`);
    :func:`bisected_lps` and :func:`sequential_lps_fallback` choose the rising and held sets of
    each round differently. The parameters are those of :func:`bisected_lps`.

    Attributes
    ----------
    active : ndarray of bool, shape (n_users,)
        Served users not frozen yet.
    level : ndarray, shape (n_users,)
        The level of each frozen user.
    x : ndarray, shape (n_v,)
        The task counts of the last optimum (zeros before the first).
    """

    def __init__(self, inst: Instance, coef: np.ndarray, ok: np.ndarray, serve: np.ndarray):
        n_u, self.n_servers = serve.shape
        self.ok = ok
        self.active = ok.copy()
        self.level = np.zeros(n_u)
        users, servers = np.nonzero(serve)
        self.users, self.servers = users, servers
        n_v = self.n_v = len(users)
        self.scale = task_scale(inst, users, servers)
        # the largest share each user can reach alone: the natural unit of t
        self.top = coef * np.minimum(
            np.bincount(users, weights=self.scale, minlength=n_u), inst.max_tasks
        )
        # capacity rows: (l, r) -> sum_n d[n, r] x[n, l] <= c[l, r]
        self.cap_a, self.cap_b = _capacity_rows(inst, users, servers, n_v + 1)
        # per-user sums
        self.share = sparse.csr_matrix((coef[users], (users, np.arange(n_v))), shape=(n_u, n_v + 1))
        self.tasks = sparse.csr_matrix(
            (np.ones(n_v), (users, np.arange(n_v))), shape=(n_u, n_v + 1)
        )
        self.bounded = np.nonzero(ok & np.isfinite(inst.max_tasks))[0]
        self.max_tasks = inst.max_tasks
        self.c = np.zeros(n_v + 1)
        self.c[-1] = -1.0
        self.x = np.zeros(n_v)

    def rounds(self) -> Iterator[np.ndarray]:
        """The unfrozen users at the start of each round, until every one is frozen (at most
        ``n_users + 1`` rounds)."""
        for _ in range(len(self.active) + 1):
            act = np.nonzero(self.active)[0]
            if len(act) == 0:
                return
            yield act

    def frozen(self) -> np.ndarray:
        """The served users frozen so far."""
        return np.nonzero(self.ok & ~self.active)[0]

    def freeze(self, users: np.ndarray, level: np.ndarray | float) -> None:
        """Freeze ``users`` at ``level``."""
        self.level[users] = level
        self.active[users] = False

    def solve(
        self,
        rising: np.ndarray,
        held: np.ndarray,
        held_level: np.ndarray,
        t_max: float,
        *,
        infeasible_ok: bool,
    ) -> LPResult | None:
        """The LP with ``t <= t_max``: its optimum, or None if infeasible and ``infeasible_ok``.

        Parameters
        ----------
        rising : ndarray of int
            Users whose share must reach ``t``.
        held, held_level : ndarray of int, ndarray of float
            Users held at (at least) a level of their own, and those levels.
        t_max : float

        Raises
        ------
        NumericalRangeError
            If HiGHS finds no optimum (an infeasible LP too, unless ``infeasible_ok``).
        """
        n_v = self.n_v
        t_col = sparse.csr_matrix(
            (np.ones(len(rising)), (np.arange(len(rising)), np.full(len(rising), n_v))),
            shape=(len(rising), n_v + 1),
        )
        # rising: t - share_n <= 0; held: -share_n <= -level_n (relaxed by a hair)
        blocks = [self.cap_a, t_col - self.share[rising]]
        b = [self.cap_b, np.zeros(len(rising))]
        if len(held):
            blocks.append(-self.share[held])
            b.append(-held_level * (1 - FREEZE_SLACK))
        if len(self.bounded):
            blocks.append(self.tasks[self.bounded])
            b.append(self.max_tasks[self.bounded])
        # t never exceeds the smallest reachable share of a rising user: its natural unit
        t_unit = float(self.top[rising].min()) if len(rising) else 1.0
        return solve_lp(
            self.c,
            sparse.vstack(blocks).tocsr(),
            np.concatenate(b),
            scale=np.r_[self.scale, t_unit],
            upper=np.r_[self.scale, t_max if len(rising) else 0.0],
            method=LEVEL_METHOD,
            what="lexicographic max-min LP",
            infeasible_ok=infeasible_ok,
        )

    def blocked(self, res: LPResult, rising: np.ndarray) -> np.ndarray:
        """The rising users that cannot exceed the optimum's level ``t*`` in any optimum: those
        whose fairness rows have a positive dual (the duals sum to 1, stationarity in ``t``),
        else those at ``t*``, else the lowest."""
        t = float(res.x[-1])
        n_cap = len(self.cap_b)
        duals = -res.ineq_marginals[n_cap : n_cap + len(rising)]
        blocked = rising[duals > 1e-9]
        if len(blocked) == 0:
            got = np.asarray(self.share[rising] @ res.x).ravel()
            blocked = rising[got <= t * (1 + 1e-9)]
            if len(blocked) == 0:
                blocked = rising[[int(np.argmin(got))]]
        return blocked

    def allocation(self) -> np.ndarray:
        """The task counts of the last optimum as an ``(n_users, n_servers)`` array."""
        out = np.zeros((len(self.active), self.n_servers))
        out[self.users, self.servers] = np.maximum(self.x, 0.0)
        return out


def bisected_lps(inst: Instance, coef: np.ndarray, ok: np.ndarray, serve: np.ndarray) -> np.ndarray:
    """Lexicographic max-min by Nace and Pioro's sequential LPs, task bounds frozen by bisection.

    A round finds the largest level every unfrozen user can reach up to its task bound: with the
    bound shares ``b_n = coef_n max_tasks_n`` of the unfrozen users sorted, ``b_(1) < ... <
    b_(k)``, LP(j) holds the users with ``b_n <= b_(j)`` at their bound ("pinned"), the frozen users
    at their levels, and maximises a common level ``t <= b_(j+1)`` of the others. Level ``b_(j)``
    is reachable iff LP(j) is feasible with ``t >= b_(j)``, a property monotone in ``j``: the
    largest such ``j*`` is bisected (:func:`_highest_reachable`), starting from the bound of the
    pooled relaxation (:func:`_pooled_level`: no level above the pooled cluster's first
    saturation is reachable). In LP(j*):

    - every pinned user holds its bound in the lexicographic max-min: if some user n held
      ``s_n < min(t*, b_n)``, moving a little towards LP(j*)'s optimum would raise every such user
      and lower nobody at or below their shares, a lexicographic improvement;
    - ``t* < b_(j*+1)``, so the fairness rows' duals sum to 1 (stationarity in ``t``), and the users
      whose rows have a positive dual cannot exceed ``t*`` in any optimum (Nace and Pioro 2008,
      Section III-B): they are frozen at ``t*``.

    A round costs ``1 + ceil(log2 k)`` LPs at most and usually one; rounds end at a saturation
    (a set of users blocked by capacity), not at every task bound. When ``t*`` reaches
    ``b_(j*+1)`` within the LP's tolerance, the users with that bound are frozen at it instead.

    Parameters
    ----------
    inst : Instance
    coef : ndarray, shape (n_users,)
        Share per task, ``a_n / w_n``.
    ok : ndarray of bool, shape (n_users,)
        Users the allocation serves.
    serve : ndarray of bool, shape (n_users, n_servers)
        Which server may run which (only ``ok`` users).

    Returns
    -------
    ndarray, shape (n_users, n_servers)

    Raises
    ------
    NumericalRangeError
        If an LP has no optimum by HiGHS.
    """
    lp = _LevelLPs(inst, coef, ok, serve)
    with np.errstate(invalid="ignore"):
        bound_share = np.where(ok & np.isfinite(inst.max_tasks), coef * inst.max_tasks, np.inf)
    for act in lp.rounds():
        bounds = np.unique(bound_share[act])
        bounds = bounds[np.isfinite(bounds)]
        t_pool = _pooled_level(inst, coef, lp.active, lp.level, ok & ~lp.active)
        hi = int(np.searchsorted(bounds, t_pool * (1 + FREEZE_SLACK), side="right"))
        lo, res = _highest_reachable(lp, act, bound_share, bounds, hi)
        lp.x = res.x[: lp.n_v]
        t = float(res.x[-1])
        pin = act[bound_share[act] <= bounds[lo - 1]] if lo else act[:0]
        rise = np.setdiff1d(act, pin)
        lp.freeze(pin, bound_share[pin])
        if len(rise) == 0:
            continue
        t_max = float(bounds[lo]) if lo < len(bounds) else np.inf
        if t >= t_max * (1 - FREEZE_SLACK):
            # the level reached the next task bound: those users hold their bound
            at = rise[bound_share[rise] <= t_max]
            lp.freeze(at, bound_share[at])
            continue
        lp.freeze(lp.blocked(res, rise), t)
    return lp.allocation()


def _pooled_level(
    inst: Instance, coef: np.ndarray, active: np.ndarray, level: np.ndarray, frozen: np.ndarray
) -> float:
    """The level at which progressive filling of the ``active`` users on the pooled cluster, with
    the ``frozen`` ones (a mask) held at their levels, first stops a user below its task bound:
    no higher level is reachable by a feasible allocation (inf if none stops)."""
    held = (level[frozen] * (1 - FREEZE_SLACK) / coef[frozen])[:, None] * inst.demand[frozen]
    room_left = np.maximum(inst.capacity.sum(axis=0) - held.sum(axis=0), 0.0)
    with np.errstate(divide="ignore"):
        rate = np.where(active, 1.0 / np.where(active, coef, 1.0), 0.0)
    fill = waterfill_bounded(inst.demand, room_left, rate, inst.max_tasks)
    below = active & (fill < inst.max_tasks * (1 - FREEZE_SLACK))
    return float((fill * coef)[below].min()) if below.any() else np.inf


def _highest_reachable(
    lp: _LevelLPs, act: np.ndarray, bound_share: np.ndarray, bounds: np.ndarray, hi: int
) -> tuple[int, LPResult]:
    """One round of :func:`bisected_lps`: the largest ``j <= hi`` whose LP(j) is reachable
    (LP(hi) tried first, then bisection), and LP(j)'s optimum.

    Raises
    ------
    NumericalRangeError
        If LP(0), feasible by construction, comes back infeasible (a solver failure).
    """
    tried: dict[int, LPResult | None] = {}
    frozen = lp.frozen()

    def attempt(j: int) -> LPResult | None:
        """LP(j), solved once."""
        if j not in tried:
            pin = act[bound_share[act] <= bounds[j - 1]] if j else act[:0]
            rise = act[bound_share[act] > bounds[j - 1]] if j else act
            t_max = float(bounds[j]) if j < len(bounds) else np.inf
            held = np.r_[frozen, pin].astype(int)
            held_level = np.r_[lp.level[frozen], bound_share[pin]]
            tried[j] = lp.solve(rise, held, held_level, t_max, infeasible_ok=True)
        return tried[j]

    def reachable(j: int) -> bool:
        """Whether every unfrozen user can reach ``min(bounds[j - 1], its bound)``."""
        res = attempt(j)
        if res is None or j == 0:
            return res is not None
        if not (bound_share[act] > bounds[j - 1]).any():
            return True  # every unfrozen user pinned: feasibility is all
        return float(res.x[-1]) >= bounds[j - 1] * (1 - FREEZE_SLACK)

    lo = 0
    if hi > 0 and reachable(hi):
        lo = hi
    else:
        top_j = hi - 1
        while lo < top_j:
            mid = (lo + top_j + 1) // 2
            if reachable(mid):
                lo = mid
            else:
                top_j = mid - 1
    res = attempt(lo)
    if res is None:
        # LP(0) holds the levels of the previous optimum (t = 0 is feasible): a solver failure
        raise NumericalRangeError(
            "lexicographic max-min LP: HiGHS found it infeasible although the previous "
            "optimum is feasible"
        )
    return lo, res


def _capacity_rows(
    inst: Instance, users: np.ndarray, servers: np.ndarray, n_cols: int
) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Capacity rows ``sum_n d[n, r] x[n, l] <= c[l, r]`` of the servers some variable uses."""
    n_s, n_r = inst.capacity.shape
    n_v = len(users)
    rows = (servers[:, None] * n_r + np.arange(n_r)[None, :]).ravel()
    cols = np.repeat(np.arange(n_v), n_r)
    vals = inst.demand[users].ravel()
    keep = vals > 0
    cap_a = sparse.csr_matrix((vals[keep], (rows[keep], cols[keep])), shape=(n_s * n_r, n_cols))
    used_rows = np.unique(rows[keep])
    return cap_a[used_rows], inst.capacity.ravel()[used_rows]


def sequential_lps_fallback(
    inst: Instance, a: np.ndarray, serve: np.ndarray | None = None
) -> np.ndarray:
    """Lexicographic max-min by Nace and Pioro's LPs with at least one user frozen per LP (up to
    ``n_users`` LPs, one per user frozen at its task bound): :func:`lex_max_min`'s fallback when
    the bisected LPs fail, and the tests' reference (``tests/properties/test_lex_fast.py``).

    Users are held at the levels they reached rather than exactly at their bounds, which keeps
    every LP's feasible set as thick as the previous optimum's. Parameters, result and errors are
    those of :func:`lex_max_min`.
    """
    ok, serve, coef = _served(inst, a, serve)
    done = _without_lps(inst, ok, serve, coef)
    if done is not None:
        return done
    lp = _LevelLPs(inst, coef, ok, serve)
    for act in lp.rounds():
        frozen = lp.frozen()
        res = lp.solve(act, frozen, lp.level[frozen], np.inf, infeasible_ok=False)
        assert res is not None
        lp.x = res.x[: lp.n_v]
        lp.freeze(lp.blocked(res, act), float(res.x[-1]))
    return fill_idle(inst, lp.allocation(), what="lexicographic max-min fill LP")


def drfh_share_per_task(inst: Instance, *, constrained: bool) -> np.ndarray:
    """Global dominant share of one task, ``max_r d[n, r] / C_r`` (DRFH eq. 2; PS-DSF eq. 5).

    Parameters
    ----------
    constrained : bool
        ``True`` (``drfh``): ``C`` is the capacity pooled over the servers that can serve user n.
        ``False`` (``c-drfh``): ``C`` is pooled over all servers, as if there were no placement
        constraints (PS-DSF paper, Section II-B).
    """
    if constrained:
        pooled = serving(inst).astype(float) @ inst.capacity  # (n, R)
    else:
        pooled = np.broadcast_to(inst.capacity.sum(axis=0), inst.demand.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(inst.demand > 0, inst.demand / pooled, 0.0)
    return np.where(np.isfinite(frac), frac, np.inf).max(axis=1)


def solve_drfh(inst: Instance) -> np.ndarray:
    """DRFH: lexicographic max-min of weighted global dominant shares (DRFH eq. 4, Section V-A).

    The dominant share is taken over the servers that can serve the user (equal to the paper's
    eq. 2 when there are no placement constraints).
    """
    return lex_max_min(inst, drfh_share_per_task(inst, constrained=True))


def solve_c_drfh(inst: Instance) -> np.ndarray:
    """C-DRFH: DRFH with dominant shares that ignore placement constraints (PS-DSF II-B, eq. 5)."""
    return lex_max_min(inst, drfh_share_per_task(inst, constrained=False))


def solve_tsf(inst: Instance) -> np.ndarray:
    """TSF: lexicographic max-min of ``x_n / (w_n gamma_n)`` (PS-DSF paper, Section II-B).

    ``gamma_n = sum_l min_r c[l, r] / d[n, r]`` over *all* servers, as if there were no placement
    constraints (Wang et al.'s Task Share Fairness, ref. [14] of the PS-DSF paper).
    """
    return lex_max_min(inst, share_per_task("tsf", inst))


def maximin_share(inst: Instance) -> np.ndarray:
    """LMM-MMS maximin share ``mu_n = min(n_n, (w_n / sum_m w_m) sum_l gamma[n, l])``.

    ``gamma[n, l] = min_r c[l, r] / d[n, r]`` summed over the servers that can serve user n: the
    tasks user n runs with a weight-proportional slice of every server. With one pool and equal
    weights this is ``min(n_n, min_r c_r / (N d[n, r]))``, the reconstruction of Li et al. (2025)
    in docs/mechanisms.md ("LMM-MMS definitions").
    """
    slice_ = inst.weight / inst.weight.sum()
    g = (monopoly_tasks(inst.capacity, inst.demand) * serving(inst)).sum(axis=1) * slice_
    return np.minimum(inst.max_tasks, g)


def solve_lmm_mms(inst: Instance, mms: np.ndarray | None = None) -> np.ndarray:
    """LMM-MMS: lexicographic max-min of the MMS ratios ``x_n / mu_n`` (Li et al. 2025;
    docs/mechanisms.md).

    Weights enter through the maximin share (a weight-proportional slice), not a second time.

    Parameters
    ----------
    mms : ndarray, shape (n_users,), optional
        A different maximin-share definition (default :func:`maximin_share`).
    """
    mu = maximin_share(inst) if mms is None else np.asarray(mms, dtype=float)
    with np.errstate(divide="ignore"):
        a = np.where(mu > 0, inst.weight / mu, np.inf)
    return lex_max_min(inst, a)


def share_per_task(name: str, inst: Instance) -> np.ndarray:
    """``a_n`` of mechanism ``name`` (``drfh``, ``c-drfh``, ``tsf``, ``lmm-mms``): the share
    ``x_n a_n / w_n`` it lexicographically maximises (``inf`` where a user gets nothing).

    Raises
    ------
    KeyError
        For another name.
    """
    if name in ("drfh", "c-drfh"):
        return drfh_share_per_task(inst, constrained=name == "drfh")
    if name == "tsf":
        gamma = monopoly_tasks(inst.capacity, inst.demand).sum(axis=1)
        with np.errstate(divide="ignore"):
            return np.where(gamma > 0, 1.0 / gamma, np.inf)
    if name == "lmm-mms":
        mu = maximin_share(inst)
        with np.errstate(divide="ignore"):
            return np.where(mu > 0, inst.weight / mu, np.inf)
    raise KeyError(name)
