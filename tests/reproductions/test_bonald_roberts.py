"""The Bonald-Roberts reproduction runner: config checks, determinism, the quick run end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fairsim.errors import ConfigError
from fairsim.experiments.bonald_roberts.experiment import (
    COLUMNS,
    CONFIG,
    BonaldRobertsConfig,
    check_statements,
    load_config,
    run_points,
)
from fairsim.experiments.cli import main

TINY = {
    "vectors": [[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]],
    "scenarios": {"unbalanced": {"weights": [4, 1, 1]}},
    "loads": [0.5],
    "allocations": ["pf"],
    "markov": {"levels": [5, 7], "tol": 0.5},
    "simulation": {"arrivals": 300, "warmup": 30, "batches": 3},
    "packet": {
        "scenarios": ["unbalanced"],
        "loads": [0.5],
        "mean_packets": 20,
        "flows": 150,
        "warmup": 10,
        "batches": 3,
    },
    "seed": 3,
}


def _write(tmp_path: Path, data: dict) -> Path:
    p = tmp_path / "br.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def test_repository_config_is_valid() -> None:
    cfg = load_config(CONFIG)
    assert cfg.vectors == [[0.1, 1.0], [1.0, 0.1], [1.0, 1.0]]
    assert cfg.scenarios["unbalanced"].weights == [4, 1, 1]
    assert cfg.packet.window == 30


@pytest.mark.parametrize(
    ("patch", "pattern"),
    [
        (
            {"vectors": [[0.1, 0.5], [1.0, 0.1], [1.0, 1.0]]},
            r"vectors\[0\]: \[0\.1, 0\.5\] has no component equal to 1",
        ),
        ({"loads": [0.5, 1.2]}, r"at load 1\.2: loads: resource 1 has load 1\.2 >= 1"),
        ({"packet": {"window": 0}}, r"packet\.window: .*W = 0 \(expected an integer >= 1\)"),
        ({"allocations": ["drfh"]}, r"unknown allocation 'drfh'"),
        ({"simulaton": {}}, r"unknown key 'simulaton'; did you mean 'simulation'"),
        ({"packet": {"scenarios": ["balanced"]}}, r"packet\.scenarios: unknown scenario"),
    ],
)
def test_bad_config_one_line(tmp_path: Path, patch: dict, pattern: str) -> None:
    data = {**TINY, **patch}
    with pytest.raises(ConfigError, match=pattern) as err:
        load_config(_write(tmp_path, data))
    assert "\n" not in str(err.value)


def test_same_seed_same_numbers(tmp_path: Path) -> None:
    cfg = BonaldRobertsConfig.model_validate(TINY)
    a, _ = run_points(cfg, progress=False)
    b, _ = run_points(cfg, progress=False)
    pd.testing.assert_frame_equal(a, b)
    assert set(a.method) == {"markov", "simulation", "packet"}
    c, _ = run_points(BonaldRobertsConfig.model_validate({**TINY, "seed": 4}), progress=False)
    sim = a.method != "markov"
    assert not np.array_equal(a[sim].gamma.to_numpy(), c[sim].gamma.to_numpy())


def test_statements_on_constructed_numbers() -> None:
    rows = []
    fake = {  # (scenario, allocation) -> gamma per class at loads 0.5 and 0.8
        ("balanced", "drf"): [(0.5, 0.5, 0.4), (0.2, 0.2, 0.15)],
        ("balanced", "pf"): [(0.55, 0.55, 0.4), (0.25, 0.25, 0.16)],
        ("balanced", "bmf"): [(0.54, 0.54, 0.41), (0.245, 0.245, 0.16)],
        ("unbalanced", "drf"): [(0.5, 0.6, 0.4), (0.2, 0.3, 0.18)],
        ("unbalanced", "pf"): [(0.5, 0.8, 0.4), (0.2, 0.5, 0.178)],
        ("unbalanced", "bmf"): [(0.5, 0.78, 0.4), (0.2, 0.48, 0.179)],
    }
    for (sc, al), per_load in fake.items():
        for load, gam in zip((0.5, 0.8), per_load, strict=True):
            for k, g in enumerate(gam, start=1):
                rows.append(
                    {
                        "scenario": sc,
                        "allocation": al,
                        "method": "markov",
                        "load": load,
                        "class": k,
                        "gamma": g,
                        "gamma_lo": np.nan,
                        "gamma_hi": np.nan,
                        "level": 40,
                        "error_bound": 1e-4,
                        "boundary_mass": 0.0,
                    }
                )
    weights = {"balanced": np.ones(3), "unbalanced": np.array([4.0, 1.0, 1.0])}
    checks = check_statements(pd.DataFrame(rows), weights)
    assert len(checks) == 6
    assert all(c["passed"] for c in checks), [c for c in checks if not c["passed"]]
    # break the unbalanced ordering: gamma1 > gamma2 for PF at load 0.5
    rows2 = [
        r | {"gamma": 0.9}
        if (r["scenario"], r["allocation"], r["load"], r["class"]) == ("unbalanced", "pf", 0.5, 1)
        else r
        for r in rows
    ]
    checks2 = {c["statement"]: c["passed"] for c in check_statements(pd.DataFrame(rows2), weights)}
    assert not checks2["Unbalanced load: gamma2 > gamma1 > gamma3 for every allocation"]
    assert sum(not v for v in checks2.values()) == 1


def test_quick_reproduction_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "br"
    assert (
        main(["experiment", "bonald-roberts", "--quick", "--out", str(out), "--no-progress"]) == 0
    )
    tidy = pd.read_parquet(out / "service_rates.parquet")
    assert tuple(tidy.columns) == COLUMNS
    assert set(tidy.method) == {"markov", "simulation", "packet"}
    assert set(tidy.allocation) == {"drf", "pf", "bmf"}
    assert tidy.gamma.between(0, 1.5).all()
    for name in ("fig1_balanced.png", "fig2_unbalanced.png", "fig3_packet.png", "config.yaml"):
        assert (out / name).stat().st_size > 0
    report = (out / "report.md").read_text()
    assert "gamma2 > gamma1 > gamma3" in report
    assert "| PASS |" in report
    # the ordering statements of the paper hold even on the quick grid
    for line in report.splitlines():
        if line.startswith("| Balanced load: gamma1 = gamma2") or line.startswith(
            "| Unbalanced load: gamma2 > gamma1"
        ):
            assert line.endswith("| PASS |"), line


def test_bad_config_writes_nothing(tmp_path: Path) -> None:
    from fairsim.experiments.bonald_roberts import experiment as bonald_roberts

    bad = _write(tmp_path, {**TINY, "loads": [2.0]})
    with pytest.raises(ConfigError):
        bonald_roberts.run_experiment(out=tmp_path / "o", config=bad, progress=False)
    assert not (tmp_path / "o" / "service_rates.parquet").exists()
