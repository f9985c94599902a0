"""The figures of the DRFH reproduction (Wang, Li, Liang, Sec. VI: Table II, Figs. 4-8), over
seeds, from the numbers of :mod:`fairsim.experiments.drfh.numbers` and
:mod:`fairsim.experiments.drfh.estimates`, with their 95 % intervals as bands or error bars.

:func:`draw` draws every figure whose numbers are present. Figures are built on
:class:`matplotlib.figure.Figure` objects directly (no pyplot global state) and written
atomically.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from fairsim.experiments.claims import Estimate
from fairsim.experiments.drfh import estimates as E
from fairsim.experiments.drfh import numbers as N
from fairsim.experiments.drfh import paper
from fairsim.experiments.kit import Template
from fairsim.scenario.reporting.fairness_panel import read_fairness
from fairsim.scenario.reporting.plotting import save_figure, scheduler_label, seed_mean_lines
from fairsim.scenario.reporting.shares import user_shares_figure

#: The figures' texts: the Markdown blocks of ``figures.md`` beside this module.
TEXT = Template(Path(__file__).with_name("figures.md"))


def table_ii_figure(
    models: dict[str, pd.DataFrame], *, seeds: int, path: str | os.PathLike[str]
) -> None:
    """Draw Table II: mean CPU and memory utilisation of Slots by slot count, ours with 95 %
    intervals over seeds (error bars) beside the paper's.

    Parameters
    ----------
    models : dict
        Line label → one row per slot count: ``slots``, ``cpu``, ``mem``
        (:class:`fairsim.experiments.claims.Estimate` of the mean utilisation, fractions).
    seeds : int
        The number of seeds.
    path : path-like
        Where to save the PNG.
    """
    ref = sorted(paper.TABLE_II.items())

    def panel(ax: Any, i: int, res: str, name: str) -> None:
        x_ref, y_ref = [s for s, _ in ref], [100.0 * v[i] for _, v in ref]
        ax.plot(x_ref, y_ref, "k--x", label="paper (Table II)", lw=1.0)
        for k, (label, rows) in enumerate(models.items()):
            h, err = _errs(rows[res])
            x = rows["slots"].to_numpy(float) + (k - 0.5) * 0.2
            ax.errorbar(x, h, yerr=err, fmt="o-", ms=4, capsize=3, lw=1.0, label=label)
        ax.set_xlabel("Slots per maximum server, S")
        ax.set_ylabel(f"Mean {name if res == 'cpu' else 'memory'} utilization (% of the pool)")
        ax.set_xticks(sorted(paper.TABLE_II))
        ax.set_title(f"{name} utilization of Slots")

    ci = f" (mean over {seeds} seeds, 95 % CI)" if seeds > 1 else ""
    _cpu_mem(panel, f"Table II (DRFH paper): Slots utilisation by slot size{ci}", path)


def _cpu_mem(
    panel: Callable[[Any, int, str, str], None], title: str, path: str | os.PathLike[str]
) -> None:
    """Two panels side by side, CPU then memory (``panel(ax, index, resource, name)`` draws
    each), each with a grid and a legend, under ``title``; saved to ``path``."""
    fig = Figure(figsize=(10, 4.2))
    axes = fig.subplots(1, 2, sharex=True)
    for i, (res, ax, name) in enumerate(zip(("cpu", "mem"), axes, ("CPU", "Memory"), strict=True)):
        panel(ax, i, res, name)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
    fig.suptitle(title)
    save_figure(fig, path)


# --------------------------------------------------------------------------- Fig. 5


def _band(series: dict[str, list[pd.DataFrame]]) -> str:
    """A title's note on :func:`~fairsim.scenario.reporting.plotting.seed_mean_lines`' band (none
    for one seed)."""
    n_seeds = max((len(v) for v in series.values()), default=1)
    return f": mean over {n_seeds} seeds, 95 % band" if n_seeds > 1 else ""


def fig5_figure(series: dict[str, list[pd.DataFrame]], path: str | os.PathLike[str]) -> None:
    """Draw Fig. 5: CPU and memory utilisation over time, the mean over seeds with its 95 % band.

    Parameters
    ----------
    series : dict
        Line label → one ``utilization.parquet`` frame (``time_s, cpu, mem``) per seed; the
        seeds share the time grid (the same window and interval), and only the common times
        are drawn.
    path : path-like
        Where to save the PNG.
    """

    def panel(ax: Any, i: int, res: str, name: str) -> None:
        seed_mean_lines(ax, series, res, 100.0, thin=True)
        ax.set_xlabel("Time (h)")
        ax.set_ylabel(f"{name} utilization (% of the pool)")
        ax.set_ylim(0, 100)
        ax.set_title(f"{name} utilization")

    title = "Fig. 5 (DRFH paper): time series of CPU and memory utilization"
    _cpu_mem(panel, title + _band(series), path)


def _err(est: Estimate, scale: float = 100.0) -> tuple[float, float, float]:
    """(value, lower error, upper error) for matplotlib's asymmetric error bars, scaled."""
    v = est.value * scale
    if est.low is None or est.high is None or not np.isfinite(v):
        return v, 0.0, 0.0
    return v, max(v - est.low * scale, 0.0), max(est.high * scale - v, 0.0)


def _errs(ests: Iterable[Estimate]) -> tuple[np.ndarray, np.ndarray]:
    """The values (n,) and the lower and upper errors (2, n) of estimates, in %."""
    vals = np.array([_err(e) for e in ests], dtype=float).reshape(-1, 3)
    return vals[:, 0], vals[:, 1:].T


def _bars(
    ax: Any, x: np.ndarray, ests: Iterable[Estimate], width: float, **style: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bars of the finite estimates at ``x``, in %, their 95 % intervals as error bars; the
    values, the errors (:func:`_errs`) and which are finite."""
    h, err = _errs(ests)
    ok = np.isfinite(h)
    ax.bar(x[ok], h[ok], width, yerr=err[:, ok], **style)
    return h, err, ok


def fig6_figure(
    pairs: pd.DataFrame,
    bins: pd.DataFrame,
    *,
    a: str,
    b: str,
    seeds: int,
    path: str | os.PathLike[str],
) -> None:
    """Draw Fig. 6: (a) the JCT CDF of both schedulers over the pooled (job, seed) pairs;
    (b) both reductions per job-size bin with their 95 % bootstrap intervals as error bars.

    Parameters
    ----------
    pairs : pandas.DataFrame
        ``jct_a_s``, ``jct_b_s`` of every (job, seed) pair.
    bins : pandas.DataFrame
        From :func:`fig6_bin_estimates` (the row ``all`` is not drawn).
    a, b : str
        The schedulers (``b``: the Slots baseline, or a description of the per-seed ones).
    seeds : int
        The number of seeds pooled.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(11, 4.4))
    ax_cdf, ax_bar = fig.subplots(1, 2)
    for name, col in ((a, "jct_a_s"), (b, "jct_b_s")):
        x = np.sort(pairs[col].to_numpy(dtype=float))
        if len(x):
            x = np.maximum(x, 1e-3)  # log axis: keep zero-length jobs visible
            y = np.arange(1, len(x) + 1) / len(x)
            ax_cdf.step(x, 100.0 * y, where="post", label=scheduler_label(name))
    ax_cdf.set(
        xscale="log", xlabel="Job completion time (s)", ylabel="Jobs (%, cumulative)", ylim=(0, 100)
    )
    what = f"{len(pairs)} (job, seed) pairs, {seeds} seeds" if seeds > 1 else f"{len(pairs)} jobs"
    ax_cdf.set_title(f"(a) CDF of job completion times ({what})", fontsize="medium")
    ax_cdf.grid(alpha=0.3)
    ax_cdf.legend(loc="lower right", fontsize="small")

    shown = bins[bins["bin"] != "all"].reset_index(drop=True)
    pos = np.arange(len(shown))
    width = 0.38
    tops, lows = [0.0], [0.0]
    for k, (measure, colour) in enumerate(
        zip(N.FIG6_MEASURES, ("tab:blue", "tab:orange"), strict=True)
    ):
        label = TEXT.text(f"fig6.{measure}")
        x = pos + (k - 0.5) * width
        h, err, ok = _bars(ax_bar, x, shown[measure], width, capsize=3, color=colour, label=label)
        if ok.any():
            tops.append(float(np.max(h[ok] + err[1, ok])))
            lows.append(float(np.min(h[ok] - err[0, ok])))
    lo, hi = min(lows), max(10.0, max(tops))
    ax_bar.set_ylim(lo - 0.05 * (hi - lo), hi + 0.35 * (hi - lo))  # room for the legend
    ax_bar.axhline(0, color="black", lw=0.8)
    ticks = [f"{b}\n({n:,} jobs)" for b, n in zip(shown["bin"], shown["jobs"], strict=True)]
    ax_bar.set_xticks(pos, ticks, fontsize="small")
    ax_bar.set(xlabel="Job size (tasks)", ylabel="JCT reduction, BF-DRFH vs Slots (%)")
    ax_bar.set_title(
        "(b) JCT reduction by job size" + (" (95 % bootstrap CI over jobs)" if seeds else ""),
        fontsize="medium",
    )
    ax_bar.legend(loc="upper left", fontsize="x-small")
    fig.suptitle("Fig. 6 (DRFH paper): DRFH improvements on job completion times over Slots")
    save_figure(fig, path)


def _bubble_scatter(ax: Any, x: np.ndarray, y: np.ndarray, size: np.ndarray, *, label: str) -> None:
    ax.scatter(x, y, s=size, alpha=0.7, edgecolors="tab:blue", facecolors="none", label=label)
    ax.plot([0, 1], [0, 1], color="grey", ls="--", lw=0.8, label="y = x")
    ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02))
    ax.set_aspect("equal")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small")


def _fraction_bars(
    ax: Any,
    fractions: dict[str, Estimate],
    labels: dict[str, str],
    refs: dict[str, tuple[float, str]],
    *,
    ylabel: str,
) -> None:
    """Bars of fractions (in %) with their 95 % intervals, and the paper's values as marks."""
    keys = [k for k in labels if k in fractions]
    pos = np.arange(len(keys))
    _bars(ax, pos, [fractions[k] for k in keys], 0.6, capsize=4, color="tab:blue", label="ours")
    for i, k in enumerate(keys):
        if k in refs:
            value, text = refs[k]
            ax.hlines(100.0 * value, i - 0.4, i + 0.4, colors="black", lw=1.5)
            ax.annotate(
                text,
                (i, 100.0 * value),
                textcoords="offset points",
                xytext=(0, 4),
                ha="center",
                fontsize="x-small",
            )
    ax.set_xticks(pos, [labels[k] for k in keys], fontsize="x-small")
    ax.set(ylabel=ylabel, ylim=(0, 100))
    ax.grid(alpha=0.3, axis="y")


#: Figs. 7 and 8 (:func:`users_figure`): the users' columns on the x and y axes, the bubble
#: area from their tasks, the paper's quantities and the paper's values marked; the texts are
#: the blocks ``<key>.<text>`` of ``figures.md`` (:data:`TEXT`): a quantity's label
#: ``<key>.label.<quantity>``, a mark's ``<key>.ref.<quantity>``.
USERS_FIGURES: dict[str, dict[str, Any]] = {
    "fig7": {
        "xy": ("ratio_b", "ratio_a"),
        "area": lambda tasks: 40.0 * np.log10(1.0 + tasks),
        "fractions": N.FIG7_FRACTIONS,
        "refs": {
            "full_under_a_not_b": paper.FIG7_FULL_UNDER_BF_NOT_SLOTS,
            "higher_under_a": paper.ALMOST_ALL,
        },
    },
    "fig8": {
        "xy": ("ratio_dc", "ratio_sc"),
        "area": lambda tasks: (6.0 * np.log10(1.0 + tasks)) ** 2,
        "fractions": N.FIG8_FRACTIONS,
        "refs": {
            "worse_off_fraction": paper.FIG8_WORSE_OFF_FRACTION,
            "mean_decrease": paper.ONLY_SLIGHTLY,
        },
    },
}


#: The texts of Figs. 7 and 8 (blocks ``fig7.<text>``, ``fig8.<text>`` of :data:`TEXT`), with the
#: fields ``{n}`` (users), ``{a}``, ``{b}`` (the schedulers' labels), ``{mean}`` and ``{ci}``
#: (the seeds', the latter the block ``<key>.ci``).
_USERS_TEXTS = ("scatter", "x", "y", "left", "bars", "right", "title")


def users_figure(
    key: str,
    users: pd.DataFrame,
    fractions: dict[str, Estimate],
    *,
    a: str,
    b: str,
    seeds: int,
    path: str | os.PathLike[str],
) -> None:
    """Draw Fig. 7 or 8 (``key``, :data:`USERS_FIGURES`; its texts: :data:`_USERS_TEXTS`):
    per-user completion ratios (a bubble scatter, left) beside the quantities of the paper's text
    with their 95 % intervals over seeds (bars, right).

    Parameters
    ----------
    key : {"fig7", "fig8"}
    users : pandas.DataFrame
        One row per user: ``tasks`` (tasks submitted) and the two completion ratios, averaged
        over seeds: ``ratio_a``, ``ratio_b`` (Fig. 7: under ``a`` and ``b``) or ``ratio_dc``,
        ``ratio_sc`` (Fig. 8: alone on the dedicated cloud and in the shared cloud).
    fractions : dict
        :data:`fairsim.experiments.drfh.numbers.FIG7_FRACTIONS` (or ``FIG8_FRACTIONS``) keys →
        estimates (fractions of users; Fig. 8's mean decrease in completion-ratio points).
    a, b : str
        The scheduler on the y axis (Fig. 8: the shared cloud's) and a label for the one on the x
        axis (Fig. 8: unused).
    seeds : int
        The number of seeds averaged.
    path : path-like
        Where to save the PNG.
    """
    spec = USERS_FIGURES[key]
    fields = {"n": len(users), "a": scheduler_label(a), "b": b}
    fields |= {"mean": f", mean over {seeds} seeds" if seeds > 1 else ""}
    fields |= {"ci": TEXT.text(f"{key}.ci") if seeds > 1 else ""}
    text = {k: TEXT.text(f"{key}.{k}", **fields) for k in _USERS_TEXTS}
    x, y = (users[c].to_numpy(float) for c in spec["xy"])
    size = spec["area"](users["tasks"].to_numpy(float))
    fig = Figure(figsize=(11, 5.2))
    ax, ax_bar = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
    _bubble_scatter(ax, x, y, size, label=text["scatter"])
    ax.set(xlabel=text["x"], ylabel=text["y"])
    ax.set_title(text["left"], fontsize="medium")
    labels = {k: TEXT.text(f"{key}.label.{k}") for k in spec["fractions"]}
    refs = {k: (v, TEXT.text(f"{key}.ref.{k}")) for k, v in spec["refs"].items()}
    _fraction_bars(ax_bar, fractions, labels, refs, ylabel=text["bars"])
    ax_bar.set_title(text["right"], fontsize="medium")
    fig.suptitle(text["title"])
    save_figure(fig, path)


def fig4_figure(
    shares: pd.DataFrame,
    phases: dict[str, dict[str, dict[str, Estimate]]],
    *,
    scheduler: str,
    seeds: int,
    path: str | os.PathLike[str],
) -> None:
    """Draw Fig. 4: one run's shares over time, with every phase's mean share per user over the
    seeds' pools (95 % interval as error bars) and the paper's values (black crosses).

    Parameters
    ----------
    shares : pandas.DataFrame
        ``user_shares.parquet`` of the run drawn (seed 1's pool).
    phases : dict
        ``{phase: {user: {"cpu"|"mem"|"dominant": Estimate}}}``.
    scheduler : str
        The scheduler of the run.
    seeds : int
        The number of pools behind ``phases``.
    path : path-like
        Where to save the PNG.
    """
    pools = f"; bars: phase means over {seeds} pools, 95 % CI" if seeds > 1 else ""
    fig = user_shares_figure(
        shares,
        scheduler=scheduler,
        marks_s=(paper.FIG4_USER2_JOIN_S, paper.FIG4_USER3_JOIN_S, paper.FIG4_USER1_DEPART_S),
        title=TEXT.text("fig4.title", scheduler=scheduler_label(scheduler), pools=pools),
    )
    users = sorted({u for per_user in phases.values() for u in per_user})
    for ax, res in zip(fig.axes, ("cpu", "mem", "dominant"), strict=False):
        colours = {line.get_label(): line.get_color() for line in ax.get_lines()}
        for phase, (t0, t1) in paper.FIG4_PHASES.items():
            for k, user in enumerate(users):
                x = (t0 + t1) / 2 + (k - 1) * 0.04 * (t1 - t0)
                est = phases.get(phase, {}).get(user, {}).get(res)
                if est is not None and est.finite:
                    v, lo, hi = _err(est)
                    style: dict[str, Any] = {"fmt": "o", "ms": 3, "capsize": 3}
                    style["color"] = colours.get(user, "black")
                    ax.errorbar([x], [v], yerr=[[lo], [hi]], **style)
                ref = paper.FIG4_SHARES.get(phase, {}).get(user, {}).get(res)
                if ref is not None:
                    ax.plot([x], [100.0 * ref], marker="x", color="black", ms=7, ls="none")
        ax.set_ylabel("Share of the pool's capacity (%)")
    save_figure(fig, path)


def fig4_deficit_figure(
    summary: pd.DataFrame,
    phases: dict[str, dict[str, Any]],
    *,
    bound: float,
    path: str | os.PathLike[str],
) -> None:
    """Draw the deficit of Fig. 4's run over time: the largest deficit to the DRFH allocation and
    Jain's index of the active users' dominant shares, with the phases and the claim's bound.

    Parameters
    ----------
    summary : pandas.DataFrame
        ``fairness_summary.parquet`` of the run drawn (seed 1's pool).
    phases : dict
        :func:`fig4_deficit_phases` of that run (the boundaries and the settled parts).
    bound : float
        The claim's bound on the largest deficit (dominant share), drawn as a dashed line.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(9, 5.5))
    top, bottom = fig.subplots(2, 1, sharex=True)
    t = summary["time_s"].to_numpy(dtype=float)
    for ax, col, scale, label in (
        (top, "max_deficit", 100.0, "largest deficit"),
        (bottom, "jain_index", 1.0, "Jain's index"),
    ):
        y = scale * summary[col].to_numpy(dtype=float)
        ax.plot(t, y, drawstyle="steps-post", lw=1.0, color="C0", label=label)
    top.axhline(100.0 * bound, color="C3", ls="--", lw=0.9, label=f"bound {100 * bound:.2f} %")
    for k, (name, p) in enumerate(phases.items()):
        for ax in (top, bottom):
            if k:
                ax.axvline(p["start_s"], color="grey", ls=":", lw=0.8)
            ax.axvspan(p["start_s"], p["start_s"] + p["settle_s"], color="grey", alpha=0.12, lw=0)
        top.text(
            (p["start_s"] + p["end_s"]) / 2,
            1.02 + 0.08 * (k % 2),  # alternate heights: short phases' names do not overlap
            name,
            transform=top.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=7,
        )
    _deficit_jain_axes(top, bottom, "time (s)", fontsize=8, loc="upper right")
    fig.suptitle(TEXT.text("fig4_deficit.title"), fontsize="medium", y=1.04)
    save_figure(fig, path)


def _deficit_jain_axes(top: Any, bottom: Any, xlabel: str, **legend: Any) -> None:
    """Label the panels of the largest deficit (``top``, in %) and Jain's index, with grids."""
    top.set_ylabel("largest deficit (dominant share, %)")
    top.set_ylim(bottom=min(0.0, top.get_ylim()[0]))
    top.legend(**legend)
    bottom.set(ylabel="Jain's index", ylim=(0.0, 1.05), xlabel=xlabel)
    for ax in (top, bottom):
        ax.grid(alpha=0.3)


def fairness_figure(series: dict[str, list[pd.DataFrame]], path: str | os.PathLike[str]) -> None:
    """Draw the fairness over time of the Google runs: the largest deficit to the DRFH
    allocation and Jain's index, the mean over seeds with its 95 % band.

    Parameters
    ----------
    series : dict
        Line label → one ``fairness_summary.parquet`` frame per seed; only the instants every
        seed sampled are drawn.
    path : path-like
        Where to save the PNG.
    """
    fig = Figure(figsize=(10, 6))
    axes = fig.subplots(2, 1, sharex=True)
    for col, ax, scale in (("max_deficit", axes[0], 100.0), ("jain_index", axes[1], 1.0)):
        seed_mean_lines(ax, series, col, scale)
    _deficit_jain_axes(axes[0], axes[1], "Time (h)", fontsize="small")
    axes[0].set_title(TEXT.text("fairness.deficit"), fontsize="medium")
    axes[1].set_title("Jain's index of the active users' dominant shares", fontsize="medium")
    fig.suptitle(f"Fairness over time on the Google trace{_band(series)}")
    save_figure(fig, path)


def production_figure(results: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
    """Draw the production context: CPU and memory utilisation by requests over time of the
    trace's own schedule under both readings of its requests
    (:data:`fairsim.experiments.drfh.numbers.PRODUCTION_READINGS`) and of the simulated
    schedulers, and the over-committed servers of the trace's schedule under each reading.

    Parameters
    ----------
    results : path-like
        Results directory of the production-context run
        (:func:`fairsim.experiments.drfh.numbers.production_numbers`).
    path : path-like
        Where to save the PNG.
    """
    root = Path(results)
    fig = Figure(figsize=(10, 8.5))
    axes = fig.subplots(3, 1, sharex=True)
    first, schedule = N.PRODUCTION_READINGS["first"], N.PRODUCTION_READINGS["schedule"]
    own_label = {first: TEXT.text("production.first"), schedule: TEXT.text("production.schedule")}
    for s in (*N.PRODUCTION_SCHEDULERS, schedule):
        util = pd.read_parquet(root / s / "utilization.parquet")
        t = util["time_s"].to_numpy(float) / 3600.0
        own = s in own_label
        style: dict[str, Any] = {"lw": 0.9}
        if own:
            style = {"lw": 1.4, "color": "black", "ls": "-" if s == first else ":"}
        label = own_label[s] if own else scheduler_label(s)
        for ax, r in zip(axes[:2], ("cpu", "mem"), strict=True):
            ax.plot(t, 100.0 * util[r].to_numpy(float), label=label, **style)
        if own and "overcommitted_cpu" in util:
            how = "first request" if s == first else "SCHEDULE request"
            for r, name, color in (("cpu", "CPU", "tab:red"), ("mem", "memory", "tab:blue")):
                y = util[f"overcommitted_{r}"].to_numpy(float)
                axes[2].plot(t, y, lw=1.0, color=color, ls=style["ls"], label=f"{name}, {how}")
    for ax, name in zip(axes[:2], ("CPU", "Memory"), strict=True):
        ax.axhline(100.0, color="black", lw=0.6, ls="--")
        ax.set_ylabel(f"{name} requested (% of pool)")
        ax.set_ylim(bottom=0.0)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize="small", loc="lower right")
    axes[0].set_title("Utilisation by requests (above 100 %: over-committed)", fontsize="medium")
    axes[2].set_ylabel("over-committed servers")
    axes[2].set_title(TEXT.text("production.overcommitted"), fontsize="medium")
    axes[2].legend(fontsize="small")
    axes[2].grid(alpha=0.3)
    axes[2].set_xlabel("Time (h)")
    fig.suptitle("Production context: the trace's own schedule beside DRFH and Slots")
    save_figure(fig, path)


def draw(root: Path, numbers: dict[str, Any]) -> None:
    """Draw every figure whose numbers are present into ``root`` and record each file's name in
    ``numbers["figures"]`` (key: the numbers' key, e.g. ``"fig5"``).

    Parameters
    ----------
    root : pathlib.Path
        The reproduction's folder.
    numbers : dict
        :func:`fairsim.experiments.drfh.estimates.collect_numbers`'s result.
    """
    per_seed = numbers["per_seed"]
    n = len(per_seed)
    first = Path(next(iter(per_seed.values()))["results"])
    slots = E.slots_label(numbers) if "best_slots" in numbers else ""
    drawn = numbers["figures"]

    def path(key: str, name: str = "") -> Path:
        """Where the figure of ``numbers[key]`` goes (``<key>.png`` unless ``name``), recorded."""
        drawn[key] = name or f"{key}.png"
        return root / drawn[key]

    if "table_ii" in numbers:
        models = {"multi-slot (default)": pd.DataFrame(numbers["table_ii"])}
        if "table_ii_single" in numbers:
            models["one slot per task"] = pd.DataFrame(numbers["table_ii_single"])
        table_ii_figure(models, seeds=n, path=path("table_ii", "table2.png"))
    if "fig4" in numbers:
        shares = pd.read_parquet(first / "fig4" / "bf-drfh" / "user_shares.parquet")
        fig4_figure(shares, numbers["fig4"], scheduler="bf-drfh", seeds=n, path=path("fig4"))
    if "fig4_deficit" in numbers:
        fig4_deficit_figure(
            read_fairness(first / "fig4", ["bf-drfh"])["bf-drfh"],
            next(iter(per_seed.values()))["fig4_deficit"],
            bound=paper.FIG4_DEFICIT_BOUND,
            path=path("fig4_deficit"),
        )
    if "fairness" in numbers:
        fairness_figure(
            {
                scheduler_label(s): [v["fairness"]["series"][s] for v in per_seed.values()]
                for s in N.FAIRNESS_SCHEDULERS
            },
            path("fairness"),
        )
    if "fig5" in numbers:
        series = {
            label: [
                N.read_utilization(v["results"], v["best_slots"] if role == "slots" else role)
                for v in per_seed.values()
            ]
            for role, label in numbers["fig5"]["roles"].items()
        }
        fig5_figure(series, path("fig5"))
    if "fig6" in numbers:
        f6 = numbers["fig6"]
        fig6_figure(f6["pairs"], f6["bins"], a="bf-drfh", b=slots, seeds=n, path=path("fig6"))
    for key in USERS_FIGURES:
        if key in numbers:
            cols = [*USERS_FIGURES[key]["xy"], "tasks"]
            pooled = pd.concat([v[key]["per_user"] for v in per_seed.values()], ignore_index=True)
            users = pooled.groupby("user", sort=True)[cols].mean().reset_index()
            users_figure(key, users, numbers[key], a="bf-drfh", b=slots, seeds=n, path=path(key))
    if "production" in numbers:
        production_figure(root / N.PRODUCTION_DIR, path("production"))
