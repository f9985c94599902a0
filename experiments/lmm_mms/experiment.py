"""The runs of the LMM-MMS reproduction (``make reproduce-lmm-mms``): Section 5 of Li, Wang, Wang
and Zhang, "LMM-MMS", *Mathematics* 2025, on the Alibaba v2018 batch tasks.

Each *user* is one batch task drawn at random from the converted sample
(:func:`converted_tasks`): demand ``(plan_cpu / 100, plan_mem)``, bounded number of tasks
``instance_num``. One pool per setting; LMM-MMS (:func:`fairsim.schedulers.exact.lmm_mms.
lmm_mms_pick`) and the baselines DRF and AF in two readings, **bounded**
(:mod:`fairsim.schedulers.exact.pool`) and **unbounded, capped**
(:func:`fairsim.schedulers.exact.unbounded_capped`),
allocate divisible tasks; :data:`~fairsim.experiments.lmm_mms.paper.SAMPLES` samples per setting
and seed, seed ``s`` drawing every sample (one ``SeedSequence(s)`` child per setting). The
settings, the readings of the baselines, the elephants, the sharing degree and the metrics are
described in ``docs/lmm-mms.md``.

Outputs in ``OUT``: ``samples.parquet`` (one row per seed, setting, sample and mechanism:
``util_cpu``, ``util_mem``, ``completion_rate``, and the sample's ``saturated_cpu`` /
``saturated_mem`` under LMM-MMS, at least :data:`SATURATED` of the capacity used) and
``sharing.parquet`` (one row per seed, scale, sample, mechanism and user); the figures,
``claims.json`` and ``report.md`` come from :mod:`fairsim.experiments.lmm_mms.report`.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from fairsim.errors import ConfigError
from fairsim.experiments.claims import seed_list
from fairsim.experiments.kit import Options
from fairsim.experiments.lmm_mms import paper
from fairsim.scenario.sweep import run_seeds
from fairsim.schedulers.exact import solve_exact, unbounded_capped
from fairsim.schedulers.exact.instance import Instance
from fairsim.schedulers.exact.lmm_mms import lmm_mms_pick
from fairsim.simulator.results import write_table

log = logging.getLogger(__name__)

#: Bounded baselines: progressive filling that respects every user's task bound.
BOUNDED = ("drf", "af")
#: Unbounded baselines: the allocation without bounds, each user then capped at its bound.
UNBOUNDED = ("drf-unbounded", "af-unbounded")
MECHANISMS = ("lmm-mms", *BOUNDED, *UNBOUNDED)
#: The two readings of the paper's baselines, as the report names them.
FAMILIES = {"bounded": BOUNDED, "unbounded, capped": UNBOUNDED}
LABELS = {
    "lmm-mms": "LMM-MMS",
    "drf": "DRF (bounded)",
    "af": "AF (bounded)",
    "drf-unbounded": "DRF (unbounded, capped)",
    "af-unbounded": "AF (unbounded, capped)",
}
#: A resource is saturated in a sample when LMM-MMS uses at least this share of it.
SATURATED = 1 - 1e-6
#: User scales whose samples also give the sharing degree of every user (Fig. 6's, and 50).
SHARING_USERS = (50, *paper.SHARING_SCALES)
ELEPHANT_QUANTILE = 0.90
#: Samples per setting with ``--quick``.
QUICK_SAMPLES = 10
CORES_PER_MACHINE = 96.0  # canonical cpu = plan_cpu / 100 / 96 (docs/traces-alibaba.md)
GB_PER_MACHINE = 100.0  # canonical mem = plan_mem / 100, machines have 100 (normalised) GB


def load_users(tasks_parquet: Path) -> pd.DataFrame:
    """The population of users: one row per batch task, demand in cores and GB, bound.

    Returns
    -------
    pandas.DataFrame
        Columns ``cpu`` (cores), ``mem`` (GB), ``n`` (instance_num), ``elephant`` (bool).
    """
    t = pd.read_parquet(tasks_parquet, columns=["cpu", "mem", "instances"])
    t = t[(t["cpu"] > 0) & (t["mem"] > 0) & (t["instances"] > 0)]
    users = pd.DataFrame(
        {
            "cpu": t["cpu"].to_numpy() * CORES_PER_MACHINE,
            "mem": t["mem"].to_numpy() * GB_PER_MACHINE,
            "n": t["instances"].to_numpy(dtype=np.float64),
        }
    )
    size = users["n"] * np.maximum(users["cpu"] / 100.0, users["mem"] / 100.0)
    users["elephant"] = size >= size.quantile(ELEPHANT_QUANTILE)
    return users.reset_index(drop=True)


def draw(
    users: pd.DataFrame, n: int, rng: np.random.Generator, elephants: float | None
) -> pd.DataFrame:
    """``n`` users drawn with replacement; with ``elephants``, that share from the elephants."""
    if elephants is None:
        return users.iloc[rng.integers(0, len(users), n)]
    big = users.index[users["elephant"]].to_numpy()
    small = users.index[~users["elephant"]].to_numpy()
    k = round(elephants * n)
    pick = np.concatenate([rng.choice(big, k), rng.choice(small, n - k)])
    return users.loc[pick]


def allocate(sample: pd.DataFrame, capacity: tuple[float, float]) -> dict[str, np.ndarray]:
    """Tasks per user of every mechanism of :data:`MECHANISMS` on one pool; also the equal split
    (``"equal"``: each user 1/n of every resource, up to its bound)."""
    n = len(sample)
    d = sample[["cpu", "mem"]].to_numpy()
    inst = Instance(
        resources=("cpu", "mem"),
        server_ids=("pool",),
        user_ids=tuple(f"u{i}" for i in range(n)),
        capacity=np.array([capacity], dtype=np.float64),
        demand=d,
        weight=np.ones(n),
        max_tasks=sample["n"].to_numpy(dtype=np.float64),
        eligible=np.ones((n, 1), dtype=bool),
    )
    out = {"lmm-mms": lmm_mms_pick(inst)[:, 0]}
    for name in BOUNDED:
        out[name] = solve_exact(name, inst)[:, 0]
    for name, base in zip(UNBOUNDED, BOUNDED, strict=True):
        out[name] = unbounded_capped(base, inst)
    cap = np.asarray(capacity)
    out["equal"] = np.minimum(inst.max_tasks, ((cap / n) / d).min(axis=1))
    return out


def _metrics(
    x: np.ndarray, sample: pd.DataFrame, capacity: tuple[float, float]
) -> dict[str, float]:
    d = sample[["cpu", "mem"]].to_numpy()
    used = x @ d
    return {
        "util_cpu": float(used[0] / capacity[0]),
        "util_mem": float(used[1] / capacity[1]),
        "completion_rate": float(np.mean(x >= sample["n"].to_numpy() * (1 - 1e-9))),
    }


def sample_metrics(
    alloc: dict[str, np.ndarray], sample: pd.DataFrame, capacity: tuple[float, float]
) -> list[dict[str, Any]]:
    """One row per mechanism of :data:`MECHANISMS` for one sample: ``mechanism``,
    ``util_cpu``, ``util_mem``, ``completion_rate``, and the sample's ``saturated_cpu`` /
    ``saturated_mem`` (the resource is used to at least :data:`SATURATED` of its capacity by
    LMM-MMS; the same in every row of the sample).

    Parameters
    ----------
    alloc : dict
        Tasks per user of every mechanism (:func:`allocate`).
    sample : pandas.DataFrame
        The users (``cpu``, ``mem``, ``n``).
    capacity : tuple of float
        Pool capacity (cores, GB).
    """
    lmm = _metrics(alloc["lmm-mms"], sample, capacity)
    return [
        {
            "mechanism": mech,
            **_metrics(alloc[mech], sample, capacity),
            "saturated_cpu": lmm["util_cpu"] >= SATURATED,
            "saturated_mem": lmm["util_mem"] >= SATURATED,
        }
        for mech in MECHANISMS
    ]


def settings(quick: bool) -> list[dict[str, Any]]:
    """Every (figure, users, capacity, elephant share) setting of Section 5."""
    pool = paper.CAPACITIES[0]
    scales = (50, 300) if quick else paper.USER_SCALES
    shares = (0.0, 0.5) if quick else paper.ELEPHANT_SHARES
    return [
        *({"figure": "fig2", "users": u, "capacity": pool, "elephants": None} for u in scales),
        *(
            {"figure": "fig3", "users": 100, "capacity": c, "elephants": None}
            for c in paper.CAPACITIES
        ),
        *({"figure": "fig4", "users": 100, "capacity": pool, "elephants": e} for e in shares),
    ]


def run_seed(
    seed: int, tasks_parquet: Path, samples: int, quick: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every setting of :func:`settings` with ``samples`` samples drawn from ``SeedSequence(seed)``
    (one child per setting, in order).

    Module-level so that :func:`fairsim.scenario.sweep.run_seeds` can run it in a worker.

    Returns
    -------
    samples : pandas.DataFrame
        One row per setting, sample and mechanism (:func:`sample_metrics`), with ``seed``,
        ``figure``, ``users``, ``capacity`` (text), ``elephants`` (NaN outside Fig. 4) and
        ``sample``.
    sharing : pandas.DataFrame
        One row per Fig. 2 sample of :data:`SHARING_USERS` users, mechanism and user: ``seed``,
        ``users``, ``mechanism``, ``sample``, ``user`` and ``sharing_degree`` (tasks over tasks
        under the equal split).
    """
    users = load_users(tasks_parquet)
    rows: list[dict[str, Any]] = []
    sharing: list[pd.DataFrame] = []
    specs = settings(quick)
    children = np.random.SeedSequence(seed).spawn(len(specs))
    for spec, child in zip(specs, children, strict=True):
        rng = np.random.default_rng(child)
        for s in range(samples):
            sample = draw(users, spec["users"], rng, spec["elephants"])
            alloc = allocate(sample, spec["capacity"])
            setting = {
                "seed": seed,
                "figure": spec["figure"],
                "users": spec["users"],
                "capacity": "({:g}, {:g})".format(*spec["capacity"]),
                "elephants": np.nan if spec["elephants"] is None else spec["elephants"],
                "sample": s,
            }
            rows += [{**setting, **r} for r in sample_metrics(alloc, sample, spec["capacity"])]
            if spec["figure"] == "fig2" and spec["users"] in SHARING_USERS:
                eq = np.maximum(alloc["equal"], 1e-300)
                sharing += [
                    pd.DataFrame(
                        {
                            "seed": seed,
                            "users": spec["users"],
                            "mechanism": mech,
                            "sample": s,
                            "user": np.arange(len(eq)),
                            "sharing_degree": alloc[mech] / eq,
                        }
                    )
                    for mech in MECHANISMS
                ]
    return pd.DataFrame(rows), pd.concat(sharing, ignore_index=True)


def run_experiment(
    options: Options, *, tasks: Path | None = None, samples: int | None = None
) -> dict[str, Any]:
    """Run every setting for seeds ``1 .. seeds`` (over ``jobs`` worker processes) and write
    ``samples.parquet`` and ``sharing.parquet`` into ``out`` (the figures, claims and report come
    from :func:`fairsim.experiments.lmm_mms.report.write_report`).

    Parameters
    ----------
    options : fairsim.experiments.kit.Options
        ``shared`` holds ``traces/alibaba-2018``, converted once into the trace cache
        (:func:`converted_tasks`; required unless ``tasks`` is given); ``quick``: user scales 50
        and 300, elephant shares 0 and 50 %, and :data:`QUICK_SAMPLES` samples per setting and
        seed.
    tasks : Path, optional
        A converted ``tasks.parquet`` to draw from instead of ``shared``'s.
    samples : int, optional
        Samples per setting and seed (default
        :data:`~fairsim.experiments.lmm_mms.paper.SAMPLES`, with ``quick`` :data:`QUICK_SAMPLES`).

    Returns
    -------
    dict
        ``samples`` and ``sharing`` (the two tables, every seed), ``seeds`` (the seed list),
        ``samples_per_setting``, ``quick`` and ``wall_s``.

    Raises
    ------
    fairsim.errors.ConfigError
        For ``seeds < 1``, neither ``shared`` nor ``tasks``, or a ``shared`` without the
        sample.
    """
    shared, quick, jobs, progress = options.shared, options.quick, options.jobs, options.progress
    if tasks is None:
        if shared is None:
            raise ConfigError("lmm-mms: shared: required (the folder of traces/alibaba-2018)")
        tasks = converted_tasks(shared)
    if samples is None:
        samples = QUICK_SAMPLES if quick else paper.SAMPLES
    t0 = time.perf_counter()
    seed_ids = seed_list(options.seeds)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = run_seeds(
        run_seed,
        seed_ids,
        Path(tasks),
        samples,
        quick,
        jobs=jobs,
        progress=progress,
        desc="lmm-mms seeds",
    )
    frame = pd.concat([r[0] for r in runs], ignore_index=True)
    share = pd.concat([r[1] for r in runs], ignore_index=True)
    write_table(pa.Table.from_pandas(frame, preserve_index=False), out / "samples.parquet")
    write_table(pa.Table.from_pandas(share, preserve_index=False), out / "sharing.parquet")
    wall = time.perf_counter() - t0
    log.info("lmm-mms: %d seeds x %d samples per setting in %.0f s", len(seed_ids), samples, wall)
    return {
        "samples": frame,
        "sharing": share,
        "seeds": seed_ids,
        "samples_per_setting": samples,
        "quick": quick,
        "wall_s": wall,
    }


def converted_tasks(shared: Path, *, cache_dir: str | None = None) -> Path:
    """The v2018 sample of ``shared`` converted once (cached in ``cache_dir``, by default the
    trace cache, :func:`fairsim.scenario.trace_cache.default_cache_dir`): its ``tasks.parquet``.

    Raises
    ------
    fairsim.errors.ConfigError
        If ``shared`` has no ``traces/alibaba-2018/spar-derived`` folder.
    """
    from fairsim.scenario.config import AlibabaTrace
    from fairsim.scenario.trace_cache import converted_alibaba

    sample = Path(shared) / "traces" / "alibaba-2018" / "spar-derived"
    if not sample.is_dir():
        raise ConfigError(
            f"lmm-mms: shared: {str(shared)!r} has no traces/alibaba-2018/spar-derived (the "
            "experiment's Alibaba 2018 sample; give the folder that holds traces/)"
        )
    trace = AlibabaTrace(format="alibaba-2018-spar", path=str(sample), cache_dir=cache_dir)
    return converted_alibaba(trace, None) / "tasks.parquet"


# --------------------------------------------------------------------------- per-sample arrays


class Units:
    """The samples of a run as arrays over *units* (one unit = one seed and sample number), the
    resampling units of the report's bootstrap.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``samples.parquet``; every setting must have the same seeds and samples.

    Attributes
    ----------
    n : int
        The number of units (seeds x samples per setting).
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        f = frame.assign(
            key=[
                _key(r)
                for r in frame[["figure", "users", "capacity", "elephants"]].itertuples(index=False)
            ]
        )
        units = f[["seed", "sample"]].drop_duplicates().sort_values(["seed", "sample"])
        self.n = len(units)
        self._code = {tuple(u): i for i, u in enumerate(units.itertuples(index=False))}
        self._frame = f
        self._cache: dict[tuple[str, Any, str, str], np.ndarray] = {}

    def keys(self, figure: str) -> list[Any]:
        """The settings of ``figure``, sorted."""
        return sorted(self._frame.loc[self._frame["figure"] == figure, "key"].unique())

    def get(self, figure: str, key: Any, metric: str, mechanism: str) -> np.ndarray:
        """``metric`` of ``mechanism`` in setting ``key`` of ``figure``, shape ``(n,)`` by unit.

        Raises
        ------
        KeyError
            When the setting does not have one row per unit.
        """
        k = (figure, key, metric, mechanism)
        if k not in self._cache:
            f = self._frame
            sel = f[(f["figure"] == figure) & (f["key"] == key) & (f["mechanism"] == mechanism)]
            if len(sel) != self.n:
                raise KeyError(f"{figure} {key!r} {mechanism}: {len(sel)} rows for {self.n} units")
            out = np.empty(self.n)
            idx = [self._code[(s, m)] for s, m in zip(sel["seed"], sel["sample"], strict=True)]
            out[idx] = sel[metric].to_numpy(dtype=float)
            self._cache[k] = out
        return self._cache[k]


def _key(row: Any) -> Any:
    if row.figure == "fig3":
        return row.capacity
    if row.figure == "fig4":
        return float(row.elephants)
    return int(row.users)


def sharing_matrix(share: pd.DataFrame, users: int, mechanism: str) -> np.ndarray:
    """Sharing degrees of ``mechanism`` with ``users`` users, shape ``(n_units, users)`` (units in
    the order of :class:`Units`: by seed, then sample)."""
    g = share[(share["users"] == users) & (share["mechanism"] == mechanism)]
    g = g.sort_values(["seed", "sample", "user"])
    return g["sharing_degree"].to_numpy(dtype=float).reshape(-1, users)
