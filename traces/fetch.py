"""Download official Google clusterdata-2011-2 files, verified against Google's SHA256SUM.

Files come from ``<base URL><table>/part-NNNNN-of-00500.csv.gz``, the base URL being Google's
bucket ``https://commondatastorage.googleapis.com/clusterdata-2011-2/`` unless
``FAIRSIM_GOOGLE_2011_URL`` (or a ``base_url`` argument) names another, e.g. a mirror or a test
server. :mod:`pooch`'s HTTP downloader streams each file (with a progress bar) into a temporary file
beside its destination; the file is kept only when its SHA-256 equals the entry of Google's own
``SHA256SUM`` file (lines ``<hex> *<path>``). fairsim ships the entries of the sample that the paper
reproductions read (:func:`sample_entries`: task_events parts 0-13 and machine_events, copied from
Google's list); other files need Google's whole list (a copy lives in the shared folder at
``traces/google-2011/SHA256SUM``).

:func:`google_2011_sample` is what the reproductions call: the shared folder's
``traces/google-2011`` when it exists, else the sample fetched once into the download cache
(:func:`fairsim.traces.paths.data_dir`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
from collections.abc import Iterable
from pathlib import Path

from fairsim.errors import TraceError

log = logging.getLogger(__name__)

BASE_URL = "https://commondatastorage.googleapis.com/clusterdata-2011-2/"
#: Overrides :data:`BASE_URL` (tests point it at a server on the loopback address).
URL_ENV_VAR = "FAIRSIM_GOOGLE_2011_URL"
N_PARTS = 500
TABLES = ("task_events", "job_events", "task_usage", "task_constraints", "machine_events")
#: machine_events is one file (the whole table), whatever the part numbers.
MACHINE_EVENTS = "machine_events/part-00000-of-00001.csv.gz"
#: The task_events parts of the sample the reproductions read (the first ~19.7 h of the trace).
SAMPLE_PARTS = tuple(range(14))
#: Google's SHA-256 of the sample's files, copied from its SHA256SUM (a test checks each against
#: Google's whole list): machine_events, then task_events parts 0-13; 29,848,488 bytes in all.
_SAMPLE_MACHINE_EVENTS_SHA256 = "fc44b8d2b33a96a261382488789855be7a0ce338888c99930ff45cb592249664"
_SAMPLE_TASK_EVENTS_SHA256 = (
    "eae977d521bc6ed5d8deef56f1e06009d41844d4eb9a7e308e610d68e1b10f18",
    "c122f250cf1f9817dc722a5b7457eb5caf122619accfada078de66d40f311501",
    "3534b71a7c6a3952f192485c4726119ff8d904fc2d7b828b8d96987db4aab767",
    "23b3df1b0e6c06d56c0cb28359635931bd0bbb7e584423537e23104580c56740",
    "84f2198e7a083021294ce9c764ba4dcbed6baad30746f257b3580874f802e88e",
    "44dc8e710448bc35a1cb51bbb0b34a8cdf58284606b6038d6e4a016aeee03cfa",
    "39de1a6b85a1f6709b254f94aa46b3c9c2e06c0c6400ec33ce58a66877932cb3",
    "cb64ab984d45ed03f79acca56acfa86f9e0c9a65d145c360187870e0431c8707",
    "a053ab15fb99bd756659214c524e797095465be22193ab552ac6fefb67013733",
    "76641e0bb26bcc102e97b3831f3e2af848c3972eea9b7817d52fef7b5e2c0fa6",
    "36349d2955c59aca87d15e720d0b65f86215125d8dfba43621ed8c5490b571c1",
    "bc212ae79591d733255edc3dd729d66a2ae0294eb4d84e4ee0cc7fcef3f026eb",
    "456adb8ebb712f0d9fc02e419e6deb4cf91202123707ba6c9c8c3af048dc8186",
    "927f9e9b1d8bd9fa1a7739169d8db6353454a7475a741adacb2462e8de93d02d",
)
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
    return _parse_sum_lines(path.read_text(encoding="utf-8"), str(path))


def _parse_sum_lines(text: str, where: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _SUM_LINE.match(line.rstrip())
        if m is None:
            raise TraceError(f"{where}:{lineno}: not a '<sha256> *<path>' line: {line[:80]!r}")
        entries[m.group(2).removeprefix("./")] = m.group(1).lower()
    return entries


def sample_entries() -> dict[str, str]:
    """Google's SHA256SUM entries of the sample, as fairsim ships them.

    Returns
    -------
    dict
        Relative path -> lower-case hex digest: machine_events and task_events parts 0-13
        (15 entries, the files :func:`google_2011_sample` fetches).
    """
    entries = {MACHINE_EVENTS: _SAMPLE_MACHINE_EVENTS_SHA256}
    for part, digest in zip(SAMPLE_PARTS, _SAMPLE_TASK_EVENTS_SHA256, strict=True):
        entries[part_path("task_events", part)] = digest
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


def base_url(url: str | None = None) -> str:
    """The bucket root files are fetched from, ending in ``/``.

    Parameters
    ----------
    url : str, optional
        An explicit root; default ``FAIRSIM_GOOGLE_2011_URL`` when set, else :data:`BASE_URL`.

    Returns
    -------
    str

    Raises
    ------
    TraceError
        If the root is not an ``http://`` or ``https://`` URL.
    """
    root = url or os.environ.get(URL_ENV_VAR) or BASE_URL
    if not root.startswith(("http://", "https://")):
        raise TraceError(f"{URL_ENV_VAR}={root!r}: expected an http:// or https:// URL")
    return root if root.endswith("/") else root + "/"


def fetch_files(
    relpaths: Iterable[str],
    dest: Path,
    *,
    entries: dict[str, str],
    url: str | None = None,
    progress: bool = True,
) -> list[Path]:
    """Download files of the bucket into ``dest``, each verified against its SHA-256.

    A file already in ``dest`` with the listed digest is kept and not requested again. Otherwise
    the file is streamed (pooch's HTTP downloader, with one progress bar per file) into a temporary
    file in its destination folder and renamed into place only if its SHA-256 matches; a file that
    does not match is deleted.

    Parameters
    ----------
    relpaths : iterable of str
        Paths relative to the bucket root, e.g. ``task_events/part-00000-of-00500.csv.gz``.
    dest : pathlib.Path
        Destination folder; a file goes to ``dest/<relpath>``.
    entries : dict
        Relative path -> hex SHA-256 (:func:`parse_sha256sum` or :func:`sample_entries`).
    url : str, optional
        The bucket root (:func:`base_url`).
    progress : bool
        Show a progress bar per downloaded file (on stderr).

    Returns
    -------
    list of pathlib.Path
        Local paths of the verified files, in the order of ``relpaths``.

    Raises
    ------
    TraceError
        A path not listed in ``entries``, a download that fails (HTTP error, no connection) or a
        downloaded file whose SHA-256 differs from the listed one (``<relpath>: SHA-256 mismatch
        ... (expected <hex>, got <hex>); not kept``).
    """
    root = base_url(url)
    dest = Path(dest)
    out: list[Path] = []
    for rel in relpaths:
        want = known_hash(entries, rel).split(":", 1)[1]
        target = dest / rel
        if target.is_file() and file_sha256(target) == want:
            log.debug("%s: verified copy in %s", rel, target)
        else:
            if target.exists():
                log.info("%s: cached copy does not match its SHA-256; fetching it again", rel)
            _download(root + rel, target, rel, want, progress)
        out.append(target)
    return out


def _download(url: str, target: Path, rel: str, want: str, progress: bool) -> None:
    """Stream ``url`` into ``target`` through a temporary file; keep it only if it hashes to
    ``want``. A failed download leaves no folder it created behind."""
    import pooch  # imported lazily: only downloads need it
    import requests  # pooch's HTTP client
    from tqdm import tqdm

    from fairsim.atomic import _created_parents, _remove_empty

    created = _created_parents(target)  # removed again if the download fails: nothing left
    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("fetching %s from %s", rel, url)
    # a unique name beside the target (created by the download with the umask's permissions)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.download")
    # pooch sets the bar's total from Content-Length and draws only a bar that is true, i.e. whose
    # total is non-zero; the tiny delay keeps the placeholder total of 1 from being drawn
    bar = tqdm(total=1, desc=rel, unit="B", unit_scale=True, delay=1e-9) if progress else None
    try:
        downloader = pooch.HTTPDownloader(progressbar=bar or False, chunk_size=1 << 16)
        try:
            downloader(url, str(tmp), None)
        except requests.RequestException as exc:
            reason = " ".join(str(exc).split())
            raise TraceError(f"{url}: download failed ({reason})") from None
        got = file_sha256(tmp)
        if got != want:
            raise TraceError(
                f"{rel}: SHA-256 mismatch of the file downloaded from {url} (expected {want}, "
                f"got {got}); not kept"
            )
        os.replace(tmp, target)
    finally:
        if bar is not None:
            bar.close()
        tmp.unlink(missing_ok=True)
        if not target.exists():
            _remove_empty(created)


def fetch_google_2011(
    parts: list[int],
    dest: Path,
    *,
    tables: Iterable[str] = ("task_events",),
    sha256sum: Path | None = None,
    url: str | None = None,
    progress: bool = True,
) -> list[Path]:
    """Download and verify official clusterdata-2011-2 files.

    Files already present with the right digest are not downloaded again.

    Parameters
    ----------
    parts : list of int
        Part numbers (0..499), e.g. from :func:`parse_parts`.
    dest : pathlib.Path
        Destination folder; files go to ``dest/<table>/part-NNNNN-of-00500.csv.gz`` (and
        ``dest/machine_events/part-00000-of-00001.csv.gz``).
    tables : iterable of str
        Tables to fetch (``task_events``, ``job_events``, ``task_usage``, ``task_constraints``,
        ``machine_events``; the last is one file, whatever ``parts``).
    sha256sum : pathlib.Path, optional
        Google's SHA256SUM file for the bucket; default: the entries fairsim ships
        (:func:`sample_entries`, machine_events and task_events parts 0-13).
    url : str, optional
        The bucket root (:func:`base_url`).
    progress : bool
        Show a progress bar per downloaded file.

    Returns
    -------
    list of pathlib.Path
        Local paths of the verified files, in (table, part) order.

    Raises
    ------
    TraceError
        Unknown table, a part outside 0..499, a file not listed in SHA256SUM, a failed download
        or a download whose digest does not match.
    """
    entries = sample_entries() if sha256sum is None else parse_sha256sum(sha256sum)
    todo: list[str] = []
    for table in tables:
        if table not in TABLES:
            raise TraceError(f"table={table!r}: expected one of {TABLES}")
        if table == "machine_events":
            todo.append(MACHINE_EVENTS)
            continue
        for part in parts:
            if not 0 <= int(part) < N_PARTS:
                raise TraceError(f"part={part}: out of range 0..{N_PARTS - 1}")
            todo.append(part_path(table, int(part)))
    for rel in todo:  # every file listed before any download
        if sha256sum is None and rel not in entries:
            raise TraceError(
                f"{rel}: not in the sample whose SHA-256 fairsim ships (machine_events, "
                "task_events parts 0-13); give Google's SHA256SUM file (--sha256sum)"
            )
        known_hash(entries, rel)
    return fetch_files(todo, dest, entries=entries, url=url, progress=progress)


def google_2011_sample(
    shared: Path | None = None,
    *,
    cache: Path | None = None,
    url: str | None = None,
    progress: bool = True,
) -> Path:
    """The folder of the Google 2011 sample that the paper reproductions read.

    ``<shared>/traces/google-2011`` when that folder exists (nothing is fetched). Otherwise the
    sample (task_events parts 0-13 and machine_events, 29.8 MB) is fetched once into
    ``<cache>/google-2011``, each file verified against Google's SHA-256; later calls find the
    verified files there and request nothing. Both folders have the same layout, so a run reads
    the same bytes from either.

    Parameters
    ----------
    shared : pathlib.Path, optional
        The shared folder (``--shared``); default :func:`fairsim.traces.paths.shared_dir` when
        it resolves.
    cache : pathlib.Path, optional
        The download cache; default :func:`fairsim.traces.paths.data_dir` (``FAIRSIM_DATA_DIR``,
        else ``~/.cache/fairsim`` on Linux).
    url : str, optional
        The bucket root (:func:`base_url`; ``FAIRSIM_GOOGLE_2011_URL``).
    progress : bool
        Show a progress bar per downloaded file.

    Returns
    -------
    pathlib.Path
        A folder holding ``task_events/`` and ``machine_events/``.

    Raises
    ------
    TraceError
        A failed download or a file whose SHA-256 does not match (:func:`fetch_files`).
    """
    from fairsim.traces.paths import data_dir, shared_dir

    if shared is None:
        try:
            shared = shared_dir()
        except TraceError:
            shared = None
    if shared is not None and (Path(shared) / "traces" / "google-2011").is_dir():
        return Path(shared) / "traces" / "google-2011"
    dest = Path(cache if cache is not None else data_dir()) / "google-2011"
    missing = Path(shared) / "traces" / "google-2011" if shared is not None else "shared folder"
    log.info(
        "%s not found: the Google 2011 sample is read from %s (fetched if missing)", missing, dest
    )
    entries = sample_entries()
    fetch_files(sorted(entries), dest, entries=entries, url=url, progress=progress)
    return dest
