"""The Bonald-Roberts reproduction: config checks, determinism over seeds, the claims and their
kinds, claims.json, and the quick run end to end with intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fairsim.cli import main
from fairsim.errors import ConfigError
from fairsim.experiments import claims as claims_mod
from fairsim.experiments.bonald_roberts import paper
from fairsim.experiments.bonald_roberts.claims import build_claims
from fairsim.experiments.bonald_roberts.experiment import (
    COLUMNS,
    CONFIG,
    BonaldRobertsConfig,
    load_config,
    markov_points,
    seed_points,
)
from fairsim.experiments.bonald_roberts.numbers import ratio_quantity, seed_summary
from fairsim.experiments.kit import Options


def _text(key: str) -> str:
    return paper.BY_KEY[key].text


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


def run_points(cfg: BonaldRobertsConfig) -> pd.DataFrame:
    """Every point of one seed (``cfg.seed``): the Markov rows, then the seed's random rows."""
    mk = markov_points(cfg, progress=False)
    return pd.concat([mk, seed_points(cfg.seed, cfg)[0]], ignore_index=True)


def test_same_seed_same_numbers(tmp_path: Path) -> None:
    cfg = BonaldRobertsConfig.model_validate(TINY)
    a, b = run_points(cfg), run_points(cfg)
    pd.testing.assert_frame_equal(a, b)
    assert set(a.method) == {"markov", "simulation", "packet"}
    assert a[a.method == "markov"].seed.isna().all()
    assert (a[a.method != "markov"].seed == 3).all()
    c = run_points(BonaldRobertsConfig.model_validate({**TINY, "seed": 4}))
    sim = a.method != "markov"
    assert not np.array_equal(a[sim].gamma.to_numpy(), c[sim].gamma.to_numpy())
    # the Markov chain has no randomness: the same rows for every seed
    pd.testing.assert_frame_equal(a[~sim], c[~sim])


def test_seed_one_gives_the_former_one_seed_numbers() -> None:
    """Seed 1 draws what the one-seed runner drew (values pinned from it, commit aa0947d)."""
    cfg = BonaldRobertsConfig.model_validate(TINY)
    rows, _ = seed_points(1, cfg)
    got = rows.set_index(["method", "class"]).gamma
    pinned = {
        ("simulation", 1): 0.8167393634163134,
        ("simulation", 2): 0.6290795601951477,
        ("simulation", 3): 0.5444476492551722,
        ("packet", 1): 0.6123326623371259,
        ("packet", 2): 0.6919882480516616,
        ("packet", 3): 0.3906702617158321,
    }
    for key, value in pinned.items():
        assert got[key] == pytest.approx(value, rel=1e-12), key


def test_seed_summary_interval_over_seeds() -> None:
    cfg = BonaldRobertsConfig.model_validate(TINY)
    rows = [seed_points(s, cfg)[0] for s in (1, 2, 3)]
    summ = seed_summary(pd.concat(rows, ignore_index=True))
    one = summ[(summ.method == "packet") & (summ["class"] == 2)].iloc[0]
    values = [float(r[(r.method == "packet") & (r["class"] == 2)].gamma.iloc[0]) for r in rows]
    est = claims_mod.across_seeds(values)
    assert one.seeds == 3
    assert one.gamma == pytest.approx(np.mean(values))
    assert (one.ci_low, one.ci_high) == pytest.approx((est.low, est.high))
    assert one.ci_low < one.gamma < one.ci_high


#: Markov gamma per (scenario, allocation) at loads 0.5 and 0.8, for classes 1-3. Load 0.8 of
#: the balanced scenario holds the values of the full run (levels 25-40): BMF gives class 3
#: 0.1401 where PF gives 0.1284.
FAKE = {
    ("balanced", "drf"): [(0.5, 0.5, 0.4), (0.1287, 0.1287, 0.1194)],
    ("balanced", "pf"): [(0.55, 0.55, 0.41), (0.1995, 0.1995, 0.1284)],
    ("balanced", "bmf"): [(0.54, 0.54, 0.42), (0.1870, 0.1870, 0.1401)],
    ("unbalanced", "drf"): [(0.5, 0.6, 0.4), (0.1980, 0.2429, 0.1946)],
    ("unbalanced", "pf"): [(0.5, 0.8, 0.4), (0.1995, 0.6193, 0.1916)],
    ("unbalanced", "bmf"): [(0.5, 0.78, 0.4), (0.1988, 0.6039, 0.1957)],
}


def _markov_rows(fake: dict, error_bound: float = 1e-4) -> list[dict]:
    rows = []
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
                        "seed": None,
                        "gamma": g,
                        "gamma_lo": np.nan,
                        "gamma_hi": np.nan,
                        "level": 40,
                        "error_bound": error_bound,
                        "boundary_mass": 0.0,
                    }
                )
    return rows


def _claims(rows: list[dict]) -> dict[str, claims_mod.Claim]:
    return {
        c.statement: c
        for c in build_claims(pd.DataFrame(rows), packet_run=(1000, 10_000), truncation_target=2e-3)
    }


def test_bmf_close_to_pf_is_judged_per_class() -> None:
    claims = _claims(_markov_rows(FAKE))
    close = claims[_text("fig1_bmf_close_pf")]
    # class 3 at load 0.8: |0.1401 / 0.1284 - 1| = 9.11 %, where the overall rates differ by 0.1 %
    assert close.ours == pytest.approx(0.1401 / 0.1284 - 1, abs=1e-12)
    assert close.ours == pytest.approx(0.0911, abs=1e-4)
    assert close.kind == "paper"
    assert close.verdict == "PASS"
    assert "≤ 10.0 %" in close.rule
    assert "class 3: 9.1 % at load 0.8 (PF 0.1284, BMF 0.1401)" in close.reason
    assert "class 1: 6.3 % at load 0.8" in close.reason
    # deterministic: no seed, zero-width interval, said in the reason
    assert close.seeds == 0
    assert close.ci_low == close.ci_high == close.ours
    assert close.reason.startswith("deterministic")
    # BMF 12 % above PF for class 3 fails, though the overall rate would move by 1 % only
    fake = dict(FAKE)
    fake[("balanced", "bmf")] = [(0.54, 0.54, 0.42), (0.1870, 0.1870, 0.1438)]
    worse = _claims(_markov_rows(fake))[_text("fig1_bmf_close_pf")]
    assert worse.ours == pytest.approx(0.1438 / 0.1284 - 1, abs=1e-12)
    assert worse.verdict == "FAIL"


def test_truncation_range_in_the_reason() -> None:
    # a 1 % truncation bound on every gamma moves the class-3 gap between about 7 % and 11 %
    close = _claims(_markov_rows(FAKE, error_bound=0.01))[_text("fig1_bmf_close_pf")]
    assert close.verdict == "PASS"
    assert "where the verdict is not decided" in close.reason
    q = ratio_quantity([("x", 0.1401, 0.01, 0.1284, 0.01)], "|r-1|", "max")
    assert q.low == pytest.approx(0.1401 * 0.99 / (0.1284 * 1.01) - 1)
    assert q.high == pytest.approx(0.1401 * 1.01 / (0.1284 * 0.99) - 1)


def test_kinds_and_verdicts_on_constructed_numbers() -> None:
    claims = _claims(_markov_rows(FAKE))
    kinds = {s: c.kind for s, c in claims.items()}
    assert kinds[_text("fig1_equal")] == "by-construction"
    assert kinds["Markov truncation error bounded: relative bound on every γ_k"] == "consistency"
    paper_claims = [s for s, k in kinds.items() if k == "paper"]
    assert set(paper_claims) == {
        _text("fig1_order"),
        _text("fig1_bmf_close_pf"),
        _text("fig1_better_than_drf"),
        _text("fig2_order"),
        _text("fig2_pf_bmf_equivalent"),
        _text("fig2_gain"),
        _text("fig2_negligible_loss"),
        _text("fig1_similar"),
        _text("fig2_accentuated"),
    }
    # "similar for all three allocations": PF 55 % above DRF for class 1 at load 0.8 is not
    similar = claims[_text("fig1_similar")]
    assert similar.verdict == "FAIL" and similar.ours == pytest.approx(0.1995 / 0.1287 - 1)
    # "accentuated under unbalanced load": PF's class-2 gap 0.6193 / 0.2429 - 1 against 55 %
    acc = claims[_text("fig2_accentuated")]
    assert acc.verdict == "PASS"
    assert acc.ours == pytest.approx((0.6193 / 0.2429 - 1) - (0.1995 / 0.1287 - 1))
    assert all(c.verdict == "PASS" for s, c in claims.items() if s != _text("fig1_similar")), [
        (s, c.verdict) for s, c in claims.items() if c.verdict != "PASS"
    ]
    # BMF's class-2 gain at load 0.8: 0.6039 / 0.2429 - 1
    assert claims[_text("fig2_gain")].ours == pytest.approx(0.6039 / 0.2429 - 1)
    # break the unbalanced ordering: gamma1 > gamma2 for DRF at load 0.5
    fake = dict(FAKE)
    fake[("unbalanced", "drf")] = [(0.5, 0.45, 0.4), (0.1980, 0.2429, 0.1946)]
    broken = _claims(_markov_rows(fake))
    assert broken[_text("fig2_order")].verdict == "FAIL"
    assert broken[_text("fig2_order")].ours == pytest.approx(0.45 / 0.5 - 1)
    fails = [s for s, c in broken.items() if c.verdict == "FAIL"]
    assert fails == [_text("fig1_similar"), _text("fig2_order")]


def test_quick_two_seeds_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "br"
    argv = ["experiment", "bonald-roberts", "--quick", "--seeds", "2", "--jobs", "1"]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 0
    tidy = pd.read_parquet(out / "service_rates.parquet")
    assert tuple(tidy.columns) == COLUMNS
    assert set(tidy.method) == {"markov", "simulation", "packet"}
    assert set(tidy.allocation) == {"drf", "pf", "bmf"}
    assert sorted(tidy.seed.dropna().unique()) == [1, 2]
    assert tidy[tidy.method == "markov"].seed.isna().all()
    assert tidy.gamma.between(0, 1.5).all()
    for name in ("fig1_balanced.png", "fig2_unbalanced.png", "fig3_packet.png", "config.yaml"):
        assert (out / name).stat().st_size > 0
    # the simulated points carry an interval over the two seeds
    summ = pd.read_parquet(out / "summary.parquet")
    sim = summ[summ.method != "markov"]
    assert (sim.seeds == 2).all()
    assert (sim.ci_low < sim.gamma).all() and (sim.gamma < sim.ci_high).all()
    # claims.json: the shared schema, every kind, intervals on the random claims
    claims = claims_mod.read_claims(out)
    assert {c.kind for c in claims} == {"paper", "consistency", "by-construction"}
    packet = next(c for c in claims if c.statement == _text("fig3_packet_close"))
    assert packet.kind == "paper" and packet.seeds == 2
    assert packet.ci_low is not None and packet.ci_high is not None
    assert packet.ci_low < packet.ours < packet.ci_high
    for c in claims:
        if c.seeds == 0:  # the Markov chain: deterministic
            assert c.reason.startswith("deterministic") or "deterministic" in c.reason
    # the headline counts the paper's statements only
    report = (out / "report.md").read_text()
    n_paper = sum(c.kind == "paper" for c in claims)
    assert n_paper == 12 and len(claims) == 16
    assert "**Why the set-ups differ.**" in report
    # issue 44's statements: Fig. 3's order and PF/BMF alike on the packet runs, judged per
    # point over the seeds (2 seeds of a quick run: the intervals straddle, never a FAIL by noise)
    for key in ("fig3_packet_order", "fig3_packet_pf_bmf"):
        c = next(c for c in claims if c.id == key)
        assert c.seeds == 2 and c.verdict in ("PASS", "INCONCLUSIVE")
    assert f"of {n_paper} statements of the paper PASS" in report
    assert claims_mod.headline(claims) in report
    assert "Not counted: 3 consistency and 1 by-construction check(s)" in report
    # the ordering statements of the paper hold even on the quick grid
    verdicts = {c.statement: c.verdict for c in claims}
    assert verdicts[_text("fig1_order")] == verdicts[_text("fig2_order")] == "PASS"


def test_bad_config_writes_nothing(tmp_path: Path) -> None:
    from fairsim.experiments.bonald_roberts import experiment as bonald_roberts

    bad = _write(tmp_path, {**TINY, "loads": [2.0]})
    with pytest.raises(ConfigError):
        bonald_roberts.run_experiment(Options(tmp_path / "o", progress=False), config=bad)
    assert not (tmp_path / "o" / "service_rates.parquet").exists()
    with pytest.raises(ConfigError, match="--seeds: must be at least 1"):
        bonald_roberts.run_experiment(Options(tmp_path / "o", seeds=0, progress=False))
    assert not (tmp_path / "o").exists()


def test_packet_claims_name_the_run_size_they_used(tmp_path: Path) -> None:
    # before: every reason said "flows of mean 1,000 packets and 10,000 arrivals", the full
    # config's size, also under --quick (50 packets, 1,500 arrivals) or any other config
    cfg = BonaldRobertsConfig.model_validate(TINY)
    rows = run_points(cfg)
    out = build_claims(rows, packet_run=(cfg.packet.mean_packets, cfg.packet.flows))
    packet = [c for c in out if "packet runs are" in c.reason or "our runs are" in c.reason]
    assert packet
    for c in packet:
        assert "flows of mean 20 packets and 150 arrivals against 20,000 and 1e5" in c.reason
        assert "1,000 packets" not in c.reason
