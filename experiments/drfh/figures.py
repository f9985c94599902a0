"""Figures of the DRFH reproduction (Wang, Li, Liang, Sec. VI: Table II, Figs. 4-8).

Every function reads the result files that ``fairsim run`` writes into a results directory ``R``
(docs/architecture.md), computes the numbers the paper reports, and optionally saves a PNG. Figures
are built on :class:`matplotlib.figure.Figure` objects directly (no pyplot global state) and written
atomically: a temporary file in the destination directory, then :func:`os.replace`.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fairsim.experiments.drfh import paper as paper
from fairsim.scenario.reporting.plotting import decimate, save_figure, scheduler_label
from fairsim.scenario.reporting.shares import user_shares_figure

logger = logging.getLogger(__name__)

#: Scheduler directory names the DRFH reproduction may contain, in display order.
DRFH_SCHEDULERS = ("slots-10", "slots-12", "slots-14", "slots-16", "slots-20", "ff-drfh", "bf-drfh")

_SLOTS_RE = re.compile(r"^slots-(\d+)$")
_TOL = 1e-9


#: Sub-folder of the runs under the older rule for right-censored tasks (``censored: complete``;
#: :mod:`fairsim.experiments.drfh.experiment`, step 3).
SENSITIVITY_DIR = "censored-complete"


def present_schedulers(results: str | os.PathLike[str]) -> list[str]:
    """Return the scheduler directories of ``results`` that hold a ``summary.json``.

    Parameters
    ----------
    results : path-like
        Results directory of ``fairsim run``.

    Returns
    -------
    list of str
        Known DRFH schedulers first (in :data:`DRFH_SCHEDULERS` order), then any others sorted.
    """
    root = Path(results)
    found = {
        p.parent.name
        for p in root.glob("*/summary.json")
        if p.parent.name not in {"dedicated", "fig4", SENSITIVITY_DIR}
    }
    known = [s for s in DRFH_SCHEDULERS if s in found]
    return known + sorted(found - set(known))


def read_summary(results: str | os.PathLike[str], scheduler: str) -> dict[str, Any]:
    """Read ``R/<scheduler>/summary.json``.

    Parameters
    ----------
    results : path-like
        Results directory.
    scheduler : str
        Scheduler directory name.

    Returns
    -------
    dict
        The parsed summary.

    Raises
    ------
    FileNotFoundError
        If the summary does not exist.
    """
    path = Path(results) / scheduler / "summary.json"
    return json.loads(path.read_text())


def mean_utilization(results: str | os.PathLike[str], scheduler: str) -> tuple[float, float]:
    """Mean (CPU, memory) utilisation of one scheduler, as fractions of total capacity.

    Taken from ``summary.json`` (``mean_utilization``) when present, else the mean of
    ``utilization.parquet``.

    Parameters
    ----------
    results : path-like
        Results directory.
    scheduler : str
        Scheduler directory name.

    Returns
    -------
    tuple of float
        ``(cpu, mem)``.

    Raises
    ------
    FileNotFoundError
        If neither the summary's ``mean_utilization`` nor ``utilization.parquet`` exists.
    """
    root = Path(results) / scheduler
    summary_path = root / "summary.json"
    if summary_path.exists():
        mu = json.loads(summary_path.read_text()).get("mean_utilization") or {}
        if "cpu" in mu and "mem" in mu:
            return float(mu["cpu"]), float(mu["mem"])
    util = pd.read_parquet(root / "utilization.parquet", columns=["cpu", "mem"])
    return float(util["cpu"].mean()), float(util["mem"].mean())


# --------------------------------------------------------------------------- Table II


_SLOTS_MODEL_RE = re.compile(r"^slots-(\d+)(?:-(single|cpu))?$")


def table_ii(results: str | os.PathLike[str], model: str = "multi") -> pd.DataFrame:
    """Mean utilisation of every ``slots-S`` run beside the paper's Table II.

    Parameters
    ----------
    results : path-like
        Results directory; every ``R/slots-S/`` present is used.
    model : {"multi", "single", "cpu"}
        Slot model (:class:`fairsim.schedulers.slots.Slots`): ``multi`` reads ``R/slots-S/``, the
        others ``R/slots-S-<model>/``.

    Returns
    -------
    pandas.DataFrame
        Columns ``slots`` (int), ``cpu``, ``mem`` (ours, fractions), ``paper_cpu``, ``paper_mem``
        (Table II, NaN for a slot count the paper did not report), sorted by ``slots``.
    """
    rows = []
    for d in sorted(Path(results).iterdir()) if Path(results).is_dir() else []:
        m = _SLOTS_MODEL_RE.match(d.name)
        if not m or not d.is_dir() or (m.group(2) or "multi") != model:
            continue
        try:
            cpu, mem = mean_utilization(results, d.name)
        except FileNotFoundError:
            logger.warning("skipping %s: no summary.json mean_utilization or utilization", d)
            continue
        s = int(m.group(1))
        p_cpu, p_mem = paper.TABLE_II.get(s, (np.nan, np.nan))
        rows.append({"slots": s, "cpu": cpu, "mem": mem, "paper_cpu": p_cpu, "paper_mem": p_mem})
    cols = ["slots", "cpu", "mem", "paper_cpu", "paper_mem"]
    table = pd.DataFrame(rows, columns=cols)
    return table.sort_values("slots", ignore_index=True).astype({"slots": "int64"})


def best_slots(table: pd.DataFrame) -> str:
    """Name of the Slots scheduler with the highest mean of CPU and memory utilisation.

    The paper (Sec. VI) "chooses the one with the highest CPU and memory utilization"; we read this
    as the highest average of the two. Ties go to the smaller slot count.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`table_ii`.

    Returns
    -------
    str
        E.g. ``"slots-14"``.

    Raises
    ------
    ValueError
        If ``table`` is empty.
    """
    if table.empty:
        raise ValueError("best_slots: table has no slots rows (no R/slots-S/ results found)")
    ordered = table.sort_values("slots", kind="stable")
    score = ((ordered["cpu"] + ordered["mem"]) / 2).to_numpy(float)
    return f"slots-{int(ordered['slots'].to_numpy()[int(np.argmax(score))])}"


# --------------------------------------------------------------------------- Fig. 5


def _read_utilization(results: str | os.PathLike[str], scheduler: str) -> pd.DataFrame:
    util = pd.read_parquet(Path(results) / scheduler / "utilization.parquet")
    return util[["time_s", "cpu", "mem"]].sort_values("time_s", ignore_index=True)


def fig5_utilization(
    results: str | os.PathLike[str],
    schedulers: Sequence[str] | None = None,
    path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Fig. 5: CPU and memory utilisation over time (two panels).

    Parameters
    ----------
    results : path-like
        Results directory.
    schedulers : sequence of str, optional
        Schedulers to draw; default: the best Slots run, ``ff-drfh`` and ``bf-drfh`` (those
        present).
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.

    Returns
    -------
    dict
        ``"schedulers"``: the list drawn; ``"mean"``: ``{scheduler: {"cpu": x, "mem": y}}`` (time
        averages over the window, fractions, from :func:`mean_utilization`); ``"above"``:
        ``{"a>=b": {"cpu": f, "mem": f}}`` for the pairs (bf-drfh, ff-drfh), (bf-drfh, best
        slots), (ff-drfh, best slots) when present: the fraction of common grid times at which
        a's utilisation is at least b's.
    """
    root = Path(results)
    if schedulers is None:
        table = table_ii(root)
        schedulers = [best_slots(table)] if not table.empty else []
        schedulers += [s for s in ("ff-drfh", "bf-drfh") if (root / s).is_dir()]
    series = {s: _read_utilization(root, s) for s in schedulers}

    fig = Figure(figsize=(10, 4.2))
    axes = fig.subplots(1, 2, sharex=True)
    for res, ax, name in zip(("cpu", "mem"), axes, ("CPU", "Memory"), strict=True):
        for s, df in series.items():
            t, v = decimate(df["time_s"].to_numpy(), df[res].to_numpy())
            ax.plot(t / 3600.0, 100.0 * v, label=scheduler_label(s), lw=0.9)
        ax.set_xlabel("Time (h)")
        ax.set_ylabel(f"{name} utilization (%)")
        ax.set_ylim(0, 100)
        ax.set_title(f"{name} utilization")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
    fig.suptitle("Fig. 5 (DRFH paper): time series of CPU and memory utilization")

    means = {s: dict(zip(("cpu", "mem"), mean_utilization(root, s), strict=True)) for s in series}
    slots = [s for s in schedulers if _SLOTS_RE.match(s)]
    pairs = [("bf-drfh", "ff-drfh")] + [(d, s) for s in slots for d in ("bf-drfh", "ff-drfh")]
    above: dict[str, dict[str, float]] = {}
    for a, b in pairs:
        if a in series and b in series:
            m = series[a].merge(series[b], on="time_s", suffixes=("_a", "_b"))
            if len(m):
                above[f"{a}>={b}"] = {
                    r: float((m[f"{r}_a"] >= m[f"{r}_b"] - _TOL).mean()) for r in ("cpu", "mem")
                }
    if path is not None:
        save_figure(fig, path)
    return {"schedulers": list(schedulers), "mean": means, "above": above}


# --------------------------------------------------------------------------- Fig. 6


def _size_bin(n_tasks: pd.Series) -> pd.Series:
    edges = [0] + [hi for _, hi in paper.FIG6_BINS[:-1]] + [np.inf]
    return pd.cut(n_tasks, bins=edges, labels=list(paper.FIG6_BIN_LABELS), right=True)


def fig6_jct(
    results: str | os.PathLike[str],
    a: str = "bf-drfh",
    b: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Fig. 6: job completion times of ``a`` versus ``b`` over jobs finished under both.

    Panel (a): CDF of job completion time (log-x, seconds). Panel (b): mean completion-time
    reduction ``1 - mean_a / mean_b`` per job-size bin (1-50, 51-100, 101-500, 501-1000, >1000
    tasks).

    Parameters
    ----------
    results : path-like
        Results directory.
    a : str, optional
        The improved scheduler (default Best-Fit DRFH).
    b : str, optional
        The baseline; default the best Slots run (:func:`best_slots`).
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``bin``, ``jobs`` (finished under both), ``mean_jct_a_s``,
        ``mean_jct_b_s``, ``reduction`` (fraction; NaN for an empty bin). ``attrs`` holds ``a``,
        ``b`` and ``"overall"`` (reduction over all common jobs).
    """
    root = Path(results)
    if b is None:
        b = best_slots(table_ii(root))
    cols = ["job_id", "n_tasks", "completion_time_s"]
    ja = pd.read_parquet(root / a / "jobs.parquet", columns=cols)
    jb = pd.read_parquet(root / b / "jobs.parquet", columns=["job_id", "completion_time_s"])
    both = ja.merge(jb, on="job_id", suffixes=("_a", "_b"))
    both = both.dropna(subset=["completion_time_s_a", "completion_time_s_b"])
    both["bin"] = _size_bin(both["n_tasks"])
    grouped = both.groupby("bin", observed=False)
    out = pd.DataFrame(
        {
            "bin": list(paper.FIG6_BIN_LABELS),
            "jobs": grouped.size().reindex(paper.FIG6_BIN_LABELS).fillna(0).astype("int64").values,
            "mean_jct_a_s": grouped["completion_time_s_a"].mean().values,
            "mean_jct_b_s": grouped["completion_time_s_b"].mean().values,
        }
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        out["reduction"] = 1.0 - out["mean_jct_a_s"] / out["mean_jct_b_s"]
    overall = (
        float(1.0 - both["completion_time_s_a"].mean() / both["completion_time_s_b"].mean())
        if len(both)
        else float("nan")
    )
    out.attrs.update({"a": a, "b": b, "overall": overall, "jobs_both": len(both)})

    fig = Figure(figsize=(10, 4.2))
    ax_cdf, ax_bar = fig.subplots(1, 2)
    for name, col in ((a, "completion_time_s_a"), (b, "completion_time_s_b")):
        x = np.sort(both[col].to_numpy(dtype=float))
        if len(x):
            x = np.maximum(x, 1e-3)  # log axis: keep zero-length jobs visible
            y = np.arange(1, len(x) + 1) / len(x)
            ax_cdf.step(x, y, where="post", label=scheduler_label(name))
    ax_cdf.set_xscale("log")
    ax_cdf.set_xlabel("Job completion time (s)")
    ax_cdf.set_ylabel("CDF (fraction of jobs)")
    ax_cdf.set_ylim(0, 1)
    ax_cdf.set_title(f"(a) CDF of job completion times ({len(both)} jobs)")
    ax_cdf.grid(alpha=0.3)
    ax_cdf.legend(loc="lower right", fontsize="small")

    pos = np.arange(len(out))
    heights = 100.0 * out["reduction"].fillna(0.0).to_numpy(float)
    ax_bar.bar(
        pos,
        heights,
        color="tab:blue",
        label=f"1 - mean({scheduler_label(a)}) / mean({scheduler_label(b)})",
    )
    for p, h, n in zip(pos, heights, out["jobs"], strict=True):
        ax_bar.annotate(
            f"{n} jobs",
            (p, max(h, 0.0)),
            textcoords="offset points",
            xytext=(0, 3),
            ha="center",
            fontsize="x-small",
        )
    lo, hi = min(0.0, heights.min(initial=0.0)), max(10.0, heights.max(initial=0.0))
    ax_bar.set_ylim(lo - 0.05 * (hi - lo), hi + 0.3 * (hi - lo))  # room for labels and legend
    ax_bar.axhline(0, color="black", lw=0.8)
    ax_bar.set_xticks(pos, out["bin"])
    ax_bar.set_xlabel("Job size (tasks)")
    ax_bar.set_ylabel("Mean completion time reduction (%)")
    ax_bar.set_title("(b) Job completion time reduction")
    ax_bar.legend(loc="upper left", fontsize="x-small")
    fig.suptitle("Fig. 6 (DRFH paper): DRFH improvements on job completion times over Slots")
    if path is not None:
        save_figure(fig, path)
    return out


# --------------------------------------------------------------------------- Figs. 7 and 8


def _read_users(results: Path, sub: str) -> pd.DataFrame:
    users = pd.read_parquet(results / sub / "users.parquet")
    return users[["user", "tasks_submitted", "tasks_completed", "completion_ratio"]]


def _bubble_scatter(ax: Any, x: np.ndarray, y: np.ndarray, size: np.ndarray, *, label: str) -> None:
    ax.scatter(x, y, s=size, alpha=0.7, edgecolors="tab:blue", facecolors="none", label=label)
    ax.plot([0, 1], [0, 1], color="grey", ls="--", lw=0.8, label="y = x")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")


def fig7_completion(
    results: str | os.PathLike[str],
    a: str = "bf-drfh",
    b: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Fig. 7: per-user task completion ratio under ``b`` (x, Slots) versus ``a`` (y, DRFH).

    Bubble area is proportional to ``log10(1 + tasks submitted)``.

    Parameters
    ----------
    results : path-like
        Results directory.
    a : str, optional
        Scheduler on the y axis (default Best-Fit DRFH).
    b : str, optional
        Scheduler on the x axis; default the best Slots run.
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.

    Returns
    -------
    dict
        ``a``, ``b``, ``users`` (in both), ``higher_under_a`` / ``lower_under_a`` (fractions of
        users with a strictly higher / lower ratio under ``a``), ``full_under_a_not_b`` (fraction
        of users with every task completed under ``a`` but not under ``b``).
    """
    root = Path(results)
    if b is None:
        b = best_slots(table_ii(root))
    m = _read_users(root, a).merge(_read_users(root, b), on="user", suffixes=("_a", "_b"))
    ra, rb = m["completion_ratio_a"].to_numpy(float), m["completion_ratio_b"].to_numpy(float)
    n = max(len(m), 1)
    full_a = m["tasks_completed_a"] >= m["tasks_submitted_a"]
    full_b = m["tasks_completed_b"] >= m["tasks_submitted_b"]
    stats = {
        "a": a,
        "b": b,
        "users": len(m),
        "higher_under_a": float(np.sum(ra > rb + _TOL) / n) if len(m) else float("nan"),
        "lower_under_a": float(np.sum(ra < rb - _TOL) / n) if len(m) else float("nan"),
        "full_under_a_not_b": float((full_a & ~full_b).sum() / n) if len(m) else float("nan"),
    }
    fig = Figure(figsize=(5.5, 5.5))
    ax = fig.subplots()
    size = 40.0 * np.log10(1.0 + m["tasks_submitted_a"].to_numpy(float))
    _bubble_scatter(ax, rb, ra, size, label=f"users ({len(m)}); area ∝ log10(1 + tasks)")
    ax.set_xlabel(f"Task completion ratio, {scheduler_label(b)} (fraction)")
    ax.set_ylabel(f"Task completion ratio, {scheduler_label(a)} (fraction)")
    ax.set_title(
        f"Fig. 7 (DRFH paper): task completion ratio\n{scheduler_label(a)} vs {scheduler_label(b)}",
        fontsize="medium",
    )
    if path is not None:
        save_figure(fig, path)
    return stats


def fig8_sharing_incentive(
    results: str | os.PathLike[str],
    path: str | os.PathLike[str] | None = None,
    *,
    shared: str = "bf-drfh",
) -> dict[str, Any]:
    """Fig. 8: task completion ratio on dedicated clouds (x) versus the shared cloud (y).

    Bubble radius is proportional to ``log10(1 + tasks submitted)``.

    Parameters
    ----------
    results : path-like
        Results directory; reads ``R/dedicated/users.parquet`` and ``R/<shared>/users.parquet``.
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.
    shared : str, optional
        Scheduler of the shared-cloud run (default Best-Fit DRFH).

    Returns
    -------
    dict
        ``users`` (in both), ``worse_off`` (count with ``ratio_shared < ratio_dedicated - 1e-9``),
        ``worse_off_fraction``, ``mean_decrease`` (mean of ``ratio_dedicated - ratio_shared``
        over the worse-off users; NaN when none), ``better_off_fraction``.
    """
    root = Path(results)
    m = _read_users(root, "dedicated").merge(
        _read_users(root, shared), on="user", suffixes=("_dc", "_sc")
    )
    dc, sc = m["completion_ratio_dc"].to_numpy(float), m["completion_ratio_sc"].to_numpy(float)
    worse = sc < dc - _TOL
    n = len(m)
    stats = {
        "shared": shared,
        "users": n,
        "worse_off": int(worse.sum()),
        "worse_off_fraction": float(worse.sum() / n) if n else float("nan"),
        "better_off_fraction": float(np.sum(sc > dc + _TOL) / n) if n else float("nan"),
        "mean_decrease": float(np.mean(dc[worse] - sc[worse])) if worse.any() else float("nan"),
    }
    fig = Figure(figsize=(5.5, 5.5))
    ax = fig.subplots()
    radius = 6.0 * np.log10(1.0 + m["tasks_submitted_sc"].to_numpy(float))
    _bubble_scatter(ax, dc, sc, radius**2, label=f"users ({n}); radius ∝ log10(1 + tasks)")
    ax.set_xlabel("Task completion ratio in dedicated cloud, DC (fraction)")
    ax.set_ylabel(
        f"Task completion ratio in shared cloud, SC (fraction; {scheduler_label(shared)})"
    )
    ax.set_title(
        "Fig. 8 (DRFH paper): sharing incentive, dedicated vs shared cloud", fontsize="medium"
    )
    if path is not None:
        save_figure(fig, path)
    return stats


# --------------------------------------------------------------------------- Fig. 4


def _step_mean(t: np.ndarray, v: np.ndarray, lo: float, hi: float) -> float:
    """Time-weighted mean over [lo, hi] of the step function (t, v); 0 before t[0]."""
    if hi <= lo:
        return float("nan")
    knots = np.concatenate(([lo], t[(t > lo) & (t < hi)], [hi]))
    idx = np.searchsorted(t, knots[:-1], side="right") - 1
    vals = np.where(idx >= 0, v[np.clip(idx, 0, None)], 0.0)
    return float(np.sum(vals * np.diff(knots)) / (hi - lo))


def fig4_phase_means(
    shares: pd.DataFrame,
    phases: dict[str, tuple[float, float]] | None = None,
    *,
    middle: float = 0.6,
    active_threshold: float = 1e-6,
) -> dict[str, dict[str, dict[str, float]]]:
    """Mean CPU, memory and dominant share of each active user in each phase of Fig. 4.

    Parameters
    ----------
    shares : pandas.DataFrame
        Long format ``time_s, user, cpu, mem, dominant``; each sample holds until the next sample
        of the same user (step function; a user's share is 0 before its first sample).
    phases : dict, optional
        ``{name: (start_s, end_s)}``; default
        :data:`fairsim.experiments.drfh.paper.FIG4_PHASES`.
    middle : float, optional
        Fraction of each window kept, centred, to skip transients (default the middle 60 %).
    active_threshold : float, optional
        A user is active in a phase when its mean dominant share exceeds this.

    Returns
    -------
    dict
        ``{phase: {user: {"cpu": x, "mem": y, "dominant": z}}}``, time-weighted means.
    """
    phases = dict(paper.FIG4_PHASES if phases is None else phases)
    out: dict[str, dict[str, dict[str, float]]] = {}
    groups = {u: g.sort_values("time_s") for u, g in shares.groupby("user", sort=True)}
    for name, (t0, t1) in phases.items():
        cut = (1.0 - middle) / 2.0 * (t1 - t0)
        lo, hi = t0 + cut, t1 - cut
        per_user: dict[str, dict[str, float]] = {}
        for user, g in groups.items():
            t = g["time_s"].to_numpy(float)
            means = {
                r: _step_mean(t, g[r].to_numpy(float), lo, hi) for r in ("cpu", "mem", "dominant")
            }
            if means["dominant"] > active_threshold:
                per_user[str(user)] = means
        out[name] = per_user
    return out


def fig4_shares(
    results: str | os.PathLike[str],
    path: str | os.PathLike[str] | None = None,
    *,
    scheduler: str = "bf-drfh",
) -> dict[str, dict[str, dict[str, float]]]:
    """Fig. 4: CPU, memory and global dominant share of three users over time (three panels).

    Parameters
    ----------
    results : path-like
        Results directory; reads ``R/fig4/<scheduler>/user_shares.parquet``.
    path : path-like, optional
        Where to save the PNG; nothing is saved when None.
    scheduler : str, optional
        Scheduler subdirectory of ``R/fig4`` (default Best-Fit DRFH).

    Returns
    -------
    dict
        Phase means, see :func:`fig4_phase_means`.
    """
    shares = pd.read_parquet(Path(results) / "fig4" / scheduler / "user_shares.parquet")
    phases = fig4_phase_means(shares)
    fig = user_shares_figure(
        shares,
        scheduler=scheduler,
        marks_s=(paper.FIG4_USER2_JOIN_S, paper.FIG4_USER3_JOIN_S, paper.FIG4_USER1_DEPART_S),
        title=f"Fig. 4 (DRFH paper): shares of three users under {scheduler_label(scheduler)} "
        "(dotted: 200 s, 500 s, 1080 s)",
    )
    if path is not None:
        save_figure(fig, path)
    return phases


def monotone_nondecreasing(values: Iterable[float], *, tol: float = 0.02) -> bool:
    """True if the finite values never drop by more than ``tol`` from one to the next.

    Parameters
    ----------
    values : iterable of float
        Values in order; NaN entries are ignored.
    tol : float, optional
        Allowed drop between consecutive finite values.

    Returns
    -------
    bool
    """
    v = [x for x in values if np.isfinite(x)]
    return all(b >= a - tol for a, b in itertools.pairwise(v))
