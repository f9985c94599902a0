"""LMM-MMS on one pool by the paper's median-halving algorithm (Li et al. 2025, Theorem 2,
Algorithm 1), as reconstructed in docs/mechanisms.md ("LMM-MMS definitions").

Every user n has a maximin share ``mu_n``
(:func:`~fairsim.schedulers.exact.lexmaxmin.maximin_share`) and is satisfied at the MMS ratio ``t_n
= max_tasks_n / mu_n``. By the paper's Lemma 1 all unsatisfied users end at one common ratio. Each
step takes the median ``t_m`` of the undecided users' ``t_n`` (linear-time selection,
``numpy.partition``, in place of PICK) and tests whether every user can have ratio ``min(t_n,
t_m)``: if so, the users with ``t_n <= t_m`` are satisfied; if not, the users with ``t_n >= t_m``
join the "dummy" set that shares the final common ratio. At least half of the undecided users are
decided per step; the final LP has one variable (the common ratio) and is solved in closed form.
:func:`~fairsim.schedulers.exact.lexmaxmin.solve_lmm_mms` (sequential LPs) must give
the same totals; a hypothesis test checks it.
"""

from __future__ import annotations

import numpy as np

from fairsim.schedulers.exact.instance import Instance, InstanceError
from fairsim.schedulers.exact.lexmaxmin import maximin_share


def lmm_mms_pick(inst: Instance, mms: np.ndarray | None = None) -> np.ndarray:
    """LMM-MMS task totals on a single-server instance by median halving.

    Parameters
    ----------
    inst : Instance
        Must have exactly one server (the paper's single resource pool).
    mms : ndarray, shape (n_users,), optional
        Maximin shares (default :func:`~fairsim.schedulers.exact.lexmaxmin.maximin_share`).

    Returns
    -------
    ndarray, shape (n_users, 1)

    Raises
    ------
    InstanceError
        If the instance has more than one server, or a user that the pool can serve has a zero
        demand. Lemma 1 (one common ratio for every unsatisfied user) moves resources between any
        two users, so it needs every user to demand every resource; with zero demands the common
        ratio can leave a resource idle. Example: capacity (1, 1), demands (1, 0), (1, 0), (0, 1):
        the common ratio gives 0.5, 0.5, 0.5, the lexicographic optimum 0.5, 0.5, 1
        (``docs/mechanisms.md``). Use :func:`~fairsim.schedulers.exact.lexmaxmin.solve_lmm_mms`
        there.
    """
    if inst.capacity.shape[0] != 1:
        raise InstanceError("lmm-mms (PICK): the median-halving algorithm needs one server")
    served = inst.eligible[:, 0] & ~((inst.demand > 0) & (inst.capacity[0] <= 0)).any(axis=1)
    if (inst.demand[served] <= 0).any():
        raise InstanceError(
            "lmm-mms (PICK): every user must demand every resource (Lemma 1); "
            "use the sequential LPs"
        )
    mu = maximin_share(inst) if mms is None else np.asarray(mms, dtype=float)
    mu = np.where(inst.eligible[:, 0], mu, 0.0)
    # in units of each resource's capacity, so that the tolerances below are relative
    has = inst.capacity[0] > 0
    cap = has.astype(float)
    d = np.where(has, inst.demand / np.where(has, inst.capacity[0], 1.0), 0.0)
    n_u = d.shape[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(mu > 0, inst.max_tasks / mu, 0.0)
    x = np.zeros(n_u)
    undecided = np.nonzero(mu > 0)[0]
    dummy: list[int] = []
    residual = cap.copy()
    while len(undecided):
        tm = float(np.partition(t[undecided], len(undecided) // 2)[len(undecided) // 2])
        ratio = np.minimum(t[undecided], tm)
        need = (ratio * mu[undecided]) @ d[undecided]
        if dummy:
            need = need + tm * (mu[dummy] @ d[dummy])
        if (need <= residual * (1 + 1e-12) + 1e-12).all():
            done = undecided[t[undecided] <= tm]
            x[done] = inst.max_tasks[done]
            residual = residual - x[done] @ d[done]
            undecided = undecided[t[undecided] > tm]
        else:
            dummy.extend(undecided[t[undecided] >= tm].tolist())
            undecided = undecided[t[undecided] < tm]
    if dummy:
        use = mu[dummy] @ d[dummy]
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(use > 0, np.maximum(residual, 0.0) / use, np.inf).min()
        x[dummy] = np.minimum(r * mu[dummy], inst.max_tasks[dummy])
    return x[:, None]
