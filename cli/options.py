"""The parser pieces several ``fairsim`` subcommands share, each added by one function.

A subcommand's module calls :func:`add_command` for its parser (which also names the function
that runs it) and the ``add_*`` functions below for the options other subcommands have too, so
that an option such as ``--out DIR`` / ``--overwrite`` reads the same wherever it appears. The
argument types (what an option's text may be) are in :mod:`fairsim.cli.argtypes`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from fairsim.cli.argtypes import Subparsers, int_at_least

#: The ``--overwrite`` help of most subcommands that write an output folder.
OVERWRITE_HELP = "replace an existing --out folder"


def add_command(
    sub: Subparsers, name: str, func: Callable[[argparse.Namespace], int], **kwargs: Any
) -> argparse.ArgumentParser:
    """Add the subcommand ``name``, run by ``func``, to the subcommands.

    Parameters
    ----------
    sub : Subparsers
        The subcommands (or a subcommand's actions, as ``fairsim trace``'s).
    name : str
        The subcommand's name on the command line.
    func : callable
        ``func(args) -> int``, the exit status; :func:`fairsim.cli.main` calls it.
    **kwargs
        ``help``, ``description``, ``epilog``, ``formatter_class``, as for argparse's
        ``add_parser``.

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser, to add its arguments to.
    """
    parser = sub.add_parser(name, **kwargs)
    parser.set_defaults(func=func)
    return parser


def add_out(
    parser: argparse.ArgumentParser,
    help: str,
    *,
    required: bool = False,
    overwrite: str = OVERWRITE_HELP,
) -> None:
    """Add ``--out DIR`` (the output folder, described by ``help``) and ``--overwrite`` (with
    the help ``overwrite``) to ``parser``."""
    parser.add_argument("--out", required=required, metavar="DIR", help=help)
    parser.add_argument("--overwrite", action="store_true", help=overwrite)


def add_no_progress(parser: argparse.ArgumentParser, help: str = "no progress bars") -> None:
    """Add ``--no-progress`` (a flag: no tqdm bars) to ``parser``."""
    parser.add_argument("--no-progress", action="store_true", help=help)


def add_seed(parser: argparse.ArgumentParser, help: str) -> None:
    """Add ``--seed S`` (an integer >= 0, default 1) to ``parser``."""
    parser.add_argument("--seed", type=int_at_least(0), default=1, metavar="S", help=help)


def add_count(
    parser: argparse.ArgumentParser, flag: str, help: str, default: int | None = None
) -> None:
    """Add the option ``flag N``, a whole number >= 1 (``default`` when not given)."""
    parser.add_argument(flag, type=int_at_least(1), default=default, metavar="N", help=help)
