"""Alibaba v2018 DAG task names: parsing and per-job validation on hand-made jobs."""

from __future__ import annotations

import numpy as np
import pytest

from fairsim.traces.dag import (
    R_BAD_NAME,
    R_CYCLE,
    R_DUPLICATE,
    R_MISSING_PARENT,
    DagError,
    dag_columns,
    job_dag,
    parse_task_name,
)


def test_parse_names() -> None:
    assert parse_task_name("M5_3_4") == (5, (3, 4))
    assert parse_task_name("R2") == (2, ())
    assert parse_task_name("J24_20_23") == (24, (20, 23))
    assert parse_task_name("task_LTg0MTUwNTA5Mjg4MDkzNjE1NA==") is None
    for bad in ("MergeTask", "M", "5_3", "M5_", "M5__3", "M5_x", ""):
        with pytest.raises(DagError, match=R_BAD_NAME):
            parse_task_name(bad)


def test_job_dag_valid() -> None:
    assert job_dag(["R3_1_2", "M1", "M2"]) == ([3, 1, 2], ["1,2", None, None])
    assert job_dag(["M4_3_3", "M3"]) == ([4, 3], ["3", None])  # repeated parent collapses
    # independent tasks get the indices after the largest DAG number
    assert job_dag(["task_a", "task_b"]) == ([1, 2], [None, None])
    assert job_dag(["M7", "task_a"]) == ([7, 8], [None, None])
    # a diamond
    assert job_dag(["M1", "M2_1", "M3_1", "R4_2_3"])[1] == [None, "1", "1", "2,3"]


@pytest.mark.parametrize(
    ("names", "reason"),
    [
        (["M1_2", "M2_1"], R_CYCLE),
        (["M1_1"], R_CYCLE),
        (["M1", "M2_1_4", "M3_2", "M4_3"], R_CYCLE),
        (["M1", "R2_5"], R_MISSING_PARENT),
        (["M1", "R1"], R_DUPLICATE),
        (["M1", "Merge"], R_BAD_NAME),
    ],
)
def test_job_dag_rejects(names: list[str], reason: str) -> None:
    with pytest.raises(DagError, match=reason):
        job_dag(names)


def test_dag_columns_many_jobs() -> None:
    job = np.array([2, 1, 2, 3, 1, 3], dtype=np.int64)
    names = np.array(["R2_1", "M1", "M1", "M1_2", "task_x", "M2_1"], dtype=object)
    index, parents, reason = dag_columns(job, names)
    assert index.tolist()[:3] == [2, 1, 1] and index[4] == 2
    assert parents.tolist()[:3] == ["1", None, None]
    assert reason.tolist() == [None, None, None, R_CYCLE, None, R_CYCLE]
    empty = dag_columns(np.empty(0, np.int64), np.empty(0, object))
    assert all(len(a) == 0 for a in empty)
