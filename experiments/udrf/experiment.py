"""``make reproduce-udrf``: the UDRF paper's Section V (Figs. 6-10) on the real Google sample.

UDRF paper (Tahir et al.), Section V: the Google trace with machine classes and placement
constraints; each job runs a random number of times; a waiting queue of 100 jobs; run times
uniform in 10-100 s; DRF with machine classes mapped to resource types against online UDRF. The
scenario is ``configs/udrf-google.yaml`` (its comments give every choice the paper leaves open).
Three schedulers run on it:

* ``drf-lockstep`` (:mod:`fairsim.schedulers.drf_lockstep`), **the paper's DRF baseline**: a user is
one DRF
  user whose demand is the gross vector of its queued jobs, so its jobs advance together, one
  instance each ("the number of job instance of each job are equal and fixed", Section V);
* ``udrf`` (:mod:`fairsim.schedulers.udrf_online`), the online UDRF of Fig. 5;
* ``drf-classes`` (:mod:`fairsim.schedulers.drf_classes`), task-level DRF over the same (class,
resource)
  types, reported beside them to show how much the result depends on the baseline.

Measured, per scheduler (written into ``OUT``, default ``results/udrf``):

* **Wasted resources** (Fig. 9). The paper does not define the quantity it plots; its Section II-A
  calls resources *wasted* when they are left idle although a user could use them. We measure
  exactly that at every grid point (``collect.utilization_interval_s``): the free CPU and memory of
  the servers on which at least one waiting task (released to the scheduler, not placed) could start
  now (its constraint allows the server and it fits), as a fraction of the pool's total.
  ``waste.parquet``: ``scheduler, time_s, cpu, mem``.
* **JCT** (Fig. 10a) from the moment the job *entered the waiting queue of 100 jobs* (admitted by
  the job gate, :func:`fairsim.simulator.jobs.admission_times`) to the end of its last task, split
  into the **wait** (queue entry to first task start) and the **execution** (first start to last
  finish); the time before the queue (first submit to queue entry) is reported on its own.
  ``jct.parquet``: one row per scheduler and job.
* **JCT reduction** of UDRF over the baseline (``1 - mean JCT_udrf / mean JCT_base`` over the jobs
  completed under both) by number of repetitions (Fig. 10b) and by number of machine classes the job
  needs (Fig. 10c: with the ``pinned`` constraint model, the distinct classes its tasks are pinned
  to; 0 = unconstrained).
* **RDUCs** (Fig. 7) and the users' degrees in the user dependency graph (Fig. 6) at every grid
  point under UDRF; the CDF of the machine classes the jobs need (Fig. 8) from the constraint model.

The runs go through the scenario pipeline
(:func:`fairsim.scenario.pipeline.prepare_scenario`) with two hooks: every scheduler is
wrapped in a watcher of its waiting tasks, and the waste and the RDUCs are measured at every grid
point.

``report.md`` checks every statement of the paper's Section V (its figures give no numbers in the
text) as PASS, FAIL or n/a with the reason; ``summary.json`` has the numbers. ``--quick`` runs a
small version (the jobs of 5 minutes of the trace on 100 servers, the baseline and UDRF only) for
the test suite.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from fairsim.atomic import write_text
from fairsim.errors import ConfigError
from fairsim.experiments import config_path
from fairsim.scenario.config import ConstraintModel, RunConfig, load_config
from fairsim.scenario.pipeline import Hooks, SchedulerRun, default_scheduler, prepare_scenario
from fairsim.schedulers.udrf_online import UDRF
from fairsim.simulator.cluster import ClusterState
from fairsim.simulator.jobs import admission_times
from fairsim.simulator.results import write_json, write_run, write_table
from fairsim.simulator.scheduler import DelegatingScheduler, Scheduler
from fairsim.simulator.workload import TaskSource

log = logging.getLogger(__name__)

CONFIG = config_path("udrf-google.yaml")
#: The paper's DRF baseline, online UDRF, and the task-level DRF variant (the config's
#: ``schedulers``, which must include the first two).
BASELINE = "drf-lockstep"
UDRF_NAME = "udrf"
TASK_LEVEL = "drf-classes"
SCHEDULERS = (BASELINE, UDRF_NAME, TASK_LEVEL)
#: --quick: jobs submitted in [QUICK_START_S, QUICK_END_S) of the trace, on QUICK_SERVERS servers
#: (the thousands of jobs that exist when the trace starts are submitted at 600 s: left out).
QUICK_START_S = 601.0
QUICK_END_S = 900.0
QUICK_SERVERS = 100
#: The paper's statements (Section V), checked in report.md, in the paper's order.
PAPER = {
    "fig6": "the more users are in the system, the higher the node degree in RDUCs (Fig. 6)",
    "fig7": "the system has from one to eight RDUCs (Fig. 7)",
    "fig8": "around 65 % of jobs required between one to two machine classes (Fig. 8)",
    "users": "users executing a large number of jobs often have demands on a wide range of "
    "machine classes",
    "fig9": "DRF wastes CPU and memory that UDRF uses (Fig. 9)",
    "fig10a": "UDRF's JCT CDF lies left of DRF's (Fig. 10a)",
    "fig10c": "the more machine classes a job needs, the more JCT reduction (Fig. 10c)",
    "fig10b": "the more times a job is required to execute, the higher the JCT reduction "
    "(Fig. 10b)",
    "queue": "under DRF, jobs that run many times stay longer in the waiting queue, and newly "
    "arrived jobs wait longer for it",
}
#: A trend (Figs. 6, 10b/c) holds when the rank correlation with the group is at least TREND_RHO
#: and the last group's value exceeds the first's by TREND_PP percentage points.
TREND_RHO = 0.5
TREND_PP = 2.0
#: Fig. 8 "around 65 %": PASS within FIG8_BAND percentage points.
FIG8_BAND = 10.0


class _Watch(DelegatingScheduler):
    """Delegate to a scheduler and keep the set of waiting tasks (for the waste measurement)."""

    def __init__(self, inner: Scheduler) -> None:
        super().__init__(inner)
        self.waiting: dict[int, tuple[float, ...]] = {}

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self.waiting[task] = demand
        self.inner.on_arrival(task, user, demand)

    def decide(self) -> Iterator[tuple[int, int]]:
        for task, server in self.inner.decide():
            del self.waiting[task]
            yield task, server


def wasted(watch: _Watch, cluster: ClusterState) -> np.ndarray:
    """Free resources of the servers where some waiting task could start now.

    UDRF paper, Section II-A: resources are wasted when they stay idle although a user could use
    them (the quantity of Fig. 9, which the paper does not define further).

    Parameters
    ----------
    watch : _Watch
        The wrapped scheduler, with its waiting (released, not placed) tasks.
    cluster : ClusterState
        The pool at the sample time.

    Returns
    -------
    ndarray, shape (n_resources,)
        Wasted amount of every resource as a fraction of the pool's total.
    """
    free = np.asarray(cluster.free)
    usable = np.zeros(len(free), dtype=bool)
    view = watch.cluster_
    kinds: dict[tuple[tuple[float, ...], int], np.ndarray | None] = {}
    for task, demand in watch.waiting.items():
        mask = view.task_mask(task)
        key = (demand, id(mask))
        if key not in kinds:
            kinds[key] = mask
    for (demand, _), mask in kinds.items():
        fits = np.all(free + 1e-9 >= np.asarray(demand), axis=1)
        if mask is not None:
            fits &= mask
        usable |= fits
    total = np.asarray(cluster.total)
    return free[usable].sum(axis=0) / np.where(total > 0, total, 1.0)


def _job_facts(open_source: Callable[[], TaskSource]) -> pd.DataFrame:
    """Per job: user, repetitions and the machine classes it needs.

    The classes a job needs are the union of the classes its tasks may use (``class=A|B``
    rules): with the ``pinned`` model the distinct classes its tasks are pinned to, with
    ``any-of`` the classes it may use. ``classes`` is their number (0 for an unconstrained job,
    which may use every class), ``class_set`` their names joined by ``|`` ("" if unconstrained).
    """
    reps: dict[int, int] = {}
    users: dict[int, int] = {}
    classes: dict[int, set[str] | None] = {}
    for batch in open_source().batches():
        rep = batch.rep if batch.rep is not None else np.zeros(len(batch), dtype=np.int32)
        cons = batch.constraint
        for j, u, r, c in zip(
            batch.job_id.tolist(),
            batch.user.tolist(),
            rep.tolist(),
            cons.tolist() if cons is not None else [None] * len(batch),
            strict=True,
        ):
            reps[j] = max(reps.get(j, 0), r + 1)
            users.setdefault(j, u)
            if not isinstance(c, str):
                classes[j] = None
            elif classes.setdefault(j, set()) is not None:
                classes[j].update(c[len("class=") :].split("|"))  # type: ignore[union-attr]
    return pd.DataFrame(
        {
            "job_id": list(reps),
            "user": [users[j] for j in reps],
            "repetitions": list(reps.values()),
            "classes": [len(classes[j] or ()) for j in reps],
            "class_set": ["|".join(sorted(classes[j] or ())) for j in reps],
        }
    )


def job_times(tasks: dict[str, np.ndarray], entry: dict[int, float]) -> pd.DataFrame:
    """Per job: queue entry, first start, last finish, JCT and its wait and execution parts.

    Parameters
    ----------
    tasks : dict of str to ndarray
        A run's per-task columns (:attr:`fairsim.simulator.engine.EngineResult.tasks`).
    entry : dict of int to float
        Time each job entered the waiting queue (:func:`fairsim.simulator.jobs.admission_times`); a
        job
        without one entered at its first task's submit time.

    Returns
    -------
    pandas.DataFrame
        ``job_id, submit_s, entry_s, first_start_s, finish_s, jct_s, wait_s, exec_s``;
        ``finish_s`` and the times after it are NaN unless every task of the job finished.
    """
    t = pd.DataFrame({k: tasks[k] for k in ("job_id", "submit_s", "start_s", "finish_s")})
    g = t.groupby("job_id", sort=True)
    out = pd.DataFrame(
        {
            "submit_s": g["submit_s"].min(),
            "first_start_s": g["start_s"].min(),
            "finish_s": g["finish_s"].max().where(g["finish_s"].count() == g.size()),
        }
    )
    out.insert(1, "entry_s", out.index.map(entry).astype(np.float64))
    out["entry_s"] = out["entry_s"].fillna(out["submit_s"])
    out["jct_s"] = out["finish_s"] - out["entry_s"]
    out["wait_s"] = out["first_start_s"] - out["entry_s"]
    out["exec_s"] = out["finish_s"] - out["first_start_s"]
    return out.reset_index()


def run_experiment(
    out: Path = Path("results/udrf"),
    *,
    config: Path = CONFIG,
    shared: Path | None = None,
    quick: bool = False,
    progress: bool = True,
    overrides: Sequence[str] = (),
) -> Path:
    """Run the three schedulers on the scenario and write the report; returns ``report.md``.

    Parameters
    ----------
    out : Path
        Output folder.
    config : Path
        The scenario (default ``configs/udrf-google.yaml``).
    shared : Path, optional
        The ``../shared`` folder (its ``traces/google-2011``; when that is missing, the sample
        fetched into the download cache, :func:`fairsim.traces.fetch.google_2011_sample`);
        default: the config's path.
    quick : bool
        The jobs submitted in (``QUICK_START_S``, ``QUICK_END_S``) on ``QUICK_SERVERS`` servers,
        ``drf-lockstep`` and ``udrf`` only.
    progress : bool
        Show progress bars.
    overrides : sequence of str
        ``dotted.key=value`` config overrides (e.g. ``trace.constraints.model=any-of``), applied
        after the ones above.
    """
    ovr = []
    if shared is not None:
        from fairsim.traces.fetch import google_2011_sample  # fetched when shared lacks it

        ovr.append(f"trace.path={google_2011_sample(Path(shared), progress=progress)}")
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
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    waste_rows: list[dict[str, float | str]] = []
    rduc_rows: list[dict[str, float]] = []

    def sample(run: SchedulerRun, t: float, cluster: ClusterState) -> None:
        watch = run.scheduler
        assert isinstance(watch, _Watch)
        w = wasted(watch, cluster)
        waste_rows.append(
            {"scheduler": run.name, "time_s": t, "cpu": float(w[0]), "mem": float(w[1])}
        )
        if isinstance(watch.inner, UDRF) and watch.inner.pending():
            deg = watch.inner.degrees()
            rduc_rows.append(
                {
                    "time_s": t,
                    "rducs": float(len(watch.inner.rducs())),
                    "users": float(len(deg)),
                    "mean_degree": float(np.mean(list(deg.values()))) if deg else 0.0,
                }
            )

    # the scenario pipeline, with every scheduler wrapped in a watcher of its waiting tasks and
    # the waste and RDUCs measured at every grid point
    scenario = prepare_scenario(
        cfg,
        base=config.parent,
        progress=progress,
        hooks=Hooks(scheduler=lambda run: _Watch(default_scheduler(run)), on_sample=sample),
    )
    pool = scenario.pool
    index = scenario.constraint_index
    assert index is not None, "the UDRF scenario has placement constraints"
    n_classes = len(set(index().classes.tolist()))
    facts = _job_facts(scenario.open_source)
    times: list[pd.DataFrame] = []
    runs: dict[str, dict[str, Any]] = {}
    t0 = time.perf_counter()
    for run in scenario.runs(progress=progress):
        name, result, gate = run.name, run.result, run.gate
        assert result is not None
        assert gate is not None, "the UDRF scenario has a job queue"
        entry = admission_times(gate, result.tasks["submit_s"], result.tasks["finish_s"])
        times.append(job_times(result.tasks, entry).assign(scheduler=name))
        summary = write_run(result, out / name, extra_summary={"config_hash": cfg.config_hash()})
        runs[name] = summary
        log.info("%s: %d tasks in %.1f s", name, summary["tasks"], time.perf_counter() - t0)
        t0 = time.perf_counter()
    waste = pd.DataFrame(waste_rows)
    write_table(pa.Table.from_pandas(waste, preserve_index=False), out / "waste.parquet")
    rduc = pd.DataFrame(rduc_rows, columns=["time_s", "rducs", "users", "mean_degree"])
    write_table(pa.Table.from_pandas(rduc, preserve_index=False), out / "rducs.parquet")
    jct = pd.concat(times, ignore_index=True).merge(
        facts.drop(columns="class_set"), on="job_id", how="left"
    )
    jct = jct[["scheduler", *(c for c in jct.columns if c != "scheduler")]]
    write_table(pa.Table.from_pandas(jct, preserve_index=False), out / "jct.parquet")
    summary = summarise(jct, facts, waste, rduc, runs, n_classes)
    summary["quick"] = quick
    summary["servers"] = len(pool)
    spec = cfg.trace.constraints
    summary["constraint_model"] = spec.model if isinstance(spec, ConstraintModel) else str(spec)
    summary["repetition_mode"] = cfg.trace.repetition_mode
    write_json(summary, out / "summary.json")
    _figures(out, jct, waste, rduc, summary)
    report = out / "report.md"
    write_text(report, _report(summary, cfg))
    return report


def _reduction(a: pd.Series, b: pd.Series) -> float:
    """``1 - mean(b) / mean(a)`` in percent (a: the baseline, b: UDRF)."""
    return float(100.0 * (1.0 - b.mean() / a.mean())) if len(a) and a.mean() > 0 else math.nan


def _rank_trend(values: dict[int, float]) -> tuple[float, float]:
    """Rank correlation of the values with their keys, and last minus first value."""
    keys = sorted(k for k, v in values.items() if not math.isnan(v))
    if len(keys) < 2:
        return math.nan, math.nan
    ranks = pd.Series([values[k] for k in keys]).rank().to_numpy()
    rho = float(np.corrcoef(np.arange(len(keys)), ranks)[0, 1]) if np.ptp(ranks) > 0 else 0.0
    return rho, values[keys[-1]] - values[keys[0]]


def _increasing(values: dict[int, float]) -> bool:
    """Whether the values rise with the key (rank correlation, first-to-last difference)."""
    rho, diff = _rank_trend(values)
    return rho >= TREND_RHO and diff >= TREND_PP


def _paired(jct: pd.DataFrame, base: str, other: str) -> pd.DataFrame:
    """The jobs completed under both schedulers: their times side by side (suffixes _b, _o)."""
    cols = ["job_id", "jct_s", "wait_s", "exec_s", "entry_s", "submit_s"]
    a = jct.loc[jct["scheduler"] == base, cols]
    b = jct.loc[jct["scheduler"] == other, [*cols, "repetitions", "classes", "user"]]
    return a.merge(b, on="job_id", suffixes=("_b", "_o")).dropna(subset=["jct_s_b", "jct_s_o"])


def _compare(both: pd.DataFrame) -> dict[str, Any]:
    """JCT, wait and execution reductions overall, by repetitions and by classes."""
    out: dict[str, Any] = {"jobs": len(both)}
    for part in ("jct", "wait", "exec"):
        b, o = f"{part}_s_b", f"{part}_s_o"
        out[f"{part}_reduction_pct"] = _reduction(both[b], both[o])
        for col in ("repetitions", "classes"):
            out[f"{part}_reduction_by_{col}_pct"] = {
                k: _reduction(g[b], g[o]) for k, g in _groups(both, col)
            }
    out["jobs_by_repetitions"] = {k: len(g) for k, g in _groups(both, "repetitions")}
    out["jobs_by_classes"] = {k: len(g) for k, g in _groups(both, "classes")}
    return out


def _groups(frame: pd.DataFrame, col: str) -> Iterator[tuple[int, pd.DataFrame]]:
    """``(value, rows)`` for every integer value of ``col``, in increasing order."""
    for k in sorted(set(frame[col].tolist())):
        yield int(k), frame[frame[col] == k]


def summarise(
    jct: pd.DataFrame,
    facts: pd.DataFrame,
    waste: pd.DataFrame,
    rduc: pd.DataFrame,
    runs: dict[str, dict[str, Any]],
    n_classes: int,
) -> dict[str, Any]:
    """Headline numbers of the reproduction and the checks of the paper's statements."""
    per: dict[str, dict[str, Any]] = {}
    for name in dict.fromkeys(jct["scheduler"]):  # in run order
        g = jct[jct["scheduler"] == name]
        done = g.dropna(subset=["jct_s"])
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
            # mean waste while the scheduler had work (up to its last finish), not over the idle
            # tail of the horizon
            "wasted_mean_pct": {r: 100.0 * float(w[r].mean()) for r in ("cpu", "mem")},
        }
    base = _compare(_paired(jct, BASELINE, UDRF_NAME))
    others = sorted(set(jct["scheduler"]) - {BASELINE, UDRF_NAME})
    vs_others = {n: _compare(_paired(jct, n, UDRF_NAME)) for n in others}
    need = facts["classes"]
    # Fig. 8's text: users with many jobs have demands on many classes (rank correlation over
    # users of their number of jobs and the classes their jobs need together; an unconstrained
    # job needs every class)
    ranges = facts.groupby("user").agg(
        jobs=("job_id", "size"),
        classes=(
            "class_set",
            lambda c: n_classes if (c == "").any() else len(set("|".join(c).split("|"))),
        ),
    )
    users_rho = (
        float(ranges["jobs"].corr(ranges["classes"], method="spearman"))
        if len(ranges) > 2 and ranges["classes"].nunique() > 1
        else math.nan
    )
    rep_base = (
        jct[jct["scheduler"] == BASELINE]
        .dropna(subset=["jct_s"])
        .groupby("repetitions")["jct_s"]
        .mean()
    )
    out: dict[str, Any] = {
        "jobs": len(facts),
        "machine_classes": n_classes,
        "jobs_by_classes": {k: len(g) for k, g in _groups(facts, "classes")},
        "jobs_with_1_2_classes_pct": float(100.0 * need.between(1, 2).mean()),
        "users_jobs_classes_rho": users_rho,
        "rducs": {
            "min": float(rduc["rducs"].min()) if len(rduc) else None,
            "max": float(rduc["rducs"].max()) if len(rduc) else None,
            "mean": float(rduc["rducs"].mean()) if len(rduc) else None,
        },
        "users_degree_rho": float(rduc["users"].corr(rduc["mean_degree"], method="spearman"))
        if len(rduc) > 2 and rduc["users"].nunique() > 1
        else math.nan,
        "schedulers": per,
        "vs_baseline": base,
        "vs_others": vs_others,
        "baseline_jct_by_repetitions_s": {
            int(k): float(v)
            for k, v in zip(rep_base.index.tolist(), rep_base.tolist(), strict=True)
        },
        "runs": {
            n: {k: r.get(k) for k in ("tasks", "tasks_completed", "wall_s", "tasks_per_s")}
            for n, r in runs.items()
        },
    }
    out["checks"] = _checks(out)
    return out


def _checks(s: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Verdict (PASS / FAIL / n/a) and the reason, per statement of :data:`PAPER`."""
    per, cmp = s["schedulers"], s["vs_baseline"]
    b, u = per[BASELINE], per[UDRF_NAME]
    verdict = {True: "PASS", False: "FAIL"}
    out: dict[str, tuple[str, str]] = {}
    rho = s["users_degree_rho"]
    out["fig6"] = (
        ("n/a", "too few samples with waiting tasks")
        if math.isnan(rho)
        else (verdict[rho >= TREND_RHO], f"rank correlation {rho:.2f} (PASS at ≥ {TREND_RHO})")
    )
    r = s["rducs"]
    out["fig7"] = (
        ("n/a", "UDRF never had waiting tasks at a sample")
        if r["max"] is None
        else (verdict[1 <= r["min"] and r["max"] <= 8], "PASS within 1–8")
    )
    share = s["jobs_with_1_2_classes_pct"]
    out["fig8"] = (
        verdict[abs(share - 65.0) <= FIG8_BAND],
        f"the constraint model's input; PASS within {FIG8_BAND:g} points of 65 %",
    )
    urho = s["users_jobs_classes_rho"]
    out["users"] = (
        ("n/a", "too few users")
        if math.isnan(urho)
        else (
            verdict[urho >= TREND_RHO],
            f"rank correlation ≥ {TREND_RHO} over users of their number of jobs and the classes "
            "their jobs need together; partly by construction (the model draws classes per job)",
        )
    )
    wb, wu = b["wasted_mean_pct"], u["wasted_mean_pct"]
    out["fig9"] = (verdict[wb["cpu"] > wu["cpu"] and wb["mem"] > wu["mem"]], "mean over the run")
    out["fig10a"] = (
        verdict[u["jct_median_s"] < b["jct_median_s"] and u["jct_mean_s"] < b["jct_mean_s"]],
        "median and mean JCT lower",
    )
    trend = f"trend: rank correlation ≥ {TREND_RHO} and last − first ≥ {TREND_PP:g} points"
    for part, suffix in (("jct", ""), ("exec", "_exec")):
        by_cls = {k: v for k, v in cmp[f"{part}_reduction_by_classes_pct"].items() if k > 0}
        out["fig10c" + suffix] = (
            ("n/a", "fewer than two class counts among the constrained jobs")
            if len(by_cls) < 2
            else (verdict[_increasing(by_cls)], f"constrained jobs; {trend}")
        )
        by_rep = cmp[f"{part}_reduction_by_repetitions_pct"]
        out["fig10b" + suffix] = (
            ("n/a", "one repetition count only")
            if len(by_rep) < 2
            else (verdict[_increasing(by_rep)], trend)
        )
    rb = s["baseline_jct_by_repetitions_s"]
    rrho, _ = _rank_trend(rb)
    out["queue"] = (
        verdict[rrho >= TREND_RHO and b["before_queue_mean_s"] > u["before_queue_mean_s"]],
        "JCT under the baseline rises with repetitions and the mean time before the queue is "
        "longer than under UDRF",
    )
    return out


def _figures(
    out: Path, jct: pd.DataFrame, waste: pd.DataFrame, rduc: pd.DataFrame, s: dict[str, Any]
) -> None:
    from matplotlib.figure import Figure

    from fairsim.scenario.reporting.plotting import decimate, save_figure

    fig = Figure(figsize=(8, 5))
    axes = fig.subplots(2, 1, sharex=True)
    for name, g in waste.groupby("scheduler"):
        for ax, res, label in zip(axes, ("cpu", "mem"), ("CPU", "memory"), strict=True):
            t, v = decimate(g["time_s"].to_numpy(), g[res].to_numpy())
            ax.plot(t / 3600.0, 100.0 * v, label=name, linewidth=0.8)
            ax.set_ylabel(f"wasted {label} (% of pool)")
    last = max(p["makespan_s"] for p in s["schedulers"].values()) / 3600.0
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.set_xlim(0, last * 1.02)
    axes[-1].set_xlabel("trace time (h)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Fig. 9: idle resources that a waiting task could use")
    save_figure(fig, out / "fig9_waste.png")

    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    for name in dict.fromkeys(jct["scheduler"]):
        x = np.sort(jct.loc[jct["scheduler"] == name, "jct_s"].dropna().to_numpy())
        if len(x):
            ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=name)
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("job completion time from queue entry (s)")
    ax.set_ylabel("fraction of completed jobs")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title("Fig. 10a: JCT CDF")
    save_figure(fig, out / "fig10a_jct_cdf.png")

    fig = Figure(figsize=(10, 3.6))
    axes = fig.subplots(1, 2)
    for ax, key, xlabel, title in (
        (axes[0], "jct_reduction_by_repetitions_pct", "repetitions of the job", "Fig. 10b"),
        (axes[1], "jct_reduction_by_classes_pct", "machine classes the job needs", "Fig. 10c"),
    ):
        d = s["vs_baseline"][key]
        ks = sorted(d)
        ax.bar([str(k) if k else "any" for k in ks], [d[k] for k in ks])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"mean JCT reduction vs {BASELINE} (%)")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.grid(alpha=0.3, axis="y")
        ax.set_title(title)
    save_figure(fig, out / "fig10bc_jct_reduction.png")

    if len(rduc):
        fig = Figure(figsize=(8, 4.5))
        axes = fig.subplots(2, 1, sharex=True)
        hours = rduc["time_s"].to_numpy() / 3600.0
        axes[0].step(*decimate(hours, rduc["rducs"].to_numpy()), where="post", linewidth=0.8)
        axes[0].set_ylabel("RDUCs")
        axes[1].plot(*decimate(hours, rduc["users"].to_numpy()), label="active users", lw=0.8)
        axes[1].plot(
            *decimate(hours, rduc["mean_degree"].to_numpy()), label="mean user degree", lw=0.8
        )
        axes[1].legend(fontsize=8)
        axes[1].set_xlabel("trace time (h)")
        for ax in axes:
            ax.grid(alpha=0.3)
        fig.suptitle("Figs. 6-7: users, their degree and RDUCs (udrf)")
        save_figure(fig, out / "fig6_7_rducs.png")


def _fmt(v: float | None, digits: int = 1) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:,.{digits}f}"


def _series(d: dict[int, float], zero: str = "0") -> str:
    return ", ".join(f"{k if k else zero}: {_fmt(v)} %" for k, v in sorted(d.items()))


def _report(s: dict[str, Any], cfg: RunConfig) -> str:
    per, cmp = s["schedulers"], s["vs_baseline"]
    b, u = per[BASELINE], per[UDRF_NAME]
    ok = s["checks"]
    r = s["rducs"]
    measured = {
        "fig6": f"rank correlation of active users and their mean degree: "
        f"{_fmt(s['users_degree_rho'], 2)}",
        "fig7": f"{_fmt(r['min'], 0)}–{_fmt(r['max'], 0)} RDUCs (mean {_fmt(r['mean'], 2)})",
        "fig8": f"{_fmt(s['jobs_with_1_2_classes_pct'])} % of jobs need 1–2 classes; jobs by "
        "classes needed: "
        + ", ".join(f"{k if k else 'any'}: {v:,}" for k, v in s["jobs_by_classes"].items()),
        "users": f"rank correlation {_fmt(s['users_jobs_classes_rho'], 2)}",
        "fig9": f"mean wasted CPU / memory: {BASELINE} {_fmt(b['wasted_mean_pct']['cpu'])} % / "
        f"{_fmt(b['wasted_mean_pct']['mem'])} %, {UDRF_NAME} {_fmt(u['wasted_mean_pct']['cpu'])} "
        f"% / {_fmt(u['wasted_mean_pct']['mem'])} %",
        "fig10a": f"median JCT {_fmt(b['jct_median_s'], 0)} s → {_fmt(u['jct_median_s'], 0)} s, "
        f"mean {_fmt(b['jct_mean_s'], 0)} s → {_fmt(u['jct_mean_s'], 0)} s "
        f"({_fmt(cmp['jct_reduction_pct'])} % lower)",
        "fig10c": "reduction by classes needed: "
        + _series(cmp["jct_reduction_by_classes_pct"], "any"),
        "fig10b": "reduction by repetitions: " + _series(cmp["jct_reduction_by_repetitions_pct"]),
        "fig10c_exec": "execution reduction by classes needed: "
        + _series(cmp["exec_reduction_by_classes_pct"], "any"),
        "fig10b_exec": "execution reduction by repetitions: "
        + _series(cmp["exec_reduction_by_repetitions_pct"]),
        "queue": f"{BASELINE} mean JCT by repetitions: "
        + ", ".join(f"{k}: {_fmt(v, 0)} s" for k, v in s["baseline_jct_by_repetitions_s"].items())
        + f"; mean time before the queue {_fmt(b['before_queue_mean_s'], 0)} s ({BASELINE}) vs "
        f"{_fmt(u['before_queue_mean_s'], 0)} s ({UDRF_NAME})",
    }
    lines = [
        f"# UDRF paper, Section V: DRF ({BASELINE}) vs online UDRF",
        "",
        f"Scenario `{cfg.name}` (`configs/udrf-google.yaml`{', --quick' if s['quick'] else ''}): "
        f"{s['servers']} Table I servers in {s['machine_classes']} machine classes, "
        f"{s['jobs']:,} jobs, repetitions {cfg.trace.repetitions} ({s['repetition_mode']}), "
        f"queue of {cfg.trace.queue_jobs} jobs, run times {cfg.trace.job_run_s} s, constraint "
        f"model `{s['constraint_model']}`. JCT is measured from the moment a job enters the "
        f"queue; the comparisons are over the {cmp['jobs']:,} jobs completed under both "
        f"{BASELINE} (the paper's DRF: a user's jobs advance together, one instance each) and "
        f"{UDRF_NAME}.",
        "",
        "The paper's figures give no numbers in its text, so each of its statements is checked:",
        "",
        "| statement (Section V) | ours | verdict | how checked |",
        "|---|---|---|---|",
    ]
    for key, text in PAPER.items():
        v, why = ok[key]
        lines.append(f"| {text} | {measured[key]} | {v} | {why} |")
        if key in ("fig10c", "fig10b"):  # the same on the execution part alone
            v, why = ok[key + "_exec"]
            lines.append(
                f"| — the same on the execution part (first start → last finish) | "
                f"{measured[key + '_exec']} | {v} | {why} |"
            )
    lines += [
        "",
        "## Per scheduler",
        "",
        "| scheduler | jobs completed | mean JCT (s) | median JCT (s) | mean wait (s) "
        "| mean execution (s) | mean time before the queue (s) | wasted CPU / mem (%) "
        "| last finish (h) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for n in per:
        p = per[n]
        lines.append(
            f"| {n} | {p['jobs_completed']:,} | {_fmt(p['jct_mean_s'], 0)} | "
            f"{_fmt(p['jct_median_s'], 0)} | {_fmt(p['wait_mean_s'], 0)} | "
            f"{_fmt(p['exec_mean_s'], 0)} | {_fmt(p['before_queue_mean_s'], 0)} | "
            f"{_fmt(p['wasted_mean_pct']['cpu'])} / {_fmt(p['wasted_mean_pct']['mem'])} | "
            f"{_fmt(p['makespan_s'] / 3600, 2)} |"
        )
    lines += [
        "",
        "JCT = last finish − queue entry = wait (queue entry → first start) + execution (first "
        "start → last finish). Time before the queue = first submit → queue entry.",
        "",
        "## Reductions of UDRF (1 − mean udrf / mean baseline, %)",
        "",
        "| baseline | part | overall | by repetitions | by classes needed (any = unconstrained) |",
        "|---|---|---|---|---|",
    ]
    for name, c in ((BASELINE, cmp), *s["vs_others"].items()):
        for part in ("jct", "wait", "exec"):
            lines.append(
                f"| {name} | {part} | {_fmt(c[f'{part}_reduction_pct'])} | "
                f"{_series(c[f'{part}_reduction_by_repetitions_pct'])} | "
                f"{_series(c[f'{part}_reduction_by_classes_pct'], 'any')} |"
            )
    lines += [
        "",
        "Jobs per group (completed under both): by repetitions "
        + ", ".join(f"{k}: {v}" for k, v in cmp["jobs_by_repetitions"].items())
        + "; by classes "
        + ", ".join(f"{k if k else 'any'}: {v}" for k, v in cmp["jobs_by_classes"].items())
        + ".",
        "",
        "Wasted = free CPU / memory of the servers on which some waiting task could start now "
        "(Section II-A's meaning; the paper does not define the plotted quantity), averaged until "
        "the scheduler's last task finished.",
        "",
        "| scheduler | tasks | completed | engine wall (s) | tasks/s |",
        "|---|---|---|---|---|",
    ]
    for n, run in s["runs"].items():
        lines.append(
            f"| {n} | {run['tasks']:,} | {run['tasks_completed']:,} | {_fmt(run['wall_s'])} | "
            f"{_fmt(run['tasks_per_s'], 0)} |"
        )
    lines += [
        "",
        "Figures: `fig9_waste.png`, `fig10a_jct_cdf.png`, `fig10bc_jct_reduction.png`, "
        "`fig6_7_rducs.png`. Data: `waste.parquet`, `rducs.parquet`, `jct.parquet`, "
        "`<scheduler>/tasks.parquet`, `summary.json`.",
        "",
    ]
    return "\n".join(lines)
