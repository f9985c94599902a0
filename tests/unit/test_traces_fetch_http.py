"""The downloader against an HTTP server on 127.0.0.1 that serves the shared folder's layout.

Every test talks to a ``http.server`` started here on a free loopback port (never the internet) and
counts the requests it receives: the Google sample arrives verified, a corrupted file is refused
with both hashes and not kept, a second run requests nothing, and ``../shared`` is used as is
when present.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from fairsim.cli import main
from fairsim.errors import TraceError
from fairsim.experiments.kit import Options
from fairsim.traces.fetch import (
    MACHINE_EVENTS,
    URL_ENV_VAR,
    base_url,
    fetch_files,
    fetch_google_2011,
    file_sha256,
    google_2011_sample,
    parse_sha256sum,
    part_path,
    sample_entries,
)
from fairsim.traces.google2011 import convert_google_2011
from fairsim.traces.paths import DATA_ENV_VAR, data_dir

PART1 = part_path("task_events", 1)
SAMPLE_FILES = [MACHINE_EVENTS, *(part_path("task_events", p) for p in range(14))]


@contextmanager
def serve(root: Path) -> Iterator[tuple[str, list[str]]]:
    """Serve ``root`` on 127.0.0.1 (a free port) in a thread; yield its URL and the GET paths."""
    requests: list[str] = []

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/", requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _gets(paths: list[str]) -> list[str]:
    return sorted(p.lstrip("/") for p in paths)


@dataclass
class Fetched:
    folder: Path  # what google_2011_sample returned
    cache: Path  # FAIRSIM_DATA_DIR during the fetch
    url: str
    requests: list[str]  # every GET the server has received so far
    first_run: list[str]  # the GETs of the fetch itself


@pytest.fixture(scope="module")
def fetched(google_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fetched]:
    """A fresh machine: no shared folder, the cache and the URL given by the environment."""
    tmp = tmp_path_factory.mktemp("fresh")
    with serve(google_dir) as (url, requests), pytest.MonkeyPatch.context() as mp:
        mp.setenv(DATA_ENV_VAR, str(tmp / "cache"))
        mp.setenv(URL_ENV_VAR, url)
        folder = google_2011_sample(tmp / "no-shared", progress=False)
        yield Fetched(folder, tmp / "cache", url, requests, list(requests))


def test_sample_entries_are_googles(google_dir: Path) -> None:
    google = parse_sha256sum(google_dir / "SHA256SUM")
    ours = sample_entries()
    assert sorted(ours) == sorted(SAMPLE_FILES)
    assert all(google[rel] == digest for rel, digest in ours.items())
    assert sum((google_dir / rel).stat().st_size for rel in ours) == 29_848_488


def test_fresh_machine_fetches_the_sample_verified(fetched: Fetched, google_dir: Path) -> None:
    folder = fetched.folder
    assert folder == fetched.cache / "google-2011"
    assert _gets(fetched.first_run) == sorted(SAMPLE_FILES)  # one request per file, nothing else
    for rel in SAMPLE_FILES:
        assert file_sha256(folder / rel) == sample_entries()[rel]
        assert (folder / rel).read_bytes() == (google_dir / rel).read_bytes()
    leftovers = [p.name for p in folder.rglob("*") if p.is_file() and p.name.startswith(".")]
    assert leftovers == []


def test_second_run_uses_the_cache_without_a_request(fetched: Fetched, tmp_path: Path) -> None:
    before = len(fetched.requests)
    again = google_2011_sample(
        tmp_path / "no-shared", cache=fetched.cache, url=fetched.url, progress=False
    )
    assert again == fetched.folder
    assert len(fetched.requests) == before


def test_shared_folder_is_used_when_present(google_dir: Path, tmp_path: Path) -> None:
    with serve(google_dir) as (url, requests):
        got = google_2011_sample(google_dir.parent.parent, cache=tmp_path, url=url)
    assert got == google_dir
    assert requests == []
    assert list(tmp_path.iterdir()) == []


def test_corrupted_download_is_refused_and_not_kept(google_dir: Path, tmp_path: Path) -> None:
    served = tmp_path / "served"
    (served / "task_events").mkdir(parents=True)
    data = bytearray((google_dir / PART1).read_bytes())
    data[1000] ^= 0xFF
    (served / PART1).write_bytes(bytes(data))
    bad = file_sha256(served / PART1)
    good = sample_entries()[PART1]
    dest = tmp_path / "cache"
    with serve(served) as (url, requests), pytest.raises(TraceError) as err:
        fetch_files([PART1], dest, entries=sample_entries(), url=url, progress=False)
    expected = (
        f"{PART1}: SHA-256 mismatch of the file downloaded from {url}{PART1} "
        f"(expected {good}, got {bad}); not kept"
    )
    assert str(err.value) == expected
    assert _gets(requests) == [PART1]
    assert not dest.exists()  # neither the file, a temporary nor the folders made for them


def test_corrupted_cached_copy_is_fetched_again(google_dir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "cache"
    (dest / "task_events").mkdir(parents=True)
    (dest / PART1).write_bytes(b"truncated")
    with serve(google_dir) as (url, requests):
        got = fetch_files([PART1], dest, entries=sample_entries(), url=url, progress=False)
    assert got == [dest / PART1]
    assert _gets(requests) == [PART1]
    assert file_sha256(dest / PART1) == sample_entries()[PART1]


def test_progress_bar_per_file(
    google_dir: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with serve(google_dir) as (url, _):
        fetch_google_2011(
            [1], tmp_path, tables=("task_events", "machine_events"), url=url, progress=True
        )
    err = capfd.readouterr().err
    assert re.search(rf"{re.escape(PART1)}: 100%\|.*\| 925k/925k", err), err
    assert re.search(rf"{re.escape(MACHINE_EVENTS)}: 100%\|.*\| 347k/347k", err), err


def test_missing_file_is_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with serve(tmp_path / "empty") as (url, requests), pytest.raises(TraceError) as err:
        fetch_files([PART1], tmp_path / "cache", entries=sample_entries(), url=url, progress=False)
    assert re.fullmatch(
        rf"{re.escape(url + PART1)}: download failed \(404 Client Error: File not found for "
        rf"url: {re.escape(url + PART1)}\)",
        str(err.value),
    ), str(err.value)
    assert _gets(requests) == [PART1]
    # nothing behind: it left an empty cache/task_events/ (the download's folders are removed)
    assert not (tmp_path / "cache").exists()
    (tmp_path / "dest").mkdir()
    argv = ["trace", "fetch", "google-2011", "--parts", "1", "--dest", str(tmp_path / "dest")]
    with serve(tmp_path / "empty") as (url, _), pytest.MonkeyPatch.context() as mp:
        mp.setenv(URL_ENV_VAR, url)
        assert main([*argv, "--no-progress"]) == 2
    assert list((tmp_path / "dest").iterdir()) == []  # an existing --dest is kept, empty


def test_unlisted_file_is_refused_before_any_request(google_dir: Path, tmp_path: Path) -> None:
    with serve(google_dir) as (url, requests):
        with pytest.raises(TraceError, match=r"^task_events/part-00020-of-00500\.csv\.gz: not in "):
            fetch_google_2011([1, 20], tmp_path, url=url, progress=False)
    assert requests == []


def test_base_url_and_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(URL_ENV_VAR, raising=False)
    assert base_url() == "https://commondatastorage.googleapis.com/clusterdata-2011-2/"
    assert base_url("http://127.0.0.1:8000/mirror") == "http://127.0.0.1:8000/mirror/"
    monkeypatch.setenv(URL_ENV_VAR, "file:///tmp/x")
    with pytest.raises(TraceError, match=r"^FAIRSIM_GOOGLE_2011_URL='file:///tmp/x': expected an"):
        base_url()
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "d"))
    assert data_dir() == tmp_path / "d"
    monkeypatch.delenv(DATA_ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "fairsim"  # pooch's os_cache on Linux


def test_cli_trace_fetch(
    google_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(DATA_ENV_VAR, str(tmp_path / "cache"))
    with serve(google_dir) as (url, requests):
        monkeypatch.setenv(URL_ENV_VAR, url)
        assert main(["trace", "fetch", "google-2011", "--parts", "1", "--no-progress"]) == 0
    dest = tmp_path / "cache" / "google-2011"
    assert capsys.readouterr().out.split() == [str(dest / PART1), str(dest / MACHINE_EVENTS)]
    assert _gets(requests) == sorted([PART1, MACHINE_EVENTS])
    served = tmp_path / "served"
    (served / "task_events").mkdir(parents=True)
    (served / PART1).write_bytes(b"not the part")
    with serve(served) as (url, _):
        monkeypatch.setenv(URL_ENV_VAR, url)
        args = ["trace", "fetch", "google-2011", "--parts", "1", "--tables", "task_events"]
        assert main([*args, "--dest", str(tmp_path / "d"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"fairsim: error: {PART1}: SHA-256 mismatch of the file downloaded")


def test_reproductions_read_the_fetched_sample(
    fetched: Fetched, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """drfh-google and udrf, without a shared folder, point trace.path at the fetched sample."""
    import fairsim.experiments.drfh.experiment as drfh
    import fairsim.experiments.udrf.experiment as udrf

    before = len(fetched.requests)
    monkeypatch.setenv(DATA_ENV_VAR, str(fetched.cache))
    monkeypatch.setenv(URL_ENV_VAR, fetched.url)
    monkeypatch.chdir(tmp_path)
    seen: list[str | None] = []

    class Stop(Exception):
        pass

    for module in (drfh, udrf):
        real = module.load_config

        def spy(*args: Any, real: Any = real, **kwargs: Any) -> Any:
            seen.append(real(*args, **kwargs).trace.path)
            raise Stop

        monkeypatch.setattr(module, "load_config", spy)
    with pytest.raises(Stop):
        drfh.run_experiment(Options(tmp_path / "d", tmp_path / "absent", progress=False))
    with pytest.raises(Stop):
        udrf.run_experiment(
            Options(tmp_path / "u", tmp_path / "absent", progress=False, seeds=1, jobs=1)
        )
    assert seen == [str(fetched.folder)] * 2
    assert len(fetched.requests) == before


@pytest.mark.slow
def test_fetched_sample_converts_to_the_same_tasks(
    fetched: Fetched, google_tasks: Path, tmp_path: Path
) -> None:
    """The tasks table of the fetched files equals the one of ../shared (job_events, which the
    fetched sample lacks, are only cross-checked by the converter)."""
    report = convert_google_2011(fetched.folder, tmp_path, parts=list(range(14)), progress=False)
    assert report["missing_tables"] == ["job_events"]
    assert report["tasks"] == 614_019
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "tasks.parquet"), pd.read_parquet(google_tasks)
    )
    assert len(pd.read_parquet(tmp_path / "servers.parquet")) == 12_583
