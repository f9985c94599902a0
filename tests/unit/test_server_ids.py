"""``tasks.parquet``'s ``server`` is the server's id, the key of ``servers.parquet`` (issue 39,
friction 10): ``tasks.merge(servers, on="server")`` joins every started task to the capacity of
the server it ran on, in every recording mode and for every kind of pool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario.config import parse_config
from fairsim.scenario.pipeline import Hooks, prepare_scenario
from fairsim.simulator.cluster import ClusterState

SYNTHETIC: dict[str, Any] = {
    "name": "ids",
    "trace": {"format": "synthetic", "n_tasks": 400, "duration_s": 3600},
    "cluster": {"servers": 12},
    "schedulers": ["bf-drfh"],
}
CLASSES: dict[str, Any] = {
    "name": "ids-classes",
    "trace": {
        "format": "inline",
        "users": [
            {"name": "a", "demand": [0.5, 0.1], "tasks": 6, "run_s": 10},
            {"name": "b", "demand": [0.1, 0.5], "tasks": 6, "run_s": 10},
        ],
    },
    "cluster": {
        "classes": [
            {"name": "small", "count": 1, "capacity": [0.5, 0.5]},
            {"name": "big", "count": 2, "capacity": [1.0, 1.0]},
        ]
    },
    "schedulers": ["bf-drfh"],
    "collect": {"utilization_interval_s": 5, "horizon_s": 100},
}


def _joined(tasks: pd.DataFrame, servers: pd.DataFrame) -> pd.DataFrame:
    started = tasks[tasks["start_s"].notna()]
    return started.merge(servers, on="server", how="left", suffixes=("", "_capacity"))


@pytest.mark.parametrize("stream", [False, True], ids=["arrival-order", "end-order"])
def test_written_tasks_join_servers_parquet(tmp_path: Path, stream: bool) -> None:
    cfg = {**SYNTHETIC, "collect": {"stream_tasks": stream}}
    fairsim.simulate(cfg, out=tmp_path / "run")
    tasks = pq.read_table(tmp_path / "run" / "bf-drfh" / "tasks.parquet")
    servers = pd.read_parquet(tmp_path / "run" / "servers.parquet")
    assert tasks.schema.field("server").type == pa.string()
    frame = tasks.to_pandas()
    assert frame["server"].isna().tolist() == frame["start_s"].isna().tolist()
    joined = _joined(frame, servers)
    assert len(joined) > 300 and joined["cpu_capacity"].notna().all()
    # every task fits the server it ran on
    assert (joined["cpu"] <= joined["cpu_capacity"]).all()
    assert (joined["mem"] <= joined["mem_capacity"]).all()
    assert set(joined["server"]) <= {f"s{i}" for i in range(12)}


def test_in_memory_tasks_hold_the_same_ids_as_the_file(tmp_path: Path) -> None:
    written = fairsim.simulate(SYNTHETIC, out=tmp_path / "run")["bf-drfh"].tasks
    memory = fairsim.simulate(SYNTHETIC)["bf-drfh"].tasks
    assert memory["server"].tolist() == written["server"].tolist()
    assert memory["server"].dropna().str.match(r"^s\d+$").all()


def test_server_classes_are_named_by_position_in_both_files(tmp_path: Path) -> None:
    fairsim.simulate(CLASSES, out=tmp_path / "run")
    servers = pd.read_parquet(tmp_path / "run" / "servers.parquet")
    assert servers["server"].tolist() == ["s0", "s1", "s2"]
    tasks = pd.read_parquet(tmp_path / "run" / "bf-drfh" / "tasks.parquet")
    joined = _joined(tasks, servers)
    assert len(joined) == 12 and joined["cpu_capacity"].notna().all()
    assert (joined["cpu"] <= joined["cpu_capacity"]).all()


def test_a_hook_pool_numbered_0_1_gets_text_ids(tmp_path: Path) -> None:
    cfg = parse_config(CLASSES)

    def pool(*_: Any) -> pd.DataFrame:
        return pd.DataFrame({"server": [7, 3, 5], "cpu": [0.5, 1.0, 1.0], "mem": [0.5, 1.0, 1.0]})

    scenario = prepare_scenario(cfg, hooks=Hooks(pool=pool))
    assert scenario.pool["server"].tolist() == ["7", "3", "5"]
    (run,) = scenario.runs()
    assert run.result is not None and run.result.server_ids == ("7", "3", "5")


def test_a_pool_that_names_a_server_twice_is_refused() -> None:
    cfg = parse_config(CLASSES)

    def pool(*_: Any) -> pd.DataFrame:
        return pd.DataFrame({"server": ["a", "b", "a"], "cpu": [1.0] * 3, "mem": [1.0] * 3})

    with pytest.raises(ConfigError, match=r"^cluster: the server pool names server 'a' twice$"):
        prepare_scenario(cfg, hooks=Hooks(pool=pool))


def test_cluster_state_ids() -> None:
    cap = np.ones((3, 2))
    assert ClusterState(cap, ("cpu", "mem")).ids == ("s0", "s1", "s2")
    assert ClusterState(cap, ("cpu", "mem"), ["m7", "m3", "m5"]).ids == ("m7", "m3", "m5")
    with pytest.raises(ValueError, match=r"^ids: 2 ids \(2 distinct\) for 3 servers"):
        ClusterState(cap, ("cpu", "mem"), ["a", "b"])
    with pytest.raises(ValueError, match=r"^ids: 3 ids \(2 distinct\) for 3 servers"):
        ClusterState(cap, ("cpu", "mem"), ["a", "b", "a"])
