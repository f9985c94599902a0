"""The Python API of the scenario pipeline: :func:`simulate` and :class:`RunResult`.

``fairsim.simulate`` runs a scenario (a YAML file, a mapping or a
:class:`~fairsim.scenario.config.RunConfig`) through the same pipeline as
``fairsim run`` (:func:`fairsim.scenario.pipeline.prepare_scenario`) and returns one
:class:`RunResult` per scheduler: the tables of the result files as pandas DataFrames, and the
summary. ``fairsim run`` reads its config once (:func:`load_scenario`) and runs it with
:func:`simulate_loaded`, which :func:`simulate` calls too.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from fairsim.errors import ConfigError
from fairsim.scenario.config import RunConfig, load_config, parse_config
from fairsim.scenario.output import finished_runs, run_to_folder
from fairsim.scenario.pipeline import STREAM_NEEDS_OUT, prepare_scenario
from fairsim.scenario.sharing import check_sharing_incentive
from fairsim.simulator.engine import EngineResult
from fairsim.simulator.results import summarize, tables

#: The tables of a run, in the order of the result files.
TABLES = ("tasks", "jobs", "users", "utilization", "user_shares", "user_jct")


@dataclass(frozen=True, eq=False)
class RunResult:
    """What one scheduler produced in one scenario: the tables of its result files and its
    summary.

    The tables have exactly the columns of the files ``fairsim run`` writes into
    ``DIR/<scheduler>/`` (the module docstring of :mod:`fairsim.simulator.results` describes
    every column): a null value (a task that never started or did not finish) is NaN. Results
    are built by :func:`simulate`, not by hand.

    Attributes
    ----------
    scheduler : str
        The scheduler's name in the config.
    summary : dict
        Headline numbers, as in ``summary.json`` (tasks, completed tasks, ``ended`` counts,
        completion ratio, mean JCT, exact mean utilisation per resource, wall time, config hash,
        seed, ...).
    folder : pathlib.Path or None
        Where the result files were written (``simulate(..., out=DIR)``), else None. Tables of
        a written run are read from these files when first used.

    Examples
    --------
    >>> import fairsim
    >>> cfg = {"name": "demo", "trace": {"format": "synthetic", "n_tasks": 300,
    ...                                   "duration_s": 3600},
    ...        "cluster": {"servers": 20}, "schedulers": ["bf-drfh"]}
    >>> r = fairsim.simulate(cfg)["bf-drfh"]
    >>> list(r.jobs.columns)
    ['job_id', 'user', 'n_tasks', 'submit_s', 'finish_s', 'completion_time_s']
    >>> len(r.tasks) == r.summary["tasks"]
    True
    """

    scheduler: str
    summary: dict[str, Any]
    folder: Path | None = None
    _tables: dict[str, pa.Table] = field(default_factory=dict, repr=False)
    _frames: dict[str, pd.DataFrame | None] = field(default_factory=dict, repr=False)

    @classmethod
    def from_engine(
        cls,
        name: str,
        result: EngineResult,
        extra_summary: Mapping[str, Any],
        extra_tables: Mapping[str, pa.Table] | None = None,
    ) -> RunResult:
        """The tables and summary of an engine result, in memory.

        Parameters
        ----------
        name : str
            The scheduler's name in the config.
        result : EngineResult
        extra_summary : mapping
            Merged into the summary, as ``fairsim run`` merges it into ``summary.json``.
        extra_tables : mapping, optional
            More tables of the run (``sharing_incentive``, ``fairness``, ``fairness_summary``),
            as ``fairsim run`` writes them.
        """
        built = {**tables(result), **(extra_tables or {})}
        summary = summarize(result, built)
        summary.update(extra_summary)
        return cls(name, summary, None, built)

    @classmethod
    def from_folder(cls, folder: Path, summary: dict[str, Any] | None = None) -> RunResult:
        """A run written into ``folder`` (``DIR/<scheduler>``); its tables are read lazily.

        ``summary`` defaults to the folder's ``summary.json``.
        """
        folder = Path(folder)
        if summary is None:
            summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
        return cls(folder.name, summary, folder)

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task (``tasks.parquet``): ``job_id, task_index, user, submit_s, start_s,
        finish_s, server, ended`` and one demand column per resource; for a scheduler that
        preempts also ``evictions`` (docs/preemption.md)."""
        return self._required("tasks")

    @property
    def jobs(self) -> pd.DataFrame:
        """One row per job (``jobs.parquet``): ``job_id, user, n_tasks, submit_s, finish_s,
        completion_time_s``."""
        return self._required("jobs")

    @property
    def users(self) -> pd.DataFrame:
        """One row per user (``users.parquet``): ``user, tasks_submitted, tasks_completed,
        completion_ratio``."""
        return self._required("users")

    @property
    def utilization(self) -> pd.DataFrame:
        """Used fraction of the pool's total capacity on the grid (``utilization.parquet``):
        ``time_s`` and one column per resource."""
        return self._required("utilization")

    @property
    def user_jct(self) -> pd.DataFrame | None:
        """Per-user JCT (``user_jct.parquet``): ``user, jobs, jobs_completed, mean_jct_s,
        median_jct_s``; None for a folder written before the table existed."""
        return self._frame("user_jct")

    @property
    def user_shares(self) -> pd.DataFrame | None:
        """Every user's share of the pool on the grid (``user_shares.parquet``, only with
        ``collect.user_shares``), else None."""
        return self._frame("user_shares")

    @property
    def sharing_incentive(self) -> pd.DataFrame | None:
        """Each user's tasks completed and JCT, shared run vs alone on a dedicated cloud
        (``sharing_incentive.parquet``, only with ``collect.sharing_incentive``), else None."""
        return self._frame("sharing_incentive")

    @property
    def evictions(self) -> pd.DataFrame | None:
        """Evictions and lost work over time (``evictions.parquet``, only for a scheduler that
        preempts; docs/preemption.md): ``time_s, evictions, work_lost_<resource>...``, each
        counted from the start; else None."""
        return self._frame("evictions")

    @property
    def fairness(self) -> pd.DataFrame | None:
        """Fairness over time per instant and active user (``fairness.parquet``, only with
        ``collect.fairness``; docs/fairness.md): ``time_s, user, tasks_running, tasks_waiting,
        demand_<resource>..., share_<resource>..., dominant_share, reference_dominant_share,
        deficit``; else None."""
        return self._frame("fairness")

    @property
    def fairness_summary(self) -> pd.DataFrame | None:
        """Fairness over time per instant (``fairness_summary.parquet``, only with
        ``collect.fairness``; docs/fairness.md): ``time_s, active_users, jain_index,
        max_deficit, l1_distance, si_violations, envious_pairs, jain_entitlement,
        zero_reference_users, jain_raw_dominant``; else None."""
        return self._frame("fairness_summary")

    @property
    def queues(self) -> pd.DataFrame | None:
        """Per queue of the scenario's tree (``queues.parquet``, only with ``queues`` in the
        config; docs/queues.md): ``queue, users, tasks, tasks_started, tasks_completed, jobs,
        jobs_completed, mean_jct_s, p95_jct_s, mean_queueing_s, p95_queueing_s``; else None."""
        return self._frame("queues")

    @property
    def fairness_queues(self) -> pd.DataFrame | None:
        """Fairness over time per instant and queue (``fairness_queues.parquet``, only with
        ``queues`` and ``collect.fairness``): ``time_s, queue, tasks_running, tasks_waiting,
        share_<resource>..., dominant_share, reference_dominant_share, deficit,
        holds_nothing``; else None."""
        return self._frame("fairness_queues")

    def _required(self, name: str) -> pd.DataFrame:
        """A table every run has (``tasks``, ``jobs``, ``users``, ``utilization``)."""
        frame = self._frame(name)
        assert frame is not None
        return frame

    def _frame(self, name: str) -> pd.DataFrame | None:
        if name not in self._frames:
            table = self._tables.get(name)
            if table is None and self.folder is not None:
                path = self.folder / f"{name}.parquet"
                table = pq.read_table(path) if path.is_file() else None
            self._frames[name] = table.to_pandas() if table is not None else None
        return self._frames[name]

    def _repr_html_(self) -> str:
        """A compact HTML table of the headline numbers (for notebooks)."""
        s = self.summary

        def num(x: Any, fmt: str) -> str:
            return "—" if x is None else format(x, fmt)

        jct = s.get("jct_s") or {}
        delay = s.get("queueing_delay_s") or {}
        rows = [
            ("tasks", num(s.get("tasks"), ",")),
            ("completed", num(s.get("tasks_completed"), ",")),
            ("completion ratio", num(s.get("completion_ratio"), ".3f")),
            *(
                (f"mean {r} utilisation", "—" if v is None else f"{100 * v:.1f} %")
                for r, v in (s.get("mean_utilization") or {}).items()
            ),
            (
                "jobs completed (not completed)",
                f"{num(s.get('jobs_completed'), ',')} ({num(jct.get('excluded_jobs'), ',')})",
            ),
            ("mean JCT (s)", num(s.get("mean_jct_s"), ",.1f")),
            (
                "JCT p50 / p95 / p99 (s)",
                " / ".join(num(jct.get(k), ",.1f") for k in ("p50", "p95", "p99")),
            ),
            (
                "queueing delay mean / p95 (s)",
                " / ".join(num(delay.get(k), ",.1f") for k in ("mean", "p95")),
            ),
            ("mean slowdown", num((s.get("slowdown") or {}).get("mean"), ".2f")),
            ("config hash", html.escape(str(s.get("config_hash")))),
        ]
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{v}</td></tr>"
            for k, v in rows
        )
        where = (
            f" <small>{html.escape(str(self.folder))}</small>" if self.folder is not None else ""
        )
        return (
            f"<div><b>RunResult {html.escape(self.scheduler)}</b>{where}<table>{body}</table></div>"
        )

    def __repr__(self) -> str:
        s = self.summary
        ratio = s.get("completion_ratio")
        util = ", ".join(
            f"{r}={v:.3f}" if isinstance(v, float) else f"{r}=None"
            for r, v in (s.get("mean_utilization") or {}).items()
        )
        where = f", folder={str(self.folder)!r}" if self.folder is not None else ""
        return (
            f"RunResult(scheduler={self.scheduler!r}, tasks={s.get('tasks')}, "
            f"completed={s.get('tasks_completed')}, "
            f"completion_ratio={ratio:.3f}, "
            * (ratio is not None)
            + f"mean_utilization=({util}){where})"
        )


@dataclass(frozen=True)
class LoadedConfig:
    """A scenario read and validated once (:func:`load_scenario`).

    Attributes
    ----------
    config : RunConfig
        The validated config, ``--set`` overrides applied.
    base : pathlib.Path or None
        The folder its relative paths resolve against: the YAML file's folder, None (the
        working directory) for a mapping or a :class:`~fairsim.scenario.config.RunConfig`.
    protect : tuple of pathlib.Path
        The inputs an ``overwrite`` of the output folder must not delete, hold or lie inside:
        the YAML file, if any, and the config's ``trace.path``, ``trace.cache_dir`` and
        ``cluster.path`` (:func:`input_paths`).
    """

    config: RunConfig
    base: Path | None = None
    protect: tuple[Path, ...] = ()


def load_scenario(
    config: str | os.PathLike[str] | Mapping[str, Any] | RunConfig, overrides: Sequence[str] = ()
) -> LoadedConfig:
    """Read and validate a scenario once, as :func:`simulate` and ``fairsim run`` take it.

    Parameters
    ----------
    config : path-like, mapping or RunConfig
        A YAML file (its relative paths are relative to the file's folder), a mapping with the
        same keys or a validated :class:`~fairsim.scenario.config.RunConfig` (relative paths
        are relative to the working directory).
    overrides : sequence of str
        ``dotted.key=value`` changes applied before validation (``fairsim run --set``).

    Returns
    -------
    LoadedConfig

    Raises
    ------
    fairsim.errors.ConfigError
        For a file that cannot be read, an invalid config (one line naming the field) or a
        ``config`` of another type.
    """
    if isinstance(config, RunConfig):
        if overrides:
            config = parse_config(config.model_dump(mode="json"), overrides=list(overrides))
        return LoadedConfig(config, None, input_paths(config, None))
    if isinstance(config, Mapping):
        cfg = parse_config(dict(config), overrides=list(overrides))
        return LoadedConfig(cfg, None, input_paths(cfg, None))
    if isinstance(config, str | os.PathLike):
        path = Path(config)
        cfg, base = load_config(path, overrides=list(overrides)), path.resolve().parent
        return LoadedConfig(cfg, base, (path, *input_paths(cfg, base)))
    raise ConfigError(
        f"config: expected a YAML file path, a mapping or a fairsim.RunConfig, got "
        f"{type(config).__name__}"
    )


def input_paths(cfg: RunConfig, base: Path | None) -> tuple[Path, ...]:
    """The files and folders a scenario reads, which its output folder must not replace.

    Parameters
    ----------
    cfg : RunConfig
    base : pathlib.Path or None
        The config file's folder (None: the working directory), against which relative paths
        are resolved as the pipeline resolves them
        (:func:`fairsim.scenario.trace_cache.resolve_path`).

    Returns
    -------
    tuple of pathlib.Path
        ``trace.path``, ``trace.cache_dir`` and ``cluster.path``, those given, in this order.
    """
    from fairsim.scenario.trace_cache import resolve_path

    raws = (getattr(cfg.trace, "path", None), getattr(cfg.trace, "cache_dir", None))
    return tuple(resolve_path(raw, base) for raw in (*raws, cfg.cluster.path) if raw)


def simulate(
    config: str | os.PathLike[str] | Mapping[str, Any] | RunConfig,
    *,
    out: str | os.PathLike[str] | None = None,
    progress: bool = False,
    overwrite: bool = False,
    overrides: Sequence[str] = (),
) -> dict[str, RunResult]:
    """Simulate a scenario: every scheduler it names replays the same workload on the same
    server pool.

    The pipeline is the one of ``fairsim run``: the trace is converted once and cached, the pool
    is drawn with the run's seed, and each scheduler runs on a fresh copy of both. The same
    config and seed give the same tables.

    Parameters
    ----------
    config : path-like, mapping or RunConfig
        The scenario: a YAML file (its relative paths are relative to the file's folder), a
        mapping with the same keys or a validated
        :class:`~fairsim.scenario.config.RunConfig` (relative paths are relative to
        the working directory).
    out : path-like, optional
        Also write the result files, figures and ``report.md`` into this folder, as
        ``fairsim run --out`` does: the folder is written under a temporary name and renamed
        into place when complete.
    progress : bool
        Show progress bars.
    overwrite : bool
        Replace an existing non-empty ``out`` (refused otherwise).
    overrides : sequence of str
        ``dotted.key=value`` changes applied before validation, like ``fairsim run --set``
        (e.g. ``"cluster.servers=200"``).

    Returns
    -------
    dict of str to RunResult
        Scheduler name → its results, in the config's order.

    Raises
    ------
    fairsim.errors.ConfigError
        For an invalid config (one line naming the field), a trace or pool that cannot be
        resolved, a window without tasks, or ``collect.stream_tasks`` without ``out``.
    fairsim.errors.OutputError
        If ``out`` is refused (an existing file, not empty without ``overwrite``, not
        writable, or, even with ``overwrite``, an input of the config or a folder that holds
        one or lies inside one: the YAML file, ``trace.path``, ``trace.cache_dir``,
        ``cluster.path``), before anything is simulated.

    Examples
    --------
    >>> import fairsim
    >>> cfg = {"name": "demo", "trace": {"format": "synthetic", "n_tasks": 500,
    ...                                   "duration_s": 3600},
    ...        "cluster": {"servers": 20}, "schedulers": ["ff-drfh", "bf-drfh"]}
    >>> results = fairsim.simulate(cfg)
    >>> sorted(results)
    ['bf-drfh', 'ff-drfh']
    >>> results["bf-drfh"].summary["tasks"]
    500
    """
    return simulate_loaded(
        load_scenario(config, overrides), out=out, progress=progress, overwrite=overwrite
    )


def simulate_loaded(
    loaded: LoadedConfig,
    *,
    out: str | os.PathLike[str] | None = None,
    progress: bool = False,
    overwrite: bool = False,
) -> dict[str, RunResult]:
    """:func:`simulate` of a scenario already read and validated (:func:`load_scenario`):
    ``fairsim run`` reads its config once, for its name, and runs it with this.

    Parameters
    ----------
    loaded : LoadedConfig
    out, progress, overwrite
        As for :func:`simulate`.

    Returns
    -------
    dict of str to RunResult
        What :func:`simulate` returns.

    Raises
    ------
    fairsim.errors.ConfigError, fairsim.errors.OutputError
        As :func:`simulate` raises them, but for an invalid config (:func:`load_scenario`
        refused it).
    """
    cfg, base, protect = loaded.config, loaded.base, loaded.protect
    if out is None:
        if cfg.collect.stream_tasks:
            raise ConfigError(STREAM_NEEDS_OUT)
        scenario = prepare_scenario(cfg, base=base, progress=progress)
        check_sharing_incentive(scenario)
        results: dict[str, RunResult] = {}
        for run, extra, more in finished_runs(scenario, progress=progress):
            assert run.result is not None
            results[run.name] = RunResult.from_engine(run.name, run.result, extra, more)
        return results
    from fairsim.atomic import check_output_dir

    folder = Path(out)
    check_output_dir(folder, overwrite=overwrite, what="out", protect=protect)  # before any work
    summaries = run_to_folder(
        cfg,
        folder,
        base=base,
        progress=progress,
        overwrite=overwrite,
        protect=protect,
        what="out",
    )
    return {name: RunResult.from_folder(folder / name, s) for name, s in summaries.items()}


def load(run_dir: str | os.PathLike[str]) -> dict[str, RunResult] | RunResult:
    """Read back what ``fairsim run`` or ``simulate(..., out=DIR)`` wrote.

    Parameters
    ----------
    run_dir : path-like
        A run folder (``DIR``: ``config.yaml``, ``summary.json`` and one folder per scheduler)
        or one scheduler's folder inside it (``DIR/<scheduler>``).

    Returns
    -------
    dict of str to RunResult, or RunResult
        For a run folder, what :func:`simulate` returned: scheduler label → its
        :class:`RunResult`, in the config's order; for a scheduler folder, its
        :class:`RunResult`. Summaries are the ``summary.json`` files; tables are read when
        first used.

    Raises
    ------
    fairsim.errors.ConfigError
        If the folder does not exist, or is neither (one line naming it).

    Examples
    --------
    >>> import fairsim, tempfile, pathlib
    >>> cfg = {"name": "demo", "trace": {"format": "synthetic", "n_tasks": 300,
    ...                                   "duration_s": 3600},
    ...        "cluster": {"servers": 20}, "schedulers": ["ff-drfh", "bf-drfh"]}
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "demo"
    >>> ran = fairsim.simulate(cfg, out=out)
    >>> back = fairsim.load(out)
    >>> list(back), back["bf-drfh"].summary == ran["bf-drfh"].summary
    (['ff-drfh', 'bf-drfh'], True)
    >>> fairsim.load(out / "bf-drfh").jobs.equals(ran["bf-drfh"].jobs)
    True
    """
    folder = Path(run_dir)
    kind = read_run_kind(folder)
    if kind == "scheduler":
        return RunResult.from_folder(folder)
    return {name: RunResult.from_folder(folder / name) for name in read_run_schedulers(folder)}


def read_run_kind(folder: Path) -> str:
    """``"run"`` for a ``fairsim run`` folder, ``"scheduler"`` for a scheduler's folder in one.

    Raises
    ------
    fairsim.errors.ConfigError
        If ``folder`` does not exist, or is neither (one line naming it).
    """
    if not folder.exists():
        raise ConfigError(
            f"{folder}: no such folder (expected a fairsim run folder or a scheduler's folder "
            "in one)"
        )
    if (folder / "summary.json").is_file() and (folder / "jobs.parquet").is_file():
        return "scheduler"
    if (folder / "config.yaml").is_file() and (folder / "summary.json").is_file():
        return "run"
    raise ConfigError(
        f"{folder}: not a fairsim run folder (config.yaml and summary.json) nor a scheduler's "
        "folder in one (summary.json and jobs.parquet)"
    )


def read_run_schedulers(folder: Path) -> list[str]:
    """The scheduler folders of a run folder, in the order of its config's ``schedulers``
    (sorted by name when the config cannot be read back, e.g. a plug-in scheduler that is not
    installed)."""
    present = sorted(
        p.name for p in folder.iterdir() if p.is_dir() and (p / "summary.json").is_file()
    )
    try:
        data = yaml.safe_load((folder / "config.yaml").read_text(encoding="utf-8"))
        labels = parse_config(data).scheduler_labels()
    except Exception:  # any config this session cannot validate: fall back to names
        return present
    ordered = [name for name in labels if name in present]
    return ordered + [name for name in present if name not in ordered]


def sweep(
    config: str | os.PathLike[str] | Mapping[str, Any] | RunConfig,
    *,
    grid: Mapping[str, Sequence[Any]] | None = None,
    seeds: Sequence[int] | None = None,
    out: str | os.PathLike[str],
    executor: str = "serial",
    name: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run a sweep, a grid of configs times seeds, as ``fairsim sweep`` does (docs/sweeps.md).

    Every run is written to ``out/<run_id>/`` (the files of ``fairsim run``, one folder per
    scheduler) and the table of runs to ``out/runs.parquet``; a run finished earlier (its
    ``DONE`` marker) is not run again.

    Parameters
    ----------
    config : path-like, mapping or RunConfig
        A sweep (a YAML file or a mapping with ``name``, ``base``, ``grid``, ``seeds``), or one
        run config (YAML file, mapping or :class:`~fairsim.scenario.config.RunConfig`), which
        becomes the sweep's ``base`` (its ``name`` the sweep's name, its ``seed`` the default
        seed).
    grid : mapping of str to list, optional
        Dotted config paths to the values to try (``{"cluster.servers": [20, 40]}``); replaces
        the sweep's grid. Default: the sweep's, or none.
    seeds : sequence of int, optional
        Replaces the sweep's seeds. Default: the sweep's, or the config's ``seed``.
    out : path-like
        The sweep's output folder (a new folder, or the output of the same sweep to resume).
    executor : str
        ``"serial"`` (default): the runs one after the other in this process, so a scheduler
        registered in this session (``@fairsim.register_scheduler`` in a notebook) can be
        swept without packaging it. ``"local:N"`` (a pool of N processes), ``"dask-local:N"``
        and ``"dask://host:port"`` run in other processes, which find schedulers by name:
        built-in ones, entry points, or a ``register_scheduler`` call in an importable module
        that the worker imports; a class defined in ``__main__`` is refused with an error.
        A script that uses ``"local:N"`` or ``"dask-local:N"`` starts the sweep under
        ``if __name__ == "__main__":`` (the workers run the script's top-level code again).
    name : str, optional
        The sweep's name (default: the config's ``name``).
    progress : bool
        A progress bar over the runs.

    Returns
    -------
    pandas.DataFrame
        The ``runs.parquet`` table: one row per run and scheduler (``run_id``, the grid values,
        ``seed``, ``status``, ``error``, ``wall_s`` and the summary's headline numbers).

    Raises
    ------
    fairsim.errors.ConfigError
        For an invalid sweep, executor, grid (a value that is not a list or tuple) or seed
        (not an integer from 0 to 2**63 - 1; a boolean is refused) (one line naming the key), a
        ``__main__`` scheduler with an executor other than ``"serial"``, or a script that
        starts a ``"local:N"`` or ``"dask-local:N"`` sweep outside ``if __name__ ==
        "__main__":`` (one line saying what to add).
    fairsim.errors.OutputError
        If ``out`` is a file, cannot be written, or is a non-empty folder that is not a sweep's.

    Examples
    --------
    >>> import fairsim
    >>> cfg = {"name": "demo", "trace": {"format": "synthetic", "n_tasks": 300,
    ...                                   "duration_s": 3600},
    ...        "cluster": {"servers": 20}, "schedulers": ["ff-drfh"]}
    >>> runs = fairsim.sweep(cfg, grid={"cluster.servers": [20, 40]}, seeds=[1, 2],
    ...                      out="results/sweeps/demo")
    >>> len(runs), sorted(set(runs["status"]))
    (4, ['ok'])
    """
    from fairsim.scenario.config import MAX_SEED
    from fairsim.scenario.sweep import Sweep, load_sweep, parse_sweep, run_sweep

    base_dir: Path | None = None
    data: Any = config
    if isinstance(config, str | os.PathLike):
        from fairsim.scenario.config import read_yaml

        base_dir = Path(config).resolve().parent
        data = read_yaml(Path(config), "sweep")
    if isinstance(data, RunConfig):
        data = data.model_dump(mode="json", exclude_defaults=True)
    if not isinstance(data, Mapping):
        raise ConfigError(f"sweep: expected a sweep or run config, got {type(data).__name__}")
    if "base" in data:
        sw = (
            load_sweep(Path(config))
            if isinstance(config, str | os.PathLike)
            else parse_sweep(dict(data))
        )
    else:  # one run config: it becomes the base
        base = {k: v for k, v in dict(data).items() if k not in ("name", "seed")}
        seed = data.get("seed", 1)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise ConfigError(f"sweep: seed: {seed!r} is not an integer from 0 to 2**63 - 1")
        sw = parse_sweep(
            {"name": data.get("name", "sweep"), "base": base, "seeds": [seed]}, source="sweep"
        )
    over: dict[str, Any] = {"name": name or sw.name, "base": sw.base, "grid": sw.grid}
    if seeds is not None and not isinstance(seeds, list | tuple):
        raise ConfigError(f"sweep: seeds: expected a list of integers (got {seeds!r})")
    over["seeds"] = list(seeds) if seeds is not None else list(sw.seeds)
    if grid is not None:
        if not isinstance(grid, Mapping):
            raise ConfigError("sweep: grid: expected a mapping of dotted paths to value lists")
        for key, values in grid.items():
            if not isinstance(values, list | tuple):
                raise ConfigError(f"sweep: grid.{key}: expected a list of values (got {values!r})")
        over["grid"] = {k: list(v) for k, v in grid.items()}
    swept: Sweep = parse_sweep(over, source="sweep")
    return run_sweep(swept, Path(out), executor=executor, base=base_dir, progress=progress)


def strategy(
    config: str | os.PathLike[str] | Mapping[str, Any] | RunConfig,
    *,
    users: str | Sequence[str],
    strategies: Sequence[str],
    seeds: Sequence[int] = (1,),
    out: str | os.PathLike[str],
    executor: str = "serial",
    progress: bool = False,
) -> pd.DataFrame:
    """Strategic users, as ``fairsim strategy`` runs them (docs/strategy.md): per seed the
    truthful run and, beside it, one run per user and strategy; returns ``strategy.parquet``.

    Parameters
    ----------
    config : path-like, mapping or RunConfig
        The truthful scenario (:func:`load_scenario`).
    users : str or sequence of str
        ``"top:K"`` (the K users that submit the most tasks in the window; each seed's own
        for a synthetic workload, drawn from the seed) or user names.
    strategies : sequence of str
        ``"inflate:<resource>=<factor>"``, ``"split:k=<k>"``, ``"hoard:cap=<n>"``
        (:func:`fairsim.scenario.manipulation.parse_strategy`).
    seeds : sequence of int
        One truthful run per seed; every manipulation is paired with it.
    out : path-like
        A new folder, or the output of the same study to resume.
    executor : str
        ``"serial"`` (default), ``"local:N"``, ``"dask-local:N"`` or ``"dask://host:port"``
        (as :func:`sweep`).
    progress : bool
        A progress bar over the runs.

    Returns
    -------
    pandas.DataFrame
        One row per (scheduler, user, strategy, params, seed):
        :data:`fairsim.scenario.strategy.COLUMNS` (``gain``, ``harm`` and the JCTs).

    Raises
    ------
    fairsim.errors.ConfigError
        For a bad config, strategy, user list, seed list or executor (one line).
    fairsim.errors.OutputError
        If ``out`` is refused.

    Examples
    --------
    >>> import fairsim  # doctest: +SKIP
    >>> fairsim.strategy("configs/strategy-google.yaml", users="top:2",
    ...                  strategies=["split:k=2"], seeds=[1, 2], out="study")  # doctest: +SKIP
    """
    from fairsim.scenario.strategy import run_strategy

    loaded = load_scenario(config)
    return run_strategy(
        loaded.config,
        Path(out),
        users=users,
        strategies=list(strategies),
        seeds=list(seeds),
        executor=executor,
        base=loaded.base,
        progress=progress,
    )
