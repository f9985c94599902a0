"""Dynamic demand: the Markovian model of Bonald and Roberts (Section 4.1), solved two ways.

Transactions of K classes arrive as Poisson processes of rates ``lambda_k``; a class-k transaction
needs resources in the proportions ``a_k`` (requirement vector, ``max_j a_kj = 1``) and brings an
exponential amount of work of mean ``1 / mu_k``. In state ``n = (n_1, ..., n_K)`` every transaction
in progress receives the rate ``phi_k(n)`` that the chosen allocation (DRF, PF or BMF over the
transactions in progress, on J resources of capacity 1) gives it. The performance measure is the
mean service rate ``gamma_k = (1 / mu_k) / E[completion time] = lambda_k / (mu_k E[n_k])``
(Little's law).

Two ways to compute ``gamma``:

* :func:`solve_markov` -- the stationary distribution of the Markov chain on the box
  ``{0..N}^K`` (arrivals of class k blocked when ``n_k = N``), by a sparse direct solve, with an
  a-posteriori truncation-error estimate (:class:`MarkovResult`);
* :func:`simulate_demand_model` -- a SimPy discrete-event simulation of the same model (every
  transaction keeps its own remaining work; nothing relies on memorylessness), with batch-means
  95 % confidence intervals.

Per-state allocations (:func:`class_rates`) are vectorised over states. By symmetry, transactions
of one class receive the same rate, so the allocation over ``n_k`` identical transactions equals the
*weighted* allocation over classes with weight ``n_k`` (class total ``x_k = n_k phi_k``); the fast
paths are checked against :mod:`fairsim.schedulers.exact` by ``tests/unit/test_dynamic_markov.py``.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import logging
import math
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import simpy
from scipy import stats

from fairsim.errors import ConfigError

logger = logging.getLogger(__name__)

#: Allocations available for the dynamic model.
ALLOCATIONS = ("drf", "pf", "bmf")

#: Tolerance on "a requirement vector has a component equal to 1".
UNIT_TOL = 1e-9


@dataclass(frozen=True)
class DemandModel:
    """A validated Markovian demand model (Bonald and Roberts, Section 4.1).

    Build it with :func:`make_model` (which validates); the constructor validates too.

    Attributes
    ----------
    vectors : tuple of tuple of float, shape (K, J)
        Requirement vector of each class, every one with a component equal to 1.
    loads : tuple of float, shape (K,)
        ``rho_k = lambda_k / mu_k`` (work arriving per unit time).
    mu : tuple of float, shape (K,)
        Reciprocal of the mean work of each class.
    """

    vectors: tuple[tuple[float, ...], ...]
    loads: tuple[float, ...]
    mu: tuple[float, ...]

    def __post_init__(self) -> None:
        _validate(self.vectors, self.loads, self.mu)

    @property
    def a(self) -> np.ndarray:
        """Requirement vectors, shape (K, J)."""
        return np.asarray(self.vectors, dtype=float)

    @property
    def rho(self) -> np.ndarray:
        """Class loads ``rho_k``, shape (K,)."""
        return np.asarray(self.loads, dtype=float)

    @property
    def mu_arr(self) -> np.ndarray:
        """``mu_k``, shape (K,)."""
        return np.asarray(self.mu, dtype=float)

    @property
    def lam(self) -> np.ndarray:
        """Arrival rates ``lambda_k = rho_k mu_k``, shape (K,)."""
        return self.rho * self.mu_arr

    @property
    def resource_loads(self) -> np.ndarray:
        """Load of each resource ``sum_k rho_k a_kj`` (eq. 8), shape (J,)."""
        return self.rho @ self.a

    @property
    def max_load(self) -> float:
        """Load of the most loaded resource (the x axis of Figs. 1-3)."""
        return float(self.resource_loads.max())


def _validate(vectors: Any, loads: Any, mu: Any) -> None:
    if not isinstance(vectors, tuple | list) or not vectors:
        raise ConfigError(
            f"vectors: expected a non-empty list of requirement vectors, got {vectors!r}"
        )
    n_res = None
    for k, v in enumerate(vectors):
        if not isinstance(v, tuple | list) or not v:
            raise ConfigError(f"vectors[{k}]: expected a non-empty list of numbers, got {v!r}")
        if n_res is None:
            n_res = len(v)
        elif len(v) != n_res:
            raise ConfigError(f"vectors[{k}]: has {len(v)} components, expected {n_res}")
        for j, x in enumerate(v):
            if (
                isinstance(x, bool)
                or not isinstance(x, int | float)
                or not math.isfinite(x)
                or x < 0
            ):
                raise ConfigError(f"vectors[{k}][{j}]: {x!r} (expected a finite number >= 0)")
        if abs(max(v) - 1.0) > UNIT_TOL:
            raise ConfigError(
                f"vectors[{k}]: {list(v)!r} has no component equal to 1 (max {max(v):g}); "
                "requirement vectors are refused unless normalised (divide by the largest "
                "component, or pass normalise=True)"
            )
    n_cls = len(vectors)
    for name, vals, strict in (("loads", loads, False), ("mu", mu, True)):
        if not isinstance(vals, tuple | list) or len(vals) != n_cls:
            raise ConfigError(f"{name}: expected {n_cls} numbers (one per class), got {vals!r}")
        for k, x in enumerate(vals):
            bad = isinstance(x, bool) or not isinstance(x, int | float) or not math.isfinite(x)
            if bad or x < 0 or (strict and x <= 0):
                rel = ">" if strict else ">="
                raise ConfigError(f"{name}[{k}]: {x!r} (expected a finite number {rel} 0)")
    res_load = np.asarray(loads, dtype=float) @ np.asarray(vectors, dtype=float)
    j = int(np.argmax(res_load))
    if res_load[j] >= 1.0:
        raise ConfigError(
            f"loads: resource {j} has load {res_load[j]:.6g} >= 1, outside the stability region "
            "(eq. 8: sum_k rho_k a_kj < 1 for every resource j)"
        )


def make_model(
    vectors: Sequence[Sequence[float]],
    loads: Sequence[float],
    mu: Sequence[float] | None = None,
    *,
    normalise: bool = False,
) -> DemandModel:
    """Validate and build a :class:`DemandModel`.

    Parameters
    ----------
    vectors : sequence of K sequences of J numbers
        Requirement vectors ``a_k``; each must have a component equal to 1 (the paper's
        normalisation, Section 2.1) unless ``normalise`` is true.
    loads : sequence of K numbers
        ``rho_k = lambda_k / mu_k``.
    mu : sequence of K numbers, optional
        ``mu_k`` (default 1 for every class, as in the paper's figures).
    normalise : bool
        Divide each vector by its largest component instead of refusing it. The loads are taken as
        given for the normalised vectors.

    Returns
    -------
    DemandModel

    Raises
    ------
    ConfigError
        One line naming the field and value: a vector without a unit component (when not
        normalising), an all-zero vector, negative or non-finite numbers, mismatched lengths, or
        loads outside the stability region (eq. 8).
    """
    vecs = []
    for k, v in enumerate(vectors):
        row = [float(x) for x in v]
        if normalise:
            top = max(row) if row else 0.0
            if top <= 0:
                raise ConfigError(f"vectors[{k}]: {row!r} is all zero; cannot normalise")
            row = [x / top for x in row]
        vecs.append(tuple(row))
    mus = tuple(float(m) for m in mu) if mu is not None else (1.0,) * len(vecs)
    return DemandModel(tuple(vecs), tuple(float(r) for r in loads), mus)


def scaled_loads(
    vectors: Sequence[Sequence[float]], weights: Sequence[float], max_load: float
) -> tuple[float, ...]:
    """Class loads proportional to ``weights`` whose most loaded resource has load ``max_load``.

    Parameters
    ----------
    vectors : (K, J) requirement vectors
    weights : (K,) relative loads (e.g. ``(1, 1, 1)`` balanced, ``(4, 1, 1)`` for
        ``rho_1 = 4 rho_2 = 4 rho_3``)
    max_load : float
        Target load of the most loaded resource.

    Returns
    -------
    tuple of float, shape (K,)
    """
    w = np.asarray(weights, dtype=float)
    peak = float((w @ np.asarray(vectors, dtype=float)).max())
    if peak <= 0:
        raise ConfigError(f"weights: {list(weights)!r} puts no load on any resource")
    return tuple(float(x) for x in w * (max_load / peak))


# --------------------------------------------------------------------------------------------
# Per-state allocations
# --------------------------------------------------------------------------------------------


def _drf_rates(n: np.ndarray, a: np.ndarray) -> np.ndarray:
    """DRF water-filling (Section 3.1) vectorised over states; every dominant component is 1."""
    s, k = n.shape
    phi = np.zeros((s, k))
    active = n > 0
    fixed = np.zeros((s, a.shape[1]))
    needs = a > 0  # (K, J)
    for _ in range(a.shape[1] + 1):
        if not active.any():
            break
        slope = (n * active) @ a  # (S, J)
        with np.errstate(divide="ignore", invalid="ignore"):
            hit = np.where(slope > 0, (1.0 - fixed) / slope, np.inf)
        level = hit.min(axis=1)  # (S,)
        full = hit <= level[:, None] * (1 + 1e-12) + 1e-15  # saturating resources
        freeze = active & ((full.astype(float) @ needs.T.astype(float)) > 0)
        lv = np.where(np.isfinite(level), level, 0.0)
        phi = np.where(freeze, lv[:, None], phi)
        fixed = fixed + (n * freeze * lv[:, None]) @ a
        active &= ~freeze
    return phi


def _pf_rates_2(n: np.ndarray, a: np.ndarray, iters: int = 64) -> np.ndarray:
    """PF for J = 2: ``phi_k = 1 / (N a_k . u)`` with u maximising ``sum n_k log(a_k . u)``.

    Eq. 3 with weights ``n_k``: ``x_k = n_k / (a_k . nu)``. Writing ``nu = N u`` with u on the
    simplex (complementary slackness gives ``sum_j nu_j = N``), u maximises the concave
    ``sum_k n_k log(a_k . u)``; for two resources ``u = (1 - t, t)`` and the derivative in t is
    decreasing, so t is found by bisection (exact to machine precision after ~60 halvings).
    """
    tot = n.sum(axis=1).astype(float)
    d = a[:, 1] - a[:, 0]

    def slope(t: np.ndarray) -> np.ndarray:
        den = a[None, :, 0] * (1 - t[:, None]) + a[None, :, 1] * t[:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(n > 0, n * d[None, :] / den, 0.0).sum(axis=1)

    lo = np.zeros(len(n))
    hi = np.ones(len(n))
    eps = 1e-300
    at0 = slope(np.full(len(n), eps)) <= 0
    at1 = slope(np.full(len(n), 1 - 1e-16)) >= 0
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        up = slope(mid) > 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    t = np.where(at0, 0.0, np.where(at1, 1.0, 0.5 * (lo + hi)))
    den = a[None, :, 0] * (1 - t[:, None]) + a[None, :, 1] * t[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        phi = np.where(n > 0, 1.0 / (np.maximum(tot, 1)[:, None] * den), 0.0)
    return phi


def _bmf_rates_2(n: np.ndarray, a: np.ndarray) -> np.ndarray:
    """BMF for J = 2 by the bottleneck mappings of Section 3.3, vectorised over states.

    With two resources a class is bottlenecked on resource 0 or 1, and the mapping is a threshold
    on the ratio ``r_k = a_k1 / a_k0``: classes with small ratios on resource 0 (common share
    ``c0``), the others on resource 1 (common share ``c1``), consistent when
    ``max r (mapped to 0) <= c1 / c0 <= min r (mapped to 1)``. The K + 1 thresholds are tried in
    turn; the first consistent one is the (unique) BMF allocation.
    """
    s, k = n.shape
    with np.errstate(divide="ignore"):
        r = np.where(a[:, 0] > 0, a[:, 1] / np.where(a[:, 0] > 0, a[:, 0], 1.0), np.inf)
    order = np.argsort(r, kind="stable")
    nf = n.astype(float)
    tot = nf.sum(axis=1)
    phi = np.full((s, k), np.nan)
    done = tot == 0
    phi[done] = 0.0
    tol = 1e-12
    for t in range(k + 1):
        g0 = order[:t]
        g1 = order[t:]
        pres = n > 0
        if t == k or t == 0:
            # one bottleneck: every class on resource j shares it equally, c = 1 / N
            j = 0 if t == k else 1
            with np.errstate(divide="ignore", invalid="ignore"):
                cand = np.where(pres, 1.0 / (np.maximum(tot, 1)[:, None] * a[None, :, j]), 0.0)
            usage = (nf * np.where(np.isfinite(cand), cand, 0.0)) @ a
            ok = np.isfinite(cand).all(axis=1) & (usage <= 1 + 1e-9).all(axis=1)
        else:
            # both saturated: c0 * A + c1 * B = 1 on each resource
            r0 = np.where(np.isfinite(r), r, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                inv = np.where(a[:, 1] > 0, a[:, 0] / np.where(a[:, 1] > 0, a[:, 1], 1.0), 0.0)
            m00 = nf[:, g0].sum(axis=1)  # resource 0, classes on 0: share c0 each
            m01 = (nf[:, g1] * inv[g1]).sum(axis=1)  # resource 0, classes on 1
            m10 = (nf[:, g0] * r0[g0]).sum(axis=1)
            m11 = nf[:, g1].sum(axis=1)
            det = m00 * m11 - m01 * m10
            okd = np.abs(det) > 1e-14 * np.maximum(1.0, tot) ** 2
            with np.errstate(divide="ignore", invalid="ignore"):
                c0 = np.where(okd, (m11 - m01) / det, np.nan)
                c1 = np.where(okd, (m00 - m10) / det, np.nan)
                ratio = c1 / c0
            big = np.where(pres[:, g0], r[None, g0], -np.inf).max(axis=1)
            small = np.where(pres[:, g1], r[None, g1], np.inf).min(axis=1)
            ok = (
                okd
                & (c0 > 0)
                & (c1 > 0)
                & (big <= ratio * (1 + tol) + tol)
                & (small >= ratio * (1 - tol) - tol)
            )
            cand = np.zeros((s, k))
            with np.errstate(divide="ignore", invalid="ignore"):
                cand[:, g0] = c0[:, None] / a[None, g0, 0]
                cand[:, g1] = c1[:, None] / a[None, g1, 1]
            cand = np.where(pres, cand, 0.0)
        take = ok & ~done
        phi[take] = cand[take]
        done |= take
    if not done.all():
        bad = n[~done][0]
        raise RuntimeError(f"bmf: no consistent bottleneck mapping for state {bad.tolist()}")
    return phi


def exact_class_rates(n: Sequence[int] | np.ndarray, a: np.ndarray, allocation: str) -> np.ndarray:
    """Per-transaction rates in one state from :mod:`fairsim.schedulers.exact` (slow reference
    path).

    Classes are users with weight ``n_k`` on one server of unit capacities; the class total
    ``x_k`` is divided by ``n_k``.

    Parameters
    ----------
    n : (K,) ints
    a : ndarray, shape (K, J)
    allocation : {"drf", "pf", "bmf"}

    Returns
    -------
    ndarray, shape (K,)
    """
    from fairsim.schedulers.exact import solve_exact
    from fairsim.schedulers.exact.instance import Instance

    nn = np.asarray(n, dtype=int)
    idx = np.nonzero(nn > 0)[0]
    out = np.zeros(len(nn))
    if len(idx) == 0:
        return out
    n_res = a.shape[1]
    inst = Instance(
        resources=tuple(f"r{j}" for j in range(n_res)),
        server_ids=("pool",),
        user_ids=tuple(f"c{k}" for k in idx),
        capacity=np.ones((1, n_res)),
        demand=a[idx].astype(float),
        weight=nn[idx].astype(float),
        max_tasks=np.full(len(idx), np.inf),
        eligible=np.ones((len(idx), 1), dtype=bool),
    )
    x = solve_exact(allocation, inst).sum(axis=1)
    out[idx] = x / nn[idx]
    return out


def class_rates(n: np.ndarray, a: np.ndarray, allocation: str) -> np.ndarray:
    """Rate ``phi_k(n)`` of each class-k transaction, vectorised over states.

    Parameters
    ----------
    n : ndarray of int, shape (S, K)
        States (numbers of transactions in progress per class).
    a : ndarray, shape (K, J)
        Requirement vectors (each with a component equal to 1).
    allocation : {"drf", "pf", "bmf"}
        DRF (Section 2.2, water-filling of Section 3.1), PF (Section 2.3, eq. 3) or BMF
        (Section 2.4, mappings of Section 3.3). DRF is vectorised for any J; PF and BMF for
        J <= 2 (the paper's case), otherwise each state goes through :func:`exact_class_rates`
        (one optimisation per state; for J >= 3 BMF need not be unique and the exact solver's
        tie-break applies).

    Returns
    -------
    ndarray, shape (S, K)
        Per-transaction rates (work per unit time); 0 where ``n_k = 0``.

    Raises
    ------
    ConfigError
        For an unknown allocation.
    """
    if allocation not in ALLOCATIONS:
        raise ConfigError(f"allocation: unknown {allocation!r} (known: {', '.join(ALLOCATIONS)})")
    n = np.atleast_2d(np.asarray(n, dtype=np.int64))
    a = np.asarray(a, dtype=float)
    if allocation == "drf":
        return _drf_rates(n, a)
    if a.shape[1] == 1:
        tot = np.maximum(n.sum(axis=1), 1)
        return np.where(n > 0, 1.0 / tot[:, None], 0.0)
    if a.shape[1] == 2:
        return _pf_rates_2(n, a) if allocation == "pf" else _bmf_rates_2(n, a)
    return np.array([exact_class_rates(row, a, allocation) for row in n]).reshape(n.shape)


# --------------------------------------------------------------------------------------------
# Markov chain
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MarkovResult:
    """Stationary solution of the truncated chain.

    Attributes
    ----------
    allocation : str
    level : int
        Truncation level N (states ``{0..N}^K``; class-k arrivals blocked at ``n_k = N``).
    mean_n : ndarray, shape (K,)
        ``E[n_k]`` under the truncated stationary distribution.
    gamma : ndarray, shape (K,)
        ``lambda_k / (mu_k E[n_k])``.
    boundary_mass : float
        Stationary probability of the truncation boundary (some ``n_k = N``).
    error_bound : ndarray, shape (K,)
        Relative truncation-error bound on ``E[n_k]`` (hence on ``gamma_k``): the mass-weighted
        mean of the marginal tail beyond N, extrapolated geometrically with the marginal's own
        decay ratio ``p_k(N) / p_k(N - 1)`` (``inf`` when that ratio is >= 1). Exact upper bound for
        M/M/1-PS; an a-posteriori estimate in general (``docs/bonald-roberts.md``).
    n_states : int
    solve_s : float
        Wall time of rates + generator + solve, seconds.
    """

    allocation: str
    level: int
    mean_n: np.ndarray
    gamma: np.ndarray
    boundary_mass: float
    error_bound: np.ndarray
    n_states: int
    solve_s: float


def box_states(n_classes: int, level: int) -> np.ndarray:
    """All states of ``{0..level}^K`` in mixed-radix order (class 0 fastest), shape (S, K)."""
    grids = np.indices((level + 1,) * n_classes).reshape(n_classes, -1).T
    return np.ascontiguousarray(grids[:, ::-1])


def generator(model: DemandModel, phi: np.ndarray, level: int) -> sp.csr_matrix:
    """Sparse generator Q of the truncated chain on :func:`box_states` (rows sum to 0).

    Births ``lambda_k`` (blocked at ``n_k = level``), deaths ``n_k phi_k(n) mu_k``.

    Parameters
    ----------
    model : DemandModel
    phi : ndarray, shape (S, K)
        Per-transaction rates in each state.
    level : int

    Returns
    -------
    scipy.sparse.csr_matrix, shape (S, S)
    """
    k = len(model.loads)
    states = box_states(k, level)
    s = len(states)
    idx = np.arange(s)
    strides = (level + 1) ** np.arange(k)
    rows, cols, vals = [], [], []
    lam, mu = model.lam, model.mu_arr
    for c in range(k):
        up = states[:, c] < level
        if lam[c] > 0:
            rows.append(idx[up])
            cols.append(idx[up] + strides[c])
            vals.append(np.full(int(up.sum()), lam[c]))
        dn = states[:, c] > 0
        rows.append(idx[dn])
        cols.append(idx[dn] - strides[c])
        vals.append(states[dn, c] * phi[dn, c] * mu[c])
    r = np.concatenate(rows)
    cc = np.concatenate(cols)
    v = np.concatenate(vals)
    q = sp.csr_matrix((v, (r, cc)), shape=(s, s))
    out = q - sp.diags(np.asarray(q.sum(axis=1)).ravel())
    return out.tocsr()


def nested_dissection(shape: tuple[int, ...], leaf: int = 64) -> np.ndarray:
    """Nested-dissection order of the states of a box lattice (class 0 fastest), shape (S,).

    Recursively halves the box along its longest side; each half is ordered first and the
    separating plane last. Eliminating in this order keeps the LU fill of a lattice generator far
    below that of the natural order (O(S^(4/3)) instead of O(S^(5/3)) for three classes).
    """
    idx = np.arange(int(np.prod(shape))).reshape(shape[::-1])
    out: list[np.ndarray] = []

    def rec(block: np.ndarray) -> None:
        if block.size <= leaf:
            out.append(block.ravel())
            return
        ax = int(np.argmax(block.shape))
        mid = block.shape[ax] // 2
        lo = np.take(block, np.arange(0, mid), axis=ax)
        hi = np.take(block, np.arange(mid + 1, block.shape[ax]), axis=ax)
        if lo.size:
            rec(lo)
        if hi.size:
            rec(hi)
        out.append(np.take(block, [mid], axis=ax).ravel())

    rec(idx)
    return np.concatenate(out)


def stationary(q: sp.csr_matrix, shape: tuple[int, ...]) -> np.ndarray:
    """Stationary distribution ``pi Q = 0, sum pi = 1`` of an irreducible lattice generator.

    Fixes ``pi(0) = 1``, solves the remaining (non-singular) equations ``Q^T`` restricted to the
    other states by a sparse LU (SuperLU, no pivoting: ``Q^T`` is column diagonally dominant) in
    :func:`nested_dissection` order, and normalises.

    Parameters
    ----------
    q : scipy.sparse matrix, shape (S, S)
        Generator on the states of :func:`box_states` with ``shape = (N + 1,) * K``.
    shape : tuple of int

    Returns
    -------
    ndarray, shape (S,)
    """
    a = q.T.tocsr()
    s = a.shape[0]
    if s == 1:
        return np.ones(1)
    p = nested_dissection(shape)
    p = p[p != 0]
    ap = a[p][:, p].tocsc()
    b = -a[p, 0].toarray().ravel()
    lu = spla.splu(ap, permc_spec="NATURAL", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    pi = np.empty(s)
    pi[0] = 1.0
    pi[p] = lu.solve(b)
    return pi / pi.sum()


def solve_markov_adaptive(
    model: DemandModel, allocation: str, levels: Sequence[int] = (15, 25, 40), tol: float = 2e-3
) -> MarkovResult:
    """:func:`solve_markov` at increasing ``levels`` until the truncation error is below ``tol``.

    From the second level on, the reported ``error_bound`` is the larger of the geometric tail
    estimate and the relative change of ``E[n_k]`` since the previous level (an upper bound on the
    remaining error whenever the error at least halves from one level to the next). The first level
    whose bound is at most ``tol`` is returned, else the last one (with its bound).

    Parameters
    ----------
    model, allocation
        As in :func:`solve_markov`.
    levels : sequence of int
        Increasing truncation levels (at least one).
    tol : float
        Target relative error of ``gamma_k``.

    Returns
    -------
    MarkovResult
        That of the first level within ``tol``, else of the last level.

    Raises
    ------
    ConfigError
        For an empty or non-increasing ``levels``.
    """
    lv = [int(x) for x in levels]
    if not lv or any(b <= a for a, b in itertools.pairwise(lv)):
        raise ConfigError(f"levels: {list(levels)!r} (expected an increasing list of levels)")
    prev: MarkovResult | None = None
    res: MarkovResult | None = None
    for level in lv:
        res = solve_markov(model, allocation, level)
        if prev is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                change = np.where(
                    res.mean_n > 0, np.abs(res.mean_n - prev.mean_n) / res.mean_n, 0.0
                )
            res = dataclasses.replace(res, error_bound=np.maximum(res.error_bound, change))
        if float(res.error_bound.max()) <= tol and (prev is not None or len(lv) == 1):
            return res
        prev = res
    assert res is not None
    return res


def solve_markov(model: DemandModel, allocation: str, level: int = 40) -> MarkovResult:
    """Service rates from the stationary distribution of the truncated Markov chain.

    Parameters
    ----------
    model : DemandModel
        Already checked against the stability region (eq. 8).
    allocation : {"drf", "pf", "bmf"}
    level : int
        Truncation level N >= 1 (per class).

    Returns
    -------
    MarkovResult

    Raises
    ------
    ConfigError
        For ``level < 1`` or an unknown allocation.
    RuntimeError
        If the sparse solve fails (singular or inaccurate).

    Notes
    -----
    Solves ``pi Q = 0, sum pi = 1`` with SuperLU on ``Q^T`` whose last equation is replaced by the
    normalisation. Bonald and Roberts, Section 4.1: birth rate ``lambda_k``, death rate
    ``n_k phi_k mu_k``; ``gamma_k = lambda_k / E[n_k]`` for ``mu_k = 1``.
    """
    if isinstance(level, bool) or not isinstance(level, int | np.integer) or level < 1:
        raise ConfigError(f"level: {level!r} (expected an integer >= 1)")
    level = int(level)
    t0 = time.perf_counter()
    k = len(model.loads)
    states = box_states(k, level)
    phi = class_rates(states, model.a, allocation)
    q = generator(model, phi, level)
    pi = stationary(q, (level + 1,) * k)
    if not np.isfinite(pi).all():
        raise RuntimeError(f"markov: sparse solve failed for {allocation} at level {level}")
    resid = float(np.abs(q.T @ pi).max())
    if resid > 1e-8 or pi.min() < -1e-10:
        raise RuntimeError(f"markov: inaccurate stationary solve (residual {resid:.1e})")
    pi = np.clip(pi, 0.0, None)
    pi /= pi.sum()
    mean_n = pi @ states
    boundary = float(pi[(states == level).any(axis=1)].sum())
    err = np.zeros(k)
    for c in range(k):
        marg = np.bincount(states[:, c], weights=pi, minlength=level + 1)
        p_n, p_prev = marg[level], marg[level - 1]
        if p_n <= 0:
            continue
        ratio = p_n / p_prev if p_prev > 0 else np.inf
        if ratio >= 1:
            err[c] = np.inf
            continue
        tail_mean = p_n * (level * ratio / (1 - ratio) + ratio / (1 - ratio) ** 2)
        err[c] = tail_mean / mean_n[c] if mean_n[c] > 0 else np.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        gamma = np.where(mean_n > 0, model.lam / (model.mu_arr * mean_n), np.nan)
    return MarkovResult(
        allocation=allocation,
        level=level,
        mean_n=mean_n,
        gamma=gamma,
        boundary_mass=boundary,
        error_bound=err,
        n_states=len(states),
        solve_s=time.perf_counter() - t0,
    )


# --------------------------------------------------------------------------------------------
# SimPy simulation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimulationResult:
    """Batch-means estimate of the service rates.

    Attributes
    ----------
    allocation : str
    mean_n, mean_n_half : ndarray, shape (K,)
        Time-average ``E[n_k]`` and the half-width of its 95 % CI (Student t over batches).
    gamma, gamma_lo, gamma_hi : ndarray, shape (K,)
        ``lambda_k / (mu_k E[n_k])`` and its 95 % CI (the CI of ``E[n_k]`` mapped through the
        decreasing function; ``gamma_hi`` may be ``inf`` if the CI of ``E[n_k]`` reaches 0).
    batches : int
    arrivals : int
        Arrivals simulated, warm-up included.
    events : int
    wall_s : float
    """

    allocation: str
    mean_n: np.ndarray
    mean_n_half: np.ndarray
    gamma: np.ndarray
    gamma_lo: np.ndarray
    gamma_hi: np.ndarray
    batches: int
    arrivals: int
    events: int
    wall_s: float


def batch_means(per_batch: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 95 % CI half-width of the columns of ``per_batch`` (B, K); Student t, B - 1 df."""
    b = per_batch.shape[0]
    mean = per_batch.mean(axis=0)
    if b < 2:
        return mean, np.full(mean.shape, np.inf)
    sd = per_batch.std(axis=0, ddof=1)
    tq = float(stats.t.ppf(0.5 + confidence / 2, b - 1))
    return mean, tq * sd / math.sqrt(b)


def batch_gamma(
    area: np.ndarray, span: np.ndarray, lam: np.ndarray, mu: np.ndarray
) -> dict[str, np.ndarray]:
    """The batch-means estimate of ``E[n_k]`` and of ``gamma_k = lambda_k / (mu_k E[n_k])``, with
    their 95 % intervals, from a simulation cut into batches.

    Parameters
    ----------
    area : ndarray, shape (B, K)
        Each batch's time-integral of the number of class-k flows.
    span : ndarray, shape (B,)
        Each batch's duration.
    lam, mu : ndarray, shape (K,)
        Arrival and service rates per class.

    Returns
    -------
    dict of str to ndarray, shape (K,)
        ``mean_n`` and ``mean_n_half`` (the mean of the batch means and its half-width,
        :func:`batch_means`), ``gamma`` and its interval ``gamma_lo``, ``gamma_hi`` (from the
        interval of ``E[n]``): the fields :class:`SimulationResult` and
        :class:`~fairsim.schedulers.flows.packet_fq.PacketEstimate` share.
    """
    mean_n, half = batch_means(area / span[:, None])
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(mean_n > 0, lam / (mu * mean_n), np.nan)
        lo = lam / (mu * (mean_n + half))
        hi = np.where(mean_n - half > 0, lam / (mu * (mean_n - half)), np.inf)
    return {"mean_n": mean_n, "mean_n_half": half, "gamma": g, "gamma_lo": lo, "gamma_hi": hi}


class RateTable:
    """Per-state rates, precomputed on a box and memoised outside it.

    Parameters
    ----------
    a : ndarray, shape (K, J)
    allocation : str
    level : int
        Side of the precomputed box ``{0..level}^K``.
    """

    def __init__(self, a: np.ndarray, allocation: str, level: int = 20) -> None:
        self.a = np.asarray(a, dtype=float)
        self.allocation = allocation
        self.level = level
        k = self.a.shape[0]
        self._strides = (level + 1) ** np.arange(k)
        self._table = class_rates(box_states(k, level), self.a, allocation)
        self._extra: dict[tuple[int, ...], np.ndarray] = {}

    def __call__(self, n: Sequence[int]) -> np.ndarray:
        """Rates of state ``n`` (length K)."""
        if max(n) <= self.level:
            return self._table[int(np.dot(n, self._strides))]
        key = tuple(int(x) for x in n)
        row = self._extra.get(key)
        if row is None:
            row = class_rates(np.array([key]), self.a, self.allocation)[0]
            self._extra[key] = row
        return row


@dataclass
class _SimState:
    """Run state of :func:`simulate_demand_model` (mutable; not a specification)."""

    n: list[int]
    vclock: list[float]  # per class: cumulative service received by each of its transactions
    heaps: list[list[tuple[float, int]]]  # per class: (virtual finish, arrival id)
    last: float = 0.0
    batch: int = -1
    area: np.ndarray = field(default_factory=lambda: np.zeros(0))
    span: np.ndarray = field(default_factory=lambda: np.zeros(0))
    events: int = 0


def simulate_demand_model(
    model: DemandModel,
    allocation: str,
    *,
    arrivals: int = 50_000,
    warmup: int = 5_000,
    batches: int = 20,
    seed: int | np.random.SeedSequence = 0,
    rates: RateTable | None = None,
) -> SimulationResult:
    """SimPy simulation of the Markovian demand model, with batch-means 95 % CIs.

    Every transaction carries its own (exponential) work. Between events all class-k
    transactions progress at ``phi_k(n)``, so each class keeps a virtual clock (service received
    per transaction) and a heap of virtual finish tags; a server process sleeps until the next
    completion and is interrupted by arrivals. After ``warmup`` arrivals, the run is cut into
    ``batches`` batches of equal numbers of arrivals; the time average of ``n_k`` per batch gives
    the batch means of ``E[n_k]``.

    Parameters
    ----------
    model : DemandModel
    allocation : {"drf", "pf", "bmf"}
    arrivals : int
        Arrivals after the warm-up (>= batches).
    warmup : int
        Arrivals discarded at the start.
    batches : int
        Number of batches (>= 2).
    seed : int or numpy.random.SeedSequence
    rates : RateTable, optional
        Precomputed rates (built if omitted).

    Returns
    -------
    SimulationResult

    Raises
    ------
    ConfigError
        For ``batches < 2``, ``arrivals < batches`` or ``warmup < 0``.
    """
    if batches < 2:
        raise ConfigError(f"batches: {batches!r} (expected an integer >= 2)")
    if arrivals < batches:
        raise ConfigError(f"arrivals: {arrivals!r} (expected at least batches = {batches})")
    if warmup < 0:
        raise ConfigError(f"warmup: {warmup!r} (expected an integer >= 0)")
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    k = len(model.loads)
    lam, mu = model.lam, model.mu_arr
    total = warmup + arrivals
    big = float(lam.sum())
    gaps = rng.exponential(1.0 / big, total)
    cls = rng.choice(k, size=total, p=lam / big)
    work = rng.exponential(1.0, total) / mu[cls]
    per_batch = arrivals // batches
    # batch of each arrival index (-1 during warm-up); the tail remainder joins the last batch
    table = rates if rates is not None else RateTable(model.a, allocation)
    st = _SimState(n=[0] * k, vclock=[0.0] * k, heaps=[[] for _ in range(k)])
    st.area = np.zeros((batches, k))
    st.span = np.zeros(batches)
    env = simpy.Environment()

    def account(now: float, phi: np.ndarray) -> None:
        dt = now - st.last
        if dt > 0:
            for c in range(k):
                st.vclock[c] += phi[c] * dt
            if st.batch >= 0:
                st.area[st.batch] += np.asarray(st.n) * dt
                st.span[st.batch] += dt
        st.last = now

    def server() -> Generator[simpy.Event, Any, None]:
        while True:
            phi = table(st.n)
            dt = math.inf
            for c in range(k):
                if st.heaps[c] and phi[c] > 0:
                    dt = min(dt, (st.heaps[c][0][0] - st.vclock[c]) / phi[c])
            try:
                if math.isinf(dt):
                    yield env.event()  # idle until an arrival interrupts
                else:
                    yield env.timeout(max(dt, 0.0))
            except simpy.Interrupt:
                account(env.now, phi)
                continue
            account(env.now, phi)
            for c in range(k):  # completions (ties within rounding)
                h = st.heaps[c]
                while h and h[0][0] <= st.vclock[c] + 1e-12 * max(1.0, st.vclock[c]):
                    heapq.heappop(h)
                    st.n[c] -= 1
                    st.events += 1

    srv = env.process(server())

    def source() -> Generator[simpy.Event, Any, None]:
        for i in range(total):
            yield env.timeout(float(gaps[i]))
            account(env.now, table(st.n))
            if i >= warmup:
                st.batch = min((i - warmup) // per_batch, batches - 1)
            c = int(cls[i])
            heapq.heappush(st.heaps[c], (st.vclock[c] + float(work[i]), i))
            st.n[c] += 1
            st.events += 1
            srv.interrupt()

    done = env.process(source())
    env.run(until=done)
    account(env.now, table(st.n))
    return SimulationResult(
        allocation=allocation,
        **batch_gamma(st.area, st.span, lam, mu),
        batches=batches,
        arrivals=total,
        events=st.events,
        wall_s=time.perf_counter() - t0,
    )
