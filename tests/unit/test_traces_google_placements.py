"""placements.parquet: the recorded runs the Google 2011 converter keeps (docs/traces.md)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fairsim.errors import TraceError
from fairsim.scenario.config import GoogleTrace
from fairsim.scenario.trace_cache import converted_google
from fairsim.traces.google2011 import convert_google_2011
from fairsim.traces.io import read_placements, write_placements
from fairsim.traces.schema import PLACEMENTS_SCHEMA_VERSION

S = 1_000_000  # µs per second


def _row(t, job, task, ev, machine="", cpu="0.1", mem="0.2", user="u"):
    return f"{t},,{job},{task},{machine},{ev},{user},0,0,{cpu},{mem},0,0"


PART0 = [
    _row(0, 1, 0, 0),  # A: SUBMIT before the window
    _row(0, 1, 0, 1, machine=5),  # A: SCHEDULE at time 0 on 5 -> run 0 starts at 600 s
    _row(650 * S, 2, 0, 0),  # B: SUBMIT
    _row(650 * S, 3, 0, 0),  # C: SUBMIT
    _row(650 * S, 4, 0, 0),  # D: SUBMIT
    _row(650 * S, 5, 0, 0, cpu="", mem=""),  # E: no request ever -> dropped
    _row(650 * S, 6, 0, 0),  # F: SUBMIT
    _row(660 * S, 2, 0, 1, machine=7, cpu="0.15"),  # B: on 7 with its own request, censored
    _row(660 * S, 5, 0, 1, machine=5, cpu="", mem=""),  # E: a run of a dropped task
    _row(660 * S, 6, 0, 1, machine=5),  # F: SCHEDULE on 5 ...
    _row(670 * S, 6, 0, 1, machine=6, cpu=""),  # F: ... again without an end; no CPU request
    _row(670 * S, 3, 0, 1, machine=99),  # C: SCHEDULE on a machine machine_events lacks
    _row(670 * S, 4, 0, 1),  # D: SCHEDULE without a machine
    _row(680 * S, 5, 0, 4, cpu="", mem=""),  # E: FINISH
    _row(690 * S, 3, 0, 4),  # C: FINISH
    _row(690 * S, 6, 0, 3, machine=6),  # F: FAIL -> run 670-690 on 6
    _row(700 * S, 1, 0, 2, machine=5),  # A: EVICT -> run 0 ends
    _row(700 * S, 4, 0, 5),  # D: KILL
    _row(710 * S, 1, 0, 0),  # A: resubmitted
    _row(720 * S, 1, 0, 1, machine=6, cpu="0.3", mem="0.4"),  # A: on 6, a new request (ends in
    # the next part)
]
PART1 = [
    _row(800 * S, 1, 0, 4, machine=6),  # A: FINISH -> run 1: 720-800 on 6
    _row(900 * S, 7, 0, 0),  # G: SUBMIT, never scheduled; the data end at 900 s
]
MACHINES = ["0,5,0,p,0.5,0.5", "0,6,0,p,0.5,0.25", "0,7,0,p,1,1", "0,8,0,p,,"]


def _write(folder: Path, name: str, rows: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / name, "wt") as fh:
        fh.write("\n".join(rows) + "\n")


@pytest.fixture
def src(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    _write(src / "task_events", "part-00000-of-00500.csv.gz", PART0)
    _write(src / "task_events", "part-00001-of-00500.csv.gz", PART1)
    _write(src / "machine_events", "part-00000-of-00001.csv.gz", MACHINES)
    return src


def test_hand_made_runs(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = convert_google_2011(src, out, progress=False)
    p = read_placements(out / "placements.parquet")
    assert list(p.columns) == [
        "job_id", "task_index", "run", "machine", "start_s", "end_s", "end_event", "censored",
        "cpu", "mem",
    ]  # fmt: skip
    rows = [tuple(r) for r in p.itertuples(index=False)]
    # each run's request is its SCHEDULE row's (an empty one taken as 0, counted)
    assert rows == [
        (1, 0, 0, "5", 600.0, 700.0, "evict", False, 0.1, 0.2),  # time 0 taken at 600 s
        (2, 0, 0, "7", 660.0, 900.0, "censored", True, 0.15, 0.2),  # ends at the data's end
        (6, 0, 0, "6", 670.0, 690.0, "fail", False, 0.0, 0.2),  # the SCHEDULE on 5: no run
        (1, 0, 1, "6", 720.0, 800.0, "finish", False, 0.3, 0.4),  # rescheduled: second run
    ]
    assert report["placements"] == {
        "schema": PLACEMENTS_SCHEMA_VERSION,
        "runs": 4,
        "censored_runs": 1,
        "tasks_with_runs": 3,
        "tasks_with_several_runs": 1,
        "machines_checked": True,
        "runs_with_empty_request": {"cpu": 1, "mem": 0},
        "skipped": {
            "task not in the tasks table": 1,
            "SCHEDULE without a machine": 1,
            "machine not in machine_events": 1,
            "SCHEDULE followed by another SCHEDULE (no end)": 1,
        },
    }
    assert json.loads((out / "conversion.json").read_text())["placements"] == report["placements"]
    # every run of a kept task is a placement or a skip: SCHEDULE rows = runs + skips
    t = pd.read_parquet(out / "tasks.parquet")
    assert t["attempts"].sum() == 4 + 2 + 1  # E (dropped) is not in the tasks table
    # a task's own request stays its first one (SUBMIT), whatever its runs requested
    assert t.loc[t.job_id == 1, ["cpu", "mem"]].values.tolist() == [[0.1, 0.2]]
    assert (5, 0) not in set(zip(t.job_id, t.task_index, strict=True))
    # the last run's span is the task's run_s when no attempt finished
    f = t[t.job_id == 6].iloc[0]
    b = t[t.job_id == 2].iloc[0]
    assert (f.end_state, f.run_s, b.end_state, b.run_s) == ("fail", 20.0, "censored", 240.0)
    meta = pq.read_schema(out / "placements.parquet").metadata
    assert meta[b"fairsim.table"] == b"placements"
    assert meta[b"fairsim.schema"] == str(PLACEMENTS_SCHEMA_VERSION).encode() == b"2"
    assert meta[b"fairsim.resources"] == b'["cpu", "mem"]'


def test_without_machine_events_every_run_is_written(src: Path, tmp_path: Path) -> None:
    for f in (src / "machine_events").iterdir():
        f.unlink()
    (src / "machine_events").rmdir()
    report = convert_google_2011(src, tmp_path / "out", progress=False)
    p = read_placements(tmp_path / "out")
    assert report["placements"]["machines_checked"] is False
    assert report["placements"]["skipped"]["machine not in machine_events"] == 0
    assert sorted(p["machine"]) == ["5", "6", "6", "7", "99"]


def _bad(tmp_path: Path, table: pa.Table) -> Path:
    path = tmp_path / "p.parquet"
    pq.write_table(table, path)
    return path


def test_read_placements_refuses_bad_tables(src: Path, tmp_path: Path) -> None:
    convert_google_2011(src, tmp_path / "out", progress=False)
    good = pq.read_table(tmp_path / "out" / "placements.parquet")
    with pytest.raises(TraceError, match=r"nowhere\.parquet: placements file not found$"):
        read_placements(tmp_path / "nowhere.parquet")
    with pytest.raises(TraceError, match=r"fairsim.table is 'tasks', expected 'placements'$"):
        read_placements(tmp_path / "out" / "tasks.parquet")
    old = good.replace_schema_metadata({"fairsim.table": "placements", "fairsim.schema": "0"})
    with pytest.raises(TraceError, match=r"p\.parquet: placements schema version '0'"):
        read_placements(_bad(tmp_path, old))
    dropped = good.drop_columns(["end_s"]).replace_schema_metadata(good.schema.metadata)
    with pytest.raises(TraceError, match=r"p\.parquet: column 'end_s' missing$"):
        read_placements(_bad(tmp_path, dropped))
    i = good.schema.get_field_index("run")
    cast = good.set_column(i, "run", good.column("run").cast(pa.int64()))
    with pytest.raises(TraceError, match=r"column 'run' is int64, expected int32$"):
        read_placements(_bad(tmp_path, cast.replace_schema_metadata(good.schema.metadata)))
    df = good.to_pandas()
    df.loc[0, "end_event"] = "done"
    write_placements(df, tmp_path / "p.parquet")
    with pytest.raises(TraceError, match=r"column 'end_event' has value 'done'$"):
        read_placements(tmp_path / "p.parquet")
    df = good.to_pandas()
    df.loc[1, "mem"] = -0.25
    write_placements(df, tmp_path / "p.parquet")
    with pytest.raises(TraceError, match=r"column 'mem' has value -0\.25 \(expected >= 0\)$"):
        read_placements(tmp_path / "p.parquet")


def test_cache_folder_of_another_placements_version_is_left_alone(
    src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key holds the placements table's version: a checkout of another version sharing the
    # cache converts into a folder of its own and never rewrites this one.
    import fairsim.traces.schema as schema

    trace = GoogleTrace(format="google-2011", path=str(src), cache_dir=str(tmp_path / "cache"))
    folder = converted_google(trace, None, progress=False)
    files = {f.name: f.read_bytes() for f in folder.iterdir()}
    monkeypatch.setattr(schema, "PLACEMENTS_SCHEMA_VERSION", 1)
    other = converted_google(trace, None, progress=False)
    assert other != folder and other.parent == folder.parent
    assert {f.name: f.read_bytes() for f in folder.iterdir()} == files
    monkeypatch.undo()
    assert converted_google(trace, None, progress=False) == folder


def test_incomplete_cache_folder_is_converted_again(src: Path, tmp_path: Path) -> None:
    trace = GoogleTrace(format="google-2011", path=str(src), cache_dir=str(tmp_path / "cache"))
    folder = converted_google(trace, None, progress=False)
    current = (folder / "placements.parquet").read_bytes()
    (folder / "placements.parquet").unlink()  # an interrupted copy by hand
    before = {f: (folder / f).read_bytes() for f in ("tasks.parquet", "servers.parquet")}
    assert converted_google(trace, None, progress=False) == folder
    assert (folder / "placements.parquet").read_bytes() == current
    assert {f: (folder / f).read_bytes() for f in before} == before
    # a placements table of version 1 (runs without their requests) is refused when read
    table = pq.read_table(folder / "placements.parquet").drop_columns(["cpu", "mem"])
    meta = {b"fairsim.table": b"placements", b"fairsim.schema": b"1"}
    pq.write_table(table.replace_schema_metadata(meta), folder / "placements.parquet")
    with pytest.raises(TraceError, match="placements schema version '1', expected '2'"):
        read_placements(folder)


# ------------------------------------------------------------------------------ real data


@pytest.mark.slow
def test_real_sample_placements(google_tasks: Path) -> None:
    folder = google_tasks.parent
    p = read_placements(folder / "placements.parquet")
    t = pd.read_parquet(google_tasks)
    rep = json.loads((folder / "conversion.json").read_text())["placements"]
    assert rep == {
        "schema": 2,
        "runs": 890_514,
        "censored_runs": 137_575,
        "tasks_with_runs": 573_599,
        "tasks_with_several_runs": 87_189,
        "machines_checked": True,
        "runs_with_empty_request": {"cpu": 0, "mem": 0},
        "skipped": {
            "task not in the tasks table": 0,
            "SCHEDULE without a machine": 0,
            "machine not in machine_events": 3,
            "SCHEDULE followed by another SCHEDULE (no end)": 0,
        },
    }
    assert len(p) == 890_514
    assert p["end_event"].value_counts().to_dict() == {
        "finish": 330_742, "evict": 219_591, "kill": 184_002, "censored": 137_575, "fail": 18_604,
    }  # fmt: skip
    # every placement's task is in the tasks table; runs + 3 skipped = SCHEDULE events
    keys = pd.MultiIndex.from_frame(t[["job_id", "task_index"]])
    assert pd.MultiIndex.from_frame(p[["job_id", "task_index"]]).isin(keys).all()
    assert int(t["attempts"].sum()) == 890_514 + 3
    servers = set(pd.read_parquet(folder / "servers.parquet")["server"])
    assert set(p["machine"]) <= servers
    assert (p["end_s"] >= p["start_s"]).all()
    assert p["start_s"].is_monotonic_increasing
    # the last run's span is run_s when no attempt finished (the converter's rule)
    last = p.sort_values(["job_id", "task_index", "run"]).drop_duplicates(
        ["job_id", "task_index"], keep="last"
    )
    j = last.merge(t, on=["job_id", "task_index"], suffixes=("_p", ""))
    unfinished = j[j["end_state"] != "finish"]
    assert len(unfinished) == 252_033
    np.testing.assert_allclose(
        unfinished["end_s"] - unfinished["start_s"], unfinished["run_s"], atol=1e-6
    )
    assert (unfinished["censored_p"] == unfinished["censored"]).all()
    # each run's request (its SCHEDULE row's) differs from its task's first one for 45,259 runs
    # of 37,330 tasks (docs/traces.md)
    runs = p.merge(t[["job_id", "task_index", "cpu", "mem"]], on=["job_id", "task_index"])
    other = (runs["cpu_x"] != runs["cpu_y"]) | (runs["mem_x"] != runs["mem_y"])
    assert int(other.sum()) == 45_259
    assert len(runs.loc[other, ["job_id", "task_index"]].drop_duplicates()) == 37_330
    # the 3 runs on machines machine_events never mentions: time-0 SCHEDULEs still running
    per_task = p.groupby(["job_id", "task_index"]).size()
    missing = t[(t["attempts"] > 0)].set_index(["job_id", "task_index"])["attempts"]
    short = missing[per_task.reindex(missing.index, fill_value=0) != missing]
    assert sorted(short.index) == [(2902878580, 1216), (2902878580, 2438), (4028922835, 542)]
