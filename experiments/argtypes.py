"""Argument types shared by the command-line front ends (``fairsim`` and ``fairsim properties``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


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
