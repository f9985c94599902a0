"""Markdown tables, the one form every report writes its tables in: the reproductions' reports,
the benchmarks' tables, the fairness panel and the sweep report."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], *, escape: bool = False) -> list[str]:
    """A Markdown table: the header, the separator, one line per row, then an empty line.

    Parameters
    ----------
    head : sequence of str
        The column titles.
    rows : iterable of sequences
        The cells of each row (shown with ``str``).
    escape : bool
        Escape every cell, for free text: ``|`` escaped and line breaks made spaces.

    Returns
    -------
    list of str
        The lines.
    """

    def show(c: Any) -> str:
        return str(c).replace("|", "\\|").replace("\n", " ") if escape else str(c)

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(map(show, r)) + " |" for r in rows]
    return [*lines, ""]
