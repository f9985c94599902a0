"""A tasks table fairsim did not write: a NaN or null submit time and an infinite run time are
counted skips, a task source whose submit times go back is refused, and so are null keys (job
id, task index, user, ``censored``) and columns of the wrong kind (simulator/workload.py,
simulator/replicas.py, ``Engine._check_order``). Before, a NaN ``submit_s`` stopped the arrivals
there (every later task was counted as "submitted after the horizon"), an out-of-order row made
the tasks after it arrive late, at its time, and a null ``censored`` read as not censored, all
silently; null or integer users and text times ended in tracebacks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairsim.errors import ConfigError, TraceError
from fairsim.schedulers import make_scheduler
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.engine import Engine
from fairsim.simulator.replicas import ReplicaTaskSource
from fairsim.simulator.results import tables
from fairsim.simulator.workload import (
    SKIP_AFTER_WINDOW,
    SKIP_BEFORE_WINDOW,
    SKIP_INFINITE_RUN,
    SKIP_NO_SUBMIT,
    FrameTaskSource,
    ParquetTaskSource,
    TaskBatch,
    TaskSource,
    _usable,
)

RES = ("cpu", "mem")


def _frame(submit: list[float], instances: list[int] | None = None) -> pd.DataFrame:
    n = len(submit)
    f = pd.DataFrame(
        {
            "job_id": np.arange(n, dtype=np.int64),
            "task_index": np.zeros(n, dtype=np.int32),
            "user": ["a", "b"] * (n // 2) + ["a"] * (n % 2),
            "submit_s": np.asarray(submit, dtype=np.float64),
            "cpu": np.full(n, 0.1),
            "mem": np.full(n, 0.1),
            "run_s": np.full(n, 5.0),
        }
    )
    if instances is not None:
        f["instances"] = np.asarray(instances, dtype=np.int32)
    return f


def _write(frame: pd.DataFrame, path: Path, row_group_size: int = 4, missing: str = "nan") -> Path:
    """``frame`` as a Parquet file; its NaN floats written as NaN (``missing="nan"``) or as
    nulls (``"null"``, what pandas' conversion does)."""
    cols = {c: pa.array(frame[c].to_numpy(), from_pandas=missing == "null") for c in frame}
    pq.write_table(pa.table(cols), path, row_group_size=row_group_size)
    return path


def _run(source: TaskSource, horizon: float = 1_000.0):
    engine = Engine(
        ClusterState(np.ones((4, 2)), RES),
        make_scheduler("drf"),
        source,
        horizon_s=horizon,
        utilization_interval_s=60.0,
    )
    return engine.run()


@pytest.mark.parametrize("missing", ["nan", "null"])
def test_a_nan_submit_time_is_counted_and_every_other_task_runs(
    tmp_path: Path, missing: str
) -> None:
    submit = [0.0, 1.0, 2.0, np.nan, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    path = _write(_frame(submit), tmp_path / "t.parquet", missing=missing)
    src = ParquetTaskSource(path, resources=RES)
    assert src.n_hint == 9
    result = _run(src)
    tasks = tables(result)["tasks"].to_pandas()
    assert len(tasks) == 9 and tasks["submit_s"].tolist() == [0, 1, 2, 4, 5, 6, 7, 8, 9]
    assert tasks["finish_s"].notna().all()  # before: the arrivals stopped at the NaN row
    assert dict(src.skipped) == {SKIP_NO_SUBMIT: 1}


@pytest.mark.parametrize("missing", ["nan", "null"])
def test_a_row_group_outside_the_window_counts_its_nan_rows_apart(
    tmp_path: Path, missing: str
) -> None:
    # row groups of 4: [0, 1, NaN, 2] lies wholly before the window (Arrow's max passes over
    # NaN and null), [10, 11, 12, 13] inside, [20, 21, NaN, NaN] wholly after it, and one
    # with no submit time at all
    nan = np.nan
    submit = [0, 1, nan, 2, 10, 11, 12, 13, 20, 21, nan, nan, nan, nan, nan, nan]
    path = _write(_frame(submit), tmp_path / "t.parquet", missing=missing)
    src = ParquetTaskSource(path, resources=RES, start_s=5.0, end_s=15.0)
    assert pq.ParquetFile(path).num_row_groups == 4
    assert sum(len(b) for b in src.batches()) == 4 == src.n_hint
    assert dict(src.skipped) == {SKIP_BEFORE_WINDOW: 3, SKIP_AFTER_WINDOW: 2, SKIP_NO_SUBMIT: 7}


@pytest.mark.parametrize("missing", ["nan", "null"])
def test_replicas_of_a_row_with_no_submit_time_are_counted(tmp_path: Path, missing: str) -> None:
    frame = _frame([0.0, np.nan, 2.0, 3.0], instances=[2, 3, 1, 1])
    src = ReplicaTaskSource(_write(frame, tmp_path / "t.parquet", missing=missing), resources=RES)
    assert src.n_hint == 4
    assert sum(len(b) for b in src.batches()) == 4
    assert dict(src.skipped) == {SKIP_NO_SUBMIT: 3}


def test_a_source_out_of_submit_order_is_refused_naming_the_task(tmp_path: Path) -> None:
    frame = _frame([0.0, 1.0, 9.0, 3.0, 4.0])  # job 2 at 9 s, then job 3 at 3 s
    src = ParquetTaskSource(_write(frame, tmp_path / "t.parquet", 100), resources=RES)
    with pytest.raises(TraceError) as err:
        _run(src)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(
        "submit_s: task 3/0 (job/index) is submitted at 3.0 s"
    )
    assert "after a task submitted at 9.0 s" in msg


class _Batches(TaskSource):
    """A source that yields the given frames as batches, in the order given."""

    def __init__(self, frames: list[pd.DataFrame]) -> None:
        super().__init__()
        self.resources = RES
        self.frames = frames

    def batches(self) -> Iterator[TaskBatch]:
        for f in self.frames:
            yield self._clean(f, 0.0, np.inf)


def test_the_order_is_checked_across_batches_and_equal_times_pass() -> None:
    a, b = _frame([0.0, 2.0, 2.0]), _frame([2.0, 3.0])
    b["job_id"] += 10
    assert len(tables(_run(_Batches([a, b])))["tasks"]) == 5  # ties across the boundary pass
    c = _frame([1.0, 4.0])
    c["job_id"] += 20
    with pytest.raises(
        TraceError,
        match=r"task 20/0 \(job/index\) is submitted at 1\.0 s, after a task submitted at 2\.0 s",
    ):
        _run(_Batches([a, c]))


def test_a_source_of_ones_own_that_yields_a_nan_time_is_refused() -> None:
    """The sources of fairsim drop such rows; a task source of one's own is held to the same
    contract by the engine."""

    class _Raw(_Batches):
        def batches(self) -> Iterator[TaskBatch]:
            for b in super().batches():
                yield replace(b, submit_s=np.where(b.job_id == 1, np.nan, b.submit_s))

    with pytest.raises(TraceError, match=r"^submit_s: task 1/0 \(job/index\) has no submit time"):
        _run(_Raw([_frame([0.0, 1.0, 2.0])]))


values = st.one_of(
    st.floats(-5, 30, allow_nan=False),
    st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -1.0]),
)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.tuples(values, values, values, values), min_size=1, max_size=25),
    start=st.floats(-10, 20, allow_nan=False),
    width=st.floats(0, 40, allow_nan=False),
)
def test_the_size_hint_and_the_skip_counts_agree_with_the_rows_read(rows, start, width) -> None:  # type: ignore[no-untyped-def]
    """``_usable`` (the size hint) and ``_drop`` (the rows read) are one definition: the rows
    kept plus the rows counted equal the rows, whatever the submit times, run times and
    demands (NaN, infinite, negative)."""
    submit, run, cpu, mem = (np.array(c, dtype=np.float64) for c in zip(*rows, strict=True))
    frame = _frame(list(submit))
    frame["run_s"], frame["cpu"], frame["mem"] = run, cpu, mem
    src = _Batches([])
    keep = src._drop(frame, start, start + width)[0]
    assert np.array_equal(keep, _usable(frame, RES, start, start + width))
    assert int(keep.sum()) + sum(src.skipped.values()) == len(frame)
    assert not np.isnan(frame["submit_s"].to_numpy()[keep]).any()
    frames = FrameTaskSource(frame, start_s=start, end_s=start + width)
    assert frames.n_hint == int(keep.sum())


def test_an_infinite_run_time_is_counted_not_run(tmp_path: Path) -> None:
    """A task that would hold its server for ever is refused as a row (before: it ran to the
    horizon and ended "running")."""
    frame = _frame([0.0, 1.0, 2.0])
    frame["run_s"] = [5.0, np.inf, 5.0]
    src = FrameTaskSource(frame)
    assert src.n_hint == 2
    tasks = tables(_run(src))["tasks"].to_pandas()
    assert tasks["job_id"].tolist() == [0, 2] and tasks["ended"].tolist() == ["finished"] * 2
    assert dict(src.skipped) == {SKIP_INFINITE_RUN: 1}


def test_a_task_without_a_user_or_id_is_refused_in_one_line(tmp_path: Path) -> None:
    table = pa.Table.from_pandas(_frame([0.0, 1.0, 2.0, 3.0, 4.0]), preserve_index=False)
    users = pa.array(["a", None, "b", "a", None], pa.string())
    table = table.set_column(table.schema.get_field_index("user"), "user", users)
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=2)
    src = ParquetTaskSource(tmp_path / "t.parquet", resources=RES)
    with pytest.raises(TraceError) as err:  # before: an ArrowTypeError traceback at the close
        _run(src)
    assert str(err.value).endswith(
        "column 'user' holds 1 null(s) in row group 0; a canonical tasks table has none"
    )
    replicas = _frame([0.0, 1.0], instances=[2, 2])
    replicas["job_id"] = pd.array([1, None], dtype="Int64")
    pq.write_table(pa.Table.from_pandas(replicas, preserve_index=False), tmp_path / "r.parquet")
    with pytest.raises(TraceError, match=r"column 'job_id' holds 1 null\(s\) in row group 0"):
        _run(ReplicaTaskSource(tmp_path / "r.parquet", resources=RES))
    censored = table.set_column(
        table.schema.get_field_index("user"), "user", pa.array(["a"] * 5, pa.string())
    ).append_column("censored", pa.array([False, True, None, False, False], pa.bool_()))
    pq.write_table(censored, tmp_path / "c.parquet", row_group_size=2)
    with pytest.raises(TraceError, match=r"column 'censored' holds 1 null\(s\) in row group 1"):
        _run(ParquetTaskSource(tmp_path / "c.parquet", resources=RES))
    frame = _frame([0.0, 1.0])
    frame.loc[1, "user"] = None
    with pytest.raises(
        ConfigError, match=r"^workload frame: null\(s\) in key column\(s\) \{'user': 1\}$"
    ):
        FrameTaskSource(frame)


@pytest.mark.parametrize(
    ("column", "to", "kind"),
    [
        ("user", pa.int64(), "strings"),
        ("job_id", pa.string(), "integers"),
        ("task_index", pa.float64(), "integers"),
        ("submit_s", pa.string(), "numbers"),
        ("run_s", pa.string(), "numbers"),
        ("mem", pa.string(), "numbers"),
    ],
)
def test_a_column_of_the_wrong_kind_is_refused_in_one_line(
    tmp_path: Path, column: str, to: pa.DataType, kind: str
) -> None:
    """Before: an Arrow traceback at the close (integer users), a TypeError (text submit
    times), or text demands parsed as numbers without a word."""
    table = pa.Table.from_pandas(_frame([0.0, 1.0]), preserve_index=False)
    values = [str(v) if to == pa.string() else v for v in table.column(column).to_pylist()]
    if column == "user":
        values = [1, 2]
    i = table.schema.get_field_index(column)
    table = table.set_column(i, column, pa.array(values, to))
    pq.write_table(table, tmp_path / "t.parquet")
    with pytest.raises(ConfigError) as err:
        ParquetTaskSource(tmp_path / "t.parquet", resources=RES)
    assert str(err.value).endswith(f"column {column!r} holds {to} values, expected {kind}")
    # the canonical types and the narrower ones pass
    ok = _frame([0.0, 1.0]).astype({"job_id": "int32", "cpu": "float32", "run_s": "int64"})
    pq.write_table(pa.Table.from_pandas(ok, preserve_index=False), tmp_path / "ok.parquet")
    assert ParquetTaskSource(tmp_path / "ok.parquet", resources=RES).n_hint == 2
    frame = _frame([0.0, 1.0])
    frame["user"] = [1, 2]
    with pytest.raises(ConfigError, match=r"^workload frame: column 'user' holds int64 values"):
        FrameTaskSource(frame)
