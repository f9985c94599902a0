"""Shared fixtures of every tier. Tests needing ``../shared`` fail (never skip) when it is missing.

Tiers (``make test`` runs them all): ``unit/`` (one component each, constructed examples, one-line
errors), ``properties/`` (hypothesis invariants and optimised-versus-naive references),
``regression/`` (the papers' published numbers and worked examples, pinned real-trace slices) and
``reproductions/`` (the quick paper reproductions end to end).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fairsim.traces.paths import google_2011_dir

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"


@pytest.fixture(scope="session")
def _trace_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One trace cache for the session, outside the user's home cache."""
    return tmp_path_factory.mktemp("trace-cache")


@pytest.fixture(autouse=True)
def _isolated_trace_cache(_trace_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test converts traces into the session's temporary cache (``FAIRSIM_CACHE_DIR``),
    never into ``~/.cache/fairsim/traces`` (docs/traces.md, "Trace cache"); a test of the
    default location removes the variable itself."""
    monkeypatch.setenv("FAIRSIM_CACHE_DIR", str(_trace_cache))


@pytest.fixture(scope="session")
def google_dir() -> Path:
    """The real Google 2011 sample (``$FAIRSIM_SHARED/traces/google-2011``)."""
    return google_2011_dir()


@pytest.fixture(scope="session")
def google_tasks(google_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Canonical tasks.parquet of task_events parts 0-13, converted once per session."""
    from fairsim.traces.google2011 import convert_google_2011

    out = tmp_path_factory.mktemp("google-canonical")
    convert_google_2011(google_dir, out, parts=list(range(14)), progress=False)
    return out / "tasks.parquet"
