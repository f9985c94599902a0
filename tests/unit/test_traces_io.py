"""Atomic writers and row-group streaming of the canonical tables."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from fairsim.errors import TraceError
from fairsim.traces.io import (
    iter_task_batches,
    read_tasks_meta,
    write_json_atomic,
    write_servers,
    write_tasks,
)
from fairsim.traces.synth import synth_google_like


def test_write_and_stream_tasks(tmp_path: Path) -> None:
    df = synth_google_like(150_000, seed=2)
    path = write_tasks(df, tmp_path / "tasks.parquet")
    meta = read_tasks_meta(path)
    assert meta["rows"] == 150_000
    assert meta["row_groups"] == 3
    assert meta["schema"] == "3"
    assert meta["resources"] == ["cpu", "mem"]
    sizes = [b.num_rows for b in iter_task_batches(path, columns=["job_id", "submit_s"])]
    assert sizes == [65_536, 65_536, 150_000 - 2 * 65_536]
    back = pd.concat(b.to_pandas() for b in iter_task_batches(path))
    assert back.reset_index(drop=True)[["job_id", "cpu"]].equals(df[["job_id", "cpu"]])
    assert [p.name for p in tmp_path.iterdir()] == ["tasks.parquet"]  # no temp file left


def test_write_tasks_derives_censored_from_end_state(tmp_path: Path) -> None:
    df = synth_google_like(10, seed=0).drop(columns="censored")
    df.loc[[2, 5], "end_state"] = "censored"
    for table in (df, pa.Table.from_pandas(df, preserve_index=False)):
        path = write_tasks(table, tmp_path / "t.parquet")
        back = pd.read_parquet(path)
        assert list(back.index[back["censored"]]) == [2, 5]
    df["censored"] = False  # an explicit column is kept as it is
    assert not pd.read_parquet(write_tasks(df, tmp_path / "t.parquet"))["censored"].any()


def test_write_tasks_rejects_bad_frames(tmp_path: Path) -> None:
    df = synth_google_like(10, seed=0)
    with pytest.raises(TraceError, match=r"missing column\(s\) \['run_s'\]"):
        write_tasks(df.drop(columns="run_s"), tmp_path / "t.parquet")
    bad = df.copy()
    bad.loc[0, "cpu"] = None
    with pytest.raises(TraceError, match=r"column 'cpu' has null values"):
        write_tasks(bad, tmp_path / "t.parquet")
    assert list(tmp_path.iterdir()) == []
    write_tasks(df, tmp_path / "t.parquet")
    with pytest.raises(TraceError, match=r"unknown column\(s\) \['gpu'\]"):
        next(iter_task_batches(tmp_path / "t.parquet", columns=["gpu"]))
    with pytest.raises(TraceError, match="tasks file not found"):
        read_tasks_meta(tmp_path / "nope.parquet")


def test_write_servers_and_json(tmp_path: Path) -> None:
    servers = pd.DataFrame({"server": ["a", "b"], "cpu": [0.5, 1.0], "mem": [0.25, 1.0]})
    out = write_servers(servers, tmp_path / "servers.parquet")
    back = pd.read_parquet(out)
    assert list(back.columns) == ["server", "cpu", "mem", "platform"]
    assert back.platform.isna().all()
    write_json_atomic({"a": 1}, tmp_path / "x.json")
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": 1}
