"""``fairsim --help`` and every subcommand's help are plain text: no reStructuredText markup
(the top line was "The ``fairsim`` command line.")."""

from __future__ import annotations

import argparse
import inspect

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


def test_subcommand_description_is_the_first_paragraph_of_its_function_docstring() -> None:
    # fairsim.cli.options.add_command: what a cmd_* function says it does is what --help prints
    described = []
    for p in _parsers(build_parser()):
        func = p.get_default("func")
        if func is None or p.description is None:
            continue
        first = " ".join((inspect.getdoc(func) or "").split("\n\n")[0].split())
        assert " ".join(p.description.split()) == first, p.prog
        described.append(p.prog.removeprefix("fairsim "))
    assert described == [
        "run",
        "solve",
        "trace convert",
        "trace check",
        "trace fetch",
        "trace synth",
        "properties",
        "experiment",
        "sweep",
        "compare",
        "strategy",
    ]
