"""The options several ``fairsim`` subcommands share, each added by one function, and
:func:`add_command`, which adds a subcommand itself.

A subcommand's module adds these with the functions below, so that an option such as
``--out DIR`` / ``--overwrite`` reads the same wherever it appears; the argument types (what an
option's text may be) are in :mod:`fairsim.cli.argtypes`.
"""

from __future__ import annotations

import argparse
import inspect
import textwrap
from collections.abc import Callable

from fairsim.cli.argtypes import Subparsers, int_at_least

#: The ``--overwrite`` help of most subcommands that write an output folder.
OVERWRITE_HELP = "replace an existing --out folder"


def add_command(
    sub: Subparsers,
    name: str,
    run: Callable[[argparse.Namespace], int],
    help: str,
    *,
    epilog: str | None = None,
    wrap: bool = False,
) -> argparse.ArgumentParser:
    """Add the subcommand ``name``, which ``run`` runs, to ``sub`` and return its parser.

    Parameters
    ----------
    sub : Subparsers
        The subcommands of the parent parser.
    name : str
        The subcommand's name.
    run : callable
        ``run(args) -> exit status``. The first paragraph of its docstring is the subcommand's
        description (``fairsim NAME --help``): what the code says the command does is what its
        user reads.
    help : str
        The subcommand's line in the parent's list of subcommands.
    epilog : str, optional
        Text after the options.
    wrap : bool
        Wrap the description at 79 columns and print the epilog's lines as written
        (:class:`argparse.RawDescriptionHelpFormatter`); by default argparse fills both to the
        terminal's width.

    Returns
    -------
    argparse.ArgumentParser
        The subcommand's parser, whose ``func`` default is ``run``.
    """
    description = " ".join((inspect.getdoc(run) or "").split("\n\n")[0].split())
    formatter = argparse.RawDescriptionHelpFormatter if wrap else argparse.HelpFormatter
    if wrap:
        description = textwrap.fill(description, 79)
    parser = sub.add_parser(
        name, help=help, description=description, epilog=epilog, formatter_class=formatter
    )
    parser.set_defaults(func=run)
    return parser


class _Intermixed(argparse.ArgumentParser):
    """A parser whose options may come between its positionals (:func:`intermixed`)."""

    _nested = False

    def parse_known_args(  # type: ignore[override]
        self, args: list[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """Parse as :meth:`argparse.ArgumentParser.parse_known_intermixed_args` (which calls
        this method again for its two passes: those parse as usual)."""
        if self._nested:
            return super().parse_known_args(args, namespace)
        self._nested = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._nested = False


def intermixed(parser: argparse.ArgumentParser) -> None:
    """Let a subcommand's options come between its positionals.

    argparse matches consecutive positionals in one go, so with two optional positionals
    ``fairsim solve pf --online inst.json`` would leave ``inst.json`` unrecognized; the parser
    (of the top-level parser's class, whose errors are one line) becomes one that parses
    intermixed (:meth:`argparse.ArgumentParser.parse_known_intermixed_args`), as the
    subcommands' dispatcher calls ``parse_known_args``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        A subcommand's parser (:func:`add_command`) with no subcommands of its own.
    """
    base = type(parser)
    parser.__class__ = type(f"Intermixed{base.__name__}", (_Intermixed, base), {})


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


def add_executor(parser: argparse.ArgumentParser) -> None:
    """Add ``--executor`` (where a sweep's or a study's runs go) to ``parser``."""
    parser.add_argument(
        "--executor",
        help="serial (in this process), local:N (default: local:<cores>), dask-local:N or "
        "dask://host:port",
    )


def add_seed(parser: argparse.ArgumentParser, help: str) -> None:
    """Add ``--seed S`` (an integer >= 0, default 1) to ``parser``."""
    parser.add_argument("--seed", type=int_at_least(0), default=1, metavar="S", help=help)


def add_count(
    parser: argparse.ArgumentParser, flag: str, help: str, default: int | None = None
) -> None:
    """Add the option ``flag N``, a whole number >= 1 (``default`` when not given)."""
    parser.add_argument(flag, type=int_at_least(1), default=default, metavar="N", help=help)
