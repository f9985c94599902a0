"""``fairsim experiment``: reproduce a paper's evaluation."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fairsim.cli.argtypes import Subparsers, int_at_least
from fairsim.cli.options import add_command, add_no_progress, add_out

#: The list of files a reproduction wrote, written last into its folder: what a later run of the
#: same reproduction may replace without ``--overwrite`` (any other file there is the user's).
MANIFEST = ".fairsim-files.json"


def written_files(folder: Path) -> list[str]:
    """The files under ``folder``, as sorted POSIX paths relative to it (the manifest left out)."""
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != MANIFEST
    )


def foreign_files(folder: Path) -> list[str]:
    """The files under ``folder`` that its :data:`MANIFEST` does not list: added after the
    reproduction that wrote the folder. Empty for a folder without a readable manifest (one
    written before the manifest existed: all of it counts as the reproduction's)."""
    try:
        listed = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if not isinstance(listed, list):
        return []
    known = set(map(str, listed))
    return [f for f in written_files(folder) if f not in known]


def cmd_experiment(args: argparse.Namespace) -> int:
    """Reproduce a paper's evaluation into --out. An empty folder or an earlier run of the same
    reproduction there is replaced (atomically: an interrupted run keeps the previous results)
    unless files were added to it after that run; any other existing non-empty folder is refused
    unless --overwrite."""
    from fairsim.atomic import atomic_dir, check_output_dir
    from fairsim.errors import OutputError
    from fairsim.experiments.kit import Options
    from fairsim.experiments.reproductions import holds_reproduction, reproduce

    # the string, not a Path: an empty --out is refused as by every other command (Path("")
    # is ".", and `args.out or ...` made it results/<which>)
    target = args.out if args.out is not None else str(Path("results") / args.which)
    out = Path(target)
    # An earlier run of the same reproduction is replaced (``make experiment`` twice in a row
    # works), files it wrote (its manifest) or all of it for a folder without one; anything
    # else the folder holds is the user's, kept unless --overwrite. Checked
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
        added = foreign_files(dest)
        if added:
            shown = ", ".join(added[:3]) + (f" and {len(added) - 3} more" if len(added) > 3 else "")
            raise OutputError(
                f"--out: {target!r} holds an earlier {args.which} reproduction and "
                f"{len(added)} file(s) it did not write ({shown}); move them, or --overwrite "
                "replaces the whole folder"
            )
        overwrite = True
    with atomic_dir(target, overwrite=overwrite, protect=[args.shared]) as tmp:
        options = Options(
            tmp, Path(args.shared), args.quick, not args.no_progress, args.seeds, args.jobs
        )
        path = reproduce(args.which, options)
        manifest = {"reproduction": args.which, "files": written_files(tmp)}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
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
        "is replaced (unless files were added to it since), any other existing non-empty folder "
        "refused unless --overwrite",
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
