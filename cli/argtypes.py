"""The argument types of the ``fairsim`` command line, in one place.

Each is an argparse ``type``: it turns the option's text into a value or raises
:class:`argparse.ArgumentTypeError` with a one-line message naming the text, which the parser
prints as ``fairsim: error: <command>: argument <option>: <message>`` (exit status 2).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, TypeAlias

#: The type of the subcommands' parsers (what ``add_subparsers()`` returns), into which each
#: subcommand's module adds its own (``add_parser(sub)``); its parsers are of the top-level
#: parser's class, whose errors are one line.
Subparsers: TypeAlias = "argparse._SubParsersAction[Any]"


def int_at_least(low: int) -> Callable[[str], int]:
    """An argparse ``type`` that accepts an integer ``>= low``.

    Parameters
    ----------
    low : int
        The smallest value accepted.

    Returns
    -------
    callable
        ``parse(text) -> int``; it raises :class:`argparse.ArgumentTypeError` with a one-line
        message naming the value when ``text`` is not an integer or is below ``low``.
    """

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is not >= {low}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def _number(text: str, what: str) -> float:
    """``float(text)``, or an :class:`argparse.ArgumentTypeError` saying it is not ``what``."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def positive(unit: str) -> Callable[[str], float]:
    """An argparse ``type`` that accepts a positive, finite number of ``unit``.

    Parameters
    ----------
    unit : str
        What the number counts, plural (``"seconds"``, ``"days"``), as the messages name it.

    Returns
    -------
    callable
        ``parse(text) -> float``; it raises :class:`argparse.ArgumentTypeError` (``'x' is not a
        number of <unit>``, ``'x' is not a positive, finite number of <unit>``) when ``text``
        is not a number, or is zero, negative, infinite or NaN.
    """

    def parse(text: str) -> float:
        value = _number(text, f"a number of {unit}")
        if not (value > 0 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"{text!r} is not a positive, finite number of {unit}")
        return value

    parse.__name__ = f"positive {unit}"
    return parse


def share(text: str) -> float:
    """An argparse ``type`` that accepts a share, a number between 0 and 1 (both included).

    Raises
    ------
    argparse.ArgumentTypeError
        ``'x' is not a number`` or ``'x' is not a share between 0 and 1``.
    """
    value = _number(text, "a number")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 1")
    return value
