"""Alibaba converters: numeric bounds of the input fields, the window of the rows used, messages
and the normalisation strings (``docs/traces-alibaba.md``).

Every input here is written by the test; the real samples are covered in
``test_traces_alibaba.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

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
