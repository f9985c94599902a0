"""Shared fixtures of every tier. Tests needing ``../shared`` fail (never skip) when it is missing.

Tiers (``make test`` runs them all): ``unit/`` (one component each, constructed examples, one-line
errors), ``properties/`` (hypothesis invariants and optimised-versus-naive references),
``regression/`` (the papers' published numbers and worked examples, pinned real-trace slices) and
``reproductions/`` (the quick paper reproductions end to end).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairsim.traces.paths import google_2011_dir

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"


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


def random_frame(rng: np.random.Generator, n: int, n_users: int, horizon: float) -> pd.DataFrame:
    """A small random workload in the canonical column layout."""
    return pd.DataFrame(
        {
            "job_id": rng.integers(0, max(1, n // 3), n).astype(np.int64),
            "task_index": np.arange(n, dtype=np.int32),
            "user": rng.integers(0, n_users, n).astype(str),
            "submit_s": np.round(rng.uniform(0, horizon, n), 1),
            "cpu": rng.uniform(0.0, 0.6, n),
            "mem": rng.uniform(0.0, 0.6, n),
            "run_s": np.round(rng.uniform(1, horizon / 3, n), 1),
        }
    )
