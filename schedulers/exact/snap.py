"""The allocation ``fairsim solve`` prints: the verified solver output at full float precision,
snapped only to the bounds the check after the solve proves, and never above a capacity.

A solver's answer carries its own noise (an LP's ``4.999999995`` for a user capped at 5 tasks, a
``1.6e-15`` where the answer is 0, a capacity exceeded by ``1.7e-13`` relative) and
:func:`~fairsim.schedulers.exact.verification.verify` accepts it to the relative tolerance
:data:`~fairsim.schedulers.exact.verification.CHECK_RTOL`. :func:`printed_allocation` keeps every
count as the solver computed it except where the check proves it equals a bound
(:func:`snap_to_bounds`), then repairs any capacity the float sums exceed
(:func:`fit_capacities`), and checks the result again. Rounding for people belongs to the
human format (``fairsim solve --format table``, :func:`fairsim.schedulers.solve.solve_table`).
The rules are stated in docs/mechanisms.md ("Output precision").
"""

from __future__ import annotations

import math

import numpy as np

from fairsim.schedulers.exact.common import monopoly_tasks
from fairsim.schedulers.exact.instance import Instance, NumericalRangeError
from fairsim.schedulers.exact.pool import POOLED, pooled
from fairsim.schedulers.exact.verification import CHECK_RTOL, verify

#: Most passes :func:`fit_capacities` makes over the servers (each pass after the first shrinks
#: its factor by a further ``2**k`` units in the last place; one pass is the rule, two are rare).
FIT_PASSES = 60


def snap_to_bounds(
    inst: Instance, x: np.ndarray, *, rtol: float = CHECK_RTOL
) -> tuple[np.ndarray, np.ndarray]:
    """``x`` with the counts the check proves equal to a bound set to that bound.

    * **Zero**: a count ``x[n, l] <= rtol * min(gamma[n, l], t_n)`` (``t_n = sum_l |x[n, l]|``,
      the user's total) becomes ``0``. The check reads a count below ``rtol * gamma[n, l]`` as
      none (it accepts negatives down to ``-rtol * gamma[n, l]`` and counts a user as holding
      tasks on a server only above ``rtol * gamma[n, l]``); the second bound keeps a user with
      few tasks on a server that could hold millions from losing them: a snap moves a user's
      total by at most ``rtol`` of itself per server. Negative counts always become 0.
    * **max_tasks**: a user whose total is within ``rtol * max_tasks`` of its ``max_tasks``
      (the check's bound in both directions: :func:`~fairsim.schedulers.exact.verification.
      feasibility_problem` above, the "below its task bound" of the fairness conditions below)
      gets exactly ``max_tasks``: its counts scaled by ``max_tasks / total``, the largest then
      set so that the exact sum of the row (``math.fsum``) is ``max_tasks``.

    Parameters
    ----------
    inst : Instance
        The instance ``x`` allocates (for a pooled mechanism, the pooled instance).
    x : ndarray, shape (n_users, n_servers)
        A verified allocation.
    rtol : float

    Returns
    -------
    y : ndarray, shape (n_users, n_servers)
        The snapped copy.
    pinned : ndarray of bool, shape (n_users, n_servers)
        The counts of the users snapped to their ``max_tasks``.
    """
    y = np.array(x, dtype=np.float64, copy=True)
    gamma = monopoly_tasks(inst.capacity, inst.demand)
    total = np.abs(y).sum(axis=1)
    y[y <= rtol * np.minimum(gamma, total[:, None])] = 0.0
    bound = inst.max_tasks
    tot = y.sum(axis=1)
    at = np.isfinite(bound) & (bound > 0) & (np.abs(tot - bound) <= rtol * bound) & (tot > 0)
    pinned = np.zeros(y.shape, dtype=bool)
    for n in np.flatnonzero(at):
        row = y[n] * (bound[n] / tot[n])
        k = int(np.argmax(row))
        _set_sum(row, k, float(bound[n]))
        if math.fsum(row) == bound[n] and row[k] >= 0:
            y[n] = row
            pinned[n] = row > 0
    return y, pinned


def _set_sum(row: np.ndarray, k: int, target: float) -> None:
    """Set ``row[k]`` so that ``math.fsum(row) == target`` where a float allows it (in place)."""
    row[k] = 0.0
    row[k] = target - math.fsum(row)
    for _ in range(4):
        s = math.fsum(row)
        if s == target:
            return
        row[k] = np.nextafter(row[k], -np.inf if s > target else np.inf)


def fit_capacities(inst: Instance, y: np.ndarray, pinned: np.ndarray) -> np.ndarray:
    """``y`` scaled down, server by server, until ``y.T @ demand <= capacity`` holds in float.

    On a server where the float sum ``(y.T @ inst.demand)[l, r]`` exceeds ``capacity[l, r]``,
    the counts not pinned to a user's ``max_tasks`` are scaled by the smallest factor that makes
    every resource fit, ``min_r (c[l, r] - pinned use) / (other use)``; where the pinned counts
    alone exceed the capacity (or there are no others), the server's whole column is scaled by
    ``min_r c[l, r] / use[l, r]``. The sums are then taken again and a factor still a rounding
    error short is shrunk by a few units in the last place (at most :data:`FIT_PASSES` passes).
    A verified answer exceeds a capacity by the solver's feasibility tolerance at most (up to
    ``1.7e-13`` relative on a Google instant; the check allows ``CHECK_RTOL``), so the factors
    are that close to 1.

    Parameters
    ----------
    inst : Instance
        The instance ``y`` allocates (for a pooled mechanism, the pooled instance).
    y : ndarray, shape (n_users, n_servers)
        Non-negative counts.
    pinned : ndarray of bool, shape (n_users, n_servers)
        Counts to leave as they are where the others can absorb the excess.

    Returns
    -------
    ndarray, shape (n_users, n_servers)
        A copy; ``y`` itself where nothing exceeds a capacity.

    Raises
    ------
    NumericalRangeError
        If :data:`FIT_PASSES` passes do not bring every sum within its capacity.
    """
    cap = inst.capacity
    d = inst.demand
    pinned = np.array(pinned, dtype=bool, copy=True)
    out = y
    for k in range(FIT_PASSES):
        use = out.T @ d  # (L, R), the sums a reader of the output computes
        over = use > cap
        if not over.any():
            return out
        if out is y:
            out = y.copy()
        shrink = 1.0 - (2.0**k - 1.0) * np.finfo(np.float64).eps
        for srv in np.flatnonzero(over.any(axis=1)):
            col = out[:, srv]
            rs = over[srv]
            keep = pinned[:, srv]
            fixed = (col * keep) @ d[:, rs]
            free = (col * ~keep) @ d[:, rs]
            with np.errstate(divide="ignore", invalid="ignore"):
                f = np.where(free > 0, (cap[srv, rs] - fixed) / free, np.inf).min()
            if np.isfinite(f) and f >= 0.0:
                col[~keep] *= f * shrink
            else:
                col *= (cap[srv, rs] / use[srv, rs]).min() * shrink
                pinned[:, srv] = False
    raise NumericalRangeError(
        f"the allocation still exceeds a capacity after {FIT_PASSES} passes of scaling"
    )


def printed_allocation(
    name: str, inst: Instance, x: np.ndarray, sharing: str = "rdm"
) -> np.ndarray:
    """The allocation ``fairsim solve`` prints for the verified answer ``x`` of mechanism
    ``name``: :func:`snap_to_bounds`, then :func:`fit_capacities`, then
    :func:`~fairsim.schedulers.exact.verification.verify` again.

    If the snapped allocation fails the check (a snap to zero that leaves room another user
    could fill, say), the answer is printed without snaps (negative counts set to 0 and the
    capacities fitted), which is checked in turn.

    Parameters
    ----------
    name : str
        An exact mechanism (:data:`fairsim.schedulers.exact.EXACT`).
    inst : Instance
        The instance it solved (for a pooled mechanism the original; it is pooled here).
    x : ndarray, shape (n_users, n_servers), or (n_users, 1) for a pooled mechanism
        The verified solver output (:func:`fairsim.schedulers.exact.solve_exact`).
    sharing : {"rdm", "tdm"}

    Returns
    -------
    ndarray, the shape of ``x``
        Full float precision; ``(y.T @ demand) <= capacity`` elementwise (the pooled capacity
        for a pooled mechanism) and ``verify(name, inst, y, sharing)`` passes.

    Raises
    ------
    NumericalRangeError
        If neither allocation passes the check once within the capacities.
    """
    own = pooled(inst) if name in POOLED else inst
    snapped, pinned = snap_to_bounds(own, x)
    y = fit_capacities(own, snapped, pinned)
    if np.array_equal(y, x):
        return y
    try:
        verify(name, inst, y, sharing)
    except NumericalRangeError:
        plain = np.maximum(np.asarray(x, dtype=np.float64), 0.0)
        y = fit_capacities(own, plain, np.zeros(plain.shape, dtype=bool))
        verify(name, inst, y, sharing)
    return y
