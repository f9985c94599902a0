"""Checksum logic of the downloader, offline (no network)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairsim.errors import TraceError
from fairsim.traces.fetch import (
    fetch_google_2011,
    known_hash,
    parse_parts,
    parse_sha256sum,
    part_path,
    verify_file,
)
from fairsim.traces.paths import google_2011_dir

PART1 = "task_events/part-00001-of-00500.csv.gz"


@pytest.fixture(scope="module")
def entries() -> dict[str, str]:
    return parse_sha256sum(google_2011_dir() / "SHA256SUM")


def test_parse_real_sha256sum(entries: dict[str, str]) -> None:
    assert len(entries) == 2_004
    assert PART1 in entries
    assert "schema.csv" in entries
    assert all(len(h) == 64 for h in entries.values())


def test_real_part_matches_its_listed_hash(entries: dict[str, str]) -> None:
    expected = known_hash(entries, PART1)
    assert expected.startswith("sha256:")
    verify_file(google_2011_dir() / PART1, expected)  # does not raise


def test_corrupted_copy_fails(entries: dict[str, str], tmp_path: Path) -> None:
    data = bytearray((google_2011_dir() / PART1).read_bytes())
    data[1000] ^= 0xFF
    bad = tmp_path / "part-00001-of-00500.csv.gz"
    bad.write_bytes(bytes(data))
    with pytest.raises(TraceError, match=r"SHA-256 mismatch \(expected [0-9a-f]{64}, got"):
        verify_file(bad, known_hash(entries, PART1))


def test_unlisted_path_and_bad_file(entries: dict[str, str], tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"^task_events/nope\.csv\.gz: not listed in SHA256SUM$"):
        known_hash(entries, "task_events/nope.csv.gz")
    bad = tmp_path / "SHA256SUM"
    bad.write_text("not a checksum line\n")
    with pytest.raises(TraceError, match=r"SHA256SUM:1: not a '<sha256> \*<path>' line"):
        parse_sha256sum(bad)


def test_fetch_uses_verified_local_copy_without_network(tmp_path: Path) -> None:
    """A file already in dest with the listed hash is returned without downloading."""
    dest = tmp_path / "google-2011"
    (dest / "task_events").mkdir(parents=True)
    shutil.copy(google_2011_dir() / PART1, dest / PART1)
    got = fetch_google_2011([1], dest, sha256sum=google_2011_dir() / "SHA256SUM", progress=False)
    assert got == [dest / PART1]
    with pytest.raises(TraceError, match=r"table='task_usage_x'"):
        fetch_google_2011(
            [1], dest, tables=("task_usage_x",), sha256sum=google_2011_dir() / "SHA256SUM"
        )


def test_part_path() -> None:
    assert part_path("job_events", 7) == "job_events/part-00007-of-00500.csv.gz"


def test_parse_parts_examples() -> None:
    assert parse_parts("0-13,20") == [*range(14), 20]
    assert parse_parts("5") == [5]
    assert parse_parts(" 3 , 1-2 ,3") == [1, 2, 3]
    assert parse_parts("499") == [499]


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("", "empty item"),
        ("1,,2", "empty item"),
        ("a", "bad item 'a'"),
        ("1-", "bad item '1-'"),
        ("-1", "bad item '-1'"),
        ("5-3", "reversed range '5-3'"),
        ("500", "part 500 out of range 0..499"),
        ("0-500", "part 500 out of range 0..499"),
    ],
)
def test_parse_parts_errors(spec: str, match: str) -> None:
    with pytest.raises(TraceError, match=match):
        parse_parts(spec)


def _format(parts: set[int]) -> str:
    """Compress a set of parts into ranges, e.g. {0, 1, 2, 5} -> '0-2,5'."""
    out, items = [], sorted(parts)
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1] == items[j] + 1:
            j += 1
        out.append(str(items[i]) if i == j else f"{items[i]}-{items[j]}")
        i = j + 1
    return ",".join(out)


@given(st.sets(st.integers(min_value=0, max_value=499), min_size=1, max_size=60))
def test_parse_parts_round_trip(parts: set[int]) -> None:
    assert parse_parts(_format(parts)) == sorted(parts)
    assert parse_parts(",".join(str(p) for p in parts)) == sorted(parts)
