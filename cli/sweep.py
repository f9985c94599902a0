"""``fairsim sweep`` (a scenario over a grid of values x seeds) and ``fairsim sweep-report``."""

from __future__ import annotations

import argparse
from pathlib import Path

from fairsim.cli.argtypes import Subparsers
from fairsim.cli.options import add_command, add_executor, add_no_progress


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a base config over a grid of config values x seeds; re-running the same command
    resumes (finished runs are kept)."""
    from fairsim.atomic import check_writable_dir
    from fairsim.scenario.sweep import load_sweep, run_sweep

    sweep = load_sweep(args.sweep)
    if args.out is not None:
        check_writable_dir(args.out)  # also refuses an empty --out
    out = Path(args.out) if args.out is not None else Path("results") / "sweeps" / sweep.name
    frame = run_sweep(
        sweep,
        out,
        executor=args.executor,
        base=Path(args.sweep).resolve().parent,
        progress=not args.no_progress,
    )
    runs = frame.drop_duplicates("run_id")
    failed = runs[runs["status"] != "ok"]
    print(f"{len(runs)} runs: {len(runs) - len(failed)} ok, {len(failed)} failed")
    for row in failed.itertuples():
        print(f"  failed {row.run_id}: {row.error}")
    print(f"results in {out} (runs.parquet)")
    return 1 if len(failed) else 0


def cmd_sweep_report(args: argparse.Namespace) -> int:
    from fairsim.scenario.reporting.sweep_report import sweep_report_tables

    paths, headline = sweep_report_tables(Path(args.out))
    print(headline)
    print()
    for p in paths:
        print(p)
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add ``fairsim sweep`` to the subcommands."""
    from fairsim.schedulers.registry import available

    schedulers = ", ".join(available())
    help = "a scenario over a grid of values x seeds (resumable)"
    w = add_command(sub, "sweep", cmd_sweep, help, epilog=f"scheduler names: {schedulers}")
    w.add_argument("sweep", help="the sweep, a YAML file {name, base, grid, seeds}")
    w.add_argument("--out", help="output folder (default results/sweeps/<name>)")
    add_executor(w)
    add_no_progress(w)


def add_report_parser(sub: Subparsers) -> None:
    """Add ``fairsim sweep-report`` to the subcommands."""
    wr = sub.add_parser("sweep-report", help="means and 95 %% CIs across seeds of a sweep")
    wr.set_defaults(func=cmd_sweep_report)
    wr.add_argument("out", help="a sweep's output folder")
