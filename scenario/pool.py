"""The server pool of a scenario: drawn with the run's seed, or listed in the config.

:func:`build_pool` gives the pool as a frame (``server`` and one column per resource) from the
config's ``cluster`` section: i.i.d. draws from the DRFH paper's Table I, the real Google
machines (``machine-events``), the converted trace's machines (``trace``) or explicit server
classes (PS-DSF paper, Section V). :func:`pool_capacity` turns it into the engine's capacity
matrix.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from fairsim.errors import ConfigError
from fairsim.scenario.config import (
    RESOURCES,
    RunConfig,
    component_rng,
)
from fairsim.scenario.trace_cache import resolve_path
from fairsim.scenario.workload import Workload
from fairsim.simulator.cluster import default_server_ids

log = logging.getLogger(__name__)


def build_pool(
    cfg: RunConfig, base: Path | None = None, workload: Workload | None = None
) -> pd.DataFrame:
    """Draw the server pool (columns ``server`` and one per resource) with the run's seed.

    ``server`` is a string id: the machine's id for the trace's machines, ``s0``, ``s1``, ... by
    position for a Table I draw and for explicit classes
    (:func:`fairsim.simulator.cluster.default_server_ids`).

    Raises
    ------
    ConfigError
        For source ``trace`` without a converted trace, or more servers than it has; for a
        pool without a resource the workload's tasks request (a GPU trace on Table I).
    """
    from fairsim.traces.pools import load_pool

    cl = cfg.cluster
    if cl.classes is not None:  # explicit server classes, in order (PS-DSF paper, Section V)
        rows = [[c.name, *c.capacity] for c in cl.classes for _ in range(c.count)]
        res = workload.resources if workload else RESOURCES
        for c in cl.classes:
            if len(c.capacity) != len(res):
                raise ConfigError(
                    f"cluster.classes: capacity of {c.name!r} has {len(c.capacity)} entries, "
                    f"expected {len(res)} ({', '.join(res)})"
                )
        frame = pd.DataFrame(rows, columns=["server_class", *res])
        frame.insert(0, "server", list(default_server_ids(len(frame))))
        return frame.drop(columns="server_class")
    rng = (
        np.random.default_rng(np.random.SeedSequence(cl.seed))
        if cl.seed is not None
        else component_rng(cfg.seed, "pool")
    )
    trace_dir: Path | None = None
    if cl.source == "trace":
        folder = workload.folder if workload is not None else None
        if folder is None or not (folder / "servers.parquet").is_file():
            raise ConfigError(
                f"cluster.source: 'trace' needs a converted trace with servers.parquet "
                f"(trace.format {cfg.trace.format!r} has none)"
            )
        pool = pd.read_parquet(folder / "servers.parquet")
        need = workload.resources if workload else RESOURCES
        _check_resources(pool, need, "the pool (source trace: the trace's servers.parquet")
        cols = ["server", *need]
        pool = pool[cols]
        if cl.servers is not None:
            if cl.servers > len(pool):
                raise ConfigError(
                    f"cluster.servers: {cl.servers} is more than the {len(pool)} machines "
                    "of the trace"
                )
            pick = np.sort(rng.choice(len(pool), size=cl.servers, replace=False))
            pool = pool.iloc[pick]
        return pool.reset_index(drop=True)
    if cl.source == "machine-events":
        raw = cl.path or (cfg.trace.path if cfg.trace.format == "google-2011" else None)
        if raw is None:
            raise ConfigError("cluster.path: required for source 'machine-events'")
        trace_dir = resolve_path(raw, base)
    elif cl.servers is None:
        raise ConfigError("cluster.servers: required for source 'table-i'")
    pool = load_pool(cl.source, cl.servers, rng, trace_dir)
    what = "Table I" if cl.source == "table-i" else "the Google machines"
    _check_resources(
        pool, workload.resources if workload else RESOURCES, f"the pool ({cl.source}: {what}"
    )
    return pool.reset_index(drop=True)


def _check_resources(pool: pd.DataFrame, resources: tuple[str, ...], what: str) -> None:
    """Refuse a pool without a resource the trace's tasks request (a bare ``KeyError`` before).

    ``what`` names the pool, without the closing parenthesis: ``"the pool (table-i: Table I"``.
    """
    have = [c for c in pool.columns if c not in ("server", "server_class")]
    missing = [r for r in resources if r not in pool.columns]
    if missing:
        raise ConfigError(
            f"cluster: {what}: {' and '.join(have)}) has no {', '.join(missing)} resource, which "
            f"the trace's tasks request (they request {', '.join(resources)}); give a pool with "
            f"{', '.join(missing)}: cluster.source: trace (the trace's machines) or "
            "cluster.classes"
        )


def pool_capacity(pool: pd.DataFrame, resources: tuple[str, ...] = RESOURCES) -> np.ndarray:
    """Capacity matrix ``(n_servers, n_resources)`` of a pool frame.

    Raises
    ------
    ConfigError
        If the pool lacks one of ``resources``, has no server, a server with a negative or
        non-finite capacity (naming the first), or a resource whose total capacity is 0 (its
        utilisation, used / total, would be undefined).
    """
    _check_resources(pool, resources, "the server pool (resources")
    cap = pool[list(resources)].to_numpy(dtype=np.float64, na_value=np.nan)
    if cap.shape[0] == 0:
        raise ConfigError("cluster: the server pool is empty")
    bad = ~np.isfinite(cap) | (cap < 0)
    if bad.any():
        i, r = (int(k) for k in np.argwhere(bad)[0])
        name = pool["server"].iloc[i] if "server" in pool else i
        raise ConfigError(
            f"cluster: server {name!r} has {resources[r]} capacity {float(cap[i, r])!r} "
            f"(expected a finite number >= 0; {int(bad.any(axis=1).sum())} server(s) of "
            f"{len(cap)} have such a capacity)"
        )
    total = cap.sum(axis=0)
    zero = [r for r, t in zip(resources, total, strict=True) if not t > 0]
    if zero:
        raise ConfigError(
            f"cluster: the pool's total capacity of {', '.join(zero)} is 0 (utilisation would be "
            "undefined); give some server a positive capacity"
        )
    return cap
