"""The LMM-MMS reproduction (paper Section 5) on the Alibaba v2018 sample: quick run and units."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from experiments import lmm_mms_repro as repro
from traces.paths import shared_dir


def test_allocations_respect_capacity_bounds_and_sharing_incentive() -> None:
    sample = pd.DataFrame(
        {"cpu": [1.0, 2.0, 3.0], "mem": [1.0, 2.0, 3.0], "n": [2.0, 3.0, 2.0]}
    )  # the paper's Example 2 on capacity (6, 6)
    alloc = repro.allocate(sample, (6.0, 6.0))
    assert np.allclose(alloc["lmm-mms"], [2.0, 1.0, 2.0 / 3.0])
    assert np.allclose(alloc["equal"], [2.0, 1.0, 2.0 / 3.0])  # each user 2 CPU, 2 GB
    for mech in repro.MECHANISMS:
        x = alloc[mech]
        assert (x <= sample["n"].to_numpy() + 1e-9).all()
        assert (x @ sample[["cpu", "mem"]].to_numpy() <= 6.0 + 1e-9).all()


@pytest.mark.slow
def test_quick_reproduction(tmp_path: Path) -> None:
    report = repro.run_from_shared(
        shared_dir(), tmp_path / "out", quick=True, cache_dir=str(tmp_path / "c")
    )
    text = report.read_text()
    assert "| fig6: sharing incentive for every user (300 users) | PASS |" in text
    frame = pd.read_parquet(tmp_path / "out" / "samples.parquet")
    # quick: 2 scales + 4 capacities + 2 elephant shares, 10 samples, 3 mechanisms
    assert len(frame) == 8 * 10 * 3
    assert (
        frame["util_cpu"].between(0, 1 + 1e-9).all()
        and frame["util_mem"].between(0, 1 + 1e-9).all()
    )
    fig2 = frame[(frame["figure"] == "fig2") & (frame["users"] == 300)]
    assert fig2.groupby("mechanism")["util_cpu"].mean()["lmm-mms"] == pytest.approx(1.0)
    for name in ("fig2", "fig3", "fig4", "fig5", "fig6"):
        assert (tmp_path / "out" / f"{name}.png").is_file()
    # same seed, same samples
    again = repro.run_from_shared(
        shared_dir(), tmp_path / "again", quick=True, cache_dir=str(tmp_path / "c")
    )
    assert again.is_file()
    assert pd.read_parquet(tmp_path / "again" / "samples.parquet").equals(frame)
