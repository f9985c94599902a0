"""Alibaba converters: numeric bounds of the input fields, the window of the rows used, messages
and the normalisation strings (``docs/traces-alibaba.md``).

Every input here is written by the test; the real samples are covered in
``test_traces_alibaba.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from fairsim.cli import main
from fairsim.errors import TraceError
from fairsim.traces import alibaba as ali
from fairsim.traces.alibaba import convert_alibaba

BIG = "9007199254740993"  # 2**53 + 1: not exact in float64
GPU_NODES = "sn,cpu_milli,memory_mib,gpu,model\n"
GPU_PODS = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,"
    "creation_time,deletion_time,scheduled_time\n"
)


def _skipped(report: dict, table: str) -> dict[str, int]:
    for name, read in report["rows_read"].items():
        assert report["rows_used"][name] + sum(report["skipped"][name].values()) == read
    return {k: v for k, v in report["skipped"][table].items() if v}


def _gpu(src: Path, nodes: list[str], pods: list[str]) -> Path:
    src.mkdir()
    (src / "openb_node_list_all_node.csv").write_text(GPU_NODES + "".join(r + "\n" for r in nodes))
    (src / "openb_pod_list_default.csv").write_text(GPU_PODS + "".join(r + "\n" for r in pods))
    return src


GOOD_NODES = ["n1,96000,786432,8,V100", "n2,128000,1048576,0,"]
GOOD_PODS = [f"p{i},1000,1024,1,500,,LS,Succeeded,0,100,10" for i in range(8)]


# --------------------------------------------------------------------------- D1: integer fields


@pytest.mark.parametrize(
    "pod",
    [
        f"x,1000,1024,1,500,,LS,Succeeded,0,{BIG},10",  # deletion_time
        "x,1000,1024,1,500,,LS,Succeeded,0,100000000000000000000,10",  # before: run_s 1e20
        f"x,1000,1024,1,500,,LS,Succeeded,{BIG},{BIG},{BIG}",  # creation_time
        f"x,1000,1024,1,500,,LS,Succeeded,0,100,-{BIG}",  # scheduled_time
        f"x,1000,1024,{BIG},500,,LS,Succeeded,0,100,10",  # before: gpu 1.1e15 GPUs
        f"x,1000,1024,1,{BIG},,LS,Succeeded,0,100,10",  # gpu_milli
        f"x,{BIG},1024,1,500,,LS,Succeeded,0,100,10",  # cpu_milli
        "x,1000,1e300,1,500,,LS,Succeeded,0,100,10",  # memory_mib
        "x,1000.5,1024,1,500,,LS,Succeeded,0,100,10",  # a fraction of a milli-CPU
    ],
)
def test_gpu_pod_integer_fields_beyond_2_53_are_unparseable(tmp_path: Path, pod: str) -> None:
    """Before, GPU pods read every number as a float: a deletion time of 1e20 gave a run of
    1e20 s (and a window ending there), ``num_gpu = 2**53 + 1`` a demand of 1.1e15 GPUs."""
    src = _gpu(tmp_path / "src", GOOD_NODES, [*GOOD_PODS, pod])
    report = convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
    assert _skipped(report, "pods") == {ali.R_UNPARSEABLE: 1}
    assert report["rows_used"]["pods"] == 8 and report["window_s"] == [0.0, 100.0]
    tasks = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas()
    assert (tasks["run_s"] == 90.0).all() and (tasks["gpu"] == 0.5 / 8).all()


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (f"{BIG},j_1,M1,10,50.0,0.3,1", "arrival"),
        (f"0,j_1,M1,{BIG},50.0,0.3,1", "duration"),
        ("0,j_1,M1,1e20,50.0,0.3,1", "duration"),
        ("0,j_1,M1,10.5,50.0,0.3,1", "duration"),
    ],
)
def test_spar_times_beyond_2_53_are_unparseable(tmp_path: Path, row: str, field: str) -> None:
    """spar arrival offsets and durations are whole seconds (integer fields); before, a
    duration of 1e20 was a run time of 1e20 s and the window's end."""
    src = tmp_path / "src"
    src.mkdir()
    rows = [f"0,j_{i + 2},M1,10,50.0,0.3,1" for i in range(4)] + [row]
    (src / "sample_tasks.csv").write_text("\n".join(rows) + "\n")
    report = convert_alibaba("alibaba-2018-spar", src, tmp_path / "out")
    assert _skipped(report, "sample_tasks") == {ali.R_UNPARSEABLE: 1}, field
    assert report["window_s"] == [0.0, 10.0]


# --------------------------------------------------------------------------- D2: capacities


def test_gpu_node_capacity_out_of_range_is_no_divisor(tmp_path: Path) -> None:
    """Before, a node of 1e300 milli-CPU became the cpu divisor ("cpu_milli / 1e+300") and every
    server's cpu ~1e-296; its integer capacity fields follow the 2**53 rule now."""
    nodes = [*GOOD_NODES, "n3,96000,786432,8,V100", "n4,96000,786432,8,V100"]
    nodes += ["bad,1e300,262144,0,", f"bad2,1000,{BIG},0,", f"bad3,1000,1024,{BIG},"]
    src = _gpu(tmp_path / "src", nodes, GOOD_PODS)
    report = convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
    assert _skipped(report, "nodes") == {ali.R_UNPARSEABLE: 3}
    assert report["normalisation"]["cpu"] == "cpu_milli / 128000.0"
    servers = pq.read_table(tmp_path / "out" / "servers.parquet").to_pandas()
    assert servers.set_index("server")["cpu"].to_dict() == {
        "n1": 0.75, "n2": 1.0, "n3": 0.75, "n4": 0.75,
    }  # fmt: skip


def test_2017_server_capacity_out_of_range_is_skipped(tmp_path: Path) -> None:
    """A server_event ``add`` with 1e300 cores (a count: the 2**53 rule) or a normalised memory
    above 1 (v2017 normalises memory to 0..1) is a skipped row, not the divisor."""
    (tmp_path / "batch_task.csv").write_text("10,20,1,1,1,Terminated,100,0.5\n")
    (tmp_path / "server_event.csv").write_text(
        "0,1,add,,64,0.69,1\n"
        "0,2,add,,64,1.0,1\n"
        "0,9999,add,,1e300,0.69,1\n"  # before: "plan cpu / 100 / 1e+300 cores"
        "0,9998,add,,64,1e300,1\n"  # before: "normalised memory / 1e+300"
        "0,9997,add,,64,1.5,1\n"  # above the documented 0..1
    )
    report = convert_alibaba("alibaba-2017", tmp_path, tmp_path / "out")
    assert _skipped(report, "server_event") == {ali.R_UNPARSEABLE: 1, ali.R_MEM_RANGE: 2}
    assert report["normalisation"]["cpu"] == "plan cpu / 100 / 64.0 cores"
    assert report["normalisation"]["mem"] == "normalised memory / 1.0"
    servers = pq.read_table(tmp_path / "out" / "servers.parquet").to_pandas()
    assert servers.set_index("server")["mem"].to_dict() == {"1": 0.69, "2": 1.0}


def test_2018_machine_capacity_out_of_range_is_skipped(tmp_path: Path) -> None:
    """machine_meta cpu_num is a count (the 2**53 rule), mem_size normalised to 0..100."""
    src = tmp_path / "spar"
    src.mkdir()
    (src / "sample_tasks.csv").write_text("0,j_1,M1,10,50.0,0.3,1\n")
    (src / "machine_meta.csv").write_text(
        "m_1,0,1,1,96,100,USING\n"
        "m_2,0,1,1,1e300,100,USING\n"
        "m_3,0,1,1,96,1e300,USING\n"
        "m_4,0,1,1,96,100.5,USING\n"
        "m_5,0,1,1,96.5,100,USING\n"  # not a whole number of cores
    )
    report = convert_alibaba("alibaba-2018-spar", src, tmp_path / "out")
    assert _skipped(report, "machine_meta") == {ali.R_UNPARSEABLE: 2, ali.R_MEM_RANGE: 2}
    assert report["normalisation"]["cpu"] == "plan_cpu / 100 / 96.0 cores"
    assert report["normalisation"]["mem"] == "plan_mem / 100.0"


def test_task_requests_out_of_range_are_skipped(tmp_path: Path) -> None:
    """A CPU request (100 = 1 core; a fraction allowed) of 2**53 or more is unparseable, a
    normalised memory request above the format's top (v2017 1, v2018 100) out of range."""
    (tmp_path / "batch_task.csv").write_text(
        "10,20,1,1,1,Terminated,100,0.5\n"
        "10,20,1,2,1,Terminated,12.5,0.5\n"  # a fraction of a hundredth: kept
        "10,20,1,3,1,Terminated,1e300,0.5\n"
        "10,20,1,4,1,Terminated,100,1e300\n"
        "10,20,1,5,1,Terminated,100,1.01\n"
    )
    report = convert_alibaba("alibaba-2017", tmp_path, tmp_path / "o17")
    assert _skipped(report, "batch_task") == {ali.R_UNPARSEABLE: 1, ali.R_MEM_RANGE: 2}
    spar = tmp_path / "spar"
    spar.mkdir()
    (spar / "sample_tasks.csv").write_text(
        "0,j_1,M1,10,50.0,0.3,1\n"
        "0,j_2,M1,10,1e300,0.3,1\n"
        "0,j_3,M1,10,50.0,1e300,1\n"
        "0,j_4,M1,10,50.0,100.0,1\n"  # the top of 0..100: kept
    )
    report = convert_alibaba("alibaba-2018-spar", spar, tmp_path / "o18")
    assert _skipped(report, "sample_tasks") == {ali.R_UNPARSEABLE: 1, ali.R_MEM_RANGE: 1}
    assert report["rows_used"]["sample_tasks"] == 2


# --------------------------------------------------------------------------- D3: the window


def test_2018_window_and_censored_runs_come_from_rows_used(tmp_path: Path) -> None:
    """Job j_9 is a dependency cycle: its rows are skipped, but their end time of 9e9 was the
    window's end and the censored j_5's run time (9e9 - 100) before; now 200 and 100."""
    rows = [
        "M1,1,j_1,1,Terminated,100,200,50,0.3",
        "R1,1,j_5,1,Running,100,,50,0.3",  # right-censored: runs to the window's end
        "M1_2,1,j_9,1,Terminated,100,9000000000,50,0.3",  # cycle 1 <-> 2
        "M2_1,1,j_9,1,Terminated,100,9000000000,50,0.3",
    ]
    (tmp_path / "batch_task.csv").write_text("\n".join(rows) + "\n")
    report = convert_alibaba("alibaba-2018", tmp_path, tmp_path / "out")
    assert _skipped(report, "batch_task") == {"dependency cycle in job": 2}
    assert report["window_s"] == [0.0, 200.0]
    t = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas().set_index("job_id")
    assert t.loc[5, "end_state"] == "censored" and t.loc[5, "run_s"] == 100.0
    spar = tmp_path / "spar"
    spar.mkdir()
    (spar / "sample_tasks.csv").write_text(
        "0,j_1,M1,200,50.0,0.3,1\n0,j_9,M1_2,9000,50.0,0.3,1\n0,j_9,M2_1,9000,50.0,0.3,1\n"
    )
    report = convert_alibaba("alibaba-2018-spar", spar, tmp_path / "o_spar")
    assert _skipped(report, "sample_tasks") == {"dependency cycle in job": 2}
    assert report["window_s"] == [0.0, 200.0]  # before: 9000


def test_gpu_window_ignores_pods_that_end_before_they_start(tmp_path: Path) -> None:
    """A finished pod deleted before it was scheduled is skipped; its deletion time was the
    window's end, and the run time of every right-censored pod, before."""
    pods = [
        *GOOD_PODS[:3],
        "c,1000,1024,1,500,,LS,Running,0,,10",  # right-censored: runs to the window's end
        "x,1000,1024,1,500,,LS,Succeeded,0,9000,9500",
    ]
    src = _gpu(tmp_path / "src", GOOD_NODES, pods)
    report = convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
    assert _skipped(report, "pods") == {ali.R_END_BEFORE_START: 1}
    assert report["window_s"] == [0.0, 100.0]
    t = pq.read_table(tmp_path / "out" / "tasks.parquet").to_pandas().set_index("user")
    assert t.loc["c", "end_state"] == "censored" and t.loc["c", "run_s"] == 90.0


# --------------------------------------------------------------------------- D6: messages


def test_errors_name_the_file_and_line(tmp_path: Path) -> None:
    """Read errors named the table (``pods: empty file (no rows)``); they name the file now, as
    Google's do, and the line of a row that is not UTF-8."""
    src = _gpu(tmp_path / "src", GOOD_NODES, GOOD_PODS)
    pods = src / "openb_pod_list_default.csv"
    pods.write_bytes(b"")
    with pytest.raises(TraceError, match=r"^openb_pod_list_default\.csv: empty file \(no rows\)$"):
        convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
    good = (GPU_PODS + GOOD_PODS[0] + "\n").encode()
    for bad_row in (b"p\xe9,1000,1024,1,500,,LS,Succeeded,0,100,10\n", b"p\xe9,1,2\n"):
        pods.write_bytes(good + bad_row)
        with pytest.raises(
            TraceError,
            match=r"^openb_pod_list_default\.csv line 3: not UTF-8 text \(a row holds other "
            r"bytes\)$",
        ):
            convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
    (tmp_path / "batch_task.csv.gz").write_bytes(b"")
    with pytest.raises(TraceError, match=r"^batch_task\.csv\.gz: empty file"):
        convert_alibaba("alibaba-2017", tmp_path, tmp_path / "o17")


def test_spar_negative_arrival_has_its_own_reason(tmp_path: Path) -> None:
    """A negative arrival offset was counted as ``end time before start time``."""
    rows = [f"0,j_{i},M1,100,50.0,0.3,1" for i in range(1, 5)]
    rows += ["-10,j_84,M1,100,50.0,0.3,1", "0,j_85,M1,-5,50.0,0.3,1"]
    (tmp_path / "sample_tasks.csv").write_text("\n".join(rows) + "\n")
    report = convert_alibaba("alibaba-2018-spar", tmp_path, tmp_path / "out")
    assert _skipped(report, "sample_tasks") == {
        ali.R_NEG_ARRIVAL: 1, ali.R_END_BEFORE_START: 1,
    }  # fmt: skip
    assert ali.R_NEG_ARRIVAL == "negative arrival offset"


# --------------------------------------------------------------------------- D7: normalisation


def test_normalisation_divisors_are_exact(tmp_path: Path) -> None:
    """``conversion.json`` is read by programs: its divisors were rounded by ``:g``
    (``memory_mib / 1.04858e+06`` for 1048576); they are the exact floats now."""
    nodes = ["n1,96000,1048577,8,V100", "n2,128000,1048576,0,"]
    src = _gpu(tmp_path / "src", nodes, GOOD_PODS)
    convert_alibaba("alibaba-gpu-2023", src, tmp_path / "out")
    norm = json.loads((tmp_path / "out" / "conversion.json").read_text())["normalisation"]
    assert norm["cpu"] == "cpu_milli / 128000.0"
    assert norm["mem"] == "memory_mib / 1048577.0"
    assert norm["gpu"] == "num_gpu * gpu_milli / 1000 / 8.0"
    assert float(norm["mem"].rsplit("/ ", 1)[1]) == 1048577
    (tmp_path / "batch_task.csv").write_text("10,20,1,1,1,Terminated,100,0.5\n")
    (tmp_path / "server_event.csv").write_text("0,1,add,,64,0.6900000000000001,1\n")
    report = convert_alibaba("alibaba-2017", tmp_path, tmp_path / "o17")
    assert report["normalisation"]["cpu"] == "plan cpu / 100 / 64.0 cores"
    assert report["normalisation"]["mem"] == "normalised memory / 0.6900000000000001"


def test_convert_refuses_an_output_inside_the_source(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``trace check --json`` refused a path inside SRC, ``trace convert --out`` wrote there (a
    new folder): refused now with the same one-line message, before any work."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "sample_tasks.csv").write_text("0,j_1,M1,10,50.0,0.3,1\n")
    monkeypatch.chdir(tmp_path)
    for out in ("src/task_events/sub", str(src / "out")):
        code = main(["trace", "convert", "alibaba-2018-spar", "src", "--out", out, "--no-progress"])
        assert code == 2
        err = capsys.readouterr().err
        assert err == (
            f"fairsim: error: --out: refusing to write {out!r}: it lies inside the input folder "
            f"{str(src)!r}\n"
        )
    assert sorted(p.name for p in src.iterdir()) == ["sample_tasks.csv"]
    assert (
        main(["trace", "convert", "alibaba-2018-spar", "src", "--out", "o", "--no-progress"]) == 0
    )


def test_synth_raw_refuses_an_output_inside_the_source(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``trace synth --raw google-2011 --src SRC --out SRC/sub`` wrote a new folder inside the
    trace it resamples; refused now as ``trace convert`` refuses it, before any work."""
    src = tmp_path / "g"
    (src / "task_events").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    argv = ["trace", "synth", "--raw", "google-2011", "--src", "g", "--tasks", "10"]
    assert main([*argv, "--out", "g/sub", "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        "fairsim: error: --out: refusing to write 'g/sub': it lies inside the input folder "
        f"{str(src)!r}\n"
    )
    assert sorted(p.name for p in src.iterdir()) == ["task_events"]
