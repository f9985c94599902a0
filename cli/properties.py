"""``fairsim properties``: the fairness-property table of the exact mechanisms."""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from fairsim.cli.argtypes import Subparsers
from fairsim.cli.options import add_command, add_count, add_out, add_seed


def cmd_properties(args: argparse.Namespace) -> int:
    """Check the fairness properties of the exact mechanisms on the papers' instances and random
    ones; print violations / instances checked and the instances that could not be verified
    (with the reason), and save the table, one counterexample per violated property and each
    unverifiable instance into --out.

    The table is :func:`fairsim.schedulers.exact.property_table.property_table`'s. Writes it
    (``table.md``, ``table.json``), the counterexamples and the unverifiable instances into the
    output folder atomically and prints the table (or JSON). Without
    ``--out`` the folder is ``results/properties`` and each run replaces it (a rerun never fails
    on the previous output); a folder given with ``--out`` is refused when it exists and is not
    empty, unless ``--overwrite``.

    Returns
    -------
    int
        0 when every instance was verified (the violations found are the table's findings),
        1 when some instance could not be verified (the table is incomplete).
    """
    from fairsim.atomic import atomic_dir, check_output_dir, json_text, write_text
    from fairsim.schedulers.exact import EXACT
    from fairsim.schedulers.exact.property_table import format_table, property_table

    mechs = args.mechanism or [*EXACT, "psdsf-tdm"]
    instances = None
    if args.instance is not None:
        import json

        from fairsim.schedulers.exact.instance import load_instance

        # validated as `fairsim solve` reads it (errors name the field)
        load_instance(args.instance)
        instances = [json.loads(Path(args.instance).read_text(encoding="utf-8"))]
    out = args.out if args.out is not None else "results/properties"
    overwrite = args.out is None or bool(args.overwrite)
    check_output_dir(out, overwrite=overwrite)  # before any work
    with atomic_dir(out, overwrite=overwrite) as tmp:
        table = property_table(
            mechs,
            args.instances,
            args.seed,
            tmp,
            constrained=not args.unconstrained,
            positive=args.positive,
            instances=instances,
        )
        write_text(tmp / "table.md", format_table(table, given=instances is not None))
        write_text(tmp / "table.json", json_text(table) + "\n")
    given = instances is not None
    sys.stdout.write(
        json_text(table, indent=None) + "\n" if args.json else format_table(table, given=given)
    )
    # what was checked and where the evidence is (on stderr with --json: stdout stays JSON)
    text = _evidence(table, args, out)
    (sys.stderr if args.json else sys.stdout).write(("" if args.json else "\n") + text)
    return 1 if any(row["unverifiable"] for row in table.values()) else 0


def _evidence(table: dict[str, Any], args: argparse.Namespace, out: str) -> str:
    """What was checked (the instances) and where the evidence is (the counterexamples and the
    unverifiable instances in ``out``), wrapped at 100 columns."""
    from fairsim.schedulers.exact.property_table import describe_instances

    found = [
        f"{m}--{p}.json"
        for m, row in table.items()
        for p in row
        if p != "unverifiable" and row[p]["violations"]
    ]
    where = (
        f"Counterexamples: {len(found)} files in {out}, one per violated mechanism and property "
        "(<mechanism>--<property>.json: the instance, replayable with fairsim solve, and under "
        '"violation" who is affected and by how much)'
        if found
        else f"Counterexamples: none found, none written (table in {out})"
    )
    unverifiable = sum(len(row["unverifiable"]) for row in table.values())
    lines = [
        describe_instances(
            args.instances,
            args.seed,
            constrained=not args.unconstrained,
            positive=args.positive,
            instance=args.instance,
        ),
        where + (f"; table in {out}/table.md and table.json." if found else "."),
    ]
    if unverifiable:
        lines.append(
            f"Unverifiable: {unverifiable} (mechanism, instance) pair"
            f"{'s' if unverifiable > 1 else ''}, each instance written to {out} as "
            "<mechanism>--unverifiable-<instance>.json."
        )
    wrap = textwrap.TextWrapper(100, break_long_words=False, break_on_hyphens=False)
    return "\n".join(wrap.fill(line) for line in lines) + "\n"


def add_parser(sub: Subparsers) -> None:
    """Add ``fairsim properties`` to the subcommands."""
    from fairsim.schedulers.exact import EXACT

    pr = add_command(
        sub,
        "properties",
        cmd_properties,
        "check fairness properties of the exact mechanisms on random instances",
        epilog=f"mechanisms: {', '.join(sorted([*EXACT, 'psdsf-tdm']))}. Exit status: 0 when "
        "every instance was verified (violations are the table's findings), 1 when some "
        "instance could not be verified, 2 for a usage error.",
    )
    pr.add_argument(
        "--mechanism",
        action="append",
        choices=sorted([*EXACT, "psdsf-tdm"]),
        metavar="M",
        help="a mechanism to check (repeatable; default: all): %(choices)s",
    )
    add_count(
        pr,
        "--instances",
        "instances to check, >= 1 (the papers' instances first; default 150)",
        150,
    )
    add_seed(pr, "random seed (>= 0)")
    pr.add_argument(
        "--instance",
        metavar="FILE.json",
        help="check this one instance (the fairsim solve input format, as the checker saves "
        "counterexamples and unverifiable instances) instead of the papers' and random ones; "
        "--instances, --unconstrained and --positive are then not used",
    )
    pr.add_argument("--json", action="store_true", help="print the table as JSON")
    add_out(
        pr,
        "folder of the table, the counterexamples and the unverifiable instances (default "
        "results/properties, replaced by each run); a DIR given here is refused if it exists "
        "and is not empty, unless --overwrite",
    )
    pr.add_argument("--unconstrained", action="store_true", help="no placement constraints")
    pr.add_argument("--positive", action="store_true", help="every demand entry positive")
