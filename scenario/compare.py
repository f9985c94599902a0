"""``fairsim compare``: runs and schedulers side by side on the same job set.

:func:`compare` takes ``fairsim run`` folders (every scheduler in each) or scheduler folders
inside one, and measures every (run, scheduler) row on the *common job set*: the jobs completed
under all of them, matched by ``job_id`` (a JCT compared over different job sets mixes the
schedulers' effect with the jobs each one finished). The runs must replay the same trace window,
otherwise job ids would not match: the ``trace`` of their ``config.yaml`` agrees key by key but
for ``cache_dir``, ``trace.path`` names the same folder or file (:func:`trace_identity`), the
window of their summaries agrees, and their ``jobs.parquet`` hold the same jobs (id, user, tasks,
submit time: a synthetic trace is drawn from the run's seed, so another seed is another
workload).

**What differs.** Every config key whose value differs between the compared runs (the pool:
``cluster.*``; ``seed``; what is collected: ``collect.*``; the users' weights, the only trace
keys that may differ: ``trace.weights``, ``trace.default_weight``) and every scheduler
parameter that differs between rows of the same scheduler is named
(:attr:`Comparison.differences`), in the console and the report; with several runs, a row is
labelled by the values that set its run apart (``servers=500/bf-drfh``), or by its run's folder
when the configs do not differ.

A ``fairsim strategy`` run's manipulation (its ``manipulation.json``) is named as the setting
``manipulation`` (:data:`MANIPULATION`); it keeps every job and id, so it does not unpair.

**Pairing.** A row is *paired* with the first row (the reference) when its run replays the same
workload on the same pool: the same ``seed`` and the same ``cluster`` (the trace and window are
the same for every row). Then the difference in mean JCT against the reference comes with a 95 %
t-interval over the per-job differences on the common jobs (:func:`scipy.stats.t.interval` on
their mean and standard error); a row that is not paired gets the difference of the means only,
and the console and report say which rows are paired and why the others are not.

Files a comparison reads that are missing or damaged (a truncated ``summary.json`` or one
without a key the comparison reads, a ``config.yaml`` that is not YAML, a Parquet table that
cannot be read) are refused in one line naming the file (:class:`fairsim.errors.ResultError`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from fairsim.errors import ConfigError, ResultError
from fairsim.scenario.api import read_run_kind, read_run_schedulers
from fairsim.scenario.config import value_text as text
from fairsim.scenario.reporting.result_files import (
    is_result_number,
    read_result_json,
    read_result_table,
    read_result_yaml,
)
from fairsim.simulator.results import job_run_times, queueing_delays, slowdown

#: Trace keys that do not change which jobs a run replays: where a conversion is cached, and the
#: users' weights (the same jobs and ids; weighted against unweighted on one trace is a study).
#: Every other trace key sets the workload and must agree between compared runs.
_TRACE_IGNORED = ("cache_dir",)
_TRACE_WEIGHTS = ("weights", "default_weight")

#: Config keys that do not set a run apart: its name (its folder's) and its schedulers (each row
#: names its own; the parameters of rows of one scheduler are compared apart). The trace is the
#: same for every run (refused otherwise).
_NOT_COMPARED = ("name", "schedulers", "trace")

#: Config keys that give a path: compared by the file or folder they name
#: (:func:`resolved_path`), not by their text.
_PATH_KEYS = ("cluster.path",)

#: Config keys that set the workload and the pool (with the trace and window, which every
#: compared run shares): rows whose runs agree on them are paired.
_PAIRING = ("seed", "cluster")

#: The setting that names a ``fairsim strategy`` run's manipulation (``u1:inflate:cpu=2``, from
#: its ``manipulation.json``; ``none`` for a plain run): it changes what the scheduler sees of
#: the jobs, never which jobs or their ids, so it is named as a difference and does not unpair.
MANIPULATION = "manipulation"

#: Columns of ``jobs.parquet`` that a comparison reads (and that identify a run's workload:
#: the first four).
_JOB_COLUMNS = ("job_id", "user", "n_tasks", "submit_s", "completion_time_s")

#: Keys of a scheduler's ``summary.json`` that a comparison reads: its completion ratio and mean
#: utilisation per resource (the table), and its window (the same for every run).
_SUMMARY_KEYS = ("completion_ratio", "mean_utilization", "start_s", "horizon_s")

#: Confidence level of the paired interval.
LEVEL = 0.95


class _Unset:
    """A key a run's config does not have (its value is shown as ``unset``)."""

    def __repr__(self) -> str:
        return "unset"


_UNSET: Any = _Unset()


@dataclass(frozen=True)
class RunRow:
    """One compared (run, scheduler): its folder, its run's folder, config and row label.

    ``run_label`` is the run part of ``label`` (the values that set its run apart, else the run
    folder's name); ``scheduler`` and ``params`` are the registered name and every parameter
    (defaults included) of the row's scheduler, None when this session cannot resolve it (a
    plug-in that is not installed)."""

    label: str
    folder: Path
    run_dir: Path
    config: dict[str, Any]
    summary: dict[str, Any]
    run_label: str = ""
    scheduler: str | None = None
    params: dict[str, Any] | None = None


@dataclass
class Comparison:
    """What :func:`compare` measured.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (run, scheduler), indexed by label (``scheduler`` for one run,
        ``<run>/<scheduler>`` for several, ``<run>`` being the values that set the run apart,
        e.g. ``servers=500``, else its folder's name): ``run`` (its folder), ``scheduler``,
        ``paired`` (the row's run has the reference row's seed and pool), ``cpu_util,
        mem_util`` (mean utilisation, fractions; one ``<resource>_util`` per resource),
        ``completion_ratio``, ``jobs_common``, ``jct_mean_s, jct_p50_s, jct_p95_s, jct_p99_s``
        (on the common jobs), ``delay_mean_s, delay_p95_s`` (queueing delay of the common jobs'
        tasks), ``slowdown_mean`` (:func:`fairsim.simulator.results.slowdown`, common jobs),
        ``user_jct_max_over_min, user_jct_cv`` (per-user mean JCT over the common jobs),
        ``djct_mean_s, djct_low_s, djct_high_s`` (mean JCT minus the first row's, paired 95 %
        t-interval; the interval NaN for a row that is not paired, and on every row with fewer
        than two common jobs).
    jct : dict of str to pandas.Series
        Every row's JCT (s) of the common jobs, indexed by ``job_id``.
    common_jobs : int
        Jobs completed under every row.
    excluded_jobs : dict of str to int
        Per row, the jobs it completed that are not in the common set.
    jobs : int
        Jobs of the trace window (the first row's ``jobs``).
    paired : bool
        Every row is paired with the first one (same seed, trace, window and pool).
    seeds : list of int
    resources : list of str
    folder : Path or None
        Where the report was written.
    rows : list of RunRow
    differences : dict of str to dict
        Every config key whose value differs between the runs (dotted, e.g.
        ``cluster.servers``) → run label → value (``unset`` where a run's config lacks it),
        and every parameter that differs between rows of one scheduler
        (``schedulers.<name>.<parameter>``) → row label → value. Empty when the runs differ in
        nothing but their names and schedulers.
    runs : dict of str to Path
        Run label → its folder, in the order given.
    unpaired : dict of str to list of str
        Per run not paired with the reference row's run: the keys of :data:`_PAIRING` (``seed``,
        ``cluster.*``) in which it differs from it.
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
    differences: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: dict[str, Path] = field(default_factory=dict)
    unpaired: dict[str, list[str]] = field(default_factory=dict)
    trace: str | None = None
    """The trace every row replays: the file or folder its ``trace.path`` names from the first
    row's run folder (:func:`resolved_path`; the path as written when it cannot be resolved),
    None for a trace without a path (synthetic, inline)."""

    def describe_runs(self) -> list[str]:
        """What the rows compare, in lines for people: the runs and their folders, what
        differs between them and between rows of one scheduler, and which rows are paired
        with the reference (the first) and why the others are not."""
        t = self.table
        ref = t.index[0]
        lines = []
        if len(self.runs) > 1:
            listed = ", ".join(f"{k} ({v})" for k, v in self.runs.items())
            lines.append(f"runs: {listed}")
        run_keys = [k for k in self.differences if not k.startswith("schedulers.")]
        sched_keys = [k for k in self.differences if k.startswith("schedulers.")]
        if len(self.runs) > 1:
            lines.append(
                "they differ in: " + "; ".join(describe(k, self.differences[k]) for k in run_keys)
                if run_keys
                else "their configs do not differ (but for their names and schedulers)"
            )
        if sched_keys:
            lines.append(
                "scheduler parameters differ: "
                + "; ".join(describe(k, self.differences[k]) for k in sched_keys)
            )
        paired = [k for k in t.index[1:] if t.loc[k, "paired"]]
        apart = [k for k in t.index[1:] if not t.loc[k, "paired"]]
        manipulated = (
            "; the runs' manipulations (fairsim strategy) change what the scheduler sees of a "
            "user's jobs, not which jobs"
            if MANIPULATION in self.differences
            else ""
        )
        if not apart:
            lines.append(
                f"paired: every row replays the same jobs on the same pool as {ref} (seed "
                f"{self.seeds[0]}){manipulated}"
            )
        else:
            why = sorted({key for keys in self.unpaired.values() for key in keys})
            lines.append(
                (f"paired with {ref} (same seed and pool): {', '.join(paired)}; " if paired else "")
                + f"not paired (their runs differ from {ref}'s in {', '.join(why)}: no "
                f"interval): {', '.join(apart)}"
            )
        return lines

    def headline(self) -> str:
        """The headline table as plain text (what ``fairsim compare`` prints): what the rows
        compare (:meth:`describe_runs`), then the table."""
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
                shown[name] = (100 * v).map(lambda x: "-" if pd.isna(x) else f"{x:.1f}")
            elif c == "completion_ratio":
                shown[name] = v.map(lambda x: "-" if pd.isna(x) else f"{x:.4f}")
            elif c in ("slowdown_mean", "user_jct_max_over_min"):
                shown[name] = v.map(lambda x: "-" if pd.isna(x) else f"{x:.2f}")
            else:  # + 0.0: a difference that rounds to zero prints as 0, not -0
                shown[name] = v.map(lambda x: "-" if pd.isna(x) else f"{round(x) + 0.0:,.0f}")
        shown.loc[shown.index[0], "dJCT"] = "ref"  # the reference row
        if t["paired"].iloc[1:].any():
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
                ", paired 95 % t-interval over per-job differences"
                if t["paired"].iloc[1:].any()
                else " (no row is paired with it: no interval)"
            )
        )
        return "\n".join([*self.describe_runs(), head]) + "\n" + shown.to_string() + "\n"


def describe(key: str, values: Mapping[str, Any]) -> str:
    """``key`` and its value per label, for people: ``cluster.servers 500 (a), 2000 (b)``."""
    return f"{key} " + ", ".join(f"{text(v)} ({label})" for label, v in values.items())


# --------------------------------------------------------------------------- reading


def _read_summary(path: Path) -> dict[str, Any]:
    """A scheduler's ``summary.json`` with the keys a comparison reads (:data:`_SUMMARY_KEYS`).

    Raises
    ------
    ResultError
        As :func:`~fairsim.scenario.reporting.result_files.read_result_json`, or ``compare:
        <path> is damaged: no key 'completion_ratio'`` when a key is missing, or naming a key
        whose value is not a number or ``null`` (``mean_utilization``: an object of resource →
        number, not empty).
    """
    data = read_result_json(path, "compare")
    for key in _SUMMARY_KEYS:
        if key not in data:
            raise ResultError(f"compare: {path} is damaged: no key {key!r}")
    for key in ("completion_ratio", "start_s", "horizon_s"):
        if not is_result_number(data[key]):
            raise ResultError(f"compare: {path} is damaged: {key} is {data[key]!r}, not a number")
    util = data["mean_utilization"]
    if not isinstance(util, dict) or not util:
        raise ResultError(
            f"compare: {path} is damaged: mean_utilization is {util!r}, not an object of "
            "resource -> number"
        )
    for res, value in util.items():
        if not is_result_number(value):
            raise ResultError(
                f"compare: {path} is damaged: mean_utilization.{res} is {value!r}, not a number"
            )
    return data


# --------------------------------------------------------------------------- runs and rows


def resolved_path(run_dir: Path, raw: Any) -> Path | None:
    """The file or folder a path of a run's ``config.yaml`` names, symbolic links resolved: an
    absolute (or ``~``) path as it is, a relative one from the run folder (where ``fairsim run``
    writes it relative to). None when nothing is there: a run written before its
    ``config.yaml`` gave paths relative to its folder kept them relative to the config file,
    whose folder the run does not record.
    """
    if not isinstance(raw, str) or not raw:
        return None
    p = Path(raw).expanduser()
    if not p.is_absolute():
        p = run_dir / p
    return p.resolve() if p.exists() else None


def _trace_of(row: RunRow) -> str | None:
    """:attr:`Comparison.trace` of the first row."""
    raw = (row.config.get("trace") or {}).get("path")
    found = resolved_path(row.run_dir, raw)
    return str(found) if found is not None else (str(raw) if raw else None)


def _flat(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested config mappings as dotted keys (lists and empty mappings are values)."""
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and v:
            out.update(_flat(v, f"{key}."))
        else:
            out[key] = v
    return out


def _trace_workload(config: Mapping[str, Any]) -> dict[str, Any]:
    """A run's ``trace`` without the keys that do not change its jobs (:data:`_TRACE_IGNORED`,
    :data:`_TRACE_WEIGHTS`, and an inline user's ``weight``): what compared runs must share."""
    trace = config.get("trace") or {}
    out = {k: v for k, v in trace.items() if k not in (*_TRACE_IGNORED, *_TRACE_WEIGHTS)}
    if isinstance(out.get("users"), list):
        out["users"] = [
            {k: v for k, v in u.items() if k != "weight"} if isinstance(u, dict) else u
            for u in out["users"]
        ]
    return out


def _trace_weights(config: Mapping[str, Any]) -> dict[str, Any]:
    """A run's users' weights as dotted keys: ``trace.weights`` (the mapping),
    ``trace.default_weight`` and an inline user's ``trace.users.<name>.weight`` (compared and
    named, not refused)."""
    trace = config.get("trace") or {}
    out = {f"trace.{k}": trace[k] for k in _TRACE_WEIGHTS if k in trace}
    users = trace.get("users")
    for u in users if isinstance(users, list) else []:
        if isinstance(u, dict) and "name" in u:
            out[f"trace.users.{u['name']}.weight"] = u.get("weight", 1.0)
    return out


def _settings(run_dir: Path, config: Mapping[str, Any]) -> dict[str, Any]:
    """A run's config as dotted keys, without :data:`_NOT_COMPARED` but for the users' weights
    (:func:`_trace_weights`), paths as what they name."""
    flat = _flat(config)
    out = {
        k: v
        for k, v in flat.items()
        if not any(k == top or k.startswith(f"{top}.") for top in _NOT_COMPARED)
    }
    out.update(_trace_weights(config))
    m = _manipulation(run_dir)
    out[MANIPULATION] = "none" if m is None else f"{m['user']}:{m['spec']}"
    for key in _PATH_KEYS:
        if out.get(key) is not None:
            found = resolved_path(run_dir, out[key])
            out[key] = str(found) if found is not None else out[key]
    return out


def _scheduler_params(config: Mapping[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Label → (registered name, every parameter, defaults included) of a run's schedulers that
    this session can resolve."""
    from fairsim.schedulers.registry import params_model, resolve

    out: dict[str, tuple[str, dict[str, Any]]] = {}
    entries = config.get("schedulers")
    for entry in entries if isinstance(entries, list) else []:
        try:
            spec = resolve(entry)
            model = params_model(spec.cls)
            valid = model.model_validate(dict(spec.params))
        except Exception:  # a plug-in this session cannot import: its parameters not compared
            continue
        out[spec.label] = (spec.name, {k: getattr(valid, k) for k in model.model_fields})
    return out


def _short_keys(keys: list[str]) -> dict[str, str]:
    """Each dotted key by its last part where that is unambiguous among ``keys``."""
    last = [k.rpartition(".")[2] for k in keys]
    return {k: (s if last.count(s) == 1 else k) for k, s in zip(keys, last, strict=True)}


def _labelled(value: Any) -> bool:
    """Whether a value may stand in a row label (short, no ``/``)."""
    if isinstance(value, str):
        return len(value) <= 24 and "/" not in value
    return value is None or isinstance(value, bool | int | float | _Unset)


def _run_labels(runs: list[Path], settings: dict[Path, dict[str, Any]]) -> dict[Path, str]:
    """Each run's label: ``key=value`` of every config key whose value sets it apart
    (``servers=500``), followed by ``:<folder name>`` where two runs have the same values; the
    folder's name alone when the configs do not differ (numbered when two names are alike)."""
    names = {r: r.resolve().name for r in runs}
    if len(set(names.values())) < len(runs):  # same folder names: number them
        names = {r: f"{i + 1}:{r.name}" for i, r in enumerate(runs)}
    keys = sorted({k for s in settings.values() for k in s})
    differ = [
        k
        for k in keys
        if len({text(settings[r].get(k, _UNSET)) for r in runs}) > 1
        and all(_labelled(settings[r].get(k, _UNSET)) for r in runs)
    ]
    if not differ:
        return names
    short = _short_keys(differ)
    values = {
        r: ",".join(f"{short[k]}={text(settings[r].get(k, _UNSET))}" for k in differ) for r in runs
    }
    shared = {v for v in values.values() if list(values.values()).count(v) > 1}
    return {r: f"{v}:{names[r]}" if v in shared else v for r, v in values.items()}


def _check_every_scheduler(run_dir: Path, present: Sequence[str]) -> None:
    """Refuse a run folder that lacks the results of a scheduler its ``config.yaml`` lists (a
    deleted or never-written folder was dropped from the comparison without a word); a config
    this session cannot validate (a plug-in that is not installed) is not checked.

    Raises
    ------
    ResultError
        One line naming the run folder, the scheduler and the missing ``summary.json``.
    """
    from fairsim.scenario.config import parse_config

    try:
        data = read_result_yaml(run_dir / "config.yaml", "compare")
        labels = parse_config(data).scheduler_labels()
    except Exception:  # read again, and refused if damaged, with the rows
        return
    missing = [label for label in labels if label not in present]
    if missing:
        raise ResultError(
            f"compare: {run_dir} lists scheduler {missing[0]} in its config.yaml, but "
            f"{run_dir / missing[0] / 'summary.json'} is missing; give the run's other scheduler "
            "folders to compare without it"
        )


def _rows(dirs: Sequence[str | os.PathLike[str]]) -> list[RunRow]:
    found: list[tuple[Path, Path, str]] = []  # (scheduler folder, run folder, scheduler)
    for d in dirs:
        folder = Path(d)
        if read_run_kind(folder) == "scheduler":
            run_dir = folder.parent
            if not (run_dir / "config.yaml").is_file():
                raise ConfigError(f"{folder}: a scheduler folder outside a run (no config.yaml)")
            found.append((folder, run_dir, folder.name))
        else:
            present = read_run_schedulers(folder)
            _check_every_scheduler(folder, present)
            found += [(folder / n, folder, n) for n in present]
    if not found:
        raise ConfigError("compare: no scheduler results in " + ", ".join(map(str, dirs)))
    runs = list(dict.fromkeys(r for _, r, _ in found))
    configs = {r: read_result_yaml(r / "config.yaml", "compare") for r in runs}
    settings = {r: _settings(r, configs[r]) for r in runs}
    labels = _run_labels(runs, settings)
    specs = {r: _scheduler_params(configs[r]) for r in runs}
    rows = []
    for folder, run_dir, sched in found:
        label = sched if len(runs) == 1 else f"{labels[run_dir]}/{sched}"
        summary = _read_summary(folder / "summary.json")
        name, params = specs[run_dir].get(sched, (None, None))
        rows.append(
            RunRow(label, folder, run_dir, configs[run_dir], summary, labels[run_dir], name, params)
        )
    names = [r.label for r in rows]
    if len(set(names)) < len(names):
        dup = sorted({x for x in names if names.count(x) > 1})
        raise ConfigError(f"compare: {dup[0]} is given twice")
    return rows


def _manipulation(run_dir: Path) -> dict[str, Any] | None:
    """The ``manipulation.json`` of a run (a ``fairsim strategy`` run in which one user follows
    a strategy), None for a plain run."""
    from fairsim.scenario.strategy import MANIPULATION_FILE

    path = run_dir / MANIPULATION_FILE
    if not path.is_file():
        return None
    data = read_result_json(path, "compare")
    for key in ("user", "strategy", "spec"):
        if not isinstance(data.get(key), str):
            raise ResultError(f"compare: {path} is damaged: {key} is {data.get(key)!r}, not text")
    return data


def _workload(row: RunRow, jobs: pd.DataFrame) -> pd.DataFrame:
    """The jobs a row's run replays, as the trace gives them (``jobs.parquet``: id, user, tasks,
    submit time; sorted by id): in a strategy run, without the manipulation's own changes,
    which keep every job and its id (``hoard``'s placeholder jobs, ids below 0, left out;
    ``split``'s aliases ``<user>#<j>`` named by the user)."""
    from fairsim.scenario.manipulation import ALIAS_SEP

    x = jobs[list(_JOB_COLUMNS[:4])]
    m = _manipulation(row.run_dir)
    if m is not None and m["strategy"] == "hoard":
        x = x[x["job_id"] >= 0]
    if m is not None and m["strategy"] == "split":
        user = m["user"]
        alias = x["user"].astype(str).str.startswith(f"{user}{ALIAS_SEP}")
        x = x.assign(user=x["user"].where(~alias, user))
    return x.sort_values("job_id", kind="stable").reset_index(drop=True)


def _same_jobs(a: RunRow, b: RunRow, jobs: Mapping[str, pd.DataFrame]) -> bool:
    """Whether two rows' runs replay the same jobs (:func:`_workload`)."""
    return bool(_workload(a, jobs[a.label]).equals(_workload(b, jobs[b.label])))


def _first_other_job(a: pd.DataFrame, b: pd.DataFrame, name_a: str, name_b: str) -> str:
    """The first job id (in order) that two workloads (:func:`_workload`) do not share alike,
    for a message: ``job 0 is user u3 with 4 tasks submitted at 12 s in B, user u1 with ...``."""

    def job(r: Any) -> str:
        tasks = "1 task" if r.n_tasks == 1 else f"{r.n_tasks} tasks"
        return f"user {r.user} with {tasks} submitted at {r.submit_s:g} s"

    x, y = a.set_index("job_id"), b.set_index("job_id")
    for i in x.index.union(y.index).sort_values():
        if i not in y.index:
            return f"job {i} ({job(x.loc[i])} in {name_a}) is not in {name_b}"
        if i not in x.index:
            return f"job {i} ({job(y.loc[i])} in {name_b}) is not in {name_a}"
        if job(x.loc[i]) != job(y.loc[i]):
            return f"job {i} is {job(y.loc[i])} in {name_b}, {job(x.loc[i])} in {name_a}"
    return "their jobs differ"


def _check_same_workload(first: RunRow, row: RunRow, jobs: Mapping[str, pd.DataFrame]) -> None:
    """Refuse a row whose run replays other jobs than the first row's under the same ids: a
    synthetic trace (drawn from the run's seed) with another seed, or any other cause."""
    a, b = _workload(first, jobs[first.label]), _workload(row, jobs[row.label])
    if a.equals(b):
        return
    s0, s = first.config.get("seed"), row.config.get("seed")
    synthetic = (first.config.get("trace") or {}).get("format") == "synthetic"
    if s0 == s:
        cause = "same trace, window and seed"
    elif synthetic:
        cause = f"a synthetic trace is drawn from the run's seed: {s!r} against {s0!r}"
    else:
        cause = f"seed {s!r} against {s0!r} draws other jobs"
    raise ConfigError(
        f"compare: {row.label} replays other jobs than {first.label}: "
        f"{_first_other_job(a, b, first.label, row.label)} ({cause}; job ids would not match)"
    )


def _check_same_trace(rows: list[RunRow], jobs: Mapping[str, pd.DataFrame]) -> None:
    """Refuse rows that do not replay the first row's trace window.

    The trace keys of the runs' ``config.yaml`` must agree but for ``cache_dir`` and the users'
    weights (:func:`_trace_workload`); ``trace.path``
    must name the same file or folder (:func:`resolved_path`), or, where it cannot be resolved
    from the run folder (a run written before ``config.yaml`` gave paths relative to it) or
    names another copy, the runs must hold the same jobs (``jobs.parquet``: id, user, tasks,
    submit time). The window (``start_s``, ``horizon_s`` of the summaries) must agree.
    """
    first = rows[0]
    t0 = _trace_workload(first.config)
    for row in rows[1:]:
        if row.run_dir == first.run_dir:
            continue
        t = _trace_workload(row.config)
        # the format first: another format's keys differ too, and only the format says why
        for key in sorted(set(t0) | set(t), key=lambda k: (k != "format", k)):
            if key == "path":
                _check_same_path(first, row, jobs)
            elif t0.get(key) != t.get(key):
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
        _check_same_workload(first, row, jobs)


def _check_same_path(first: RunRow, row: RunRow, jobs: Mapping[str, pd.DataFrame]) -> None:
    raw0 = (first.config.get("trace") or {}).get("path")
    raw = (row.config.get("trace") or {}).get("path")
    p0, p = resolved_path(first.run_dir, raw0), resolved_path(row.run_dir, raw)
    if p0 is not None and p0 == p:
        return
    if _same_jobs(first, row, jobs):
        return  # the same jobs: a copy of the trace, or a path this run folder cannot resolve

    def where(path: Path | None) -> str:
        return f"= {path}" if path is not None else "not found from its run folder"

    raise ConfigError(
        f"compare: {row.label} replays another trace: trace.path is {raw!r} ({where(p)}), "
        f"{first.label} has {raw0!r} ({where(p0)}), and their jobs differ (job ids would not "
        "match)"
    )


def _differences(rows: list[RunRow]) -> dict[str, dict[str, Any]]:
    """:attr:`Comparison.differences` of the rows."""
    runs: dict[str, dict[str, Any]] = {}
    for r in rows:
        runs.setdefault(r.run_label, _settings(r.run_dir, r.config))
    out: dict[str, dict[str, Any]] = {}
    if len(runs) > 1:
        for key in sorted({k for s in runs.values() for k in s}):
            values = {label: s.get(key, _UNSET) for label, s in runs.items()}
            if len({text(v) for v in values.values()}) > 1:
                out[key] = values
    by_name: dict[str, list[RunRow]] = {}
    for r in rows:
        if r.scheduler is not None and r.params is not None:
            by_name.setdefault(r.scheduler, []).append(r)
    for name, same in by_name.items():
        for key in sorted({k for r in same for k in r.params or {}}):
            values = {r.label: (r.params or {}).get(key, _UNSET) for r in same}
            if len({text(v) for v in values.values()}) > 1:
                out[f"schedulers.{name}.{key}"] = values
    return out


def _unpaired(rows: list[RunRow]) -> dict[str, list[str]]:
    """Per run label whose seed or pool differs from the first row's run: the keys that do."""
    ref = rows[0]
    keys0 = _settings(ref.run_dir, ref.config)
    out: dict[str, list[str]] = {}
    for r in rows[1:]:
        if r.run_label in out or r.run_dir == ref.run_dir:
            continue
        keys = _settings(r.run_dir, r.config)
        differ = [
            k
            for k in sorted(set(keys0) | set(keys))
            if any(k == top or k.startswith(f"{top}.") for top in _PAIRING)
            and text(keys0.get(k, _UNSET)) != text(keys.get(k, _UNSET))
        ]
        if differ:
            out[r.run_label] = differ
    return out


def _number(value: Any) -> float:
    """A summary's number as a float; NaN where it has none (``null``: a run without tasks in
    its window has no completion ratio)."""
    return math.nan if value is None else float(value)


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
    fairsim.errors.ResultError
        A file the comparison reads (``config.yaml``, ``summary.json``, ``jobs.parquet``,
        ``tasks.parquet``) that is missing or damaged, naming it and what is wrong.
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
    jobs = {
        r.label: read_result_table(r.folder / "jobs.parquet", _JOB_COLUMNS, "compare") for r in rows
    }
    jobs = {k: j.reset_index(drop=True) for k, j in jobs.items()}
    _check_same_trace(rows, jobs)
    seeds = [int(r.config.get("seed", 0)) for r in rows]
    unpaired = _unpaired(rows)
    is_paired = {r.label: r.run_label not in unpaired for r in rows}
    resources = list(rows[0].summary.get("mean_utilization") or {})
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
        tasks = read_result_table(
            r.folder / "tasks.parquet", ["job_id", "submit_s", "start_s", "finish_s"], "compare"
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
        if len(diff) < 2:
            pass  # a t-interval needs two differences (n - 1 degrees of freedom): none
        elif r.label == first:
            lo = hi = 0.0
        elif is_paired[r.label]:
            sem = stats.sem(diff)
            if sem > 0:
                lo, hi = stats.t.interval(LEVEL, len(diff) - 1, loc=diff.mean(), scale=sem)
            else:
                lo = hi = float(diff.mean())
        util = r.summary.get("mean_utilization") or {}
        records.append(
            {
                "label": r.label,
                "run": str(r.run_dir),
                "scheduler": r.folder.name,
                "paired": is_paired[r.label],
                **{f"{res}_util": _number(util.get(res)) for res in resources},
                "completion_ratio": _number(r.summary.get("completion_ratio")),
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
    result = Comparison(
        table=table,
        jct=jct,
        common_jobs=len(ids),
        excluded_jobs={k: int(len(s) - len(ids)) for k, s in done.items()},
        jobs=len(jobs[first]),
        paired=all(is_paired.values()),
        seeds=seeds,
        resources=resources,
        rows=rows,
        differences=_differences(rows),
        runs={r.run_label: r.run_dir for r in rows},
        unpaired=unpaired,
        trace=_trace_of(rows[0]),
    )
    if out is not None:
        from fairsim.atomic import atomic_dir
        from fairsim.scenario.reporting.compare_report import write_compare_report

        with atomic_dir(out, overwrite=overwrite, what="out", protect=dirs) as tmp:
            write_compare_report(result, tmp)
            # the console table too, before the folder is put in place: a comparison that
            # cannot be shown leaves no report behind
            result.headline()
        result.folder = Path(out)
    return result


def default_out(dirs: Sequence[str | os.PathLike[str]]) -> Path:
    """``results/compare/<names>``: the compared folders' names joined by ``+``."""
    names = [Path(d).resolve().name for d in dirs]
    return Path("results") / "compare" / "+".join(names)
