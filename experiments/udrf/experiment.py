"""The runs of the UDRF reproduction (Section V, Figs. 6-10), one seed at a time.

UDRF paper (Tahir et al.), Section V, on ``configs/udrf-google.yaml`` (the Google trace with
machine classes and placement constraints, repeated jobs, a waiting queue of 100 jobs; its
comments give every choice the paper leaves open). Three schedulers run on it: ``drf-lockstep``
(:mod:`fairsim.schedulers.drf_lockstep`), the paper's DRF baseline; ``udrf``
(:mod:`fairsim.schedulers.udrf_online`), the online UDRF of Fig. 5; and ``drf-classes``
(:mod:`fairsim.schedulers.drf_classes`), task-level DRF beside them. ``docs/udrf.md`` gives the
mapping of the paper's setup and our definitions of the JCT and of wasted resources.

:func:`run_seed` runs them with one seed (the pool draw, the repetitions and run times, and the
constraint model; the trace is fixed) through the scenario pipeline
(:func:`fairsim.scenario.pipeline.prepare_scenario`) with two hooks: every scheduler is wrapped in
a watcher of its waiting tasks, and the waste
(:meth:`fairsim.simulator.scheduler.WaitingTasks.wasted`) and the RDUCs are measured at every
grid point. It writes ``waste.parquet`` (Fig. 9), ``jct.parquet`` (Fig. 10a: per scheduler and
job, from its entry into the queue, split into wait and execution), ``rducs.parquet`` (Figs. 6-7),
``jobs.parquet`` (Fig. 8) and ``summary.json`` (this seed's headline numbers).
:func:`run_experiment` runs the seeds, in parallel; the claims over seeds are made by
:mod:`fairsim.experiments.udrf.claims`. ``quick`` runs a small version (the jobs of 5 minutes of
the trace on 100 servers, the baseline and UDRF only) for the test suite.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from fairsim.errors import ConfigError
from fairsim.experiments import config_path
from fairsim.experiments.claims import seed_list
from fairsim.experiments.kit import Options, seed_dir
from fairsim.scenario.config import ConstraintModel, load_config
from fairsim.scenario.pipeline import Hooks, SchedulerRun, default_scheduler, prepare_scenario
from fairsim.scenario.sweep import run_seeds
from fairsim.schedulers.udrf_online import UDRF
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.constraints import job_facts
from fairsim.simulator.jobs import admission_times
from fairsim.simulator.results import job_times, write_json, write_run, write_table
from fairsim.simulator.scheduler import WaitingTasks

log = logging.getLogger(__name__)

CONFIG = config_path("udrf-google.yaml")
#: The paper's DRF baseline and online UDRF (the config's ``schedulers`` must include both).
BASELINE = "drf-lockstep"
UDRF_NAME = "udrf"
#: --quick: jobs submitted in [QUICK_START_S, QUICK_END_S) of the trace, on QUICK_SERVERS servers
#: (the thousands of jobs that exist when the trace starts are submitted at 600 s: left out).
QUICK_START_S = 601.0
QUICK_END_S = 900.0
QUICK_SERVERS = 100


def seed_config(
    seed: int,
    *,
    config: Path = CONFIG,
    trace: Path | None = None,
    quick: bool = False,
    overrides: Sequence[str] = (),
) -> Any:
    """The scenario of one seed: ``config`` with ``seed``, the trace folder and ``quick``'s
    slice, then ``overrides`` (``dotted.key=value``).

    Raises
    ------
    fairsim.errors.ConfigError
        If the scenario does not list both ``drf-lockstep`` and ``udrf``.
    """
    ovr = [f"seed={seed}"]
    if trace is not None:
        ovr.append(f"trace.path={trace}")
    if quick:
        ovr += [
            f"trace.start_s={QUICK_START_S}",
            f"trace.end_s={QUICK_END_S}",
            f"cluster.servers={QUICK_SERVERS}",
            f"schedulers=[{BASELINE},{UDRF_NAME}]",
        ]
    cfg = load_config(config, overrides=[*ovr, *overrides])
    names = cfg.scheduler_labels()
    if BASELINE not in names or UDRF_NAME not in names:
        raise ConfigError(
            f"schedulers: {names} (the UDRF reproduction compares {BASELINE!r} with "
            f"{UDRF_NAME!r}; both must be listed)"
        )
    return cfg


def run_seed(
    seed: int,
    out: Path,
    config: Path = CONFIG,
    trace: Path | None = None,
    quick: bool = False,
    overrides: Sequence[str] = (),
    progress: bool = False,
) -> dict[str, Any]:
    """Run the schedulers of the scenario with one seed and write the seed's files into ``out``.

    Parameters
    ----------
    seed : int
        The run's seed (pool, repetitions and run times, constraint model).
    out : Path
        The seed's folder (created).
    config, trace, quick, overrides
        The scenario, as in :func:`seed_config`: the config file (default
        ``configs/udrf-google.yaml``), the Google sample's folder (default: the config's
        ``trace.path``), the small version (:data:`QUICK_SERVERS` servers, the jobs submitted in
        [:data:`QUICK_START_S`, :data:`QUICK_END_S`), ``drf-lockstep`` and ``udrf`` only) and
        ``dotted.key=value`` overrides (e.g. ``trace.constraints.model=any-of``).
    progress : bool
        Progress bars (off in worker processes).

    Returns
    -------
    dict
        The seed's ``summary.json``.
    """
    cfg = seed_config(seed, config=config, trace=trace, quick=quick, overrides=overrides)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    waste_rows: list[tuple[str, float, float, float]] = []
    rduc_rows: list[tuple[float, float, float, float]] = []

    def sample(run: SchedulerRun, t: float, cluster: ClusterState) -> None:
        watch = run.scheduler
        assert isinstance(watch, WaitingTasks)
        w = watch.wasted()
        waste_rows.append((run.name, t, float(w[0]), float(w[1])))
        if isinstance(watch.inner, UDRF) and watch.inner.pending():
            deg = list(watch.inner.degrees().values())
            mean = float(np.mean(deg)) if deg else 0.0
            rduc_rows.append((t, float(len(watch.inner.rducs())), float(len(deg)), mean))

    # the scenario pipeline, with every scheduler wrapped in a watcher of its waiting tasks and
    # the waste and RDUCs measured at every grid point
    scenario = prepare_scenario(
        cfg,
        base=Path(config).parent,
        progress=progress,
        hooks=Hooks(scheduler=lambda run: WaitingTasks(default_scheduler(run)), on_sample=sample),
    )
    index = scenario.constraint_index
    assert index is not None, "the UDRF scenario has placement constraints"
    n_classes = len(set(index().classes.tolist()))
    facts = job_facts(scenario.open_source)
    write_table(pa.Table.from_pandas(facts, preserve_index=False), out / "jobs.parquet")
    times: list[pd.DataFrame] = []
    runs: dict[str, dict[str, Any]] = {}
    for run in scenario.runs(progress=progress):
        name, result, gate = run.name, run.result, run.gate
        assert result is not None
        assert gate is not None, "the UDRF scenario has a job queue"
        entry = admission_times(gate, result.tasks["submit_s"], result.tasks["finish_s"])
        times.append(job_times(result.tasks, entry).assign(scheduler=name))
        done = write_run(result, out / name, extra_summary={"config_hash": cfg.config_hash()})
        keys = ("tasks", "tasks_completed", "wall_s", "tasks_per_s", "ended")
        runs[name] = {k: done.get(k) for k in keys}
        log.info("seed %d, %s: %d tasks in %.1f s", seed, name, done["tasks"], done["wall_s"])
    waste = pd.DataFrame(waste_rows, columns=["scheduler", "time_s", "cpu", "mem"])
    write_table(pa.Table.from_pandas(waste, preserve_index=False), out / "waste.parquet")
    rduc = pd.DataFrame(rduc_rows, columns=["time_s", "rducs", "users", "mean_degree"])
    write_table(pa.Table.from_pandas(rduc, preserve_index=False), out / "rducs.parquet")
    jct = pd.concat(times, ignore_index=True).merge(
        facts.drop(columns="class_set"), on="job_id", how="left"
    )
    jct = jct[["scheduler", *(c for c in jct.columns if c != "scheduler")]]
    write_table(pa.Table.from_pandas(jct, preserve_index=False), out / "jct.parquet")
    spec = cfg.trace.constraints
    model = isinstance(spec, ConstraintModel)
    summary = {
        "seed": seed,
        "quick": quick,
        "servers": len(scenario.pool),
        "machine_classes": n_classes,
        "jobs": len(facts),
        "constraint_model": spec.model if model else str(spec),
        "classes_target": (
            {str(k): v for k, v in spec.classes.items()}
            if model and isinstance(spec.classes, dict)
            else None
        ),
        "repetition_mode": cfg.trace.repetition_mode,
        "schedulers": per_scheduler(jct, waste),
        "runs": runs,
    }
    write_json(summary, out / "summary.json")
    return summary


def _seed_run(seed: int, out: str, trace: str | None, quick: bool) -> dict[str, Any]:
    """One seed into ``OUT/seed-<seed>`` (a module-level function: worker processes import it)."""
    return run_seed(seed, seed_dir(out, seed), trace=Path(trace) if trace else None, quick=quick)


def run_experiment(options: Options) -> dict[str, Any]:
    """Run seeds ``1 .. seeds`` over ``jobs`` worker processes into ``out/seed-<s>/`` (the
    claims, figures and ``report.md`` come from
    :func:`fairsim.experiments.udrf.report.write_report`).

    Parameters
    ----------
    options : fairsim.experiments.kit.Options
        ``shared`` holds ``traces/google-2011`` (when missing, the sample is fetched into the
        download cache, :func:`fairsim.traces.fetch.google_2011_sample`; ``None``: the config's
        ``trace.path``); ``quick`` is the small version of :func:`run_seed`.

    Returns
    -------
    dict
        ``seeds`` (the seed list), ``config`` (seed 1's scenario), ``jobs`` and ``started``
        (``time.perf_counter()`` at the start, for the report's wall time).

    Raises
    ------
    fairsim.errors.ConfigError
        For ``seeds < 1`` or a scenario without both ``drf-lockstep`` and ``udrf``.
    """
    t0 = time.perf_counter()
    shared, quick, progress, jobs = options.shared, options.quick, options.progress, options.jobs
    ids = seed_list(options.seeds)
    trace = None
    if shared is not None:
        from fairsim.traces.fetch import google_2011_sample  # fetched when shared lacks it

        trace = google_2011_sample(Path(shared), progress=progress)
    cfg = seed_config(ids[0], trace=trace, quick=quick)  # refuses a bad scenario before any run
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    run_seeds(
        _seed_run,
        ids,
        str(out),
        str(trace) if trace else None,
        quick,
        jobs=jobs,
        progress=progress,
        desc="udrf seeds",
    )
    return {"seeds": ids, "config": cfg, "jobs": jobs, "started": t0}


def per_scheduler(jct: pd.DataFrame, waste: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """Headline numbers of one seed per scheduler: jobs completed, mean and median JCT, its
    wait and execution parts, the time before the queue, the last finish, and the mean waste
    while the scheduler had work (up to its last finish, not over the idle tail)."""
    per: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(jct["scheduler"]):  # in run order
        done = jct[jct["scheduler"] == name].dropna(subset=["jct_s"])
        end = float(done["finish_s"].max()) if len(done) else math.nan
        w = waste[(waste["scheduler"] == name) & (waste["time_s"] <= end)]
        per[str(name)] = {
            "jobs_completed": len(done),
            "jct_mean_s": float(done["jct_s"].mean()),
            "jct_median_s": float(done["jct_s"].median()),
            "wait_mean_s": float(done["wait_s"].mean()),
            "exec_mean_s": float(done["exec_s"].mean()),
            "before_queue_mean_s": float((done["entry_s"] - done["submit_s"]).mean()),
            "makespan_s": end,
            "wasted_mean": {r: float(w[r].mean()) for r in ("cpu", "mem")},
        }
    return per
