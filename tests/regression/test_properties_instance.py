"""``fairsim properties --instance FILE.json``: one instance of the user's, with counterexample
files that name the violating users, the amounts and the misreport (the papers' known violations,
docs/mechanisms.md "What it finds")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import fairsim
from fairsim.cli import main

# Ghodsi et al. (DRF) Section 5.1: AF on <30, 30> with <1, 3> and <1, 1> breaks sharing incentive.
AF_SI = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [30, 30]}],
    "users": [{"id": "1", "demand": [1, 3]}, {"id": "2", "demand": [1, 1]}],
}
# Bonald and Roberts Section 2.3: PF is not strategy-proof on a1 = (1/2, 1), a2 = (1, 1/2).
BR_PF = {
    "resources": ["r1", "r2"],
    "servers": [{"id": "s", "capacity": [1, 1]}],
    "users": [{"id": "1", "demand": [0.5, 1]}, {"id": "2", "demand": [1, 0.5]}],
}

# docs/hdrf.md's example: queue n1 with one user of <0, 1>, queue n2 with <1, 0> and <0, 1>.
HDRF_TREE = {
    "resources": ["cpu", "gpu"],
    "servers": [{"id": "cluster", "capacity": [10, 10]}],
    "queues": [{"id": "n1", "parent": None, "weight": 1}, {"id": "n2", "weight": 1}],
    "users": [
        {"id": "n1-jobs", "demand": [0, 1], "queue": "n1"},
        {"id": "n2,1", "demand": [1, 0], "queue": "n2"},
        {"id": "n2,2", "demand": [0, 1], "queue": "n2"},
    ],
}


def test_af_sharing_incentive_counterexample_twice_in_the_default_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    f = tmp_path / "af.json"
    f.write_text(json.dumps(AF_SI))
    for _ in range(2):  # the default folder results/properties is replaced, never refused
        assert main(["properties", "--instance", str(f), "--mechanism", "af", "--json"]) == 0
        table = json.loads(capsys.readouterr().out)
        assert table["af"]["sharing-incentive"] == {"checked": 1, "violations": 1}
        assert table["af"]["envy-freeness"] == {"checked": 1, "violations": 0}
    out = tmp_path / "results" / "properties"
    assert sorted(p.name for p in out.iterdir()) == [
        "af--bottleneck-fairness.json",
        "af--sharing-incentive.json",
        "table.json",
        "table.md",
    ]
    data = json.loads((out / "af--sharing-incentive.json").read_text())
    # equal aggregate shares 4 x1 / 30 = 2 x2 / 30 with memory full: 6 and 12 tasks; user 2's
    # half of the server holds 15 of its tasks
    assert data["violation"] == {
        "mechanism": "af",
        "property": "sharing-incentive",
        "instance": 0,
        "users": [{"user": "2", "tasks": 12.0, "fair_tasks": 15.0}],
        "allocation": {"1": 6.0, "2": 12.0},
    }
    # the counterexample is still an instance: fairsim solve replays it
    assert fairsim.solve(data, "af")["tasks"] == [[6.0], [12.0]]


def test_pf_strategy_proofness_counterexample_names_the_misreport(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "br.json"
    f.write_text(json.dumps(BR_PF))
    out = tmp_path / "out"
    args = ["properties", "--instance", str(f), "--mechanism", "pf", "--mechanism", "drf"]
    assert main([*args, "--seed", "1", "--out", str(out), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert table["pf"]["strategy-proofness"] == {"checked": 1, "violations": 1}
    assert table["drf"]["strategy-proofness"] == {"checked": 1, "violations": 0}  # DRF is SP
    v = json.loads((out / "pf--strategy-proofness.json").read_text())["violation"]
    assert v["mechanism"] == "pf" and v["user"] == "2" and v["misreport"] == "demand"
    assert v["true_demand"] == [1.0, 0.5] and v["eligible"] == ["s"]
    # it overstates its demand (raised entries, never lowered)
    assert all(a >= b for a, b in zip(v["demand"], v["true_demand"], strict=True))
    assert v["demand"] != v["true_demand"]
    # truthful PF gives 2/3 task each; the lie gets user 2 bundles worth more true tasks
    assert v["tasks"] == pytest.approx(2 / 3, rel=1e-9)
    assert v["tasks_when_lying"] > v["tasks"] * (1 + 1e-3)
    # the amounts replay: PF on the misreported instance, user 2's bundle in true tasks
    lie = json.loads(json.dumps(BR_PF))
    lie["users"][1]["demand"] = v["demand"]
    x2 = np.sum(fairsim.solve(lie, "pf")["tasks"][1])
    bundle = x2 * np.array(v["demand"])
    assert min(bundle / np.array(v["true_demand"])) == pytest.approx(
        v["tasks_when_lying"], rel=1e-5
    )
    # the counterexample file is accepted back by --instance (its "violation" is not read)
    again = tmp_path / "again"
    assert main([*args[:1], "--instance", str(out / "pf--strategy-proofness.json"),
                 "--mechanism", "pf", "--out", str(again)]) == 0  # fmt: skip
    assert (again / "pf--strategy-proofness.json").is_file()


def test_bad_instance_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "bad.json"
    f.write_text(json.dumps({**BR_PF, "servers": [{"id": "s", "capacity": [1, -1]}]}))
    assert main(["properties", "--instance", str(f), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fairsim: error: servers[0].capacity") and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_hdrf_on_a_given_instance_says_it_was_checked_on_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With ``--instance``, the line under the hierarchical table described the H-DRF examples
    and random trees, which were not checked; it names the given instance now."""
    f = tmp_path / "tree.json"
    f.write_text(json.dumps(HDRF_TREE))
    argv = ["properties", "--instance", str(f), "--mechanism", "hdrf", "--out", str(tmp_path / "o")]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert (
        "hdrf is checked on the given instance with its queue tree (the flat mechanisms" in printed
    )
    assert "H-DRF examples" not in printed and "random trees" not in printed
    assert "hdrf is checked on the given instance" in (tmp_path / "o" / "table.md").read_text()
