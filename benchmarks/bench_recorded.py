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

Output (atomic): ``recorded.json`` in ``--out`` (:meth:`benchmarks.targets.RunInfo.record`: the
targets, the commit and the machine, then the figures) and a table on stdout.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.targets import Target, google_overrides, paired_context, paired_main
from fairsim.experiments import config_path
from fairsim.scenario.reporting.markdown import table

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
    shared, end_s, cache_dir
        As for :func:`~benchmarks.targets.google_overrides` (the config's window: the whole
        sample).
    pairs : int
        Runs of each scheduler, alternating.

    Returns
    -------
    dict
        ``points`` (one per run label: ``tasks``, ``tasks_per_s`` of every run and their
        ``median``), ``ratio`` and ``ratios`` (``recorded``, reading ``schedule``: median and
        every round's recorded / ff-drfh), ``ratio_first`` and ``ratios_first`` (the same for
        ``recorded-first``) and ``targets`` (two :class:`~benchmarks.targets.Target`: each
        reading's ratio >= 1).
    """
    from fairsim.scenario.config import load_config
    from fairsim.scenario.pipeline import prepare_scenario

    overrides = google_overrides(shared, end_s, cache_dir)
    overrides.append(f"schedulers={ENTRIES}")
    overrides.append("collect.fairness=null")  # the config's fairness over time is not timed here
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
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
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
        "ratio_first": statistics.median(ratios_first),
        "loadavg_1m_at_end": load,
        "targets": [
            target("ratio", "recorded", ratios, load),
            target("ratio_first", "recorded-first", ratios_first, load),
        ],
    }


def target(name: str, label: str, ratios: Sequence[float], load: float | None) -> Target:
    """The run ``label`` (a reading of ``recorded``) at least as fast as FF-DRFH: the median of
    the rounds' ratios >= 1."""
    what = f"{label} over FF-DRFH, tasks per second of engine wall time"
    ctx = paired_context(ratios, load, "pairs'")
    return Target.check(name, what, statistics.median(ratios), "×", ">=", TARGET_RATIO, ctx)


def summary_markdown(res: dict[str, Any]) -> str:
    """The point as a Markdown table."""
    title = (
        f"recorded (both readings) vs ff-drfh on {res['servers']:,} machines "
        f"(setup {res['setup_s']:.1f} s)"
    )
    rows = [
        (p["scheduler"], f"{p['tasks']:,}", f"{p['median_tasks_per_s']:,.0f}")
        for p in res["points"]
    ]
    return "\n".join([title, "", *table(["scheduler", "tasks", "median tasks/s"], rows)])


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.bench_recorded [--shared DIR] [--out DIR] [--pairs N]``."""
    return paired_main("recorded", __doc__, bench_recorded, summary_markdown, argv)


if __name__ == "__main__":
    sys.exit(main())
