"""Capacity is never exceeded, and the online schedulers' answers do not depend on a resource's
units: the engine's tolerance (``simulator/cluster.py``, :func:`capacity_tolerance`) and the
schedulers' slacks are relative to each resource's largest server capacity, not absolute.

With an absolute 1e-9, a pool whose capacities are near 1e-10 let psdsf, yarn-fair, kueue-fair and
drf-lockstep put four times a server's CPU on it, and their task counts changed with the units.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

import fairsim
from fairsim.cli import main
from fairsim.errors import PlacementError
from fairsim.schedulers.exact import EXACT
from fairsim.simulator.cluster import CAPACITY_TOLERANCE, ClusterState, capacity_tolerance

#: Online heuristics (``fairsim solve --online``) on a flat instance.
ONLINE = [
    "slots-4",
    "ff-drfh",
    "bf-drfh",
    "drf",
    "dynamic-drf",
    "c-drfh",
    "tsf",
    "af",
    "pf",
    "bmf",
    "lmm-mms",
    "psdsf",
    "drf-classes",
    "drf-lockstep",
    "hdrf",
    "yarn-fair",
    "kueue-fair",
]
#: Those that admit a task within a slack of the free amount: their counts are the same in any
#: units. The others (progressive filling's First-Fit and Best-Fit, ``schedulers/placement.py``)
#: compare exactly, which never over-commits and is exact under a power-of-2 change of units; in
#: decimal units, float drift can leave an exact fit out (:func:`test_drift_exact_fit`).
TOLERANT = ["slots-4", "psdsf", "drf-lockstep", "yarn-fair", "kueue-fair"]

POW2 = [2.0**-40, 2.0**-20, 2.0**-3, 2.0**20, 2.0**40]
DECIMAL = [1e-12, 1e-10, 1e-6, 1e-3, 1e3, 1e6, 1e12]

HET: dict[str, Any] = {  # three resources, a server without CPU, a GPU only some servers have
    "resources": ["cpu", "mem", "gpu"],
    "servers": [
        {"id": "s1", "capacity": [2, 12, 0]},
        {"id": "s2", "capacity": [12, 2, 4]},
        {"id": "s3", "capacity": [0, 10, 1]},
    ],
    "users": [
        {"id": "u1", "demand": [0.2, 1, 0]},
        {"id": "u2", "demand": [1, 0.2, 0]},
        {"id": "u3", "demand": [1, 1, 1]},
        {"id": "u4", "demand": [0, 1, 0]},
    ],
}
TINY: dict[str, Any] = {  # the prober's instance in units of 1e-10 (tasks that fit exactly)
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [2.0, 12.0]}],
    "users": [{"id": "u1", "demand": [0.2, 1.0]}, {"id": "u2", "demand": [1.0, 0.2]}],
}
DRF: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [9, 18]}, {"id": "s2", "capacity": [3, 30]}],
    "users": [{"id": "a", "demand": [1, 4]}, {"id": "b", "demand": [3, 1]}],
}
INSTANCES = {"het": HET, "tiny": TINY, "drf": DRF}


def _scaled(inst: dict[str, Any], resources: list[int], factor: float) -> dict[str, Any]:
    out = copy.deepcopy(inst)
    for s in out["servers"]:
        for r in resources:
            s["capacity"][r] *= factor
    for u in out["users"]:
        for r in resources:
            u["demand"][r] *= factor
    return out


def _solve(inst: dict[str, Any], name: str) -> list[list[int]]:
    out = fairsim.solve(inst, name, online=name in EXACT or name == "drf-classes")
    return out["tasks"]


def _assert_within_capacity(inst: dict[str, Any], tasks: list[list[int]]) -> None:
    cap = np.array([s["capacity"] for s in inst["servers"]], dtype=np.float64)
    dem = np.array([u["demand"] for u in inst["users"]], dtype=np.float64)
    used = np.asarray(tasks, dtype=np.float64).T @ dem  # (servers, resources)
    assert (used <= cap + CAPACITY_TOLERANCE * cap.max(axis=0)).all(), (used, cap)


def _variants(inst: dict[str, Any]) -> list[list[int]]:
    """Every resource alone, and all of them together."""
    n = len(inst["resources"])
    return [[r] for r in range(n)] + [list(range(n))]


def _assert_same_in_scaled_units(
    inst: dict[str, Any], name: str, want: list[list[int]], factors: list[float]
) -> None:
    """Every resource alone and all of them together (:func:`_variants`), rescaled by each of
    ``factors``: ``name`` places ``want`` again, and no server's capacity is exceeded."""
    for resources in _variants(inst):
        for f in factors:
            scaled = _scaled(inst, resources, f)
            got = _solve(scaled, name)
            assert got == want, (resources, f)
            _assert_within_capacity(scaled, got)


@pytest.mark.parametrize("name", ONLINE)
@pytest.mark.parametrize("which", sorted(INSTANCES))
def test_online_counts_do_not_depend_on_power_of_two_units(name: str, which: str) -> None:
    """A power-of-2 change of units is exact in floating point: every online heuristic gives the
    same placements, and none exceeds a server's capacity."""
    inst = INSTANCES[which]
    want = _solve(inst, name)
    _assert_within_capacity(inst, want)
    _assert_same_in_scaled_units(inst, name, want, POW2)


@pytest.mark.parametrize("name", TOLERANT)
@pytest.mark.parametrize("which", sorted(INSTANCES))
def test_tolerant_counts_do_not_depend_on_decimal_units(name: str, which: str) -> None:
    """Rescaling a resource by 1e-12..1e12 rounds its values: the schedulers that admit within
    the engine's (relative) tolerance still give the same placements."""
    inst = INSTANCES[which]
    _assert_same_in_scaled_units(inst, name, _solve(inst, name), DECIMAL)


@pytest.mark.parametrize("name", ONLINE)
@pytest.mark.parametrize("f", DECIMAL)
def test_online_never_exceeds_capacity_in_decimal_units(name: str, f: float) -> None:
    """Whatever the units, no online heuristic over-commits a server (the engine would refuse it:
    :func:`test_engine_refuses_an_overcommitment_in_any_units`)."""
    for inst in INSTANCES.values():
        scaled = _scaled(inst, list(range(len(inst["resources"]))), f)
        _assert_within_capacity(scaled, _solve(scaled, name))


def test_tiny_instance_counts() -> None:
    """The prober's instance (capacities 2e-10 CPU, 12e-10 memory): psdsf placed 21 tasks of u1
    and 5 of u2, 9.2e-10 CPU on a server of 2e-10; now the counts of the instance in units of
    1e-10."""
    tiny = _scaled(TINY, [0, 1], 1e-10)
    for name in TOLERANT:
        assert _solve(tiny, name) == _solve(TINY, name), name
    assert _solve(tiny, "psdsf") == [[5], [1]]


@pytest.mark.parametrize("f", [*POW2, *DECIMAL, 1.0])
def test_engine_refuses_an_overcommitment_in_any_units(f: float) -> None:
    """The engine accepts a task that fits up to rounding and refuses one more, in any units."""
    cluster = ClusterState(np.array([[2.0 * f, 12.0 * f]]), ["cpu", "mem"])
    assert (
        cluster.tolerance.tolist() == (CAPACITY_TOLERANCE * np.array([2.0 * f, 12.0 * f])).tolist()
    )
    d = (1.0 * f, 0.2 * f)
    cluster.commit(0, 0, d)
    cluster.commit(1, 0, d)  # exactly full in CPU
    with pytest.raises(PlacementError, match="does not fit"):
        cluster.commit(2, 0, d)
    with pytest.raises(PlacementError, match="does not fit"):
        cluster.commit(3, 0, (1e-6 * f, 0.0))  # a millionth of the server more
    cluster.commit(4, 0, (0.0, 11.0 * f))
    # within the tolerance (rounding of repeated sums) is accepted
    cluster.release(0, d)
    cluster.commit(5, 0, (1.0 * f * (1 + 1e-12), 0.0))


def test_capacity_tolerance_is_relative_to_the_largest_server() -> None:
    cap = np.array([[1.0, 64.0, 0.0], [0.5, 128.0, 0.0]])
    assert capacity_tolerance(cap).tolist() == [1e-9, 128e-9, 0.0]
    # in the trace's normalised units (largest server 1) the slack is CAPACITY_TOLERANCE itself
    assert capacity_tolerance(np.array([[1.0, 1.0], [0.25, 0.5]])).tolist() == [1e-9, 1e-9]


TINYSIM: dict[str, Any] = {
    "name": "tinysim",
    "trace": {
        "format": "inline",
        "users": [
            {"name": "a", "join_s": 0, "demand": [0.2e-10, 1.0e-10], "tasks": 30, "run_s": 10},
            {"name": "b", "join_s": 0, "demand": [1.0e-10, 0.2e-10], "tasks": 30, "run_s": 10},
        ],
    },
    "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [2.0e-10, 12.0e-10]}]},
    "schedulers": ["psdsf", "yarn-fair", "kueue-fair", "drf-lockstep", "bf-drfh"],
    "collect": {"utilization_interval_s": 5},
}


def test_tinysim_run_never_exceeds_capacity(tmp_path: Path) -> None:
    """``fairsim run`` on a pool of 2e-10 CPU: utilisation was 439 % (psdsf), 450 % (yarn-fair),
    253.5 % (drf-lockstep); now at most 100 % at every sample, and the tolerant schedulers place
    as many tasks at a time as in units of 1e-10 (the server full in CPU)."""
    cfg = tmp_path / "tinysim.yaml"
    cfg.write_text(yaml.safe_dump(TINYSIM))
    out = tmp_path / "out"
    assert main(["run", str(cfg), "--out", str(out), "--no-progress"]) == 0
    for name in TINYSIM["schedulers"]:
        util = pd.read_parquet(out / name / "utilization.parquet")
        assert float(util[["cpu", "mem"]].to_numpy().max()) <= 1.0 + 1e-9, name
        summary = json.loads((out / name / "summary.json").read_text())
        assert summary["tasks_completed"] == 60, name
        if name != "bf-drfh":
            assert float(util["cpu"].max()) >= 1.0 - 1e-9, name


DRIFT: dict[str, Any] = {  # 16 tasks of 0.0005 fill 0.008 exactly; 0.008 - 15 x 0.0005 < 0.0005
    "resources": ["cpu"],
    "servers": [{"id": "s0", "capacity": [0.008]}],
    "users": [{"id": "u0", "demand": [0.0005]}],
}


@pytest.mark.parametrize("name", ONLINE)
def test_drift_exact_fit(name: str) -> None:
    """16 tasks of 0.0005 on 0.008 (an exact fit in decimal, not in binary). The tolerant
    schedulers place 16 in any units; the exact comparison of progressive filling
    (``schedulers/placement.py``) places 16 in units where the fit is exact in binary (8 and
    0.5) and at most 16 (never more than fit) otherwise."""
    for f in [1.0, 1e3, 1e-9, 1e9, 2.0**-30, 2.0**30]:
        got = _solve(_scaled(DRIFT, [0], f), name)
        total = sum(map(sum, got))
        if name.startswith("slots-"):
            assert total == 4, (f, got)  # a task takes one of the server's 4 slots
        elif name in TOLERANT:
            assert total == 16, (f, got)
        else:
            assert total <= 16, (f, got)
    if not name.startswith("slots-"):
        assert sum(map(sum, _solve(_scaled(DRIFT, [0], 1e3), name))) == 16  # 8 and 0.5: exact


@pytest.mark.xfail(strict=True, reason="progressive filling compares free >= need exactly")
def test_drift_exact_fit_first_fit_decimal() -> None:
    """Known limitation, kept for identical results on the shipped traces: First-Fit (and Best-Fit,
    and the online mechanisms on progressive filling) leaves the 16th task out at 0.008 / 0.0005,
    where float drift makes the last free amount 3e-18 short."""
    assert sum(map(sum, _solve(DRIFT, "ff-drfh"))) == 16


ZEROCAP: dict[str, Any] = {  # no server has a GPU; B demands one
    "resources": ["cpu", "mem", "gpu"],
    "servers": [{"id": "s1", "capacity": [9, 18, 0]}, {"id": "s2", "capacity": [3, 3, 0]}],
    "users": [{"id": "A", "demand": [1, 1, 0]}, {"id": "B", "demand": [1, 1, 1]}],
}


@pytest.mark.parametrize("name", [n for n in ONLINE if n != "slots-4"])
def test_zero_capacity_resource_is_left_out_of_the_online_fill(name: str) -> None:
    """A resource with zero total capacity ended in ZeroDivisionError (the dominant shares
    divide by the pool's total); now it is left out, as the exact mechanisms do: B, which
    demands it, places nothing, A fills the rest."""
    out = fairsim.solve(ZEROCAP, name, online=name in EXACT or name == "drf-classes")
    assert out["tasks"] == [[9, 3], [0, 0]]
    assert out["dominant_shares"] == [1.0, 0.0]
    assert fairsim.solve(ZEROCAP, "drfh")["tasks"] == [[9.0, 3.0], [0.0, 0.0]]


def test_zero_capacity_resource_solve_cli(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "zerocapres.json"
    path.write_text(json.dumps(ZEROCAP))
    assert main(["solve", "--online", "ff-drfh", str(path)]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["total_tasks"] == [12, 0]
    assert "Traceback" not in out.err
