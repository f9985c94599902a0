"""The "Fairness over time" panel of the run and sweep reports (``collect.fairness``).

A scheduler's run folder written with ``collect.fairness`` holds ``fairness.parquet`` (one row
per sampled instant and active user: ``time_s, user, ..., dominant_share,
reference_dominant_share, deficit``) and ``fairness_summary.parquet`` (one row per instant:
``time_s, active_users, jain_index, max_deficit, l1_distance, si_violations, envious_pairs,
jain_entitlement, zero_reference_users, jain_raw_dominant``), and its ``summary.json`` holds
their time averages under ``fairness.time_average`` (docs/fairness.md gives the definitions:
the deficit is a user's dominant share in the reference allocation, the exact mechanism the
scheduler implements, minus its dominant share online; ``jain_entitlement`` is Jain's index of
Jain, Chiu and Hawe 1984 over each user's online dominant share divided by its reference one,
``jain_raw_dominant`` the same index over the raw dominant shares).

This module draws, for the schedulers that have both files:

* :func:`fairness_over_time_figure`: the largest deficit, the L1 distance from the reference and
  the two Jain's indices at every sampled instant, one line per scheduler (time in hours);
* :func:`reference_scatter_figure`: every active user's reference dominant share against its
  online one at one instant (:func:`chosen_instant`: the sampled instant with the most active
  users), with the diagonal ``y = x`` on which the online allocation equals the reference;

and writes the report lines (:func:`fairness_lines`): what the panel shows and a table of the
time averages per scheduler. A run without the files gets no panel. :func:`fairness_context`
gives what a run's time averages rest on (the reference's own Jain's index, the worst user's
tasks).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fairsim.scenario.fairness import jain_index
from fairsim.scenario.reporting import markdown
from fairsim.scenario.reporting.plotting import decimate, save_figure

#: The two files of ``collect.fairness`` in a scheduler's run folder.
FAIRNESS_FILE = "fairness.parquet"
FAIRNESS_SUMMARY_FILE = "fairness_summary.parquet"
#: The figures :func:`write_fairness_figures` writes into the run folder.
OVER_TIME_PNG = "fairness_over_time.png"
SCATTER_PNG = "fairness_reference.png"

#: The per-instant measures of ``fairness_summary.parquet`` whose time averages the report's table
#: shows, in its order, with the column heading (unit in brackets) and the number format.
#: ``zero_reference_users`` is shown only when some scheduler has one.
AVERAGE_COLUMNS: dict[str, tuple[str, str]] = {
    "active_users": ("active users", ",.1f"),
    "jain_entitlement": ("Jain's index of entitlement fractions", ".3f"),
    "jain_raw_dominant": ("Jain's index of raw dominant shares", ".3f"),
    "max_deficit": ("max deficit (dominant share)", ".4f"),
    "l1_distance": ("L1 distance (dominant share)", ".4f"),
    "si_violations": ("users below their SI share", ",.2f"),
    "envious_pairs": ("envious pairs", ",.1f"),
    "zero_reference_users": ("users with reference 0", ",.2f"),
}
#: Columns that are shown only when some scheduler's average is positive.
SHOWN_WHEN_POSITIVE = frozenset({"zero_reference_users"})
#: The name a measure had in files written before it got its own: ``jain_raw_dominant`` is
#: DESIGN.md's ``jain_index``, which a folder written before ``jain_raw_dominant`` existed has
#: alone.
FORMER_NAMES: dict[str, str] = {"jain_raw_dominant": "jain_index"}

#: The panels of :func:`fairness_over_time_figure`, top to bottom: column of
#: ``fairness_summary.parquet`` -> (y label with unit, title, y range or None for automatic).
OVER_TIME_PANELS: dict[str, tuple[str, str, tuple[float, float] | None]] = {
    "max_deficit": (
        "max deficit (dominant share)",
        "Largest deficit: a user's reference dominant share minus its online one",
        None,
    ),
    "l1_distance": (
        "L1 distance (dominant share)",
        "L1 distance from the reference: the sum over the active users of |deficit|",
        None,
    ),
    "jain_entitlement": (
        "Jain's index (entitlement)",
        "Jain's index of entitlement fractions: online / reference dominant share",
        (0.0, 1.05),
    ),
    "jain_raw_dominant": (
        "Jain's index (raw)",
        "Jain's index of the raw dominant shares, whatever each user needs",
        (0.0, 1.05),
    ),
}


def fairness_schedulers(out: Path, schedulers: Sequence[str]) -> list[str]:
    """The schedulers of ``schedulers`` whose run folder has both fairness files, in order.

    Parameters
    ----------
    out : Path
        The run folder (``out/<scheduler>/``).
    schedulers : sequence of str

    Returns
    -------
    list of str
        Empty when no scheduler ran with ``collect.fairness``.
    """
    return [
        s
        for s in schedulers
        if (out / s / FAIRNESS_FILE).is_file() and (out / s / FAIRNESS_SUMMARY_FILE).is_file()
    ]


def read_fairness(out: Path, schedulers: Sequence[str]) -> dict[str, pd.DataFrame]:
    """``fairness_summary.parquet`` of every scheduler, sorted by ``time_s``; a file written
    before ``jain_raw_dominant`` existed gets it from ``jain_index`` (:data:`FORMER_NAMES`)."""
    out_frames = {}
    for s in schedulers:
        frame = pd.read_parquet(out / s / FAIRNESS_SUMMARY_FILE)
        for name, former in FORMER_NAMES.items():
            if name not in frame.columns and former in frame.columns:
                frame[name] = frame[former]
        out_frames[s] = frame.sort_values("time_s", kind="stable")
    return out_frames


def fairness_context(results: str | os.PathLike[str], scheduler: str) -> dict[str, float]:
    """What the time averages of a run's fairness over time rest on, from ``fairness.parquet``.

    Parameters
    ----------
    results : path-like
        Results directory with ``<scheduler>/fairness.parquet``.
    scheduler : str
        The run's scheduler (its folder).

    Returns
    -------
    dict
        ``reference_jain``: the mean over the instants of Jain's index of the reference
        allocation's dominant shares (:func:`fairsim.scenario.fairness.jain_index`, unweighted),
        the level an online allocation that equalled the reference would reach, users with few
        tasks present holding less;
        ``worst_running`` and ``worst_waiting``: the median over the instants of the tasks
        running and waiting of the user with the largest deficit.
    """
    f = pd.read_parquet(
        Path(results) / scheduler / "fairness.parquet",
        columns=["time_s", "tasks_running", "tasks_waiting", "reference_dominant_share", "deficit"],
    )
    ref = f.groupby("time_s", sort=True)["reference_dominant_share"].apply(
        lambda v: jain_index(v.to_numpy(dtype=float))
    )
    worst = f.loc[f["deficit"].notna()].sort_values(["time_s", "deficit"], kind="stable")
    worst = worst.groupby("time_s", sort=True).tail(1)
    return {
        "reference_jain": float(ref.mean()),
        "worst_running": float(worst["tasks_running"].median()),
        "worst_waiting": float(worst["tasks_waiting"].median()),
    }


def fairness_over_time_figure(summaries: Mapping[str, pd.DataFrame]) -> Figure:
    """The largest deficit, the L1 distance from the reference and the two Jain's indices at
    every sampled instant, one line per scheduler.

    Parameters
    ----------
    summaries : mapping of str to pandas.DataFrame
        ``{scheduler: fairness_summary.parquet}`` (columns ``time_s`` and those of
        :data:`OVER_TIME_PANELS`; one row per sampled instant; a column a frame lacks draws no
        line). Each line is decimated
        (:func:`~fairsim.scenario.reporting.plotting.decimate`); an instant with no active user
        or no reference (NaN) leaves a gap.

    Returns
    -------
    matplotlib.figure.Figure
        Four panels sharing x (trace time in hours), in the order of :data:`OVER_TIME_PANELS`:
        max deficit (dominant share; a line at 0, where no user is below its reference share),
        L1 distance (dominant share, from 0), Jain's index of the entitlement fractions and
        Jain's index of the raw dominant shares (both from 0 to 1.05).
    """
    fig = Figure(figsize=(9, 11))
    axes = fig.subplots(len(OVER_TIME_PANELS), 1, sharex=True)
    for k, (name, s) in enumerate(summaries.items()):
        t = s["time_s"].to_numpy(dtype=float) / 3600.0
        for ax, col in zip(axes, OVER_TIME_PANELS, strict=True):
            if col not in s.columns:
                continue
            x, y = decimate(t, s[col].to_numpy(dtype=float))
            ax.plot(x, y, label=name, linewidth=0.9, color=f"C{k}", drawstyle="steps-post")
    axes[0].axhline(0.0, color="grey", linewidth=0.8)
    for ax, (label, title, ylim) in zip(axes, OVER_TIME_PANELS.values(), strict=True):
        ax.set_ylabel(label)
        ax.set_title(title, fontsize="medium")
        if ylim is not None:
            ax.set_ylim(*ylim)
        ax.grid(alpha=0.3)
    axes[1].set_ylim(bottom=0.0)
    axes[-1].set_xlabel("trace time (h)")
    axes[0].legend(fontsize=8)
    fig.suptitle("Fairness over time")
    return fig


def chosen_instant(summaries: Mapping[str, pd.DataFrame]) -> float | None:
    """The instant the scatter shows: the sampled instant with the most active users.

    The active users are summed over the schedulers (each scheduler's run has its own set), over
    the instants every scheduler sampled; the earliest such instant on ties.

    Parameters
    ----------
    summaries : mapping of str to pandas.DataFrame
        ``{scheduler: fairness_summary.parquet}``.

    Returns
    -------
    float or None
        ``time_s`` of the instant; None when no instant is common to all or none has an active
        user.
    """
    counts: pd.Series | None = None
    for s in summaries.values():
        c = s.groupby("time_s")["active_users"].sum()
        counts = c if counts is None else counts.add(c, fill_value=None).dropna()
    if counts is None:
        return None
    counts = counts.sort_index()
    counts = counts[counts > 0]
    if counts.empty:
        return None
    return float(counts.index[int(np.argmax(counts.to_numpy()))])


def reference_scatter_figure(
    users: Mapping[str, pd.DataFrame], time_s: float, reference: str | None = None
) -> Figure:
    """Each active user's reference dominant share (x) against its online one (y) at ``time_s``.

    Parameters
    ----------
    users : mapping of str to pandas.DataFrame
        ``{scheduler: the rows of fairness.parquet at time_s}`` (``dominant_share``,
        ``reference_dominant_share``).
    time_s : float
        The instant, seconds of trace time (for the title).
    reference : str, optional
        The reference mechanism's name, for the x label.

    Returns
    -------
    matplotlib.figure.Figure
        One colour per scheduler; the diagonal ``y = x`` (online equals reference): a point
        below it is a user with a deficit. Both axes from 0 to the largest share drawn
        (square).
    """
    fig = Figure(figsize=(5.5, 5.5))
    ax = fig.subplots()
    top = 0.0
    for k, (name, rows) in enumerate(users.items()):
        x = rows["reference_dominant_share"].to_numpy(dtype=float)
        y = rows["dominant_share"].to_numpy(dtype=float)
        drawn = np.concatenate([x, y])
        drawn = drawn[np.isfinite(drawn)]  # a reference the solver could not give is null
        if drawn.size:
            top = max(top, float(drawn.max()))
        ax.scatter(x, y, s=14, alpha=0.7, color=f"C{k}", label=f"{name} ({len(x):,} users)")
    top = 1.05 * top if top > 0 else 1.0
    ax.plot([0, top], [0, top], color="grey", linewidth=0.8, linestyle="--", label="y = x")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_aspect("equal")
    what = f"reference ({reference})" if reference else "reference"
    ax.set_xlabel(f"{what} dominant share")
    ax.set_ylabel("online dominant share")
    ax.set_title(
        f"Per user at t = {time_s / 3600:.3g} h ({time_s:,.0f} s), the instant with the most "
        "active users",
        fontsize="medium",
        wrap=True,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig


def _reference_name(run_summaries: Mapping[str, Mapping[str, Any]]) -> str | None:
    refs = {
        str(f["reference"])
        for s in run_summaries.values()
        if isinstance(f := s.get("fairness"), Mapping) and f.get("reference")
    }
    return refs.pop() if len(refs) == 1 else None


def write_fairness_figures(
    out: Path, schedulers: Sequence[str], run_summaries: Mapping[str, Mapping[str, Any]]
) -> tuple[list[str], float | None]:
    """Write :data:`OVER_TIME_PNG` and (when an instant has active users) :data:`SCATTER_PNG`
    into ``out`` for the schedulers with the fairness files.

    Parameters
    ----------
    out : Path
        The run folder.
    schedulers : sequence of str
        Every scheduler of the run.
    run_summaries : mapping
        ``{scheduler: summary.json}``.

    Returns
    -------
    (list of str, float or None)
        The figure file names written (empty when no scheduler has the files) and the scatter's
        instant.
    """
    names = fairness_schedulers(out, schedulers)
    if not names:
        return [], None
    summaries = read_fairness(out, names)
    save_figure(fairness_over_time_figure(summaries), out / OVER_TIME_PNG)
    written = [OVER_TIME_PNG]
    instant = chosen_instant(summaries)
    if instant is not None:
        users = {}
        for s in names:
            rows = pd.read_parquet(
                out / s / FAIRNESS_FILE,
                columns=["time_s", "user", "dominant_share", "reference_dominant_share"],
                filters=[("time_s", "==", instant)],
            )
            users[s] = rows
        fig = reference_scatter_figure(users, instant, _reference_name(run_summaries))
        save_figure(fig, out / SCATTER_PNG)
        written.append(SCATTER_PNG)
    return written, instant


def _cell(value: Any, fmt: str) -> str:
    if value is None or isinstance(value, bool) or not isinstance(value, int | float):
        return "—"
    if not math.isfinite(float(value)):
        return "—"
    return format(value, fmt)


def averages_table(run_summaries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Markdown table of the time averages under ``fairness`` in each ``summary.json``.

    Parameters
    ----------
    run_summaries : mapping
        ``{scheduler: summary.json}``; schedulers without ``fairness`` are left out. Read:
        ``fairness.reference`` (the mechanism), ``fairness.instants``, ``fairness.interval_s``
        and ``fairness.time_average`` (the mean over the sampled instants of each column of
        ``fairness_summary.parquet``).

    Returns
    -------
    list of str
        The table's lines: scheduler, reference, instants (and their interval), then a column
        per key of :data:`AVERAGE_COLUMNS` that some summary has (``jain_index`` standing for
        ``jain_raw_dominant`` in a summary without it; the columns of
        :data:`SHOWN_WHEN_POSITIVE` only when some summary's average is positive); empty when
        no summary has ``fairness``.
    """
    fair = {
        n: s["fairness"] for n, s in run_summaries.items() if isinstance(s.get("fairness"), Mapping)
    }
    if not fair:
        return []
    averages = {n: dict(f.get("time_average") or {}) for n, f in fair.items()}
    for a in averages.values():
        for name, former in FORMER_NAMES.items():
            if name not in a and former in a:
                a[name] = a[former]
    cols = [
        c
        for c in AVERAGE_COLUMNS
        if any(c in a for a in averages.values())
        and (
            c not in SHOWN_WHEN_POSITIVE
            or any(isinstance(v := a.get(c), int | float) and v > 0 for a in averages.values())
        )
    ]
    head = ["scheduler", "reference", "instants", *(AVERAGE_COLUMNS[c][0] for c in cols)]
    rows = []
    for n, f in fair.items():
        instants = _cell(f.get("instants"), ",d")
        interval = f.get("interval_s")
        if instants != "—" and isinstance(interval, int | float):
            instants += f" (every {interval:,g} s)"
        cells = [n, str(f.get("reference") or "—"), instants]
        rows.append(cells + [_cell(averages[n].get(c), AVERAGE_COLUMNS[c][1]) for c in cols])
    return markdown.table(head, rows)[:-1]  # without the empty line after it


def unavailable_lines(run_summaries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A line per scheduler whose reference could not be computed at some instants
    (``fairness.reference_unavailable``), with the reasons; empty when there is none."""
    lines = []
    for n, s in run_summaries.items():
        f = s.get("fairness")
        miss = f.get("reference_unavailable") if isinstance(f, Mapping) else None
        if isinstance(miss, Mapping) and miss.get("instants"):
            why = "; ".join(f"{r} ({k})" for r, k in (miss.get("reasons") or {}).items())
            lines.append(
                f"- {n}: no reference at {miss['instants']:,} instant(s) (their deficit and L1 "
                f"distance are undefined and left out of the averages): {why or 'no reason'}"
            )
    return lines


def fairness_lines(
    out: Path, schedulers: Sequence[str], run_summaries: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """Write the panel's figures and return its report section; empty without the files.

    Parameters
    ----------
    out, schedulers, run_summaries
        As :func:`write_fairness_figures`.

    Returns
    -------
    list of str
        ``## Fairness over time`` (to follow a blank line): which schedulers were measured, the
        table of time averages (:func:`averages_table`), the instant of the scatter and why, and
        the two figures.
    """
    figures, instant = write_fairness_figures(out, schedulers, run_summaries)
    if not figures:
        return []
    names = fairness_schedulers(out, schedulers)
    measured = {n: run_summaries.get(n, {}) for n in names}
    lines = [
        "## Fairness over time",
        "",
        f"Measured for {', '.join(names)} (`collect.fairness`; per instant in "
        f"`<scheduler>/{FAIRNESS_SUMMARY_FILE}`, per instant and active user in "
        f"`<scheduler>/{FAIRNESS_FILE}`). A user's deficit is its dominant share in the "
        "reference allocation (the exact mechanism the scheduler implements, bounded by the "
        "user's tasks present) minus its dominant share online; the L1 distance is the sum of "
        "the active users' |deficit|. Jain's index of entitlement fractions is over each active "
        "user's online dominant share divided by its reference one (1 when every user holds the "
        "same fraction of its entitlement; users with reference 0 are left out and counted); "
        "Jain's index of raw dominant shares is over the dominant shares themselves (1 only "
        "when they are all equal, so a user who needs little lowers it while treated fairly). "
        "Time averages over the sampled instants (`summary.json`, `fairness.time_average`):",
        "",
        *averages_table(measured),
        "",
        *unavailable_lines(measured),
        *([""] if unavailable_lines(measured) else []),
        f"![fairness over time]({OVER_TIME_PNG})",
        "",
    ]
    if instant is not None:
        lines += [
            f"Reference against online dominant share per user at t = {instant:,.0f} s "
            f"({instant / 3600:.3g} h), the sampled instant with the most active users (summed "
            "over the schedulers; the earliest on ties); a point below the diagonal is a user "
            "with a deficit.",
            "",
            f"![reference against online dominant share]({SCATTER_PNG})",
            "",
        ]
    return lines
