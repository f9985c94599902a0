"""UDRF offline (Tahir et al., Section III-A, Fig. 3) on constructed instances.

The numbers of the paper's Fig. 1 example are not recoverable (the text available to us lacks its
figure), so these tests check the definitions (Definitions 1-2, eq. 12) and properties, not
published numbers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import FIG1_LIKE, random_job_instance

from fairsim.schedulers.exact import JOB_EXACT, solve_udrf_json
from fairsim.schedulers.exact.instance import InstanceError, NumericalRangeError
from fairsim.schedulers.exact.udrf import (
    dominant_shares,
    job_shares,
    parse_job_instance,
    rducs,
    solve_udrf,
)
from fairsim.schedulers.exact.verification import udrf_problem


def _usage(inst, x):
    return x @ job_shares(inst)  # fraction of each (m, k) in use


def test_rducs_are_connected_components():
    inst = parse_job_instance(FIG1_LIKE)
    assert rducs(inst) == [[0, 1, 2], [3]]
    # a chain u0 - u1 - u2 via two different resources is one RDUC; u3 shares only the class,
    # not a resource (mem vs cpu of class b), so it is not adjacent to u1.
    chain = {
        "resources": ["cpu", "mem"],
        "servers": [{"id": "a", "capacity": [1, 1]}, {"id": "b", "capacity": [1, 1]}],
        "users": [
            {"id": "u0", "jobs": [{"id": "j", "demand": {"a": [1, 0]}}]},
            {"id": "u1", "jobs": [{"id": "j", "demand": {"a": [1, 0], "b": [1, 0]}}]},
            {"id": "u2", "jobs": [{"id": "j", "demand": {"b": [2, 0]}}]},
            {"id": "u3", "jobs": [{"id": "j", "demand": {"b": [0, 1]}}]},
        ],
    }
    assert rducs(parse_job_instance(chain)) == [[0, 1, 2], [3]]


@pytest.mark.parametrize("seed", range(40))
def test_rducs_match_definition(seed):
    inst = parse_job_instance(random_job_instance(np.random.default_rng(seed)))
    comps = rducs(inst)
    assert sorted(u for c in comps for u in c) == list(range(len(inst.user_ids)))
    pos = job_shares(inst) > 0
    p = np.zeros((len(inst.user_ids), pos.shape[1]), dtype=bool)
    for j, u in enumerate(inst.job_user):
        p[u] |= pos[j]
    where = {u: k for k, c in enumerate(comps) for u in c}
    for u in range(len(p)):
        for v in range(len(p)):
            if (p[u] & p[v]).any():  # an edge of Definition 1 never crosses RDUCs
                assert where[u] == where[v]
    for c in comps:  # and every RDUC is connected
        reach, todo = {c[0]}, [c[0]]
        while todo:
            u = todo.pop()
            for v in c:
                if v not in reach and (p[u] & p[v]).any():
                    reach.add(v)
                    todo.append(v)
        assert reach == set(c)


def _check_udrf(inst, x):
    """Feasibility (eq. 6) and the defining conditions of the Fig. 3 allocation: the check that
    ``fairsim solve udrf`` runs after every solve."""
    assert udrf_problem(inst, x) is None


def test_fig1_like_instance():
    inst = parse_job_instance(FIG1_LIKE)
    x = solve_udrf(inst)
    _check_udrf(inst, x)
    s = dominant_shares(inst, x)
    # u1 and u2 split the standard CPU with equal RDUC-wise dominant shares (4/7)
    assert s[0] == pytest.approx(4 / 7) and s[1] == pytest.approx(4 / 7)
    # u1's job1 keeps growing after job2 saturates until its hadoop share equals u1's share
    # (Section II-A: "the dominant resource of job1 in the hadoop is 50%")
    assert x[0] == pytest.approx(56 * 4 / 7) and x[1] == pytest.approx(16 * 4 / 7)
    assert s[3] == pytest.approx(1.0)  # u4 is alone in its RDUC and takes its whole class


@pytest.mark.parametrize("seed", range(60))
def test_random_instances_feasible_and_max_min(seed):
    data = random_job_instance(np.random.default_rng(seed), bounds=seed % 2 == 1)
    inst = parse_job_instance(data)
    _check_udrf(inst, solve_udrf(inst))


@pytest.mark.parametrize("seed", range(20))
def test_users_in_different_rducs_do_not_interact(seed):
    data = random_job_instance(np.random.default_rng(100 + seed))
    inst = parse_job_instance(data)
    x = solve_udrf(inst)
    for comp in rducs(inst):
        sub = dict(data, users=[data["users"][u] for u in comp])
        xs = solve_udrf(parse_job_instance(sub))
        mine = np.isin(inst.job_user, comp)
        np.testing.assert_allclose(x[mine], xs, rtol=1e-9, atol=1e-9)
    # scaling up a resource used only by another RDUC leaves this one unchanged
    comps = rducs(inst)
    if len(comps) > 1:
        other = parse_job_instance(data)
        free = ~(job_shares(inst)[np.isin(inst.job_user, comps[0])] > 0).any(axis=0)
        cap = other.capacity.reshape(-1).copy()
        cap[free] *= 3
        data2 = json.loads(json.dumps(data))
        for m, s in enumerate(data2["servers"]):
            s["capacity"] = cap.reshape(other.capacity.shape)[m].tolist()
        x2 = solve_udrf(parse_job_instance(data2))
        mine = np.isin(inst.job_user, comps[0])
        np.testing.assert_allclose(x2[mine], x[mine], rtol=1e-9, atol=1e-9)


def test_weights_and_max_runs():
    data = {
        "resources": ["cpu"],
        "servers": [{"id": "c", "capacity": [12]}],
        "users": [
            {"id": "a", "weight": 2, "jobs": [{"id": "j", "demand": {"c": [1]}}]},
            {"id": "b", "jobs": [{"id": "j", "demand": {"c": [1]}}]},
        ],
    }
    np.testing.assert_allclose(solve_udrf(parse_job_instance(data)), [8, 4])
    data["users"][0]["jobs"][0]["max_runs"] = 2
    np.testing.assert_allclose(solve_udrf(parse_job_instance(data)), [2, 10])


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        (lambda d: d["users"][0].pop("jobs"), "users[0].jobs"),
        (
            lambda d: d["users"][1]["jobs"][0]["demand"].update(gpu=[1, 1]),
            "users[1].jobs[0].demand",
        ),
        (lambda d: d["users"][2]["jobs"][0]["demand"].update({"public-ip": [1]}), "public-ip"),
        (lambda d: d["users"][0]["jobs"][0].update(max_runs=-1), "users[0].jobs[0].max_runs"),
        (lambda d: d["servers"][3].update(capacity=[0, 32]), "users[3].jobs[0].demand.high-mem"),
        (lambda d: d["users"][0].update(demand=[1, 1]), "users[0]"),
    ],
)
def test_bad_input_names_the_field(patch, field):
    data = json.loads(json.dumps(FIG1_LIKE))
    patch(data)
    with pytest.raises(InstanceError, match=field.replace("[", r"\[").replace("]", r"\]")):
        parse_job_instance(data)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fairsim.cli", *args],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_cli_round_trip_and_bad_input(tmp_path):
    assert "udrf" in JOB_EXACT
    path = tmp_path / "udrf.json"
    path.write_text(json.dumps(FIG1_LIKE))
    res = _cli("solve", "udrf", str(path))
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out == json.loads(json.dumps(solve_udrf_json(parse_job_instance(FIG1_LIKE))))
    assert out["mechanism"] == "udrf" and out["users"] == ["u1", "u2", "u3", "u4"]
    assert out["servers"] == ["hadoop", "standard", "public-ip", "high-mem"]
    assert out["rducs"] == [["u1", "u2", "u3"], ["u4"]]
    assert out["tasks"][1][1] == pytest.approx(out["jobs"]["u2"]["job"])  # one task per class
    bad = json.loads(json.dumps(FIG1_LIKE))
    bad["users"][2]["jobs"][0]["demand"]["gpu-box"] = [1, 1]
    path.write_text(json.dumps(bad))
    res = _cli("solve", "udrf", str(path))
    assert res.returncode == 2 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "users[2].jobs[0].demand" in lines[0] and "gpu-box" in lines[0]


def test_check_after_solve_rejects_a_wrong_allocation(monkeypatch):
    import fairsim.schedulers.exact as exact

    inst = parse_job_instance(FIG1_LIKE)
    monkeypatch.setattr(exact, "solve_udrf", lambda i: np.zeros(len(i.job_user)))
    with pytest.raises(
        NumericalRangeError,
        match=r"^udrf: the instance is numerically out of range for the exact solver: job 'job1' "
        r"of user 'u1' could run more than its 0 runs \(relative tolerance 1e-06\)$",
    ):
        solve_udrf_json(inst)
    x = solve_udrf(inst)
    x[0] *= 2  # hadoop over capacity
    assert udrf_problem(inst, x) == "a machine-class resource is 1.14285714 times its capacity"


@pytest.mark.parametrize("seed", range(20))
def test_runs_do_not_depend_on_units(seed):
    """Resource k measured in another unit (the same factor in every class): same runs."""
    rng = np.random.default_rng(300 + seed)
    data = random_job_instance(rng, bounds=seed % 2 == 1)
    factor = 10.0 ** rng.uniform(-6, 9, len(data["resources"]))
    scaled = json.loads(json.dumps(data))
    for s in scaled["servers"]:
        s["capacity"] = (np.array(s["capacity"]) * factor).tolist()
    for u in scaled["users"]:
        for job in u["jobs"]:
            job["demand"] = {m: (np.array(v) * factor).tolist() for m, v in job["demand"].items()}
    x = solve_udrf(parse_job_instance(data))
    y = solve_udrf(parse_job_instance(scaled))
    np.testing.assert_allclose(y, x, rtol=1e-9, atol=1e-12)


def test_overflowing_ratio_is_refused():
    data = json.loads(json.dumps(FIG1_LIKE))
    data["servers"][0]["capacity"] = [1e308, 64]
    data["users"][0]["jobs"][0]["demand"]["hadoop"] = [1e-10, 1]
    with pytest.raises(
        NumericalRangeError,
        match=r"^users\[0\]\.jobs\[0\]\.demand\.hadoop\[0\]: 1e-10 per run against a capacity "
        r"of 1e\+308: the ratio inf is outside float64's normal range",
    ):
        parse_job_instance(data)
