"""fairsim.schedulers.exact.whole_task: the DRFH allocation restricted to whole tasks (DRFH paper,
Sec. IV), solved exactly."""

import pandas as pd
import pytest

from fairsim.schedulers.exact.whole_task import whole_task_drfh


def test_whole_task_drfh_is_the_exact_leximin_of_whole_tasks() -> None:
    # one server (1 CPU, 1 memory); user a's task (0.6, 0.1), user b's (0.1, 0.6): one task each
    # fits, two of either do not; divisible DRFH would give each 0.5/0.6 of its dominant resource
    servers = pd.DataFrame({"server": ["s0"], "cpu": [1.0], "mem": [1.0]})
    shares = whole_task_drfh(servers, {"a": (0.6, 0.1), "b": (0.1, 0.6)})
    assert shares == pytest.approx({"a": 0.6, "b": 0.6})
    # two servers, user a alone: 0.3-CPU tasks, three per server
    two = pd.DataFrame({"server": ["s0", "s1"], "cpu": [1.0, 1.0], "mem": [1.0, 1.0]})
    assert whole_task_drfh(two, {"a": (0.3, 0.1)}) == pytest.approx({"a": 0.9})
    # bounded by its tasks present: user a has 1 task, user b takes the rest
    shares = whole_task_drfh(two, {"a": (0.3, 0.1), "b": (0.3, 0.1)}, bounds={"a": 1})
    assert shares == pytest.approx({"a": 0.15, "b": 0.75})
