"""Figures and ``report.md`` for a generic ``fairsim run`` output folder (any set of resources)."""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fairsim.atomic import write_text
from fairsim.scenario.config import RunConfig
from fairsim.scenario.reporting.fairness_panel import fairness_lines
from fairsim.scenario.reporting.plotting import decimate, jct_cdf_axes, save_figure
from fairsim.scenario.reporting.preemption_report import (
    evictions_figure,
    preempting,
    preemption_lines,
)
from fairsim.scenario.reporting.result_files import read_result_table
from fairsim.scenario.reporting.shares import user_shares_figure

_LABELS = {"cpu": "CPU", "mem": "memory", "gpu": "GPU"}

#: Top of the y-axis of utilisation figures (%) when no line exceeds 100 %: 5 % of headroom, so
#: that a line at or near 100 % is drawn inside the axes rather than under their top border;
#: ticks stop at 100. A run that over-commits (``recorded``) gets a higher top
#: (:func:`util_ylim_top`).
UTIL_YLIM_TOP = 105.0


def _label(resource: str) -> str:
    return _LABELS.get(resource, resource)


def util_ylim_top(peak: float, floor: float = UTIL_YLIM_TOP) -> float:
    """Top of a utilisation figure's y-axis (%), so that the whole curve is drawn.

    Parameters
    ----------
    peak : float
        The largest value drawn, % (NaN: none).
    floor : float
        The top when ``peak`` is at most 100 %.

    Returns
    -------
    float
        ``floor`` when ``peak <= 100`` (or NaN); else the smallest multiple of 10 at least
        ``peak + 5``: an over-committed pool (the replay ``recorded``, whose requests may exceed
        the capacity) is drawn whole, with the same headroom as a full one.
    """
    if not peak > 100.0:
        return floor
    return max(floor, 10.0 * math.ceil((peak + 5.0) / 10.0))


def utilization_figure(out: Path, schedulers: list[str], resources: list[str]) -> Figure:
    """Utilisation over time of each scheduler, one panel per resource (each line decimated:
    :func:`~fairsim.scenario.reporting.plotting.decimate`).

    Parameters
    ----------
    out : Path
        Run folder with ``<scheduler>/utilization.parquet``.
    schedulers : list of str
    resources : list of str
        Resource columns, e.g. ``["cpu", "mem", "gpu"]``.
    """
    fig = Figure(figsize=(9, 2.2 + 1.8 * len(resources)))
    axes = np.atleast_1d(fig.subplots(len(resources), 1, sharex=True))
    peak = dict.fromkeys(resources, math.nan)
    for name in schedulers:
        u = pd.read_parquet(out / name / "utilization.parquet")
        for ax, res in zip(axes, resources, strict=True):
            t, v = decimate(u["time_s"].to_numpy(), u[res].to_numpy())
            ax.plot(t / 3600.0, 100.0 * v, label=name, linewidth=0.9)
            if len(u):
                peak[res] = np.fmax(peak[res], 100.0 * float(u[res].max()))
    for ax, res in zip(axes, resources, strict=True):
        ax.set_ylabel(f"{_label(res)} utilisation (%)")
        # headroom above 100 %: a line at 99.5 % stays visible above the plot's top border;
        # an over-committed pool's line above 100 % is drawn whole
        top = util_ylim_top(peak[res])
        ax.set_ylim(0, top)
        ax.set_yticks(range(0, int(top) + 1, 20))
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("trace time (h)")
    axes[0].legend(loc="lower right", fontsize=8)
    fig.suptitle("Utilisation over time")
    return fig


def completed_jobs(out: Path, schedulers: list[str]) -> dict[str, pd.Series]:
    """Completion time (s) of every job each scheduler completed, indexed by ``job_id``."""
    jct: dict[str, pd.Series] = {}
    for name in schedulers:
        jobs = pd.read_parquet(out / name / "jobs.parquet", columns=["job_id", "completion_time_s"])
        jobs = jobs.dropna(subset=["completion_time_s"])
        jct[name] = jobs.set_index("job_id")["completion_time_s"]
    return jct


def common_jobs(jct: dict[str, pd.Series]) -> pd.Index:
    """Jobs completed under every scheduler of ``jct`` (sorted ``job_id``)."""
    ids: pd.Index | None = None
    for s in jct.values():
        ids = s.index if ids is None else ids.intersection(s.index)
    return pd.Index([]) if ids is None else ids.sort_values()


def jct_figure(out: Path, schedulers: list[str], *, common: bool = True) -> Figure | None:
    """CDF of job completion times (JCT), one curve per scheduler with its number of jobs.

    Parameters
    ----------
    out : Path
        Run folder with ``<scheduler>/jobs.parquet``.
    schedulers : list of str
    common : bool
        Draw every scheduler on the same job set, the jobs completed under all of them (default);
        else each on its own completed jobs (then the curves compare different populations).

    Returns
    -------
    matplotlib.figure.Figure or None
        None when no job is left to draw.
    """
    jct = completed_jobs(out, schedulers)
    ids = common_jobs(jct) if common else None
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    drawn = False
    for name in schedulers:
        values = jct[name] if ids is None else jct[name].loc[ids]
        if len(values) == 0:
            continue
        x = np.sort(values.to_numpy())
        ax.step(
            x, np.arange(1, len(x) + 1) / len(x), where="post", label=f"{name} (n = {len(x):,})"
        )
        drawn = True
    if not drawn:
        return None
    every = np.concatenate(
        [(jct[n] if ids is None else jct[n].loc[ids]).to_numpy(dtype=float) for n in schedulers]
    )
    jct_cdf_axes(ax, every, "job completion time (s)", "fraction of jobs")
    what = (
        "jobs completed under every scheduler" if ids is not None else "each one's completed jobs"
    )
    ax.set_title(f"Job completion time CDF ({what})", fontsize="medium")
    return fig


#: A run's pool is reported as overloaded when, at the horizon, more than this fraction of the
#: tasks that arrived is still queued (never started).
OVERLOAD_QUEUED_FRACTION = 0.5

#: A scheduler shows that the pool can run a run's workload when, at the horizon, at most this
#: fraction of the tasks that arrived is still queued under it (at most one in ten waiting). A
#: scheduler of the same run that meets the overload rule then has a backlog of its own making
#: (Slots leaving capacity unused), not the pool's.
SERVED_QUEUED_FRACTION = 0.1


#: A run's workload is reported as not fitting its pool when, under a scheduler, more than this
#: fraction of the tasks that arrived was skipped as unplaceable (its demand is above every
#: server, or a DAG ancestor's is): a few such tasks are the trace's (the report's table counts
#: them), this many say the pool is the wrong one for the workload.
UNPLACEABLE_FRACTION = 0.1


def _unplaceable(summaries: dict[str, dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """``{scheduler: (unplaceable, tasks)}`` for the schedulers that meet the rule
    (:data:`UNPLACEABLE_FRACTION`), in the order of ``summaries``."""
    out = {}
    for name, s in summaries.items():
        n = (s.get("ended") or {}).get("unplaceable")
        if n and s.get("tasks") and n / s["tasks"] > UNPLACEABLE_FRACTION:
            out[name] = (int(n), int(s["tasks"]))
    return out


def unplaceable_note(summaries: dict[str, dict[str, Any]]) -> str | None:
    """The report's warning when many tasks fit no server, or None.

    Parameters
    ----------
    summaries : dict
        ``{scheduler: summary}`` as ``summary.json``.

    Returns
    -------
    str or None
        The sentence (Markdown) naming each scheduler under which more than
        :data:`UNPLACEABLE_FRACTION` of the tasks that arrived were skipped as unplaceable, with
        the count and the share; None when none does.
    """
    over = _unplaceable(summaries)
    if not over:
        return None
    parts = ", ".join(
        f"{n} ({u:,} of {t:,} tasks, {100 * u / t:.0f} %)" for n, (u, t) in over.items()
    )
    return (
        f"**Tasks fit no server** under {parts}: skipped as unplaceable (a demand above every "
        f"server of the pool; the rule: more than {100 * UNPLACEABLE_FRACTION:.0f} % of the tasks "
        "that arrived), so completion and JCT describe the rest of the workload only. Check the "
        "demands against the servers' capacities (`cluster`)."
    )


def unplaceable_line(summaries: dict[str, dict[str, Any]]) -> str | None:
    """The report's unplaceable warning (:func:`unplaceable_note`) as one console line, or None.

    Examples
    --------
    >>> print(unplaceable_line({"drf": {"tasks": 10, "ended": {"unplaceable": 10}}}))
    ... # doctest: +NORMALIZE_WHITESPACE
    warning: tasks fit no server: skipped as unplaceable: 10 of 10 tasks (100 %) under drf (the
    rule: more than 10 % of the tasks that arrived); completion and JCT describe the rest of the
    workload only: check the demands against the servers' capacities (report.md)
    """
    over = _unplaceable(summaries)
    if not over:
        return None
    parts = ", ".join(
        f"{u:,} of {t:,} tasks ({100 * u / t:.0f} %) under {n}" for n, (u, t) in over.items()
    )
    return (
        f"warning: tasks fit no server: skipped as unplaceable: {parts} (the rule: more than "
        f"{100 * UNPLACEABLE_FRACTION:.0f} % of the tasks that arrived); completion and JCT "
        "describe the rest of the workload only: check the demands against the servers' "
        "capacities (report.md)"
    )


def window_note(cfg: RunConfig, start_s: float, horizon_s: float) -> str:
    """The report's sentence on the measurement window, with why it starts where it does.

    Parameters
    ----------
    cfg : RunConfig
        The run's config (``trace.start_s`` is the window start asked for).
    start_s, horizon_s : float
        The simulated window, seconds of trace time (``summary.json``).

    Returns
    -------
    str
        ``"window A – B s."``, followed by the reason when the window starts later than
        ``trace.start_s`` (the trace's data begin later: the Google 2011 trace's first 600 s are
        its start-up, time 0 meaning "before the trace window").
    """
    line = f"window {start_s:,.0f} – {horizon_s:,.0f} s"
    asked = float(cfg.trace.start_s)
    if start_s <= asked:
        return line + "."
    if cfg.trace.format == "google-2011":
        why = (
            "the Google 2011 trace's data begin at 600 s: its time 0 means \"before the trace "
            'window", so tasks submitted or running then are taken at 600 s (docs/traces.md)'
        )
    else:
        why = "the converted trace's data begin there (`window_s` of its conversion.json)"
    return (
        f"{line}; it starts at {start_s:,.0f} s, not at `trace.start_s` {asked:g} s, because {why}."
    )


def queued_fractions(summaries: dict[str, dict[str, Any]]) -> dict[str, float]:
    """Each scheduler's fraction of the tasks that arrived by the horizon still queued at the
    horizon (``ended["queued"] / tasks``).

    Parameters
    ----------
    summaries : dict
        ``{scheduler: summary}`` as ``summary.json``.

    Returns
    -------
    dict
        ``{scheduler: fraction}``, in the order of ``summaries``; a scheduler without ``ended``
        or without tasks is left out.
    """
    out = {}
    for name, s in summaries.items():
        queued = (s.get("ended") or {}).get("queued")
        if queued is not None and s.get("tasks"):
            out[name] = queued / s["tasks"]
    return out


def _overloaded(summaries: dict[str, dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The schedulers that meet the overload rule (:data:`OVERLOAD_QUEUED_FRACTION`), and those
    under which the pool serves the workload (:data:`SERVED_QUEUED_FRACTION`)."""
    frac = queued_fractions(summaries)
    over = [n for n, f in frac.items() if f > OVERLOAD_QUEUED_FRACTION]
    return over, [n for n, f in frac.items() if f <= SERVED_QUEUED_FRACTION]


def overload_note(summaries: dict[str, dict[str, Any]]) -> str | None:
    """The report's warning naming the schedulers whose queue saturated, or None.

    Rule: more than :data:`OVERLOAD_QUEUED_FRACTION` of the tasks that arrived by the horizon
    are still queued at the horizon (``ended["queued"] / tasks``). The note says that the pool
    is overloaded (the workload asks for more than these servers run in the window), unless
    another scheduler of the same run leaves at most :data:`SERVED_QUEUED_FRACTION` of the tasks
    queued on the same pool: the pool then serves the workload, the note names that scheduler,
    and the backlog is the others' (Slots leaving capacity unused, for instance).

    Parameters
    ----------
    summaries : dict
        Each scheduler's ``summary.json``, by scheduler name.

    Returns
    -------
    str or None
        The sentence (Markdown), or None when no scheduler meets the rule (or ``ended`` is
        missing).
    """
    over, served = _overloaded(summaries)
    if not over:
        return None
    frac = queued_fractions(summaries)
    parts = []
    for name in over:
        s = summaries[name]
        ratio = s.get("completion_ratio")
        parts.append(
            f"{name} ({s['ended']['queued']:,} of {s['tasks']:,} tasks queued, "
            f"{100 * frac[name]:.0f} %"
            + (f"; completion ratio {ratio:.3f}" if ratio is not None else "")
            + ")"
        )
    rule = (
        f"at the horizon more than {100 * OVERLOAD_QUEUED_FRACTION:.0f} % of the tasks that "
        "arrived are still queued (the rule)"
    )
    if served:
        under = ", ".join(f"{n} ({100 * frac[n]:.0f} % queued)" for n in served)
        one = len(over) == 1
        return (
            f"**The queue saturates** under {', '.join(parts)}: {rule}; not under {under} on "
            "the same pool and workload: the backlog is "
            + ("this scheduler's" if one else "these schedulers'")
            + ", not the pool's, and "
            + ("its" if one else "their")
            + " completion and JCT describe a saturated queue."
        )
    return (
        f"**The pool is overloaded** under {', '.join(parts)}: {rule}: the workload asks for far "
        "more than these servers can run in the window, "
        "so completion and JCT describe a saturated queue, not "
        "the schedulers' behaviour at a sustainable load. Add servers (`cluster.servers`) or "
        "shorten the window to compare them at a load the pool can serve."
    )


def overload_line(summaries: dict[str, dict[str, Any]]) -> str | None:
    """The report's overload warning (:func:`overload_note`) as one console line, or None.

    Parameters
    ----------
    summaries : dict
        As :func:`overload_note`.

    Returns
    -------
    str or None
        ``"warning: the pool is overloaded: ..."`` or, when another scheduler of the run serves
        the workload on the same pool, ``"warning: the queue saturates under ...: ..."``,
        naming each scheduler with its queued fraction (the cases of :func:`overload_note`);
        None when no scheduler meets the rule.

    Examples
    --------
    >>> over = {"tasks": 168105, "ended": {"queued": 158330}}
    >>> print(overload_line({"bf-drfh": over}))  # doctest: +NORMALIZE_WHITESPACE
    warning: the pool is overloaded: still queued at the horizon: 94 % under bf-drfh of the
    tasks that arrived (the rule: more than 50 %); completion and JCT describe a saturated queue,
    not the schedulers at a load the pool can serve: add servers (cluster.servers) or shorten
    the window (report.md)
    """
    over, served = _overloaded(summaries)
    if not over:
        return None
    frac = queued_fractions(summaries)

    def named(names: list[str]) -> str:
        return ", ".join(f"{100 * frac[n]:.0f} % under {n}" for n in names)

    queued = (
        f"still queued at the horizon: {named(over)} of the tasks that arrived (the rule: more "
        f"than {100 * OVERLOAD_QUEUED_FRACTION:.0f} %)"
    )
    if served:
        return (
            f"warning: the queue saturates under {', '.join(over)}: {queued}, against "
            f"{named(served)} on the same pool: the backlog is the scheduler's, not the pool's "
            "(report.md)"
        )
    return (
        f"warning: the pool is overloaded: {queued}; completion and JCT describe a saturated "
        "queue, not the schedulers at a load the pool can serve: add servers (cluster.servers) "
        "or shorten the window (report.md)"
    )


def user_share_figures(out: Path, cfg: RunConfig, schedulers: list[str]) -> dict[str, Figure]:
    """The per-user share figure of each scheduler, when the config has ``collect.user_shares``.

    Parameters
    ----------
    out : Path
        Run folder with ``<scheduler>/user_shares.parquet``.
    cfg : RunConfig
    schedulers : list of str

    Returns
    -------
    dict
        ``{scheduler: Figure}`` (:func:`~fairsim.scenario.reporting.shares.user_shares_figure`),
        empty without ``collect.user_shares``; a scheduler without the file is left out.
    """
    if not cfg.collect.user_shares:
        return {}
    figs: dict[str, Figure] = {}
    for name in schedulers:
        path = out / name / "user_shares.parquet"
        if path.is_file():
            figs[name] = user_shares_figure(pd.read_parquet(path), scheduler=name)
    return figs


def _f(x: Any, fmt: str) -> str:
    return "—" if x is None else format(x, fmt)


def delay_table(summaries: dict[str, dict[str, Any]]) -> list[str]:
    """The report's delay table (``summary.json``'s delay metrics,
    :func:`fairsim.simulator.results.delay_metrics`), one row per scheduler; empty for summaries
    written before they existed."""
    if not all("jct_s" in s for s in summaries.values()):
        return []
    lines = [
        "",
        "Delays per scheduler, each over its own jobs: JCT percentiles over the jobs it completed "
        "(the jobs not completed by the horizon are excluded and counted), queueing delay "
        "(`start_s - submit_s`) over the tasks that started, slowdown = JCT / the job's longest "
        "task run time, and the spread of per-user mean JCT (max/min, coefficient of variation).",
        "",
        "| scheduler | jobs excluded | JCT p50 (s) | JCT p95 (s) | JCT p99 (s) "
        "| mean queueing delay (s) | p95 queueing delay (s) | mean slowdown "
        "| per-user JCT max/min | per-user JCT CV |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in summaries.items():
        j, q, sd, u = s["jct_s"], s["queueing_delay_s"], s["slowdown"], s["user_jct"]
        lines.append(
            f"| {name} | {j['excluded_jobs']:,} | {_f(j['p50'], ',.0f')} | {_f(j['p95'], ',.0f')} "
            f"| {_f(j['p99'], ',.0f')} | {_f(q['mean'], ',.0f')} | {_f(q['p95'], ',.0f')} "
            f"| {_f(sd['mean'], '.2f')} | {_f(u['max_over_min'], '.1f')} | {_f(u['cv'], '.2f')} |"
        )
    return lines


def sharing_lines(summaries: dict[str, dict[str, Any]]) -> list[str]:
    """The report's sharing-incentive lines (``collect.sharing_incentive``), one per scheduler;
    empty without it."""
    si = {n: s["sharing_incentive"] for n, s in summaries.items() if s.get("sharing_incentive")}
    if not si:
        return []
    first = next(iter(si.values()))
    lines = [
        "",
        f"Sharing incentive ({first['rule']}; dedicated clouds: {first['pool_rule']}; "
        "per user in `<scheduler>/sharing_incentive.parquet`):",
        "",
    ]
    for n, v in si.items():
        lines.append(
            f"- {n}: {v['users_better_off']:,} of {v['users']:,} users better off "
            f"({_f(v['fraction_better_off'], '.1%')}), {v['users_worse_off']:,} worse off"
        )
    return lines


def stranded_lines(summaries: dict[str, dict[str, Any]]) -> list[str]:
    """The report's stranded-resources lines (``collect.stranded``), one per scheduler; empty
    without it."""
    st = {n: s["stranded"] for n, s in summaries.items() if s.get("stranded")}
    if not st:
        return []
    lines = [
        "",
        "Stranded resources (free capacity on servers where no waiting user's oldest waiting "
        "task fits, as a share of the pool; mean over the grid points where a task waits):",
        "",
    ]
    for n, v in st.items():
        parts = ", ".join(
            f"{_label(r)} {_f(None if x is None else 100 * x, '.1f')} %" for r, x in v.items()
        )
        k = summaries[n].get("stranded_samples", 0)
        lines.append(f"- {n}: {parts} ({k:,} grid points with a waiting task)")
    return lines


#: What each reading of the scheduler ``recorded``'s parameter ``requests`` holds on a machine.
REQUESTS_READING = {
    "schedule": "each run holds its own SCHEDULE row's request, what production placed",
    "first": "each run holds its task's first request, the workload the simulated schedulers "
    "replay",
}


def _requests_of(cfg: RunConfig, name: str) -> str | None:
    """The ``requests`` reading of the configured scheduler labelled ``name`` (its parameter,
    else its class's default), or None when it has no such parameter."""
    for spec in cfg.scheduler_specs():
        if spec.label != name:
            continue
        if "requests" in spec.params:
            return str(spec.params["requests"])
        default = inspect.signature(spec.cls).parameters.get("requests")
        return None if default is None else str(default.default)
    return None


def overcommit_lines(out: Path, cfg: RunConfig, summaries: dict[str, dict[str, Any]]) -> list[str]:
    """The report's paragraph on each run that over-commits (``summary.json``'s ``overcommit``:
    the replay ``recorded``, the only scheduler the engine lets over-commit); empty without one.

    For each such run: which requests it holds (:data:`REQUESTS_READING`), the over-committed
    machines per resource (the largest number at once and the number at the end of the
    window), the amount requested above the machines' capacity (its peak and time-average, as a
    share of the pool's capacity) and its utilisation by requests (mean, and the peak of
    ``utilization.parquet``), which may exceed 100 %.

    Parameters
    ----------
    out : Path
        Run folder with ``<scheduler>/utilization.parquet``.
    cfg : RunConfig
        The run's config (each scheduler's ``requests``).
    summaries : dict
        ``{scheduler: summary}`` as ``summary.json``.

    Returns
    -------
    list of str
        Markdown lines, one paragraph per over-committing run.
    """
    lines: list[str] = []
    for name, s in summaries.items():
        oc = s.get("overcommit")
        if not oc:
            continue
        reading = _requests_of(cfg, name)
        how = (
            f" ({REQUESTS_READING[reading]}: `requests: {reading}`)"
            if reading in REQUESTS_READING
            else ""
        )
        res = list(oc)
        util = pd.read_parquet(out / name / "utilization.parquet", columns=res)
        mu = s.get("mean_utilization") or {}
        machines = " and ".join(
            f"{_label(r)} on up to {oc[r]['max_servers']:,} machines at once "
            f"({oc[r]['end_servers']:,} at the end of the window)"
            for r in res
        )
        above = "; ".join(
            f"{_label(r)} {100 * oc[r]['max_amount']:.1f} % at the peak, "
            f"{100 * oc[r]['mean_amount']:.1f} % on average"
            for r in res
        )
        by_req = "; ".join(
            f"{_label(r)} {_f(None if mu.get(r) is None else 100 * mu[r], '.1f')} % on "
            f"average, {100 * float(util[r].max()):.1f} % at the peak"
            for r in res
            if len(util)
        )
        lines += [
            "",
            f"**{name} over-commits machines**{how}: the requests of its running tasks exceed "
            f"the capacity in {machines}, of {s.get('servers', 0):,} machines. Requested above "
            f"the machines' capacity, as a share of the pool's: {above}. Its utilisation is by "
            f"requests and exceeds 100 % when the pool is over-committed: {by_req}; the "
            "utilisation figure's axis goes high enough to show the whole curve. No other "
            "scheduler may over-commit (docs/recorded.md).",
        ]
    return lines


#: The columns of ``fairness_queues.parquet`` that :func:`queue_frames` reads.
FAIRNESS_QUEUE_READ = (
    "time_s",
    "queue",
    "dominant_share",
    "reference_dominant_share",
    "deficit",
    "holds_nothing",
)


def queue_frames(out: Path, names: list[str], command: str = "report") -> dict[str, pd.DataFrame]:
    """Per scheduler of a run with a queue tree, one row per queue: ``queues.parquet``'s
    columns and, when ``fairness_queues.parquet`` was written (``collect.fairness``), the time
    means over its sampled instants of each ``share_<resource>`` (the queue's share of the pool,
    its part of the utilisation), ``dominant_share``, ``reference_dominant_share`` (exact
    H-DRF's) and ``distance`` (mean of ``|deficit|``, the distance from H-DRF over time), and
    ``holds_nothing_s`` (instants at which the queue's tasks wait while it runs none, times the
    grid's spacing). Empty for a run without a tree.

    Interior queues have no ``queues.parquet`` row (their tasks are their children's); they get
    the fairness columns alone.

    Raises
    ------
    ResultError
        ``<command>: <path> is damaged: ...`` for a table that is not readable Parquet or lacks
        a column read here (``fairsim sweep-report`` reads the runs' files long after they were
        written; :func:`~fairsim.scenario.reporting.result_files.read_result_table`).
    """
    frames: dict[str, pd.DataFrame] = {}
    for name in names:
        path = out / name / "queues.parquet"
        if not path.exists():
            continue
        q = read_result_table(path, ["queue"], command, all_columns=True).set_index("queue")
        fq_path = out / name / "fairness_queues.parquet"
        if fq_path.exists():
            fq = read_result_table(fq_path, FAIRNESS_QUEUE_READ, command, all_columns=True)
            fq["distance"] = fq["deficit"].abs()
            cols = [c for c in fq.columns if c.startswith("share_")]
            cols += ["dominant_share", "reference_dominant_share", "distance"]
            g = fq.groupby("queue", sort=False)
            means = g[cols].mean()
            times = np.sort(fq["time_s"].unique())
            step = float(np.diff(times).min()) if len(times) > 1 else 0.0
            means["holds_nothing_s"] = g["holds_nothing"].sum() * step
            q = q.join(means, how="outer").loc[list(dict.fromkeys([*means.index, *q.index]))]
        frames[name] = q
    return frames


def queue_lines(out: Path, names: list[str]) -> list[str]:
    """The report's section for a run with a queue tree (docs/queues.md, "Per-queue
    outputs"): per scheduler and queue, JCT and queueing delay over the queue's own jobs and
    tasks, its mean share of each resource, its mean dominant share against exact H-DRF's and
    the mean distance between them, and the time it held nothing while its tasks waited; then
    the queue furthest from H-DRF under each scheduler and the tier each scheduler serves
    fastest (what an operator reads off it). Empty without a tree."""
    frames = queue_frames(out, names)
    if not frames:
        return []
    first = next(iter(frames.values()))
    shares = [c for c in first.columns if c.startswith("share_")]
    share_cols = "".join(f" | mean {_label(c[6:])} share" for c in shares)
    lines = [
        "",
        "## Queues",
        "",
        "Per scheduler and queue of the tree: JCT over the queue's jobs completed by the horizon "
        "(the others are excluded), queueing delay (`start_s - submit_s`) over its tasks that "
        "started, and, with `collect.fairness`, the time means over the sampled instants of the "
        "queue's share of each resource of the pool (its part of the utilisation), its dominant "
        "share, exact H-DRF's on the same tasks (`reference`), the mean distance "
        "`|reference - share|` and the time the queue held nothing while its tasks waited. "
        "Interior queues have only the share columns (their jobs are their children's).",
        "",
        "| scheduler | queue | jobs completed | mean JCT (s) | p95 JCT (s) | mean queueing (s) "
        f"| p95 queueing (s){share_cols} | dominant share | H-DRF share | distance "
        "| holds nothing (s) |",
        "|---|---|---|---|---|---|---|" + "---|" * len(shares) + "---|---|---|---|",
    ]

    def num(row: pd.Series, key: str, fmt: str) -> str:
        v = row.get(key)
        return "—" if v is None or pd.isna(v) else format(v, fmt)

    for name, q in frames.items():
        for queue, row in q.iterrows():
            cells = [
                num(row, "jobs_completed", ",.0f"),
                num(row, "mean_jct_s", ",.0f"),
                num(row, "p95_jct_s", ",.0f"),
                num(row, "mean_queueing_s", ",.0f"),
                num(row, "p95_queueing_s", ",.0f"),
                *(num(row, c, ".3f") for c in shares),
                num(row, "dominant_share", ".3f"),
                num(row, "reference_dominant_share", ".3f"),
                num(row, "distance", ".3f"),
                num(row, "holds_nothing_s", ",.0f"),
            ]
            lines.append(f"| {name} | {queue} | " + " | ".join(cells) + " |")
    said = []
    for name, q in frames.items():
        parts = []
        if "distance" in q and q["distance"].notna().any():
            worst = str(q["distance"].idxmax())
            r = q.loc[worst]
            side = "below" if r["reference_dominant_share"] > r["dominant_share"] else "above"
            parts.append(
                f"its queue furthest from H-DRF is `{worst}` (mean dominant share "
                f"{r['dominant_share']:.3f}, {side} H-DRF's {r['reference_dominant_share']:.3f})"
            )
            starved = q.index[q["holds_nothing_s"].fillna(0) > 0].tolist()
            parts.append(
                "no queue held nothing while its tasks waited"
                if not starved
                else "queues that held nothing while their tasks waited: "
                + ", ".join(f"`{x}` ({q.loc[x, 'holds_nothing_s']:,.0f} s)" for x in starved)
            )
        jct = q["mean_queueing_s"].dropna() if "mean_queueing_s" in q else pd.Series(dtype=float)
        if len(jct) > 1:
            parts.append(
                f"its tasks wait least in `{jct.idxmin()}` ({jct.min():,.0f} s on average) and "
                f"most in `{jct.idxmax()}` ({jct.max():,.0f} s)"
            )
        if parts:
            said.append(f"- Under {name}: " + "; ".join(parts) + ".")
    if said:
        lines += ["", *said]
    return lines


def write_run_report(out: Path, cfg: RunConfig, summaries: dict[str, dict[str, Any]]) -> Path:
    """Write ``utilization.png``, ``jct_cdf.png``, ``user_shares_<scheduler>.png`` (with
    ``collect.user_shares``), the fairness figures (with ``collect.fairness``:
    :func:`~fairsim.scenario.reporting.fairness_panel.fairness_lines`) and ``report.md`` for a
    ``fairsim run`` folder.

    The report has a row per scheduler (its own numbers: tasks, how they ended, mean
    utilisation as the exact time average over the window, JCT over the jobs it completed), a
    paragraph per run that over-commits (:func:`overcommit_lines`: the replay ``recorded``), a
    paragraph and ``evictions.png`` on the schedulers that preempt
    (:func:`~fairsim.scenario.reporting.preemption_report.preemption_lines`) and a
    comparison on the same job set: the jobs completed under every scheduler, with their number.
    """
    names = list(summaries)
    first = next(iter(summaries.values()))
    resources = list(first["mean_utilization"])
    save_figure(utilization_figure(out, names, resources), out / "utilization.png")
    jct_fig = jct_figure(out, names)
    if jct_fig is not None:
        save_figure(jct_fig, out / "jct_cdf.png")
    share_figs = user_share_figures(out, cfg, names)
    for name, fig in share_figs.items():
        save_figure(fig, out / f"user_shares_{name}.png")
    evicting = preempting(summaries)
    if evicting:
        save_figure(evictions_figure(out, evicting, resources), out / "evictions.png")
    util_cols = " | ".join(f"mean {_label(r)} util." for r in resources)
    rule = first.get("censored_rule", "hold")
    lines = [
        f"# {cfg.name}",
        "",
        f"Config hash `{cfg.config_hash()}`, seed {cfg.seed}, trace `{cfg.trace.format}`, "
        f"{first.get('servers')} servers ({cfg.cluster.source}), "
        + window_note(cfg, float(first.get("start_s", 0)), float(first.get("horizon_s", 0))),
        "",
        "Per scheduler: a task is completed when it finished by the horizon; right-censored "
        "tasks (the trace ends while they run) "
        + (
            "never complete: they hold their servers to the horizon (rule `hold`). "
            if rule == "hold"
            else "complete after their observed span, a lower bound (rule `complete`). "
        )
        + "Mean utilisation is the time average over the window. Mean JCT is over the jobs "
        "each scheduler completed, so it compares different job sets; see the next table.",
        "",
        f"| scheduler | tasks | completed | censored | running | queued | unplaceable "
        f"| completion ratio | {util_cols} | jobs completed | mean JCT (s) | wall (s) | tasks/s |",
        "|---|---|---|---|---|---|---|---|" + "---|" * len(resources) + "---|---|---|---|",
    ]
    notes = [overload_note(summaries), unplaceable_note(summaries)]
    lines[4:4] = [line for note in notes if note is not None for line in (note, "")]
    for name, s in summaries.items():
        mu = s["mean_utilization"]
        ended = s.get("ended") or {}
        utils = " | ".join("—" if mu.get(r) is None else f"{100 * mu[r]:.1f} %" for r in resources)
        lines.append(
            f"| {name} | {s['tasks']} | {s['tasks_completed']} | {ended.get('censored', '—')} "
            f"| {ended.get('running', '—')} | {ended.get('queued', '—')} "
            f"| {ended.get('unplaceable', '—')} | {_f(s.get('completion_ratio'), '.3f')} "
            f"| {utils} | {s['jobs_completed']} | {_f(s.get('mean_jct_s'), ',.0f')} "
            f"| {s['wall_s']:.1f} | {_f(s.get('tasks_per_s'), ',.0f')} |"
        )
    lines += overcommit_lines(out, cfg, summaries)
    lines += preemption_lines(summaries, "evictions.png" if evicting else None)
    lines += delay_table(summaries)
    lines += sharing_lines(summaries)
    lines += stranded_lines(summaries)
    jct = completed_jobs(out, names)
    ids = common_jobs(jct)
    lines += [
        "",
        f"Same job set: the {len(ids):,} jobs completed under every scheduler"
        + (":" if len(ids) else " (none: no comparison on a common set)."),
        "",
    ]
    if len(ids):
        lines += ["| scheduler | jobs | mean JCT (s) | median JCT (s) |", "|---|---|---|---|"]
        for name in names:
            v = jct[name].loc[ids]
            lines.append(f"| {name} | {len(v):,} | {v.mean():,.0f} | {v.median():,.0f} |")
    skipped = first.get("skipped") or {}
    if skipped:
        lines += ["", "Tasks not simulated, by reason:", ""]
        lines += [f"- {reason}: {n}" for reason, n in skipped.items()]
    gates = {n: s["jobs_gate"] for n, s in summaries.items() if s.get("jobs_gate")}
    if gates:
        lines += ["", "Complex jobs (DAG parents, repetitions, job queue), per scheduler:", ""]
        for n, g in gates.items():
            held = ", ".join(f"{k}: {v}" for k, v in g.get("held", {}).items()) or "none"
            dropped = ", ".join(f"{k}: {v}" for k, v in g.get("dropped", {}).items()) or "none"
            lines.append(f"- {n}: held at the end: {held}; dropped: {dropped}")
    lines += ["", "![utilisation](utilization.png)", ""]
    if jct_fig is not None:
        lines += ["![JCT CDF](jct_cdf.png)", ""]
    for name in share_figs:
        lines += [f"![user shares under {name}](user_shares_{name}.png)", ""]
    lines += fairness_lines(out, names, summaries)
    lines += queue_lines(out, names)
    return write_text(out / "report.md", "\n".join(lines))
