"""A file that is not YAML is refused naming the file, the line and the parser's own words: a tab
in the indentation said only ``is not valid YAML at line 5``."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairsim.cli import main
from fairsim.errors import ConfigError
from fairsim.scenario.config import read_yaml


def test_a_tab_in_the_indentation_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tab = tmp_path / "tab.yaml"
    tab.write_text("name: t\nseed: 1\ntrace:\n  format: inline\n\tusers: []\n")
    out = tmp_path / "o"
    assert main(["run", str(tab), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"fairsim: error: config: {tab} is not valid YAML at line 5 (found character '\\t' that "
        "cannot start any token)\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name: [unclosed\n", r"at line 2 \(expected ',' or '\]', but got '<stream end>'\)$"),
        ("a: b: c\n", r"at line 1 \(mapping values are not allowed here\)$"),
        ("a: 'open\n", r"at line 2 \(found unexpected end of stream\)$"),
    ],
)
def test_every_yaml_error_gives_the_parsers_problem(
    tmp_path: Path, text: str, problem: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"^config: \S*c\.yaml is not valid YAML " + problem):
        read_yaml(path, "config")
