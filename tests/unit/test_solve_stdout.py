"""``fairsim solve`` writes JSON alone on standard output although the split LPs call HiGHS
through highspy, whose ``Highs()`` prints a banner while it is constructed
(:func:`fairsim.schedulers.exact.common._highs`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fairsim.schedulers.exact import common, solve_exact
from fairsim.schedulers.exact.instance import parse_instance

# DRFH paper (Wang, Li, Liang), Fig. 1 with u1 capped at 5: the pooled totals need a split LP
FIG1 = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [2, 12]}, {"id": "s2", "capacity": [12, 2]}],
    "users": [
        {"id": "u1", "demand": [0.2, 1], "max_tasks": 5},
        {"id": "u2", "demand": [1, 0.2]},
    ],
}
REPO = Path(__file__).resolve().parents[2]


def test_the_instance_goes_through_highspy(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    run = common._run_highs

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return run(*args, **kwargs)

    monkeypatch.setattr(common, "_run_highs", counted)
    x = solve_exact("drfh", parse_instance(json.loads(json.dumps(FIG1))))
    assert calls  # the split LP ran through highspy
    assert x.sum(axis=1).round(6).tolist() == [5.0, 11.0]


def test_solve_stdout_is_pure_json_in_a_fresh_process(tmp_path: Path) -> None:
    f = tmp_path / "fig1.json"
    f.write_text(json.dumps(FIG1))
    code = "import sys; from fairsim.cli import main; sys.exit(main())"
    proc = subprocess.run(
        [sys.executable, "-c", code, "solve", "drfh", str(f)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "HiGHS" not in proc.stdout + proc.stderr
    out = json.loads(proc.stdout)  # the whole of stdout is one JSON document
    assert out["tasks"] == [[5.0, 0.0], [1.0, 10.0]]
