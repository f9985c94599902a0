"""``fairsim --help`` and every subcommand's help are plain text: no reStructuredText markup
(the top line was "The ``fairsim`` command line.")."""

from __future__ import annotations

import argparse

import pytest

from fairsim.cli import build_parser, main


def _parsers(p: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    out = [p]
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                out += _parsers(sub)
    return out


def test_top_level_help_is_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as code:
        main(["--help"])
    assert code.value.code == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == "The fairsim command line."
    assert not any("``" in line for line in lines)


def test_no_help_text_has_rst_markup() -> None:
    parsers = _parsers(build_parser())
    assert len(parsers) >= 10
    for p in parsers:
        text = p.format_help()
        for mark in ("``", ":func:", ":class:", ":mod:", ":data:"):
            assert mark not in text, f"{p.prog} --help: {mark!r}"
