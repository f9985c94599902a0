"""The window check and the column scans of a canonical tasks table read it one row group at a
time (scenario/workload.py): the same answers as the whole column at once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairsim.errors import ConfigError
from fairsim.scenario.config import SyntheticTrace
from fairsim.scenario.workload import _check_window, _column_max, _has_values


def _trace() -> SyntheticTrace:
    return SyntheticTrace(format="synthetic", n_tasks=10)


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(st.floats(-10, 100, allow_nan=False), min_size=1, max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=5),
    start=st.floats(-20, 110, allow_nan=False),
    width=st.floats(0, 50, allow_nan=False),
)
def test_window_in_pieces_equals_the_whole_column(values, cuts, start, width) -> None:  # type: ignore[no-untyped-def]
    a = np.asarray(values)
    end = start + width
    pieces = np.split(a, sorted(c for c in cuts if c <= len(a)))
    inside = (a >= start) & (a < end)
    if inside.any():
        assert _check_window(pieces, _trace(), start, end) == (
            float(a[inside].min()),
            float(a[inside].max()),
        )
    else:
        span = f"its {len(a)} tasks are submitted from {a.min():g} s to {a.max():g} s"
        with pytest.raises(ConfigError, match=r"no task of the trace") as err:
            _check_window(pieces, _trace(), start, end)
        assert span in str(err.value)


def test_no_tasks_and_row_group_scans(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\(it has no tasks\)$"):
        _check_window([np.array([]), np.array([])], _trace(), 0.0, 1.0)
    table = pa.table(
        {
            "instances": pa.array([1, 1, None, 3, 1, None], pa.int64()),
            "parents": pa.array([None] * 6, pa.string()),
            "constraint": pa.array([None, None, None, None, None, 2], pa.int64()),
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=2)
    assert pq.ParquetFile(path).num_row_groups == 3
    assert _column_max(path, "instances") == 3
    assert not _has_values(path, "parents") and _has_values(path, "constraint")
    assert not _has_values(path, "absent")
