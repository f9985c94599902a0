"""``make experiment``: the DRFH paper's Section VI on the real Google 2011 sample.

Steps, all written under ``OUT`` (default ``results/drfh-google``):

1. ``configs/drfh-google.yaml``: Slots with 10, 12, 14, 16 and 20 slots per maximum server,
   First-Fit and Best-Fit DRFH, on 2,000 servers drawn from Table I, replaying task_events parts
   0-13 (Table II, Figs. 5-7).
2. Sharing incentive (Fig. 8, Section IV-D): every user's tasks alone on a *dedicated cloud* of
   ``k/n`` servers drawn from the same Table I distribution (k = 2,000 servers, n = number of
   users), with Best-Fit DRFH, compared with the same user's completion ratio in the shared run.
   ``k/n`` is not an integer (2,000/567 ≈ 3.53): each user gets ``floor(k/n)`` servers plus one
   more with probability ``frac(k/n)`` (seeded), so the dedicated clouds add up to ``k`` servers
   in expectation. Each dedicated cloud is one scenario of the scenario pipeline whose workload
   and pool hooks give the user's tasks and its servers.
3. Sensitivity to the rule for right-censored tasks (tasks still running when the trace data
   ends, whose run time is unknown): steps 1-2 use the rule ``hold`` (they never complete); the
   best Slots run, Best-Fit DRFH and the dedicated clouds are run again under the older rule
   ``complete`` (they complete after their observed span, a lower bound) into
   ``OUT/censored-complete/``, so the report can show how much Figs. 6-8 depend on it.
4. ``configs/drfh-fig4.yaml``: the dynamic three-user run on 100 servers (Fig. 4).
5. Figures (``fig4.png`` ... ``fig8.png``) and ``report.md`` with our numbers beside the paper's.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from fairsim.experiments import config_path
from fairsim.experiments.drfh import paper as paper
from fairsim.experiments.drfh.figures import SENSITIVITY_DIR
from fairsim.scenario.config import RunConfig, load_config
from fairsim.scenario.output import run_config
from fairsim.scenario.sharing import dedicated_cloud_sizes as dedicated_cloud_sizes
from fairsim.scenario.sharing import sharing_incentive

log = logging.getLogger(__name__)

CONFIGS = config_path("")

#: Table II's memory column: what we found (docs/drfh-google.md has the measurements).
_TABLE_II_MEMORY = (
    "Not explained. Under multi-slot Slots the slots are full at every slot count (the backlog "
    "never drains), so utilisation is the slot capacity times what the running tasks use per "
    "slot, and smaller slots round a task's memory up less: our memory rises with S. The "
    "paper's memory falls from 14 to 16 slots while its CPU still rises, which needs the "
    "running tasks to shift towards low-memory ones; no model we measured does that (multi-slot, "
    "one slot per task, CPU-sized slots), and neither the pool's values (Table I's or the "
    "trace's agree within 0.1 pp) nor the backlog present at time 0 (without it memory still "
    "rises) explains it."
)

#: Why our numbers differ from the paper's, keyed like the report's items.
EXPLANATIONS = {
    "table_ii": (
        "The paper does not say how a task larger than a slot is treated nor how a server's "
        "slots are counted (we use multi-slot tasks, ceil(max_r d_r * S) slots, on "
        "floor((min_r c_r + 0.0012) * S) slots per server); our trace window is 19.7 h, not "
        "24 h, and our 2,000-server draw is not the paper's (over 5 seeds a row moves by about "
        "0.5 pp)."
    ),
    "table_ii:memory": _TABLE_II_MEMORY,
    **{f"table_ii:{s}:mem": "see the note on the memory column below." for s in paper.TABLE_II},
    "fig4": (
        "The paper gives the demands and join times but not the number of tasks or their run "
        "times; with indivisible tasks a user whose next task fits no server's leftovers is "
        "blocked, so shares are equal only up to one task's size."
    ),
    "fig6": (
        "Under the rule hold, every right-censored task that starts keeps its server to the end "
        "of the window, so the rest of the workload shares what is left and both schedulers "
        "queue; Slots, which rounds each demand up to whole slots, queues small jobs much "
        "longer. Under the older rule (censored tasks complete after their observed span) small "
        "jobs gain far less (sensitivity line below); the trace slice, horizon and Slots "
        "baseline also differ from the paper's."
    ),
    "fig6:trend": (
        "The bins above 100 tasks hold few jobs finished under both (see the table), so their "
        "means move with a handful of long jobs; the trace slice and horizon differ from the "
        "paper's."
    ),
    "fig7": (
        "Under the rule hold a user with a right-censored task can never complete every task "
        "(the line above gives how many users that leaves); the trace slice, horizon and Slots "
        "baseline differ from the paper's, which gives only 'around 20%'."
    ),
    "fig8": (
        "Our dedicated clouds have 3 or 4 servers each (2,000/567 users); a user whose tasks "
        "need a large server may find none in its dedicated cloud."
    ),
}


def _config(name: str, trace_dir: Path, quick: bool, extra: list[str] | None = None) -> RunConfig:
    overrides = [f"trace.path={trace_dir}"] if name == "drfh-google" else []
    if quick and name == "drfh-google":
        overrides += ["trace.end_s=7200", "cluster.servers=400"]
    return load_config(CONFIGS / f"{name}.yaml", overrides=overrides + (extra or []))


def run_experiment(*, shared: Path, out: Path, quick: bool = False, progress: bool = True) -> Path:
    """Run the whole reproduction and return the path of ``report.md``.

    Parameters
    ----------
    shared : Path
        The ``shared`` folder holding ``traces/google-2011``; when that is missing, the sample is
        fetched into the download cache (:func:`fairsim.traces.fetch.google_2011_sample`).
    out : Path
        Output folder.
    quick : bool
        A 2-hour slice on 400 servers (a smoke test of the whole pipeline in about a minute).

    Raises
    ------
    fairsim.errors.TraceError
        If the sample must be fetched and a download fails or does not verify.
    """
    from fairsim.experiments.drfh import figures as figures
    from fairsim.experiments.drfh.report import collect_numbers, write_report
    from fairsim.traces.fetch import google_2011_sample

    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    sample = google_2011_sample(shared, progress=progress)
    main_cfg = _config("drfh-google", sample, quick)
    log.info(
        "step 1/5: %s on %s servers",
        ", ".join(main_cfg.scheduler_labels()),
        main_cfg.cluster.servers,
    )
    # the reproduction replaces its folder by design (``make experiment`` twice works)
    summaries = run_config(main_cfg, out, progress=progress, report=False, overwrite=True)
    log.info("step 2/5: sharing incentive (dedicated clouds)")
    sharing_incentive(main_cfg, out, progress=progress)
    best = figures.best_slots(figures.table_ii(out))
    log.info("step 3/5: %s and bf-drfh under the older rule for right-censored tasks", best)
    old_rule = _config(
        "drfh-google", sample, quick, ["trace.censored=complete", f"schedulers=[{best},bf-drfh]"]
    )
    run_config(old_rule, out / SENSITIVITY_DIR, progress=progress, report=False)
    sharing_incentive(old_rule, out / SENSITIVITY_DIR, progress=progress)
    log.info("step 4/5: Fig. 4 dynamic three-user run")
    run_config(_config("drfh-fig4", sample, quick), out / "fig4", progress=progress, report=False)
    log.info("step 5/5: figures and report")
    numbers: dict[str, Any] = collect_numbers(out)
    numbers["explanations"] = EXPLANATIONS
    numbers["wall_s_total"] = round(time.perf_counter() - t0, 1)
    numbers["run_summaries"] = summaries
    return write_report(out, numbers=numbers)
