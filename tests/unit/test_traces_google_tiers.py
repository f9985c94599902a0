"""Google 2011 converter: each task's priority and scheduling class (schema version 3).

The rule (docs/traces.md, "Priorities and tiers"): the first SUBMIT row's value, else the first
row's; the tasks whose rows carry another value are counted in ``conversion.json``.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from fairsim.traces.google2011 import convert_google_2011
from fairsim.traces.schema import GOOGLE_PRIORITY_BANDS, SCHEMA_VERSION

S = 1_000_000  # µs per second


def _row(t: int, job: int, task: int, ev: int, prio: str, sclass: str = "1") -> str:
    return f"{t},,{job},{task},,{ev},uA,{sclass},{prio},0.1,0.2,0,0"


ROWS = [
    _row(0, 1, 0, 1, "4"),  # A: SCHEDULE at time 0 (no SUBMIT): priority of its first row, 4
    _row(700 * S, 1, 0, 4, "9"),  # A: FINISH with another priority: counted as a change
    _row(600 * S, 2, 0, 0, "", ""),  # B: SUBMIT without priority or class
    _row(610 * S, 2, 0, 7, "10", "3"),  # B: UPDATE: the first row that carries them
    _row(620 * S, 3, 0, 0, "0", "0"),  # C: SUBMIT, priority 0
    _row(630 * S, 3, 0, 0, "11", "2"),  # C: SUBMIT again: the first SUBMIT's is kept, a change
    _row(640 * S, 4, 0, 0, "12"),  # D: out of the documented range 0-11: none
]


def test_first_submit_priority_and_changes_counted(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "task_events").mkdir(parents=True)
    with gzip.open(src / "task_events" / "part-00000-of-00500.csv.gz", "wt") as fh:
        fh.write("\n".join(ROWS) + "\n")
    for k in (1, 3):  # in memory and through spill buckets: the same table
        out = tmp_path / f"out{k}"
        report = convert_google_2011(src, out, progress=False, buckets=k)
        t = pd.read_parquet(out / "tasks.parquet").set_index("job_id")
        assert t.loc[1, "priority"] == 4 and t.loc[1, "scheduling_class"] == 1
        assert t.loc[2, "priority"] == 10 and t.loc[2, "scheduling_class"] == 3
        assert t.loc[3, "priority"] == 0 and t.loc[3, "scheduling_class"] == 0
        assert pd.isna(t.loc[4, "priority"]) and t.loc[4, "scheduling_class"] == 1
        assert t["qos"].isna().all()
        pr = report["priorities"]
        assert pr["tasks_with_priority_changes"] == 2  # A (4 then 9) and C (0 then 11)
        assert pr["tasks_with_scheduling_class_changes"] == 1  # C (0 then 2)
        assert pr["tasks_by_priority"] == {"0": 1, "4": 1, "10": 1}
        assert pr["tasks_by_band"] == {"free": 1, "middle": 1, "production": 1}
        assert pr["tasks_without_priority"] == 1
        assert pq.read_schema(out / "tasks.parquet").metadata[b"fairsim.schema"] == b"3"
    assert SCHEMA_VERSION == "3"


def test_real_sample_bands(google_tasks: Path) -> None:
    """Parts 0-13: 202,853 free, 351,740 middle and 59,426 production tasks; 5 tasks change
    priority; the table's columns agree with the report."""
    t = pd.read_parquet(google_tasks, columns=["priority", "scheduling_class"])
    report = json.loads((google_tasks.parent / "conversion.json").read_text())["priorities"]
    bands = {
        band: int(t["priority"].between(lo, hi).sum())
        for band, (lo, hi) in GOOGLE_PRIORITY_BANDS.items()
    }
    assert bands == {"free": 202_853, "middle": 351_740, "production": 59_426}
    assert report["tasks_by_band"] == bands
    assert sum(bands.values()) == len(t) == 614_019
    assert report["tasks_with_priority_changes"] == 5
    assert report["tasks_with_scheduling_class_changes"] == 0
    assert t["scheduling_class"].value_counts().sort_index().tolist() == [
        436_223, 87_861, 60_776, 29_159,
    ]  # fmt: skip
    assert report["tasks_by_priority"] == {
        "0": 139_144, "1": 63_709, "2": 307_316, "4": 35_132, "6": 834, "8": 8_458,
        "9": 52_073, "10": 812, "11": 6_541,
    }  # fmt: skip
