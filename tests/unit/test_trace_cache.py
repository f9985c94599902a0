"""Where the trace cache lives: the user's cache folder (or ``trace.cache_dir``), never the working
directory (docs/traces.md, "Trace cache")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import fairsim
from fairsim.scenario.trace_cache import default_cache_dir


def _config(**trace: Any) -> dict[str, Any]:
    return {
        "name": "cache",
        "trace": {
            "format": "synthetic",
            "model": "complex",
            "n_tasks": 300,
            "duration_s": 3600,
            **trace,
        },
        "cluster": {"servers": 20},
        "schedulers": ["ff-drfh"],
        "collect": {"horizon_s": 2e6},
    }


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_simulate_with_out_elsewhere_leaves_the_working_directory_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = tmp_path / "notebook"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("FAIRSIM_CACHE_DIR", str(tmp_path / "user-cache"))
    results = fairsim.simulate(_config(), out=tmp_path / "a")
    assert _files(cwd) == []  # no results/, no cache
    # the complex workload was written once into the user cache, under its usual key
    cached = list((tmp_path / "user-cache").glob("*/tasks.parquet"))
    assert len(cached) == 1 and cached[0].parent.name.startswith("synthetic-complex")
    assert (tmp_path / "a" / "ff-drfh" / "tasks.parquet").is_file()
    # a cache named in the config gives byte-identical results and the same cache folder name
    fairsim.simulate(_config(cache_dir=str(tmp_path / "c2")), out=tmp_path / "b")
    assert _files(cwd) == []
    assert [p.name for p in (tmp_path / "c2").iterdir()] == [cached[0].parent.name]
    for table in ("tasks", "jobs", "users", "utilization"):
        a = (tmp_path / "a" / "ff-drfh" / f"{table}.parquet").read_bytes()
        assert a == (tmp_path / "b" / "ff-drfh" / f"{table}.parquet").read_bytes(), table
    assert results["ff-drfh"].summary["tasks"] > 300  # instances expanded


def test_default_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FAIRSIM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "fairsim" / "traces"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "fairsim" / "traces"
    monkeypatch.setenv("FAIRSIM_CACHE_DIR", "~/elsewhere")
    assert default_cache_dir() == tmp_path / "home" / "elsewhere"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FAIRSIM_CACHE_DIR", "rel")  # a relative value: made absolute once
    assert default_cache_dir() == tmp_path / "rel"
