"""Hierarchical DRF (H-DRF) on one pooled server (Bhattacharya et al., SoCC 2013).

The users are the leaves of a weighted tree of queues
(:func:`~fairsim.schedulers.exact.instance.parse_queues`); an instance without queues is a one-level
tree, on which H-DRF is DRF (``solve_drf``). Like
``drf``, ``hdrf`` pools the servers into one (``C_r = sum_l c[l, r]``) and refuses placement
constraints: the paper's setting is one pool of resources, and on several servers ``hdrf``
generalises the pooled ``drf``, not DRFH. The answer has one column, ``"pool"``.

**Definition** (static H-DRF as progressive filling). Every node has a *resource consumption
vector* ``V`` (shares of the pool) and a *level* ``lambda = max_r V[r] / w``: for a user, its
allocation ``x_n d_n / C`` and its weighted dominant share; for a queue (or the root), the sum of
its children's vectors in which every child that is not blocked is *rescaled* so that its level
equals ``M``, the smallest level among the children that are not blocked (the paper's
"rescaling to the minimum node" and "ignoring blocked nodes": a blocked child is added as it is),
and its level is taken over the resources that are not saturated for it ("ignoring saturated
resources"). A user is *blocked* when it holds ``max_tasks`` tasks or demands a resource that is
saturated (the pool's, or a queue's limit on its path, fairsim's extension); a queue is blocked
when all its children are. Progressive filling: repeatedly descend from the root, at each node
into the child that is not blocked with the smallest level, and give the user reached a small
amount; ``hdrf`` is the limit as the amount goes to 0, computed exactly, event by event (a
resource saturates, a user reaches ``max_tasks``, a child catches up with a sibling ahead of it,
the dominant resource of a queue changes), in the instance's units, with no step size.

In that limit the children of a node that are not blocked and share the smallest level rise
together, their levels kept equal. A child whose own growth does not raise its level (a queue
whose dominant resource is held by a blocked child) is *stuck*: the descent keeps choosing it,
so it alone receives resources until its level starts rising ("catches up"). When several
siblings are stuck at once, the paper's descent leaves the order open; fairsim takes the first in
declaration order (the queues under a node, in the order of ``"queues"``, then its users, in the
order of ``"users"``), which is what the descent does when it breaks ties by that order
(``tests/properties/test_hdrf.py`` checks the limit against the stepped descent).

**Guarantees and limits** (fairsim's extension; the paper has neither). A queue's ``limit`` caps
the amount of each resource its users hold together: when it is reached the users below it that
demand that resource are blocked, as by a saturated pool. A queue's ``guarantee`` is served
first: progressive filling runs in two stages, the first with every guaranteed queue capped at its
guarantee and only the users under some guaranteed queue growing (each queue's guarantee shared
among its users by the same rule), the second from that allocation with the guarantees lifted
(limits kept), in which the levels that stage left unequal are evened out smallest first. A
guarantee counts towards a queue's fair share, it is not added to it; a guarantee the queue's
users cannot use (a resource they do not demand, or their ``max_tasks``) is not held for them.

The module also holds the two wrong variants the paper discusses, used by the tests and the
property checker (not registered with ``fairsim solve``): :func:`solve_collapsed` (the hierarchy
collapsed into per-user weights, then DRF) and :func:`solve_naive` (DRF at every node on the raw
sums of the children's allocations: no rescaling, no ignoring of saturated resources), and
:func:`refill` (progressive filling continued from a given allocation, the paper's dynamic
setting).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairsim.schedulers.exact.instance import Instance, InstanceError, NumericalRangeError
from fairsim.schedulers.exact.pool import pooled, refuse_constraints

#: Relative tolerance under which two levels, or two entries of a consumption vector, are equal.
TIE = 1e-9
#: Relative tolerance under which a capacity, a limit or a guarantee counts as reached.
SAT_TOL = 1e-12


@dataclass(frozen=True)
class Rules:
    """Which hierarchical progressive filling.

    Attributes
    ----------
    rescale : bool
        A queue's vector rescales its non-blocked children to the smallest level among them (the
        paper's rescaling and ignoring of blocked nodes); ``False``: raw sums.
    ignore_saturated : bool
        A queue's level is taken over the resources not saturated for it; ``False``: over all.
    """

    rescale: bool
    ignore_saturated: bool


#: H-DRF as the paper defines it.
HDRF_RULES = Rules(rescale=True, ignore_saturated=True)
#: Naive H-DRF: DRF at every node on the raw sums of the children's allocations.
NAIVE_RULES = Rules(rescale=False, ignore_saturated=False)


@dataclass(frozen=True)
class Tree:
    """The solver's view of a one-pool instance: node 0 is the root, nodes ``1..Q`` the queues,
    nodes ``Q+1..Q+N`` the users (leaves).

    Attributes
    ----------
    parent : ndarray of int, shape (K,)
        ``-1`` for the root.
    children : tuple of tuple of int
        Per node, in declaration order (queues, then users).
    weight : ndarray, shape (K,)
    first_leaf : int
        ``Q + 1``.
    order : tuple of int
        The internal nodes, deepest first (children before parents).
    member : ndarray of bool, shape (K, N)
        User n is in the subtree of node k.
    ancestors : ndarray of bool, shape (K, K)
        ``ancestors[k, j]``: node j is k or an ancestor of k.
    share : ndarray, shape (N, R)
        Per-task shares of the pool, ``d[n, r] / C_r`` (0 where ``C_r`` is 0).
    sigma : ndarray, shape (N,)
        Per-task dominant share.
    max_tasks : ndarray, shape (N,)
    servable : ndarray of bool, shape (N,)
        The pool has every resource the user demands and ``max_tasks > 0``.
    limit : ndarray, shape (K, R)
        Caps in shares of the pool: 1 for the root, a queue's limit, ``inf`` for none.
    guarantee : ndarray, shape (K, R)
        Guarantees in shares of the pool (0 where none).
    guaranteed : ndarray of bool, shape (K,)
    """

    parent: np.ndarray
    children: tuple[tuple[int, ...], ...]
    weight: np.ndarray
    first_leaf: int
    order: tuple[int, ...]
    member: np.ndarray
    ancestors: np.ndarray
    share: np.ndarray
    sigma: np.ndarray
    max_tasks: np.ndarray
    servable: np.ndarray
    limit: np.ndarray
    guarantee: np.ndarray
    guaranteed: np.ndarray


def build_tree(inst: Instance, *, flat: bool = False, weights: np.ndarray | None = None) -> Tree:
    """The :class:`Tree` of ``inst`` on its pooled capacity.

    Parameters
    ----------
    inst : Instance
    flat : bool
        Ignore the queues (every user at the root).
    weights : ndarray, shape (n_users,), optional
        The users' weights instead of the instance's.
    """
    cap = inst.capacity.sum(axis=0)
    n_u, n_r = inst.demand.shape
    tree = None if flat else inst.queues
    n_q = 0 if tree is None else len(tree.ids)
    k = 1 + n_q + n_u
    first = 1 + n_q
    parent = np.full(k, -1, dtype=int)
    weight = np.ones(k)
    limit = np.full((k, n_r), np.inf)
    guarantee = np.zeros((k, n_r))
    guaranteed = np.zeros(k, dtype=bool)
    limit[0] = 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(cap > 0, 1.0 / cap, 0.0)
    if tree is not None:
        parent[1:first] = tree.parent + 1
        weight[1:first] = tree.weight
        with np.errstate(invalid="ignore"):
            limit[1:first] = np.where(cap > 0, tree.limit * frac, np.inf)
        guarantee[1:first] = tree.guarantee * frac
        guaranteed[1:first] = tree.guaranteed
        parent[first:] = tree.user_queue + 1
    else:
        parent[first:] = 0
    parent[0] = -1
    weight[first:] = inst.weight if weights is None else weights
    children: list[list[int]] = [[] for _ in range(k)]
    for j in range(1, k):
        children[int(parent[j])].append(j)
    depth = np.zeros(k, dtype=int)
    ancestors = np.zeros((k, k), dtype=bool)
    for j in range(k):
        i = j
        while i >= 0:
            ancestors[j, i] = True
            i = int(parent[i])
        depth[j] = int(ancestors[j].sum())
    order = tuple(int(j) for j in sorted(range(first), key=lambda j: -depth[j]))
    member = ancestors[first:].T.copy()  # (K, N)
    share = inst.demand * frac
    need_missing = ((inst.demand > 0) & (cap <= 0)).any(axis=1)
    return Tree(
        parent=parent,
        children=tuple(tuple(c) for c in children),
        weight=weight,
        first_leaf=first,
        order=order,
        member=member,
        ancestors=ancestors,
        share=share,
        sigma=share.max(axis=1),
        max_tasks=np.asarray(inst.max_tasks, dtype=float),
        servable=~need_missing & (inst.max_tasks > 0),
        limit=limit,
        guarantee=guarantee,
        guaranteed=guaranteed,
    )


def _reached(use: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Where ``use`` has reached ``cap`` (within :data:`SAT_TOL`); never for an infinite cap."""
    fin = np.isfinite(cap)
    return fin & (use >= np.where(fin, cap, 0.0) * (1 - SAT_TOL) - SAT_TOL * 1e-300)


@dataclass
class _State:
    """One analysis of the current allocation (:func:`_analyse`)."""

    use: np.ndarray  # (K, R) raw usage of each subtree, shares of the pool
    vec: np.ndarray  # (K, R) consumption vectors under the rules
    level: np.ndarray  # (K,)
    blocked: np.ndarray  # (K,)
    counted: np.ndarray  # (K, R) resources a node's level is taken over


def _analyse(t: Tree, rules: Rules, x: np.ndarray, cap: np.ndarray, grow: np.ndarray) -> _State:
    """Usage, consumption vectors, levels and blocked nodes of allocation ``x`` (bottom up)."""
    f = t.first_leaf
    k = len(t.parent)
    use = np.zeros((k, t.share.shape[1]))
    leaf_use = x[:, None] * t.share
    use[f:] = leaf_use
    use[:f] = t.member[:f].astype(float) @ leaf_use
    sat = _reached(use, cap)  # (K, R): reached at this node
    sat_for = (t.ancestors.astype(float) @ sat.astype(float)) > 0  # saturated for the node
    blocked = np.zeros(k, dtype=bool)
    leaf_sat = ((t.share > 0) & sat_for[f:]).any(axis=1)
    blocked[f:] = ~grow | ~t.servable | (x >= t.max_tasks * (1 - SAT_TOL)) | leaf_sat
    counted = ~sat_for if rules.ignore_saturated else np.ones_like(sat_for)
    vec = np.zeros_like(use)
    vec[f:] = leaf_use
    level = np.zeros(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        level[f:] = x * t.sigma / t.weight[f:]
    for a in t.order:
        ch = np.array(t.children[a], dtype=int)
        if ch.size == 0:
            blocked[a] = True
            continue
        nb = ch[~blocked[ch]]
        blocked[a] = nb.size == 0
        if rules.rescale and nb.size:
            m = level[nb].min()
            lv = level[ch]
            tied = lv <= m * (1 + TIE)
            with np.errstate(divide="ignore", invalid="ignore"):
                factor = np.where(~blocked[ch] & ~tied, m / np.where(lv > 0, lv, 1.0), 1.0)
            vec[a] = factor @ vec[ch]
        else:
            vec[a] = vec[ch].sum(axis=0)
        vals = vec[a][counted[a]]
        level[a] = float(vals.max()) / t.weight[a] if vals.size else 0.0
    return _State(use=use, vec=vec, level=level, blocked=blocked, counted=counted)


@dataclass
class _Growth:
    """The direction of one phase: task rates and, per growing queue, the rates events need."""

    rate: np.ndarray  # (N,) tasks per unit of the phase parameter
    scale: dict[int, float]  # growing internal node -> its units per unit of the parameter
    dvec: dict[int, np.ndarray]  # growing internal node -> vector rate per unit of its growth
    dinner: dict[int, float]  # growing internal node -> rate of its tied children's level
    tied: dict[int, np.ndarray]  # growing internal node -> its growing children


def _dominant(t: Tree, s: _State, a: int) -> tuple[np.ndarray, float]:
    """The resources on which node ``a``'s level is attained (within :data:`TIE`) and the level's
    numerator ``max V[r]`` over the counted resources."""
    cnt = s.counted[a]
    top = float(np.where(cnt, s.vec[a], -np.inf).max()) if cnt.any() else 0.0
    return cnt & (s.vec[a] >= top * (1 - TIE)), top


def _level_rate(t: Tree, s: _State, a: int, dv: np.ndarray) -> float:
    """How fast node ``a``'s level rises when its vector grows at ``dv`` (0: it is stuck)."""
    arg, _ = _dominant(t, s, a)
    if not arg.any():
        return 0.0
    rho = float(dv[arg].max()) / t.weight[a]
    return rho if rho > 1e-12 * max(float(np.abs(dv).max()), 1e-300) / t.weight[a] else 0.0


def _direction(t: Tree, rules: Rules, s: _State) -> _Growth:
    """The growth of the phase that starts at state ``s``, top down from the root.

    At every node the children that are not blocked and share the smallest level grow, each
    scaled so that its level rises at rate 1; if one of them is stuck (its growth does not raise
    its level), the first such child alone grows. The root's unit is the phase parameter.
    """
    f = t.first_leaf
    n_u = t.share.shape[0]
    g = _Growth(rate=np.zeros(n_u), scale={}, dvec={}, dinner={}, tied={})
    mult: dict[int, float] = {}

    def down(a: int) -> tuple[np.ndarray, np.ndarray, float]:
        """Task rates, vector rate and level rate of node ``a`` for one unit of its growth."""
        if a >= f:
            n = a - f
            v = np.zeros(n_u)
            v[n] = t.weight[a] / t.sigma[n]
            return v, v[n] * t.share[n], 1.0
        ch = np.array(t.children[a], dtype=int)
        nb = ch[~s.blocked[ch]]
        m = s.level[nb].min()
        tied = nb[s.level[nb] <= m * (1 + TIE)]
        parts = [(int(c), *down(int(c))) for c in tied]
        stuck = [p for p in parts if p[3] <= 0.0]
        if stuck:
            c0, v, dv, _ = stuck[0]
            g.tied[a], g.dinner[a], mult[c0] = np.array([c0]), 0.0, 1.0
        else:
            v = np.sum([p[1] / p[3] for p in parts], axis=0)
            dv = np.sum([p[2] / p[3] for p in parts], axis=0)
            for c, _, _, rho in parts:
                mult[c] = 1.0 / rho
            if rules.rescale:
                ahead = np.setdiff1d(nb, tied)
                if ahead.size:
                    dv = dv + (s.vec[ahead] / s.level[ahead][:, None]).sum(axis=0)
            g.tied[a], g.dinner[a] = tied, 1.0
        g.dvec[a] = dv
        return v, dv, _level_rate(t, s, a, dv)

    g.rate = down(0)[0]
    g.scale[0] = 1.0
    for a in sorted(g.tied, key=lambda j: int(t.ancestors[j].sum())):
        for c in g.tied[a]:
            if int(c) < f:
                g.scale[int(c)] = g.scale[a] * mult[int(c)]
    return g


def _phase_length(t: Tree, s: _State, g: _Growth, x: np.ndarray, cap: np.ndarray) -> float:
    """The parameter at which the first event of the phase happens: a cap (the pool, a limit,
    a guarantee in stage 1) is reached, a user reaches ``max_tasks``, tied children catch up
    with a sibling ahead of them, or another resource becomes a growing queue's dominant one."""
    f = t.first_leaf
    ends = [np.inf]
    use_rate = np.zeros_like(s.use)
    use_rate[f:] = g.rate[:, None] * t.share
    use_rate[:f] = t.member[:f].astype(float) @ use_rate[f:]
    fin = np.isfinite(cap) & (use_rate > 0)
    if fin.any():
        ends.append(float(((cap[fin] - s.use[fin]) / use_rate[fin]).min()))
    bounded = (g.rate > 0) & np.isfinite(t.max_tasks)
    if bounded.any():
        ends.append(float(((t.max_tasks[bounded] - x[bounded]) / g.rate[bounded]).min()))
    for a, k in g.scale.items():
        if g.dinner[a] > 0:
            ch = np.array(t.children[a], dtype=int)
            ahead = np.setdiff1d(ch[~s.blocked[ch]], g.tied[a])
            if ahead.size:
                m = s.level[g.tied[a]].max()
                ends.append(float(((s.level[ahead] - m) / (k * g.dinner[a])).min()))
        if a == 0:
            continue
        arg, top = _dominant(t, s, a)
        if not arg.any():
            continue
        dv = g.dvec[a] * k
        slope = dv[arg].max()
        faster = s.counted[a] & ~arg & (dv > slope)
        if faster.any():
            ends.append(float(((top - s.vec[a][faster]) / (dv[faster] - slope)).min()))
    return max(0.0, min(ends))


def fill(
    t: Tree,
    rules: Rules,
    *,
    start: np.ndarray | None = None,
    cap: np.ndarray | None = None,
    grow: np.ndarray | None = None,
) -> np.ndarray:
    """Hierarchical progressive filling under ``rules``, exactly, from ``start``.

    Parameters
    ----------
    t : Tree
    rules : Rules
    start : ndarray, shape (n_users,), optional
        Tasks held at the start (default none).
    cap : ndarray, shape (K, R), optional
        Caps per node in shares of the pool (default ``t.limit``: the pool and the limits).
    grow : ndarray of bool, shape (n_users,), optional
        The users allowed to grow (default all).

    Returns
    -------
    ndarray, shape (n_users,)
        Tasks per user.

    Raises
    ------
    NumericalRangeError
        If the filling does not end within its bound on the number of phases.
    """
    n_u = t.share.shape[0]
    x = np.zeros(n_u) if start is None else np.array(start, dtype=float)
    cap = t.limit if cap is None else cap
    grow = np.ones(n_u, dtype=bool) if grow is None else grow
    bound = 1000 + 50 * (len(t.parent) + t.share.shape[1]) ** 2
    still = 0  # phases in a row that moved no count (float rounding): a stall, not progress
    for _ in range(bound):
        s = _analyse(t, rules, x, cap, grow)
        if s.blocked[0]:
            return x
        g = _direction(t, rules, s)
        step = _phase_length(t, s, g, x, cap)
        if not np.isfinite(step):
            raise NumericalRangeError("hdrf: a phase of the progressive filling has no end")
        moved = x + step * g.rate
        still = still + 1 if np.array_equal(moved, x) else 0
        if still > 100:
            raise NumericalRangeError(
                "hdrf: the progressive filling stalls (its phases no longer move any count)"
            )
        x = moved
        hit = (g.rate > 0) & (x >= t.max_tasks * (1 - SAT_TOL))
        x[hit] = t.max_tasks[hit]
    raise NumericalRangeError(f"hdrf: the progressive filling did not end within {bound} phases")


def guarantee_heights(t: Tree) -> np.ndarray:
    """Per node, how deep the guarantees below it nest (shape (K,)): 0 for a guaranteed node
    without a guaranteed node below it, else one more than the largest height below; ``-1`` for
    a node without a guarantee."""
    h = np.full(len(t.parent), -1, dtype=int)
    below = np.full(len(t.parent), -1, dtype=int)  # largest height strictly below
    for a in t.order:  # deepest first
        for c in t.children[a]:
            below[a] = max(below[a], h[c], below[c])
        if t.guaranteed[a]:
            h[a] = below[a] + 1
    return h


def _stages(t: Tree, rules: Rules, start: np.ndarray | None = None) -> np.ndarray:
    """Guarantees first, innermost first, then everything.

    Stage ``s = 0, 1, ...`` serves the guaranteed queues of height ``s``
    (:func:`guarantee_heights`): the users below such a queue grow, capped by every guarantee of
    height ``s`` or more (the inner ones, already served, no longer cap them). A last stage lifts
    every guarantee and lets every user grow. Without guarantees, one stage.
    """
    if not t.guaranteed.any():
        return fill(t, rules, start=start)
    h = guarantee_heights(t)
    f = t.first_leaf
    x = start
    for stage in range(int(h.max()) + 1):
        cap = t.limit.copy()
        on = h >= stage
        cap[on] = np.minimum(cap[on], t.guarantee[on])
        grow = np.asarray(t.ancestors[f:][:, h == stage].any(axis=1), dtype=bool)
        x = fill(t, rules, start=x, cap=cap, grow=grow)
    return fill(t, rules, start=x)


def solve_hdrf(inst: Instance) -> np.ndarray:
    """Static H-DRF on the pooled cluster (module docstring; Bhattacharya et al., SoCC 2013,
    Section 3; guarantees and limits: fairsim's extension).

    Parameters
    ----------
    inst : Instance
        With or without a queue tree (``inst.queues``); without, every user hangs at the root
        and the answer is ``drf``'s.

    Returns
    -------
    ndarray, shape (n_users, 1)
        Tasks per user on the pool.

    Raises
    ------
    InstanceError
        For placement constraints (:func:`~fairsim.schedulers.exact.pool.refuse_constraints`).
    NumericalRangeError
        If the progressive filling does not end (:func:`fill`).
    """
    refuse_constraints("hdrf", inst)
    return _stages(build_tree(inst), HDRF_RULES)[:, None]


def solve_naive(inst: Instance) -> np.ndarray:
    """Naive H-DRF: DRF at every node on the raw sums of its children's allocations (no
    rescaling, no ignoring of saturated resources); blocked children are skipped. Not a
    ``fairsim solve`` mechanism: the paper's example of what goes wrong (``docs/hdrf.md``).

    Returns
    -------
    ndarray, shape (n_users, 1)
    """
    refuse_constraints("hdrf", inst)
    return _stages(build_tree(inst), NAIVE_RULES)[:, None]


def demanding(t: Tree) -> np.ndarray:
    """Nodes with a servable user below them (shape (K,)); a user is servable when the pool has
    every resource it demands and ``max_tasks > 0``."""
    f = t.first_leaf
    out = np.zeros(len(t.parent), dtype=bool)
    out[f:] = t.servable
    out[:f] = (t.member[:f] & t.servable[None, :]).any(axis=1)
    return out


def guaranteed_shares(inst: Instance) -> np.ndarray:
    """Each node's hierarchical share guarantee ``g`` (shape (K,), :class:`Tree` numbering):
    1 for the root, and for a node ``g_parent * w / sum w`` over its demanding siblings
    (itself included; 0 for a node that is not demanding). The weights of the collapsed
    hierarchy (:func:`solve_collapsed`) are the users' ``g``.
    """
    t = build_tree(inst)
    dem = demanding(t)
    g = np.zeros(len(t.parent))
    g[0] = 1.0
    for a in sorted(range(len(t.parent)), key=lambda j: int(t.ancestors[j].sum())):
        ch = np.array(t.children[a], dtype=int)
        live = ch[dem[ch]]
        if live.size:
            g[live] = g[a] * t.weight[live] / t.weight[live].sum()
    return g


def solve_collapsed(inst: Instance) -> np.ndarray:
    """The hierarchy collapsed into a flat tree: every user weighted by its guaranteed share
    (the product of ``w / sum w`` over its demanding siblings at every level,
    :func:`guaranteed_shares`), then DRF. Limits and guarantees are not kept (a flat tree has no
    queues). Not a ``fairsim solve`` mechanism: the paper's first wrong variant
    (``docs/hdrf.md``).

    Returns
    -------
    ndarray, shape (n_users, 1)
    """
    refuse_constraints("hdrf", inst)
    t = build_tree(inst)
    g = guaranteed_shares(inst)[t.first_leaf :]
    w = np.where(g > 0, g, 1.0)
    return fill(build_tree(inst, flat=True, weights=w), HDRF_RULES)[:, None]


def refill(inst: Instance, start: np.ndarray, variant: str = "hdrf") -> np.ndarray:
    """Progressive filling continued from ``start`` (tasks per user, shape (n_users,)): the
    paper's dynamic setting, where tasks that finish free resources that the mechanism then
    hands out without preempting anyone. ``variant``: ``"hdrf"``, ``"naive"`` or
    ``"collapsed"``; guarantees are not replayed (the limits are kept).

    Returns
    -------
    ndarray, shape (n_users, 1)
    """
    refuse_constraints("hdrf", inst)
    if variant == "collapsed":
        t = build_tree(inst)
        g = guaranteed_shares(inst)[t.first_leaf :]
        flat = build_tree(inst, flat=True, weights=np.where(g > 0, g, 1.0))
        return fill(flat, HDRF_RULES, start=start)[:, None]
    if variant not in ("hdrf", "naive"):
        raise InstanceError(f"variant: {variant!r} (expected hdrf, naive or collapsed)")
    rules = HDRF_RULES if variant == "hdrf" else NAIVE_RULES
    return fill(build_tree(inst), rules, start=start)[:, None]


def hdrf_problem(inst: Instance, x: np.ndarray, *, rtol: float) -> str | None:
    """Why pooled tasks ``x`` (shape (n_users, 1)) are not an H-DRF allocation of ``inst``
    (``None`` if the checks pass): the limits hold; every user below its ``max_tasks`` demands a
    resource the pool or a queue's limit on its path has used up (nothing more fits); every
    guarantee is served (each user under a guaranteed queue is stopped by a guarantee on its
    path, a limit, the pool or its ``max_tasks``); and, without guarantees, the hierarchical
    bottleneck condition (:func:`bottleneck_violation`). ``inst`` is the instance the mechanism
    was given (it is pooled here).
    """
    inst = pooled(inst)
    t = build_tree(inst)
    f = t.first_leaf
    xs = np.asarray(x, dtype=float).sum(axis=1)
    s = _analyse(t, HDRF_RULES, xs, t.limit, np.ones(len(xs), dtype=bool))
    ids = ("root", *(inst.queues.ids if inst.queues is not None else ()))
    over = np.isfinite(t.limit[1:f]) & (s.use[1:f] > t.limit[1:f] * (1 + rtol))
    if over.any():
        q, r = (int(i) for i in np.argwhere(over)[0])
        pool = float(inst.capacity[:, r].sum())  # shares back to the instance's units
        return (
            f"queue {ids[q + 1]!r} holds {s.use[q + 1, r] * pool:.6g} of the pool's "
            f"{inst.resources[r]!r}, above its limit {t.limit[q + 1, r] * pool:.6g}"
        )
    reached = np.isfinite(t.limit) & (s.use >= t.limit * (1 - rtol))
    for n in range(len(xs)):
        if not t.servable[n] or xs[n] >= t.max_tasks[n] * (1 - rtol):
            continue
        path = t.ancestors[f + n]
        stop = (t.share[n] > 0) & reached[path].any(axis=0)
        if not stop.any():
            return (
                f"user {inst.user_ids[n]!r} could run more than its {xs[n]:.6g} tasks: no "
                "resource it demands is used up by the pool or a queue's limit"
            )
    if t.guaranteed.any():
        return _guarantee_problem(t, inst, s, xs, ids, rtol)
    return bottleneck_violation(t, inst, s, xs, ids, rtol)


def _guarantee_problem(
    t: Tree, inst: Instance, s: _State, xs: np.ndarray, ids: tuple[str, ...], rtol: float
) -> str | None:
    """Every user below a guaranteed queue (and below its ``max_tasks``) demands a resource on
    which the queue holds its guarantee, or which the pool or a limit on its path has used up."""
    f = t.first_leaf
    held = t.guaranteed[:, None] & (s.use >= t.guarantee * (1 - rtol))
    used_up = np.isfinite(t.limit) & (s.use >= t.limit * (1 - rtol))
    for n in range(len(xs)):
        if not t.servable[n] or xs[n] >= t.max_tasks[n] * (1 - rtol):
            continue
        path = t.ancestors[f + n]
        stopped = used_up[path].any(axis=0)
        for b in np.flatnonzero(path & t.guaranteed):
            if not ((t.share[n] > 0) & (held[b] | stopped)).any():
                return (
                    f"queue {ids[b]!r} holds less than its guarantee while its user "
                    f"{inst.user_ids[n]!r} ({xs[n]:.6g} tasks) could run more within it"
                )
    return None


def bottleneck_violation(
    t: Tree, inst: Instance, s: _State, xs: np.ndarray, ids: tuple[str, ...], rtol: float
) -> str | None:
    """The hierarchical bottleneck condition, or why it fails.

    Every user ``n`` below its ``max_tasks`` needs a resource ``r`` it demands, used up by the
    pool (or by the limit of a queue ``b`` on its path), such that at every node ``a`` on its
    path (up to the root, or ``b``) no user ``m`` demanding ``r`` below another child ``q`` of
    ``a`` holds a dominant share above ``w_q`` times the raw level of ``n``'s side ``p``
    (``max_r use_p[r] / w_p``, its whole subtree's usage over every resource):
    ``s_m / w_q <= use_p / w_p``. Progressive filling gives ``m`` resources only while ``q`` is
    at the smallest level among the children of ``a`` that are not blocked, where ``q``'s level
    is at least ``s_m / w_q`` and at most ``p``'s (``p`` was not blocked, since ``n`` grew until
    ``r`` ran out), and ``p``'s raw level only rises. With one level this is DRF's bottleneck
    condition. Necessary for every rule of :class:`Rules`, not sufficient: the check catches a
    user starved while a cousin on the same resource holds more than its whole branch, not
    every departure from the filling (``docs/hdrf.md``).
    """
    f = t.first_leaf
    k = len(t.parent)
    n_r = t.share.shape[1]
    dom = xs * t.sigma
    demands = t.share > 0
    top = np.full((k, n_r), -np.inf)  # largest dominant share of a user below, per resource
    who = np.full((k, n_r), -1, dtype=int)  # and that user
    top[f:] = np.where(demands, dom[:, None], -np.inf)
    who[f:] = np.arange(len(xs))[:, None]
    for a in t.order:
        ch = list(t.children[a])
        if ch:
            best = top[ch].argmax(axis=0)
            top[a] = top[ch][best, np.arange(n_r)]
            who[a] = who[ch][best, np.arange(n_r)]
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = top / t.weight[:, None]  # s_m / w_q per node q
        raw = s.use.max(axis=1) / t.weight  # raw level of every node
    reached = np.isfinite(t.limit) & (s.use >= t.limit * (1 - rtol))
    worst: tuple[float, str] | None = None
    for n in range(len(xs)):
        if not t.servable[n] or xs[n] >= t.max_tasks[n] * (1 - rtol):
            continue
        leaf = f + n
        ok = False
        for r in np.flatnonzero(demands[n]):
            owners = [b for b in np.flatnonzero(t.ancestors[leaf]) if reached[b, r]]
            if not owners:
                continue
            upto = max(owners, key=lambda j: int(t.ancestors[j].sum()))  # the nearest
            bad = None
            p = leaf
            while p != upto:
                a = int(t.parent[p])
                sib = [q for q in t.children[a] if q != p]
                if sib:
                    their = rel[sib, r].max()
                    if their > raw[p] * (1 + rtol) + 1e-300:
                        q = sib[int(np.argmax(rel[sib, r]))]
                        bad = (their / raw[p] if raw[p] > 0 else np.inf, a, p, q)
                        break
                p = a
            if bad is None:
                ok = True
                break
            ratio, a, p, q = bad
            m = int(who[q, r])
            side = inst.user_ids[p - f] if p >= f else ids[p]
            branch = "" if q >= f else f" under {ids[q]!r} (weight {t.weight[q]:g})"
            why = (
                f"user {inst.user_ids[n]!r} (dominant share {dom[n]:.6g}) is stopped by "
                f"{inst.resources[r]!r} while user {inst.user_ids[m]!r}, which needs it too, "
                f"holds a dominant share {dom[m]:.6g}{branch}, above the level "
                f"{raw[p]:.6g} of {side!r} below {ids[a]!r}: not hierarchical max-min fair"
            )
            if worst is None or ratio < worst[0]:
                worst = (ratio, why)
        if not ok:
            return worst[1] if worst is not None else None
    return None
