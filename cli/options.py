"""The options several ``fairsim`` subcommands share, each added by one function.

A subcommand's module adds these with the functions below, so that an option such as
``--out DIR`` / ``--overwrite`` reads the same wherever it appears; the argument types (what an
option's text may be) are in :mod:`fairsim.cli.argtypes`.
"""

from __future__ import annotations

import argparse

from fairsim.cli.argtypes import int_at_least

#: The ``--overwrite`` help of most subcommands that write an output folder.
OVERWRITE_HELP = "replace an existing --out folder"


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
