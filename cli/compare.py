"""``fairsim compare``: runs side by side on the jobs completed under all of them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairsim.cli.argtypes import Subparsers
from fairsim.cli.options import add_command


def cmd_compare(args: argparse.Namespace) -> int:
    """Compare fairsim run folders (every scheduler in each) or scheduler folders inside one:
    utilisation, completion, JCT mean and percentiles, queueing delay, slowdown and per-user JCT
    spread on the common job set (the jobs completed under every row), with the paired 95 %
    interval of the mean JCT difference to the first row when the runs share their seed. Writes
    report.md and figures into --out."""
    from fairsim.scenario.compare import compare, default_out

    out = Path(args.out) if args.out is not None else default_out(args.dirs)
    c = compare(args.dirs, out=out, overwrite=args.overwrite)
    sys.stdout.write(c.headline())
    print(f"report in {out / 'report.md'}")
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add ``fairsim compare`` to the subcommands."""
    help = "runs side by side on the jobs completed under all of them"
    cp = add_command(sub, "compare", cmd_compare, help)
    cp.add_argument("dirs", nargs="+", metavar="DIR", help="a run folder or a scheduler folder")
    cp.add_argument("--out", help="output folder (default: results/compare/<names>)")
    cp.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
