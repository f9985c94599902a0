"""``fairsim run``: one YAML scenario, every scheduler it names, into one folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from fairsim.cli.argtypes import Subparsers
from fairsim.cli.options import add_command, add_no_progress, add_out


def _format_speed(summary: dict[str, Any]) -> str:
    """What ``tasks_per_s`` counts, in words: the tasks that arrived by the horizon per second
    of the engine's wall time (``summary.json``'s ``tasks``, ``wall_s``, ``tasks_per_s``)."""
    rate, wall = summary.get("tasks_per_s"), summary.get("wall_s")
    if not isinstance(rate, int | float) or not isinstance(wall, int | float):
        return "- tasks/s"
    return f"{summary['tasks']:,} tasks simulated in {wall:.1f} s ({rate:,.0f} tasks/s)"


def cmd_run(args: argparse.Namespace) -> int:
    """Simulate one YAML scenario: every scheduler it names replays the same workload on the same
    server pool; the result files (docs/architecture.md) go into --out, written under a
    temporary name and renamed when complete. Relative paths in the config (trace.path,
    trace.cache_dir, cluster.path) are relative to the config file's folder.

    The config is read and validated once (its name gives the default output folder), the
    output folder is checked before any work, then every scheduler runs
    (:func:`fairsim.scenario.api.simulate_loaded`); one line per scheduler is printed, and the
    report's overload line when there is one."""
    from fairsim.atomic import check_output_dir
    from fairsim.scenario.api import load_scenario, simulate_loaded
    from fairsim.scenario.reporting.run_report import overload_line, unplaceable_line

    loaded = load_scenario(args.config, overrides=args.set)
    target = args.out if args.out is not None else str(Path("results") / loaded.config.name)
    # before any work; never the config, its trace, cache or machine folder, nor what holds one
    check_output_dir(target, overwrite=args.overwrite, protect=loaded.protect)
    results = simulate_loaded(
        loaded, out=target, progress=not args.no_progress, overwrite=args.overwrite
    )
    for name, r in results.items():
        s = r.summary
        utils = ", ".join(
            f"{res} {100 * v:.1f} %" if v is not None else f"{res} -"
            for res, v in s["mean_utilization"].items()
        )
        print(
            f"{name:>16}: {s['tasks_completed']:,}/{s['tasks']:,} tasks completed, {utils}; "
            f"{_format_speed(s)}"
        )
    summaries = {name: r.summary for name, r in results.items()}
    overload = overload_line(summaries)
    if overload is not None:
        print(overload, file=sys.stderr)
    unplaceable = unplaceable_line(summaries)
    if unplaceable is not None:
        print(unplaceable, file=sys.stderr)
    print(f"results in {Path(target)}")
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add ``fairsim run`` to the subcommands."""
    from fairsim.schedulers.registry import available

    schedulers = ", ".join(available())
    r = add_command(
        sub,
        "run",
        cmd_run,
        "simulate one YAML scenario",
        epilog=f"scheduler names: {schedulers} (S: slots per largest server, e.g. slots-14); "
        "with parameters: {name: psdsf, period_s: 2}\n"
        "trace formats: google-2011, canonical, synthetic, inline, alibaba-2017, "
        "alibaba-2018, alibaba-2018-spar, alibaba-gpu-2023\n"
        "example: fairsim run configs/google-1h.yaml --out results/google-1h "
        "--set cluster.servers=200",
        wrap=True,
    )
    r.add_argument("config", help="the scenario, a YAML file (configs/, docs/getting-started.md)")
    add_out(
        r,
        "output folder (default results/<name>, relative to the working directory); "
        "refused if it exists and is not empty, unless --overwrite",
        overwrite="replace an existing --out folder whole",
    )
    r.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value before validation, e.g. --set cluster.servers=500 or "
        "--set 'schedulers=[ff-drfh, bf-drfh]' (value parsed as YAML; repeatable; a relative "
        "path given here is relative to the working directory)",
    )
    add_no_progress(r)
