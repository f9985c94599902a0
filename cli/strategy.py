"""``fairsim strategy``: does gaming pay over time? One user at a time replays the scenario with
a strategy (inflate, split, hoard) beside the truthful run, per seed, and the two are compared
(:func:`fairsim.scenario.strategy.run_strategy`)."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from fairsim.cli.argtypes import Subparsers, seed_list
from fairsim.cli.options import add_command, add_executor, add_no_progress


def cmd_strategy(args: argparse.Namespace) -> int:
    """Run CONFIG truthfully once per seed and, beside it, once per user and strategy with that
    user's tasks as the strategy presents them; compare the user's real tasks completed by the
    horizon (gain) and every other user's (harm). Re-running the same command resumes (finished
    runs are kept).

    Prints the gain table's headline and where the files are.
    """
    from fairsim.atomic import check_writable_dir
    from fairsim.scenario.api import load_scenario
    from fairsim.scenario.strategy import STRATEGY_FILE, gain_summary, run_strategy

    loaded = load_scenario(args.config)
    check_writable_dir(args.out)
    table = run_strategy(
        loaded.config,
        Path(args.out),
        users=args.users,
        strategies=args.strategy,
        seeds=args.seeds,
        executor=args.executor,
        base=loaded.base,
        progress=not args.no_progress,
    )
    summary = gain_summary(table)
    for row in summary.to_dict("records"):
        half = "" if math.isnan(row["gain_half"]) else f" ± {100 * row['gain_half']:.2f}"
        print(
            f"{row['scheduler']:>14} {row['strategy']}:{row['params']:<16} gain "
            f"{100 * row['gain_mean']:+.2f} %{half} (over {row['seeds']} seeds), harm "
            f"{100 * row['harm_mean']:+.2f} %"
        )
    print(f"results in {args.out} ({STRATEGY_FILE}, report.md, gain.png)")
    return 0


def add_parser(sub: Subparsers) -> None:
    """Add ``fairsim strategy`` to the subcommands."""
    help = "strategic users: what inflate, split or hoard gains over the truthful run"
    p = add_command(sub, "strategy", cmd_strategy, help)
    p.add_argument("config", help="the scenario, a YAML file")
    p.add_argument(
        "--users",
        required=True,
        help="top:K (the K users that submit the most tasks in the window; each seed's own for "
        "a synthetic workload, which is drawn from the seed) or U1,U2,...",
    )
    p.add_argument(
        "--strategy",
        action="append",
        required=True,
        metavar="SPEC",
        help="inflate:<resource>=<factor >= 1>[,...] (resource: cpu, mem, dominant, "
        "nondominant), split:k=<int >= 1>[,by=round-robin|seed], "
        "hoard:cap=<int >= 0>[,lead_s=<s>]; repeat for several",
    )
    p.add_argument("--seeds", type=seed_list, default=[1], help="seeds: 1,2,3 or 1-5 (default 1)")
    p.add_argument("--out", required=True, help="output folder (new, or a study's to resume)")
    add_executor(p)
    add_no_progress(p, "no progress bar")
