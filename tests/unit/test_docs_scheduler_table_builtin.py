"""The docs' scheduler table (docs/hooks/generate.py) lists fairsim's built-in schedulers only:
the same text whatever is registered in the process or installed as an entry point (a plug-in's
class would be a cross-reference ``mkdocs build --strict`` cannot resolve)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

import fairsim
from fairsim.schedulers import registry
from fairsim.schedulers.drfh import BestFitDRFH

HOOK = Path(__file__).resolve().parents[2] / "docs" / "hooks" / "generate.py"


class SmallestDominantShareBestFit(BestFitDRFH):
    """A plug-in's scheduler (Best-Fit DRFH under another name)."""


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate_builtin", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_table_ignores_registered_and_entry_point_schedulers(
    generate: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = generate.scheduler_table()
    # header, rule, 19 built-ins (slots: 3 forms, udrf: 2)
    assert len(before.splitlines()) == 2 + 22
    ep = importlib.metadata.EntryPoint(
        name="sdsf-ep",
        value="my_package.sdsf:SmallestDominantShareBestFit",
        group=registry.ENTRY_POINT_GROUP,
    )
    monkeypatch.setattr(registry, "_entry_points", lambda: {"sdsf-ep": [ep]})
    fairsim.register_scheduler("sdsf-bf-docs")(SmallestDominantShareBestFit)
    try:
        assert "sdsf-ep" in registry.available() and "sdsf-bf-docs" in registry.available()
        after = generate.scheduler_table()
    finally:
        registry.unregister_scheduler("sdsf-bf-docs")
    assert after == before
    assert "SmallestDominantShareBestFit" not in after
