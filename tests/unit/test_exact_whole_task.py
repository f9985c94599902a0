"""The DRFH allocation restricted to whole tasks (DRFH paper, Sec. IV), solved exactly
(fairsim.schedulers.exact.whole_task), and beside Best-Fit DRFH's static whole tasks
(fairsim.schedulers.static_fill.whole_task_shares)."""

import pandas as pd
import pytest

from fairsim.schedulers.exact.whole_task import whole_task_drfh
from fairsim.schedulers.static_fill import whole_task_shares


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


def test_whole_task_shares_on_one_server_by_hand() -> None:
    server = pd.DataFrame({"server": ["s0"], "cpu": [1.0], "mem": [1.0]})
    one = whole_task_shares(server, {"user 1": (0.2, 0.3)})
    # divisible: 1 / 0.3 tasks use all the memory (fairsim.solve at full precision, never above
    # the memory); whole: 3 tasks
    assert one["divisible"] == pytest.approx({"user 1": 1.0}, abs=1e-12)
    assert one["divisible"]["user 1"] <= 1.0
    assert one["whole"] == pytest.approx({"user 1": 0.9})
    two = whole_task_shares(server, {"user 1": (0.2, 0.3), "user 2": (0.5, 0.1)})
    # divisible DRFH: equal shares g with CPU 0.2 g / 0.3 + 0.5 g / 0.5 = 1, g = 0.6; whole
    # tasks by progressive filling: user 1 twice (0.6), user 2 once (0.5), then none fits
    assert two["divisible"] == pytest.approx({"user 1": 0.6, "user 2": 0.6}, abs=1e-12)
    assert two["whole"] == pytest.approx({"user 1": 0.6, "user 2": 0.5})
