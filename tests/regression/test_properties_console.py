"""``fairsim properties`` says on the console what it checked and where the evidence went: the
instances (how many, the papers' and the random family's ranges, the seed) and the
counterexample files (folder, or that none were found)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fairsim.cli import main
from fairsim.schedulers.exact import property_table as pt


def _said(text: str) -> str:
    return " ".join(text.split())


def test_console_names_instances_and_counterexamples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "props"
    args = ["properties", "--mechanism", "af", "--mechanism", "drf", "--instances", "6"]
    assert main([*args, "--seed", "2", "--out", str(out)]) == 0
    text = _said(capsys.readouterr().out)
    assert text.startswith("| mechanism | sharing-incentive |")
    assert (
        "6 instances: the papers' 4 (PS-DSF Fig. 1, Bonald-Roberts Section 2.3, AF's "
        "sharing-incentive counterexample, DRFH Fig. 1), then 2 random ones (seed 2): 2-4 users, "
        "1-3 servers, 2-3 resources; integer capacities 1-12 and demands 0-4 per resource (a user "
        "drawing all zeros gets one unit of one); weights 1-3 for 30% of users (else 1); no "
        "max_tasks; placement constraints: 40% of users restricted to some servers (each kept "
        "with probability 0.6), and in 30% of instances with several servers the last one lacks "
        "a resource." in text
    )
    written = sorted(p.name for p in out.iterdir() if "--" in p.name)
    assert written and all(p.startswith(("af--", "drf--")) for p in written)
    assert (
        f"Counterexamples: {len(written)} files in {out}, one per violated mechanism and "
        "property (<mechanism>--<property>.json" in text
    )
    assert f"table in {out}/table.md and table.json." in text


def test_console_without_counterexamples_and_with_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "props"
    args = ["properties", "--mechanism", "drf", "--instances", "2", "--unconstrained"]
    assert main([*args, "--seed", "3", "--out", str(out), "--json"]) == 0
    got = capsys.readouterr()
    table = json.loads(got.out)  # stdout stays one JSON document; the words go to stderr
    assert all(row["violations"] == 0 for p, row in table["drf"].items() if p != "unverifiable")
    said = _said(got.err)
    assert said.startswith("2 instances, all random (seed 3): 2-4 users,")
    assert "no placement constraints (--unconstrained)." in said
    assert said.endswith(f"Counterexamples: none found, none written (table in {out}).")
    assert sorted(p.name for p in out.iterdir()) == ["table.json", "table.md"]


def test_description_follows_the_generator() -> None:
    """The ranges the console states are those random_instance draws from."""
    rng = np.random.default_rng(5)
    drawn = [pt.random_instance(rng, k) for k in range(400)]
    users = {len(d["users"]) for d in drawn}
    servers = {len(d["servers"]) for d in drawn}
    resources = {len(d["resources"]) for d in drawn}
    caps = {c for d in drawn for s in d["servers"] for c in s["capacity"]} - {0.0}
    demands = {v for d in drawn for u in d["users"] for v in u["demand"]}
    weights = {u.get("weight", 1) for d in drawn for u in d["users"]}
    assert users == set(range(pt.USERS[0], pt.USERS[1] + 1)) == {2, 3, 4}
    assert servers == set(range(pt.SERVERS[0], pt.SERVERS[1] + 1)) == {1, 2, 3}
    assert resources == set(range(pt.RESOURCES[0], pt.RESOURCES[1] + 1)) == {2, 3}
    assert caps == set(map(float, range(pt.CAPACITY[0], pt.CAPACITY[1] + 1)))
    assert demands == set(map(float, range(pt.DEMAND[0], pt.DEMAND[1] + 1)))
    assert weights == set(range(pt.WEIGHTS[0], pt.WEIGHTS[1] + 1))
    assert not any("max_tasks" in u for d in drawn for u in d["users"])
    restricted = np.mean(
        [("eligible" in u) for d in drawn if len(d["servers"]) > 1 for u in d["users"]]
    )
    assert abs(restricted - pt.ELIGIBLE_P) < 0.06
