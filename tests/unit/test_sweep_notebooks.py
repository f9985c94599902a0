"""The plotting notebooks in ``experiments/notebooks/`` run end to end on a tiny sweep."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

from fairsim.scenario.sweep import load_sweep, run_sweep

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
    drawn_by_notebook = sum(c.source.count("plt.subplots(") for c in nb.cells)
    nb.cells.append(nbformat.v4.new_code_cell("print(len(plt.get_fignums()))"))  # figures drawn
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
    # the notebook read the tiny sweep, not its default folder: 2 sizes x 2 seeds, all ok
    runs = pd.read_parquet(tiny_sweep / "runs.parquet")
    n = runs["run_id"].nunique()
    first = next(c for c in nb.cells if c.cell_type == "code")
    shown = [o["data"]["text/plain"] for o in first.outputs if "data" in o]
    assert n == 4 and shown[0] == repr(f"{n} runs, {n} ok; grid paths: ['cluster.servers']")
    # every figure of the notebook was drawn (the cell added last counts them)
    assert drawn_by_notebook >= 1
    assert nb.cells[-1].outputs[0]["text"].strip() == str(drawn_by_notebook)
