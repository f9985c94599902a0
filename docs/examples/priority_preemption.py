"""Priority preemption: a scheduler that takes running tasks back (docs/preemption.md).

A waiting task of a higher tier that fits nowhere evicts the youngest runs of lower tiers on one
server. docs/preemption.md copies the sections between ``# [start:NAME]`` and ``# [end:NAME]``
(tests/unit/test_docs_snippets.py checks that the copies are exact) and
tests/unit/test_preemption.py runs it and checks the numbers the page states. Run it:
``python docs/examples/priority_preemption.py``.
"""

from __future__ import annotations

# [start:scheduler]
from collections.abc import Iterator, Mapping

import numpy as np

import fairsim
from fairsim.simulator.cluster import ClusterView
from fairsim.simulator.scheduler import Eviction


@fairsim.register_scheduler("priority-preemption")
class PriorityPreemption(fairsim.Scheduler):
    """Strict priority between tiers, with preemption: a user's weight is its tier.

    Waiting tasks are served highest tier first, then in arrival order, each on the first server
    with room. A task that fits nowhere evicts the youngest runs of lower tiers on the server
    where the fewest evictions make room (the lowest-numbered of those); evicted tasks wait again
    and restart from scratch. Runs started in the current pass are never evicted, so no task is
    evicted twice at one instant, and a tier never evicts its own or a higher one, so there is no
    preemption loop.
    """

    preempts = True  # decide() may yield Eviction records; on_eviction is implemented
    lowest_share_first = False  # tier order, then arrival order, whatever the users hold
    fifo_within_user = False  # a later, smaller task starts when an earlier one does not fit

    def __init__(self, *, weights: Mapping[int, float] | None = None) -> None:
        self.weights = weights

    def bind(self, cluster: ClusterView) -> None:
        super().bind(cluster)
        self.waiting_: dict[int, tuple[float, int]] = {}  # task -> (-tier, arrival number)
        self.tier_: dict[int, float] = {}  # tasks waiting or running -> their tier
        self.demand_: dict[int, np.ndarray] = {}
        self.user_: dict[int, int] = {}
        self.running_: dict[float, int] = {}  # tier -> tasks of the tier running
        self.arrivals_ = 0

    def tier(self, user: int) -> float:
        """A user's tier: its weight (1 without weights)."""
        return 1.0 if self.weights is None else float(self.weights.get(user, 1.0))

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.tier_[task] = self.tier(user)
        self.demand_[task] = np.asarray(demand)
        self.user_[task] = user
        self.waiting_[task] = (-self.tier_[task], self.arrivals_)
        self.arrivals_ += 1

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        self.running_[self.tier_[task]] -= 1
        del self.tier_[task], self.demand_[task], self.user_[task]

    def on_eviction(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        # the engine ended the run: the task waits again, in its place by tier and arrival
        self.running_[self.tier_[task]] -= 1
        self.waiting_[task] = (-self.tier_[task], self.arrivals_)
        self.arrivals_ += 1

    def decide(self) -> Iterator[tuple[int, int]]:
        started: set[int] = set()  # runs started in this pass: never evicted in it
        again = True
        while again:  # an eviction may leave room for a task skipped earlier in the sweep
            again = False
            for task in sorted(self.waiting_, key=self.waiting_.__getitem__):
                server = self._first_fit(task)
                if server is None:
                    victims, server = self._victims(task, started)
                    if server is None:
                        continue  # the task waits; a lower tier's task may still fit
                    for victim in victims:
                        yield Eviction(victim, server)  # on_eviction runs before we resume
                    again = True
                del self.waiting_[task]
                started.add(task)
                tier = self.tier_[task]
                self.running_[tier] = self.running_.get(tier, 0) + 1
                yield task, server

    def _allowed(self, task: int) -> np.ndarray:
        mask = self.cluster_.task_mask(task)  # placement constraint: None, or a bool mask
        return np.ones(self.cluster_.n_servers, dtype=bool) if mask is None else mask

    def _first_fit(self, task: int) -> int | None:
        view = self.cluster_  # tolerance: the rounding slack the engine accepts, per resource
        fits = (view.free + view.tolerance >= self.demand_[task]).all(axis=1)
        servers = np.flatnonzero(fits & self._allowed(task))
        return int(servers[0]) if servers.size else None

    def _victims(self, task: int, started: set[int]) -> tuple[list[int], int | None]:
        """The fewest youngest lower-tier runs whose eviction lets ``task`` fit on one server."""
        view, need, tier = self.cluster_, self.demand_[task], self.tier_[task]
        best: tuple[list[int], int | None] = ([], None)
        if not any(n for t, n in self.running_.items() if t < tier):
            return best  # no lower tier runs: nothing to evict
        for server in np.flatnonzero(self._allowed(task)).tolist():
            free = view.free[server].copy()
            victims = []
            # running_on: oldest run first, so the youngest is last
            for victim in reversed(view.running_on(server)):
                if np.all(free + view.tolerance >= need):
                    break
                if self.tier_[victim] < tier and victim not in started:
                    victims.append(victim)
                    free += self.demand_[victim]
            if np.all(free + view.tolerance >= need) and victims:
                if best[1] is None or len(victims) < len(best[0]):
                    best = (victims, server)
        return best

    def pending(self) -> int:
        return len(self.waiting_)


# [end:scheduler]

# [start:scenario]
#: One server; user "batch" (tier 1) starts two half-server tasks of 100 s at 0 s, user "prod"
#: (tier 2) submits one half-server task of 20 s at 30 s: it evicts the youngest batch task.
SCENARIO = {
    "name": "preemption-demo",
    "trace": {
        "format": "inline",
        "users": [
            {"name": "batch", "join_s": 0, "demand": [0.5, 0.5], "tasks": 2, "run_s": 100},
            {
                "name": "prod",
                "join_s": 30,
                "demand": [0.5, 0.5],
                "tasks": 1,
                "run_s": 20,
                "weight": 2,
            },
        ],
    },
    "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
    "schedulers": ["priority-preemption"],
    "collect": {"utilization_interval_s": 10, "horizon_s": 200},
}
# [end:scenario]


# [start:run]
def main() -> None:
    """Run the scenario; print each task's runs and the run's evictions and lost work."""
    result = fairsim.simulate(SCENARIO)["priority-preemption"]
    print(result.tasks[["user", "task_index", "start_s", "finish_s", "evictions"]])
    print(result.summary["preemption"])


if __name__ == "__main__":
    main()
# [end:run]
