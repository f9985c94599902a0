"""Streamed task results (:mod:`fairsim.simulator.stream`): by default with an output folder,
in arrival order and byte-identical to the in-memory path; in end order with
``collect.stream_tasks: true`` (the same rows and values); live tasks only in memory; nothing
half-written after a failure; where a scenario cannot stream, in memory with a logged
estimate."""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario import pipeline
from fairsim.scenario.config import parse_config
from fairsim.scenario.output import run_to_folder
from fairsim.schedulers import make_scheduler
from fairsim.simulator import stream as stream_mod
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.engine import Engine
from fairsim.simulator.jobs import JobGate
from fairsim.simulator.results import summarize, tables, write_run
from fairsim.simulator.workload import FrameTaskSource

#: Summary fields that measure the machine, not the simulation.
VOLATILE = {"wall_s", "tasks_per_s", "peak_rss_mb"}


def _google(google_dir: Path, cache: Path, stream: bool, **collect: Any) -> dict[str, Any]:
    return {
        "name": "stream",
        "seed": 2,
        "trace": {
            "format": "google-2011",
            "path": str(google_dir),
            "parts": "0",
            "start_s": 601,
            "end_s": 4000,
            "cache_dir": str(cache),
        },
        "cluster": {"servers": 150, "source": "table-i"},
        "schedulers": ["ff-drfh", "bf-drfh", "psdsf", "slots-14"],
        "collect": {"horizon_s": 9000, "stream_tasks": stream, **collect},
    }


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(list(frame.columns), kind="stable").reset_index(drop=True)


def _strip(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in VOLATILE}


def _in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the next runs keep every task in memory (the path before streaming by default)."""
    monkeypatch.setattr(pipeline.Scenario, "task_order", lambda self, tasks_dir: None)


def test_streamed_files_hold_the_in_memory_rows_on_the_google_sample(
    tmp_path: Path, google_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real sample, four schedulers: the default (streamed, arrival order) writes every file
    byte for byte as the in-memory path; with ``stream_tasks: true`` every ``tasks.parquet``
    row and value is the in-memory path's in end order, ``jobs``/``users``/``utilization`` are
    byte-identical, and so is the summary; small row groups make tasks end before their batch
    has all arrived."""
    monkeypatch.setattr(stream_mod, "ROW_GROUP", 500)
    monkeypatch.setattr(stream_mod, "SPILL_ROWS", 500)
    cache = tmp_path / "cache"
    default = run_to_folder(
        parse_config(_google(google_dir, cache, False)), tmp_path / "default", progress=False
    )
    with monkeypatch.context() as m:
        _in_memory(m)
        mem = run_to_folder(
            parse_config(_google(google_dir, cache, False)), tmp_path / "mem", progress=False
        )
    streamed = run_to_folder(
        parse_config(_google(google_dir, cache, True)), tmp_path / "st", progress=False
    )
    assert list(mem) == list(streamed) == list(default)
    for name in mem:
        a, b, d = tmp_path / "mem" / name, tmp_path / "st" / name, tmp_path / "default" / name
        assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
        for f in a.iterdir():  # every file of the default run is the in-memory path's
            if f.name != "summary.json":
                assert (d / f.name).read_bytes() == f.read_bytes(), f.name
        sd = json.loads((d / "summary.json").read_text())
        assert _strip(sd) == _strip(json.loads((a / "summary.json").read_text()))
        for table in ("jobs", "users", "utilization"):
            assert (a / f"{table}.parquet").read_bytes() == (b / f"{table}.parquet").read_bytes()
        ta, tb = pq.read_table(a / "tasks.parquet"), pq.read_table(b / "tasks.parquet")
        assert ta.schema.remove_metadata() == tb.schema.remove_metadata()
        fa, fb = ta.to_pandas(), tb.to_pandas()
        pd.testing.assert_frame_equal(_sorted(fa), _sorted(fb))
        assert pq.ParquetFile(b / "tasks.parquet").metadata.num_row_groups == math.ceil(
            len(fb) / 500
        )
        ended = fb["ended"].to_numpy()
        # rows come in the order tasks ended: unplaceable on arrival and finished ones by
        # finish time, then what was live at the horizon
        live = np.isin(ended, ["running", "censored", "queued"])
        assert live.any() and live[np.argmax(live) :].all()
        done = fb.loc[ended == "finished", "finish_s"].to_numpy()
        assert (np.diff(done) >= 0).all()
        sa = json.loads((a / "summary.json").read_text())
        sb = json.loads((b / "summary.json").read_text())
        # the config hash covers collect.stream_tasks (the row order of tasks.parquet)
        assert sa.pop("config_hash") != sb.pop("config_hash")
        assert _strip(sa) == _strip(sb)
        assert sb["tasks"] == len(fb) > 1_000 and sb["tasks_completed"] > 0
        assert sum(sb["ended"].values()) == sb["tasks"]  # every task accounted for
        assert mem[name]["tasks"] == streamed[name]["tasks"]
    # the same config and seed give byte-identical streamed files
    again = run_to_folder(
        parse_config(_google(google_dir, cache, True)), tmp_path / "again", progress=False
    )
    for name in again:
        for f in ("tasks", "jobs", "users", "utilization"):
            path = f"{name}/{f}.parquet"
            assert (tmp_path / "st" / path).read_bytes() == (tmp_path / "again" / path).read_bytes()


def _frame() -> pd.DataFrame:
    """One server (1 CPU, 1 memory). Job 7: a task that fits no server, a censored one (held to
    the horizon), one that runs 10 s; job 8: one that waits behind them and one submitted after
    the horizon."""
    return pd.DataFrame(
        {
            "job_id": [7, 7, 7, 8, 8],
            "task_index": [0, 1, 2, 0, 1],
            "user": ["a", "a", "a", "b", "b"],
            "submit_s": [0.0, 0.0, 1.0, 2.0, 200.0],
            "cpu": [2.0, 0.5, 0.4, 0.6, 0.1],
            "mem": [0.1, 0.5, 0.4, 0.6, 0.1],
            "run_s": [5.0, 3.0, 10.0, 5.0, 5.0],
            "censored": [False, True, False, False, False],
        }
    )


def _engine(tasks_out: Path | None, **kw: Any) -> Engine:
    return Engine(
        ClusterState(np.array([[1.0, 1.0]]), ("cpu", "mem")),
        kw.pop("scheduler", None) or make_scheduler("ff-drfh"),
        FrameTaskSource(_frame()),
        horizon_s=100.0,
        utilization_interval_s=50.0,
        tasks_out=tasks_out,
        **kw,
    )


def test_worked_example_rows_in_end_order(tmp_path: Path) -> None:
    r = _engine(tmp_path / "t.parquet").run()
    assert r.tasks == {} and r.streamed is not None
    t = pd.read_parquet(tmp_path / "t.parquet")
    # unplaceable on arrival (t=0), job 7's task 2 finishes at 11, then the live ones by id
    assert t["ended"].tolist() == ["unplaceable", "finished", "censored", "queued"]
    assert t["task_index"].tolist() == [0, 2, 1, 0] and t["job_id"].tolist() == [7, 7, 7, 8]
    assert t["start_s"].tolist()[1:3] == [1.0, 0.0] and t["finish_s"].tolist()[1] == 11.0
    assert t["server"].tolist()[1:3] == ["s0", "s0"] and t["server"].isna().tolist() == [
        True,
        False,
        False,
        True,
    ]
    s = r.streamed
    assert (s.rows, s.started, s.row_groups) == (4, 2, 1)
    assert s.ended.tolist() == [1, 1, 0, 1, 1]
    assert s.users.to_dict("list") == {
        "user": ["a", "b"],
        "tasks_submitted": [3, 1],
        "tasks_completed": [1, 0],
    }
    assert s.jobs["n_tasks"].tolist() == [3, 1] and s.jobs["n_done"].tolist() == [1, 0]
    # the in-memory path says the same
    mem = _engine(None).run()
    built = tables(mem)
    pd.testing.assert_frame_equal(_sorted(built["tasks"].to_pandas()), _sorted(t), check_like=False)
    sb = summarize(r, tables(r))
    assert _strip(sb) == _strip(summarize(mem, built))
    assert r.skipped == {"submitted after the horizon": 1, "fits no server of the pool": 1}
    # write_run moves the streamed file into the result folder
    summary = write_run(r, tmp_path / "out")
    assert summary["ended"]["unplaceable"] == 1
    assert not (tmp_path / "t.parquet").exists()
    assert pd.read_parquet(tmp_path / "out" / "tasks.parquet").equals(t)


class _Fails(type(make_scheduler("ff-drfh"))):  # type: ignore[misc]
    """First-Fit DRFH that is interrupted at its third pass."""

    calls = 0

    def decide(self):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 3:
            raise KeyboardInterrupt
        return super().decide()


def test_an_interrupted_run_leaves_no_file(tmp_path: Path) -> None:
    sched = _Fails()
    with pytest.raises(KeyboardInterrupt):
        _engine(tmp_path / "t.parquet", scheduler=sched).run()
    assert list(tmp_path.iterdir()) == []


def test_worked_example_in_arrival_order_is_the_in_memory_file(tmp_path: Path) -> None:
    """Arrival order: the rows of the worked example by task id, with the bytes the in-memory
    path writes (one row group of ARRIVAL_ROW_GROUP rows)."""
    r = _engine(tmp_path / "t.parquet", tasks_order="arrival").run()
    assert r.streamed is not None and r.streamed.row_groups == 1
    t = pd.read_parquet(tmp_path / "t.parquet")
    assert t["ended"].tolist() == ["unplaceable", "censored", "finished", "queued"]
    mem = tmp_path / "mem.parquet"
    pq.write_table(tables(_engine(None).run())["tasks"], mem, **stream_mod.PARQUET_KW)
    assert (tmp_path / "t.parquet").read_bytes() == mem.read_bytes()


def test_arrival_order_writes_a_held_task_when_it_starts(tmp_path: Path) -> None:
    """Arrival order: the censored task held to the horizon (job 7's task 1, started at 0) is
    written as it starts, and the recorder keeps no live record, start or row of it after; end
    order keeps it live to the horizon (its row comes after the finished one)."""
    seen: list[tuple[str, bool, bool]] = []
    for order in ("arrival", "end"):
        eng = _engine(tmp_path / f"{order}.parquet", tasks_order=order)
        original = eng._close

        def close(*args: Any, eng: Engine = eng, order: str = order, original: Any = original):
            rec = eng._recorder
            # the pending rows' task ids: every row's first value
            ids = rec.stream.pending[:: rec.stream._width]  # type: ignore[attr-defined]
            seen.append((order, 1 in rec.live, 1 in ids))
            return original(*args)

        eng._close = close  # type: ignore[method-assign]
        eng.run()
    assert seen == [("arrival", False, True), ("end", True, False)]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 40), st.integers(1, 9), st.integers(1, 12), st.randoms())
def test_arrival_order_puts_any_end_order_back(n: int, block: int, flush: int, rnd: Any) -> None:
    """Rows handed over in any order come out by task id, ``block`` rows a row group, through
    spill blocks of ``block`` task ids; a lost task is an error, not a short file."""
    import tempfile

    order = list(range(n))
    rnd.shuffle(order)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tasks.parquet"
        s = stream_mod.TaskStream(path, ("cpu",), {"u": 0}, row_group=block, order="arrival")
        s.limit = s._width * flush
        for task in order:
            s.row(task, 100 + task, task, 0, float(task), math.nan, math.nan, -1, 3, (0.5,))
        out = s.close()
        t = pq.read_table(path)
        assert t.column("job_id").to_pylist() == [100 + i for i in range(n)]
        assert out.rows == n and out.row_groups == max(1, math.ceil(n / block))
        assert pq.ParquetFile(path).metadata.num_row_groups == out.row_groups
        assert sorted(os.listdir(tmp)) == ["tasks.parquet"]  # the spill files are gone
        if n > 1:  # task 0 lost (a lost last task cannot be told from a shorter run)
            lost = stream_mod.TaskStream(path, ("cpu",), {"u": 0}, row_group=block, order="arrival")
            for task in (t for t in order if t):
                lost.row(task, 1, task, 0, 0.0, math.nan, math.nan, -1, 3, (0.5,))
            with pytest.raises(ValueError, match=r"^streamed task ids"):
                lost.close()
            lost.abort()
            assert sorted(os.listdir(tmp)) == ["tasks.parquet"]


def test_placement_constraints_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Placement constraints: the default run streams (constraint codes of live tasks only)
    and writes the in-memory path's bytes; ``stream_tasks: true`` gives the same rows."""
    cfg = {
        "name": "c",
        "trace": {
            "format": "synthetic",
            "duration_s": 1800,
            "n_tasks": 3_000,
            "constraints": {"share": 0.5, "classes": [1, 2]},
        },
        "cluster": {"servers": 30},
        "schedulers": ["bf-drfh", "psdsf"],
    }
    seen: list[str | None] = []
    order = pipeline.Scenario.task_order

    def spy(self: pipeline.Scenario, tasks_dir: Path | None) -> str | None:
        seen.append(order(self, tasks_dir))
        return seen[-1]

    with monkeypatch.context() as m:
        m.setattr(pipeline.Scenario, "task_order", spy)
        run_to_folder(parse_config(cfg), tmp_path / "default", progress=False, report=False)
    assert seen == ["arrival"]
    with monkeypatch.context() as m:
        _in_memory(m)
        run_to_folder(parse_config(cfg), tmp_path / "mem", progress=False, report=False)
    cfg["collect"] = {"stream_tasks": True}
    run_to_folder(parse_config(cfg), tmp_path / "end", progress=False, report=False)
    for name in ("bf-drfh", "psdsf"):
        a = (tmp_path / "mem" / name / "tasks.parquet").read_bytes()
        assert (tmp_path / "default" / name / "tasks.parquet").read_bytes() == a
        mem = pd.read_parquet(tmp_path / "mem" / name / "tasks.parquet")
        end = pd.read_parquet(tmp_path / "end" / name / "tasks.parquet")
        assert (mem["ended"] == "finished").sum() > 500
        pd.testing.assert_frame_equal(_sorted(mem), _sorted(end))


_SYNTH = {
    "name": "s",
    "trace": {"format": "synthetic", "n_tasks": 300, "duration_s": 600},
    "cluster": {"servers": 4},
    "schedulers": ["ff-drfh"],
}


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"trace": {**_SYNTH["trace"], "model": "complex"}}, "a job gate"),
        ({"collect": {"stranded": True}}, "collect.stranded"),
        ({"collect": {"sharing_incentive": True}}, "collect.sharing_incentive"),
    ],
)
def test_where_a_scenario_cannot_stream_it_says_so_with_an_estimate(
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
    change: dict[str, Any],
    reason: str,
) -> None:
    """A job gate, ``collect.stranded`` and ``collect.sharing_incentive`` keep the tasks in
    memory: the run says why and how much memory at the start (an info line for a small
    run, a warning from IN_MEMORY_WARN_BYTES); ``stream_tasks: true`` is refused."""
    cfg = {**_SYNTH, **change}
    with caplog.at_level(logging.INFO, logger="fairsim.scenario.pipeline"):
        s = run_to_folder(parse_config(cfg), tmp_path / "small", progress=False, report=False)
    n = s["ff-drfh"]["tasks"]
    msgs = [r for r in caplog.records if "kept in memory" in r.getMessage()]
    assert len(msgs) == 1 and msgs[0].levelno == logging.INFO
    assert reason in msgs[0].getMessage()
    est = f"about {max(1, round(160 * n / 1e6))} MB for {n:,} tasks"
    assert msgs[0].getMessage().endswith(est), msgs[0].getMessage()
    caplog.clear()
    monkeypatch.setattr(pipeline, "IN_MEMORY_WARN_BYTES", 1)
    with caplog.at_level(logging.WARNING, logger="fairsim.scenario.pipeline"):
        run_to_folder(parse_config(cfg), tmp_path / "big", progress=False, report=False)
    assert [r.levelno for r in caplog.records if "kept in memory" in r.getMessage()] == [
        logging.WARNING
    ]
    with pytest.raises(ConfigError, match=r"not supported with"):
        run_to_folder(
            parse_config({**cfg, "collect": {**cfg.get("collect", {}), "stream_tasks": True}}),
            tmp_path / "true",
            progress=False,
            report=False,
        )


def test_in_memory_estimate() -> None:
    from fairsim.simulator.recording import in_memory_estimate

    assert in_memory_estimate(3_000_000) == "about 480 MB for 3,000,000 tasks"
    assert in_memory_estimate(25_000_000) == "about 4.0 GB for 25,000,000 tasks"
    assert in_memory_estimate(10) == "about 1 MB for 10 tasks"


def test_the_default_keeps_every_config_hash() -> None:
    """``stream_tasks: false`` stays the default: configs that do not name it hash as before
    (this one's hash is pinned in test_fairness_over_time too)."""
    cfg = parse_config(_SYNTH)
    assert cfg.collect.stream_tasks is False
    assert cfg.model_dump(mode="json")["collect"]["stream_tasks"] is False
    assert (
        cfg.config_hash()
        == parse_config({**_SYNTH, "collect": {"stream_tasks": False}}).config_hash()
    )
    assert (
        cfg.config_hash()
        != parse_config({**_SYNTH, "collect": {"stream_tasks": True}}).config_hash()
    )


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^tasks_out: .*a job gate"):
        _engine(tmp_path / "t.parquet", gate=_gate())
    with pytest.raises(ValueError, match=r"^tasks_order: 'random' "):
        _engine(tmp_path / "t.parquet", tasks_order="random")
    with pytest.raises(ValueError, match=r"^row_group: 0 "):
        stream_mod.TaskStream(tmp_path / "x.parquet", ("cpu",), {}, row_group=0)
    with pytest.raises(ValueError, match=r"^order: 'random' "):
        stream_mod.TaskStream(tmp_path / "x.parquet", ("cpu",), {}, order="random")
    cfg = {
        "name": "s",
        "trace": {"format": "synthetic", "n_tasks": 50, "duration_s": 600},
        "cluster": {"servers": 4},
        "schedulers": ["ff-drfh"],
        "collect": {"stream_tasks": True},
    }
    with pytest.raises(ConfigError, match=r"^collect.stream_tasks: true writes tasks.parquet"):
        fairsim.simulate(cfg)
    trace = {"format": "synthetic", "n_tasks": 50, "duration_s": 600, "model": "complex"}
    jobs = dict(cfg, trace=trace)
    with pytest.raises(ConfigError, match=r"^collect.stream_tasks: true is not supported with"):
        fairsim.simulate(jobs, out=tmp_path / "jobs")
    assert not (tmp_path / "jobs").exists()
    # with an output folder it runs, and the API reads the streamed file
    r = fairsim.simulate(cfg, out=tmp_path / "ok")["ff-drfh"]
    assert len(r.tasks) == r.summary["tasks"] == 50
    assert r.users["tasks_submitted"].sum() == 50
    # without an output folder the default keeps the tasks in memory
    cfg["collect"] = {}
    mem = fairsim.simulate(cfg)["ff-drfh"]
    assert len(mem.tasks) == 50
    pd.testing.assert_frame_equal(_sorted(mem.tasks), _sorted(r.tasks))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3), st.integers(0, 20)), max_size=80),
    st.integers(1, 7),
)
def test_job_totals_equal_a_groupby(rows: list[tuple[int, int, int]], chunk: int) -> None:
    """Per-job totals merged chunk by chunk (with merges forced every few entries) equal one
    pandas groupby over all rows: tasks, first submission, user of the first task."""
    totals = stream_mod._JobTotals(n="sum", submit_s="min", seq="first", user="first")
    totals._merge_at = 3
    frame = pd.DataFrame(rows, columns=["job", "user", "submit_s"], dtype=np.int64)
    frame["submit_s"] = frame["submit_s"].astype(float)
    for lo in range(0, len(frame), chunk):
        part = frame.iloc[lo : lo + chunk]
        totals.add(
            part["job"].to_numpy(),
            n=np.ones(len(part), np.int64),
            submit_s=part["submit_s"].to_numpy(),
            user=part["user"].to_numpy(),
            seq=np.arange(lo, lo + len(part), dtype=np.int64),
        )
    got = totals.totals()
    g = frame.groupby("job", sort=True)
    np.testing.assert_array_equal(got["job"], g.size().index.to_numpy())
    np.testing.assert_array_equal(got["n"], g.size().to_numpy())
    np.testing.assert_array_equal(got["submit_s"], g["submit_s"].min().to_numpy())
    np.testing.assert_array_equal(got["user"], g["user"].first().to_numpy())


def _gate() -> JobGate:
    return JobGate()


def test_write_run_lets_the_tasks_table_go_before_the_other_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An in-memory run's ``tasks.parquet`` is written, and its Arrow table let go, before the
    jobs and users frames are built (the two together set the result step's peak of a gated run:
    alibaba-2018-complex 638 -> 565 MiB); every file is the one :func:`tables` gives."""
    import pyarrow as pa

    from fairsim.simulator import results as R
    from fairsim.simulator.results import write_table
    from fairsim.traces.synth import synth_google_like

    frame = synth_google_like(20_000, seed=3, duration_s=3600.0, n_users=40)
    cap = np.tile([[0.5, 0.5]], (200, 1))
    result = Engine(
        ClusterState(cap, ("cpu", "mem")),
        make_scheduler("ff-drfh"),
        FrameTaskSource(frame),
        horizon_s=4000.0,
    ).run()
    assert result.streamed is None
    held: list[int] = []
    frames = R._jobs_users

    def spy(r: Any) -> Any:
        held.append(pa.total_allocated_bytes())
        return frames(r)

    monkeypatch.setattr(R, "_jobs_users", spy)
    before = pa.total_allocated_bytes()
    write_run(result, tmp_path / "out")
    size = R.task_table(result).nbytes
    assert size > 1_000_000 and held and max(held) - before < size / 4
    for name, table in tables(result).items():
        write_table(table, tmp_path / f"{name}.parquet")
        assert (tmp_path / f"{name}.parquet").read_bytes() == (
            tmp_path / "out" / f"{name}.parquet"
        ).read_bytes(), name
