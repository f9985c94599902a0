"""Download official Google clusterdata-2011-2 part files, verified against Google's SHA256SUM.

Files come from ``https://commondatastorage.googleapis.com/clusterdata-2011-2/<table>/part-NNNNN-
of-00500.csv.gz`` through :mod:`pooch`; each is checked against its entry in Google's own
``SHA256SUM`` file (lines ``<hex> *<path>``), whose location is passed in (a copy lives in the
shared folder at ``traces/google-2011/SHA256SUM``; it is not shipped in the repository).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterable
from pathlib import Path

from fairsim.errors import TraceError

log = logging.getLogger(__name__)

BASE_URL = "https://commondatastorage.googleapis.com/clusterdata-2011-2/"
N_PARTS = 500
TABLES = ("task_events", "job_events", "task_usage", "task_constraints")
_SUM_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *](.+)$")
_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")


def part_path(table: str, part: int) -> str:
    """Relative path of one part file, e.g. ``task_events/part-00000-of-00500.csv.gz``."""
    return f"{table}/part-{part:05d}-of-{N_PARTS:05d}.csv.gz"


def parse_sha256sum(path: Path) -> dict[str, str]:
    """Read a ``sha256sum``-style file (``<hex> *<path>`` per line).

    Parameters
    ----------
    path : pathlib.Path
        The SHA256SUM file.

    Returns
    -------
    dict
        Relative path -> lower-case hex digest.

    Raises
    ------
    TraceError
        If the file is missing or a non-empty line is not ``<64 hex> *<path>``.
    """
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: SHA256SUM file not found")
    entries: dict[str, str] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        m = _SUM_LINE.match(line.rstrip())
        if m is None:
            raise TraceError(f"{path}:{lineno}: not a '<sha256> *<path>' line: {line[:80]!r}")
        entries[m.group(2).removeprefix("./")] = m.group(1).lower()
    return entries


def known_hash(entries: dict[str, str], relpath: str) -> str:
    """Pooch-style ``"sha256:<hex>"`` for ``relpath``.

    Parameters
    ----------
    entries : dict
        Output of :func:`parse_sha256sum`.
    relpath : str
        Path relative to the bucket root, e.g. ``task_events/part-00000-of-00500.csv.gz``.

    Returns
    -------
    str
        ``"sha256:<hex>"``.

    Raises
    ------
    TraceError
        If ``relpath`` is not listed.
    """
    try:
        return f"sha256:{entries[relpath]}"
    except KeyError:
        raise TraceError(f"{relpath}: not listed in SHA256SUM") from None


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def verify_file(path: Path, expected: str) -> None:
    """Check a file against an expected SHA-256.

    Parameters
    ----------
    path : pathlib.Path
        File to check.
    expected : str
        ``"sha256:<hex>"`` or a bare hex digest.

    Raises
    ------
    TraceError
        If the file is missing or its digest differs.
    """
    path = Path(path)
    if not path.is_file():
        raise TraceError(f"{path}: file not found")
    want = expected.split(":", 1)[1] if ":" in expected else expected
    got = file_sha256(path)
    if got != want.lower():
        raise TraceError(f"{path}: SHA-256 mismatch (expected {want.lower()}, got {got})")


def parse_parts(spec: str) -> list[int]:
    """Parse a part list such as ``"0-13,20"``.

    Parameters
    ----------
    spec : str
        Comma-separated part numbers or inclusive ranges ``a-b`` (``a <= b``), each in 0..499.

    Returns
    -------
    list of int
        Sorted, de-duplicated part numbers.

    Raises
    ------
    TraceError
        On bad syntax, a reversed range or a number outside 0..499.
    """
    parts: set[int] = set()
    items = [s.strip() for s in str(spec).split(",")]
    if not items or any(not s for s in items):
        raise TraceError(f"parts={spec!r}: expected e.g. '0-13,20' (empty item)")
    for item in items:
        m = _RANGE.match(item)
        if m is None:
            raise TraceError(f"parts={spec!r}: bad item {item!r}, expected N or A-B")
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if lo > hi:
            raise TraceError(f"parts={spec!r}: reversed range {item!r}")
        if hi >= N_PARTS:
            raise TraceError(f"parts={spec!r}: part {hi} out of range 0..{N_PARTS - 1}")
        parts.update(range(lo, hi + 1))
    return sorted(parts)


def fetch_google_2011(
    parts: list[int],
    dest: Path,
    *,
    tables: Iterable[str] = ("task_events",),
    sha256sum: Path,
    progress: bool = True,
) -> list[Path]:
    """Download and verify official clusterdata-2011-2 part files.

    Files already present with the right digest are not downloaded again (pooch's cache check).

    Parameters
    ----------
    parts : list of int
        Part numbers (0..499), e.g. from :func:`parse_parts`.
    dest : pathlib.Path
        Destination folder; files go to ``dest/<table>/part-NNNNN-of-00500.csv.gz``.
    tables : iterable of str
        Tables to fetch (``task_events``, ``job_events``, ``task_usage``, ``task_constraints``).
    sha256sum : pathlib.Path
        Google's SHA256SUM file for the bucket.
    progress : bool
        Show pooch's progress bar.

    Returns
    -------
    list of pathlib.Path
        Local paths of the verified files, in (table, part) order.

    Raises
    ------
    TraceError
        Unknown table, a part outside 0..499, a file not listed in SHA256SUM, or a download whose
        digest does not match.
    """
    import pooch  # imported lazily: only downloads need it

    entries = parse_sha256sum(sha256sum)
    dest = Path(dest)
    todo: list[str] = []
    for table in tables:
        if table not in TABLES:
            raise TraceError(f"table={table!r}: expected one of {TABLES}")
        for part in parts:
            if not 0 <= int(part) < N_PARTS:
                raise TraceError(f"part={part}: out of range 0..{N_PARTS - 1}")
            todo.append(part_path(table, int(part)))
    out: list[Path] = []
    for rel in todo:
        expected = known_hash(entries, rel)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        log.info("fetching %s", rel)
        try:
            got = pooch.retrieve(
                url=BASE_URL + rel,
                known_hash=expected,
                fname=target.name,
                path=target.parent,
                progressbar=progress,
            )
        except ValueError as exc:  # pooch raises ValueError on hash mismatch
            raise TraceError(f"{rel}: download failed verification ({exc})") from None
        verify_file(Path(got), expected)
        out.append(Path(got))
    return out
