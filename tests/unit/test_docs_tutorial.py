"""The tutorial "Write your own scheduler" (docs/write-a-scheduler.md) runs as written.

The page includes docs/examples/fifo_scheduler.py; these tests import that file and check the
numbers the page states: on one server, user a's four half-server tasks start at 0, 0, 10 and
10 s under FIFO, and user b's four quarter-server tasks, submitted at 1 s, wait behind them until
20 s (job completion times 20 and 29 s); DRF starts two of b's tasks at 10 s, when b holds
nothing and a half the server (30 and 29 s). The page's pytest file
(docs/examples/test_fifo_scheduler.py) runs one test per check of the conformance suite.
"""

from __future__ import annotations

import contextlib
import importlib.util
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import fairsim
from fairsim.scenario.config import parse_config
from fairsim.scenario.pool import build_pool, pool_capacity
from fairsim.scenario.workload import resolve_workload
from fairsim.schedulers import make_scheduler
from fairsim.schedulers.registry import unregister_scheduler
from fairsim.simulator.cluster import CAPACITY_TOLERANCE, ClusterState
from fairsim.simulator.engine import Engine
from fairsim.simulator.results import tables
from fairsim.simulator.scheduler import Scheduler

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "fifo_scheduler.py"
#: The page's pytest file for a scheduler author's own test suite.
EXAMPLE_TEST = EXAMPLE.with_name("test_fifo_scheduler.py")

#: Start times the page states, per user.
FIFO_STARTS = {"a": [0.0, 0.0, 10.0, 10.0], "b": [20.0, 20.0, 20.0, 20.0]}
DRF_STARTS_B = [10.0, 10.0, 20.0, 20.0]


@contextlib.contextmanager
def _imported(path: Path, module_name: str, registers: str) -> Iterator[ModuleType]:
    """An example file imported as ``module_name``; the scheduler it registers on import
    (``registers``) and its module entry are removed afterwards."""
    with pytest.MonkeyPatch.context() as mp:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        mp.setitem(sys.modules, spec.name, module)
        spec.loader.exec_module(module)
        try:
            yield module
        finally:
            unregister_scheduler(registers)


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    """docs/examples/fifo_scheduler.py, imported once (it registers "my-fifo" on import, and
    the registration is removed afterwards)."""
    with _imported(EXAMPLE, "fifo_scheduler_example", "my-fifo") as module:
        yield module


def _run(scheduler: Scheduler, scenario: dict) -> tuple[dict[str, list[float]], list[float]]:
    """Run the tutorial's scenario with ``scheduler`` on the engine: start times per user, and
    the job completion times (one job per user)."""
    cfg = parse_config({**scenario, "schedulers": ["drf"]})
    workload = resolve_workload(cfg)
    capacity = pool_capacity(build_pool(cfg, None, workload), workload.resources)

    def within_capacity(t: float, cluster: ClusterState) -> None:
        assert (cluster.free >= -CAPACITY_TOLERANCE).all(), f"over-committed at {t} s"

    result = Engine(
        ClusterState(capacity, workload.resources),
        scheduler,
        workload.open(),
        start_s=workload.start_s,
        horizon_s=cfg.collect.horizon_s,
        utilization_interval_s=cfg.collect.utilization_interval_s,
        on_sample=within_capacity,
    ).run()
    built = tables(result)
    tasks = built["tasks"].to_pandas()
    assert (tasks["ended"] == "finished").all()
    starts = tasks.groupby("user")["start_s"].agg(lambda s: sorted(s.tolist())).to_dict()
    return starts, built["jobs"].to_pandas()["completion_time_s"].tolist()


def test_fifo_example_on_the_engine(example: ModuleType) -> None:
    """The tutorial's class, driven by the engine, gives the start times the page states."""
    assert issubclass(example.Fifo, fairsim.Scheduler)
    starts, jct = _run(example.Fifo(), example.SCENARIO)
    assert starts == FIFO_STARTS
    assert jct == [20.0, 29.0]  # mean JCT 24.5 s, as the page says
    starts, jct = _run(make_scheduler("drf"), example.SCENARIO)
    assert starts["b"] == DRF_STARTS_B
    assert jct == [30.0, 29.0]  # mean 29.5 s


def test_fifo_example_respects_placeable(example: ModuleType) -> None:
    """A task larger than every server is refused by ``placeable``, so it cannot block FIFO."""
    scenario = {**example.SCENARIO}
    users = [*scenario["trace"]["users"]]
    users[0] = {**users[0], "demand": [1.5, 0.5]}  # bigger than the only server
    scenario["trace"] = {**scenario["trace"], "users": users}
    cfg = parse_config({**scenario, "schedulers": ["drf"]})
    workload = resolve_workload(cfg)
    capacity = pool_capacity(build_pool(cfg, None, workload), workload.resources)
    result = Engine(
        ClusterState(capacity, workload.resources),
        example.Fifo(),
        workload.open(),
        horizon_s=60.0,
        utilization_interval_s=5.0,
    ).run()
    tasks = tables(result)["tasks"].to_pandas()
    ended = tasks.groupby("user")["ended"].agg(set).to_dict()
    assert ended == {"a": {"unplaceable"}, "b": {"finished"}}
    assert np.allclose(sorted(tasks.loc[tasks["user"] == "b", "start_s"]), 1.0)


def test_tutorial_runs_through_the_public_api(
    example: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's last step: register, simulate by name, pass the conformance suite."""
    results = fairsim.simulate(example.SCENARIO)
    assert list(results) == ["my-fifo", "drf"]
    starts = results["my-fifo"].tasks.groupby("user")["start_s"].agg(sorted).to_dict()
    assert {u: list(s) for u, s in starts.items()} == FIFO_STARTS
    assert sorted(results["drf"].tasks.query("user == 'b'")["start_s"]) == DRF_STARTS_B
    assert results["my-fifo"].summary["mean_jct_s"] == pytest.approx(24.5)
    fairsim.testing.check_scheduler("my-fifo")
    example.main()  # the script as the page runs it
    out = capsys.readouterr().out
    assert "my-fifo  mean JCT  24.5 s" in out
    assert "drf      mean JCT  29.5 s" in out


def test_the_authors_pytest_file_runs_one_test_per_check() -> None:
    """The page's ``parametrize_with_checks`` file, run by pytest as the page shows: ten tests,
    the two checks FIFO is exempt from expected to fail (and failing)."""
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", str(EXAMPLE_TEST)],
        capture_output=True,
        text=True,
        cwd=EXAMPLE.parents[2],
        check=False,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    results = dict(re.findall(r"::test_conformance\[my-fifo-(\w+)\] (PASSED|XFAIL)", p.stdout))
    assert results == {
        **{check.__name__: "PASSED" for check in fairsim.testing.CHECKS.values()},
        "check_work_conserving": "XFAIL",
        "check_lowest_share_first": "XFAIL",
    }
    assert "9 passed, 2 xfailed" in p.stdout


#: docs/examples/fewest_tasks.py: the tutorial's scheduler made of two parts.
PARTS_EXAMPLE = EXAMPLE.with_name("fewest_tasks.py")


@pytest.fixture(scope="module")
def parts_example() -> Iterator[ModuleType]:
    """docs/examples/fewest_tasks.py, imported once (it registers "fewest-tasks-bf")."""
    with _imported(PARTS_EXAMPLE, "fewest_tasks_example", "fewest-tasks-bf") as module:
        yield module


def test_parts_example_is_a_pair_of_parts_and_passes_every_check(
    parts_example: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's "fewest running tasks, Best-Fit": only its two parts are named (nothing of
    ProgressiveFilling overridden), its order overrides one hook (``key``), it passes the whole
    conformance suite with no exemption, it starts the tasks the page states (3 of a's and 4 of
    b's at 0 s; bf-drfh 2 and 8), and it prints exactly the pinned docs/examples/fewest_tasks.out.
    """
    from fairsim.schedulers import BestFit, ProgressiveFilling, UserOrder

    cls = parts_example.FewestTasksBestFit
    assert cls.order is parts_example.FewestTasks and cls.placement is BestFit
    own = {k for k in vars(cls) if not k.startswith("__")}
    assert own == {"order", "placement"}, own  # nothing else of the base class is overridden
    assert issubclass(cls, ProgressiveFilling)
    hooks = {k for k in vars(parts_example.FewestTasks) if not k.startswith("__")}
    assert hooks == {"key"} and all(hasattr(UserOrder, k) for k in hooks), hooks
    for check in fairsim.testing.CHECKS.values():
        check("fewest-tasks-bf")
    results = fairsim.simulate(parts_example.SCENARIO)
    first = {
        name: r.tasks.query("start_s == 0").groupby("user").size().to_dict()
        for name, r in results.items()
    }
    assert first == {"fewest-tasks-bf": {"a": 3, "b": 4}, "bf-drfh": {"a": 2, "b": 8}}
    parts_example.main()
    assert capsys.readouterr().out == PARTS_EXAMPLE.with_suffix(".out").read_text()
