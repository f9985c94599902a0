"""A pool without a resource the trace's tasks request (a GPU trace on Table I servers) is
refused in one line; it was ``KeyError: "['gpu'] not in index"`` in ``pool_capacity``."""

from __future__ import annotations

import pandas as pd
import pytest

from fairsim.errors import ConfigError
from fairsim.scenario.config import parse_config
from fairsim.scenario.pool import build_pool, pool_capacity
from fairsim.scenario.workload import Workload

GPU = ("cpu", "mem", "gpu")


def _workload() -> Workload:
    return Workload(open=lambda: None, start_s=0.0, end_s=1.0, describe={}, resources=GPU)  # type: ignore[arg-type, return-value]


def test_table_i_pool_for_a_gpu_trace_is_refused() -> None:
    cfg = parse_config(
        {
            "name": "gpu",
            "trace": {"format": "synthetic", "n_tasks": 10, "duration_s": 100},
            "cluster": {"servers": 5, "source": "table-i"},
            "schedulers": ["drf"],
        }
    )
    with pytest.raises(ConfigError) as err:
        build_pool(cfg, None, _workload())
    assert str(err.value) == (
        "cluster: the pool (table-i: Table I: cpu and mem) has no gpu resource, which the "
        "trace's tasks request (they request cpu, mem, gpu); give a pool with gpu: "
        "cluster.source: trace (the trace's machines) or cluster.classes"
    )


def test_pool_capacity_names_the_missing_resource() -> None:
    pool = pd.DataFrame({"server": ["s0"], "cpu": [1.0], "mem": [1.0]})
    with pytest.raises(ConfigError) as err:
        pool_capacity(pool, GPU)
    assert str(err.value) == (
        "cluster: the server pool (resources: cpu and mem) has no gpu resource, which the "
        "trace's tasks request (they request cpu, mem, gpu); give a pool with gpu: "
        "cluster.source: trace (the trace's machines) or cluster.classes"
    )
