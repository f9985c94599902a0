"""The command line's argument types (fairsim.cli.argtypes): each accepts what it names and
refuses anything else with a one-line message naming the text."""

from __future__ import annotations

import argparse

import pytest

from fairsim.cli.argtypes import int_at_least, positive, share


@pytest.mark.parametrize(
    ("unit", "text", "value"), [("seconds", "3600", 3600.0), ("days", "0.5", 0.5)]
)
def test_positive_accepts_a_positive_finite_number(unit: str, text: str, value: float) -> None:
    assert positive(unit)(text) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x", r"^'x' is not a number of days$"),
        ("", r"^'' is not a number of days$"),
        ("0", r"^'0' is not a positive, finite number of days$"),
        ("-1", r"^'-1' is not a positive, finite number of days$"),
        ("inf", r"^'inf' is not a positive, finite number of days$"),
        ("nan", r"^'nan' is not a positive, finite number of days$"),
    ],
)
def test_positive_refuses_naming_the_text_and_unit(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        positive("days")(text)


def test_share_accepts_0_to_1_both_included() -> None:
    assert [share(t) for t in ("0", "0.5", "1")] == [0.0, 0.5, 1.0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("half", r"^'half' is not a number$"),
        ("1.5", r"^'1.5' is not a share between 0 and 1$"),
        ("-0.1", r"^'-0.1' is not a share between 0 and 1$"),
        ("nan", r"^'nan' is not a share between 0 and 1$"),
    ],
)
def test_share_refuses_naming_the_text(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        share(text)


def test_int_at_least() -> None:
    assert int_at_least(1)("7") == 7
    with pytest.raises(argparse.ArgumentTypeError, match=r"^0 is not >= 1$"):
        int_at_least(1)("0")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^'1.0' is not an integer$"):
        int_at_least(1)("1.0")
    assert int_at_least(0)("0") == 0
