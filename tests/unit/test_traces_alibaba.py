"""Alibaba converters (v2017, v2018 official layout, v2018 spar sample, GPU v2023).

Real samples come from ``$FAIRSIM_SHARED/traces``; these tests fail (never skip) when it is
missing. The v2018 official-layout batch_task has no public sample, so it is tested on files
written here in the column order of the official ``cluster-trace-v2018/schema.txt``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from fairsim.cli import main
from fairsim.errors import TraceError
from fairsim.traces import alibaba as ali
from fairsim.traces.alibaba import convert_alibaba
from fairsim.traces.paths import shared_dir
from fairsim.traces.schema import resources_of


def _sample(name: str) -> Path:
    path = shared_dir() / "traces" / name
    assert path.is_dir(), f"real sample missing: {path}"
    return path


def _check_accounting(report: dict) -> None:
    for table, read in report["rows_read"].items():
        assert report["rows_used"][table] + sum(report["skipped"][table].values()) == read


@pytest.fixture(scope="module")
def ali2017(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("ali2017")
    return convert_alibaba("alibaba-2017", _sample("alibaba-2017"), out), out


def test_2017_real_sample(ali2017: tuple[dict, Path]) -> None:
    report, out = ali2017
    _check_accounting(report)
    assert report["rows_read"] == {"batch_task": 80_553, "server_event": 1_352}
    assert report["header_row"] == {"batch_task": True, "server_event": False}
    assert report["skipped"]["batch_task"][ali.R_MISSING_REQ] == 9_017
    assert report["rows_used"]["server_event"] == 1_313
    assert report["skipped"]["server_event"]["softerror event (capacity unchanged)"] == 39
    tasks = pq.read_table(out / "tasks.parquet").to_pandas()
    assert len(tasks) == report["tasks"] == 71_536
    # one row per task, instances kept as a count (11.9 M in the table incl. skipped rows)
    assert tasks["instances"].sum() == report["instances"] == 11_059_704
    assert tasks["submit_s"].is_monotonic_increasing and (tasks["submit_s"] >= 0).all()
    assert set(tasks["end_state"]) == {"finish", "fail", "censored"}
    assert (tasks["run_s"] >= 0).all()
    servers = pq.read_table(out / "servers.parquet").to_pandas()
    assert len(servers) == 1_313
    assert servers["cpu"].max() == 1.0 and servers["mem"].max() == 1.0
    # 50 = half a core on a 64-core machine
    first = tasks[(tasks["job_id"] == 3) & (tasks["task_index"] == 4)].iloc[0]
    assert first["cpu"] == pytest.approx(0.5 / 64)
    assert first["instances"] == 15_740 and first["run_s"] == 65.0
    assert json.loads((out / "conversion.json").read_text())["rows_read"] == report["rows_read"]


def test_2017_without_header_gives_the_same_tasks(
    ali2017: tuple[dict, Path], tmp_path: Path
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    with gzip.open(_sample("alibaba-2017") / "batch_task.csv.gz", "rt") as fh:
        lines = fh.read().splitlines(keepends=True)
    (src / "batch_task.csv").write_text("".join(lines[1:]))
    (src / "server_event.csv").write_bytes(
        (_sample("alibaba-2017") / "server_event.csv").read_bytes()
    )
    report = convert_alibaba("alibaba-2017", src, tmp_path / "out")
    assert report["header_row"]["batch_task"] is False
    assert report["rows_read"] == ali2017[0]["rows_read"]
    a = pq.read_table(tmp_path / "out" / "tasks.parquet")
    b = pq.read_table(ali2017[1] / "tasks.parquet")
    assert a.equals(b)


def test_2017_bad_rows_are_counted(tmp_path: Path) -> None:
    rows = [
        "10,20,1,1,2,Terminated,100,0.5",  # used
        "10,20,1,2,-3,Terminated,100,0.5",  # negative instances
        "10,20,1,3,0,Terminated,100,0.5",  # zero instances
        "10,20,1,4,1,Exploded,100,0.5",  # unknown status
        "30,20,1,5,1,Terminated,100,0.5",  # end before create
        "10,20,1,1,1,Terminated,100,0.5",  # duplicate task id
        "10,20,1,6,1,Terminated,abc,0.5",  # unparseable
        "10,20,1,7,1,Terminated",  # wrong column count
        "-5,0,2,8,4,Running,50,0.1",  # censored, submitted before the window
        "40,50,2,9,1,Waiting,50,0.1",  # unscheduled
        "10,20,1,10,1,Terminated,,",  # missing request
        "10,20,1,11,1,Failed,-1,0.1",  # negative request
        "10,,3,12,1,Terminated,100,0.5",  # no end time: right-censored, not rejected
    ]
    (tmp_path / "batch_task.csv").write_text("\n".join(rows) + "\n")
    report = convert_alibaba("alibaba-2017", tmp_path, tmp_path / "out")
    _check_accounting(report)
    sk = report["skipped"]["batch_task"]
    assert report["rows_read"]["batch_task"] == 13
    assert report["rows_used"]["batch_task"] == 4
    for reason in (
        ali.R_NEG_INST, ali.R_ZERO_INST, ali.R_BAD_STATUS, ali.R_END_BEFORE_START,
        ali.R_DUP_TASK, ali.R_UNPARSEABLE, ali.R_MALFORMED, ali.R_MISSING_REQ, ali.R_NEG_REQ,
    ):  # fmt: skip
        assert sk[reason] == 1, reason
    assert "servers.parquet" not in {p.name for p in (tmp_path / "out").iterdir()}
    t = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas().set_index("task_index")
    assert t.loc[8, "submit_s"] == 0.0 and t.loc[8, "end_state"] == "censored"
    assert t.loc[8, "run_s"] == 55.0  # runs to the latest end time seen (50) from -5
    assert t.loc[8, "instances"] == 4 and t.loc[8, "user"] == "job-2"
    assert np.isnan(t.loc[9, "run_s"]) and t.loc[9, "end_state"] == "unscheduled"
    assert t.loc[12, "end_state"] == "censored" and t.loc[12, "run_s"] == 40.0  # 50 - 10
    assert list(t.sort_index()["censored"]) == [False, True, False, True]
    assert t.loc[1, "cpu"] == pytest.approx(1 / 64)  # default v2017 machine: 64 cores


def test_2017_nan_and_na_are_unparseable_not_missing(tmp_path: Path) -> None:
    """Only an empty field is missing (``fairsim.traces.io.NULL_VALUES``). pyarrow's default
    list read ``nan`` and ``NA`` as missing: a ``nan`` end time made a finished task
    right-censored (run to the latest end seen) and an ``NA`` request was counted as a missing
    request; both are unparseable fields now."""
    rows = [
        "10,20,1,1,2,Terminated,100,0.5",  # used
        "10,nan,1,2,1,Terminated,100,0.5",  # before: censored, run_s 10
        "10,20,1,3,1,Terminated,NA,0.5",  # before: missing cpu or mem request
        "10,NULL,1,4,1,Terminated,100,0.5",  # before: censored
        "10,,1,5,1,Terminated,100,0.5",  # empty end: right-censored, as documented
        "10,20,1,6,1,Terminated,100,0.5",  # used
        "10,20,1,7,1,Terminated,100,0.5",  # used
    ]
    (tmp_path / "batch_task.csv").write_text("\n".join(rows) + "\n")
    report = convert_alibaba("alibaba-2017", tmp_path, tmp_path / "out")
    _check_accounting(report)
    assert report["rows_used"]["batch_task"] == 4
    skipped = {k: v for k, v in report["skipped"]["batch_task"].items() if v}
    assert skipped == {ali.R_UNPARSEABLE: 3}
    t = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas().set_index("task_index")
    assert sorted(t.index) == [1, 5, 6, 7] and t.loc[5, "end_state"] == "censored"


def test_2017_out_of_range_integers_and_duplicates_of_rejected_rows(tmp_path: Path) -> None:
    """A create time of 1e20 wrapped to -2**63 in the int64 cast (the task read as submitted at
    0, run 0, finished): unparseable now. A task id repeated after a row that is itself
    rejected (missing request) was rejected as a duplicate, and the task lost: duplicates are
    judged among the usable rows, and the window ends at the latest end of a row used."""
    rows = [
        "100,200,1,1,1,Terminated,50,0.01",
        "100000000000000000000,100000000000000000100,1,2,1,Terminated,50,0.01",
        "100,9007199254740993,1,4,1,Terminated,50,0.01",  # beyond 2**53: not exact in float64
        "100,250,1,3,1,Terminated,,0.01",  # missing request
        "100,300,1,3,1,Terminated,50,0.01",  # before: duplicate task id, task 3 lost
        "100,400,1,3,1,Terminated,50,0.01",  # a duplicate of a row used
        "100,150,1,5,1,Terminated,50,0.01",
        "100,150,1,6,1,Terminated,50,0.01",
        "100,150,1,7,1,Terminated,50,0.01",
    ]
    (tmp_path / "batch_task.csv").write_text("\n".join(rows) + "\n")
    report = convert_alibaba("alibaba-2017", tmp_path, tmp_path / "out")
    _check_accounting(report)
    skipped = {k: v for k, v in report["skipped"]["batch_task"].items() if v}
    assert skipped == {ali.R_UNPARSEABLE: 2, ali.R_MISSING_REQ: 1, ali.R_DUP_TASK: 1}
    t = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas().set_index("task_index")
    assert sorted(t.index) == [1, 3, 5, 6, 7]
    assert t.loc[3, "run_s"] == 200.0 and t.loc[3, "end_state"] == "finish"
    assert report["window_end_s"] == 300.0  # not 400, the duplicate's


def test_2018_job_names_beyond_int64_are_unparseable(tmp_path: Path) -> None:
    """``j_99999999999999999999`` became job -2**63 (user ``job--9223372036854775808``), run
    as finished; a job number of more than 18 digits is an unparseable job name now, and
    leading zeros still read (``j_007`` is job 7)."""
    rows = [
        "M1,1,j_1,1,Terminated,100,150,100,0.5",
        "M1,1,j_99999999999999999999,1,Terminated,100,200,50,0.5",
        "M1,1,j_007,1,Terminated,100,150,100,0.5",
        "M1,1,j_123456789012345678,1,Terminated,100,150,100,0.5",  # 18 digits: fits
    ]
    _write_gz(tmp_path / "batch_task.csv.gz", rows)
    report = convert_alibaba("alibaba-2018", tmp_path, tmp_path / "out")
    _check_accounting(report)
    assert report["skipped"]["batch_task"][ali.R_BAD_JOB] == 1
    t = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas()
    assert sorted(t["job_id"]) == [1, 7, 123456789012345678]


def test_2018_spar_real_sample(tmp_path: Path) -> None:
    report = convert_alibaba("alibaba-2018-spar", _sample("alibaba-2018/spar-derived"), tmp_path)
    _check_accounting(report)
    assert report["rows_read"] == {"sample_tasks": 67_634, "machine_meta": 17_592}
    assert report["rows_used"]["machine_meta"] == 4_034
    tasks = pq.read_table(tmp_path / "tasks.parquet").to_pandas()
    assert report["instances"] == tasks["instances"].sum()
    assert (
        report["rows_used"]["sample_tasks"]
        + sum(v for k, v in report["skipped"]["sample_tasks"].items())
        == 67_634
    )
    # every parent is a task of the same job
    with_parents = tasks[tasks["parents"].notna()]
    assert len(with_parents) == report["dag_tasks_with_parents"] > 30_000
    keys = set(zip(tasks["job_id"], tasks["task_index"], strict=True))
    for job, parents in zip(with_parents["job_id"], with_parents["parents"], strict=True):
        assert all((job, int(p)) in keys for p in parents.split(","))
    row = tasks[(tasks["job_id"] == 1446403) & (tasks["task_index"] == 23)].iloc[0]
    assert row["parents"] == "22" and row["instances"] == 9
    assert row["cpu"] == pytest.approx(0.5 / 96) and row["mem"] == pytest.approx(0.003)
    servers = pq.read_table(tmp_path / "servers.parquet").to_pandas()
    assert len(servers) == 4_034 and (servers[["cpu", "mem"]] == 1.0).all().all()


def _write_gz(path: Path, rows: list[str]) -> None:
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(rows) + "\n")


def test_2018_official_layout_with_dag_errors(tmp_path: Path) -> None:
    # task_name, instance_num, job_name, task_type, status, start_time, end_time, plan_cpu,
    # plan_mem (official cluster-trace-v2018 schema.txt order)
    rows = [
        "M1,4,j_1,1,Terminated,100,150,100,0.5",
        "M2,2,j_1,1,Terminated,100,160,50,0.5",
        "R3_1_2,1,j_1,1,Terminated,160,200,100,1.0",
        "task_abc==,3,j_2,1,Running,120,0,100,0.5",  # independent, censored
        "M1_2,1,j_3,1,Terminated,100,150,100,0.5",  # cycle 1 <-> 2
        "M2_1,1,j_3,1,Terminated,100,150,100,0.5",
        "M1_9,1,j_4,1,Terminated,100,150,100,0.5",  # missing parent 9
        "M1,1,j_5,1,Terminated,100,150,100,0.5",  # duplicate number 1
        "R1,1,j_5,1,Terminated,100,150,100,0.5",
        "MergeTask,1,j_6,1,Terminated,100,150,100,0.5",  # unparseable name
        "M1,-2,j_7,1,Terminated,100,150,100,0.5",  # negative instance count
        "M1,1,j_8,1,Terminated,100,150",  # wrong column count
        "M1,1,job8,1,Terminated,100,150,100,0.5",  # bad job name
    ]
    _write_gz(tmp_path / "batch_task.csv.gz", rows)
    _write_gz(
        tmp_path / "machine_meta.csv.gz",
        ["m_1,0,1,1,96,100,USING", "m_1,50,1,1,96,100,USING", "m_2,0,1,1,48,50,USING"],
    )
    report = convert_alibaba("alibaba-2018", tmp_path, tmp_path / "out")
    _check_accounting(report)
    sk = report["skipped"]["batch_task"]
    assert report["rows_used"]["batch_task"] == 4
    assert sk["dependency cycle in job"] == 2
    assert sk["missing parent task in job"] == 1
    assert sk["duplicate task number in job"] == 2
    assert sk["unparseable DAG task name"] == 1
    assert sk[ali.R_NEG_INST] == 1 and sk[ali.R_MALFORMED] == 1 and sk[ali.R_BAD_JOB] == 1
    assert report["skipped"]["machine_meta"][ali.R_SUPERSEDED] == 1
    t = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas()
    j1 = t[t["job_id"] == 1].set_index("task_index")
    assert j1.loc[3, "parents"] == "1,2" and pd.isna(j1.loc[1, "parents"])
    assert j1.loc[1, "instances"] == 4 and j1.loc[3, "run_s"] == 40.0
    assert j1.loc[1, "cpu"] == pytest.approx(1 / 96) and j1.loc[1, "mem"] == pytest.approx(0.005)
    j2 = t[t["job_id"] == 2].iloc[0]
    assert j2["task_index"] == 1 and j2["end_state"] == "censored" and j2["run_s"] == 80.0
    servers = pq.read_table(tmp_path / "out" / "servers.parquet").to_pandas()
    assert servers.set_index("server")["cpu"].to_dict() == {"m_1": 1.0, "m_2": 0.5}


def test_gpu_2023_real_sample(tmp_path: Path) -> None:
    report = convert_alibaba("alibaba-gpu-2023", _sample("alibaba-gpu-2023"), tmp_path)
    _check_accounting(report)
    assert report["rows_read"] == {"nodes": 1_523, "pods": 8_152}
    assert report["rows_used"] == {"nodes": 1_523, "pods": 8_152}
    table = pq.read_table(tmp_path / "tasks.parquet")
    assert resources_of(table.schema) == ("cpu", "mem", "gpu")
    tasks = table.to_pandas()
    assert report["end_states"] == {
        "censored": 5193,
        "fail": 1870,
        "finish": 192,
        "unscheduled": 897,
    }
    assert (tasks["gpu"] == 0).sum() == 1_088
    servers = pq.read_table(tmp_path / "servers.parquet").to_pandas()
    assert len(servers) == 1_523
    for r in ("cpu", "mem", "gpu"):
        assert servers[r].max() == 1.0
        assert (tasks[r] <= 1.0).all()
    pod = tasks[tasks["user"] == "openb-pod-0001"].iloc[0]  # 6000 milli-CPU, 0.46 of one GPU
    assert pod["cpu"] == pytest.approx(6000 / 128000)
    assert pod["gpu"] == pytest.approx(0.46 / 8)
    assert pod["run_s"] == 12902960 - 427061
    # the tier columns: the pods' QoS class as the table gives it, no priority
    assert tasks["qos"].value_counts().to_dict() == {
        "LS": 4_647, "BE": 3_398, "Burstable": 100, "Guaranteed": 7,
    }  # fmt: skip
    assert tasks["priority"].isna().all() and tasks["scheduling_class"].isna().all()


def test_cli_convert_and_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    src = _sample("alibaba-gpu-2023")
    assert main(["trace", "convert", "alibaba-gpu-2023", str(src), "--out", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["rows_read"]["pods"] == 8_152
    assert main(["trace", "convert", "alibaba-2017", str(tmp_path / "nope"), "--out", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fairsim: error:") and err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        main(["trace", "convert", "alibaba-1999", str(src), "--out", str(tmp_path)])
    assert exc.value.code == 2
    with pytest.raises(TraceError, match="unknown format"):
        convert_alibaba("alibaba-1999", src, tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(TraceError, match="batch_task"):
        convert_alibaba("alibaba-2018", tmp_path / "empty", tmp_path / "o")


def test_truncated_gzip_and_all_malformed(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    data = gzip.compress(b"6459,6524,3,4,15740,Terminated,50,0.007\n" * 1000)
    (bad / "batch_task.csv.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceError, match="batch_task") as exc:
        convert_alibaba("alibaba-2017", bad, tmp_path / "o1")
    assert "\n" not in str(exc.value)
    short = tmp_path / "short"
    short.mkdir()
    (short / "batch_task.csv").write_text("1,2,3\n4,5,6\n")
    with pytest.raises(
        TraceError,
        match=r"^batch_task: 2 of 2 rows \(100 %\) are malformed or unparseable, more than the "
        r"50 % allowed \(bad_row_threshold\); first bad row: batch_task\.csv line 1 "
        r"\('1,2,3'\): 3 columns, expected 8$",
    ):
        convert_alibaba("alibaba-2017", short, tmp_path / "o2")
    assert not (tmp_path / "o2").exists()
    # the threshold is a parameter: 1.0 accepts anything, and every skipped row is reported
    report = convert_alibaba("alibaba-2017", short, tmp_path / "o3", bad_row_threshold=1.0)
    assert report["skipped"]["batch_task"][ali.R_MALFORMED] == 2 and report["tasks"] == 0


def test_gpu_tables_with_wrong_columns_are_refused(tmp_path: Path) -> None:
    src = tmp_path / "gpu"
    src.mkdir()
    (src / "openb_node_list_all_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,786432,8,V100\n"
    )
    # the pod table of another layout: 3 columns instead of 11
    (src / "openb_pod_list_default.csv").write_text("name,cpu,gpu\np1,1000,1\np2,2000,0\n")
    with pytest.raises(
        TraceError,
        match=r"^pods: 2 of 2 rows \(100 %\) are malformed or unparseable, more than the 50 % "
        r"allowed \(bad_row_threshold\); first bad row: openb_pod_list_default\.csv line 2 "
        r"\('p1,1000,1'\): 3 columns, expected 11$",
    ):
        convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    # right column count, wrong contents (a node table given as the pod table): unparseable
    (src / "openb_pod_list_default.csv").write_text(
        "name,a,b,c,d,e,f,g,h,i,j\n" + "p1,x,y,z,w,v,u,t,s,r,q\n" * 3
    )
    with pytest.raises(TraceError, match=r"^pods: 3 of 3 rows .* line 2 .*: unparseable field$"):
        convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
    (src / "openb_node_list_all_node.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\n")
    with pytest.raises(TraceError, match=r"^nodes: no data rows in .*openb_node_list_all_node"):
        convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
