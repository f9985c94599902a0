"""Lazy instance expansion (fairsim.simulator.replicas) and Alibaba tables replayed by the
engine."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fairsim.schedulers import make_scheduler
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.engine import Engine
from fairsim.simulator.recording import StreamingRecorder
from fairsim.simulator.replicas import SKIP_NO_INSTANCES, ReplicaTaskSource, expand_rows
from fairsim.simulator.results import tables
from fairsim.simulator.stream import PARQUET_KW
from fairsim.simulator.workload import TaskSource
from fairsim.traces.alibaba import convert_alibaba
from fairsim.traces.io import write_tasks
from fairsim.traces.paths import shared_dir


def _tasks(rows: list[tuple]) -> pd.DataFrame:
    cols = ["job_id", "task_index", "submit_s", "cpu", "mem", "run_s", "instances"]
    f = pd.DataFrame(rows, columns=cols)
    return f.assign(
        user=[f"job-{j}" for j in f["job_id"]],
        end_state="finish",
        attempts=1,
        constraint=None,
        parents=None,
    )


def test_expand_rows_chunks_in_order() -> None:
    f = pd.DataFrame({"x": [10, 20, 30], "instances": [3, 0, 4]})
    chunks = list(expand_rows(f, 3))
    assert [len(c) for c in chunks] == [3, 3, 1]
    assert pd.concat(chunks)["x"].tolist() == [10] * 3 + [30] * 4
    assert list(expand_rows(f.iloc[:0], 3)) == []


def test_instance_source_replays_every_instance(tmp_path: Path) -> None:
    frame = _tasks(
        [
            (1, 1, 0.0, 0.5, 0.25, 10.0, 5),  # 5 instances, 2 fit at once per server pair
            (1, 2, 1.0, 0.1, 0.1, 3.0, 1),
            (2, 3, 2.0, 0.2, 0.2, 4.0, 7),
            (2, 4, 2.0, 0.2, 0.2, 4.0, 0),  # no instance: counted, not simulated
        ]
    )
    write_tasks(frame, tmp_path / "tasks.parquet")
    source = ReplicaTaskSource(tmp_path / "tasks.parquet", batch_rows=4)
    assert source.n_hint == 13
    sizes = [len(b) for b in source.batches()]
    assert max(sizes) <= 4 and sum(sizes) == 13
    assert source.skipped[SKIP_NO_INSTANCES] == 1

    source = ReplicaTaskSource(tmp_path / "tasks.parquet", batch_rows=4)
    cluster = ClusterState(np.array([[1.0, 1.0], [1.0, 1.0]]), ("cpu", "mem"))
    r = Engine(cluster, make_scheduler("ff-drfh"), source, horizon_s=math.inf).run()
    t = r.tasks
    assert len(t["submit_s"]) == 13
    assert np.isfinite(t["finish_s"]).all()
    # the 5 instances of task (1, 1) need 0.5 CPU each: at most 4 run at once on 2 servers
    first = (t["job_id"] == 1) & (t["task_index"] == 1)
    assert first.sum() == 5 and t["start_s"][first].max() >= 10.0


def test_streamed_replicas_share_one_live_record(tmp_path: Path) -> None:
    """The replicas of one row are one live record (a Python tuple) in a streamed run, not one
    each; rows whose values agree but whose keys differ (task_index) get their own; and the
    streamed tasks.parquet holds the in-memory rows, byte for byte."""
    frame = _tasks(
        [
            (1, 1, 0.0, 0.5, 0.25, 10.0, 3),
            (1, 2, 0.0, 0.5, 0.25, 10.0, 2),  # the same values as row 1 but its task_index
            (2, 3, 2.0, 0.4, 0.2, 4.0, 4),  # at 10 s, three start and one waits
        ]
    )
    write_tasks(frame, tmp_path / "tasks.parquet")
    rec = StreamingRecorder(tmp_path / "out.parquet", ("cpu", "mem"), {}, hold_censored=True)
    batch = next(ReplicaTaskSource(tmp_path / "tasks.parquet").batches())
    rec.append(batch, np.array([0] * 5 + [1] * 4, dtype=np.int32))
    live = rec.batch()[2]
    assert [len({id(r) for r in live[a:b]}) for a, b in ((0, 3), (3, 5), (5, 9))] == [1, 1, 1]
    assert live[2] is not live[3] and live[2][1] is live[3][1]  # one demand tuple for both
    assert live[0] == (0, (0.5, 0.25), 10.0, (1, 1, 0.0, False))
    assert live[3][3] == (1, 2, 0.0, False) and live[8] == (1, (0.4, 0.2), 4.0, (2, 3, 2.0, False))
    rec.abort()

    def run(out: Path | None) -> Engine:
        source = ReplicaTaskSource(tmp_path / "tasks.parquet", batch_rows=4)
        cluster = ClusterState(np.array([[1.0, 1.0], [1.0, 1.0]]), ("cpu", "mem"))
        sched = make_scheduler("ff-drfh")
        return Engine(
            cluster, sched, source, horizon_s=12.0, tasks_out=out, tasks_order="arrival"
        ).run()

    streamed = run(tmp_path / "t.parquet")
    assert streamed.tasks == {}
    t = pd.read_parquet(tmp_path / "t.parquet")
    assert t["ended"].value_counts().to_dict() == {"finished": 4, "running": 4, "queued": 1}
    mem = tmp_path / "mem.parquet"
    pq.write_table(tables(run(None))["tasks"], mem, **PARQUET_KW)
    assert (tmp_path / "t.parquet").read_bytes() == mem.read_bytes()


def test_alibaba_2017_window_and_gpu_2023_replay(tmp_path: Path) -> None:
    ali = shared_dir() / "traces"
    # v2017: first 10 minutes of the real sample, instances expanded lazily
    convert_alibaba("alibaba-2017", ali / "alibaba-2017", tmp_path / "a17")
    servers = pq.read_table(tmp_path / "a17" / "servers.parquet").to_pandas()
    source = ReplicaTaskSource(tmp_path / "a17" / "tasks.parquet", end_s=600.0)
    cluster = ClusterState(servers[["cpu", "mem"]].to_numpy(), ("cpu", "mem"))
    r = Engine(cluster, make_scheduler("ff-drfh"), source, horizon_s=600.0).run()
    tasks = pq.read_table(tmp_path / "a17" / "tasks.parquet").to_pandas()
    expected = int(tasks.loc[tasks["submit_s"] < 600.0, "instances"].sum())
    assert len(r.tasks["submit_s"]) + r.skipped.get("submitted after the horizon", 0) == expected
    assert expected > 100_000
    # GPU 2023: three resources end to end through the engine
    convert_alibaba("alibaba-gpu-2023", ali / "alibaba-gpu-2023", tmp_path / "gpu")
    nodes = pq.read_table(tmp_path / "gpu" / "servers.parquet").to_pandas()
    source = ReplicaTaskSource(tmp_path / "gpu" / "tasks.parquet")
    assert source.resources == ("cpu", "mem", "gpu")
    cluster = ClusterState(nodes[["cpu", "mem", "gpu"]].to_numpy(), ("cpu", "mem", "gpu"))
    window = json.loads((tmp_path / "gpu" / "conversion.json").read_text())["window_s"]
    r = Engine(cluster, make_scheduler("ff-drfh"), source, horizon_s=window[1]).run()
    n = len(r.tasks["submit_s"])
    assert n + sum(r.skipped.values()) - r.skipped.get("fits no server of the pool", 0) == 8_152
    assert r.skipped["no run time (never scheduled in the trace)"] == 897
    assert r.tasks["demand"].shape == (n, 3)
    finished, censored = np.isfinite(r.tasks["finish_s"]), r.tasks["censored"]
    assert censored.sum() == 5_193 and not (finished & censored).any()
    assert finished[~censored].mean() > 0.99  # the pods whose run time is known complete


_ROW = st.tuples(
    st.integers(0, 6),  # instances (0: none)
    st.sampled_from([2.0, 0.0, math.nan, -1.0]),  # run time (NaN, negative: dropped)
    st.sampled_from([0.1, 0.0, math.inf, -0.5]),  # cpu (infinite, negative: dropped)
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(_ROW, min_size=1, max_size=14),
    window=st.tuples(st.integers(0, 4), st.integers(1, 12)).map(lambda w: (w[0], w[0] + w[1])),
    row_group=st.integers(1, 5),
    batch_rows=st.integers(1, 7),
    taken=st.integers(0, 6),
)
# stopped inside a row: 2 of its 5 replicas yielded, the other 3 still to count
@example(rows=[(5, 2.0, 0.1), (1, 2.0, 0.1)], window=(0, 4), row_group=2, batch_rows=2, taken=1)
def test_count_rest_counts_replicas_as_expanding_them(
    tmp_path: Path,
    rows: list[tuple[int, float, float]],
    window: tuple[int, int],
    row_group: int,
    batch_rows: int,
    taken: int,
) -> None:
    """At the horizon the engine counts the arrivals never reached (``count_rest``): from the
    rows, each weighted by its replicas, the same number and the same skip counts by reason as
    reading the rest of the batches (the base class's way), wherever the batches stopped: in a
    row group, at its end, before the first or after the last."""
    table = _tasks([(1, k, float(k), cpu, 0.1, run, n) for k, (n, run, cpu) in enumerate(rows)])
    path = tmp_path / f"t{row_group}.parquet"
    write_tasks(table, path, row_group_size=row_group)
    counts = []
    for count in (ReplicaTaskSource.count_rest, TaskSource.count_rest):
        source = ReplicaTaskSource(
            path, batch_rows=batch_rows, start_s=float(window[0]), end_s=float(window[1])
        )
        batches = source.batches()
        seen = sum(len(b) for _, b in zip(range(taken), batches, strict=False))
        counts.append((seen, count(source, batches), dict(source.skipped)))
    assert counts[0] == counts[1]
    seen, rest, skipped = counts[0]
    # every replica is simulated, reached at the horizon or skipped; a row without one, skipped
    assert seen + rest + sum(skipped.values()) == sum(n + (n < 1) for n, _, _ in rows)


@pytest.mark.parametrize("batch_rows", [0, -1])
def test_bad_batch_rows(tmp_path: Path, batch_rows: int) -> None:
    from fairsim.errors import ConfigError

    write_tasks(_tasks([(1, 1, 0.0, 0.1, 0.1, 1.0, 1)]), tmp_path / "t.parquet")
    with pytest.raises(ConfigError, match="batch_rows"):
        ReplicaTaskSource(tmp_path / "t.parquet", batch_rows=batch_rows)
