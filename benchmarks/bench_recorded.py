"""``make bench``: the replay of recorded placements against First-Fit DRFH (issue 32).

Target (docs/recorded.md): the scheduler ``recorded`` replays the Google sample at least as fast
as FF-DRFH on the same trace and pool, in tasks per second of the engine's wall time
(``EngineResult.wall_s``), under both readings of its requests (``recorded``: ``requests:
schedule``, each run's own request, the default; ``recorded-first``: ``requests: first``, each
task's first request). The point is ``configs/google-recorded.yaml``: task_events parts 0-13
(the whole sample) on the trace's 12,583 machines (``cluster: {source: machine-events}``).

The scenario is prepared once (conversion, pool, the recorded placements mapped to the pool:
``setup_s``); the three runs then alternate, ``recorded``, ``recorded-first``, FF-DRFH,
``--pairs`` times (default 3) in this process; a run's speed is its tasks over its engine wall
time, and the point reports the median of each and, per reading, the median of the ratios to
the FF-DRFH run of the same round.

Output (atomic): ``recorded.json`` in ``--out`` and a table on stdout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fairsim.atomic import json_text, write_text
from fairsim.experiments import config_path

CONFIG = config_path("google-recorded.yaml")
#: The runs (labels) of every round, and the config entries that give them.
SCHEDULERS = ("recorded", "recorded-first", "ff-drfh")
ENTRIES = "[recorded, {name: recorded, requests: first}, ff-drfh]"
#: ``recorded`` must be at least as fast as FF-DRFH (ratio of tasks per second >= 1), under
#: both readings of its requests.
TARGET_RATIO = 1.0


def bench_recorded(
    shared: Path, pairs: int = 3, *, end_s: float | None = None, cache_dir: Path | None = None
) -> dict[str, Any]:
    """Time ``recorded`` and FF-DRFH on the sample and the trace's machines.

    Parameters
    ----------
    shared : Path
        The folder holding ``traces/google-2011``.
    pairs : int
        Runs of each scheduler, alternating.
    end_s : float, optional
        End of the window (a shorter run for smoke tests); None: the whole sample.
    cache_dir : Path, optional
        Where converted traces are cached (default: the config's).

    Returns
    -------
    dict
        ``points`` (one per run label: ``tasks``, ``tasks_per_s`` of every run and their
        ``median``), ``ratio`` and ``ratios`` (``recorded``, reading ``schedule``: median and
        every round's recorded / ff-drfh), ``ratio_first`` and ``ratios_first`` (the same for
        ``recorded-first``), ``target_ratio`` and ``ok`` (both medians at least the target).
    """
    from fairsim.scenario.config import load_config
    from fairsim.scenario.pipeline import prepare_scenario

    overrides = [f"trace.path={Path(shared) / 'traces' / 'google-2011'}"]
    overrides.append(f"schedulers={ENTRIES}")
    overrides.append("collect.fairness=null")  # the config's fairness over time is not timed here
    if end_s is not None:
        overrides.append(f"trace.end_s={end_s!r}")
    if cache_dir is not None:
        overrides.append(f"trace.cache_dir={cache_dir}")
    t0 = time.perf_counter()
    scenario = prepare_scenario(load_config(CONFIG, overrides=overrides))
    setup = time.perf_counter() - t0
    speeds: dict[str, list[float]] = {s: [] for s in SCHEDULERS}
    tasks: dict[str, int] = {}
    for _ in range(pairs):
        for run in scenario.runs(names=list(SCHEDULERS)):
            res = run.result
            assert res is not None
            n = len(res.tasks["submit_s"])
            tasks[run.name] = n
            speeds[run.name].append(n / res.wall_s if res.wall_s > 0 else float("nan"))
    ratios = [a / b for a, b in zip(speeds["recorded"], speeds["ff-drfh"], strict=True)]
    ratio = statistics.median(ratios)
    ratios_first = [a / b for a, b in zip(speeds["recorded-first"], speeds["ff-drfh"], strict=True)]
    ratio_first = statistics.median(ratios_first)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "benchmark": "recorded",
        "config": str(CONFIG),
        "window_end_s": end_s,
        "servers": len(scenario.pool),
        "setup_s": setup,
        "points": [
            {
                "scheduler": s,
                "tasks": tasks[s],
                "tasks_per_s": speeds[s],
                "median_tasks_per_s": statistics.median(speeds[s]),
            }
            for s in SCHEDULERS
        ],
        "ratios": ratios,
        "ratio": ratio,
        "ratios_first": ratios_first,
        "ratio_first": ratio_first,
        "target_ratio": TARGET_RATIO,
        "ok": ratio >= TARGET_RATIO and ratio_first >= TARGET_RATIO,
        "loadavg_1m_at_end": load,
    }


def summary_markdown(res: dict[str, Any]) -> str:
    """The point as a Markdown table."""
    lines = [
        f"recorded vs ff-drfh on {res['servers']:,} machines (setup {res['setup_s']:.1f} s)",
        "",
        "| scheduler | tasks | median tasks/s |",
        "|---|---|---|",
    ]
    for p in res["points"]:
        lines.append(f"| {p['scheduler']} | {p['tasks']:,} | {p['median_tasks_per_s']:,.0f} |")
    verdict = "PASS" if res["ok"] else "FAIL"
    lines += [
        "",
        f"recorded / ff-drfh: {res['ratio']:.2f}, recorded-first / ff-drfh: "
        f"{res['ratio_first']:.2f} (target >= {TARGET_RATIO:g}): {verdict}",
    ]
    return "\n".join(lines) + "\n"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bench_recorded", description=__doc__)
    p.add_argument(
        "--shared",
        type=Path,
        default=Path(os.environ.get("FAIRSIM_SHARED", "../shared")),
        help="folder holding traces/google-2011 (default $FAIRSIM_SHARED or ../shared)",
    )
    p.add_argument("--out", type=Path, default=Path("results/bench"), help="output folder")
    p.add_argument("--pairs", type=int, default=3, help="runs of each scheduler (default 3)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    res = bench_recorded(args.shared, args.pairs)
    args.out.mkdir(parents=True, exist_ok=True)
    write_text(args.out / "recorded.json", json_text(res))
    sys.stdout.write(summary_markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
