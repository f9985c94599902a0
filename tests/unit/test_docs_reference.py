"""The generated pages of the documentation site (docs/hooks/generate.py) are complete.

``make docs`` fails on any of these too (``mkdocs build --strict``); the tests catch them in
``make test`` without building the site.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from pydantic import BaseModel

from fairsim.scenario.config import RunConfig
from fairsim.schedulers.registry import available

HOOK = Path(__file__).resolve().parents[2] / "docs" / "hooks" / "generate.py"


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", HOOK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_config_key_is_described(generate: ModuleType) -> None:
    models = generate._models(RunConfig)
    names = [m.__name__ for _, m in models]
    assert names == [
        "RunConfig",
        "TraceCommon",
        "ConstraintModel",
        "GoogleTrace",
        "AlibabaTrace",
        "CanonicalTrace",
        "SyntheticTrace",
        "InlineTrace",
        "InlineUser",
        "ClusterConfig",
        "ServerClass",
        "CollectConfig",
        "FairnessConfig",
        "PreemptionLoopConfig",
        "LeafRule",
    ]
    missing = [
        f"{m.__name__}.{k}"
        for _, m in models
        for k, f in m.model_fields.items()
        if not (f.description or "").strip()
    ]
    assert missing == []


def test_config_reference_has_a_row_per_key(generate: ModuleType) -> None:
    page = generate.config_reference()
    model: type[BaseModel]
    for _, model in generate._models(RunConfig):
        assert f"## {model.__name__}\n" in page
        for key in model.model_fields:
            assert f"| `{key}` |" in page, f"{model.__name__}.{key}"
    assert "| `end_s` | number or null | null |" in page
    assert "| `servers` | integer or null | null | > 0 |" in page
    # an annotated type in the words of what the validator accepts, never its repr (which
    # holds memory addresses and made the page differ from one run to the next)
    assert "| `schedulers` | list of string or mapping | **required** |" in page
    assert " at 0x" not in page


def test_scheduler_table_lists_the_registry(generate: ModuleType) -> None:
    table = generate.scheduler_table().splitlines()
    names = [row.split("`")[1] for row in table[2:]]
    assert names == list(available(plugins=False))
    assert "[`BestFitDRFH`][fairsim.schedulers.drfh.BestFitDRFH]" in "\n".join(table)


def test_sphinx_roles_become_optional_cross_references() -> None:
    spec = importlib.util.spec_from_file_location("docs_roles", HOOK.with_name("sphinx_roles.py"))
    assert spec is not None and spec.loader is not None
    roles = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(roles)
    import griffe

    pkg = griffe.load("fairsim", search_paths=[str(HOOK.parents[2])])
    obj = pkg["scenario.config"]
    text = roles._rewrite(
        obj, "See :func:`load_config` and :class:`~fairsim.simulator.engine.Engine`::"
    )
    assert text == (
        'See <autoref identifier="fairsim.scenario.config.load_config" optional>'
        '`load_config`</autoref> and <autoref identifier="fairsim.simulator.engine.Engine" '
        "optional>`Engine`</autoref>:"
    )
    assert roles._rewrite(obj, ":func:`no_such_name`") == "`no_such_name`"


def test_api_reference_leads_with_the_public_api(generate: ModuleType) -> None:
    import fairsim
    import fairsim.schedulers

    nav = generate.api_nav()
    assert nav[0] == {"Public API": "api/index.md"}
    assert list(nav[1]) == ["Internals"]
    groups = [next(iter(g)) for g in nav[1]["Internals"]]
    assert groups == [
        "fairsim",
        "fairsim.simulator",
        "fairsim.schedulers",
        "fairsim.traces",
        "fairsim.scenario",
        "fairsim.experiments",
    ]
    page = generate._api_index()
    assert page.startswith("# Public API\n")
    for name in fairsim.__all__:
        assert f"`fairsim.{name}`" in page, name
        if name != "__version__":  # a string, stated in a sentence
            assert f'heading: "fairsim.{name}"' in page, name
    parts = ["ProgressiveFilling", "UserOrder", "FillingState", "DominantShare"]
    parts += ["PooledDominantShare"]
    parts += ["ServerChoice", "FirstFit", "BestFit"]
    for name in parts:
        assert name in fairsim.schedulers.__all__
        assert f'heading: "fairsim.schedulers.{name}"' in page, name
    # rendered by its defining path, the one the rest of the site links to
    assert "::: fairsim.scenario.api.simulate\n" in page
    assert "::: fairsim.schedulers.placement.BestFit\n" in page


def test_internals_leave_the_public_names_to_the_public_page(generate: ModuleType) -> None:
    public, modules = generate._documented_publicly()
    assert modules == {"fairsim.testing"}
    internals = [m for ms in generate._api_pages().values() for m in ms]
    assert "fairsim.testing" not in internals
    assert len(internals) >= 60
    assert public["fairsim.scenario.api"] == {"simulate", "load", "sweep", "strategy", "RunResult"}
    assert public["fairsim.schedulers"] == {
        "BestFit",
        "DominantShare",
        "FillingState",
        "FirstFit",
        "PooledDominantShare",
        "ProgressiveFilling",
        "Scheduler",
        "ServerChoice",
        "UserOrder",
        "register_scheduler",
    }
    page = generate._api_page("fairsim.scenario.api", public["fairsim.scenario.api"])
    assert 'filters: ["!^_", "!^(RunResult|load|simulate|strategy|sweep)$"]' in page
    assert generate._api_page("fairsim.simulator.engine", set()) == (
        "::: fairsim.simulator.engine\n    options:\n      heading_level: 1\n"
    )


def test_committed_config_reference_is_up_to_date(generate: ModuleType) -> None:
    committed = generate.CONFIG_REFERENCE.read_text()
    assert committed == generate.config_reference(), (
        "docs/config-reference.md differs from the config models: "
        "run `python docs/hooks/generate.py` and commit it"
    )
    assert committed.startswith("<!-- Generated by docs/hooks/generate.py")
    assert "| `utilization_interval_s` |" in committed
