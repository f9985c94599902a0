"""What ``fairsim solve`` prints: verified task counts rounded to the check's tolerance, each
user's dominant share, and options a mechanism does not have refused (the papers' examples)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import PSDSF_FIG1

import fairsim
from fairsim.errors import ConfigError
from fairsim.experiments.cli import main
from fairsim.schedulers.exact import SHARE_DECIMALS, task_decimals
from fairsim.schedulers.exact.instance import parse_instance
from fairsim.schedulers.exact.verification import CHECK_RTOL

# DRFH paper (Wang, Li, Liang), Fig. 1: servers (2 CPU, 12 GB) and (12 CPU, 2 GB); u1 capped at 5.
DRFH_FIG1_CAP5: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [2, 12]}, {"id": "s2", "capacity": [12, 2]}],
    "users": [
        {"id": "u1", "demand": [0.2, 1], "max_tasks": 5},
        {"id": "u2", "demand": [1, 0.2]},
    ],
}
# Ghodsi et al. (DRF), Section 4: <9 CPU, 18 GB>; A = <1, 4>, B = <3, 1>.
DRF_EXAMPLE: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [9, 18]}],
    "users": [{"id": "A", "demand": [1, 4]}, {"id": "B", "demand": [3, 1]}],
}


def test_decimals_follow_the_check_tolerance() -> None:
    assert CHECK_RTOL == 1e-6 and SHARE_DECIMALS == 6
    # gamma_n = min_r C_r / d_nr: A 4.5 tasks (18 GB / 4), B 3 (9 CPU / 3) -> 4.5e-6, 3e-6
    assert task_decimals(parse_instance(copy.deepcopy(DRF_EXAMPLE))).tolist() == [5, 5]
    # DRFH Fig. 1: the cluster holds 14 tasks of either user -> 1.4e-5 -> 4 decimals
    assert task_decimals(parse_instance(copy.deepcopy(DRFH_FIG1_CAP5))).tolist() == [4, 4]


@pytest.mark.parametrize("name", ["drfh", "c-drfh", "tsf", "lmm-mms", "pf", "psdsf"])
def test_capped_user_prints_round_counts(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the LP solvers return 4.999999995 and 1.000000001 (drfh, tsf, lmm-mms) here; u1 runs its
    # 5 tasks on s1 (1 CPU, 5 GB), u2 fills s1's last CPU (1 task) and s2 (10 tasks)
    f = tmp_path / "fig1-cap5.json"
    f.write_text(json.dumps(DRFH_FIG1_CAP5))
    assert main(["solve", name, str(f)]) == 0
    text = capsys.readouterr().out
    out = json.loads(text)
    assert out["tasks"] == [[5.0, 0.0], [1.0, 10.0]]
    # dominant shares over the cluster's 14 CPU, 14 GB: u1 5 GB / 14, u2 11 CPU / 14
    assert out["dominant_shares"] == [round(5 / 14, 6), round(11 / 14, 6)] == [0.357143, 0.785714]
    assert "99999" not in text and "00000" not in text.replace("[0.0", "")


def test_worked_examples_round_and_shares() -> None:
    # DRF Section 4: 3 and 2 tasks, both at dominant share 2/3
    out = fairsim.solve(DRF_EXAMPLE, "drf")
    assert out["tasks"] == [[3.0], [2.0]] and out["dominant_shares"] == [0.666667, 0.666667]
    # PF on the same instance: 45/11 and 18/11 tasks, to the 5 decimals the check resolves
    out = fairsim.solve(DRF_EXAMPLE, "pf")
    assert out["tasks"] == [[round(45 / 11, 5)], [round(18 / 11, 5)]] == [[4.09091], [1.63636]]
    # PS-DSF Fig. 1 under BMF (pooled): the solver's 3.000000009 prints as 3.0
    out = fairsim.solve(PSDSF_FIG1, "bmf")
    assert out["tasks"] == [[3.0], [3.0], [6.0]]
    # PF on DRFH Fig. 1: the solver's 1.6e-15 tasks of u1 on s2 print as 0.0
    fig1 = copy.deepcopy(DRFH_FIG1_CAP5)
    del fig1["users"][0]["max_tasks"]
    out = fairsim.solve(fig1, "pf")
    assert out["tasks"] == [[10.0, 0.0], [0.0, 10.0]]
    assert out["dominant_shares"] == [round(10 / 14, 6)] * 2
    # an online heuristic: integer counts and the same shares (First-Fit's naive split, Fig. 1)
    online = fairsim.solve(fig1, "bf-drfh")
    assert online["tasks"] == [[10, 0], [0, 10]]
    assert online["dominant_shares"] == [0.714286, 0.714286]


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["drf", "--sharing", "tdm"], r"sharing: 'drf' has no sharing option"),
        (["bf-drfh", "--sharing", "rdm"], r"sharing: 'bf-drfh' has no sharing option"),
        (["psdsf", "--online", "--sharing", "tdm"], r"sharing: 'psdsf --online' has no sharing"),
        (["drfh", "--online"], r"online: 'drfh' has no online scheduler.*ff-drfh and bf-drfh"),
    ],
)
def test_options_a_mechanism_lacks_are_errors(
    args: list[str], match: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "drf.json"
    f.write_text(json.dumps(DRF_EXAMPLE))
    assert main(["solve", args[0], str(f), *args[1:]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert re.search(match, err), err
    with pytest.raises(ConfigError, match=r"^sharing: 'tsf' has no sharing option"):
        fairsim.solve(DRF_EXAMPLE, "tsf", sharing="rdm")
    # PS-DSF takes both models
    rdm = fairsim.solve(PSDSF_FIG1, "psdsf", sharing="rdm")
    tdm = fairsim.solve(PSDSF_FIG1, "psdsf", sharing="tdm")
    assert (
        np.sum(rdm["tasks"], axis=1).tolist()
        == np.sum(tdm["tasks"], axis=1).tolist()
        == [
            3.0,
            3.0,
            6.0,
        ]
    )
