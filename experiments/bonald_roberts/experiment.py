"""``make reproduce-bonald-roberts``: the runs of Bonald and Roberts, Section 4 (Figs. 1-3).

For each scenario of ``configs/bonald-roberts.yaml`` (balanced ``rho1 = rho2 = rho3``, unbalanced
``rho1 = 4 rho2 = 4 rho3``), each load of the most loaded resource and each allocation (DRF, PF,
BMF):

1. the service rates ``gamma_k`` of the Markovian demand model from the truncated Markov chain
   (:func:`fairsim.schedulers.flows.markov_chain.solve_markov_adaptive`):
   deterministic, computed once (:func:`markov_points`);
2. per seed (:func:`seed_points`, seeds ``1 .. N`` over worker processes): the same rates from a
   SimPy simulation with batch-means 95 % CIs
   (:func:`fairsim.schedulers.flows.markov_chain.simulate_demand_model`), and packet-level
   router simulations (DRFQ eq. 2, PF-SFQ eq. 5, BMF-SFQ eq. 7) on the packet scenarios and loads
   (:func:`fairsim.schedulers.flows.packet_fq.estimate_service_rates`);
3. ``service_rates.parquet`` (tidy: ``scenario, allocation, method, load, class, seed, gamma``;
   method ``markov`` (``seed`` null), ``simulation`` or ``packet``; packet rows carry the fluid
   allocation their algorithm realises), ``details.parquet`` (the same rows with each run's own
   95 % CI, truncation level and error bound), ``summary.parquet`` (per point: the mean over
   seeds and its 95 % t interval, :func:`~fairsim.experiments.bonald_roberts.numbers.seed_summary`),
   ``config.yaml``, then the figures and the claims of
   :mod:`fairsim.experiments.bonald_roberts.report`.

Randomness: one :class:`numpy.random.SeedSequence` per point and seed, ``SeedSequence(seed,
spawn_key=(scenario, load, allocation, method))``, so a point's numbers do not depend on which other
points are run; the same config and seeds give identical Parquet files, and seed 1 gives the
numbers of the former one-seed runs.
"""

from __future__ import annotations

import itertools
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import yaml
from pydantic import Field, ValidationError, field_validator
from tqdm import tqdm

from fairsim.atomic import write_text
from fairsim.errors import ConfigError
from fairsim.experiments import config_path
from fairsim.experiments.bonald_roberts.numbers import seed_summary
from fairsim.experiments.bonald_roberts.paper import PACKET_ALGORITHM
from fairsim.experiments.claims import seed_list
from fairsim.experiments.kit import Options
from fairsim.scenario.config import StrictModel, format_error, read_yaml
from fairsim.scenario.sweep import run_seeds
from fairsim.schedulers.flows.markov_chain import (
    ALLOCATIONS,
    RateTable,
    make_model,
    scaled_loads,
    simulate_demand_model,
    solve_markov_adaptive,
)
from fairsim.schedulers.flows.packet_fq import estimate_service_rates
from fairsim.simulator.results import write_table

log = logging.getLogger(__name__)

CONFIG = config_path("bonald-roberts.yaml")
METHODS = ("markov", "simulation", "packet")
#: Columns of ``service_rates.parquet`` (``seed`` is null for the deterministic ``markov`` rows).
COLUMNS = ("scenario", "allocation", "method", "load", "class", "seed", "gamma")
#: Columns of ``details.parquet``.
DETAILS = (*COLUMNS, "gamma_lo", "gamma_hi", "level", "error_bound", "boundary_mass")


class ScenarioCfg(StrictModel):
    """Relative class loads of one scenario."""

    weights: list[float]


class MarkovCfg(StrictModel):
    """Truncation levels tried in turn and the target relative error."""

    levels: list[int] = Field(default_factory=lambda: [15, 25, 40])
    tol: float = 2e-3

    @field_validator("levels")
    @classmethod
    def _levels(cls, v: list[int]) -> list[int]:
        if not v or min(v) < 1 or any(b <= a for a, b in itertools.pairwise(v)):
            raise ValueError(f"expected an increasing list of levels >= 1, got {v!r}")
        return v


class SimulationCfg(StrictModel):
    """SimPy run lengths (arrivals after warm-up) and batches."""

    arrivals: int = 30_000
    warmup: int = 2_000
    batches: int = 20


class PacketCfg(StrictModel):
    """Packet-level router runs (Fig. 3)."""

    scenarios: list[str] = Field(default_factory=lambda: ["unbalanced"])
    loads: list[float] = Field(default_factory=lambda: [0.2, 0.4, 0.6, 0.8])
    window: int = 30
    mean_packets: float = 1000
    flows: int = 20_000
    warmup: int = 500
    batches: int = 20
    max_flows: int = 8192

    @field_validator("window")
    @classmethod
    def _window(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"W = {v} (expected an integer >= 1)")
        return v


class BonaldRobertsConfig(StrictModel):
    """``configs/bonald-roberts.yaml``."""

    name: str = "bonald-roberts"
    vectors: list[list[float]]
    scenarios: dict[str, ScenarioCfg]
    loads: list[float]
    allocations: list[str] = Field(default_factory=lambda: list(ALLOCATIONS))
    markov: MarkovCfg = MarkovCfg()
    simulation: SimulationCfg = SimulationCfg()
    packet: PacketCfg = PacketCfg()
    seed: int = 1

    @field_validator("allocations")
    @classmethod
    def _allocs(cls, v: list[str]) -> list[str]:
        for a in v:
            if a not in ALLOCATIONS:
                raise ValueError(f"unknown allocation {a!r} (known: {', '.join(ALLOCATIONS)})")
        return v


#: ``--quick``: a smoke run (two loads, short runs, small truncation).
QUICK: dict[str, Any] = {
    "loads": [0.3, 0.6],
    "markov": {"levels": [8, 12], "tol": 0.05},
    "simulation": {"arrivals": 3000, "warmup": 300, "batches": 10},
    "packet": {"loads": [0.6], "mean_packets": 50, "flows": 1500, "warmup": 100, "batches": 10},
}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` laid on it, mappings merged key by key."""
    deep = {k: _merge(base.get(k) or {}, v) if isinstance(v, dict) else v for k, v in over.items()}
    return {**base, **deep}


def load_config(path: str | Path = CONFIG, *, quick: bool = False) -> BonaldRobertsConfig:
    """Read, validate and check the scenario (``quick`` applies :data:`QUICK`).

    Raises
    ------
    ConfigError
        One line naming the field: unknown keys, a requirement vector without a unit component,
        a load outside the stability region (eq. 8), ``packet.window < 1``, unknown scenarios.
    """
    data = read_yaml(path, "config")
    if not isinstance(data, dict):
        raise ConfigError("config: expected a mapping at the top level")
    if quick:
        data = _merge(data, QUICK)
    try:
        cfg = BonaldRobertsConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"config: {format_error(exc)}") from None
    for name in cfg.packet.scenarios:
        if name not in cfg.scenarios:
            raise ConfigError(
                f"config: packet.scenarios: unknown scenario {name!r} "
                f"(known: {', '.join(cfg.scenarios)})"
            )
    for name, sc in cfg.scenarios.items():
        for load in [*cfg.loads, *cfg.packet.loads]:
            try:
                make_model(cfg.vectors, scaled_loads(cfg.vectors, sc.weights, load))
            except ConfigError as exc:
                raise ConfigError(f"config: scenarios.{name} at load {load:g}: {exc}") from None
    return cfg


def _seed(
    cfg: BonaldRobertsConfig, sc: str, load: float, alloc: str, method: str
) -> np.random.SeedSequence:
    """The randomness of one point: ``SeedSequence(seed, spawn_key=point)``."""
    at = (list(cfg.scenarios).index(sc), round(load * 1e6), ALLOCATIONS.index(alloc))
    return np.random.SeedSequence(cfg.seed, spawn_key=(*at, METHODS.index(method)))


def markov_points(cfg: BonaldRobertsConfig, *, progress: bool = True) -> pd.DataFrame:
    """The Markov-chain service rates of every (scenario, load, allocation): deterministic.

    Returns
    -------
    DataFrame
        Columns :data:`DETAILS`, one row per class; ``seed`` null, ``gamma_lo``/``gamma_hi``
        NaN, ``level``, ``error_bound`` (relative bound on ``gamma_k``) and ``boundary_mass`` of
        the truncated chain.
    """
    todo = [(sc, load, al) for sc in cfg.scenarios for load in cfg.loads for al in cfg.allocations]
    rows: list[dict[str, Any]] = []
    bar = tqdm(todo, desc="bonald-roberts markov", unit="point", disable=not progress)
    for sc, load, alloc in bar:
        bar.set_postfix_str(f"{sc} {alloc} {load:g}")
        model = make_model(cfg.vectors, scaled_loads(cfg.vectors, cfg.scenarios[sc].weights, load))
        res = solve_markov_adaptive(model, alloc, cfg.markov.levels, cfg.markov.tol)
        nan = np.full(len(cfg.vectors), np.nan)
        level, err, mass = float(res.level), res.error_bound, res.boundary_mass
        rows += _rows((sc, alloc, "markov", load), None, res.gamma, nan, nan, level, err, mass)
    return _frame(rows)


def seed_points(seed: int, cfg: BonaldRobertsConfig) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The random parts of one seed: SimPy and packet-level service rates of every point.

    Module-level so that :func:`fairsim.scenario.sweep.run_seeds` can run seeds in worker
    processes.

    Parameters
    ----------
    seed : int
        Replaces ``cfg.seed``: point ``key`` draws from ``SeedSequence(seed, spawn_key=key)``.
    cfg : BonaldRobertsConfig

    Returns
    -------
    details : DataFrame
        Columns :data:`DETAILS`; ``gamma_lo``/``gamma_hi`` the run's own batch-means 95 % CI.
    timing : dict
        Wall seconds of the simulations and of the packet runs, packets simulated.
    """
    cfg = cfg.model_copy(update={"seed": int(seed)})
    a = np.asarray(cfg.vectors, dtype=float)
    p = cfg.packet
    runs = (("simulation", list(cfg.scenarios), cfg.loads), ("packet", p.scenarios, p.loads))
    todo = [
        (sc, load, al, method)
        for method, scenarios, loads in runs
        for sc, load, al in itertools.product(scenarios, loads, cfg.allocations)
    ]
    rows: list[dict[str, Any]] = []
    timing: dict[str, Any] = {"simulation_s": 0.0, "packet_s": 0.0, "packets": 0}
    tables: dict[str, RateTable] = {}
    for sc, load, alloc, method in todo:
        rho = scaled_loads(cfg.vectors, cfg.scenarios[sc].weights, load)
        ss = _seed(cfg, sc, load, alloc, method)
        t0 = time.perf_counter()
        if method == "simulation":
            if alloc not in tables:
                tables[alloc] = RateTable(a, alloc, level=25)
            est: Any = simulate_demand_model(
                make_model(cfg.vectors, rho),
                alloc,
                **cfg.simulation.model_dump(),  # arrivals, warmup, batches
                seed=ss,
                rates=tables[alloc],
            )
        else:
            est = estimate_service_rates(
                a,
                np.asarray(rho),
                algorithm=PACKET_ALGORITHM[alloc],
                **p.model_dump(exclude={"scenarios", "loads"}),  # window, flows, run lengths
                seed=ss,
            )
            timing["packets"] += est.packets
        timing[f"{method}_s"] += time.perf_counter() - t0
        rows += _rows((sc, alloc, method, load), cfg.seed, est.gamma, est.gamma_lo, est.gamma_hi)
    return _frame(rows), timing


def _rows(
    point: tuple[str, str, str, float],
    seed: int | None,
    gamma: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    level: float = np.nan,
    error_bound: np.ndarray | None = None,
    boundary_mass: float = np.nan,
) -> list[dict[str, Any]]:
    """The rows of :data:`DETAILS` of one point ``(scenario, allocation, method, load)``, one per
    class (the truncation columns are NaN unless given: the ``markov`` rows)."""
    err = np.full(len(gamma), np.nan) if error_bound is None else error_bound
    return [
        dict(zip(DETAILS, (*point[:3], float(point[3]), k + 1, seed, *x), strict=True))
        for k, x in enumerate(
            (float(g), float(a), float(b), level, float(e), boundary_mass)
            for g, a, b, e in zip(gamma, lo, hi, err, strict=True)
        )
    ]


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    d = pd.DataFrame(rows, columns=list(DETAILS))
    d["class"] = d["class"].astype("int64")
    d["seed"] = d["seed"].astype("Int64")
    for col in ("load", "gamma", "gamma_lo", "gamma_hi", "level", "error_bound", "boundary_mass"):
        d[col] = d[col].astype("float64")
    return d


def _write_tables(details: pd.DataFrame, out: Path) -> None:
    tidy = details[list(COLUMNS)].reset_index(drop=True)
    write_table(pa.Table.from_pandas(tidy, preserve_index=False), out / "service_rates.parquet")
    write_table(pa.Table.from_pandas(details, preserve_index=False), out / "details.parquet")
    summary = seed_summary(details)
    write_table(pa.Table.from_pandas(summary, preserve_index=False), out / "summary.parquet")


def run_experiment(options: Options, *, config: Path = CONFIG) -> dict[str, Any]:
    """Run the whole reproduction over seeds ``1 .. seeds`` and write its tables and
    ``config.yaml`` into ``out`` (the claims, figures and report come from
    :func:`fairsim.experiments.bonald_roberts.report.write_report`).

    The Markov chain is solved once (it has no randomness); the SimPy and packet simulations run
    once per seed, over ``jobs`` worker processes.

    Parameters
    ----------
    options : fairsim.experiments.kit.Options
        ``shared`` is not read (the model needs no trace); ``quick`` is a smoke run
        (:data:`QUICK`); progress bars show the Markov points, then the seeds.
    config : Path
        Scenario file (default ``configs/bonald-roberts.yaml``).

    Returns
    -------
    dict
        ``details`` (the Markov rows and every seed's rows, ``details.parquet``), ``timing``
        (wall times, packets and seeds, ``run.json``), ``config`` and ``quick``.

    Raises
    ------
    ConfigError
        For an invalid scenario file or ``seeds < 1`` (before anything is written).
    """
    progress, out = options.progress, Path(options.out)
    cfg = load_config(config, quick=options.quick)
    todo = seed_list(options.seeds)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    mk = markov_points(cfg, progress=progress)
    markov_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    results = run_seeds(seed_points, todo, cfg, jobs=options.jobs, progress=progress, desc="seeds")
    seeds_wall_s = time.perf_counter() - t1
    details = pd.concat([mk, *(r[0] for r in results)], ignore_index=True)
    timing: dict[str, Any] = {
        "seeds": todo,
        "markov_s": markov_s,
        "seeds_wall_s": seeds_wall_s,
        **{k: sum(r[1][k] for r in results) for k in ("simulation_s", "packet_s", "packets")},
    }
    timing["total_s"] = time.perf_counter() - t0
    _write_tables(details, out)
    write_text(out / "config.yaml", yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False))
    return {"details": details, "timing": timing, "config": cfg, "quick": options.quick}
