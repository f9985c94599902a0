"""``fairsim strategy``: does gaming pay over time? One user behaves strategically, the rest of the
run is the same, and the two runs are compared.

For every seed the config is run once truthfully (``OUT/s<seed>-truthful/``) and once per
(user, strategy) with that user's tasks as the strategy presents them
(:mod:`fairsim.scenario.manipulation`; ``OUT/s<seed>-<strategy>-<hash>/``, with a
``manipulation.json``), on the sweep executors (:func:`fairsim.scenario.sweep.execute_runs`);
a run whose ``DONE`` marker exists is not run again, so re-running the same command resumes.
Then, per scheduler, the manipulator's *true* utility (its real tasks completed by the horizon,
never its placeholders; the JCT of its jobs finished in both runs) is compared with the truthful
run of the same seed, and so is every other user's together (``strategy.parquet``,
:func:`strategy_table`; ``report.md`` and ``gain.png``, :func:`write_strategy_report`).

``gain = tasks_completed / tasks_completed_truthful - 1`` (the manipulator's real tasks, NaN when
it completed none in the truthful run); ``harm`` is the same ratio for the other users together
(negative: they completed fewer). A null manipulation gives 0 for both, exactly: its runs are
byte-identical to the truthful run (``tests/unit/test_strategy.py``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from fairsim.atomic import atomic_dir, write_text
from fairsim.errors import ConfigError, OutputError
from fairsim.scenario.config import MAX_SEED, RunConfig, SyntheticTrace, parse_config
from fairsim.scenario.manipulation import (
    Manipulation,
    Split,
    Strategy,
    alias,
    check_strategy,
    job_counts,
    manipulate,
    parse_strategy,
    spec_text,
    task_counts,
    top_users,
)
from fairsim.scenario.pipeline import Hooks
from fairsim.scenario.pool import build_pool, pool_capacity
from fairsim.scenario.sweep import (
    DONE,
    _check_out,
    _failed_run,
    _remove_stale,
    check_executor,
    execute_runs,
    guard_executor,
    make_backend,
    prepare_traces,
)
from fairsim.scenario.workload import Workload, resolve_workload
from fairsim.simulator.results import write_json, write_table

log = logging.getLogger(__name__)

#: The table of a study, in ``OUT``.
STRATEGY_FILE = "strategy.parquet"
#: What a manipulated run's folder records of its manipulation.
MANIPULATION_FILE = "manipulation.json"
#: Columns of ``strategy.parquet``, in order (``../shared/DESIGN.md``, "Strategic users").
COLUMNS = (
    "scheduler",
    "user",
    "strategy",
    "params",
    "seed",
    "tasks_submitted",
    "tasks_completed_truthful",
    "tasks_completed",
    "gain",
    "others_completed_truthful",
    "others_completed",
    "harm",
    "jobs_compared",
    "jct_mean_truthful_s",
    "jct_mean_s",
    "jct_p95_truthful_s",
    "jct_p95_s",
    "others_jct_mean_truthful_s",
    "others_jct_mean_s",
    "dominant_share_mean_truthful",
    "dominant_share_mean",
)


# --------------------------------------------------------------------------- one run


def manipulation_hooks(manipulation: Manipulation) -> Hooks:
    """The pipeline hooks (:class:`~fairsim.scenario.pipeline.Hooks`) of a run in which
    ``manipulation.user`` follows its strategy: the resolved workload is wrapped by
    :func:`~fairsim.scenario.manipulation.manipulate`, and the pool's total capacity (drawn
    after the workload) is handed to it for ``inflate`` by ``dominant``/``nondominant``."""
    totals: dict[str, np.ndarray] = {}

    def workload(cfg: RunConfig, base: Path | None, progress: bool) -> Workload:
        return manipulate(
            resolve_workload(cfg, base, progress), manipulation, lambda: totals.get("pool")
        )

    def pool(cfg: RunConfig, base: Path | None, w: Workload) -> pd.DataFrame:
        frame = build_pool(cfg, base, w)
        totals["pool"] = pool_capacity(frame, w.resources).sum(axis=0)
        return frame

    return Hooks(workload=workload, pool=pool)


def run_manipulated(
    cfg: RunConfig,
    manipulation: Manipulation | None,
    out: Path,
    *,
    base: Path | None = None,
    progress: bool = False,
    report: bool = False,
) -> dict[str, dict[str, Any]]:
    """Run ``cfg`` into ``out`` (:func:`fairsim.scenario.output.run_to_folder`) with one user
    following a strategy (None: the plain run). Returns scheduler → ``summary.json``.

    Raises
    ------
    ConfigError
        As :func:`~fairsim.scenario.output.run_to_folder`, and for a strategy the workload
        cannot take (:func:`~fairsim.scenario.manipulation.manipulate`).
    """
    from fairsim.scenario.output import run_to_folder

    hooks = manipulation_hooks(manipulation) if manipulation is not None else None
    return run_to_folder(cfg, out, base=base, progress=progress, report=report, hooks=hooks)


def execute_strategy_run(
    config: dict[str, Any],
    out: str,
    run_id: str,
    base: str | None,
    manipulation: dict[str, Any] | None,
) -> dict[str, Any]:
    """One run of a study into ``OUT/<run_id>`` (a worker's call, as
    :func:`fairsim.scenario.sweep.execute_run`): ``manipulation`` is ``{"user", "spec"}`` or
    None (the truthful run). Returns ``run_id``, ``status``, ``error``, ``wall_s``."""
    final = Path(out) / run_id
    t0 = time.perf_counter()
    try:
        cfg = parse_config(config)
        m = (
            Manipulation(manipulation["user"], parse_strategy(manipulation["spec"]), cfg.seed)
            if manipulation is not None
            else None
        )
        with atomic_dir(final, overwrite=True, what=f"run {run_id}") as tmp:
            run_manipulated(cfg, m, tmp, base=Path(base) if base else None)
            if m is not None:
                write_json(m.to_data(), tmp / MANIPULATION_FILE)
            wall = round(time.perf_counter() - t0, 3)
            write_json({"run_id": run_id, "seed": cfg.seed, "wall_s": wall}, tmp / DONE)
    except Exception as exc:
        return _failed_run(run_id, exc, t0)
    return {"run_id": run_id, "status": "ok", "error": None, "wall_s": wall, "summaries": {}}


# --------------------------------------------------------------------------- the study


@dataclass(frozen=True)
class StudyRun:
    """One run of a study: a seed, and the manipulation (None: the truthful run)."""

    run_id: str
    seed: int
    user: str | None
    strategy: Strategy | None
    config: RunConfig = field(repr=False)


def truthful_id(seed: int) -> str:
    """The folder of the truthful run of ``seed``: ``s<seed>-truthful``."""
    return f"s{seed}-truthful"


def manipulated_id(seed: int, user: str, strategy: Strategy) -> str:
    """The folder of a manipulated run: ``s<seed>-<strategy>-<10 hex digits of sha256(user,
    spec)>`` (user names of real traces are long hashes)."""
    key = json.dumps([user, spec_text(strategy)])
    return f"s{seed}-{strategy.kind}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def resolve_users(
    cfg: RunConfig,
    users: str | Sequence[str],
    base: Path | None = None,
    *,
    counts: dict[str, int] | None = None,
    seed: int | None = None,
) -> list[str]:
    """The manipulators: ``top:K`` (the K users that submit the most tasks in the window, most
    first) or user names (a comma-separated string or a sequence).

    ``counts`` (tasks per user in the window, :func:`~fairsim.scenario.manipulation.task_counts`)
    saves a pass over the trace when the caller has them. ``seed``: the seed whose workload
    ``counts`` describes, when the workload is drawn from the seed (:func:`seeded_workload`;
    named in the errors).

    Raises
    ------
    ConfigError
        For a malformed ``top:K``, ``K`` above the users with tasks in the window, no users, or a
        user with no task in the window.
    """
    where = "the window" if seed is None else f"the window of seed {seed}"
    if isinstance(users, str) and users.startswith("top:"):
        k = users.removeprefix("top:")
        if not (k.isdigit() and int(k) >= 1):
            raise ConfigError(f"--users {users!r}: K {k!r} is not an integer >= 1")
        if counts is None:
            counts = task_counts(resolve_workload(cfg, base).open())
        if int(k) > len(counts):
            raise ConfigError(
                f"--users {users!r}: K {k} is above the {len(counts)} users with tasks in {where}"
            )
        return top_users(counts, int(k))
    names = [u.strip() for u in users.split(",")] if isinstance(users, str) else list(users)
    names = [u for u in names if u]
    if not names:
        raise ConfigError("--users: no user given (expected top:K or U1,U2,...)")
    if counts is None:
        counts = task_counts(resolve_workload(cfg, base).open())
    for u in names:
        if u not in counts:
            drawn = (
                ""
                if seed is None
                else " (the synthetic workload is drawn from the seed: name users every seed "
                "has, or use top:K, each seed's own top users)"
            )
            raise ConfigError(f"--users: user {u!r} submits no task in {where}{drawn}")
    return list(dict.fromkeys(names))


def seeded_workload(cfg: RunConfig) -> bool:
    """Whether the config's workload is drawn from its seed (a ``synthetic`` trace: its tasks,
    users and their names change with the seed), so a study resolves its users per seed."""
    return isinstance(cfg.trace, SyntheticTrace)


def study_users(
    cfg: RunConfig,
    users: str | Sequence[str],
    strategies: Sequence[Strategy],
    seeds: Sequence[int],
    base: Path | None = None,
    workload: Workload | None = None,
) -> dict[int, list[str]]:
    """The manipulators of each seed (:func:`resolve_users`), checked for the strategies
    (:func:`check_splits`).

    A workload read from a trace is the same for every seed: the users are resolved once, on
    ``workload`` (the config's, resolved by the caller) when given. A workload drawn from the
    seed (:func:`seeded_workload`) is resolved per seed: ``top:K`` is each seed's own K users
    (``strategy.parquet``'s ``user`` says which, per seed), and a named user must submit tasks
    in every seed's workload.

    Raises
    ------
    ConfigError
        As :func:`resolve_users` and :func:`check_splits`, naming the seed when the workload is
        drawn from it.
    """
    ranked = isinstance(users, str) and users.startswith("top:")
    if not seeded_workload(cfg):
        w = workload if workload is not None else resolve_workload(cfg, base)
        counts = task_counts(w.open())
        names = resolve_users(cfg, users, base, counts=counts)
        check_splits(names, strategies, counts, _jobs(w, names, strategies), ranked=ranked)
        return {seed: names for seed in seeds}
    data = cfg.model_dump(mode="json")
    out: dict[int, list[str]] = {}
    for seed in seeds:
        c = parse_config({**data, "seed": seed})
        w = resolve_workload(c, base)
        counts = task_counts(w.open())
        names = resolve_users(c, users, base, counts=counts, seed=seed)
        check_splits(names, strategies, counts, _jobs(w, names, strategies), seed, ranked=ranked)
        out[seed] = names
    return out


def check_splits(
    users: Sequence[str],
    strategies: Sequence[Strategy],
    counts: dict[str, int],
    jobs: dict[str, int],
    seed: int | None = None,
    *,
    ranked: bool = False,
) -> None:
    """Refuse a ``split`` whose aliases cannot stand for the user alone in the run.

    A split user's tasks appear under ``<user>#2`` ... ``<user>#k``
    (:func:`~fairsim.scenario.manipulation.alias`): a trace user of that name in the window
    would have its tasks counted as the manipulator's. And the user's jobs are dealt whole
    among the aliases, so ``k`` above the user's jobs in the window leaves aliases without a job
    (the same run as a smaller ``k``, and with one job the plain run) while the study still
    lists all ``k`` names.

    Parameters
    ----------
    users : sequence of str
        The manipulators.
    strategies : sequence of Strategy
    counts : dict of str to int
        Tasks per user in the window.
    jobs : dict of str to int
        Jobs per manipulator in the window (:func:`~fairsim.scenario.manipulation.job_counts`;
        read only when a ``split`` has ``k > 1``).
    seed : int, optional
        The seed whose workload the counts describe (named in the errors), when the workload is
        drawn from the seed.
    ranked : bool
        The users were chosen by rank (``top:K``), not by name: a ``k`` above a user's jobs is
        then logged as a warning naming the users and their jobs (their aliases beyond their
        jobs get none; with one job the run is the plain run and the gain 0), not refused, so
        a study of the top users runs whatever their jobs.

    Raises
    ------
    ConfigError
        One line naming the strategy, the user and the alias or, for a named user, its number
        of jobs.
    """
    where = "the window" if seed is None else f"the window of seed {seed}"
    for s in strategies:
        if not isinstance(s, Split):
            continue
        few = {u: jobs.get(u, 0) for u in users if 1 < s.k > jobs.get(u, 0)}
        if ranked and few:
            log.warning(
                "--strategy %r: %d of the %d users submit fewer than k = %d jobs in %s (%s): a "
                "job's tasks stay together, so their aliases beyond their jobs get none (with "
                "one job, the plain run: gain 0)",
                spec_text(s),
                len(few),
                len(users),
                s.k,
                where,
                ", ".join(f"{u[:12]}: {n}" for u, n in few.items()),
            )
        for u in users:
            n = jobs.get(u, 0)
            if not ranked and s.k > 1 and s.k > n:
                raise ConfigError(
                    f"--strategy {spec_text(s)!r}: user {u!r} submits {n} job(s) in {where}, "
                    f"fewer than k = {s.k} aliases (a job's tasks stay together, so an alias "
                    f"would have no job; choose k <= {n})"
                )
            taken = [a for j in range(2, s.k + 1) if (a := alias(u, j)) in counts]
            if taken:
                raise ConfigError(
                    f"--strategy {spec_text(s)!r}: user {u!r}'s alias {taken[0]!r} is the name "
                    "of another user of the trace in the window (its tasks would count as the "
                    "manipulator's)"
                )


def _jobs(
    workload: Workload, users: Sequence[str], strategies: Sequence[Strategy]
) -> dict[str, int]:
    """Jobs per manipulator in the window when a ``split`` has ``k > 1`` (one pass over the
    stream), else nothing (no pass)."""
    if not any(isinstance(s, Split) and s.k > 1 for s in strategies):
        return {}
    return job_counts(workload.open(), users)


def plan(
    cfg: RunConfig,
    users: Sequence[str] | dict[int, list[str]],
    strategies: Sequence[Strategy],
    seeds: Sequence[int],
) -> list[StudyRun]:
    """Every run of a study: per seed the truthful run, then each user x strategy (``users``:
    the same for every seed, or each seed's, :func:`study_users`)."""
    runs: list[StudyRun] = []
    data = cfg.model_dump(mode="json")
    for seed in seeds:
        c = parse_config({**data, "seed": seed})
        runs.append(StudyRun(truthful_id(seed), seed, None, None, c))
        for u in users[seed] if isinstance(users, dict) else users:
            for s in strategies:
                runs.append(StudyRun(manipulated_id(seed, u, s), seed, u, s, c))
    return runs


def run_strategy(
    cfg: RunConfig,
    out: str | Path,
    *,
    users: str | Sequence[str],
    strategies: Sequence[str | Strategy],
    seeds: Sequence[int],
    executor: str | None = None,
    base: str | Path | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Run a study into ``out`` and write ``strategy.parquet``, ``report.md`` and ``gain.png``.

    Parameters
    ----------
    cfg : RunConfig
        The truthful scenario (its ``seed`` is replaced by each of ``seeds``).
    out : path-like
        A new folder, or the output of the same study to resume.
    users : str or sequence of str
        ``top:K`` or user names (:func:`resolve_users`); per seed when the workload is drawn
        from the seed (:func:`study_users`).
    strategies : sequence of str or Strategy
        ``inflate:...``, ``split:...``, ``hoard:...``
        (:func:`~fairsim.scenario.manipulation.parse_strategy`).
    seeds : sequence of int
        One truthful run per seed, each manipulation paired with it.
    executor : str, optional
        As ``fairsim sweep``: ``serial``, ``local:N`` (default ``local:<cores>``),
        ``dask-local:N``, ``dask://host:port``.
    base : path-like, optional
        Folder of the config file (relative trace paths).
    progress : bool
        A progress bar over the runs.

    Returns
    -------
    pandas.DataFrame
        The ``strategy.parquet`` table (:data:`COLUMNS`): one row per (scheduler, user,
        strategy, params, seed) whose two runs finished.

    Raises
    ------
    ConfigError
        Bad strategy, users, seeds or executor (before anything is written).
    OutputError
        If ``out`` is refused.
    """
    from tqdm import tqdm

    parsed = [parse_strategy(s) for s in strategies]
    if not parsed:
        raise ConfigError("--strategy: none given (inflate:..., split:k=..., hoard:cap=...)")
    specs = [spec_text(s) for s in parsed]
    if len(set(specs)) != len(specs):
        raise ConfigError(f"--strategy: a strategy is given twice ({', '.join(specs)})")
    seeds = list(seeds)
    if not seeds or any(not isinstance(s, int) or not 0 <= s <= MAX_SEED for s in seeds):
        raise ConfigError(
            f"--seeds: {seeds!r} (expected integers >= 0 and at most 2**63 - 1, which "
            f"{STRATEGY_FILE} stores)"
        )
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds: {seeds!r} repeats a seed")
    spec = executor or f"local:{os.cpu_count() or 1}"
    guard_executor(spec)
    base_path = Path(base).resolve() if base is not None else None
    workload = resolve_workload(cfg, base_path)
    if workload.gate() is not None:
        raise ConfigError(
            "trace: fairsim strategy does not model DAG parents, repetitions or a job queue "
            "(trace.dag, trace.complex_jobs); leave them out"
        )
    for s in parsed:
        check_strategy(s, workload.resources)
    names = study_users(cfg, users, parsed, seeds, base_path, workload)
    runs = plan(cfg, names, parsed, seeds)
    check_executor(spec, [r.config for r in runs[:1]])
    root = Path(out)
    _check_out(root)
    if root.is_dir() and any(root.iterdir()) and not (root / STRATEGY_FILE).is_file():
        if not list(root.glob(f"s*-truthful/{DONE}")):
            raise OutputError(f"--out: {str(root)!r} is not the output of a study")
    _check_same_study(root, runs)
    todo = [r for r in runs if not (root / r.run_id / DONE).is_file()]
    log.info("%d runs: %d finished earlier, %d to run", len(runs), len(runs) - len(todo), len(todo))
    failed: dict[str, str] = {}
    if todo:
        backend = make_backend(spec)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            backend.close()
            raise OutputError(
                f"--out: cannot create {str(root)!r} ({exc.strerror or exc})"
            ) from None
        _remove_stale(root)
        bar = tqdm(total=len(runs), initial=len(runs) - len(todo), unit="run", disable=not progress)

        def record(res: dict[str, Any]) -> None:
            bar.update(1)
            if res["status"] != "ok":
                failed[res["run_id"]] = res["error"]
                bar.write(f"run {res['run_id']} failed: {res['error']}")

        base_dir = str(base_path) if base_path is not None else None
        try:
            prepare_traces([r.config for r in todo], base_path, progress)
            calls = [
                (
                    execute_strategy_run,
                    (
                        r.config.model_dump(mode="json"),
                        str(root.resolve()),
                        r.run_id,
                        base_dir,
                        None if r.user is None else {"user": r.user, "spec": spec_text(r.strategy)},  # type: ignore[arg-type]
                    ),
                )
                for r in todo
            ]
            execute_runs(backend, calls, root, record)
        finally:
            bar.close()
            backend.close()
    table = strategy_table(root, runs, cfg.scheduler_labels())
    write_table(pa.Table.from_pandas(table, preserve_index=False), root / STRATEGY_FILE)
    write_strategy_report(root, table, cfg, runs, failed, base=base_path)
    return table


def _check_same_study(root: Path, runs: Sequence[StudyRun]) -> None:
    """Refuse to resume into ``root`` when a finished run there was made from another config.

    A run's folder name depends only on its seed, user and strategy, so a study of another
    config (another pool, window or scheduler list) in the same ``--out`` would otherwise be
    taken as finished and its numbers reported as this study's. Each finished run's
    ``config_hash`` (its schedulers' ``summary.json``) must equal its planned config's.

    Raises
    ------
    OutputError
        One line naming the folder, the first run that differs and the two hashes (or the
        ``summary.json`` that cannot be read).
    """
    for r in runs:
        folder = root / r.run_id
        if not (folder / DONE).is_file():
            continue
        want = r.config.config_hash()
        for label in r.config.scheduler_labels():
            path = folder / label / "summary.json"
            try:
                got = json.loads(path.read_text(encoding="utf-8")).get("config_hash")
            except (OSError, ValueError, AttributeError) as exc:
                raise OutputError(
                    f"--out: {str(path)!r} of a finished run cannot be read "
                    f"({type(exc).__name__}); remove the run's folder to run it again"
                ) from None
            if got != want:
                raise OutputError(
                    f"--out: {str(root)!r} holds a study of another config (run {r.run_id}, "
                    f"{label}: config hash {got}, this study's {want}); choose another folder, "
                    "or remove it to start over"
                )


# --------------------------------------------------------------------------- measures


class RunFiles(NamedTuple):
    """What :func:`compare_runs` reads of one scheduler's run folder.

    Attributes
    ----------
    tasks : pandas.DataFrame
        ``tasks.parquet``: ``job_id, task_index, user, ended, start_s, finish_s`` and one column
        per resource (the demand the scheduler saw).
    jobs : pandas.DataFrame
        ``jobs.parquet``: ``job_id, user, completion_time_s``.
    capacity : numpy.ndarray, shape (R,)
        The pool's total capacity per resource (``servers.parquet``), in the tasks' units.
    window : (float, float)
        The run's ``start_s`` and ``horizon_s`` (``summary.json``), seconds of trace time.
    """

    tasks: pd.DataFrame
    jobs: pd.DataFrame
    capacity: np.ndarray
    window: tuple[float, float]


def read_run_files(folder: Path, scheduler: str) -> RunFiles:
    run = folder / scheduler
    servers = pd.read_parquet(folder / "servers.parquet")
    resources = [c for c in servers.columns if c != "server"]
    keep = ["job_id", "task_index", "user", "ended", "start_s", "finish_s", *resources]
    tasks = pd.read_parquet(run / "tasks.parquet", columns=keep)
    jobs = pd.read_parquet(run / "jobs.parquet", columns=["job_id", "user", "completion_time_s"])
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    window = (float(summary["start_s"]), float(summary["horizon_s"]))
    return RunFiles(tasks, jobs, servers[resources].to_numpy(np.float64).sum(axis=0), window)


def dominant_share_mean(
    runs: pd.DataFrame, demand: np.ndarray, capacity: np.ndarray, window: tuple[float, float]
) -> float:
    """Time-average over ``window`` of the dominant share of what ``runs`` use together.

    At each instant the tasks running use the sum of their demands; the dominant share is that
    sum's largest fraction of the pool's capacity over the resources (DRF: Ghodsi et al., NSDI
    2011, Section 4). A run lasts from ``start_s`` to ``finish_s``, or to the horizon when it
    has not finished by then.

    Parameters
    ----------
    runs : pandas.DataFrame
        ``start_s`` and ``finish_s`` (NaN: never started / not finished), one row per task.
    demand : numpy.ndarray, shape (len(runs), R)
        What each task uses (its true demand).
    capacity : numpy.ndarray, shape (R,)
        The pool's total capacity.
    window : (float, float)
        ``start_s`` and ``horizon_s`` of the run (seconds).

    Returns
    -------
    float
        The mean dominant share over the window, in [0, 1]; 0 for an empty window.
    """
    lo, hi = window
    start = runs["start_s"].to_numpy(np.float64)
    end = np.where(np.isnan(runs["finish_s"].to_numpy(np.float64)), hi, runs["finish_s"])
    ran = ~np.isnan(start)
    start, end = np.clip(start[ran], lo, hi), np.clip(end[ran], lo, hi)
    share = demand[ran] / capacity
    if hi <= lo or not len(start):
        return 0.0
    times = np.concatenate([start, end])
    order = np.argsort(times, kind="stable")
    steps = np.concatenate([share, -share])[order].cumsum(axis=0).max(axis=1)
    held = np.diff(times[order], append=hi)
    return float(np.dot(np.maximum(steps, 0.0), held) / (hi - lo))


_TASK_KEYS = ("job_id", "task_index", "user", "ended", "start_s", "finish_s")


def _p95(x: np.ndarray) -> float:
    return float(np.percentile(x, 95)) if len(x) else math.nan


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def _ratio(a: int, b: int) -> float:
    return a / b - 1.0 if b > 0 else math.nan


def compare_runs(
    truthful: RunFiles,
    manipulated: RunFiles,
    user: str,
    names: Sequence[str],
) -> dict[str, Any]:
    """The manipulator's utilities and the others' in a manipulated run against the truthful one.

    Parameters
    ----------
    truthful, manipulated : RunFiles
        One scheduler's files in the two runs (:func:`read_run_files`).
    user : str
        The manipulator.
    names : sequence of str
        Every name its tasks carry in the manipulated run (its aliases when split).

    Returns
    -------
    dict
        The measure columns of :data:`COLUMNS` (from ``tasks_submitted`` on). Only real tasks
        count (job id >= 0: placeholders never do); a task is completed when it ``finished``
        by the horizon; JCTs (seconds) are over the manipulator's jobs finished in both runs
        (the others': each run's finished jobs); ``dominant_share_mean*`` is the manipulator's
        dominant share over time (:func:`dominant_share_mean`) of its real tasks, each counted
        at its true demand (the truthful run's), so an inflated reservation is not utility.
    """
    t_tasks, t_jobs = truthful.tasks, truthful.jobs
    m_tasks, m_jobs = manipulated.tasks, manipulated.jobs
    m_tasks = m_tasks[m_tasks["job_id"] >= 0]
    m_jobs = m_jobs[m_jobs["job_id"] >= 0]
    t_mine = t_tasks["user"] == user
    m_mine = m_tasks["user"].isin(list(names))
    t_done = t_tasks["ended"] == "finished"
    m_done = m_tasks["ended"] == "finished"
    mine_t, mine_m = int((t_mine & t_done).sum()), int((m_mine & m_done).sum())
    others_t, others_m = int((~t_mine & t_done).sum()), int((~m_mine & m_done).sum())
    tj = t_jobs[t_jobs["user"] == user].dropna(subset=["completion_time_s"])
    mj = m_jobs[m_jobs["user"].isin(list(names))].dropna(subset=["completion_time_s"])
    both = tj.merge(mj, on="job_id", suffixes=("_t", "_m"))
    ct, cm = both["completion_time_s_t"].to_numpy(), both["completion_time_s_m"].to_numpy()
    ot = t_jobs[t_jobs["user"] != user]["completion_time_s"].dropna().to_numpy()
    om = m_jobs[~m_jobs["user"].isin(list(names))]["completion_time_s"].dropna().to_numpy()
    return {
        "tasks_submitted": int(t_mine.sum()),
        "tasks_completed_truthful": mine_t,
        "tasks_completed": mine_m,
        "gain": _ratio(mine_m, mine_t),
        "others_completed_truthful": others_t,
        "others_completed": others_m,
        "harm": _ratio(others_m, others_t),
        "jobs_compared": len(both),
        "jct_mean_truthful_s": _mean(ct),
        "jct_mean_s": _mean(cm),
        "jct_p95_truthful_s": _p95(ct),
        "jct_p95_s": _p95(cm),
        "others_jct_mean_truthful_s": _mean(ot),
        "others_jct_mean_s": _mean(om),
        "dominant_share_mean_truthful": _true_share(truthful, t_tasks[t_mine], t_tasks[t_mine]),
        "dominant_share_mean": _true_share(manipulated, m_tasks[m_mine], t_tasks[t_mine]),
    }


def _true_share(run: RunFiles, mine: pd.DataFrame, truth: pd.DataFrame) -> float:
    """:func:`dominant_share_mean` of ``mine`` (the user's rows of ``run``) at the demands its
    tasks have in ``truth`` (the truthful run's rows, matched by job and task index)."""
    resources = [c for c in truth.columns if c not in _TASK_KEYS]
    true = truth.set_index(["job_id", "task_index"])[resources]
    demand = true.reindex(pd.MultiIndex.from_frame(mine[["job_id", "task_index"]]))
    return dominant_share_mean(mine, demand.to_numpy(np.float64), run.capacity, run.window)


def strategy_table(root: Path, runs: Sequence[StudyRun], schedulers: Sequence[str]) -> pd.DataFrame:
    """``strategy.parquet`` from the finished runs in ``root``: one row per scheduler and
    manipulated run whose truthful run finished too (:func:`compare_runs`), in plan order."""
    rows: list[dict[str, Any]] = []
    truthful: dict[tuple[int, str], RunFiles] = {}
    for r in runs:
        if r.user is None or r.strategy is None:
            continue
        t_dir, m_dir = root / truthful_id(r.seed), root / r.run_id
        if not ((t_dir / DONE).is_file() and (m_dir / DONE).is_file()):
            continue
        names = Manipulation(r.user, r.strategy, r.seed).users()
        for sched in schedulers:
            key = (r.seed, sched)
            if key not in truthful:
                truthful[key] = read_run_files(t_dir, sched)
            row = {
                "scheduler": sched,
                "user": r.user,
                "strategy": r.strategy.kind,
                "params": r.strategy.params,
                "seed": r.seed,
            }
            row.update(compare_runs(truthful[key], read_run_files(m_dir, sched), r.user, names))
            rows.append(row)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    ints = ["seed", "tasks_submitted", "tasks_completed_truthful", "tasks_completed"]
    ints += ["others_completed_truthful", "others_completed", "jobs_compared"]
    return frame.astype({c: "int64" for c in ints})


# --------------------------------------------------------------------------- report


def gain_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Gain and harm by (scheduler, strategy, params): per seed the mean over users, then the
    mean over seeds with the half-width of its 95 % Student-t interval (NaN below 2 seeds).
    ``share_gain`` is the same for the manipulator's dominant share over time
    (``dominant_share_mean / dominant_share_mean_truthful - 1``).

    Returns
    -------
    pandas.DataFrame
        ``scheduler, strategy, params, seeds, gain_mean, gain_half, harm_mean, harm_half,
        gain_max, gain_max_user, gain_max_seed, share_gain_mean, share_gain_half``.
    """
    from fairsim.scenario.reporting.sweep_report import t_interval

    out: list[dict[str, Any]] = []
    keys = ["scheduler", "strategy", "params"]
    truthful = table["dominant_share_mean_truthful"].to_numpy(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(truthful > 0, table["dominant_share_mean"] / truthful - 1.0, np.nan)
    table = table.assign(share_gain=share)
    for (sched, kind, params), g in table.groupby(keys, sort=False):
        per_seed = g.groupby("seed", sort=True)[["gain", "harm", "share_gain"]].mean()
        gm, _, gh, n = t_interval(per_seed["gain"].to_numpy())
        hm, _, hh, _ = t_interval(per_seed["harm"].to_numpy())
        sm, _, sh, _ = t_interval(per_seed["share_gain"].to_numpy())
        best: dict[Any, Any] | None = (
            g.sort_values("gain", ascending=False, kind="stable").iloc[0].to_dict()
            if g["gain"].notna().any()
            else None
        )
        out.append(
            {
                "scheduler": sched,
                "strategy": kind,
                "params": params,
                "seeds": n,
                "gain_mean": gm,
                "gain_half": gh,
                "harm_mean": hm,
                "harm_half": hh,
                "gain_max": float(best["gain"]) if best is not None else math.nan,
                "gain_max_user": str(best["user"]) if best is not None else "",
                "gain_max_seed": int(best["seed"]) if best is not None else -1,
                "share_gain_mean": sm,
                "share_gain_half": sh,
            }
        )
    return pd.DataFrame(out)


def _pct(mean: float, half: float) -> str:
    if math.isnan(mean):
        return "n/a"
    if math.isnan(half):
        return f"{100 * mean:+.2f} %"
    return f"{100 * mean:+.2f} % [{100 * (mean - half):+.2f}, {100 * (mean + half):+.2f}]"


def write_strategy_report(
    root: Path,
    table: pd.DataFrame,
    cfg: RunConfig,
    runs: Sequence[StudyRun],
    failed: dict[str, str],
    *,
    base: Path | None = None,
) -> None:
    """``report.md`` (gains and harms with 95 % intervals over seeds, the largest gain per
    scheduler with the command that replays it, failed runs), ``gain.png`` and, per scheduler
    with a gain, ``counterexamples/<scheduler>.yaml``: the config of that run (its seed, that
    scheduler only; relative paths rewritten for the folder, ``base`` the config's folder), its
    first lines the command that replays the manipulation beside it."""
    from matplotlib.figure import Figure

    from fairsim.scenario.reporting.plotting import save_figure

    summary = gain_summary(table)
    users = sorted({r.user for r in runs if r.user is not None})
    seeds = sorted({r.seed for r in runs})
    per_seed = {s: {r.user for r in runs if r.seed == s and r.user is not None} for s in seeds}
    who = f"{len(users)} manipulating users"
    if len({frozenset(u) for u in per_seed.values()}) > 1:  # a workload drawn from the seed
        who = (
            f"{max(len(u) for u in per_seed.values())} manipulating users per seed "
            f"({len(users)} in all: the workload is drawn from the seed, each seed has its own)"
        )
    lines = [
        f"# Strategic users: {cfg.name}",
        "",
        f"{who}, {len(seeds)} seeds ({', '.join(map(str, seeds))}), "
        f"{len(runs)} runs. Gain: the manipulator's real tasks completed by the horizon "
        "relative to the truthful run of the same seed, minus 1; harm: the same for every "
        "other user together (negative: they completed fewer); share gain: the same for the "
        "manipulator's dominant share over time (its real tasks at their true demand). Per "
        "seed the mean over the users, then the mean over seeds with its 95 % Student-t "
        "interval.",
        "",
        "| scheduler | strategy | params | seeds | gain | harm | share gain "
        "| largest gain (user, seed) |",
        "|---|---|---|---:|---|---|---|---|",
    ]
    records: list[dict[Any, Any]] = summary.to_dict("records")
    for row in records:
        best = (
            f"{100 * row['gain_max']:+.2f} % ({row['gain_max_user']}, {row['gain_max_seed']})"
            if not math.isnan(row["gain_max"])
            else "n/a"
        )
        lines.append(
            f"| {row['scheduler']} | {row['strategy']} | {row['params']} | {row['seeds']} | "
            f"{_pct(row['gain_mean'], row['gain_half'])} | "
            f"{_pct(row['harm_mean'], row['harm_half'])} | "
            f"{_pct(row['share_gain_mean'], row['share_gain_half'])} | {best} |"
        )
    lines += ["", "## Largest gain per scheduler", ""]
    tops: dict[str, dict[Any, Any]] = {}
    for row in records:
        if math.isnan(row["gain_max"]):
            continue
        top = tops.get(row["scheduler"])
        if top is None or row["gain_max"] > top["gain_max"]:
            tops[row["scheduler"]] = row
    folder = root / "counterexamples"
    data = cfg.model_dump(mode="json")
    entries = dict(zip(cfg.scheduler_labels(), data["schedulers"], strict=True))
    for sched, b in tops.items():
        strat = f"{b['strategy']}:{b['params']}"
        seed = int(b["gain_max_seed"])
        path = folder / f"{sched}.yaml"
        command = (
            f"fairsim strategy {path.relative_to(root)} --users '{b['gain_max_user']}' "
            f"--strategy {strat} --seeds {seed} --out DIR"
        )
        one = parse_config({**data, "seed": seed, "schedulers": [entries[sched]]})
        gain = f"{100 * b['gain_max']:+.2f} %"
        write_text(
            path,
            f"# The largest gain of {cfg.name} under {sched}: {gain} for one user. Replay\n"
            f"# (from the study's folder):\n#   {command}\n"
            + one.to_yaml(base=base, folder=folder),
        )
        lines.append(
            f"- {sched}: {gain} for user `{b['gain_max_user']}` with `{strat}`, seed {seed}; "
            f"replay: `{command}`"
        )
    if failed:
        lines += ["", "## Failed runs", ""]
        lines += [f"- {rid}: {err}" for rid, err in sorted(failed.items())]
    lines += ["", "![gain by scheduler and strategy](gain.png)", ""]
    write_text(root / "report.md", "\n".join(lines))

    fig = Figure(figsize=(max(6.0, 1.2 * summary["scheduler"].nunique() + 3), 4.0))
    ax = fig.add_subplot()
    labels = list(
        dict.fromkeys(
            f"{s}:{p}" for s, p in zip(summary["strategy"], summary["params"], strict=True)
        )
    )
    scheds = list(dict.fromkeys(summary["scheduler"]))
    width = 0.8 / max(1, len(labels))
    for j, lab in enumerate(labels):
        part = summary[summary["strategy"] + ":" + summary["params"] == lab].set_index("scheduler")
        x = [i + (j - (len(labels) - 1) / 2) * width for i in range(len(scheds))]
        y = [100 * part["gain_mean"].get(s, math.nan) for s in scheds]
        err = [100 * part["gain_half"].get(s, math.nan) for s in scheds]
        ax.bar(x, y, width, yerr=np.nan_to_num(err), capsize=2, label=lab)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(scheds)), scheds)
    ax.set_xlabel("scheduler")
    ax.set_ylabel("gain in tasks completed by the horizon (%)\nmean over seeds, 95 % CI")
    ax.legend(title="strategy", fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(fig, root / "gain.png")
