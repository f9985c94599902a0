"""``drf-classes``: DRF with machine classes mapped to resource types (the UDRF paper's baseline).

Tahir et al. (UDRF), Section II: "A typical approach to apply DRF on the given system is to treat
the machine classes as resource types", so a system of M machine classes and K resources has
M x K resource types (class m, resource k) of capacity ``c_{m,k}`` (the sum over the class's
servers), and a user's dominant share is ``max_{m,k} A_{u,m,k} / c_{m,k}`` over what it holds in
each class (the paper's Fig. 2 allocation; the job demand share of Section III,
``d^j_{m,k} = R^j_{m,k} / c_{m,k}``).

Online, with indivisible tasks: progressive filling by that dominant share (lowest first, divided
by the user's weight), each head task placed on the first server that fits it (First-Fit), as
:class:`fairsim.schedulers.progressive_filling.ProgressiveFilling` does for DRFH. A server's machine
class is its
capacity vector (servers with equal capacities share a class; :mod:`fairsim.simulator.constraints`
uses
the same rule when a pool has no ``class`` column). The key depends only on the user's own
allocation, so the blocked-user wake-ups of progressive filling apply unchanged.
"""

from __future__ import annotations

import numpy as np

from fairsim.schedulers.placement import FirstFit
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.user_selection import FillingState, UserOrder
from fairsim.simulator.cluster import ClusterView

_DIGITS = 12


def class_dominant_share(held: dict[int, list[float]], inv: list[list[float]], k: int) -> float:
    """``max_{m,r} held[m][r] * inv[m][r]``: the largest share of a (class, resource) pair.

    Parameters
    ----------
    held : dict of int to list of float
        Amount of each of the ``k`` resources held per machine class index.
    inv : list of list of float
        ``1 / c_{m,r}`` per class and resource (0 where the class has none).
    k : int
        Number of resources.

    Notes
    -----
    UDRF paper, Section II (DRF with classes as resource types) and eq. 12 (the RDUC-wise
    dominant share, in which ``d_u^max`` cancels).
    """
    key = 0.0
    for m, a in held.items():
        im = inv[m]
        for r in range(k):
            v = a[r] * im[r]
            if v > key:
                key = v
    return key


class ClassDominantShare(UserOrder):
    """DRF's dominant share over (machine class, resource) types (UDRF paper, Section II, Fig. 2).

    Key of user u: ``max_{m,k} A_{u,m,k} / c_{m,k} / w_u`` with ``A_{u,m,k}`` the amount of
    resource k its running tasks hold on servers of class m and ``c_{m,k}`` the class's total
    capacity of k, rounded to 12 decimals so that equal shares tie in user order. A server's class
    is its capacity vector.
    """

    def bind(self, state: FillingState, sched: ProgressiveFilling, cluster: ClusterView) -> None:
        """Group the servers into classes by capacity; per-user, per-class allocations."""
        super().bind(state, sched, cluster)
        caps = np.asarray(cluster.capacity, dtype=np.float64)
        classes, of = np.unique(caps, axis=0, return_inverse=True)
        total = np.zeros_like(classes)
        np.add.at(total, of.ravel(), caps)
        self.class_of: list[int] = of.ravel().tolist()
        self.n_classes = len(classes)
        # 1 / c_{m,k}, or 0 for a resource the class does not have (nothing can be held there)
        inv = np.divide(1.0, total, out=np.zeros_like(total), where=total > 0)
        self._inv: list[list[float]] = inv.tolist()
        self._held: dict[int, dict[int, list[float]]] = {}

    def account(self, user: int, server: int, need: tuple[float, ...], sign: int) -> None:
        """Add (remove) the task's need to what the user holds in the server's class."""
        m = self.class_of[server]
        held = self._held.setdefault(user, {})
        a = held.get(m)
        n = self.state.n_columns
        if a is None:
            a = held[m] = [0.0] * n
        for k in range(n):
            a[k] += sign * need[k]

    def key(self, user: int) -> float:
        """``round(max_{m,k} A_{u,m,k} / c_{m,k} / w_u, 12)``."""
        held, s = self._held.get(user), self.state
        key = class_dominant_share(held, self._inv, s.n_columns) if held else 0.0
        return round(key / s.weight[user], _DIGITS)


class DRFClasses(ProgressiveFilling):
    """DRF over (machine class, resource) types, placed First-Fit (UDRF paper, Section II, Fig. 2).

    Parameters
    ----------
    weights : mapping of int to float, optional
        User weights (> 0).
    eligible : mapping of int to ndarray of bool, shape (n_servers,), optional
        Servers each user may use.

    Notes
    -----
    Key of user u: ``max_{m,k} A_{u,m,k} / c_{m,k} / w_u`` with ``A_{u,m,k}`` the amount of resource
    k its running tasks hold on servers of class m and ``c_{m,k}`` the class's total capacity of
    k (rounded to 12 decimals so that equal shares tie in user order;
    :class:`ClassDominantShare`). With a single class it is the pooled dominant share, i.e.
    ``drf``.
    """

    name = "drf-classes"
    order = ClassDominantShare
    placement = FirstFit
