"""docs/compare.md shows docs/examples/compare_runs.py verbatim, and the example runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLE = DOCS / "examples" / "compare_runs.py"


def test_page_shows_the_example_verbatim() -> None:
    page = (DOCS / "compare.md").read_text()
    assert f"```python\n{EXAMPLE.read_text()}```" in page


def test_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("compare_runs", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    c = module.main(tmp_path)
    assert len(c.table) == 6 and c.common_jobs == 12 and c.jobs == 36
    assert c.table.loc["servers=20/slots-16", "djct_mean_s"] > 0  # Slots waits on the small pool
    # the small run's rows are paired with its first row; the large run's (another pool) are not
    assert not c.paired and list(c.table["paired"]) == [True] * 3 + [False] * 3
    assert c.differences == {"cluster.servers": {"servers=20": 20, "servers=40": 40}}
    assert (tmp_path / "compare" / "report.md").is_file()
    out = capsys.readouterr().out
    assert "'excluded_jobs': 22, 'jobs': 14" in out
    assert "they differ in: cluster.servers 20 (servers=20), 40 (servers=40)" in out
    assert "common job set: 12 jobs completed under every row (of 36 jobs" in out
