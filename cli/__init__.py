"""The ``fairsim`` command line.

::

    fairsim run CONFIG.yaml [--out DIR] [--overwrite] [--set key=value ...]
    fairsim solve MECHANISM INSTANCE.json [--sharing rdm|tdm] [--online] [--format json|table]
    fairsim solve --compare A,B INSTANCE.json [--sharing rdm|tdm] [--online] [--format ...]
    fairsim properties [--mechanism M ...] [--instances N | --instance FILE.json] [--seed S]
                       [--json] [--out DIR]
    fairsim trace convert FORMAT SRC --out DIR [--overwrite] [--bad-row-threshold F]
    fairsim trace fetch google-2011 [--parts 0-13] [--dest DIR] [--sha256sum FILE]
    fairsim trace synth --tasks N --seed S --out DIR [--overwrite]
    fairsim trace synth --raw google-2011 --src PATH --tasks N --days D --seed S --out DIR
    fairsim experiment drfh-google [--seeds N] [--shared ../shared] [--out results/drfh-google]
    fairsim experiment bonald-roberts [--seeds N] [--quick] [--out results/bonald-roberts]
    fairsim experiment lmm-mms [--seeds N] [--quick] [--shared ../shared] [--out results/lmm-mms]
    fairsim experiment psdsf [--seeds N] [--quick] [--out results/psdsf]
    fairsim experiment udrf [--seeds N] [--quick] [--shared ../shared] [--out results/udrf]
    fairsim sweep SWEEP.yaml [--out OUT] [--executor local:N|dask-local:N|dask://host:port]
    fairsim sweep-report OUT
    fairsim strategy CONFIG.yaml --users top:K|U1,U2 --strategy SPEC [--strategy SPEC ...]
                     --seeds 1,2 --out DIR [--executor ...]
    fairsim --version

Every user error (bad config, bad instance, bad trace, bad option, an output folder that exists
or cannot be written) is printed as one line ``fairsim: error: ...`` and exits with status 2; no
traceback. Output folders are written under a temporary name and renamed into place when complete
(:func:`fairsim.atomic.atomic_dir`); ``experiment`` replaces its folder by design.

The command line is the top layer: it imports the layers below and nothing imports it. One
module per subcommand (:mod:`fairsim.cli.run`, ``solve``, ``trace``, ``properties``,
``experiment``, ``sweep`` with ``sweep-report``, ``compare``, ``strategy``), each with the
function that adds its parser to the subcommands (``add_parser``) and the one that runs it
(``cmd_*``), whose docstring's first paragraph is the subcommand's description in ``--help``
(:func:`fairsim.cli.options.add_command`); the argument types are in :mod:`fairsim.cli.argtypes`,
the options several subcommands share in :mod:`fairsim.cli.options`. This module holds the
top-level parser and :func:`main`, the entry point of the ``fairsim`` console script
(``python -m fairsim.cli`` runs it too).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator
from typing import NoReturn

from fairsim import __version__
from fairsim.cli import compare, experiment, properties, run, solve, strategy, sweep, trace
from fairsim.errors import FairsimError

EXIT_USAGE = 2
#: Exit status after SIGTERM (128 + 15, as a shell reports a process the signal ended).
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM (a ``timeout``, a batch scheduler, ``kill``), raised where the command is so that
    it unwinds as Ctrl-C does: temporary folders removed, a sweep's finished runs kept."""


def _terminate(signum: int, frame: object) -> NoReturn:
    raise Terminated


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While the command runs in the main thread, SIGTERM raises :class:`Terminated`."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _user_errors() -> tuple[type[BaseException], ...]:
    from fairsim.errors import TraceError

    return (FairsimError, TraceError)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line ``fairsim: error: ...`` (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        where = self.prog.removeprefix("fairsim").strip()
        prefix = f"{where}: " if where else ""
        self.exit(EXIT_USAGE, f"fairsim: error: {prefix}{message} (see {self.prog} --help)\n")


def _plain(rst: str) -> str:
    """A docstring's reStructuredText as the plain text of ``--help``: back-quoted literals and
    roles (``:func:``) keep their text and lose their markup."""
    return re.sub(r"(?::[a-z]+:)?`+([^`]+)`+", r"\1", rst)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fairsim`` command: the top-level options, then each
    subcommand's parser (its module's ``add_parser``), in the order ``--help`` lists them."""
    p = _Parser(prog="fairsim", description=_plain(__doc__.split("\n\n")[0]))
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    p.add_argument("--version", action="version", version=f"fairsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run.add_parser(sub)
    solve.add_parser(sub)
    trace.add_parser(sub)
    properties.add_parser(sub)
    experiment.add_parser(sub)
    sweep.add_parser(sub)
    compare.add_parser(sub)
    sweep.add_report_parser(sub)
    strategy.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fairsim`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        with _sigterm_unwinds():
            return int(args.func(args))
    except _user_errors() as exc:
        print(f"fairsim: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # stdout closed early (``fairsim ... | head``): the work is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as exc:
        what = "terminated" if isinstance(exc, Terminated) else "interrupted"
        if args.command in ("sweep", "strategy"):
            print(f"fairsim: {what}; finished results were kept", file=sys.stderr)
        else:
            print(f"fairsim: {what}; no partial output was left", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(exc, Terminated) else 130
