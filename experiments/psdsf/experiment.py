"""The runs of the PS-DSF reproduction (``make reproduce-psdsf``): Section V, Table IV and Fig. 6.

PS-DSF paper (Khamse-Ashari et al.), Section V, on ``configs/psdsf-fig6.yaml``: 120 servers in
four classes, four weighted users, user 4 inactive in (100, 250) s. The class counts and demand
vectors the text does not give are recovered from Table III (``docs/psdsf.md``, which also gives
the scenario's choices); user 2's CPU demand is open (any value <= 2/15), and
:data:`D2_CPU_ALTERNATIVE` is the report's sensitivity check. Every paper task runs as ``SPLIT``
small tasks, users are backlogged while active (:mod:`fairsim.simulator.backlog`), and PS-DSF is
the distributed online scheduler ``psdsf``. The runs go through the scenario pipeline
(:func:`scenario`).

TSF and C-DRFH as the paper computes them ("For TSF and C-DRFH mechanisms we precisely find
these allocations every second"): the exact divisible allocations of the users active at each
second (:func:`exact_series`), the same in every seed. The online First-Fit ``tsf`` and
``c-drfh`` run beside PS-DSF as an extra, reported apart.

Seed ``s`` sets the config's ``seed``, which draws the only randomness, the run times; seed 1 is
the config's. :func:`run_experiment` writes the per-second series and the summary, and
:mod:`fairsim.experiments.psdsf.report` the figure, claims and report. ``--quick``: paper tasks
split in ``QUICK_SPLIT`` instead of ``SPLIT``, the activity windows and horizon times
``QUICK_TIME``, times reported on the paper's axis.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from fairsim.errors import ConfigError
from fairsim.experiments import config_path
from fairsim.experiments.claims import seed_list
from fairsim.experiments.kit import Options
from fairsim.scenario.config import (
    InlineTrace,
    InlineUser,
    RunConfig,
    component_rng,
    load_config,
    value_range,
)
from fairsim.scenario.pipeline import Hooks, Scenario, SchedulerRun, prepare_scenario
from fairsim.scenario.sweep import run_seeds
from fairsim.scenario.workload import Workload
from fairsim.schedulers.exact import solve_exact
from fairsim.schedulers.exact.instance import Instance
from fairsim.schedulers.registry import make_scheduler
from fairsim.simulator.backlog import BackloggedUser, BacklogTaskSource
from fairsim.simulator.engine import EngineResult
from fairsim.simulator.results import write_json, write_table
from fairsim.simulator.scheduler import Scheduler

log = logging.getLogger(__name__)

CONFIG = config_path("psdsf-fig6.yaml")
#: A paper task runs as this many small tasks (the config's demands are the paper's / SPLIT).
SPLIT = 4
#: With --quick: tasks of the paper's demand / QUICK_SPLIT; windows and horizon times QUICK_TIME.
QUICK_SPLIT = 2
QUICK_TIME = 0.1
#: A change of the active users has settled when the class C and D CPU utilisation stays within
#: CONVERGED of the new phase's steady level for SETTLE_WINDOW_S (simulated) seconds.
CONVERGED = 0.05
SETTLE_WINDOW_S = 5.0
#: The online schedulers run, in the order the report lists them.
SCHEDULERS = ("psdsf", "tsf", "c-drfh")
#: The exact mechanisms recomputed every second.
EXACT = ("psdsf", "tsf", "c-drfh")
#: User 2's CPU demand (paper units) the report compares against: Table III allows any value
#: <= 2/15 (the config's); with this one exact PS-DSF uses 75 % of class D's CPU while user 4
#: is away.
D2_CPU_ALTERNATIVE = 0.1
#: User 2's CPU demands (paper units) of the report's sensitivity table (all allowed by Table III).
D2_CPU_GRID = (0.02, 0.05, 0.08, D2_CPU_ALTERNATIVE, 0.12)


def scenario_users(cfg: RunConfig) -> list[InlineUser]:
    """The scenario's users (its trace is ``inline``: ``configs/psdsf-fig6.yaml``).

    Raises
    ------
    ConfigError
        If the config's trace is of another format.
    """
    if not isinstance(cfg.trace, InlineTrace):
        raise ConfigError(
            f"trace.format: {cfg.trace.format!r} (the PS-DSF reproduction needs format 'inline')"
        )
    return cfg.trace.users


def pool(cfg: RunConfig) -> tuple[np.ndarray, list[str]]:
    """Capacity ``(n_servers, n_resources)`` and class name of every server, from ``classes``."""
    classes = cfg.cluster.classes
    if not classes:
        raise ValueError("cluster.classes: required for the PS-DSF reproduction")
    cap = np.array([c.capacity for c in classes for _ in range(c.count)], dtype=np.float64)
    names = [c.name for c in classes for _ in range(c.count)]
    return cap, names


def _allowed(u: InlineUser, classes: list[str] | np.ndarray) -> np.ndarray:
    """Whether user ``u`` may use each server (``classes``: the class of every server)."""
    return np.isin(classes, u.eligible) if u.eligible else np.ones(len(classes), dtype=bool)


def _backlogged(cfg: RunConfig, scale: float, step_s: float, grow: float) -> list[BackloggedUser]:
    """The config's users (windows times ``scale``, demands times ``grow``); a user's queue
    target: the tasks it could hold alone on its servers times ``step_s`` over its shortest run
    time, plus one."""
    cap, classes = pool(cfg)
    out = []
    for u in scenario_users(cfg):
        d = np.asarray(u.demand, dtype=np.float64) * grow
        with np.errstate(divide="ignore"):
            per = np.floor(np.min(np.where(d > 0, cap / np.where(d > 0, d, 1), np.inf), axis=1))
        hold = float(per[_allowed(u, classes)].sum())
        lo, hi = value_range(u.run_s)
        spans = [(w[0], w[1]) for w in u.windows] if u.windows else [(u.join_s, math.inf)]
        windows = tuple((a * scale, b * scale) for a, b in spans)
        target = math.ceil(hold * step_s / lo) + 1
        out.append(BackloggedUser(u.name, tuple(d.tolist()), (lo, hi), windows, target))
    return out


def scenario(cfg: RunConfig, *, quick: bool = False) -> tuple[Scenario, dict[str, Any]]:
    """The reproduction's scenario, prepared by the scenario pipeline with its hooks.

    The pipeline's workload is replaced by the backlogged users (:func:`_backlogged`:
    every ``step_s`` = half the period, each active user's queue is topped up, reading the
    queue lengths from a :class:`~fairsim.simulator.backlog.QueueCounter` wrapped around the
    scheduler), and each scheduler gets the users' eligible server classes. The pool is the
    config's ``cluster.classes``, the horizon ``collect.horizon_s`` (scaled with ``quick``), the
    grid one point per period (1 s).

    Returns
    -------
    Scenario
    dict
        ``order`` (user names by engine user code), ``classes`` (class of every server),
        ``cap`` (capacity, ``(n_servers, n_resources)``), ``scale`` (time scale) and ``split``
        (small tasks per paper task).
    """
    cap, classes = pool(cfg)
    scale = QUICK_TIME if quick else 1.0
    ends = (w[1] for u in scenario_users(cfg) for w in u.windows or [])
    horizon = (cfg.collect.horizon_s or max(ends)) * scale
    split = QUICK_SPLIT if quick else SPLIT
    period = 1.0
    step = period / 2
    users = _backlogged(cfg, scale, step, grow=SPLIT / split)

    def open_backlog() -> BacklogTaskSource:
        return BacklogTaskSource(
            users,
            resources=("cpu", "mem"),
            end_s=horizon,
            step_s=step,
            rng=component_rng(cfg.seed, "workload"),
        )

    order = tuple(open_backlog().user_order())

    def workload(_cfg: RunConfig, _base: Path | None, _progress: bool) -> Workload:
        return Workload(open_backlog, 0.0, horizon, {"backlogged_users": len(users)}, users=order)

    by_name = {u.name: u for u in scenario_users(cfg)}
    eligible = {
        c: _allowed(by_name[n], classes) for c, n in enumerate(order) if by_name[n].eligible
    }

    def scheduler(run: SchedulerRun) -> Scheduler:
        source = run.source
        assert isinstance(source, BacklogTaskSource)
        return source.attach(make_scheduler(run.spec, weights=run.weights, eligible=eligible))

    grid = {"horizon_s": horizon, "utilization_interval_s": period}
    collect = cfg.collect.model_copy(update=grid)
    prepared = prepare_scenario(
        cfg.model_copy(update={"collect": collect}),
        hooks=Hooks(workload=workload, scheduler=scheduler),
    )
    info = {"order": list(order), "classes": classes, "cap": cap, "scale": scale, "split": split}
    return prepared, info


def series(run: dict[str, Any], cfg: RunConfig) -> pd.DataFrame:
    """Per second (on the paper's time axis): CPU/memory utilisation of every class, and paper
    tasks of every user on every class (running small tasks / split)."""
    res: EngineResult = run["result"]
    scale, cap, classes = run["scale"], run["cap"], np.asarray(run["classes"])
    t = res.tasks
    grid = np.arange(0.0, res.horizon_s + 1e-9, 1.0)
    started = ~np.isnan(t["start_s"])
    start, finish, server, user, demand = (
        t[c][started] for c in ("start_s", "finish_s", "server", "user", "demand")
    )
    # running at g: start <= g < finish (index of first grid point >= start / >= finish)
    i0 = np.searchsorted(grid, start, side="left")
    i1 = np.searchsorted(grid, np.where(np.isnan(finish), np.inf, finish), side="left")
    out: dict[str, np.ndarray] = {"time_s": grid / scale}
    n = len(grid) + 1
    names = [c.name for c in cfg.cluster.classes or []]
    cls_of = classes[server]

    def running(sel: np.ndarray, amount: np.ndarray | float) -> np.ndarray:
        """The sum of ``amount`` over the tasks ``sel`` running at every grid point."""
        acc = np.zeros(n)
        np.add.at(acc, i0[sel], amount)
        np.add.at(acc, i1[sel], -amount)
        return np.cumsum(acc)[:-1]

    for k in names:
        on = cls_of == k
        for r, res_name in enumerate(("cpu", "mem")):
            out[f"{res_name}_{k}"] = running(on, demand[on, r]) / cap[classes == k, r].sum()
        for code, uname in enumerate(run["order"]):
            out[f"tasks_{uname}_{k}"] = running(on & (user == code), 1.0) / run["split"]
    return pd.DataFrame(out)


def exact_allocations(
    cfg: RunConfig,
    active: list[str],
    *,
    mechanisms: tuple[str, ...] = SCHEDULERS,
    demands: dict[str, list[float]] | None = None,
) -> dict[str, np.ndarray]:
    """Exact (divisible) allocations with the paper's demands, ``active`` users only.

    Parameters
    ----------
    cfg : RunConfig
        The scenario (``configs/psdsf-fig6.yaml``); its demands are the paper's / ``SPLIT``.
    active : list of str
        Names of the active users.
    mechanisms : tuple of str
        Exact mechanisms to solve (``fairsim.schedulers.exact``).
    demands : dict, optional
        Paper demands (CPU, memory) replacing the config's for the named users.

    Returns
    -------
    dict
        Mechanism -> tasks per user (rows, in ``active`` order) and class (columns),
        shape ``(len(active), n_classes)``.
    """
    cap, classes = pool(cfg)
    cls = np.asarray(classes)
    by_name = {u.name: u for u in scenario_users(cfg)}
    alt = demands or {}
    inst = Instance(
        resources=("cpu", "mem"),
        server_ids=tuple(f"s{j}" for j in range(len(classes))),
        user_ids=tuple(active),
        capacity=cap,
        demand=np.array(
            [alt[n] if n in alt else [x * SPLIT for x in by_name[n].demand] for n in active],
            dtype=np.float64,
        ),
        weight=np.array([float(by_name[n].weight) for n in active]),
        max_tasks=np.full(len(active), np.inf),
        eligible=np.array([_allowed(by_name[n], cls) for n in active]),
    )
    names = [c.name for c in cfg.cluster.classes or []]
    out = {}
    for mech in mechanisms:
        x = solve_exact(mech, inst)
        out[mech] = np.stack([x[:, cls == k].sum(axis=1) for k in names], axis=1)
    return out


def _util(
    alloc: np.ndarray,
    cfg: RunConfig,
    active: list[str],
    k: str | list[str],
    demands: dict[str, list[float]] | None = None,
    r: int = 0,
) -> float:
    """Utilisation of resource ``r`` (0: CPU, 1: memory) of class ``k`` (or of the union of the
    classes ``k``) under an exact allocation (:func:`exact_allocations`)."""
    group = [k] if isinstance(k, str) else k
    by_name, alt = {u.name: u for u in scenario_users(cfg)}, demands or {}
    need = [alt[n][r] if n in alt else by_name[n].demand[r] * SPLIT for n in active]
    names = [c.name for c in cfg.cluster.classes or []]
    cols = [names.index(g) for g in group]
    total = sum(c.count * c.capacity[r] for c in cfg.cluster.classes or [] if c.name in group)
    used = sum(alloc[i, j] * need[i] for i in range(len(active)) for j in cols)
    return float(used / total)


def active_users(cfg: RunConfig, t: float) -> list[str]:
    """Users active at time ``t`` (s, the paper's axis): a window ``[a, b]`` contains ``t``.

    The windows are closed: the paper's user 4 is "inactive during interval (100, 250)", an open
    interval, so it is active at 100 s and at 250 s.
    """
    return [
        u.name
        for u in scenario_users(cfg)
        if any(a <= t <= b for a, b in (u.windows or [[u.join_s, math.inf]]))
    ]


def exact_series(
    cfg: RunConfig,
    times_s: np.ndarray,
    *,
    mechanisms: tuple[str, ...] = EXACT,
    demands: dict[str, list[float]] | None = None,
) -> pd.DataFrame:
    """The exact allocations recomputed at every second, as the paper does for TSF and C-DRFH.

    At each time the exact (divisible) allocation of the users active then
    (:func:`active_users`, :func:`exact_allocations`) is solved; it depends only on the set of
    active users, so each set is solved once.

    Parameters
    ----------
    cfg : RunConfig
        The scenario (``configs/psdsf-fig6.yaml``).
    times_s : ndarray, shape (n_times,)
        Times (s, the paper's axis).
    mechanisms : tuple of str
        Exact mechanisms (``fairsim.schedulers.exact``).
    demands : dict, optional
        Paper demands replacing the config's for the named users.

    Returns
    -------
    pandas.DataFrame
        One row per mechanism and time, the columns of :func:`series`: ``scheduler`` (the
        mechanism), ``time_s``, ``cpu_<class>`` and ``mem_<class>`` (utilisation, fractions) and
        ``tasks_<user>_<class>`` (paper tasks; 0 for an inactive user).
    """
    names = [c.name for c in cfg.cluster.classes or []]
    users = [u.name for u in scenario_users(cfg)]
    times = np.asarray(times_s, dtype=float)
    sets = [tuple(active_users(cfg, float(t))) for t in times]
    rows: dict[tuple[tuple[str, ...], str], dict[str, float]] = {}
    for act in dict.fromkeys(sets):  # each set of active users solved once
        allocs = (
            exact_allocations(cfg, list(act), mechanisms=mechanisms, demands=demands) if act else {}
        )
        for mech in mechanisms:
            alloc = allocs.get(mech, np.zeros((0, len(names))))  # no user active: nothing
            row, held = rows.setdefault((act, mech), {}), dict(zip(act, alloc, strict=True))
            for j, k in enumerate(names):
                for r, res_name in enumerate(("cpu", "mem")):
                    row[f"{res_name}_{k}"] = _util(alloc, cfg, list(act), k, demands, r)
                for u in users:
                    row[f"tasks_{u}_{k}"] = float(held[u][j]) if u in held else 0.0
    return pd.DataFrame(
        [
            {"scheduler": mech, "time_s": float(t), **rows[(act, mech)]}
            for mech in mechanisms
            for t, act in zip(times, sets, strict=True)
        ]
    )


def run_seed(seed: int, config: Path, quick: bool) -> dict[str, Any]:
    """Run every online scheduler of the config with the config's seed set to ``seed``.

    Module-level so that :func:`fairsim.scenario.sweep.run_seeds` can run it in a worker.

    Returns
    -------
    dict
        ``seed``; ``series`` (:func:`series` of every scheduler, with a ``scheduler`` column);
        ``schedulers`` (each one's summary, as in :func:`run_experiment`); ``wall_s`` and
        ``tasks`` (per scheduler: the engine's wall time and the number of small tasks).
    """
    cfg = load_config(config).model_copy(update={"seed": int(seed)})
    prepared, info = scenario(cfg, quick=quick)
    frames, walls, tasks = [], {}, {}
    for sched_run in prepared.runs():
        name, res = sched_run.name, sched_run.result
        assert res is not None
        walls[name], tasks[name] = float(res.wall_s), len(res.tasks["submit_s"])
        log.info("seed %d, %s: %d tasks in %.1f s", seed, name, tasks[name], walls[name])
        f = series({"result": res, **info}, cfg)
        f.insert(0, "scheduler", name)
        frames.append(f)
    data = pd.concat(frames, ignore_index=True)
    return {
        "seed": int(seed),
        "schedulers": _summarise(data, cfg, QUICK_TIME if quick else 1.0),
        "wall_s": walls,
        "tasks": tasks,
        "series": data,
    }


def run_experiment(options: Options, *, config: Path = CONFIG) -> dict[str, Any]:
    """Run seeds ``1 .. seeds`` (over ``jobs`` worker processes) and the exact allocations; write
    ``series.parquet``, ``exact.parquet`` and ``summary.json`` into ``out``.

    The figure, ``claims.json`` and ``report.md`` come from
    :func:`fairsim.experiments.psdsf.report.write_report`; :func:`fairsim.experiments.kit.reproduce`
    runs both. ``options.shared`` is not read: the scenario is ``config``.

    Returns
    -------
    dict
        ``config`` (the scenario) and ``summary`` (``summary.json``): ``quick``, ``seeds``,
        ``phases`` (:func:`user_phases`), ``split``, ``runs`` (per seed: ``seed``,
        ``schedulers``, ``wall_s`` and ``tasks``, :func:`run_seed`), ``exact``,
        ``d2_sensitivity`` and ``wall_s_total``. A scheduler's summary (``schedulers`` and
        ``exact``, by scheduler): ``mean_util`` (``{"cpu_A": ...}``, over (0, end]), ``phases``
        (per phase: ``window``, ``util`` and ``tasks``, users x classes in paper tasks, means
        over the second half of the phase) and ``settle`` (per change of the active users:
        ``change_s``, ``settle_s``, the simulated seconds until the class C and D CPU stays
        within :data:`CONVERGED` of the new phase's level for :data:`SETTLE_WINDOW_S`, the whole
        phase when it never does, and ``settled``). ``d2_sensitivity``: class D's CPU under the
        exact allocations per CPU demand of user 2 (paper units), the config's first, then
        :data:`D2_CPU_GRID` (Table III allows any value <= 2/15): ``cpu``, ``config`` (whether
        it is the config's) and per exact mechanism ``away`` (while the users with two windows
        are away) and ``mean`` (over (0, end]); ``None`` without ``user2`` or class ``D``.

    Raises
    ------
    fairsim.errors.ConfigError
        For ``seeds < 1`` or a config whose trace is not ``inline``.
    """
    t0 = time.perf_counter()
    cfg = load_config(config)
    phases = user_phases(cfg)  # checks the trace's format before the runs
    quick, out, jobs, progress = options.quick, Path(options.out), options.jobs, options.progress
    seed_ids = seed_list(options.seeds)
    out.mkdir(parents=True, exist_ok=True)
    runs = run_seeds(
        run_seed, seed_ids, Path(config), quick, jobs=jobs, progress=progress, desc="psdsf seeds"
    )
    data = pd.concat([r["series"].assign(seed=r["seed"]) for r in runs], ignore_index=True)
    write_table(pa.Table.from_pandas(data, preserve_index=False), out / "series.parquet")
    times = np.unique(data["time_s"].to_numpy())
    exact = exact_series(cfg, times)
    write_table(pa.Table.from_pandas(exact, preserve_index=False), out / "exact.parquet")
    summary: dict[str, Any] = {
        "quick": quick,
        "seeds": seed_ids,
        "phases": phases,
        "split": QUICK_SPLIT if quick else SPLIT,
        "runs": [{k: r[k] for k in ("seed", "schedulers", "wall_s", "tasks")} for r in runs],
        "exact": _summarise(exact, cfg, QUICK_TIME if quick else 1.0),
        "d2_sensitivity": _d2_sensitivity(cfg, times),
    }
    summary["wall_s_total"] = time.perf_counter() - t0
    write_json(summary, out / "summary.json")
    return {"summary": summary, "config": cfg}


def _d2_sensitivity(cfg: RunConfig, times_s: np.ndarray) -> list[dict[str, Any]] | None:
    """The summary's ``d2_sensitivity`` (:func:`run_experiment`), over the times ``times_s``."""
    by_name = {u.name: u for u in scenario_users(cfg)}
    names = [c.name for c in cfg.cluster.classes or []]
    if "user2" not in by_name or "D" not in names:
        return None
    own, mem = (x * SPLIT for x in by_name["user2"].demand)
    away = [u.name for u in scenario_users(cfg) if not (u.windows and len(u.windows) > 1)]
    out: list[dict[str, Any]] = []
    for cpu in (own, *(x for x in D2_CPU_GRID if abs(x - own) > 1e-12)):
        alt = {"user2": [cpu, mem]}
        x = exact_allocations(cfg, away, demands=alt)
        f = exact_series(cfg, times_s, demands=alt)
        f = f[f["time_s"] > 0]
        out.append({"cpu": cpu, "config": cpu == own})
        for m in EXACT:
            mean = float(f.loc[f["scheduler"] == m, "cpu_D"].mean())
            out[-1][m] = {"away": _util(x[m], cfg, away, "D", alt), "mean": mean}
    return out


def user_phases(cfg: RunConfig) -> list[tuple[float, float]]:
    """The intervals between changes of the set of active users: between 0 and the starts and
    ends of the users' activity windows, in order."""
    edges = {0.0, *(x for u in scenario_users(cfg) for w in u.windows or [] for x in w)}
    return list(itertools.pairwise(sorted(edges)))


def _summarise(data: pd.DataFrame, cfg: RunConfig, scale: float) -> dict[str, Any]:
    """Each scheduler's summary (:func:`run_experiment`) of per-second rows (:func:`series`,
    :func:`exact_series`); ``scale``: simulated seconds per second of the paper's axis."""
    names = [c.name for c in cfg.cluster.classes or []]
    users = [u.name for u in scenario_users(cfg)]
    phases = user_phases(cfg)
    window = SETTLE_WINDOW_S / scale
    out: dict[str, Any] = {}
    for sched, f in data.groupby("scheduler", sort=False):
        t = f["time_s"].to_numpy()

        def util(m: np.ndarray, f: pd.DataFrame = f) -> dict[str, float]:
            return {
                f"{r}_{k}": float(f[f"{r}_{k}"][m].mean()) for k in names for r in ("cpu", "mem")
            }

        s: dict[str, Any] = {"mean_util": util((t > 0) & (t <= phases[-1][1])), "phases": []}
        for a, b in phases:
            # steady state: the second half of the phase
            m = (t >= (a + b) / 2) & (t < b)
            tasks = [[float(f[f"tasks_{u}_{k}"][m].mean()) for k in names] for u in users]
            s["phases"].append({"window": [a, b], "util": util(m), "tasks": tasks})
        s["settle"] = []
        for (a, b), ph in zip(phases[1:], s["phases"][1:], strict=True):
            idx = np.flatnonzero((t > a) & (t < b))
            at, worst = t[idx], 0.0
            for k in ("C", "D"):
                ok = np.abs(f[f"cpu_{k}"].to_numpy() - ph["util"][f"cpu_{k}"]) <= CONVERGED
                # the first time from which it stays within CONVERGED for the settle window
                stays = (i for i in idx if ok[idx[(at >= t[i]) & (at < t[i] + window)]].all())
                worst = max(worst, next((float(t[i] - a) * scale for i in stays), math.inf))
            settled = math.isfinite(worst)
            span = worst if settled else (b - a) * scale  # simulated seconds
            s["settle"].append({"change_s": a, "settle_s": span, "settled": settled})
        out[str(sched)] = s
    return out
