"""Every example in a docstring of fairsim runs and prints what it shows (doctest)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import fairsim
from fairsim.schedulers import registry


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(fairsim.__path__, prefix="fairsim."):
        spec = importlib.util.find_spec(info.name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        if ">>> " in Path(spec.origin).read_text(encoding="utf-8"):
            names.append(info.name)
    return sorted(names)


MODULES = _modules_with_examples()


def test_the_examples_are_found() -> None:
    # the pipeline's documented entry points carry runnable examples
    assert {"fairsim.scenario.api", "fairsim.scenario.pipeline", "fairsim.scenario.config"} <= set(
        MODULES
    )


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # an example that writes (a cache, results/) writes here
    # an example that registers a scheduler (register_scheduler's) leaves the registry as it was
    monkeypatch.setattr(registry, "_REGISTERED", dict(registry._REGISTERED))
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
