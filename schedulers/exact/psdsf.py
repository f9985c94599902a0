"""PS-DSF: Per-Server Dominant-Share Fairness (Khamse-Ashari et al., Section III).

The virtual dominant share of user n w.r.t. server i is ``s[n, i] = x_n / gamma[n, i]`` (eq. 8).
An RDM allocation (eq. 9) is PS-DSF iff every user has a bottleneck resource w.r.t. every eligible
server (Theorem 1, eq. 12); a TDM allocation (eq. 10) iff every server is fully time-shared and only
users of minimum ``s[n, i] / w_n`` use it (Theorem 2, eq. 13).

:func:`server_update` is the per-server step of Algorithm I / Section III-D: given the tasks a user
holds on the *other* servers, server i re-divides itself by progressive filling of ``s[n, i] / w_n``
(each user frozen when a resource it uses saturates; under TDM the single "resource" is time,
``sum_n x[n, i] / gamma[n, i] <= 1``). The result satisfies Theorem 1 (Theorem 2) at server i.
:func:`solve_psdsf` sweeps the servers (Gauss-Seidel) until no server changes; the servers can
equally run :func:`server_update` asynchronously (:func:`distributed_psdsf`). The paper leaves
convergence open (footnote 5); we stop at a tolerance and report the rounds.
"""

from __future__ import annotations

import numpy as np

from fairsim.schedulers.exact.common import TOL, monopoly_tasks, serving, waterfill
from fairsim.schedulers.exact.instance import Instance, InstanceError


def _setup(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    gamma = monopoly_tasks(inst.capacity, inst.demand) * serving(inst)
    return gamma, gamma > 0


def server_update(
    inst: Instance, x: np.ndarray, i: int, *, sharing: str = "rdm", gamma: np.ndarray | None = None
) -> np.ndarray:
    """Re-divide server ``i`` given every user's tasks on the other servers (in place).

    Parameters
    ----------
    inst : Instance
    x : ndarray, shape (n_users, n_servers)
        Current allocation; column ``i`` is replaced.
    i : int
        Server index.
    sharing : {"rdm", "tdm"}
        Resource division (eq. 9) or time division (eq. 10) multiplexing.
    gamma : ndarray, optional
        ``gamma[n, l]`` (eq. 7), zero where l cannot serve n.

    Returns
    -------
    ndarray, shape (n_users, n_servers)
        ``x`` itself.
    """
    if gamma is None:
        gamma, _ = _setup(inst)
    g = gamma[:, i]
    others = x.sum(axis=1) - x[:, i]
    rate = inst.weight * g  # x_n = L * w_n * gamma[n, i] at VDS level L (eq. 8)
    upper = np.maximum(inst.max_tasks - others, 0.0)
    if sharing == "rdm":
        dem, cap = inst.demand, inst.capacity[i]
    elif sharing == "tdm":
        with np.errstate(divide="ignore"):
            dem = np.where(g > 0, 1.0 / g, 0.0)[:, None]
        cap = np.ones(1)
    else:
        raise InstanceError(f"sharing: {sharing!r} (expected 'rdm' or 'tdm')")
    x[:, i] = np.where(g > 0, waterfill(dem, cap, rate, base=others, upper=upper), 0.0)
    return x


def solve_psdsf(inst: Instance, *, sharing: str = "rdm", tol: float = 1e-10) -> np.ndarray:
    """PS-DSF allocation (Theorem 1 for RDM, Theorem 2 for TDM); see :func:`psdsf_sweeps`.

    Returns
    -------
    ndarray, shape (n_users, n_servers)
    """
    return psdsf_sweeps(inst, sharing=sharing, tol=tol)[0]


def psdsf_sweeps(
    inst: Instance, *, sharing: str = "rdm", tol: float = 1e-10, max_rounds: int = 20000
) -> tuple[np.ndarray, int]:
    """Sweep :func:`server_update` over the servers (Gauss-Seidel) until it is stable.

    Parameters
    ----------
    inst : Instance
    sharing : {"rdm", "tdm"}
    tol : float
        Stop when no entry ``x[n, l]`` changes by more than ``tol * gamma[n, l]`` (a fraction of
        what user n could run alone on server l) in one sweep.
    max_rounds : int

    Returns
    -------
    x : ndarray, shape (n_users, n_servers)
    rounds : int
        Number of sweeps.
    """
    gamma, can = _setup(inst)
    unit = np.where(can, gamma, 1.0)  # changes are measured in fractions of a server
    x = np.zeros((inst.demand.shape[0], inst.capacity.shape[0]))
    rounds = 0
    for rounds in range(1, max_rounds + 1):  # noqa: B007
        before = x.copy()
        for i in range(x.shape[1]):
            server_update(inst, x, i, sharing=sharing, gamma=gamma)
        if (np.abs(x - before) / unit).max() <= tol:
            break
    return x, rounds


def distributed_psdsf(
    inst: Instance,
    rng: np.random.Generator,
    *,
    sharing: str = "rdm",
    steps: int = 2000,
) -> tuple[np.ndarray, np.ndarray]:
    """Asynchronous per-server procedure (Section III-D): random servers update one at a time.

    Parameters
    ----------
    rng : numpy.random.Generator
        Chooses which server wakes up at each step.
    steps : int
        Number of single-server updates.

    Returns
    -------
    x : ndarray, shape (n_users, n_servers)
    residual : ndarray, shape (steps,)
        After each step, the largest violation of Theorem 1 (2) (:func:`psdsf_violation`).
    """
    gamma, _ = _setup(inst)
    x = np.zeros((inst.demand.shape[0], inst.capacity.shape[0]))
    res = np.empty(steps)
    for k in range(steps):
        server_update(inst, x, int(rng.integers(x.shape[1])), sharing=sharing, gamma=gamma)
        res[k] = psdsf_violation(inst, x, sharing=sharing)
    return x, res


def psdsf_violation(inst: Instance, x: np.ndarray, *, sharing: str = "rdm") -> float:
    """How far ``x`` is from Theorem 1 (RDM) or Theorem 2 (TDM); 0 for a PS-DSF allocation.

    For every user n and server i that can serve it (and n below its task bound) the theorem needs
    a saturated resource r with ``d[n, r] > 0`` on which ``s[n, i]/w_n >= s[m, i]/w_m`` for all
    users m with ``x[m, i] d[m, r] > 0`` (eq. 12); under TDM the only resource is time (eq. 13).
    The returned number is the largest relative shortfall over (n, i) of the best such resource:
    slack of the resource plus the VDS gap.
    """
    gamma, can = _setup(inst)
    tot = x.sum(axis=1)
    worst = 0.0
    for i in range(x.shape[1]):
        if sharing == "rdm":
            dem, cap = inst.demand, inst.capacity[i]
        else:
            with np.errstate(divide="ignore"):
                dem = np.where(gamma[:, i] > 0, 1.0 / gamma[:, i], 0.0)[:, None]
            cap = np.ones(1)
        use = x[:, i] @ dem
        with np.errstate(divide="ignore", invalid="ignore"):
            slack = np.where(cap > 0, (cap - use) / cap, 0.0)
            vds = np.where(can[:, i], tot / (gamma[:, i] * inst.weight), np.inf)
        for n in np.nonzero(can[:, i])[0]:
            if tot[n] >= inst.max_tasks[n] * (1 - 1e-9):
                continue
            best = np.inf
            for r in np.nonzero(dem[n] > 0)[0]:
                users = (x[:, i] * dem[:, r] > TOL * cap[r]) & can[:, i]
                top = vds[users].max() if users.any() else 0.0
                gap = max(0.0, (top - vds[n]) / max(top, 1e-12))
                best = min(best, max(slack[r], 0.0) + gap)
            worst = max(worst, best)
    return float(worst)
