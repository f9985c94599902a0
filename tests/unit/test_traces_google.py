"""Google 2011 converter: semantics on a hand-made part, and real numbers on real parts."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from fairsim.errors import TraceError
from fairsim.traces.google2011 import convert_google_2011, machine_events_table
from fairsim.traces.paths import google_2011_dir
from fairsim.traces.schema import END_STATES, tasks_schema

S = 1_000_000  # µs per second


def _row(t, job, task, ev, user="uA", cpu="0.1", mem="0.2", machine=""):
    return f"{t},,{job},{task},{machine},{ev},{user},0,0,{cpu},{mem},0,0"


HAND_ROWS = [
    _row(0, 1, 0, 0),  # A: SUBMIT before the window -> taken at 600 s, the window start
    _row(0, 1, 0, 1, machine=5),  # A: SCHEDULE at time 0 -> measured from 600 s
    _row(0, 4, 0, 1, user="uE", cpu="0.3", mem="0.3"),  # E: no SUBMIT but a time-0 row
    _row(0, 8, 0, 5, user="uH"),  # H: only a time-0 KILL (pending): kept, its request used
    _row(650 * S, 2, 0, 0, user="uB", cpu="", mem=""),  # B: SUBMIT without request
    _row(650 * S, 2, 1, 0, user="uB"),  # C: SUBMIT
    _row(655 * S, 2, 1, 5, user="uB"),  # C: KILL while pending (no attempt)
    _row(660 * S, 2, 0, 7, user="uB", cpu="0.3", mem="0.4"),  # B: UPDATE supplies the request
    _row(670 * S, 2, 0, 7, user="uB", cpu="0.5", mem="0.5"),  # B: UPDATE, no effect
    _row(680 * S, 2, 0, 1, user="uB"),  # B: SCHEDULE, never ends -> censored
    _row(700 * S, 1, 0, 4),  # A: FINISH (run 100 s)
    _row(700 * S, 3, 0, 0, user="uD", cpu="", mem=""),  # D: no request ever -> dropped
    _row(750 * S, 5, 0, 4, user="uF"),  # F: FINISH without SUBMIT or time-0 row -> dropped
    _row(760 * S, 6, 0, 9, user="uX"),  # bad event type
    "abc,,6,1,,0,uX,0,0,0.1,0.1,0,0",  # unparseable time
    "770000000,,6,2,,0",  # malformed: 6 columns
    _row(800 * S, 1, 0, 0),  # A: resubmitted
    _row(900 * S, 1, 0, 1),  # A: SCHEDULE again
    _row(1000 * S, 1, 0, 2),  # A: EVICT -> the earlier FINISH still wins
    _row(1100 * S, 4, 0, 3, user="uE"),  # E: FAIL -> run 1100 - 600 = 500 s
    _row(1200 * S, 7, 0, 0, user="uG"),  # G: SUBMIT
    _row(1210 * S, 7, 0, 1, user="uG"),  # G: SCHEDULE
    _row(1300 * S, 7, 0, 4, user="uG"),  # G: FINISH (run 90 s)
    _row(1400 * S, 7, 0, 1, user="uG"),  # G: SCHEDULE again
    _row(1500 * S, 7, 0, 5, user="uG"),  # G: KILL -> FINISH attempt still wins
    _row(1200 * S, 9, 0, 0, user="uI"),  # I: SUBMIT
    _row(1210 * S, 9, 0, 1, user="uI"),  # I: SCHEDULE
    _row(1300 * S, 9, 0, 4, user="uI"),  # I: FINISH
    _row(1400 * S, 9, 0, 1, user="uI"),  # I: SCHEDULE again, never ends -> censored
]


@pytest.fixture
def hand_src(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "task_events").mkdir(parents=True)
    with gzip.open(src / "task_events" / "part-00000-of-00500.csv.gz", "wt") as fh:
        fh.write("\n".join(HAND_ROWS) + "\n")
    return src


def test_hand_made_semantics(hand_src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = convert_google_2011(hand_src, out, progress=False)
    t = pd.read_parquet(out / "tasks.parquet")
    got = {(r.job_id, r.task_index): r for r in t.itertuples()}
    assert list(zip(t.job_id, t.task_index, strict=True)) == [
        (1, 0), (4, 0), (8, 0), (2, 0), (2, 1), (7, 0), (9, 0),
    ]  # fmt: skip
    assert list(t.censored) == [False, False, False, True, False, False, True]

    a = got[(1, 0)]  # submitted and scheduled before the window: both at 600 s
    assert (a.submit_s, a.end_state, a.run_s, a.attempts) == (600.0, "finish", 100.0, 2)
    b = got[(2, 0)]
    assert (b.cpu, b.mem, b.end_state, b.run_s, b.attempts) == (0.3, 0.4, "censored", 820.0, 1)
    i = got[(9, 0)]  # an attempt finished, but the last one runs when the data ends
    assert (i.end_state, i.censored, i.run_s, i.attempts) == ("censored", True, 100.0, 2)
    c = got[(2, 1)]
    assert (c.end_state, c.attempts, c.submit_s) == ("unscheduled", 0, 650.0)
    assert np.isnan(c.run_s)
    e = got[(4, 0)]
    assert (e.submit_s, e.end_state, e.run_s, e.user) == (600.0, "fail", 500.0, "uE")
    h = got[(8, 0)]
    assert (h.submit_s, h.end_state, h.attempts, h.cpu) == (600.0, "unscheduled", 0, 0.1)
    g = got[(7, 0)]
    assert (g.end_state, g.run_s, g.attempts) == ("finish", 90.0, 2)

    assert report["rows_read"] == {"task_events": 29}
    assert report["rows_used"] == {"task_events": 22}
    assert report["skipped"]["task_events"] == {
        "update event (no effect on run time)": 1,
        "terminal event without a running attempt": 1,
        "missing cpu or mem request": 1,
        "negative request": 0,
        "terminal event before its SCHEDULE": 0,
        "no SUBMIT event": 1,
        "missing user": 0,
        "bad event type": 1,
        "unparseable field": 1,
        "malformed row (wrong column count)": 1,
    }
    assert report["window_s"] == [600.0, 1500.0]
    assert report["tasks"] == 7
    assert report["censored_tasks"] == 2
    assert report["missing_tables"] == ["job_events", "machine_events"]
    assert json.loads((out / "conversion.json").read_text()) == report
    assert not (out / "servers.parquet").exists()


def test_missing_folder_and_parts(tmp_path: Path, hand_src: Path) -> None:
    with pytest.raises(TraceError, match=r"nowhere: no such folder$"):
        convert_google_2011(tmp_path / "nowhere", tmp_path / "out", progress=False)
    (tmp_path / "plain").mkdir()
    with pytest.raises(TraceError, match=r"plain: no task_events folder$"):
        convert_google_2011(tmp_path / "plain", tmp_path / "out", progress=False)
    with pytest.raises(TraceError, match=r"missing task_events part\(s\) \[7\]"):
        convert_google_2011(hand_src, tmp_path / "out", parts=[0, 7], progress=False)
    (tmp_path / "empty" / "task_events").mkdir(parents=True)
    with pytest.raises(TraceError, match=r"no part-NNNNN"):
        convert_google_2011(tmp_path / "empty", tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------ real data


@pytest.fixture(scope="module")
def part0(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("google-part0")
    report = convert_google_2011(google_2011_dir(), out, parts=[0], progress=False)
    return report, out


@pytest.mark.slow
def test_real_part0_numbers(part0: tuple[dict, Path]) -> None:
    report, _ = part0
    assert report["parts"] == [0]
    assert report["rows_read"] == {
        "task_events": 450_146,
        "job_events": 10_704,
        "machine_events": 37_780,
    }
    assert report["rows_used"] == {
        "task_events": 450_070,
        "job_events": 10_694,
        "machine_events": 12_583,
    }
    skipped = report["skipped"]["task_events"]
    assert skipped["missing cpu or mem request"] == 0
    assert skipped["terminal event without a running attempt"] == 76
    assert skipped["update event (no effect on run time)"] == 0
    assert report["empty_request_rows"] == {"cpu": 291, "mem": 291}
    assert report["tasks"] == 190_926
    assert report["users"] == 519
    assert report["jobs"] == 4_895
    assert report["servers"] == 12_583
    assert report["window_s"] == [600.0, 5611.086346]
    # 21 tasks finished an attempt, were scheduled again and still run at the end: censored
    assert report["censored_tasks"] == 131_409
    assert report["end_states"] == {
        "censored": 131_409,
        "evict": 191,
        "fail": 19,
        "finish": 43_130,
        "kill": 4_928,
        "unscheduled": 11_249,
    }
    assert report["job_events_check"]["task_jobs_missing_from_job_events"] == 0


@pytest.mark.slow
def test_real_part0_invariants(part0: tuple[dict, Path]) -> None:
    report, out = part0
    for table, n in report["rows_read"].items():
        assert report["rows_used"][table] + sum(report["skipped"][table].values()) == n, table
    pf = pq.ParquetFile(out / "tasks.parquet")
    assert pf.schema_arrow.equals(tasks_schema(), check_metadata=True)
    assert pf.metadata.row_group(0).num_rows == 65_536
    t = pf.read().to_pandas()
    assert len(t) == report["tasks"]
    assert not t.duplicated(["job_id", "task_index"]).any()
    key = t[["submit_s", "job_id", "task_index"]]
    assert key.equals(key.sort_values(["submit_s", "job_id", "task_index"], ignore_index=True))
    assert set(t.end_state) <= set(END_STATES)
    assert (t.censored == (t.end_state == "censored")).all()
    assert (t.submit_s >= 600.0).all()  # nothing is submitted before the window start
    ran = t.run_s.notna()
    assert (t.run_s[ran] >= 0).all()
    assert ((t.end_state == "unscheduled") == ~ran).all()
    assert ((t.attempts == 0) == (t.end_state == "unscheduled")).all()
    assert t.cpu.between(0, 1).all()
    assert t.mem.between(0, 1).all()
    assert (t.instances == 1).all()
    assert t.constraint.isna().all()
    assert t.parents.isna().all()
    # a task already running at time 0 and still running at the end of part 0
    first = t.iloc[0]
    assert (first.job_id, first.task_index, first.end_state) == (3418309, 0, "censored")
    assert first.run_s == pytest.approx(5611.086346 - 600.0)
    servers = pd.read_parquet(out / "servers.parquet")
    assert len(servers) == 12_583
    assert servers.server.is_unique


@pytest.mark.slow
def test_real_part1_resubmits_without_submit(tmp_path: Path) -> None:
    report = convert_google_2011(google_2011_dir(), tmp_path, parts=[1], progress=False)
    assert report["rows_read"]["task_events"] == 77_776
    assert report["tasks"] == 20_139
    skipped = report["skipped"]["task_events"]
    assert skipped["no SUBMIT event"] == 4_872
    assert skipped["terminal event without a running attempt"] == 2_652
    assert report["rows_used"]["task_events"] == 70_252


@pytest.mark.slow
def test_truncated_gzip_raises_and_writes_nothing(tmp_path: Path) -> None:
    real = google_2011_dir() / "task_events" / "part-00001-of-00500.csv.gz"
    src = tmp_path / "src" / "task_events"
    src.mkdir(parents=True)
    data = real.read_bytes()
    (src / real.name).write_bytes(data[: len(data) // 2])
    out = tmp_path / "out"
    with pytest.raises(
        TraceError, match=r"^task_events/part-00001-of-00500\.csv\.gz: truncated or corrupt gzip"
    ):
        convert_google_2011(src.parent, out, progress=False)
    assert not (out / "tasks.parquet").exists()
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.slow
def test_machine_events_table() -> None:
    m = machine_events_table(google_2011_dir())
    assert len(m) == 12_583
    assert m.machine_id.is_unique
    assert list(m.columns) == ["machine_id", "cpu", "mem", "platform"]
    assert m.cpu.max() == 1.0
    assert m.mem.max() == 1.0


def test_machine_events_missing(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no machine_events"):
        machine_events_table(tmp_path)


def test_copy_of_real_part_is_byte_identical_input(tmp_path: Path) -> None:
    """The shared folder must exist: this fails (not skips) without it."""
    real = google_2011_dir() / "task_events" / "part-00001-of-00500.csv.gz"
    shutil.copy(real, tmp_path / real.name)
    assert (tmp_path / real.name).stat().st_size == 924_634


# --------------------------------------------------------------------------- hardening


def _part(folder: Path, n: int, rows: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / f"part-{n:05d}-of-00500.csv.gz", "wt") as fh:
        fh.write("\n".join(rows) + ("\n" if rows else ""))


def test_all_malformed_task_events_are_refused_naming_the_first_bad_row(tmp_path: Path) -> None:
    _part(tmp_path / "g" / "task_events", 0, ["1,2,3", "4,5,6"])  # a 3-column CSV
    with pytest.raises(
        TraceError,
        match=r"^task_events: 2 of 2 rows \(100 %\) are malformed or unparseable, more than the "
        r"50 % allowed \(bad_row_threshold\); first bad row: "
        r"task_events/part-00000-of-00500\.csv\.gz line 1 \('1,2,3'\): 3 columns, expected 13$",
    ):
        convert_google_2011(tmp_path / "g", tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_bad_row_threshold_counts_unparseable_rows_and_finds_their_line(tmp_path: Path) -> None:
    good = _row(700 * S, 1, 0, 0)
    rows = [good, "abc,,1,1,,0,u,0,0,0.1,0.1,0,0", "1,2", _row(700 * S, 2, 0, 0)]
    _part(tmp_path / "g" / "task_events", 0, rows)
    # 2 bad rows of 4 = 50 %: at the default threshold (more than 50 % is refused) it converts
    report = convert_google_2011(tmp_path / "g", tmp_path / "o1", progress=False)
    skipped = report["skipped"]["task_events"]
    assert skipped["unparseable field"] == 1
    assert skipped["malformed row (wrong column count)"] == 1
    assert report["rows_read"]["task_events"] == 4 and report["tasks"] == 2
    with pytest.raises(
        TraceError,
        match=r"^task_events: 2 of 4 rows \(50 %\) are malformed or unparseable, more than the "
        r"40 % allowed .* line 2 \('abc,,1,1,,0,u,0,0,0\.1,0\.1,0,0'\): unparseable field$",
    ):
        convert_google_2011(tmp_path / "g", tmp_path / "o2", progress=False, bad_row_threshold=0.4)


def test_empty_part_is_one_error_and_the_reader_thread_lets_go(tmp_path: Path) -> None:
    """A 0-byte .csv.gz: one-line error, and pyarrow's background reader has released the
    Python row handler before the error is raised (it used to do so while the interpreter shut
    down, aborting the process with exit 134)."""
    import gc
    import sys

    from fairsim.traces.io import BadRows, csv_batches

    (tmp_path / "g" / "task_events").mkdir(parents=True)
    empty = tmp_path / "g" / "task_events" / "part-00000-of-00500.csv.gz"
    empty.write_bytes(b"")
    with pytest.raises(TraceError, match=r"^task_events/part-00000-of-00500\.csv\.gz: empty file"):
        convert_google_2011(tmp_path / "g", tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()
    switch = sys.getswitchinterval()
    sys.setswitchinterval(100.0)  # the GIL changes hands only when this thread blocks
    try:
        for _ in range(20):
            bad = BadRows()
            with pytest.raises(TraceError, match=r"^x: empty file"):
                next(csv_batches(empty, ("a", "b"), bad=bad, rel="x"))
            # the per-file handler pyarrow held (it refers to ``bad``) is gone already
            held = [o for o in gc.get_referrers(bad) if type(o).__name__ == "_FileHandler"]
            assert held == []
    finally:
        sys.setswitchinterval(switch)


def test_empty_part_exits_2_every_time(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "g" / "task_events").mkdir(parents=True)
    (tmp_path / "g" / "task_events" / "part-00000-of-00500.csv.gz").write_bytes(b"")
    code = (
        "import sys; from fairsim.cli import main; "
        "sys.exit(main(['trace', 'convert', 'google-2011', sys.argv[1], '--out', sys.argv[2]]))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(tmp_path / "g"), str(tmp_path / f"o{i}")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(6)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 2, err
        assert "terminate called" not in err
        assert err.strip().splitlines()[-1].startswith("fairsim: error: task_events/part-00000")
    assert not list(tmp_path.glob("o*"))


def test_no_data_rows_is_an_error(tmp_path: Path) -> None:
    _part(tmp_path / "g" / "task_events", 0, ["", ""])
    with pytest.raises(TraceError, match=r"no data rows in task_events parts \[0\]"):
        convert_google_2011(tmp_path / "g", tmp_path / "out", progress=False)


def test_default_parts_are_every_part_present(tmp_path: Path) -> None:
    for n in (15, 16, 17):
        _part(tmp_path / "g" / "task_events", n, [_row(700 * S, n, 0, 0)])
    report = convert_google_2011(tmp_path / "g", tmp_path / "out", progress=False)
    assert report["parts"] == [15, 16, 17] and report["tasks"] == 3


def _convert_rows(
    tmp_path: Path,
    rows: list[str],
    buckets: int | None = None,
    machine_rows: list[str] | None = None,
    bad_row_threshold: float = 0.5,
) -> tuple[dict, pd.DataFrame]:
    """Convert one hand-made task_events part (and machine_events when given); (report,
    tasks.parquet)."""
    _part(tmp_path / "g" / "task_events", 0, rows)
    if machine_rows is not None:
        (tmp_path / "g" / "machine_events").mkdir()
        with gzip.open(
            tmp_path / "g" / "machine_events" / "part-00000-of-00001.csv.gz", "wt"
        ) as fh:
            fh.write("\n".join(machine_rows) + "\n")
    report = convert_google_2011(
        tmp_path / "g",
        tmp_path / "out",
        progress=False,
        buckets=buckets,
        bad_row_threshold=bad_row_threshold,
    )
    assert json.loads((tmp_path / "out" / "conversion.json").read_text()) == report
    return report, pd.read_parquet(tmp_path / "out" / "tasks.parquet")


def _nonzero(skipped: dict[str, int]) -> dict[str, int]:
    return {reason: n for reason, n in skipped.items() if n}


@pytest.mark.parametrize("buckets", [1, 3])
def test_negative_request_drops_the_task_and_counts_its_rows(tmp_path: Path, buckets: int) -> None:
    """A negative cpu or mem request on any row of a task drops the task, every row of it
    counted under ``negative request`` (it used to be written with cpu -0.5)."""
    rows = [
        _row(700 * S, 1, 0, 0, cpu="-0.5"),  # A: negative cpu on every row
        _row(710 * S, 1, 0, 1, cpu="-0.5", machine=5),
        _row(720 * S, 1, 0, 4, cpu="-0.5"),
        _row(700 * S, 2, 0, 0),  # B: only its SCHEDULE row's mem is negative
        _row(710 * S, 2, 0, 1, mem="-0.1", machine=5),
        _row(730 * S, 2, 0, 4),
        _row(700 * S, 3, 0, 0, cpu="0", mem="0"),  # C: zero requests are kept
        _row(710 * S, 3, 0, 1, cpu="0", mem="0", machine=5),
        _row(740 * S, 3, 0, 4, cpu="0", mem="0"),
        _row(700 * S, 4, 0, 0, cpu="", mem=""),  # D: no request at all: missing comes first
        _row(705 * S, 4, 0, 7, cpu="-0.2", mem=""),
    ]
    report, tasks = _convert_rows(tmp_path, rows, buckets=buckets)
    assert report["rows_read"] == {"task_events": 11}
    assert report["rows_used"] == {"task_events": 3}
    assert _nonzero(report["skipped"]["task_events"]) == {
        "negative request": 6,
        "missing cpu or mem request": 2,
    }
    assert report["tasks"] == 1
    assert tasks[["job_id", "task_index", "cpu", "mem", "run_s", "end_state"]].to_dict(
        "records"
    ) == [
        {"job_id": 3, "task_index": 0, "cpu": 0.0, "mem": 0.0, "run_s": 30.0, "end_state": "finish"}
    ]
    assert report["placements"]["runs"] == 1
    assert report["placements"]["skipped"]["task not in the tasks table"] == 2


@pytest.mark.parametrize("buckets", [1, 3])
def test_terminal_event_before_its_schedule_drops_the_task(tmp_path: Path, buckets: int) -> None:
    """An attempt whose terminal event is earlier than its SCHEDULE has no run time: its task is
    dropped, every row counted under ``terminal event before its SCHEDULE`` (it used to be
    written with run_s 0.0 and end_state finish)."""
    rows = [
        _row(700 * S, 1, 0, 0),  # A: the tester's case, times decreasing
        _row(690 * S, 1, 0, 1, machine=5),
        _row(680 * S, 1, 0, 4),
        _row(700 * S, 2, 0, 0),  # B: a KILL before the SCHEDULE, then an attempt that finishes
        _row(720 * S, 2, 0, 1, machine=5),
        _row(710 * S, 2, 0, 5),
        _row(730 * S, 2, 0, 1, machine=5),
        _row(790 * S, 2, 0, 4),
        _row(700 * S, 3, 0, 0),  # C: FINISH at the SCHEDULE's time: run 0, kept
        _row(710 * S, 3, 0, 1, machine=5),
        _row(710 * S, 3, 0, 4),
        _row(700 * S, 4, 0, 0),  # D: in order
        _row(710 * S, 4, 0, 1, machine=5),
        _row(760 * S, 4, 0, 4),
        _row(700 * S, 5, 0, 0, cpu="-0.1"),  # E: also backwards, but negative request first
        _row(690 * S, 5, 0, 1, cpu="-0.1", machine=5),
        _row(680 * S, 5, 0, 4, cpu="-0.1"),
    ]
    report, tasks = _convert_rows(tmp_path, rows, buckets=buckets)
    assert report["rows_read"] == {"task_events": 17}
    assert report["rows_used"] == {"task_events": 6}
    assert _nonzero(report["skipped"]["task_events"]) == {
        "terminal event before its SCHEDULE": 8,
        "negative request": 3,
    }
    assert tasks[["job_id", "submit_s", "run_s", "end_state", "attempts"]].to_dict("records") == [
        {"job_id": 3, "submit_s": 700.0, "run_s": 0.0, "end_state": "finish", "attempts": 1},
        {"job_id": 4, "submit_s": 700.0, "run_s": 50.0, "end_state": "finish", "attempts": 1},
    ]
    assert report["end_states"] == {"finish": 2}
    assert report["placements"]["runs"] == 2
    assert report["placements"]["skipped"]["task not in the tasks table"] == 4


def test_non_finite_request_is_one_reason_nan_or_inf(tmp_path: Path) -> None:
    """A cpu or mem field of ``nan`` is unparseable like ``inf`` (pyarrow used to read ``nan`` as
    an empty field: "missing cpu or mem request", or another row's request taken); only an
    empty field is a missing request. Likewise for a machine's capacity."""
    rows = [
        _row(700 * S, 1, 0, 0, cpu="nan"),  # A: nan on every row
        _row(710 * S, 1, 0, 1, cpu="nan", machine=5),
        _row(720 * S, 1, 0, 4, cpu="nan"),
        _row(700 * S, 2, 0, 0, cpu="inf"),  # B: inf on every row
        _row(710 * S, 2, 0, 1, cpu="inf", machine=5),
        _row(720 * S, 2, 0, 4, cpu="inf"),
        _row(700 * S, 3, 0, 0),  # C: its UPDATE rows' non-finite requests are unparseable
        _row(705 * S, 3, 0, 7, cpu="NaN"),
        _row(706 * S, 3, 0, 7, mem="-inf"),
        _row(0, 4, 0, 0, cpu="", mem=""),  # D: an empty request is missing: SCHEDULE's taken
        _row(0, 4, 0, 1, cpu="0.3", mem="0.4", machine=5),
        _row(800 * S, 4, 0, 4),
    ]
    machines = [
        "0,5,0,p,nan,0.5",  # unparseable, not an empty capacity
        "0,6,0,p,,0.5",  # empty capacity
        "0,5,2,p,0.5,0.5",
        "0,6,2,p,0.25,inf",  # unparseable
        "0,6,2,p,0.25,0.25",
    ]
    report, tasks = _convert_rows(tmp_path, rows, machine_rows=machines, bad_row_threshold=1.0)
    assert report["rows_read"]["task_events"] == 12
    assert report["rows_used"]["task_events"] == 4
    assert _nonzero(report["skipped"]["task_events"]) == {"unparseable field": 8}
    assert report["empty_request_rows"] == {"cpu": 1, "mem": 1}
    assert tasks[["job_id", "submit_s", "cpu", "mem", "end_state", "attempts"]].to_dict(
        "records"
    ) == [
        {"job_id": 4, "submit_s": 600.0, "cpu": 0.3, "mem": 0.4, "end_state": "finish",
         "attempts": 1},
        {"job_id": 3, "submit_s": 700.0, "cpu": 0.1, "mem": 0.2, "end_state": "unscheduled",
         "attempts": 0},
    ]  # fmt: skip
    assert tasks["run_s"].iloc[0] == 200.0 and np.isnan(tasks["run_s"].iloc[1])
    assert report["rows_read"]["machine_events"] == 5
    assert report["rows_used"]["machine_events"] == 2
    assert _nonzero(report["skipped"]["machine_events"]) == {
        "unparseable field": 2,
        "empty capacity": 1,
    }


def test_integer_fields_of_a_batch_with_a_bad_field_are_read_exactly() -> None:
    """A batch with a field that is not an integer is parsed through float64: the trace's time
    2**63 - 1 ("after the window") came back as -2**63 from the cast, a 17-digit id as its
    float neighbour, and ``1e20`` as -2**63 taken as valid. They read as the cast of a clean
    batch reads them: the first two exactly, ``1e20`` as unparseable."""
    import pyarrow as pa

    from fairsim.traces.google_parts import to_int

    texts = ["1", "x", str(2**63 - 1), str(2**53 + 1), "1e20", "-5", str(10**20)]
    values, ok = to_int(pa.array(texts))
    assert ok.tolist() == [True, False, True, True, False, True, False]
    assert values[ok].tolist() == [1, 2**63 - 1, 2**53 + 1, -5]
    clean, clean_ok = to_int(pa.array([t for t, k in zip(texts, ok, strict=True) if k]))
    assert clean_ok.all() and clean.tolist() == values[ok].tolist()
