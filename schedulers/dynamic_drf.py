"""Dynamic DRF: as fair as possible up to each instant, given what users received before.

Fikioris, Agarwal and Tardos, "Incentives in Dominant Resource Fair Allocation under Dynamic
Demands" (arXiv 2109.12401; its first version: "Incentives in Resource Allocation under Dynamic
Demands"). Their abstract defines the mechanism: in every period, the allocation "ensures that
resources allocated to users are as max-min fair as possible up to any time instant, given the
allocation in previous periods", max-min fairness for one resource and dominant resource fairness
for several; it is Pareto optimal and envy-free but not incentive compatible, and a misreporting
user gains at most a bounded factor (3/2 in the adversarial single-resource setting, "nearly
tight"; the revised version gives a sqrt(2) lower bound and a (1 + rho) bound for DRF). We could
confirm these statements from the paper's abstract only, not its sections: the section and
theorem numbers, and the example behind the lower bound, are not reproduced here
(``docs/strategy.md``, "Dynamic DRF").

In the paper's discrete model, period ``t`` allocates ``a_it`` (divisible) to maximise, in the
max-min (DRF: progressive-filling) sense, the totals ``sum_{tau < t} a_i,tau + a_it``, each
``a_it`` at most the user's demand of the period. Online, with indivisible tasks that keep their
resources until they end (nothing is preempted), we keep the rule and the clock:

* time is cut into periods of ``period_s`` seconds from time 0; the scheduler places tasks at
  the run's first scheduling pass (its first arrival: the first period's start when the trace
  starts at 0) and then only at the start of a period (the engine's ticks,
  :meth:`DynamicDRF.next_wakeup`), so a task waits at most one period for its first chance;
* the key of user i at the start ``T`` of a period is its *total* dominant share so far, in
  periods, plus what it holds now: ``(I_i(T) / period_s + s_i) / w_i``, with ``s_i = max_r A_ir /
  C_r`` its dominant share of the pooled cluster (as ``drf``) and ``I_i(T)`` the integral of
  ``s_i`` from the start of the run to ``T`` (share x seconds); the waiting user with the lowest
  key places its head task First-Fit, and so on (progressive filling: the online form of "max-min
  fair on the totals"), keys rounded to 12 decimals (ties to the lower user code).

This is our reading for a non-preemptive cluster: what a user holds carries into later periods
(its ``s_i``) instead of being re-allocated each period. With one resource, tasks that each last
exactly one period and arrive at period starts, it is the paper's discrete mechanism on a grid of
task sizes (``tests/unit/test_strategy_theory.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from fairsim.schedulers.periodic import EveryPeriod, next_period_start
from fairsim.schedulers.placement import FirstFit
from fairsim.schedulers.progressive_filling import ProgressiveFilling
from fairsim.schedulers.user_selection import DIGITS, FillingState, UserOrder
from fairsim.simulator.cluster import ClusterView


class HistoryDominantShare(UserOrder):
    """Dynamic DRF's key: ``round((I_i(T) / period_s + s_i) / w_i, 12)`` (module docstring).

    ``s_i = max_r A_ir / C_r`` (pooled, unweighted); ``I_i`` integrates it over time. A user's
    integral is brought up to date lazily: at a placement (made at a known period start) at once,
    and for a completion (whose time the scheduler learns from the engine's next call,
    :meth:`DynamicDRF.next_wakeup` or :meth:`DynamicDRF.on_tick`) at that call, so a run pays
    only for the users whose share changed.
    """

    dynamic = True

    def bind(self, state: FillingState, sched: ProgressiveFilling, cluster: ClusterView) -> None:
        """Bind, then allocate the per-user integrals."""
        super().bind(state, sched, cluster)
        assert isinstance(sched, DynamicDRF)
        self._sched = sched
        self._s: list[float] = []  # current dominant share
        self._integral: list[float] = []  # share x seconds up to _since
        self._since: list[float] = []
        self._dirty: dict[int, float] = {}  # user -> its share before an unstamped change

    def grow(self, n_users: int) -> None:
        """Grow the per-user integrals."""
        grow = n_users - len(self._s)
        self._s.extend([0.0] * grow)
        self._integral.extend([0.0] * grow)
        self._since.extend([0.0] * grow)

    def _share(self, user: int) -> float:
        s = self.state
        a, t = s.alloc[user], s.total
        return max([a[r] / t[r] for r in range(s.n_columns)])

    def account(self, user: int, server: int, need: tuple[float, ...], sign: int) -> None:
        """A placement (at the current period start: integrate now) or a completion (at a time
        not known yet: remember the share before it)."""
        if sign > 0:
            self.stamp_user(user, self._sched.clock_)
            self._s[user] = self._share(user)  # alloc already grew
            return
        if user not in self._dirty:
            self._dirty[user] = self._s[user]
        st = self.state
        a, t = st.alloc[user], st.total  # already shrunk (account runs after the change)
        self._s[user] = max([a[r] / t[r] for r in range(st.n_columns)])

    def stamp_user(self, user: int, now: float) -> None:
        """Integrate ``user``'s share up to ``now`` (its share before any unstamped change)."""
        s = self._dirty.pop(user, self._s[user])
        self._integral[user] += s * (now - self._since[user])
        self._since[user] = now

    def stamp(self, now: float) -> None:
        """The changes not yet stamped (completions) happened at ``now``."""
        for user in list(self._dirty):
            self.stamp_user(user, now)

    def key(self, user: int) -> float:
        """``round((I(T) / period_s + s) / w, 12)`` at the current period start ``T``."""
        now = self._sched.clock_
        s = self._s[user]
        hist = self._integral[user] + self._dirty.get(user, s) * (now - self._since[user])
        return round((hist / self._sched.period_s + s) / self.state.weight[user], DIGITS)

    def before_pass(self) -> bool:
        """Time moved: every waiting user's key moved with its history."""
        return True


class DynamicDRF(EveryPeriod, ProgressiveFilling):
    """Dynamic DRF (Fikioris, Agarwal and Tardos, arXiv 2109.12401): the waiting user with the
    lowest total dominant share so far goes next, at the start of every period.

    Key: ``(I_i(T) / period_s + s_i) / w_i`` (:class:`HistoryDominantShare`, module docstring);
    First-Fit; placements only at period starts.

    Parameters
    ----------
    weights : mapping of int to float, optional
        Weight of a user code (default 1).
    eligible : mapping of int to ndarray of bool, optional
        Per-user server masks.
    period_s : float
        Length of a period, seconds (> 0): the paper's time step. Tasks are placed only at
        multiples of it; a user's history is counted in periods.

    Attributes
    ----------
    clock_ : float
        The latest time the engine told the scheduler (the current period start during a pass).
    """

    name = "dynamic-drf"
    mechanism = "drf"
    tick_with_events = True  # a period that starts with arrivals or completions is a pass
    order = HistoryDominantShare
    placement = FirstFit

    def bind(self, cluster: ClusterView) -> None:
        """Bind; the first scheduling pass places tasks (module docstring)."""
        if not (self.period_s > 0 and math.isfinite(self.period_s)):
            raise ValueError(f"period_s: {self.period_s!r} (expected a number of seconds > 0)")
        self.clock_ = 0.0
        self._due = True  # the run's first pass places (a run's clock starts at a period start)
        super().bind(cluster)

    def next_wakeup(self, now: float) -> float:
        """The next period start after ``now``; the completions since the engine's last call
        happened at ``now`` (their share changes are integrated up to it)."""
        self._tell(now)
        return next_period_start(now, self.period_s)

    def on_tick(self, now: float) -> None:
        """A period starts: the next :meth:`decide` places tasks."""
        self._tell(now)
        self._due = True

    def _tell(self, now: float) -> None:
        order = self.order_
        assert isinstance(order, HistoryDominantShare)
        order.stamp(now)
        self.clock_ = now

    def decide(self) -> Iterator[tuple[int, int]]:
        """Progressive filling on the keys at the period start, only when a period starts."""
        if not self._due:
            return
        self._due = False
        yield from super().decide()
