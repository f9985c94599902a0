"""``make reproduce-udrf``: the UDRF paper's Section V (Figs. 7-10) on the real Google sample.

UDRF paper (Tahir et al.), Section V: the Google trace with machine classes and placement
constraints; each job runs a random number of times; a waiting queue of 100 jobs; run times
uniform in 10-100 s; DRF with machine classes mapped to resource types (``drf-classes``,
:mod:`schedulers.classes`) against online UDRF (``udrf``, :mod:`schedulers.udrf`). The scenario is
``configs/udrf-google.yaml`` (its comments give every choice the paper leaves open).

Measured, per scheduler (written into ``OUT``, default ``results/udrf``):

* **Wasted resources** (Fig. 9). The paper does not define the quantity it plots; its Section II-A
  calls resources *wasted* when they are left idle although a user could use them. We measure
  exactly that at every grid point (``collect.utilization_interval_s``): the free CPU and memory
  of the servers on which at least one waiting task (released to the scheduler, not placed) could
  start now (its constraint allows the server and it fits), as a fraction of the pool's total.
  ``waste.parquet``: ``scheduler, time_s, cpu, mem``.
* **JCT** (Fig. 10a), the job completion time (first submit to the end of the last repetition,
  queueing included), from each run's ``jobs.parquet``; the CDF is ``fig10a_jct_cdf.png``.
* **JCT reduction** of UDRF over DRF (``1 - mean JCT_udrf / mean JCT_drf`` over the jobs that
  completed under both) by number of repetitions (Fig. 10b) and by number of machine classes the
  job may use (Fig. 10c).
* **RDUCs** (Fig. 7): their number at every grid point under UDRF; and the CDF of the machine
  classes the jobs need (Fig. 8) from the constraint model.

``report.md`` puts these beside the paper's statements (its figures give no numbers in the text,
so each statement is checked as PASS/FAIL), ``summary.json`` has the headline numbers.
``--quick`` runs a small version (the jobs of 5 minutes of the trace on 100 servers, about 20,000
task runs) for the test suite.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from experiments.run import (
    build_pool,
    constrained_workload,
    pool_capacity,
    resolve_workload,
)
from schedulers import make_scheduler
from schedulers.base import DelegatingScheduler, Scheduler
from schedulers.udrf import UDRF
from simulator.atomic import write_text
from simulator.cluster import ClusterState
from simulator.config import RunConfig, load_config
from simulator.engine import Engine
from simulator.results import write_json, write_run, write_table

log = logging.getLogger(__name__)

CONFIG = Path(__file__).resolve().parent.parent / "configs" / "udrf-google.yaml"
SCHEDULERS = ("drf-classes", "udrf")
#: --quick: jobs submitted in [QUICK_START_S, QUICK_END_S) of the trace, on QUICK_SERVERS servers
#: (the thousands of jobs that exist when the trace starts are submitted at 600 s: left out).
QUICK_START_S = 601.0
QUICK_END_S = 900.0
QUICK_SERVERS = 100
#: The paper's statements (Section V), checked in report.md.
PAPER = {
    "fig7": "the system has from one to eight RDUCs",
    "fig8": "around 65 % of jobs required between one to two machine classes",
    "fig9": "DRF wastes CPU and memory that UDRF uses (time series of DRF's waste vs UDRF)",
    "fig10a": "UDRF's JCT CDF lies left of DRF's (shorter job completion times)",
    "fig10b": "the more times a job is required to execute, the higher the JCT reduction",
    "fig10c": "the more machine classes a job needs, the more JCT reduction",
}


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


def _job_facts(open_source, n_classes: int) -> pd.DataFrame:
    """Per job: repetitions and the number of machine classes its tasks may use."""
    reps: dict[int, int] = {}
    classes: dict[int, int] = {}
    for batch in open_source().batches():
        rep = batch.rep if batch.rep is not None else np.zeros(len(batch), dtype=np.int32)
        cons = batch.constraint
        for j, r, c in zip(
            batch.job_id.tolist(),
            rep.tolist(),
            cons.tolist() if cons is not None else [None] * len(batch),
            strict=True,
        ):
            reps[j] = max(reps.get(j, 0), r + 1)
            k = n_classes if not isinstance(c, str) else len(c[len("class=") :].split("|"))
            classes[j] = max(classes.get(j, 0), k)
    return pd.DataFrame(
        {
            "job_id": list(reps),
            "repetitions": list(reps.values()),
            "classes": list(classes.values()),
        }
    )


def run_experiment(
    out: Path = Path("results/udrf"),
    *,
    config: Path = CONFIG,
    shared: Path | None = None,
    quick: bool = False,
    progress: bool = True,
) -> Path:
    """Run both schedulers on the scenario and write the report; returns ``report.md``'s path.

    Parameters
    ----------
    out : Path
        Output folder.
    config : Path
        The scenario (default ``configs/udrf-google.yaml``).
    shared : Path, optional
        The ``../shared`` folder (its ``traces/google-2011``); default: the config's path.
    quick : bool
        The jobs submitted in (``QUICK_START_S``, ``QUICK_END_S``) on ``QUICK_SERVERS`` servers.
    progress : bool
        Show progress bars.
    """
    overrides = []
    if shared is not None:
        overrides.append(f"trace.path={Path(shared) / 'traces' / 'google-2011'}")
    if quick:
        overrides += [
            f"trace.start_s={QUICK_START_S}",
            f"trace.end_s={QUICK_END_S}",
            f"cluster.servers={QUICK_SERVERS}",
        ]
    cfg = load_config(config, overrides=overrides)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    workload = resolve_workload(cfg, config.parent, progress)
    pool = build_pool(cfg, config.parent, workload)
    capacity = pool_capacity(pool, workload.resources)
    open_source, index = constrained_workload(cfg, workload, pool)
    assert index is not None, "the UDRF scenario has placement constraints"
    n_classes = len(set(index().classes.tolist()))
    facts = _job_facts(open_source, n_classes)
    waste_rows: list[dict[str, float | str]] = []
    rduc_rows: list[dict[str, float]] = []
    runs: dict[str, dict[str, Any]] = {}
    for name in SCHEDULERS:
        watch = _Watch(make_scheduler(name))
        grid = cfg.collect.utilization_interval_s

        def sample(
            t: float, cluster: ClusterState, watch: _Watch = watch, name: str = name
        ) -> None:
            w = wasted(watch, cluster)
            waste_rows.append(
                {"scheduler": name, "time_s": t, "cpu": float(w[0]), "mem": float(w[1])}
            )
            if isinstance(watch.inner, UDRF) and watch.inner.pending():
                rduc_rows.append({"time_s": t, "rducs": float(len(watch.inner.rducs()))})

        t0 = time.perf_counter()
        result = Engine(
            ClusterState(capacity, workload.resources),
            watch,
            open_source(),
            start_s=workload.start_s,
            horizon_s=cfg.collect.horizon_s or workload.end_s,
            utilization_interval_s=grid,
            progress=progress,
            progress_desc=name,
            gate=workload.gate(),
            constraints=index(),
            on_sample=sample,
        ).run()
        summary = write_run(result, out / name, extra_summary={"config_hash": cfg.config_hash()})
        runs[name] = summary
        log.info("%s: %d tasks in %.1f s", name, summary["tasks"], time.perf_counter() - t0)
    waste = pd.DataFrame(waste_rows)
    write_table(pa.Table.from_pandas(waste, preserve_index=False), out / "waste.parquet")
    rduc = pd.DataFrame(rduc_rows, columns=["time_s", "rducs"])
    write_table(pa.Table.from_pandas(rduc, preserve_index=False), out / "rducs.parquet")
    jobs = {n: pd.read_parquet(out / n / "jobs.parquet") for n in SCHEDULERS}
    tasks = {n: out / n / "tasks.parquet" for n in SCHEDULERS}
    summary = summarise(jobs, tasks, facts, waste, rduc, runs, n_classes)
    summary["quick"] = quick
    summary["servers"] = len(pool)
    write_json(summary, out / "summary.json")
    _figures(out, jobs, facts, waste, rduc, summary)
    report = out / "report.md"
    write_text(report, _report(summary, cfg))
    return report


def _reduction(a: pd.Series, b: pd.Series) -> float:
    """``1 - mean(b) / mean(a)`` in percent (a: DRF, b: UDRF)."""
    return float(100.0 * (1.0 - b.mean() / a.mean())) if len(a) and a.mean() > 0 else math.nan


def summarise(
    jobs: dict[str, pd.DataFrame],
    tasks: dict[str, Path],
    facts: pd.DataFrame,
    waste: pd.DataFrame,
    rduc: pd.DataFrame,
    runs: dict[str, dict[str, Any]],
    n_classes: int,
) -> dict[str, Any]:
    """Headline numbers of the reproduction (see the module docstring)."""
    drf, udrf = SCHEDULERS
    both = (
        jobs[drf][["job_id", "completion_time_s"]]
        .merge(jobs[udrf][["job_id", "completion_time_s"]], on="job_id", suffixes=("_drf", "_udrf"))
        .dropna()
        .merge(facts, on="job_id")
    )
    # execution span of a job (first task start to last task finish): the JCT without the wait
    # for a place in the job queue
    span: dict[str, pd.Series] = {}
    for n, path in tasks.items():
        g = pd.read_parquet(path, columns=["job_id", "start_s", "finish_s"]).groupby("job_id")
        span[n] = g["finish_s"].max() - g["start_s"].min()
    sp = (
        pd.DataFrame({"drf": span[drf], "udrf": span[udrf]})
        .dropna()
        .join(facts.set_index("job_id"))
    )
    spans = {
        col: {int(g[col].iloc[0]): _reduction(g["drf"], g["udrf"]) for _, g in sp.groupby(col)}
        for col in ("repetitions", "classes")
    }
    by_rep = {
        int(g["repetitions"].iloc[0]): _reduction(
            g["completion_time_s_drf"], g["completion_time_s_udrf"]
        )
        for _, g in both.groupby("repetitions")
    }
    by_cls = {
        int(g["classes"].iloc[0]): _reduction(
            g["completion_time_s_drf"], g["completion_time_s_udrf"]
        )
        for _, g in both.groupby("classes")
    }
    # mean waste while the scheduler had work (up to its last task's finish), not over the idle
    # tail of the horizon
    end = {n: float(j["finish_s"].max()) for n, j in jobs.items()}
    active = waste[waste["time_s"] <= waste["scheduler"].map(end)]
    busy = active.groupby("scheduler")[["cpu", "mem"]].mean()
    out: dict[str, Any] = {
        "jobs": len(facts),
        "jobs_completed_both": len(both),
        "machine_classes": n_classes,
        "jobs_with_1_2_classes_pct": float(100.0 * (facts["classes"] <= 2).mean()),
        "rducs": {
            "min": float(rduc["rducs"].min()) if len(rduc) else None,
            "max": float(rduc["rducs"].max()) if len(rduc) else None,
            "mean": float(rduc["rducs"].mean()) if len(rduc) else None,
        },
        "wasted_mean_pct": {
            n: {"cpu": 100.0 * float(busy.loc[n, "cpu"]), "mem": 100.0 * float(busy.loc[n, "mem"])}
            for n in busy.index
        },
        "jct_mean_s": {
            n: float(both[f"completion_time_s_{k}"].mean())
            for n, k in ((drf, "drf"), (udrf, "udrf"))
        },
        "jct_median_s": {
            n: float(both[f"completion_time_s_{k}"].median())
            for n, k in ((drf, "drf"), (udrf, "udrf"))
        },
        "jct_reduction_pct": _reduction(
            both["completion_time_s_drf"], both["completion_time_s_udrf"]
        ),
        "jct_reduction_by_repetitions_pct": by_rep,
        "jct_reduction_by_classes_pct": by_cls,
        "makespan_s": end,
        "span_reduction_by_repetitions_pct": spans["repetitions"],
        "span_reduction_by_classes_pct": spans["classes"],
        "runs": {
            n: {k: r.get(k) for k in ("tasks", "tasks_completed", "wall_s", "tasks_per_s")}
            for n, r in runs.items()
        },
    }
    out["checks"] = _checks(out)
    return out


#: A trend (Figs. 10b/c) holds when the reduction's rank correlation with the group is at least
#: TREND_RHO and the last group's reduction exceeds the first's by TREND_PP percentage points.
TREND_RHO = 0.5
TREND_PP = 2.0


def _increasing(values: dict[int, float]) -> bool:
    """Whether the values rise with the key (rank correlation, first-to-last difference)."""
    keys = sorted(k for k, v in values.items() if not math.isnan(v))
    if len(keys) < 2:
        return False
    ranks = pd.Series([values[k] for k in keys]).rank().to_numpy()
    rho = float(np.corrcoef(np.arange(len(keys)), ranks)[0, 1])
    return rho >= TREND_RHO and values[keys[-1]] - values[keys[0]] >= TREND_PP


def _checks(s: dict[str, Any]) -> dict[str, bool]:
    drf, udrf = SCHEDULERS
    w = s["wasted_mean_pct"]
    return {
        "fig7": s["rducs"]["max"] is not None and 1 <= s["rducs"]["min"] and s["rducs"]["max"] <= 8,
        "fig8": 55.0 <= s["jobs_with_1_2_classes_pct"] <= 75.0,
        "fig9": w[drf]["cpu"] > w[udrf]["cpu"] and w[drf]["mem"] > w[udrf]["mem"],
        "fig10a": s["jct_median_s"][udrf] < s["jct_median_s"][drf]
        and s["jct_mean_s"][udrf] < s["jct_mean_s"][drf],
        "fig10b": _increasing(s["jct_reduction_by_repetitions_pct"]),
        "fig10c": _increasing(s["jct_reduction_by_classes_pct"]),
    }


def _figures(
    out: Path,
    jobs: dict[str, pd.DataFrame],
    facts: pd.DataFrame,
    waste: pd.DataFrame,
    rduc: pd.DataFrame,
    s: dict[str, Any],
) -> None:
    from matplotlib.figure import Figure

    from experiments.figures import save_figure
    from experiments.run_report import jct_figure

    fig = Figure(figsize=(8, 5))
    axes = fig.subplots(2, 1, sharex=True)
    for name, g in waste.groupby("scheduler"):
        for ax, res, label in zip(axes, ("cpu", "mem"), ("CPU", "memory"), strict=True):
            ax.plot(g["time_s"] / 3600.0, 100.0 * g[res], label=name, linewidth=0.8)
            ax.set_ylabel(f"wasted {label} (% of pool)")
    last = max(s["makespan_s"].values()) / 3600.0
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.set_xlim(0, last * 1.02)
    axes[-1].set_xlabel("trace time (h)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Fig. 9: idle resources that a waiting task could use")
    save_figure(fig, out / "fig9_waste.png")

    cdf = jct_figure(out, list(jobs))  # from each scheduler's jobs.parquet
    if cdf is not None:
        cdf.axes[0].set_title("Fig. 10a: JCT CDF")
        save_figure(cdf, out / "fig10a_jct_cdf.png")

    fig = Figure(figsize=(10, 3.6))
    axes = fig.subplots(1, 2)
    for ax, key, xlabel, title in (
        (axes[0], "jct_reduction_by_repetitions_pct", "repetitions of the job", "Fig. 10b"),
        (axes[1], "jct_reduction_by_classes_pct", "machine classes the job may use", "Fig. 10c"),
    ):
        d = s[key]
        ks = sorted(d)
        ax.bar([str(k) for k in ks], [d[k] for k in ks])
        ax.set_xlabel(xlabel)
        ax.set_ylabel("mean JCT reduction of UDRF (%)")
        ax.axhline(0, color="black", linewidth=0.6)
        ax.grid(alpha=0.3, axis="y")
        ax.set_title(title)
    save_figure(fig, out / "fig10bc_jct_reduction.png")

    if len(rduc):
        fig = Figure(figsize=(8, 3))
        ax = fig.subplots()
        ax.step(rduc["time_s"] / 3600.0, rduc["rducs"], where="post", linewidth=0.8)
        ax.set_xlabel("trace time (h)")
        ax.set_ylabel("RDUCs")
        ax.grid(alpha=0.3)
        ax.set_title("Fig. 7: number of RDUCs (udrf)")
        save_figure(fig, out / "fig7_rducs.png")


def _fmt(v: float | None, digits: int = 1) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:,.{digits}f}"


def _report(s: dict[str, Any], cfg: RunConfig) -> str:
    drf, udrf = SCHEDULERS
    ok = s["checks"]
    mark = {True: "PASS", False: "FAIL"}
    w = s["wasted_mean_pct"]
    rep = s["jct_reduction_by_repetitions_pct"]
    cls = s["jct_reduction_by_classes_pct"]
    lines = [
        "# UDRF paper, Section V: DRF (machine classes as resources) vs online UDRF",
        "",
        f"Scenario `{cfg.name}` (`configs/udrf-google.yaml`{', --quick' if s['quick'] else ''}): "
        f"{s['servers']} Table I servers in {s['machine_classes']} machine classes, "
        f"{s['jobs']:,} jobs, repetitions {cfg.trace.repetitions}, queue of {cfg.trace.queue_jobs} "
        f"jobs, run times {cfg.trace.job_run_s} s. {s['jobs_completed_both']:,} jobs completed "
        "under both schedulers; the JCT numbers are over those.",
        "",
        "The paper's figures give no numbers in its text, so each of its statements is checked:",
        "",
        "| figure | paper | ours | |",
        "|---|---|---|---|",
        f"| Fig. 7 | {PAPER['fig7']} | {_fmt(s['rducs']['min'], 0)}–{_fmt(s['rducs']['max'], 0)} "
        f"RDUCs (mean {_fmt(s['rducs']['mean'])}) | {mark[ok['fig7']]} |",
        f"| Fig. 8 | {PAPER['fig8']} | {_fmt(s['jobs_with_1_2_classes_pct'])} % (constraint model) "
        f"| {mark[ok['fig8']]} |",
        f"| Fig. 9 | {PAPER['fig9']} | mean wasted CPU / memory: "
        f"{drf} {_fmt(w[drf]['cpu'], 2)} % / {_fmt(w[drf]['mem'], 2)} %, "
        f"{udrf} {_fmt(w[udrf]['cpu'], 2)} % / {_fmt(w[udrf]['mem'], 2)} % "
        f"| {mark[ok['fig9']]} |",
        f"| Fig. 10a | {PAPER['fig10a']} | median JCT {_fmt(s['jct_median_s'][drf], 0)} s → "
        f"{_fmt(s['jct_median_s'][udrf], 0)} s, mean {_fmt(s['jct_mean_s'][drf], 0)} s → "
        f"{_fmt(s['jct_mean_s'][udrf], 0)} s ({_fmt(s['jct_reduction_pct'])} % lower) "
        f"| {mark[ok['fig10a']]} |",
        f"| Fig. 10b | {PAPER['fig10b']} | "
        + ", ".join(f"{k}: {_fmt(v)} %" for k, v in sorted(rep.items()))
        + f" | {mark[ok['fig10b']]} |",
        f"| Fig. 10c | {PAPER['fig10c']} | "
        + ", ".join(f"{k}: {_fmt(v)} %" for k, v in sorted(cls.items()))
        + f" | {mark[ok['fig10c']]} |",
        "",
        "Execution span (first start to last finish of a job, i.e. the JCT without the wait for "
        "a place in the queue of 100 jobs), reduction by repetitions: "
        + ", ".join(
            f"{k}: {_fmt(v)} %" for k, v in sorted(s["span_reduction_by_repetitions_pct"].items())
        )
        + "; by machine classes: "
        + ", ".join(
            f"{k}: {_fmt(v)} %" for k, v in sorted(s["span_reduction_by_classes_pct"].items())
        )
        + f". Last task finished at {_fmt(s['makespan_s'][drf] / 3600, 2)} h ({drf}) and "
        f"{_fmt(s['makespan_s'][udrf] / 3600, 2)} h ({udrf}).",
        "",
        "Wasted = free CPU / memory of the servers on which some waiting task could start now "
        "(Section II-A's meaning; the paper does not define the plotted quantity), averaged until "
        "the scheduler's last task finished. JCT reduction "
        "= 1 − mean JCT of udrf / mean JCT of drf-classes over the jobs of the group. A trend "
        f"(Fig. 10b/c) is a PASS when the reduction's rank correlation with the group is at least "
        f"{TREND_RHO} and the last group's reduction exceeds the first's by {TREND_PP:g} points.",
        "",
        "| scheduler | tasks | completed | engine wall (s) | tasks/s |",
        "|---|---|---|---|---|",
    ]
    for n, r in s["runs"].items():
        lines.append(
            f"| {n} | {r['tasks']:,} | {r['tasks_completed']:,} | {_fmt(r['wall_s'])} | "
            f"{_fmt(r['tasks_per_s'], 0)} |"
        )
    lines += [
        "",
        "Figures: `fig9_waste.png`, `fig10a_jct_cdf.png`, `fig10bc_jct_reduction.png`, "
        "`fig7_rducs.png`. Data: `waste.parquet`, `rducs.parquet`, `<scheduler>/jobs.parquet`, "
        "`summary.json`.",
        "",
    ]
    return "\n".join(lines)
