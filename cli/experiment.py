"""``fairsim experiment``: reproduce a paper's evaluation."""

from __future__ import annotations

import argparse
from pathlib import Path

from fairsim.cli.argtypes import Subparsers, int_at_least
from fairsim.cli.options import add_command, add_no_progress, add_out


def cmd_experiment(args: argparse.Namespace) -> int:
    """Reproduce a paper's evaluation into --out. An empty folder or an earlier run of the same
    reproduction there is replaced (atomically: an interrupted run keeps the previous results);
    any other existing non-empty folder is refused unless --overwrite."""
    from fairsim.atomic import atomic_dir, check_output_dir
    from fairsim.errors import OutputError
    from fairsim.experiments.kit import Options
    from fairsim.experiments.reproductions import holds_reproduction, reproduce

    # the string, not a Path: an empty --out is refused as by every other command (Path("")
    # is ".", and `args.out or ...` made it results/<which>)
    target = args.out if args.out is not None else str(Path("results") / args.which)
    out = Path(target)
    # An earlier run of the same reproduction is replaced (``make experiment`` twice in a row
    # works); anything else the folder holds is the user's, kept unless --overwrite. Checked
    # before any work, and the replacement is atomic: an interrupted run keeps the old folder.
    overwrite = bool(args.overwrite)
    # the path itself first (a file, unwritable, an input): those messages hold in any case
    dest = check_output_dir(target, overwrite=True, protect=[args.shared])
    if not overwrite and dest.is_dir() and any(dest.iterdir()):
        if not holds_reproduction(dest, args.which):
            raise OutputError(
                f"--out: {target!r} already exists, is not empty and holds no earlier "
                f"{args.which} reproduction (its report.md and claims.json); --overwrite "
                "replaces it, or choose another folder"
            )
        overwrite = True
    with atomic_dir(target, overwrite=overwrite, protect=[args.shared]) as tmp:
        options = Options(
            tmp, Path(args.shared), args.quick, not args.no_progress, args.seeds, args.jobs
        )
        path = reproduce(args.which, options)
    print(f"report: {out / path.relative_to(tmp)}")
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add ``fairsim experiment`` to the subcommands."""
    from fairsim.experiments.kit import DEFAULT_SEEDS
    from fairsim.experiments.reproductions import REPRODUCTIONS

    e = add_command(sub, "experiment", cmd_experiment, "reproduce a paper's evaluation")
    e.add_argument(
        "which",
        choices=tuple(REPRODUCTIONS),
        help="the reproduction: %(choices)s",
    )
    e.add_argument(
        "--shared",
        default="../shared",
        help="the shared data folder (traces); without its traces/google-2011, drfh-google and "
        "udrf fetch the Google sample into the download cache ($FAIRSIM_DATA_DIR)",
    )
    add_out(
        e,
        "output folder (default results/<which>); an earlier run of the same reproduction there "
        "is replaced, any other existing non-empty folder refused unless --overwrite",
    )
    e.add_argument("--quick", action="store_true", help="a small slice, for a smoke test")
    e.add_argument(
        "--seeds",
        type=int_at_least(1),
        default=DEFAULT_SEEDS,
        help="run seeds 1..N; every numeric claim gets a 95 %% interval over them "
        "(default %(default)s; 1 is a quick look without intervals)",
    )
    e.add_argument(
        "--jobs",
        type=int_at_least(1),
        default=None,
        help="worker processes for the seeds (default: one per core, at most one per seed)",
    )
    add_no_progress(e)
