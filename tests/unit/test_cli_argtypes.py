"""The command line's argument types (fairsim.cli.argtypes): each accepts what it names and
refuses anything else with a one-line message naming the text."""

from __future__ import annotations

import argparse
from collections.abc import Callable

import pytest

from fairsim.cli.argtypes import int_at_least, positive, share


def test_each_type_accepts_what_it_names() -> None:
    assert positive("seconds")("3600") == 3600.0 and positive("days")("0.5") == 0.5
    assert [share(t) for t in ("0", "0.5", "1")] == [0.0, 0.5, 1.0]  # both ends included
    assert int_at_least(1)("7") == 7 and int_at_least(0)("0") == 0


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (positive("days"), "x", r"^'x' is not a number of days$"),
        (positive("days"), "", r"^'' is not a number of days$"),
        (positive("seconds"), "0", r"^'0' is not a positive, finite number of seconds$"),
        (positive("days"), "-1", r"^'-1' is not a positive, finite number of days$"),
        (positive("days"), "inf", r"^'inf' is not a positive, finite number of days$"),
        (positive("seconds"), "nan", r"^'nan' is not a positive, finite number of seconds$"),
        (share, "half", r"^'half' is not a number$"),
        (share, "1.5", r"^'1.5' is not a share between 0 and 1$"),
        (share, "-0.1", r"^'-0.1' is not a share between 0 and 1$"),
        (share, "nan", r"^'nan' is not a share between 0 and 1$"),
        (int_at_least(1), "0", r"^0 is not >= 1$"),
        (int_at_least(1), "1.0", r"^'1.0' is not an integer$"),
    ],
)
def test_each_type_refuses_naming_the_text(
    parse: Callable[[str], float], text: str, message: str
) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse(text)
