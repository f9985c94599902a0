"""The release metadata: one version everywhere, the installed distribution's fields, the licence.

``fairsim/_version.py``'s ``__version__`` is the one source (pyproject.toml reads it through
setuptools' dynamic version); ``fairsim --version``, the installed metadata and CITATION.cff
must all say the same. ``.ci/wheel_smoke.sh`` checks the same fields on the built wheel.
"""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import metadata, version
from pathlib import Path

import pytest
import yaml

import fairsim
from fairsim.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_one_string_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", fairsim.__version__), fairsim.__version__
    assert version("fairsim") == fairsim.__version__
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out == f"fairsim {fairsim.__version__}\n"
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["version"] == fairsim.__version__
    assert citation["license"] == "Apache-2.0"
    assert citation["authors"] == [{"name": "the fairsim developers"}]


def test_installed_metadata() -> None:
    meta = metadata("fairsim")
    assert meta["Name"] == "fairsim"
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["Author"] == "the fairsim developers"
    assert meta["Requires-Python"] == ">=3.11"
    classifiers = meta.get_all("Classifier") or []
    for expected in (
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3 :: Only",
        "Topic :: Scientific/Engineering",
        "Typing :: Typed",
    ):
        assert expected in classifiers, expected
    # PEP 639: the licence is the License-Expression field, never a classifier as well
    assert not [c for c in classifiers if c.startswith("License ::")], classifiers


def test_licence_file_is_the_declared_licence() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License\n")
    assert "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_coverage_measures_every_linked_package() -> None:
    """`make test`'s coverage sees the real folders behind fairsim/'s links: a new linked
    subpackage (fairsim/X -> ../X) must be added to [tool.coverage.run] source_dirs."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    run = config["tool"]["coverage"]["run"]
    linked = sorted(
        p.name for p in (ROOT / "fairsim").iterdir() if p.is_symlink() and p.resolve().is_dir()
    )
    # configs/ holds YAML files only; everything else linked is Python
    packages = [name for name in linked if (ROOT / "fairsim" / name / "__init__.py").is_file()]
    assert {"simulator", "schedulers", "traces", "experiments", "cli"} <= set(packages), packages
    assert sorted(run["source_dirs"]) == sorted(["fairsim", *packages])
    assert run["patch"] == ["subprocess"]
    assert config["tool"]["coverage"]["report"]["fail_under"] > 0
