"""The PS-DSF paper's Section V reproduction (``fairsim experiment psdsf``): its config, the
backlogged users with activity windows, and the ``--quick`` run against the paper's numbers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fairsim.errors import ConfigError
from fairsim.experiments.psdsf.experiment import (
    CONFIG,
    D2_CPU_ALTERNATIVE,
    _util,
    exact_allocations,
    pool,
    run_experiment,
    run_scheduler,
)
from fairsim.scenario.config import load_config, parse_config
from fairsim.scenario.pool import build_pool
from fairsim.scenario.workload import resolve_workload


def test_shipped_config_recovers_the_papers_cluster() -> None:
    cfg = load_config(CONFIG)
    cap, classes = pool(cfg)
    assert cap.shape == (120, 2)
    assert [classes.count(k) for k in "ABCD"] == [8, 68, 33, 11]
    np.testing.assert_allclose(cap[classes.index("C")], [0.5, 0.25])
    frame = build_pool(cfg)
    np.testing.assert_allclose(frame[["cpu", "mem"]].to_numpy(), cap)
    assert [u.weight for u in cfg.trace.users or []] == [2, 2, 1, 1]


def test_user_2_cpu_demand_is_2_15_and_keeps_table_iv() -> None:
    # Table III allows d_2 = (a, 0.2) with any a <= 2/15 (class D: 11 * min(0.5 / a, 3.75) =
    # 41.25); the config takes a = 2/15. The exact allocators then give Table IV's PS-DSF
    # allocation and TSF's totals, as with a = 0.1, and class D's CPU stays full while user 4
    # is away (user 2 gets 41.25 tasks there: 41.25 * 2/15 = 5.5 = 11 * 0.5); with a = 0.1 it
    # would be 75 %.
    cfg = load_config(CONFIG)
    users = [u.name for u in cfg.trace.users or []]
    d2 = next(u.demand for u in cfg.trace.users or [] if u.name == "user2")
    np.testing.assert_allclose([4 * x for x in d2], [2 / 15, 0.2], rtol=1e-15)
    for a in (2 / 15, D2_CPU_ALTERNATIVE):
        alt = {"user2": [a, 0.2]}
        x = exact_allocations(cfg, users, demands=alt)
        np.testing.assert_allclose(
            x["psdsf"],
            [[40, 170, 0, 0], [20, 85, 0, 0], [0, 0, 82.5, 0], [0, 0, 0, 27.5]],
            atol=1e-6,
        )
        np.testing.assert_allclose(
            x["tsf"].sum(axis=1), [204.945, 107.527, 58.343, 35.552], atol=1e-3
        )
        np.testing.assert_allclose(
            x["tsf"][:, 2:], [[0, 0], [0, 0], [58.343, 0], [8.052, 27.5]], atol=1e-3
        )
    away = users[:3]
    for a, full_d in ((2 / 15, 1.0), (D2_CPU_ALTERNATIVE, 0.75)):
        alt = {"user2": [a, 0.2]}
        x = exact_allocations(cfg, away, mechanisms=("psdsf",), demands=alt)["psdsf"]
        np.testing.assert_allclose(
            x, [[80, 171.25, 0, 0], [0, 84.375, 0, 41.25], [0, 0, 82.5, 0]], atol=1e-6
        )
        assert _util(x, cfg, away, "D", alt) == pytest.approx(full_d)
        # the CPU of classes A and B is never full: 210 * 0.1 + 105 * a < 42
        y = exact_allocations(cfg, users, mechanisms=("psdsf",), demands=alt)["psdsf"]
        assert _util(y, cfg, users, ["A", "B"], alt) == pytest.approx((21 + 105 * a) / 42)


def _cfg(**user: object) -> dict:
    u = {"name": "a", "demand": [0.1, 0.1], "run_s": [1, 2], "windows": [[0, 10]]}
    u.update(user)
    return {
        "name": "x",
        "trace": {"format": "inline", "users": [u]},
        "cluster": {"classes": [{"name": "C", "count": 2, "capacity": [0.5, 0.25]}]},
        "schedulers": ["psdsf"],
    }


@pytest.mark.parametrize(
    ("user", "message"),
    [
        (
            {"eligible": ["E"]},
            r"^config: trace\.users\.0\.eligible: unknown server class 'E' \(classes: C\)$",
        ),
        ({"windows": [[5, 1]]}, r"^config: trace\.users\.0\.windows: windows must be \[start"),
        ({"run_s": [2, 1]}, r"^config: trace\.users\.0\.run_s: run_s must be > 0 or \[lo, hi\]"),
        ({"windows": None}, r"^config: trace\.users\.0: user 'a': tasks is required"),
        ({"weight": 0}, r"^config: trace\.users\.0\.weight: .*greater than 0"),
    ],
)
def test_user_errors_are_one_line_and_name_the_field(user: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        parse_config(_cfg(**user))
    assert "\n" not in str(err.value)


def test_classes_exclude_servers() -> None:
    data = _cfg()
    data["cluster"]["servers"] = 4
    with pytest.raises(ConfigError, match=r"^config: cluster: servers must not be given"):
        parse_config(data)


def test_fairsim_run_points_to_the_experiment() -> None:
    with pytest.raises(ConfigError, match=r"trace\.users\.0: .*'fairsim experiment psdsf'"):
        resolve_workload(parse_config(_cfg()))


def test_user_4_submits_nothing_while_inactive() -> None:
    cfg = load_config(CONFIG)
    run = run_scheduler("psdsf", cfg, quick=True)
    t = run["result"].tasks
    user4 = run["order"].index("user4")
    sub = t["submit_s"][t["user"] == user4]
    # quick: windows / 10, so inactive in (10, 25) s
    assert sub.size and not np.any((sub >= 10.0) & (sub < 25.0))
    assert np.any(sub >= 25.0)
    # ...and its tasks fade out within a few run times (<= 3 s) after 10 s
    start = t["start_s"][t["user"] == user4]
    assert np.nanmax(start[start < 25.0]) < 10.0 + 4.0


def test_quick_reproduction_matches_table_iv_and_fig_6(tmp_path: Path) -> None:
    report = run_experiment(out=tmp_path, quick=True, progress=False)
    text = report.read_text()
    assert (tmp_path / "fig6.png").stat().st_size > 10_000
    assert "| Table IV, TSF (the paper computes it exactly)" in text
    s = json.loads((tmp_path / "summary.json").read_text())["schedulers"]
    ps = s["psdsf"]
    # Table IV, PS-DSF: user 3 all of class C (82.5), user 4 all of class D (27.5)
    tasks = np.array(ps["phases"][0]["tasks"])
    assert abs(tasks[2, 2] - 82.5) <= 1.0 and abs(tasks[3, 3] - 27.5) <= 1.0
    assert tasks[2, 3] < 1.0 and tasks[3, 2] < 1.0
    # Fig. 6: class C's CPU is (nearly) full under PS-DSF, and fuller than under TSF and C-DRFH
    assert ps["mean_util"]["cpu_C"] > 0.9
    for other in ("tsf", "c-drfh"):
        assert ps["mean_util"]["cpu_C"] > s[other]["mean_util"]["cpu_C"] + 0.2
    # ...and PS-DSF settles within 10 s of each change of the active users
    assert all(x["settle_s"] <= 10.0 for x in ps["settle"])
    assert "| Fig. 6: distributed PS-DSF promptly converges" in text and "| PASS |" in text
    # the dependence on user 2's CPU demand, from the exact allocations
    assert "100.0 % of class D's CPU with 0.1333 (this run) and 75.0 % with 0.1." in text
    # memory: TSF and C-DRFH judged exact, as the paper computes them (full); CPU of A and B
    # not full under any mechanism (83.3 % exact PS-DSF: Table III's d_2 cannot fill it)
    assert "exact tsf 100.0 %, exact c-drfh 100.0 %" in text
    assert "for information: exact psdsf 83.3 %" in text


def test_cli_quick(tmp_path: Path) -> None:
    from fairsim.experiments.cli import main

    assert main(["experiment", "psdsf", "--quick", "--no-progress", "--out", str(tmp_path)]) == 0
    assert "| PASS |" in (tmp_path / "report.md").read_text()
