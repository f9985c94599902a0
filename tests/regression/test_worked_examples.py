"""The papers' worked examples for the online heuristics (run as static progressive filling)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fairsim.schedulers.exact.instance import parse_instance
from fairsim.schedulers.static_fill import progressive_fill

# DRFH paper, Section III-A, Fig. 1: servers (2 CPU, 12 GB) and (12 CPU, 2 GB).
FIG1 = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [2, 12]}, {"id": "s2", "capacity": [12, 2]}],
    "users": [{"id": "u1", "demand": [0.2, 1]}, {"id": "u2", "demand": [1, 0.2]}],
}
# Ghodsi et al. (DRF), Section 4: one server <9 CPU, 18 GB>; A = <1, 4>, B = <3, 1>.
DRF = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [9, 18]}],
    "users": [{"id": "A", "demand": [1, 4]}, {"id": "B", "demand": [3, 1]}],
}


def test_fig1_best_fit_gives_10_and_10() -> None:
    counts = progressive_fill("bf-drfh", parse_instance(FIG1))
    assert counts.tolist() == [[10, 0], [0, 10]]


def test_fig1_first_fit_is_the_naive_split() -> None:
    # First-Fit fills server 1 first: 5 + 1 tasks there, then 1 + 5 on server 2 (Fig. 2's split).
    assert progressive_fill("ff-drfh", parse_instance(FIG1)).sum(axis=1).tolist() == [6, 6]


@pytest.mark.parametrize("name", ["ff-drfh", "bf-drfh"])
def test_drf_example_gives_3_and_2(name: str) -> None:
    assert progressive_fill(name, parse_instance(DRF)).tolist() == [[3], [2]]


def test_weights_max_tasks_and_eligibility() -> None:
    inst = dict(DRF)
    inst["users"] = [
        {"id": "A", "demand": [1, 1], "weight": 2},
        {"id": "B", "demand": [1, 1], "weight": 1},
    ]
    # weighted progressive filling: A gets twice B's dominant share (6 vs 3 of 9 CPUs)
    assert progressive_fill("bf-drfh", parse_instance(inst)).tolist() == [[6], [3]]
    inst["users"][0]["max_tasks"] = 2
    assert progressive_fill("bf-drfh", parse_instance(inst)).tolist() == [[2], [7]]
    two = dict(FIG1)
    two["users"] = [{"id": "u1", "demand": [0.2, 1], "eligible": ["s2"]}, FIG1["users"][1]]
    counts = progressive_fill("bf-drfh", parse_instance(two))
    assert counts[0, 0] == 0 and counts[0, 1] >= 1


# Eq. 9 with three resources: servers A (2, 2, 6), B (2, 4, 2), C (0.5, 0, 100), totals
# (4.5, 6, 108); one task of demand (1, 1, 1). In shares of the totals, D/D_1 = (1, 0.75, 1/24):
# H(A) = |1/24 - 1/8| = 1/12, H(B) = |0.75 - 1.5| = 0.75; C cannot hold it (no memory).
# (Raw ratios would rate A at 2 and B at 1, and pick B.)
EQ9_THREE = {
    "resources": ["cpu", "mem", "disk"],
    "servers": [
        {"id": "A", "capacity": [2, 2, 6]},
        {"id": "B", "capacity": [2, 4, 2]},
        {"id": "C", "capacity": [0.5, 0, 100]},
    ],
    "users": [{"id": "u", "demand": [1, 1, 1], "max_tasks": 1}],
}


def eq9(demand: list[float], free: list[float], total: list[float]) -> float:
    """H(i, l) of the DRFH paper's eq. 9, with D_i and c̄_l as shares of the pool's totals."""
    d = [x / t for x, t in zip(demand, total, strict=True)]
    c = [x / t for x, t in zip(free, total, strict=True)]
    return sum(abs(a / d[0] - b / c[0]) for a, b in zip(d, c, strict=True))


def test_best_fit_eq9_in_shares_with_three_resources() -> None:
    total = [4.5, 6.0, 108.0]
    assert eq9([1, 1, 1], [2, 2, 6], total) == pytest.approx(1 / 12)
    assert eq9([1, 1, 1], [2, 4, 2], total) == pytest.approx(0.75)
    assert progressive_fill("bf-drfh", parse_instance(EQ9_THREE)).tolist() == [[1, 0, 0]]
    # without the cap it goes on filling by eq. 9: 2 tasks on A (its CPU), then 2 on B
    unbounded = {**EQ9_THREE, "users": [{"id": "u", "demand": [1, 1, 1]}]}
    assert progressive_fill("bf-drfh", parse_instance(unbounded)).tolist() == [[2, 2, 0]]


def _solve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fairsim.cli", "solve", *args],
        capture_output=True,
        text=True,
        check=False,
    )


def test_cli_solve_bf_drfh_uses_eq9_in_shares(tmp_path: Path) -> None:
    f = tmp_path / "eq9.json"
    f.write_text(json.dumps(EQ9_THREE))
    out = _solve("bf-drfh", str(f))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["tasks"] == [[1, 0, 0]]


def test_cli_solve_contract(tmp_path: Path) -> None:
    f = tmp_path / "fig1.json"
    f.write_text(json.dumps(FIG1))
    p = _solve("bf-drfh", str(f))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["mechanism"] == "bf-drfh"
    assert out["users"] == ["u1", "u2"] and out["servers"] == ["s1", "s2"]
    assert out["tasks"] == [[10, 0], [0, 10]]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"servers": [{"id": "s1", "capacity": [-1, 2]}]}, r"servers\[0\]\.capacity\[0\]: -1"),
        (
            {"servers": [{"id": "s1", "capacity": ["x", 2]}]},
            r"servers\[0\]\.capacity\[0\]: 'x' is not a number",
        ),
        ({"users": [{"id": "u", "demand": [1]}]}, r"users\[0\]\.demand: has 1 entries, expected 2"),
        ({"users": [{"id": "u", "demand": [0, 0]}]}, r"users\[0\]\.demand: \[0, 0\] is all zero"),
        (
            {"users": [{"id": "u", "demand": [1, 1], "eligible": ["nope"]}]},
            r"users\[0\]\.eligible: unknown server id 'nope'",
        ),
    ],
)
def test_cli_solve_bad_input_exits_2_with_one_line(
    tmp_path: Path, patch: dict, message: str
) -> None:
    bad = {**FIG1, **patch}
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(bad))
    p = _solve("bf-drfh", str(f))
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr
    import re

    assert re.search(message, lines[0]), lines[0]


def test_cli_solve_unknown_mechanism(tmp_path: Path) -> None:
    f = tmp_path / "fig1.json"
    f.write_text(json.dumps(FIG1))
    p = _solve("bf-drfx", str(f))
    assert p.returncode == 2
    assert "unknown scheduler 'bf-drfx'; did you mean 'bf-drfh'" in p.stderr
