"""Every paper's statements live in its ``statements.md`` (:func:`load_statements`): each loads
whole, ships with the package, and a malformed file is refused with one line naming the file
and the block."""

from __future__ import annotations

import importlib
from importlib.resources import files
from pathlib import Path

import pytest

from fairsim.errors import ConfigError
from fairsim.experiments.claims import Statement, load_statements
from fairsim.experiments.reproductions import REPRODUCTIONS

PACKAGES = sorted({spec.package for spec in REPRODUCTIONS.values()})


@pytest.mark.parametrize("package", PACKAGES)
def test_every_statement_loads_whole_with_a_unique_key(package: str) -> None:
    resource = files(package) / "statements.md"
    assert resource.is_file()  # package data: shipped beside paper.py
    paper = importlib.import_module(f"{package}.paper")
    statements = paper.STATEMENTS
    assert statements == load_statements(str(resource))
    assert all(isinstance(s, Statement) and s.key and s.text and s.source for s in statements)
    assert all(s.text.strip() == s.text and s.quote.strip() == s.quote for s in statements)
    keys = [s.key for s in statements]
    assert len(set(keys)) == len(keys) == len(paper.BY_KEY)


def test_the_drfh_table_ii_quote_is_the_printed_table() -> None:
    """``table2_peak16`` quotes Table II's CPU column as :data:`TABLE_II` holds it."""
    from fairsim.experiments.drfh import paper

    cpu = "; ".join(f"{k} per maximum server | {v[0].text}%" for k, v in paper.TABLE_II.items())
    quote = f"TABLE II [...] Number of Slots | CPU Utilization: {cpu}"
    assert paper.BY_KEY["table2_peak16"].quote == quote


def test_the_format_two_or_three_lines_a_block(tmp_path: Path) -> None:
    path = tmp_path / "statements.md"
    path.write_text(
        "<!-- a comment -->\n<!-- one -->\nText {x}\nSec. 1\nthe words\n"
        "<!-- text.prose -->\nnot a statement\n\nat all\n<!-- two -->\nOther\nFig. 2\n"
    )
    assert load_statements(path) == (
        Statement("one", "Text {x}", "Sec. 1", "the words"),
        Statement("two", "Other", "Fig. 2"),
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("<!-- one -->\nText\n", "block one: expected 2 or 3 non-empty lines"),
        ("<!-- one -->\nText\nSec. 1\nquote\nmore\n", "block one: expected 2 or 3 non-empty"),
        ("<!-- one -->\nText\n\nquote\n", "block one: expected 2 or 3 non-empty lines"),
        ("<!-- one -->\nA\nB\n<!-- two -->\nC\nD\n<!-- one -->\nE\nF\n", "block one: the key is"),
        ("just a comment\n", "no statements"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_file_and_block(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "statements.md"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as info:
        load_statements(path)
    assert str(info.value).startswith(f"{path}: ") and "\n" not in str(info.value)


@pytest.mark.parametrize("package", PACKAGES)
def test_the_prose_blocks_are_one_line_each(package: str) -> None:
    """``paper.TEXT``'s ``text.*`` blocks: the readings and captions the modules quote."""
    text = importlib.import_module(f"{package}.paper").TEXT
    prose = {k: v for k, v in text.items() if k.startswith("text.")}
    assert prose and all(v.strip() and "\n" not in v for v in prose.values())
