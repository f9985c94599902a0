"""The plotting notebooks in ``experiments/notebooks/`` run end to end on a tiny sweep."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from fairsim.experiments.scenario.sweep import load_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "experiments" / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-sweep")
    frame = run_sweep(
        load_sweep(ROOT / "configs" / "sweeps" / "tiny.yaml"),
        out,
        executor="local:2",
        progress=False,
    )
    assert set(frame["status"]) == {"ok"}
    return out


def test_there_are_notebooks() -> None:
    assert 1 <= len(NOTEBOOKS) <= 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, tiny_sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRSIM_SWEEP_OUT", str(tiny_sweep))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    errors = [
        o
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors
    assert os.environ["FAIRSIM_SWEEP_OUT"] == str(tiny_sweep)
