"""``fairsim compare``: runs and schedulers side by side on the same job set.

:func:`compare` takes ``fairsim run`` folders (every scheduler in each) or scheduler folders
inside one, and measures every (run, scheduler) row on the *common job set*: the jobs completed
under all of them, matched by ``job_id`` (a JCT compared over different job sets mixes the
schedulers' effect with the jobs each one finished). The runs must replay the same trace window
(the ``trace`` of their ``config.yaml`` and the window of their summaries agree), otherwise job
ids would not match.

When every run has the same config seed (the same pool and workload), the rows are *paired*: the
difference in mean JCT against the first row comes with a 95 % t-interval over the per-job
differences on the common jobs (:func:`scipy.stats.t.interval` on their mean and standard
error). With different seeds no interval is given (the report says so).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from fairsim.errors import ConfigError
from fairsim.scenario.api import run_kind, run_schedulers
from fairsim.simulator.results import job_run_times, queueing_delays, slowdown

#: Trace keys that do not change which tasks a run replays.
_TRACE_IGNORED = ("cache_dir",)

#: Confidence level of the paired interval.
LEVEL = 0.95


@dataclass(frozen=True)
class RunRow:
    """One compared (run, scheduler): its folder, its run's folder, config and row label."""

    label: str
    folder: Path
    run_dir: Path
    config: dict[str, Any]
    summary: dict[str, Any]


@dataclass
class Comparison:
    """What :func:`compare` measured.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (run, scheduler), indexed by label (``scheduler`` for one run,
        ``run/scheduler`` for several): ``run, scheduler, cpu_util, mem_util`` (mean
        utilisation, fractions; one ``<resource>_util`` per resource), ``completion_ratio``,
        ``jobs_common``, ``jct_mean_s, jct_p50_s, jct_p95_s, jct_p99_s`` (on the common jobs),
        ``delay_mean_s, delay_p95_s`` (queueing delay of the common jobs' tasks),
        ``slowdown_mean`` (:func:`fairsim.simulator.results.slowdown`, common jobs),
        ``user_jct_max_over_min, user_jct_cv`` (per-user mean JCT over the common jobs),
        ``djct_mean_s, djct_low_s, djct_high_s`` (mean JCT minus the first row's, paired 95 %
        t-interval; NaN when not paired).
    jct : dict of str to pandas.Series
        Every row's JCT (s) of the common jobs, indexed by ``job_id``.
    common_jobs : int
        Jobs completed under every row.
    excluded_jobs : dict of str to int
        Per row, the jobs it completed that are not in the common set.
    jobs : int
        Jobs of the trace window (the first row's ``jobs``).
    paired : bool
        Every run has the same config seed and trace.
    seeds : list of int
    folder : Path or None
        Where the report was written.
    """

    table: pd.DataFrame
    jct: dict[str, pd.Series]
    common_jobs: int
    excluded_jobs: dict[str, int]
    jobs: int
    paired: bool
    seeds: list[int]
    resources: list[str]
    folder: Path | None = None
    rows: list[RunRow] = field(default_factory=list, repr=False)

    def headline(self) -> str:
        """The headline table as plain text (what ``fairsim compare`` prints)."""
        t = self.table
        cols = {
            **{f"{r}_util": f"{r} %" for r in self.resources},
            "completion_ratio": "compl.",
            "jct_mean_s": "JCT mean",
            "jct_p50_s": "p50",
            "jct_p95_s": "p95",
            "jct_p99_s": "p99",
            "delay_mean_s": "delay",
            "delay_p95_s": "dly p95",
            "slowdown_mean": "slowdown",
            "user_jct_max_over_min": "usr max/min",
            "djct_mean_s": "dJCT",
        }
        shown = pd.DataFrame(index=t.index)
        for c, name in cols.items():
            v = t[c]
            if c.endswith("_util"):
                shown[name] = (100 * v).map("{:.1f}".format)
            elif c == "completion_ratio":
                shown[name] = v.map("{:.4f}".format)
            elif c in ("slowdown_mean", "user_jct_max_over_min"):
                shown[name] = v.map(lambda x: "-" if pd.isna(x) else f"{x:.2f}")
            else:  # + 0.0: a difference that rounds to zero prints as 0, not -0
                shown[name] = v.map(lambda x: "-" if pd.isna(x) else f"{round(x) + 0.0:,.0f}")
        shown.loc[shown.index[0], "dJCT"] = "ref"  # the reference row
        if self.paired:
            shown["95% CI of dJCT"] = [
                "-"
                if pd.isna(lo) or i == 0
                else f"[{round(lo) + 0.0:,.0f}, {round(hi) + 0.0:,.0f}]"
                for i, (lo, hi) in enumerate(zip(t["djct_low_s"], t["djct_high_s"], strict=True))
            ]
        shown.index.name = None
        head = (
            f"common job set: {self.common_jobs:,} jobs completed under every row "
            f"(of {self.jobs:,} jobs; excluded per row: "
            + ", ".join(f"{k} {v:,}" for k, v in self.excluded_jobs.items())
            + "); JCT, delay (queueing, s) and slowdown on that set; dJCT = mean JCT - "
            + f"{t.index[0]}'s"
            + (
                f", paired 95 % t-interval over per-job differences (seed {self.seeds[0]})"
                if self.paired
                else " (seeds differ: not paired, no interval)"
            )
        )
        return head + "\n" + shown.to_string() + "\n"


def _rows(dirs: Sequence[str | os.PathLike[str]]) -> list[RunRow]:
    found: list[tuple[Path, Path, str]] = []  # (scheduler folder, run folder, scheduler)
    for d in dirs:
        folder = Path(d)
        if run_kind(folder) == "scheduler":
            run_dir = folder.parent
            if not (run_dir / "config.yaml").is_file():
                raise ConfigError(f"{folder}: a scheduler folder outside a run (no config.yaml)")
            found.append((folder, run_dir, folder.name))
        else:
            found += [(folder / n, folder, n) for n in run_schedulers(folder)]
    if not found:
        raise ConfigError("compare: no scheduler results in " + ", ".join(map(str, dirs)))
    runs = list(dict.fromkeys(r for _, r, _ in found))
    names = {r: r.resolve().name for r in runs}
    if len(set(names.values())) < len(runs):  # same folder names: number them
        names = {r: f"{i + 1}:{r.name}" for i, r in enumerate(runs)}
    rows = []
    for folder, run_dir, sched in found:
        label = sched if len(runs) == 1 else f"{names[run_dir]}/{sched}"
        cfg = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
        summary = _read_json(folder / "summary.json")
        rows.append(RunRow(label, folder, run_dir, cfg, summary))
    labels = [r.label for r in rows]
    if len(set(labels)) < len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        raise ConfigError(f"compare: {dup[0]} is given twice")
    return rows


def _read_json(path: Path) -> dict[str, Any]:
    import json

    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _check_same_trace(rows: list[RunRow]) -> None:
    first = rows[0]
    t0 = {k: v for k, v in (first.config.get("trace") or {}).items() if k not in _TRACE_IGNORED}
    for row in rows[1:]:
        t = {k: v for k, v in (row.config.get("trace") or {}).items() if k not in _TRACE_IGNORED}
        for key in sorted(set(t0) | set(t)):
            if t0.get(key) != t.get(key):
                raise ConfigError(
                    f"compare: {row.label} replays another trace: trace.{key} is "
                    f"{t.get(key)!r}, {first.label} has {t0.get(key)!r} (job ids would not match)"
                )
        for key in ("start_s", "horizon_s"):
            a, b = first.summary.get(key), row.summary.get(key)
            if a != b:
                raise ConfigError(
                    f"compare: {row.label} simulates another window: {key} is {b!r}, "
                    f"{first.label} has {a!r} (job ids would not match)"
                )


def _stats(x: np.ndarray) -> tuple[float, ...]:
    if not len(x):
        return (math.nan,) * 4
    p = np.percentile(np.sort(x), [50, 95, 99])
    return (float(np.sort(x).mean()), *map(float, p))


def compare(
    dirs: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None = None,
    *,
    overwrite: bool = False,
) -> Comparison:
    """Compare runs side by side on the jobs completed under all of them.

    Parameters
    ----------
    dirs : sequence of path-like
        ``fairsim run`` folders (every scheduler of each) or scheduler folders inside one.
    out : path-like, optional
        Also write ``report.md``, ``jct_cdf.png``, ``jct_mean.png`` and ``utilization.png`` into
        this folder, atomically (:func:`fairsim.atomic.atomic_dir`).
    overwrite : bool
        Replace an existing non-empty ``out``.

    Returns
    -------
    Comparison

    Raises
    ------
    fairsim.errors.ConfigError
        A folder that is not a run nor a scheduler folder in one, a row given twice, or runs of
        different traces or windows (naming the field that differs).
    fairsim.errors.OutputError
        If ``out`` is refused.

    Examples
    --------
    >>> import fairsim, tempfile, pathlib
    >>> cfg = {"name": "demo", "trace": {"format": "synthetic", "n_tasks": 400,
    ...                                   "duration_s": 3600},
    ...        "cluster": {"servers": 20}, "schedulers": ["ff-drfh", "bf-drfh"]}
    >>> run = pathlib.Path(tempfile.mkdtemp()) / "demo"
    >>> _ = fairsim.simulate(cfg, out=run)
    >>> c = fairsim.compare([run])
    >>> list(c.table.index), c.paired
    (['ff-drfh', 'bf-drfh'], True)
    >>> float(c.table.loc["ff-drfh", "djct_mean_s"])
    0.0
    """
    rows = _rows(dirs)
    _check_same_trace(rows)
    seeds = [int(r.config.get("seed", 0)) for r in rows]
    paired = len(set(seeds)) == 1
    resources = list(rows[0].summary.get("mean_utilization") or {})
    jobs = {r.label: pd.read_parquet(r.folder / "jobs.parquet") for r in rows}
    done = {
        k: j.dropna(subset=["completion_time_s"]).set_index("job_id")["completion_time_s"]
        for k, j in jobs.items()
    }
    ids: pd.Index | None = None
    for s in done.values():
        ids = s.index if ids is None else ids.intersection(s.index)
    assert ids is not None
    ids = ids.sort_values()
    first = rows[0].label
    records = []
    jct: dict[str, pd.Series] = {}
    for r in rows:
        tasks = pd.read_parquet(
            r.folder / "tasks.parquet", columns=["job_id", "submit_s", "start_s", "finish_s"]
        )
        tasks = tasks[tasks["job_id"].isin(ids)]
        v = done[r.label].loc[ids]
        jct[r.label] = v
        j = jobs[r.label].set_index("job_id").loc[ids].reset_index()
        sd = slowdown(j, job_run_times(tasks)).to_numpy()
        delays = queueing_delays(tasks)
        per_user = j.groupby("user")["completion_time_s"].mean().to_numpy()
        mean, p50, p95, p99 = _stats(v.to_numpy())
        diff = v.to_numpy() - jct[first].to_numpy()
        lo = hi = math.nan
        if paired and r.label != first and len(diff) > 1:
            sem = stats.sem(diff)
            if sem > 0:
                lo, hi = stats.t.interval(LEVEL, len(diff) - 1, loc=diff.mean(), scale=sem)
            else:
                lo = hi = float(diff.mean())
        elif r.label == first:
            lo = hi = 0.0
        util = r.summary.get("mean_utilization") or {}
        records.append(
            {
                "label": r.label,
                "run": str(r.run_dir),
                "scheduler": r.folder.name,
                **{f"{res}_util": util.get(res, math.nan) for res in resources},
                "completion_ratio": r.summary.get("completion_ratio"),
                "jobs_common": len(v),
                "jct_mean_s": mean,
                "jct_p50_s": p50,
                "jct_p95_s": p95,
                "jct_p99_s": p99,
                "delay_mean_s": float(delays.mean()) if len(delays) else math.nan,
                "delay_p95_s": float(np.percentile(delays, 95)) if len(delays) else math.nan,
                "slowdown_mean": float(np.sort(sd).mean()) if len(sd) else math.nan,
                "user_jct_max_over_min": (
                    float(per_user.max() / per_user.min())
                    if len(per_user) and per_user.min() > 0
                    else math.nan
                ),
                "user_jct_cv": (
                    float(per_user.std() / per_user.mean()) if len(per_user) else math.nan
                ),
                "djct_mean_s": float(diff.mean()) if len(diff) else math.nan,
                "djct_low_s": float(lo),
                "djct_high_s": float(hi),
            }
        )
    table = pd.DataFrame.from_records(records).set_index("label")
    if not paired:
        table[["djct_low_s", "djct_high_s"]] = math.nan
    result = Comparison(
        table=table,
        jct=jct,
        common_jobs=len(ids),
        excluded_jobs={k: int(len(s) - len(ids)) for k, s in done.items()},
        jobs=len(jobs[first]),
        paired=paired,
        seeds=seeds,
        resources=resources,
        rows=rows,
    )
    if out is not None:
        from fairsim.atomic import atomic_dir
        from fairsim.scenario.reporting.compare_report import write_compare_report

        with atomic_dir(out, overwrite=overwrite, what="out") as tmp:
            write_compare_report(result, tmp)
        result.folder = Path(out)
    return result


def default_out(dirs: Sequence[str | os.PathLike[str]]) -> Path:
    """``results/compare/<names>``: the compared folders' names joined by ``+``."""
    names = [Path(d).resolve().name for d in dirs]
    return Path("results") / "compare" / "+".join(names)
