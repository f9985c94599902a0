"""``fairsim.sweep``: a sweep from Python, in-process, with a scheduler registered in the test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import fairsim
from fairsim.errors import ConfigError
from fairsim.schedulers.registry import unregister_scheduler


class _LargestFirst(fairsim.Scheduler):
    """Greedy First-Fit over the queue, largest CPU demand first (a scheduler of the test's)."""

    def __init__(self) -> None:
        self.queue_: list[tuple[int, tuple[float, ...]]] = []

    def bind(self, cluster: Any) -> None:
        self.cluster_ = cluster

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.queue_.append((task, demand))

    def on_completion(self, task: int, user: int, demand: Any, server: int) -> None:
        pass

    def decide(self) -> Any:
        self.queue_.sort(key=lambda t: (-t[1][0], t[0]))
        left = []
        for task, demand in self.queue_:
            fits = (self.cluster_.free >= demand).all(axis=1).nonzero()[0]
            if len(fits):
                yield task, int(fits[0])
            else:
                left.append((task, demand))
        self.queue_ = left

    def pending(self) -> int:
        return len(self.queue_)


CONFIG: dict[str, Any] = {
    "name": "api-sweep",
    "trace": {"format": "synthetic", "n_tasks": 300, "duration_s": 3600},
    "cluster": {"servers": 10},
    "schedulers": ["largest-first-test", "ff-drfh"],
}


@pytest.fixture
def registered() -> Any:
    fairsim.register_scheduler("largest-first-test")(_LargestFirst)
    yield
    unregister_scheduler("largest-first-test")


@pytest.mark.usefixtures("registered")
def test_sweep_in_process_equals_simulate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "sw"
    runs = fairsim.sweep(CONFIG, seeds=[1, 2], out=out)
    assert "sweep" in fairsim.__all__
    assert list(runs["status"].unique()) == ["ok"]
    run_of = dict(zip(runs["seed"], runs["run_id"], strict=False))
    assert sorted(run_of) == [1, 2] and len(set(run_of.values())) == 2
    assert sorted(p.name for p in out.iterdir()) == sorted(["runs.parquet", *run_of.values()])
    for seed in (1, 2):
        direct = fairsim.simulate({**CONFIG, "seed": seed})
        for name in ("largest-first-test", "ff-drfh"):
            got = pd.read_parquet(out / run_of[seed] / name / "tasks.parquet")
            pd.testing.assert_frame_equal(got, direct[name].tasks, check_dtype=False)
    # the two seeds drew different workloads
    a = pd.read_parquet(out / run_of[1] / "ff-drfh" / "tasks.parquet")
    b = pd.read_parquet(out / run_of[2] / "ff-drfh" / "tasks.parquet")
    assert not a["submit_s"].equals(b["submit_s"])
    # a second call finds every run finished and runs nothing
    again = fairsim.sweep(CONFIG, seeds=[1, 2], out=out)
    assert list(again["wall_s"]) == list(runs["wall_s"])
    assert [p.name for p in tmp_path.iterdir()] == ["sw"]  # nothing else in the cwd


@pytest.mark.usefixtures("registered")
def test_grid_and_a_worker_pool_refuses_a_main_class(tmp_path: Path) -> None:
    runs = fairsim.sweep(
        {**CONFIG, "schedulers": ["ff-drfh"]},
        grid={"cluster.servers": [10, 20]},
        seeds=[3],
        out=tmp_path / "g",
    )
    assert sorted(runs["cluster.servers"]) == [10, 20] and set(runs["seed"]) == {3}
    _LargestFirst.__module__ = "__main__"  # as if defined in a notebook
    try:
        match = r"executor 'local:2': scheduler 'largest-first-test'.*__main__.*executor='serial'"
        with pytest.raises(ConfigError, match=match):
            fairsim.sweep(CONFIG, seeds=[1], out=tmp_path / "p", executor="local:2")
    finally:
        _LargestFirst.__module__ = __name__
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        (
            {"cluster.servers": "12"},
            "sweep: grid.cluster.servers: expected a list of values (got '12')",
        ),
        (
            {"cluster.servers": 20},
            "sweep: grid.cluster.servers: expected a list of values (got 20)",
        ),
    ],
)
def test_a_grid_value_that_is_not_a_list_is_refused(
    tmp_path: Path, grid: dict[str, Any], message: str
) -> None:
    # a string was split into characters (servers 1 and 2 ran), a number a TypeError traceback
    with pytest.raises(ConfigError) as err:
        fairsim.sweep({**CONFIG, "schedulers": ["ff-drfh"]}, grid=grid, out=tmp_path / "s")
    assert str(err.value) == message
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(
    ("seed", "shown"),
    [(1.7, "1.7"), (True, "True"), ("abc", "'abc'"), (-1, "-1"), (2**63, str(2**63))],
)
def test_a_run_config_seed_is_validated_like_simulate(
    tmp_path: Path, seed: Any, shown: str
) -> None:
    # 1.7 and True ran seed 1, 'abc' was a bare ValueError
    with pytest.raises(ConfigError) as err:
        fairsim.sweep({**CONFIG, "schedulers": ["ff-drfh"], "seed": seed}, out=tmp_path / "s")
    assert str(err.value) == f"sweep: seed: {shown} is not an integer from 0 to 2**63 - 1"
    assert not (tmp_path / "s").exists()


def test_a_seeds_argument_that_is_not_a_list_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        fairsim.sweep({**CONFIG, "schedulers": ["ff-drfh"]}, seeds="12", out=tmp_path / "s")  # type: ignore[arg-type]
    assert str(err.value) == "sweep: seeds: expected a list of integers (got '12')"
