"""Helpers that several test files share: workloads, hypothesis strategies and the papers'
example instances. Fixtures live in ``conftest.py``; these are plain functions and constants,
imported as ``from helpers import ...`` (pytest's ``pythonpath = ["tests"]`` in pyproject.toml puts
this folder on the import path)."""

from __future__ import annotations

import functools
import importlib.util
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import yaml
from hypothesis import strategies as st

from fairsim.schedulers.exact.instance import Instance, parse_instance
from fairsim.schedulers.registry import unregister_scheduler

#: The documentation's example scripts.
EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"


@functools.cache
def priority_preemption() -> ModuleType:
    """docs/examples/priority_preemption.py, imported once per process as
    ``priority_preemption_example``; the name it registers on import (``priority-preemption``) is
    removed at once, so the registry stays as the other tests expect (a test that runs it by name
    registers its class itself). Its ``PriorityPreemption`` is the suite's preempting scheduler."""
    spec = importlib.util.spec_from_file_location(
        "priority_preemption_example", EXAMPLES / "priority_preemption.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    unregister_scheduler("priority-preemption")
    return module


@functools.cache
def tiered_by_user() -> type:
    """docs/examples/priority_preemption.py's scheduler with a tier per user code (``user % 3``)
    instead of weights: on any workload of several users, higher tiers evict lower ones."""
    base = priority_preemption().PriorityPreemption

    class TieredByUser(base):  # type: ignore[misc, valid-type]
        name = "tiered-by-user"

        def tier(self, user: int) -> float:
            return float(user % 3)

    return TieredByUser


# --------------------------------------------------------------------------- workloads


def random_frame(rng: np.random.Generator, n: int, n_users: int, horizon: float) -> pd.DataFrame:
    """A small random workload in the canonical column layout."""
    return pd.DataFrame(
        {
            "job_id": rng.integers(0, max(1, n // 3), n).astype(np.int64),
            "task_index": np.arange(n, dtype=np.int32),
            "user": rng.integers(0, n_users, n).astype(str),
            "submit_s": np.round(rng.uniform(0, horizon, n), 1),
            "cpu": rng.uniform(0.0, 0.6, n),
            "mem": rng.uniform(0.0, 0.6, n),
            "run_s": np.round(rng.uniform(1, horizon / 3, n), 1),
        }
    )


def job_frame(rows: list[tuple]) -> pd.DataFrame:
    """A workload of constrained jobs; rows: (user, job_id, submit_s, cpu, mem, run_s,
    constraint)."""
    f = pd.DataFrame(
        rows, columns=["user", "job_id", "submit_s", "cpu", "mem", "run_s", "constraint"]
    )
    f["task_index"] = np.arange(len(f), dtype=np.int32)
    f["job_id"] = f["job_id"].astype(np.int64)
    return f


@st.composite
def complex_jobs(draw: st.DrawFn) -> tuple[np.ndarray, list[str], pd.DataFrame, dict[int, int]]:
    """Random jobs over machine classes (UDRF's setting): capacities (n_servers, 2), the servers'
    class labels, the tasks (:func:`job_frame`, some constrained to a class) and the
    repetitions of each job."""
    n_servers = draw(st.integers(1, 6))
    table = np.array([[1.0, 1.0], [0.5, 0.25], [0.5, 0.75]])
    kinds = draw(st.lists(st.integers(0, 2), min_size=n_servers, max_size=n_servers))
    cap = table[kinds]
    classes = [f"C{k}" for k in kinds]
    known = sorted(set(classes))
    rows = []
    reps: dict[int, int] = {}
    for j in range(draw(st.integers(1, 12))):
        user = f"u{draw(st.integers(0, 3))}"
        submit = float(draw(st.integers(0, 50)))
        run = float(draw(st.integers(1, 30)))
        reps[j] = draw(st.integers(1, 3))
        for _ in range(draw(st.integers(1, 4))):
            submit += float(draw(st.sampled_from([0, 0, 0, 2])))  # a job may grow while blocked
            cls = draw(st.sampled_from([None, *known]))
            rule = None if cls is None else f"class={cls}"
            cpu = draw(st.sampled_from([0.05, 0.1, 0.2, 0.25]))
            mem = draw(st.sampled_from([0.05, 0.1, 0.2]))
            rows.append((user, j, submit, cpu, mem, run, rule))
    frame = job_frame(rows).sort_values("submit_s", kind="stable").reset_index(drop=True)
    frame["task_index"] = np.arange(len(frame), dtype=np.int32)
    return cap, classes, frame, reps


# --------------------------------------------------------------------------- exact instances


@st.composite
def exact_instances(draw: st.DrawFn, max_users: int = 4, max_servers: int = 3) -> Instance:
    """Small random instances of the exact mechanisms (integer capacities and demands, weights,
    task bounds, eligibility)."""
    n_r = draw(st.integers(1, 3))
    n_s = draw(st.integers(1, max_servers))
    n_u = draw(st.integers(1, max_users))
    servers = [
        {"id": f"s{k}", "capacity": draw(st.lists(st.integers(0, 12), min_size=n_r, max_size=n_r))}
        for k in range(n_s)
    ]
    users = []
    for i in range(n_u):
        d = draw(st.lists(st.integers(0, 4), min_size=n_r, max_size=n_r).filter(any))
        u = {"id": f"u{i}", "demand": d, "weight": draw(st.sampled_from([1, 1, 2, 3]))}
        if draw(st.booleans()):
            u["max_tasks"] = draw(st.integers(0, 8))
        if draw(st.booleans()):
            u["eligible"] = draw(st.lists(st.sampled_from([s["id"] for s in servers]), unique=True))
        users.append(u)
    return parse_instance(
        {"resources": [f"r{k}" for k in range(n_r)], "servers": servers, "users": users}
    )


@st.composite
def hdrf_data(
    draw: st.DrawFn, max_users: int = 5, max_queues: int = 4, limits: bool = False
) -> dict[str, Any]:
    """A small random queue tree as ``fairsim solve`` input: one server (``hdrf`` pools), 1-3
    resources, integer capacities and demands, weights 1-3 on queues and users, task bounds,
    users at the root or in a queue; with ``limits``, some queues limited on some resources."""
    n_r = draw(st.integers(1, 3))
    n_q = draw(st.integers(0, max_queues))
    cap = draw(st.lists(st.integers(1, 12), min_size=n_r, max_size=n_r))
    queues: list[dict[str, Any]] = []
    for i in range(n_q):
        q: dict[str, Any] = {"id": f"q{i}", "weight": draw(st.sampled_from([1, 1, 2, 3]))}
        if i and draw(st.booleans()):
            q["parent"] = f"q{draw(st.integers(0, i - 1))}"
        if limits and draw(st.integers(0, 3)) == 0:
            q["limit"] = [draw(st.one_of(st.none(), st.integers(1, 12))) for _ in range(n_r)]
        queues.append(q)
    users = []
    for n in range(draw(st.integers(2, max_users))):
        d = draw(st.lists(st.integers(0, 4), min_size=n_r, max_size=n_r).filter(any))
        u: dict[str, Any] = {
            "id": f"u{n}",
            "demand": d,
            "weight": draw(st.sampled_from([1, 1, 2, 3])),
        }
        if n_q and draw(st.integers(0, 4)):
            u["queue"] = f"q{draw(st.integers(0, n_q - 1))}"
        if draw(st.integers(0, 3)) == 0:
            u["max_tasks"] = draw(st.integers(0, 8))
        users.append(u)
    return {
        "resources": [f"r{k}" for k in range(n_r)],
        "servers": [{"id": "s", "capacity": cap}],
        "queues": queues,
        "users": users,
    }


# PS-DSF paper (Khamse-Ashari et al.), Section I / Fig. 1: c1 = [9, 12, 100], c2 = [12, 12, 0];
# weights 1, 1, 2; d1 = [1, 2, 10], d2 = [1, 2, 1], d3 = [1, 2, 0] (users 1, 2 need bandwidth,
# so only server 1 can serve them).
PSDSF_FIG1: dict[str, Any] = {
    "resources": ["cpu", "mem", "bw"],
    "servers": [{"id": "s1", "capacity": [9, 12, 100]}, {"id": "s2", "capacity": [12, 12, 0]}],
    "users": [
        {"id": "u1", "demand": [1, 2, 10]},
        {"id": "u2", "demand": [1, 2, 1]},
        {"id": "u3", "demand": [1, 2, 0], "weight": 2},
    ],
}
# PS-DSF paper, Section III-A / Fig. 2: the same servers, four equally weighted users.
PSDSF_FIG2: dict[str, Any] = {
    "resources": ["cpu", "mem", "bw"],
    "servers": PSDSF_FIG1["servers"],
    "users": [
        {"id": "u1", "demand": [1.5, 1, 10]},
        {"id": "u2", "demand": [1, 2, 10]},
        {"id": "u3", "demand": [0.5, 1, 0]},
        {"id": "u4", "demand": [1, 0.5, 0]},
    ],
}


# Shaped like Section II-A: four classes, u1 with two independent jobs, u2 with a two-task job;
# u1, u2, u3 form one RDUC (standard and public-IP are shared), u4 is alone.
FIG1_LIKE: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [
        {"id": "hadoop", "capacity": [56, 64]},
        {"id": "standard", "capacity": [16, 20]},
        {"id": "public-ip", "capacity": [12, 12]},
        {"id": "high-mem", "capacity": [4, 32]},
    ],
    "users": [
        {
            "id": "u1",
            "jobs": [
                {"id": "job1", "demand": {"hadoop": [1, 1]}},
                {"id": "job2", "demand": {"standard": [1, 1]}},
            ],
        },
        {
            "id": "u2",
            "jobs": [{"id": "job", "demand": {"standard": [1, 0.5], "public-ip": [1, 0.5]}}],
        },
        {"id": "u3", "jobs": [{"id": "job", "demand": {"public-ip": [1, 2]}}]},
        {"id": "u4", "jobs": [{"id": "job", "demand": {"high-mem": [1, 1]}}]},
    ],
}


def random_job_instance(rng: np.random.Generator, bounds: bool = False) -> dict[str, Any]:
    """A random UDRF job instance (as JSON data): classes, users with jobs over some of them, and
    with ``bounds`` a bound on the runs of some jobs."""
    n_c, n_r = int(rng.integers(1, 5)), int(rng.integers(1, 4))
    classes = [f"c{m}" for m in range(n_c)]
    servers = [{"id": c, "capacity": rng.uniform(1, 20, n_r).round(2).tolist()} for c in classes]
    users = []
    for u in range(int(rng.integers(1, 6))):
        jobs = []
        for q in range(int(rng.integers(1, 4))):
            k = int(rng.integers(1, n_c + 1))
            chosen = rng.choice(classes, size=k, replace=False)
            dem = {
                str(c): (rng.uniform(0, 2, n_r) * (rng.random(n_r) < 0.8)).round(2).tolist()
                for c in chosen
            }
            if not any(v > 0 for vec in dem.values() for v in vec):
                dem[str(chosen[0])][0] = 1.0
            job: dict[str, Any] = {"id": f"j{q}", "demand": dem}
            if bounds and rng.random() < 0.3:
                job["max_runs"] = float(rng.uniform(0, 5))
            jobs.append(job)
        users.append({"id": f"u{u}", "jobs": jobs, "weight": float(rng.choice([1, 1, 2]))})
    return {"resources": [f"r{k}" for k in range(n_r)], "servers": servers, "users": users}


def hand_scenario(
    capacity: float = 1.0, schedulers: Sequence[str] = ("bf-drfh", "ff-drfh")
) -> dict[str, Any]:
    """One server of capacity (capacity, capacity). User a submits two tasks of (0.5, 0.5) for
    100 s at 0, user b one of (0.5, 0.5) for 50 s at 10: on a server of (1, 1) b waits for a's
    tasks and runs 100 - 150 s; on a larger one every task starts at once."""
    return {
        "name": "hand",
        "trace": {
            "format": "inline",
            "users": [
                {"name": "a", "tasks": 2, "demand": [0.5, 0.5], "run_s": 100},
                {"name": "b", "join_s": 10, "tasks": 1, "demand": [0.5, 0.5], "run_s": 50},
            ],
        },
        "cluster": {"classes": [{"name": "s", "count": 1, "capacity": [capacity, capacity]}]},
        "schedulers": list(schedulers),
        "collect": {"utilization_interval_s": 10, "horizon_s": 300},
    }


def two_users_config(tmp_path: Path, horizon_s: float = 200) -> Path:
    """A scenario file in ``tmp_path``: two users' ten 10-s tasks, (0.5, 0.1) and (0.1, 0.5), on
    one (1, 1) server under ``drf`` and ``bf-drfh``, utilisation every 5 s, up to ``horizon_s``."""
    path = tmp_path / f"two-users-{horizon_s:g}.yaml"
    cfg: dict[str, Any] = {
        "name": "two-users",
        "trace": {
            "format": "inline",
            "users": [
                {"name": "a", "demand": [0.5, 0.1], "tasks": 10, "run_s": 10},
                {"name": "b", "demand": [0.1, 0.5], "tasks": 10, "run_s": 10},
            ],
        },
        "cluster": {"classes": [{"name": "s", "count": 1, "capacity": [1.0, 1.0]}]},
        "schedulers": ["drf", "bf-drfh"],
        "collect": {"utilization_interval_s": 5, "horizon_s": horizon_s},
    }
    path.write_text(yaml.safe_dump(cfg))
    return path


def reclaim_config(name: str, scheduler: dict[str, Any]) -> dict[str, Any]:
    """The preempting schedulers' worked example: one server (1, 1); queue ``batch`` (no
    guarantee) starts four quarter tasks of 100 s at 0 s; queue ``prod`` (guaranteed half the
    pool) submits two quarter tasks of 20 s at 10 s. ``scheduler`` is its one scheduler spec."""
    return {
        "name": name,
        "trace": {
            "format": "inline",
            "users": [
                {"name": "batch", "join_s": 0, "demand": [0.25, 0.25], "tasks": 4, "run_s": 100},
                {"name": "prod", "join_s": 10, "demand": [0.25, 0.25], "tasks": 2, "run_s": 20},
            ],
        },
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
        "queues": [{"id": "prod", "guarantee_share": [0.5, 0.5]}, {"id": "batch"}],
        "leaves": {"by": "user", "users": {"prod": "prod", "batch": "batch"}},
        "schedulers": [scheduler],
        "collect": {"utilization_interval_s": 10, "horizon_s": 300},
    }


def run_on_tree(
    sched: Any,
    frame: pd.DataFrame,
    capacity: np.ndarray,
    tree: Any,
    users: dict[str, str],
    *,
    end_s: float,
    horizon_s: float = math.inf,
    interval_s: float = 60.0,
    on_sample: Any = None,
) -> Any:
    """Run ``sched`` over ``frame`` (read until ``end_s``) on servers ``capacity`` (cpu, mem),
    each user in the queue of ``tree`` that ``users`` maps it to (the root otherwise), with the
    engine's utilisation sampled every ``interval_s`` (``on_sample`` called then); the
    :class:`~fairsim.simulator.results.RunResult`."""
    from fairsim.scenario.config import LeafRule
    from fairsim.scenario.queues import QueueTaskSource
    from fairsim.simulator.cluster import ClusterState
    from fairsim.simulator.engine import Engine
    from fairsim.simulator.workload import FrameTaskSource

    source = QueueTaskSource(
        FrameTaskSource(frame, end_s=end_s), LeafRule(by="user", users=users), tree
    )
    return Engine(
        ClusterState(capacity, ("cpu", "mem")),
        sched,
        source,
        horizon_s=horizon_s,
        utilization_interval_s=interval_s,
        on_sample=on_sample,
    ).run()


def held_by_limits(result: Any, tree: Any, users: dict[str, str]) -> np.ndarray:
    """Per task of a :func:`run_on_tree` result (bool, shape (n_tasks,)): it is larger than
    the limit of a queue on its path (it never starts, as in YARN and Kueue), or behind such a
    task in its leaf (a leaf's tasks start in submission order; task ids are in arrival
    order)."""
    t = result.tasks
    names = np.array(result.users, dtype=object)[t["user"]]
    code = {u: tree.ids.index(q) for u, q in users.items()}
    too_big = np.zeros(len(names), dtype=bool)
    for i, u in enumerate(names.tolist()):
        c = code.get(str(u), -1)
        while c >= 0:
            too_big[i] |= bool((t["demand"][i] > tree.limit[c] * (1 + 1e-9) + 1e-12).any())
            c = int(tree.parent[c])
    stuck = too_big.copy()
    for u in np.unique(names):
        mine = np.flatnonzero(names == u)
        stuck[mine] = np.maximum.accumulate(too_big[mine])
    return stuck
