"""``fairsim solve``: the static allocation of an instance by one mechanism, or two compared."""

from __future__ import annotations

import argparse
import math
import sys

from fairsim.atomic import json_text
from fairsim.cli.argtypes import Subparsers
from fairsim.cli.options import add_command, intermixed
from fairsim.errors import FairsimError


def cmd_solve(args: argparse.Namespace) -> int:
    """Allocate the users of an instance (servers, users' demand vectors, optional weights, task
    caps and eligible servers) with one mechanism and print the allocation as JSON: tasks[i][l]
    tasks of user i on server l."""
    import fairsim
    from fairsim.schedulers.exact.instance import load_instance
    from fairsim.schedulers.solve import compare_table, solve_table

    if args.compare:
        names = args.compare.split(",")
        path = args.instance or args.mechanism
        if len(names) != 2 or not all(names) or path is None or (args.instance and args.mechanism):
            raise FairsimError("solve --compare: expected --compare A,B and one INSTANCE.json")
        if "udrf" in names:
            raise FairsimError("solve --compare: udrf takes a jobs instance and cannot be compared")
        inst = load_instance(path)
        outs = [fairsim.solve(inst, n, sharing=args.sharing, online=args.online) for n in names]
        # each user's total at full precision: whole tasks summed, else the exact sum (fsum)
        tot = [
            [
                sum(row) if all(isinstance(v, int) for v in row) else math.fsum(row)
                for row in o["tasks"]
            ]
            for o in outs
        ]
        gap = {
            "users": list(inst.user_ids),
            "total": {names[0]: tot[0], names[1]: tot[1]},
            "gap": [b - a for a, b in zip(tot[0], tot[1], strict=True)],
        }
        if args.format == "table":
            sys.stdout.write(compare_table(outs, gap))
        else:
            print(json_text({"compare": outs, "gap": gap}, indent=None, sort_keys=False))
        return 0
    if args.mechanism is None or args.instance is None:
        raise FairsimError(
            "solve: expected MECHANISM INSTANCE.json (or --compare A,B INSTANCE.json)"
        )
    out = fairsim.solve(args.instance, args.mechanism, sharing=args.sharing, online=args.online)
    if args.format == "table":
        sys.stdout.write(solve_table(out))
    else:
        print(json_text(out, indent=None, sort_keys=False))
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add ``fairsim solve`` to the subcommands."""
    from fairsim.schedulers.exact import EXACT, JOB_EXACT
    from fairsim.schedulers.solve import online_heuristics

    heuristics = online_heuristics()
    schedulers = ", ".join(heuristics)
    mechanisms = ", ".join([*EXACT, *JOB_EXACT])
    s = add_command(
        sub,
        "solve",
        cmd_solve,
        "static allocation of an instance (JSON in, JSON out)",
        epilog=f"exact mechanisms (fractional tasks): {mechanisms}\n"
        f"online heuristics (integer tasks, static progressive filling): {schedulers}\n"
        f"names that are both ({', '.join(n for n in heuristics if n in EXACT)}) mean the "
        "exact mechanism unless --online is given",
        wrap=True,
    )
    intermixed(s)  # fairsim solve pf --online inst.json: options between the positionals
    s.add_argument("mechanism", nargs="?", help="an exact mechanism or an online heuristic (below)")
    s.add_argument(
        "instance",
        nargs="?",
        help='the instance, a JSON file {"resources", "servers", "users"} (docs/mechanisms.md)',
    )
    s.add_argument(
        "--sharing",
        choices=("rdm", "tdm"),
        default=None,
        help="PS-DSF multiplexing (exact psdsf only; default rdm; an error with any other "
        "mechanism)",
    )
    s.add_argument("--compare", metavar="A,B", help="solve with two mechanisms; print both + gap")
    s.add_argument(
        "--online",
        action="store_true",
        help="run the online scheduler of that name as static progressive filling of integer "
        "tasks (for names that are also exact mechanisms: drf, c-drfh, tsf, af, pf, bmf, lmm-mms)",
    )
    s.add_argument(
        "--format",
        choices=("json", "table"),
        default="json",
        help="json (default): the machine contract, every digit; table: a table for people, "
        "counts rounded to 3 decimals and dominant shares to 4",
    )
