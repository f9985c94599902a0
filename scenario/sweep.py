"""``fairsim sweep``: one scenario over a grid of config values × seeds, resumable, on a local
process pool or a Dask cluster.

A sweep file::

    name: drfh-table-ii
    base: {trace: {...}, cluster: {...}, collect: {...}}   # a run config without name
    grid:                                                  # dotted config paths -> value lists
      schedulers: [[slots-10], [slots-14], [bf-drfh]]
      cluster.servers: [500, 2000]
    seeds: [1, 2, 3, 4, 5]

expands to the Cartesian product of the grid × the seeds (grid paths in file order, seeds last).
Each run's config is ``base`` with ``name`` set to the sweep's name, the grid values applied and
``seed`` set; its ``run_id`` is :meth:`RunConfig.config_hash` of that config, so it depends only
on what is simulated, never on the order of the grid, the executor or the machine.

Output folder ``OUT``:

``OUT/<run_id>/``
    The ``fairsim run`` files of the run (``config.yaml``, ``servers.parquet``, per scheduler
    ``tasks/jobs/users/utilization.parquet`` and ``summary.json``) plus ``DONE`` (JSON: run_id,
    seed, ``wall_s``). A run is written into ``OUT/.<run_id>.*.tmp`` and renamed into place
    only when complete (:func:`fairsim.atomic.atomic_dir`), so ``OUT/<run_id>/DONE`` exists
    exactly for finished runs.
``OUT/runs.parquet``
    Tidy: one row per (run, scheduler): ``run_id``, one column per grid path (lists and mappings
    as JSON text), ``seed``, ``scheduler``, ``status`` (``ok``/``failed``), ``error``, ``wall_s``
    (of the whole run), ``tasks``, ``tasks_completed``, ``completion_ratio``, ``util_cpu``,
    ``util_mem`` (mean utilisation, fraction of total capacity), ``mean_jct_s``,
    ``median_jct_s``. Rows follow the expansion order. Rewritten atomically after every run.

Re-running the same command skips runs whose ``DONE`` marker exists and redoes the rest
(unfinished or failed); a sweep file that only adds runs (grid values, seeds) extends ``OUT``,
and one that would leave a finished run of ``OUT`` out of its plan (another base, grid, seed list
or name) is refused, as ``fairsim strategy`` refuses another study's runs. Ctrl-C cancels the
pending runs, stops the ones in progress (their temporary folders removed), keeps the finished
ones and rewrites ``runs.parquet``. The local
pool's workers leave Ctrl-C to the sweep process, which stops them with SIGTERM (killed after
:data:`STOP_GRACE_S`); a worker also stops by itself when the sweep process is gone, whatever
killed it. A failing run is recorded (``status == "failed"`` and its error) and does not stop
the others.

:func:`run_seeds` runs any function over seeds on the same local pool (the paper reproductions'
seeds, :func:`default_jobs` workers).
"""

from __future__ import annotations

import ast
import itertools
import json
import logging
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from fairsim.atomic import atomic_dir, check_writable_dir
from fairsim.errors import ConfigError, OutputError, unknown_key
from fairsim.scenario.config import (
    MAX_SEED,
    RunConfig,
    check_name,
    parse_config,
    read_yaml,
    set_dotted,
)
from fairsim.scenario.limits import check_limits
from fairsim.simulator.results import write_json, write_table

log = logging.getLogger(__name__)

DONE = "DONE"
RUNS_FILE = "runs.parquet"
#: Headline columns of ``runs.parquet`` taken from each scheduler's ``summary.json``.
METRICS = (
    "tasks",
    "tasks_completed",
    "completion_ratio",
    "util_cpu",
    "util_mem",
    "mean_jct_s",
    "median_jct_s",
)
_TOP_KEYS = ("name", "base", "grid", "seeds")


@dataclass(frozen=True)
class Sweep:
    """A validated sweep specification.

    Attributes
    ----------
    name : str
        Name of the sweep; every run's config has this ``name``.
    base : dict
        The run config shared by every run (without ``name``).
    grid : dict of str to list
        Dotted config path → values, in file order.
    seeds : tuple of int
    """

    name: str
    base: dict[str, Any]
    grid: dict[str, list[Any]]
    seeds: tuple[int, ...]


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep: its grid values, its seed and its resolved config."""

    run_id: str
    params: dict[str, Any]
    seed: int
    config: RunConfig = field(repr=False)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _failed_run(run_id: str, exc: Exception, t0: float) -> dict[str, Any]:
    """The record of a run that raised ``exc`` (logged as a warning): ``status`` ``failed``, the
    error on one line, the seconds since ``t0`` (``time.perf_counter``)."""
    log.warning("run %s failed: %s", run_id, exc)
    return {
        "run_id": run_id,
        "status": "failed",
        "error": _one_line(f"{type(exc).__name__}: {exc}"),
        "wall_s": round(time.perf_counter() - t0, 3),
        "summaries": {},
    }


def parse_sweep(data: Any, *, source: str = "sweep") -> Sweep:
    """Validate the top level of a sweep mapping (not yet the expanded configs).

    Raises
    ------
    ConfigError
        ``<source>: ...``, naming the key and the problem in one line.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping at the top level")
    for key in data:
        if key not in _TOP_KEYS:
            raise ConfigError(f"{source}: {unknown_key(key, _TOP_KEYS)}")
    for key in ("name", "base"):
        if key not in data:
            raise ConfigError(f"{source}: {key}: required key is missing")
    name = data["name"]
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{source}: name: expected a non-empty string (got {name!r})")
    try:
        check_name(name)
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    base = data["base"]
    if not isinstance(base, dict):
        raise ConfigError(f"{source}: base: expected a mapping (a run config without name)")
    for key in ("name", "seed"):
        if key in base:
            what = "the sweep's name" if key == "name" else "the sweep's seeds"
            raise ConfigError(f"{source}: base.{key}: not allowed here ({what} is used)")
    grid = data.get("grid") or {}
    if not isinstance(grid, dict):
        raise ConfigError(f"{source}: grid: expected a mapping of dotted paths to value lists")
    for path, values in grid.items():
        if not isinstance(path, str) or not path:
            raise ConfigError(f"{source}: grid: path {path!r} is not a dotted config path")
        if path in ("name", "seed"):
            raise ConfigError(f"{source}: grid.{path}: not allowed (use the sweep's name/seeds)")
        if not isinstance(values, list):
            raise ConfigError(f"{source}: grid.{path}: expected a list of values (got {values!r})")
        if not values:
            raise ConfigError(f"{source}: grid.{path}: empty list of values")
    paths = list(grid)
    for i, path in enumerate(paths):
        for other in paths[:i]:
            if _related(other, path):
                raise ConfigError(
                    f"{source}: grid.{path}: overlaps grid.{other} (one holds the other, so "
                    "one's values would silently replace the other's); give only one of them"
                )
    seeds = data.get("seeds", [1])
    if not isinstance(seeds, list) or not seeds:
        raise ConfigError(f"{source}: seeds: expected a non-empty list of integers (got {seeds!r})")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int):
            raise ConfigError(f"{source}: seeds: {s!r} is not an integer")
        if s < 0:
            raise ConfigError(f"{source}: seeds: {s!r} is negative (seeds are integers >= 0)")
        if s > MAX_SEED:
            raise ConfigError(
                f"{source}: seeds: {s!r} is above 2**63 - 1 ({RUNS_FILE} stores seeds as 64-bit "
                "integers)"
            )
    if len(set(seeds)) != len(seeds):
        raise ConfigError(f"{source}: seeds: duplicate seeds in {seeds}")
    return Sweep(name=name, base=base, grid=dict(grid), seeds=tuple(seeds))


def load_sweep(path: str | Path) -> Sweep:
    """Read and validate a sweep YAML file (top level only; see :func:`expand`).

    Raises
    ------
    ConfigError
        If the file is missing, is not valid YAML or is malformed.
    """
    return parse_sweep(read_yaml(path, "sweep"), source=str(path))


def run_data(sweep: Sweep, params: dict[str, Any], seed: int) -> dict[str, Any]:
    """The plain config mapping of one run (before validation)."""
    data: dict[str, Any] = json.loads(json.dumps(sweep.base))
    data["name"] = sweep.name
    for path, value in params.items():
        set_dotted(data, path, json.loads(json.dumps(value)), where=f"grid.{path}")
    data["seed"] = seed
    return data


def _related(path: str, field: str) -> bool:
    """Whether dotted ``path`` and ``field`` lie on one branch (one is a prefix of the other)."""
    a, b = path.split("."), field.split(".")
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def expand(sweep: Sweep) -> list[RunSpec]:
    """Every run of the sweep, validated, in expansion order (grid product, then seeds).

    ``base`` need not be a complete run config: it may leave out what every grid point supplies
    (e.g. ``schedulers``), since only the combined configs are validated. The first grid point
    (every path's first value) is checked first, then each value of each path with the other
    paths at their first values, so that an unknown path or a bad value is reported with its
    path and value; then every combination is validated.

    Raises
    ------
    ConfigError
        One line naming the grid path (and value) that does not validate, or two grid points that
        resolve to the same config.
    """
    first_seed = sweep.seeds[0]

    def check(params: dict[str, Any], blame: str | None) -> None:
        try:
            parse_config(run_data(sweep, params, first_seed))
        except ConfigError as exc:
            msg = _one_line(str(exc)).removeprefix("config: ")
            if blame is None:  # the first grid point: the grid path the message names, or base
                field = msg.split(":", 1)[0]
                hits = [p for p in params if _related(p, field)]
                blame = (
                    f"grid.{hits[0]} = {params[hits[0]]!r}"
                    if len(hits) == 1
                    else f"base (at grid point {params!r})"
                    if params
                    else "base"
                )
            raise ConfigError(f"{blame}: {msg}") from None

    first = {path: values[0] for path, values in sweep.grid.items()}
    check(first, None)
    for path, values in sweep.grid.items():
        for value in values:
            check({**first, path: value}, f"grid.{path} = {value!r}")
    paths = list(sweep.grid)
    runs: list[RunSpec] = []
    seen: dict[str, dict[str, Any]] = {}
    for combo in itertools.product(*(sweep.grid[p] for p in paths)):
        params = dict(zip(paths, combo, strict=True))
        for seed in sweep.seeds:
            try:
                cfg = parse_config(run_data(sweep, params, seed))
            except ConfigError as exc:
                raise ConfigError(
                    f"grid point {params!r}, seed {seed}: "
                    f"{_one_line(str(exc)).removeprefix('config: ')}"
                ) from None
            run_id = cfg.config_hash()
            if run_id in seen:
                raise ConfigError(
                    f"grid: points {seen[run_id]!r} and {params!r} (seed {seed}) resolve to the "
                    "same config"
                )
            seen[run_id] = params
            runs.append(RunSpec(run_id=run_id, params=params, seed=seed, config=cfg))
    return runs


# --------------------------------------------------------------------------- one run


def execute_run(config: dict[str, Any], out: str, run_id: str, base: str | None) -> dict[str, Any]:
    """Run one config into ``OUT/<run_id>`` (temporary folder, renamed when complete).

    Runs in a worker process (pool or Dask); everything it needs is in its arguments, so the
    files depend only on the config and its seed.

    Returns
    -------
    dict
        ``run_id``, ``status`` (``ok``/``failed``), ``error``, ``wall_s`` and ``summaries``
        (scheduler → ``summary.json``) when ok.
    """
    from fairsim.scenario.output import run_to_folder

    final = Path(out) / run_id
    t0 = time.perf_counter()
    try:
        cfg = parse_config(config)
        with atomic_dir(final, overwrite=True, what=f"run {run_id}") as tmp:
            summaries = run_to_folder(
                cfg, tmp, base=Path(base) if base else None, progress=False, report=False
            )
            wall = round(time.perf_counter() - t0, 3)
            write_json({"run_id": run_id, "seed": cfg.seed, "wall_s": wall}, tmp / DONE)
    except Exception as exc:
        if _STOPPING.is_set():
            # Told to stop, and the stop surfaced as another error: Python wraps an exception
            # raised in ``__set_name__`` in a RuntimeError (a class body run by a lazy import,
            # numba's for one), and libraries may wrap it too. The run was stopped, not failed.
            raise _Stopped from exc
        return _failed_run(run_id, exc, t0)
    return {"run_id": run_id, "status": "ok", "error": None, "wall_s": wall, "summaries": summaries}


def finished_result(out: Path, run: RunSpec) -> dict[str, Any] | None:
    """The result of a run finished earlier (its ``DONE`` marker exists), read from disk."""
    folder = out / run.run_id
    marker = folder / DONE
    if not marker.is_file():
        return None
    try:
        done = json.loads(marker.read_text())
        summaries = {
            s: json.loads((folder / s / "summary.json").read_text())
            for s in run.config.scheduler_labels()
        }
    except (OSError, ValueError):
        return None
    return {
        "run_id": run.run_id,
        "status": "ok",
        "error": None,
        "wall_s": done.get("wall_s"),
        "summaries": summaries,
    }


# --------------------------------------------------------------------------- runs table


def _grid_column(values: list[Any]) -> list[Any]:
    if all(isinstance(v, str) for v in values):
        return values
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return values
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values]
    return [v if isinstance(v, str) else json.dumps(v) for v in values]


def runs_frame(
    sweep: Sweep, runs: list[RunSpec], results: dict[str, dict[str, Any]]
) -> pd.DataFrame:
    """The tidy ``runs.parquet`` table: one row per (run, scheduler) of the runs with a result."""
    rows: list[dict[str, Any]] = []
    for run in runs:
        res = results.get(run.run_id)
        if res is None:
            continue
        for sched in run.config.scheduler_labels():
            s = res["summaries"].get(sched, {})
            util = s.get("mean_utilization") or {}
            row: dict[str, Any] = {"run_id": run.run_id, **run.params, "seed": run.seed}
            row.update(
                scheduler=sched,
                status=res["status"],
                error=res["error"],
                wall_s=res["wall_s"],
                tasks=s.get("tasks"),
                tasks_completed=s.get("tasks_completed"),
                completion_ratio=s.get("completion_ratio"),
                util_cpu=util.get("cpu"),
                util_mem=util.get("mem"),
                mean_jct_s=s.get("mean_jct_s"),
                median_jct_s=s.get("median_jct_s"),
            )
            rows.append(row)
    columns = ["run_id", *sweep.grid, "seed", "scheduler", "status", "error", "wall_s", *METRICS]
    frame = pd.DataFrame(rows, columns=columns)
    for path in sweep.grid:
        frame[path] = pd.Series(_grid_column(list(frame[path])), index=frame.index, dtype=object)
        if frame[path].map(type).nunique() <= 1 and len(frame):
            frame[path] = frame[path].infer_objects()
    frame["seed"] = frame["seed"].astype("int64")
    frame["error"] = frame["error"].astype("string")
    for col in ("wall_s", "completion_ratio", "util_cpu", "util_mem", "mean_jct_s", "median_jct_s"):
        frame[col] = frame[col].astype("float64")
    for col in ("tasks", "tasks_completed"):
        frame[col] = frame[col].astype("Int64")
    return frame


def write_runs(frame: pd.DataFrame, out: Path) -> Path:
    """Write ``OUT/runs.parquet`` atomically."""
    path = out / RUNS_FILE
    write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    return path


# --------------------------------------------------------------------------- executors


@dataclass
class _Backend:
    """Submit/iterate/cancel over a process pool or a Dask client (lazily imported).

    ``cancel`` returns whether no run is in progress any more (the local pool's workers are
    gone), so that the temporary folders of the stopped runs may be removed. The futures of
    ``submit`` give their run's result, or raise, by ``result()`` (concurrent and Dask alike).
    """

    submit: Callable[..., Any]
    completed: Callable[[list[Any]], Iterator[Any]]
    cancel: Callable[[list[Any]], bool]
    close: Callable[[], None]
    workers: int


def parse_executor(spec: str) -> tuple[str, Any]:
    """``serial`` / ``local:N`` / ``dask-local:N`` / ``dask://host:port`` → (kind, N or address).

    ``serial`` runs one run after the other in this process (no worker processes): schedulers
    registered in this session with :func:`~fairsim.schedulers.registry.register_scheduler`
    (a notebook's ``__main__``) are found, which a spawned worker cannot import.

    Raises
    ------
    ConfigError
        If the spec is malformed.
    """
    if spec == "serial":
        return "serial", 1
    if spec.startswith("dask://"):
        address = spec.removeprefix("dask://")
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"--executor {spec!r}: expected dask://host:port")
        return "dask", f"tcp://{address}"
    kind, _, n = spec.partition(":")
    if kind not in ("local", "dask-local"):
        raise ConfigError(
            f"--executor {spec!r}: expected local:N, dask-local:N, dask://host:port or serial"
        )
    if n == "":
        return kind, os.cpu_count() or 1
    if not n.isdigit() or int(n) < 1:
        raise ConfigError(f"--executor {spec!r}: N must be a positive integer (got {n!r})")
    return kind, int(n)


#: Seconds a local pool worker is given to remove its run's temporary folder once told to stop
#: (SIGTERM from the sweep, or the sweep process gone) before it is killed.
STOP_GRACE_S = 3.0


class _Stopped(BaseException):
    """Raised in a local pool worker's run when it is told to stop: unwinds like Ctrl-C, so
    :func:`fairsim.atomic.atomic_dir` removes the run's temporary folder."""


#: Set while a local pool worker executes a run, and once it has been told to stop (read by
#: its SIGTERM handler).
_IN_RUN = threading.Event()
_STOPPING = threading.Event()


def _on_sigterm(signum: int, frame: Any) -> None:
    if _STOPPING.is_set():
        return  # already unwinding: let the clean-up finish
    if not _IN_RUN.is_set():
        os._exit(128 + signum)
    _STOPPING.set()
    raise _Stopped


def _watch_parent(parent: Any) -> None:
    """Stop this worker once the process that started it is gone, whatever killed it."""
    parent.join()  # returns when the parent's end of the spawn pipe closes: it has exited
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(STOP_GRACE_S)  # the run did not unwind in time (a long call into C)
    os._exit(128 + signal.SIGTERM)


def _worker_init() -> None:
    """Set up a local pool worker.

    Ctrl-C is left to the sweep process (a terminal sends SIGINT to the whole process group),
    which stops its workers with SIGTERM; SIGTERM stops a run with its temporary folder removed;
    and a watchdog thread stops the worker when the sweep process is gone (SIGKILL included).
    """
    import multiprocessing

    from tqdm import tqdm

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    # Runs show no progress bars here. tqdm's default lock is a multiprocessing semaphore, which
    # a stopped worker (os._exit) would leave to the resource tracker to unlink, with a warning.
    tqdm.set_lock(threading.RLock())
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _run_in_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` in a local pool worker; a stop request ends the worker once it unwound."""
    try:
        _IN_RUN.set()
        result = fn(*args)
    except _Stopped:
        os._exit(128 + signal.SIGTERM)
    finally:
        _IN_RUN.clear()
    if _STOPPING.is_set():  # the stop was swallowed inside the run: its result is not sent back
        os._exit(128 + signal.SIGTERM)
    return result


def _local_backend(n: int) -> _Backend:
    import concurrent.futures as cf
    import multiprocessing

    pool = cf.ProcessPoolExecutor(
        max_workers=n, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init
    )

    def submit(fn: Callable[..., Any], *args: Any) -> Any:
        return pool.submit(_run_in_worker, fn, *args)

    def completed(futs: list[Any]) -> Iterator[Any]:
        return cf.as_completed(futs)

    def cancel(futs: list[Any]) -> bool:
        # Stop every worker: SIGTERM makes one remove its run's temporary folder and exit; one
        # that has not within STOP_GRACE_S (or at a second Ctrl-C) is killed, and run_sweep
        # removes what it left. The pool then finds its workers gone, fails the pending futures
        # (BrokenProcessPool, never read) and shuts down without waiting for anything.
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for proc in procs:
            proc.terminate()
        try:
            deadline = time.monotonic() + STOP_GRACE_S
            for proc in procs:
                proc.join(max(0.0, deadline - time.monotonic()))
        finally:
            for proc in procs:
                if proc.exitcode is None:
                    proc.kill()
        for proc in procs:
            proc.join()
        return True

    return _Backend(
        submit=submit,
        completed=completed,
        cancel=cancel,
        close=lambda: pool.shutdown(wait=True, cancel_futures=True),
        workers=n,
    )


def _dask_backend(kind: str, arg: Any) -> _Backend:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError(
            "--executor: Dask is not installed (pip install 'fairsim[dask]')"
        ) from None
    cluster = None
    if kind == "dask-local":
        cluster = LocalCluster(
            n_workers=arg,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
        workers = int(arg)
    else:
        try:
            client = Client(arg, timeout="2s")
        except (OSError, TimeoutError) as exc:
            raise ConfigError(
                f"--executor dask://{arg.removeprefix('tcp://')}: cannot reach the Dask scheduler "
                f"({_one_line(str(exc)) or type(exc).__name__})"
            ) from None
        workers = len(client.scheduler_info().get("workers", {})) or 1

    def submit(fn: Callable[..., Any], *args: Any) -> Any:
        return client.submit(fn, *args, key=f"fairsim-run-{args[2]}", pure=False)

    def cancel(futs: list[Any]) -> bool:
        client.cancel(futs)
        return False  # a task already running on a worker goes on

    def close() -> None:
        client.close()
        if cluster is not None:
            cluster.close()

    return _Backend(
        submit=submit,
        completed=lambda futs: iter(as_completed(futs)),
        cancel=cancel,
        close=close,
        workers=workers,
    )


def _is_main_test(test: ast.expr) -> bool:
    """Whether an ``if`` tests ``__name__ == "__main__"`` (either way round)."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
    ):
        return False
    sides = (test.left, test.comparators[0])
    return any(isinstance(x, ast.Name) and x.id == "__name__" for x in sides) and any(
        isinstance(x, ast.Constant) and x.value == "__main__" for x in sides
    )


def guarded(source: str, line: int) -> bool:
    """Whether line ``line`` of a script's ``source`` lies in the body of an
    ``if __name__ == "__main__":`` block (at any depth).

    Examples
    --------
    >>> src = "import fairsim\\nif __name__ == '__main__':\\n    fairsim.sweep()\\n"
    >>> guarded(src, 3), guarded(src, 1)
    (True, False)
    """
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and node.body and _is_main_test(node.test):
            last = node.body[-1]
            if node.body[0].lineno <= line <= (last.end_lineno or last.lineno):
                return True
    return False


#: What a script whose sweep starts worker processes must add (one line, the docs' section).
MAIN_GUARD = (
    'put that call under `if __name__ == "__main__":` (docs/sweeps.md, "From Python"), or '
    "run with executor='serial'"
)


def _unguarded_main_call() -> tuple[str, int] | None:
    """Where the running script calls into this sweep from its top-level code outside
    ``if __name__ == "__main__":``, or None.

    A local pool (and a ``dask-local`` cluster) starts its workers with multiprocessing's
    *spawn* method, which runs the main script again in each worker (as ``__mp_main__``) before
    it takes work: top-level code that starts a sweep would start one in every worker, and
    multiprocessing stops each of them with a traceback. Only a script that spawn runs again
    is looked at (a file, or a module run with ``python -m``; not a package's ``__main__.py``,
    an interactive session or a notebook); a source that cannot be read is given the benefit
    of the doubt.

    Returns
    -------
    tuple of (str, int) or None
        The script's path and the line of its top-level statement that leads here.
    """
    main = sys.modules.get("__main__")
    spec_name = getattr(getattr(main, "__spec__", None), "name", None)
    if main is None or (spec_name or "").split(".")[-1] == "__main__":
        return None  # a package's __main__.py: spawn does not run it again
    path = getattr(main, "__file__", None)
    if not path or os.path.splitext(os.path.basename(path))[0] == "ipython":
        return None
    frame = sys._getframe(1)
    while frame is not None and not (
        frame.f_globals is vars(main) and frame.f_code.co_name == "<module>"
    ):
        frame = frame.f_back  # type: ignore[assignment]
    if frame is None:
        return None  # not called from the script's top-level code
    line = frame.f_lineno
    try:
        source = Path(path).read_text(encoding="utf-8")
        return None if guarded(source, line) else (str(path), line)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None


def _refuse_unguarded(spec: str) -> None:
    """Refuse a process-pool sweep started by a script's unguarded top-level code, and stop a
    spawned worker that runs such a script again (:func:`_unguarded_main_call`).

    Raises
    ------
    ConfigError
        ``executor 'local:2': script.py line 4 starts the sweep at its top level, which every
        worker process runs again when it starts; put that call under ...``.
    SystemExit
        In a worker process being started (the check was bypassed): with that message, once.
    """
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # a spawned worker running the main script again before it takes work: one line
        # instead of multiprocessing's bootstrapping traceback
        raise SystemExit(
            "fairsim: error: a sweep worker process started a sweep while it was starting; "
            + MAIN_GUARD
        )
    where = _unguarded_main_call()
    if where is not None:
        path, line = where
        raise ConfigError(
            f"executor {spec!r}: {os.path.basename(path)} line {line} starts the sweep at its "
            "top level, which every worker process runs again when it starts; " + MAIN_GUARD
        )


def _refuse_unimportable(configs: list[RunConfig], spec: str) -> None:
    """Refuse a scheduler class defined in ``__main__`` (a notebook, a script) for an executor
    whose workers are other processes: they import schedulers by name and cannot see it.

    Raises
    ------
    ConfigError
        Naming the scheduler and the way out (``executor="serial"``, or a module of its own).
    """
    from fairsim.schedulers.registry import resolve

    for cfg in configs:
        for entry in cfg.schedulers:
            spec_ = resolve(entry)
            if spec_.cls.__module__ == "__main__":
                raise ConfigError(
                    f"executor {spec!r}: scheduler {spec_.name!r} ({spec_.cls.__qualname__}) "
                    "is defined in __main__, which worker processes cannot import; run the sweep "
                    "with executor='serial', or move the class into a module (or a package with "
                    "an entry point)"
                )


def make_backend(spec: str) -> _Backend:
    """Start the executor named by ``spec`` (see :func:`parse_executor`)."""
    kind, arg = parse_executor(spec)
    if kind == "serial":
        return _serial_backend()
    if kind == "local":
        return _local_backend(arg)
    return _dask_backend(kind, arg)


def default_jobs(n_seeds: int, jobs: int | None = None) -> int:
    """Worker processes for ``n_seeds`` seeds: ``jobs`` (default one per core), at least one and
    at most one per seed."""
    return max(1, min(n_seeds, (os.cpu_count() or 1) if jobs is None else int(jobs)))


def run_seeds(
    fn: Callable[..., Any],
    seeds: Sequence[int],
    *args: Any,
    jobs: int | None = None,
    progress: bool = True,
    desc: str = "seeds",
) -> list[Any]:
    """``[fn(seed, *args) for seed in seeds]``, over ``jobs`` worker processes.

    Parameters
    ----------
    fn : callable
        A module-level function (workers import it by name); it gets the seed first.
    seeds : sequence of int
        The seeds.
    *args
        Further arguments of ``fn`` (picklable).
    jobs : int, optional
        Worker processes (default :func:`default_jobs`); 1 runs in this process.
    progress : bool
        A progress bar over the seeds.
    desc : str
        The progress bar's label.

    Returns
    -------
    list
        ``fn``'s results, in the order of ``seeds``.

    Notes
    -----
    The workers are the local process pool of :func:`make_backend` (spawned, stopped with their
    temporary folders removed on Ctrl-C); a worker shows no progress bars of its own. The paper
    reproductions run their seeds with it.
    """
    from tqdm import tqdm

    seeds = list(seeds)
    n = default_jobs(len(seeds), jobs)
    if n == 1:
        return [
            fn(s, *args) for s in tqdm(seeds, desc=desc, disable=not progress or len(seeds) < 2)
        ]
    backend = make_backend(f"local:{n}")
    futs = {}
    try:
        futs = {backend.submit(fn, s, *args): i for i, s in enumerate(seeds)}
        results: list[Any] = [None] * len(seeds)
        for fut in tqdm(
            backend.completed(list(futs)), total=len(futs), desc=desc, disable=not progress
        ):
            results[futs[fut]] = fut.result()
        return results
    except BaseException:
        backend.cancel(list(futs))
        raise
    finally:
        backend.close()


def _serial_backend() -> _Backend:
    """Runs in this process, one at a time, as the caller takes them from ``completed``
    (``executor="serial"``): each result reaches the caller (``runs.parquet`` rewritten) before
    the next run starts, and Ctrl-C stops at the run in progress with the earlier ones
    recorded."""
    import concurrent.futures as cf

    pending: dict[Any, tuple[Callable[..., Any], tuple[Any, ...]]] = {}

    def submit(fn: Callable[..., Any], *args: Any) -> Any:
        fut: cf.Future[Any] = cf.Future()
        pending[fut] = (fn, args)
        return fut

    def completed(futs: list[Any]) -> Iterator[Any]:
        for fut in list(futs):
            fn, args = pending.pop(fut)
            try:
                fut.set_result(fn(*args))
            except Exception as exc:  # execute_run reports its own failures; anything else here
                fut.set_exception(exc)
            yield fut

    def cancel(futs: list[Any]) -> bool:
        pending.clear()
        return True

    return _Backend(
        submit=submit,
        completed=completed,
        cancel=cancel,
        close=pending.clear,
        workers=1,
    )


# --------------------------------------------------------------------------- the sweep


def execute_runs(
    backend: _Backend,
    calls: list[tuple[Callable[..., dict[str, Any]], tuple[Any, ...]]],
    root: Path,
    done: Callable[[dict[str, Any]], None],
) -> None:
    """Submit every call to ``backend`` and hand each result to ``done`` as it finishes.

    The run loop of ``fairsim sweep`` and ``fairsim strategy``: each call is ``fn(*args)`` with
    ``args[2]`` the run id (a worker that dies makes a failed result naming it). Ctrl-C cancels
    the pending calls and stops those in progress (their temporary folders in ``root`` removed,
    :func:`_remove_stale`), then re-raises.

    Parameters
    ----------
    backend : _Backend
        :func:`make_backend`'s executor (closed by the caller).
    calls : list of (callable, tuple)
        ``(fn, args)``; ``fn`` returns a result mapping with ``run_id``, ``status``, ``error``.
    root : Path
        The output folder.
    done : callable
        ``done(result)``, in completion order.
    """
    futures: list[Any] = []
    run_of: dict[Any, str] = {}
    try:
        for fn, args in calls:
            fut = backend.submit(fn, *args)
            futures.append(fut)
            run_of[fut] = args[2]
        for fut in backend.completed(futures):
            try:
                res = fut.result()
            except Exception as exc:  # the worker died (OOM kill, Dask KilledWorker, ...)
                res = {
                    "run_id": run_of[fut],
                    "status": "failed",
                    "error": _one_line(f"{type(exc).__name__}: {exc}") or type(exc).__name__,
                    "wall_s": None,
                    "summaries": {},
                }
            done(res)
    except KeyboardInterrupt:
        if backend.cancel(futures):
            _remove_stale(root)  # what a worker killed before it cleaned up left
        raise


def guard_executor(spec: str) -> str:
    """Parse an executor spec (:func:`parse_executor`) and, for ``local:N`` and
    ``dask-local:N``, refuse a script whose unguarded top-level code starts the runs
    (:func:`_refuse_unguarded`). Returns the executor's kind.

    Raises
    ------
    ConfigError
    """
    kind, _ = parse_executor(spec)
    if kind in ("local", "dask-local"):  # workers started by spawn run the main script again
        _refuse_unguarded(spec)
    return kind


def check_executor(spec: str, configs: list[RunConfig]) -> None:
    """Refuse runs an executor cannot run, before anything is written: (local and serial) a
    run this machine cannot hold (:func:`~fairsim.scenario.limits.check_limits`); (every
    executor but serial) a scheduler defined in ``__main__``.

    Raises
    ------
    ConfigError
    """
    kind, _ = parse_executor(spec)
    if kind in ("local", "serial"):  # runs on this machine: refuse what it cannot hold first
        for cfg in configs:
            check_limits(cfg)
    if kind != "serial":
        _refuse_unimportable(configs, spec)


def prepare_traces(configs: list[RunConfig], base: Path | None, progress: bool) -> None:
    """Convert each Google 2011 trace once, before any run, so workers never race on the cache."""
    from fairsim.scenario.trace_cache import converted_google

    seen: set[str] = set()
    for cfg in configs:
        trace = cfg.trace
        key = json.dumps(trace.model_dump(mode="json"), sort_keys=True)
        if trace.format == "google-2011" and key not in seen:
            seen.add(key)
            converted_google(trace, base, progress)


def _is_temporary(p: Path) -> bool:
    """A temporary file or folder of an interrupted write (:mod:`fairsim.atomic`)."""
    name = p.name
    return name.startswith(".tmp-") or (name.startswith(".") and name.endswith((".tmp", ".old")))


def _remove_stale(root: Path) -> None:
    for stale in root.iterdir():
        if _is_temporary(stale):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)


def _check_out(root: Path) -> None:
    """Refuse an ``OUT`` that is a file, lies below one, cannot be written, or is a non-empty
    folder that is not a sweep's (no ``runs.parquet``, no run folder with ``DONE``).

    Raises
    ------
    OutputError
    """
    check_writable_dir(root)
    if not root.is_dir():
        return
    entries = [p for p in root.iterdir() if not _is_temporary(p)]
    if entries and not (root / RUNS_FILE).is_file() and not list(root.glob(f"*/{DONE}")):
        raise OutputError(
            f"--out: {str(root)!r} is a non-empty folder that is not a sweep's output "
            f"(no {RUNS_FILE}); choose another folder"
        )


def _check_same_sweep(root: Path, runs: list[RunSpec]) -> None:
    """Refuse to resume into ``root`` when it holds a finished run this sweep does not plan.

    A run's folder is named by its config's hash, so an edited sweep file (another base, grid,
    seed list or name) in the same ``OUT`` would rewrite ``runs.parquet`` for its own runs and
    leave the earlier ones beside them, orphaned. As ``fairsim strategy`` refuses another
    study's runs: every finished run (``<run_id>/DONE``) must be one of ``runs``; a sweep that
    only adds runs (grid values, seeds) resumes and extends the folder.

    Raises
    ------
    OutputError
        One line naming the folder, how many finished runs are not this sweep's and the first.
    """
    if not root.is_dir():
        return
    planned = {run.run_id for run in runs}
    other = sorted(
        p.parent.name
        for p in root.glob(f"*/{DONE}")
        if p.parent.name not in planned and not _is_temporary(p.parent)
    )
    if other:
        n = len(other)
        raise OutputError(
            f"--out: {str(root)!r} holds another sweep's runs ({n} finished run"
            f"{'s' if n > 1 else ''} that this sweep does not plan, e.g. {other[0]}: its base, "
            "grid, seeds or name differ); choose another folder, or remove it to start over"
        )


def run_sweep(
    sweep: Sweep,
    out: str | Path,
    *,
    executor: str | None = None,
    base: str | Path | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Run every unfinished run of ``sweep`` into ``out`` and write ``runs.parquet``.

    Parameters
    ----------
    sweep : Sweep
    out : path-like
        Output folder ``OUT``.
    executor : str, optional
        ``local:N`` (default ``local:<cores>``), ``dask-local:N`` or ``dask://host:port``.
    base : path-like, optional
        Folder of the sweep file: relative trace paths that do not exist as given are resolved
        against it.
    progress : bool
        Show a progress bar over runs (with an estimate of the remaining time).

    Returns
    -------
    pandas.DataFrame
        The ``runs.parquet`` table.

    Raises
    ------
    ConfigError
        Bad sweep, bad executor spec, Dask executor without Dask installed, unreachable Dask
        scheduler, (local executor) a run whose sizes do not fit in this machine's memory
        (:func:`fairsim.scenario.limits.check_limits`), or (``local:N``, ``dask-local:N``) a
        script that starts the sweep from top-level code outside ``if __name__ ==
        "__main__":`` (:func:`_unguarded_main_call`); raised before anything is created or
        written in ``out``.
    OutputError
        ``out`` cannot be written, is a non-empty folder that is not a sweep's, or holds a
        finished run this sweep does not plan (another sweep's: :func:`_check_same_sweep`).
    KeyboardInterrupt
        After cancelling the pending runs and writing ``runs.parquet`` for the finished ones.
    """
    from tqdm import tqdm

    spec = executor or f"local:{os.cpu_count() or 1}"
    guard_executor(spec)
    runs = expand(sweep)
    check_executor(spec, [run.config for run in runs])
    root = Path(out)
    _check_out(root)
    _check_same_sweep(root, runs)
    results: dict[str, dict[str, Any]] = {}
    todo: list[RunSpec] = []
    for run in runs:
        done = finished_result(root, run)
        if done is None:
            todo.append(run)
        else:
            results[run.run_id] = done
    log.info("%d runs: %d finished earlier, %d to run", len(runs), len(results), len(todo))
    base_dir = str(Path(base).resolve()) if base is not None else None
    # Before anything is created: a missing Dask extra or an unreachable scheduler leaves no OUT.
    backend = make_backend(spec) if todo else None
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if backend is not None:
            backend.close()
        raise OutputError(f"--out: cannot create {str(root)!r} ({exc.strerror or exc})") from None
    _remove_stale(root)
    if backend is None:
        frame = runs_frame(sweep, runs, results)
        write_runs(frame, root)
        return frame
    bar = tqdm(
        total=len(runs), initial=len(results), unit="run", desc=sweep.name, disable=not progress
    )

    def record(res: dict[str, Any]) -> None:
        results[res["run_id"]] = res
        write_runs(runs_frame(sweep, runs, results), root)
        bar.update(1)
        if res["status"] != "ok":
            bar.write(f"run {res['run_id']} failed: {res['error']}")

    try:
        prepare_traces([run.config for run in todo], Path(base_dir) if base_dir else None, progress)
        calls = [
            (
                execute_run,
                (run.config.model_dump(mode="json"), str(root.resolve()), run.run_id, base_dir),
            )
            for run in todo
        ]
        execute_runs(backend, calls, root, record)
    except KeyboardInterrupt:
        write_runs(runs_frame(sweep, runs, results), root)
        raise
    finally:
        bar.close()
        backend.close()
    frame = runs_frame(sweep, runs, results)
    write_runs(frame, root)
    return frame
