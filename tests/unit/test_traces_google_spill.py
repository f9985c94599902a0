"""Out-of-core Google 2011 conversion: spill buckets give the same bytes as folding in memory."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fairsim.traces.google2011 as g
from fairsim.errors import TraceError
from fairsim.traces.google2011 import auto_buckets, convert_google_2011
from fairsim.traces.io import RowGroupWriter, write_placements, write_tasks
from fairsim.traces.paths import google_2011_dir
from fairsim.traces.spill import Partitioner, SpillDir, bucket_of, merge_runs, write_run

S = 1_000_000  # µs per second
TABLES = ("tasks.parquet", "placements.parquet", "servers.parquet", "conversion.json")


def _row(t, job, task, ev, user="uA", cpu="0.1", mem="0.2", machine=""):
    return f"{t},,{job},{task},{machine},{ev},{user},0,0,{cpu},{mem},0,0"


def _part(folder: Path, n: int, rows: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / f"part-{n:05d}-of-00500.csv.gz", "wt") as fh:
        fh.write("\n".join(rows) + ("\n" if rows else ""))


def _digests(out: Path) -> dict[str, str]:
    return {f: hashlib.sha256((out / f).read_bytes()).hexdigest() for f in TABLES}


def _random_trace(src: Path, seed: int, n_jobs: int = 60) -> None:
    """Tasks with SUBMIT / SCHEDULE / UPDATE / terminal rows over 3 time-ordered parts."""
    rng = np.random.default_rng(seed)
    rows: list[tuple[int, int, str]] = []
    seq = 0
    for job in range(1, n_jobs + 1):
        user = f"u{rng.integers(5)}"
        for task in range(int(rng.integers(1, 8))):
            t = int(rng.integers(0, 3000)) * S
            if rng.random() < 0.1:
                t = 0  # before the window
            events = [0]
            for _ in range(int(rng.integers(0, 4))):
                events += [int(rng.choice([1, 7, 8, 1, 4, 2, 3, 5, 6, 0]))]
            for ev in events:
                cpu = "" if rng.random() < 0.1 else f"{rng.integers(1, 50) / 100}"
                mem = "" if rng.random() < 0.1 else f"{rng.integers(1, 50) / 100}"
                machine = str(int(rng.integers(1, 12))) if ev == 1 else ""
                rows.append((t, seq, _row(t, job, task, ev, user, cpu, mem, machine)))
                seq += 1
                t += int(rng.integers(1, 400)) * S
    rows.sort(key=lambda r: (r[0], r[1]))
    text = [r[2] for r in rows]
    third = len(text) // 3
    for n, chunk in enumerate((text[:third], text[third : 2 * third], text[2 * third :])):
        _part(src / "task_events", n, chunk)
    # machines 1..9 known (10, 11 are not: their runs are counted, not written)
    _part(
        src / "machine_events",
        0,
        [f"0,{m},0,p{m % 2},{0.5 if m % 3 else 1.0},{0.25 * (1 + m % 4)}" for m in range(1, 10)],
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_buckets_give_the_same_bytes_as_one_fold(tmp_path: Path, seed: int) -> None:
    src = tmp_path / "src"
    _random_trace(src, seed)
    digests = {}
    for k in (1, 2, 5, 16):
        out = tmp_path / f"out{k}"
        report = convert_google_2011(src, out, progress=False, buckets=k)
        assert report["tasks"] > 100
        assert sorted(p.name for p in out.iterdir()) == sorted(TABLES)  # no spill folder left
        digests[k] = _digests(out)
    assert digests[2] == digests[1]
    assert digests[5] == digests[1]
    assert digests[16] == digests[1]


def test_a_task_straddling_parts_and_buckets(tmp_path: Path) -> None:
    """SUBMIT in part 0, SCHEDULE in part 1, FINISH in part 2: one task row, one run."""
    src = tmp_path / "src"
    _part(
        src / "task_events",
        0,
        [_row(700 * S, 10, 0, 0), _row(701 * S, 11, 3, 0, user="uB"), _row(702 * S, 12, 0, 0)],
    )
    _part(
        src / "task_events",
        1,
        [_row(800 * S, 10, 0, 1, machine=4), _row(810 * S, 11, 3, 1, machine=5)],
    )
    _part(
        src / "task_events",
        2,
        [_row(930 * S, 10, 0, 4), _row(990 * S, 11, 3, 2), _row(995 * S, 12, 0, 5)],
    )
    reports = {}
    for k in (1, 3):
        out = tmp_path / f"out{k}"
        reports[k] = convert_google_2011(src, out, progress=False, buckets=k)
        t = pd.read_parquet(out / "tasks.parquet")
        assert list(zip(t.job_id, t.task_index, strict=True)) == [(10, 0), (11, 3), (12, 0)]
        assert list(t.end_state) == ["finish", "evict", "unscheduled"]
        assert t.run_s.iloc[:2].tolist() == [130.0, 180.0]
        p = pd.read_parquet(out / "placements.parquet")
        assert p[["machine", "start_s", "end_s", "end_event"]].values.tolist() == [
            ["4", 800.0, 930.0, "finish"],
            ["5", 810.0, 990.0, "evict"],
        ]
    assert reports[3] == reports[1]
    assert reports[1]["skipped"]["task_events"]["terminal event without a running attempt"] == 1
    assert _digests_no_servers(tmp_path / "out1") == _digests_no_servers(tmp_path / "out3")


def _digests_no_servers(out: Path) -> list[bytes]:
    return [(out / f).read_bytes() for f in ("tasks.parquet", "placements.parquet")]


@pytest.mark.slow
def test_sample_slice_bytes_do_not_depend_on_buckets(tmp_path: Path) -> None:
    """Real parts 0-2 (156,580 tasks): 7 spill buckets give the bytes of the in-memory fold."""
    one, seven = tmp_path / "k1", tmp_path / "k7"
    r1 = convert_google_2011(google_2011_dir(), one, parts=[0, 1, 2], progress=False, buckets=1)
    r7 = convert_google_2011(google_2011_dir(), seven, parts=[0, 1, 2], progress=False, buckets=7)
    assert r7 == r1
    assert _digests(seven) == _digests(one)
    assert sorted(p.name for p in seven.iterdir()) == sorted(TABLES)
    assert json.loads((seven / "conversion.json").read_text())["tasks"] == r1["tasks"]


def test_spill_files_removed_after_an_error(tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "src"
    _random_trace(src, 3)
    seen: list[Path] = []

    def boom(path: Path, table: pa.Table, chunk_rows: int) -> None:
        seen.extend(path.parent.iterdir())
        raise TraceError("disk full (test)")

    monkeypatch.setattr(g, "write_run", boom)
    out = tmp_path / "new"
    with pytest.raises(TraceError, match="disk full"):
        convert_google_2011(src, out, progress=False, buckets=4)
    assert any(p.name.startswith("bucket-") for p in seen)  # spill files existed
    assert not out.exists()  # created by the call, removed with its spill folder
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "other.txt").write_text("x")
    with pytest.raises(TraceError, match="disk full"):
        convert_google_2011(src, kept, progress=False, buckets=4)
    assert [p.name for p in kept.iterdir()] == ["other.txt"]


def test_an_error_while_writing_leaves_no_table(tmp_path: Path, monkeypatch) -> None:
    src = tmp_path / "src"
    _random_trace(src, 4)
    out = tmp_path / "out"
    out.mkdir()

    def boom(*args, **kwargs):
        raise TraceError("merge failed (test)")

    monkeypatch.setattr(g, "merge_runs", boom)
    with pytest.raises(TraceError, match="merge failed"):
        convert_google_2011(src, out, progress=False, buckets=3)
    assert list(out.iterdir()) == []


def test_auto_buckets_from_the_compressed_size(tmp_path: Path) -> None:
    f = tmp_path / "part-00000-of-00500.csv.gz"
    f.write_bytes(b"x" * 1000)
    assert auto_buckets([f]) == 1
    assert auto_buckets([f], bucket_rows=89) == 1  # 1000 B * 0.089 rows/B = 89 rows
    assert auto_buckets([f], bucket_rows=88) == 3  # longer: buckets of 44 rows
    assert auto_buckets([f, f, f], bucket_rows=10) == 54  # 267 rows / 5
    with pytest.raises(ValueError, match="buckets: 0, expected at least 1"):
        convert_google_2011(tmp_path, tmp_path / "o", progress=False, buckets=0)


@pytest.mark.parametrize("fan_in", [16, 2, 3])
def test_merge_runs_is_the_global_sort(tmp_path: Path, fan_in: int) -> None:
    rng = np.random.default_rng(7)
    paths, frames = [], []
    for r in range(5):
        n = int(rng.integers(0, 3000))
        df = pd.DataFrame(
            {
                "a": rng.integers(0, 20, n).astype(np.float64),  # many ties on the first key
                "b": rng.integers(0, 50, n),
                "c": np.arange(n, dtype=np.int32) * 5 + r,  # unique overall
            }
        ).sort_values(["a", "b", "c"])
        frames.append(df)
        paths.append(tmp_path / f"run{r}.arrow")
        write_run(paths[-1], pa.Table.from_pandas(df, preserve_index=False), 97)
    got = pa.concat_tables(
        merge_runs(paths, ["a", "b", "c"], fan_in=fan_in, chunk_rows=101)
    ).to_pandas()
    want = pd.concat(frames).sort_values(["a", "b", "c"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want)
    # with more runs than fan_in, groups are merged into intermediate runs, which are removed
    left = sorted(p.name for p in tmp_path.iterdir())
    # (fan_in 2: runs 0-1 and 2-3 merged, run 4 carried to the last level)
    assert left == {16: [f"run{r}.arrow" for r in range(5)], 2: ["run4.arrow"], 3: []}[fan_in]


def test_partitioner_keeps_each_keys_rows_in_order(tmp_path: Path) -> None:
    schema = pa.schema([("key", pa.int64()), ("seq", pa.int64())])
    keys = np.random.default_rng(1).integers(0, 40, 10_000)
    with SpillDir(tmp_path) as spill:
        part = Partitioner(spill.path, 6, schema, flush_rows=500)
        for lo in range(0, len(keys), 777):
            k = keys[lo : lo + 777]
            part.add(bucket_of(k, 6), {"key": k, "seq": np.arange(lo, lo + len(k))})
        part.close()
        got = [pa.Table.from_batches(list(part.read(b))).to_pandas() for b in range(6)]
        assert sum(part.rows) == len(keys)
        assert (tmp_path / spill.path.name).is_dir()
    assert not spill.path.exists()
    for b, df in enumerate(got):
        assert (bucket_of(df["key"].to_numpy(), 6) == b).all()
        assert df["seq"].is_monotonic_increasing
    assert sorted(pd.concat(got)["seq"]) == list(range(len(keys)))


@pytest.mark.parametrize("kind", ["tasks", "placements"])
def test_row_group_writer_matches_the_one_shot_writer(tmp_path: Path, kind: str) -> None:
    n = 1000
    rng = np.random.default_rng(3)
    if kind == "tasks":
        df = pd.DataFrame(
            {
                "job_id": np.arange(n), "task_index": np.zeros(n, np.int32),
                "user": rng.choice(["a", "b"], n), "submit_s": np.arange(n) * 1.5,
                "cpu": rng.random(n), "mem": rng.random(n),
                "run_s": np.where(rng.random(n) < 0.2, np.nan, 3.0),
                "end_state": "finish", "attempts": np.ones(n, np.int32),
                "instances": np.ones(n, np.int32), "constraint": None, "parents": None,
            }
        )  # fmt: skip
        write_tasks(df, tmp_path / "one.parquet", row_group_size=64)
    else:
        df = pd.DataFrame(
            {
                "job_id": np.arange(n), "task_index": np.zeros(n, np.int32),
                "run": np.zeros(n, np.int32), "machine": rng.choice(["1", "22"], n),
                "start_s": np.arange(n) * 1.0, "end_s": np.arange(n) * 1.0 + 2,
                "end_event": "finish", "censored": False, "cpu": rng.random(n),
                "mem": rng.random(n),
            }
        )  # fmt: skip
        write_placements(df, tmp_path / "one.parquet", row_group_size=64)
    w = RowGroupWriter(tmp_path / "many.parquet", kind, row_group_size=64)
    for lo, hi in [(0, 3), (3, 200), (200, 201), (201, 777), (777, n)]:
        w.write(df.iloc[lo:hi])
    w.close()
    assert (tmp_path / "many.parquet").read_bytes() == (tmp_path / "one.parquet").read_bytes()
    assert pq.ParquetFile(tmp_path / "many.parquet").num_row_groups == 16
    aborted = RowGroupWriter(tmp_path / "gone.parquet", kind)
    aborted.write(df.iloc[:10])
    aborted.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["many.parquet", "one.parquet"]
