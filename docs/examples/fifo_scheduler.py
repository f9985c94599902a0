"""A first-in, first-out scheduler: the code of the tutorial "Write your own scheduler".

docs/write-a-scheduler.md copies the sections between ``# [start:NAME]`` and ``# [end:NAME]``
(tests/unit/test_docs_snippets.py checks that the copies are exact) and
tests/unit/test_docs_tutorial.py runs it, so the tutorial cannot drift from the code. Run it:
``python docs/examples/fifo_scheduler.py``.
"""

from __future__ import annotations

# [start:scheduler]
from collections import deque
from collections.abc import Iterator

import numpy as np

import fairsim
from fairsim.simulator.cluster import ClusterView


@fairsim.register_scheduler("my-fifo")
class Fifo(fairsim.Scheduler):
    """Tasks in submission order, each on the lowest-numbered server with room for it.

    The task at the head of the queue blocks every task behind it until it fits (head-of-line
    blocking, like Hadoop's first FIFO scheduler), whoever submitted them.
    """

    # two properties of fair schedulers that FIFO does not have (the conformance suite skips them)
    work_conserving = False  # a user's task that fits waits behind the head of the queue
    lowest_share_first = False  # arrival order, whoever submitted the task

    def bind(self, cluster: ClusterView) -> None:
        super().bind(cluster)  # stores the view as self.cluster_
        self.queue_: deque[tuple[int, np.ndarray]] = deque()

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.queue_.append((task, np.asarray(demand)))

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        pass  # nothing to update: self.cluster_.free already holds the released resources

    def decide(self) -> Iterator[tuple[int, int]]:
        free = self.cluster_.free  # read-only, current after every placement the engine commits
        tol = self.cluster_.tolerance  # the rounding slack the engine accepts, per resource
        while self.queue_:
            task, demand = self.queue_[0]
            fits = (free + tol >= demand).all(axis=1)
            allowed = self.cluster_.task_mask(task)  # placement constraint: None, or a bool mask
            if allowed is not None:
                fits &= allowed
            servers = np.flatnonzero(fits)
            if servers.size == 0:
                return  # the head task waits for a completion; so does everything behind it
            self.queue_.popleft()
            yield task, int(servers[0])

    def placeable(self, demand: tuple[float, ...]) -> bool:
        # a task larger than every server would block the queue for ever: the engine reports
        # it as unplaceable instead of queueing it
        room = self.cluster_.capacity + self.cluster_.tolerance
        return bool((room >= np.asarray(demand)).all(axis=1).any())

    def pending(self) -> int:
        return len(self.queue_)


# [end:scheduler]

# [start:scenario]
#: User a submits four half-server tasks at t = 0, user b four quarter-server tasks at t = 1,
#: on a single server; every task runs 10 s.
SCENARIO = {
    "name": "fifo-demo",
    "trace": {
        "format": "inline",
        "users": [
            {"name": "a", "join_s": 0, "demand": [0.5, 0.5], "tasks": 4, "run_s": 10},
            {"name": "b", "join_s": 1, "demand": [0.25, 0.25], "tasks": 4, "run_s": 10},
        ],
    },
    "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
    "schedulers": ["my-fifo", "drf"],
    "collect": {"utilization_interval_s": 5, "horizon_s": 60},
}
# [end:scenario]


# [start:run]
def main() -> None:
    """Run the scenario with FIFO and DRF, print when each user's tasks started, check FIFO."""
    results = fairsim.simulate(SCENARIO)
    for name, result in results.items():
        starts = result.tasks.groupby("user")["start_s"].agg(list).to_dict()
        print(f"{name:8} mean JCT {result.jobs['completion_time_s'].mean():5.1f} s  {starts}")
    fairsim.testing.check_scheduler("my-fifo")  # raises AssertionError naming a violation


if __name__ == "__main__":
    main()
# [end:run]
