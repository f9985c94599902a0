"""A progressive-filling scheduler as a pair of parts: "serve the user with the fewest running
tasks, Best-Fit". docs/write-a-scheduler.md copies its ``parts`` section
(tests/unit/test_docs_snippets.py checks the copy) and tests/unit/test_docs_tutorial.py runs it
and compares what it prints with docs/examples/fewest_tasks.out.
Run it: ``python docs/examples/fewest_tasks.py``.
"""

from __future__ import annotations

# [start:parts]
import fairsim
from fairsim.schedulers import BestFit, ProgressiveFilling, UserOrder


class FewestTasks(UserOrder):
    """Key of a user: its running tasks, divided by its weight (lowest served first)."""

    def key(self, user: int) -> float:
        state = self.state  # the scheduler's FillingState: alloc, running, queues, weight, ...
        return state.running[user] / state.weight[user]


@fairsim.register_scheduler("fewest-tasks-bf")
class FewestTasksBestFit(ProgressiveFilling):
    """Serve the user with the fewest running tasks; place its task Best-Fit (DRFH eq. 9)."""

    order = FewestTasks
    placement = BestFit


# [end:parts]

# [start:scenario]
#: User a submits eight tasks of 0.5 CPU, user b eight of 0.125 CPU (as much memory), at t = 0
#: on two servers; every task runs 10 s.
SCENARIO = {
    "name": "fewest-tasks-demo",
    "trace": {
        "format": "inline",
        "users": [
            {"name": "a", "join_s": 0, "demand": [0.5, 0.5], "tasks": 8, "run_s": 10},
            {"name": "b", "join_s": 0, "demand": [0.125, 0.125], "tasks": 8, "run_s": 10},
        ],
    },
    "cluster": {"classes": [{"name": "one", "count": 2, "capacity": [1.0, 1.0]}]},
    "schedulers": ["fewest-tasks-bf", "bf-drfh"],
    "collect": {"utilization_interval_s": 5, "horizon_s": 100},
}
# [end:scenario]


def main() -> None:
    """Run the scenario with both schedulers, print the tasks each user started at t = 0."""
    results = fairsim.simulate(SCENARIO)
    for name, result in results.items():
        first = result.tasks.query("start_s == 0").groupby("user").size().to_dict()
        print(f"{name:16} tasks started at 0 s  {first}")
    fairsim.testing.check_scheduler("fewest-tasks-bf")  # raises AssertionError naming a violation


if __name__ == "__main__":
    main()
