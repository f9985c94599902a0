"""The claim model shared by the reproductions: estimates, rules, claims.json and the headline."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from fairsim.errors import ConfigError
from fairsim.experiments import claims as C


def test_across_seeds_is_the_student_t_interval():
    e = C.across_seeds([0.031, 0.035, 0.029, 0.040, 0.033])
    assert e.value == pytest.approx(0.0336)
    # mean ± t(0.975, 4) * s / sqrt(5), s = 0.0042190
    half = stats.t.ppf(0.975, 4) * np.std([0.031, 0.035, 0.029, 0.040, 0.033], ddof=1) / 5**0.5
    assert half == pytest.approx(0.0052386, abs=1e-6)
    assert (e.low, e.high) == pytest.approx((0.0336 - half, 0.0336 + half))
    assert e.seeds == 5


def test_across_seeds_one_value_and_equal_values():
    one = C.across_seeds([0.5])
    assert (one.value, one.low, one.high, one.seeds) == (0.5, None, None, 1)
    same = C.across_seeds([0.25] * 5)
    assert (same.low, same.high) == (0.25, 0.25)
    empty = C.across_seeds([math.nan])
    assert math.isnan(empty.value) and empty.seeds == 0


def test_agrees_scales_with_the_paper_value():
    # The case: the paper's "2 %" with ±2 pp accepted anything from 0 to 4 %.
    # Now the tolerance is 10 % of 2 % = 0.2 pp around our interval.
    ours = C.across_seeds([0.033, 0.034, 0.035, 0.032, 0.034])  # [3.2, 3.5] %
    c = C.agrees("worse off", "Fig. 8", 0.02, ours, unit="share")
    assert c.verdict == "FAIL"
    assert "0.2 pp" in c.rule
    near = C.across_seeds([0.0215, 0.0225, 0.0220, 0.0230, 0.0222])  # low ≈ 2.14 %
    assert C.agrees("worse off", "Fig. 8", 0.02, near, unit="share").verdict == "PASS"
    # a large value: 35.8 % vs the paper's 35.1 % passes within 3.5 pp
    assert C.agrees("cpu", "Table II", 0.351, C.across_seeds([0.358])).verdict == "PASS"


def test_one_seed_verdict_says_it_rests_on_the_point_estimate():
    c = C.agrees("x", "Fig. 1", 1.0, C.across_seeds([1.05]))
    assert c.verdict == "PASS" and c.ci_low is None and c.seeds == 1
    assert "one seed" in c.reason


def test_exceeds_needs_the_whole_interval_on_the_paper_side():
    pos = C.across_seeds([0.02, 0.03, 0.025, 0.028, 0.022])
    assert C.exceeds("A above B", "Fig. 9", "A > B", pos).verdict == "PASS"
    straddle = C.across_seeds([0.02, -0.03, 0.025, 0.028, -0.022])
    assert C.exceeds("A above B", "Fig. 9", "A > B", straddle).verdict == "FAIL"
    assert C.exceeds("A below B", "Fig. 9", "A < B", pos, direction="<").verdict == "FAIL"
    assert C.exceeds("x", "y", None, C.across_seeds([])).verdict == "n/a"


def test_bounded_uses_the_interval():
    e = C.across_seeds([0.91, 0.93, 0.92, 0.95, 0.90])
    assert C.bounded("almost all", "Fig. 7", "almost all", e, low=0.9).verdict == "FAIL"
    assert C.bounded("almost all", "Fig. 7", "almost all", e, low=0.85).verdict == "PASS"
    assert C.bounded("small", "Fig. 6b", 0.0, e, low=-0.05, high=0.05).verdict == "FAIL"
    with pytest.raises(ValueError, match="low, high"):
        C.bounded("x", "y", None, e)


def test_identical_passes_up_to_its_tolerance_and_says_so():
    same = C.identical("s", "Table IV", 4e-7, what="deviation", units="tasks", seeds=2, reason="r")
    assert (same.verdict, same.kind, same.paper, same.ours) == ("PASS", "consistency", 0.0, 4e-7)
    assert same.rule == "largest deviation ≤ 1e-06 tasks"
    apart = C.identical("s", "Sec. 5", 2e-6, seeds=1, reason="r")
    assert (apart.verdict, apart.rule) == ("FAIL", "largest difference ≤ 1e-06")


def test_bootstrap_interval_of_a_mean_covers_the_normal_interval():
    x = np.random.default_rng(1).normal(10.0, 2.0, size=400)
    e = C.bootstrap_units(400, lambda idx: float(x[idx].mean()), seeds=5, what="jobs")
    assert e.value == pytest.approx(x.mean())
    half = 1.96 * x.std(ddof=1) / 20
    assert e.low == pytest.approx(x.mean() - half, abs=0.05)
    assert e.high == pytest.approx(x.mean() + half, abs=0.05)
    # reproducible
    assert C.bootstrap_units(400, lambda idx: float(x[idx].mean()), seeds=5) == C.bootstrap_units(
        400, lambda idx: float(x[idx].mean()), seeds=5
    )
    assert C.bootstrap_units(1, lambda idx: 1.0, seeds=1).low is None


def _grouped(values: np.ndarray, keys: np.ndarray):
    def groups(idx: np.ndarray):
        k, v = keys[idx], values[idx]
        ks = np.unique(k)
        return ks, [float(v[k == g].mean()) for g in ks]

    return groups


def test_trend_passes_only_when_rho_excludes_zero():
    rng = np.random.default_rng(3)
    keys = np.repeat(np.arange(10), 30)
    rising = keys * 0.5 + rng.normal(0, 1, keys.size)
    rho = C.spearman_trend(keys.size, _grouped(rising, keys), seeds=5, what="jobs")
    assert rho.value > 0.8 and rho.low > 0
    assert C.trend("rises", "Fig. 10b", "rising", rho).verdict == "PASS"
    assert C.trend("falls", "Fig. 10b", "falling", rho, direction="decreasing").verdict == "FAIL"
    noise = rng.normal(0, 1, keys.size)
    flat = C.spearman_trend(keys.size, _grouped(noise, keys), seeds=5, what="jobs")
    assert flat.low < 0 < flat.high
    assert C.trend("rises", "Fig. 10b", "rising", flat).verdict == "FAIL"
    two = C.spearman_trend(4, lambda idx: ([1, 2], [1.0, 2.0]), seeds=1)
    assert C.trend("rises", "Fig. 10c", "rising", two).verdict == "n/a"


def _sample() -> list[C.Claim]:
    e = C.across_seeds([0.5, 0.52, 0.49, 0.51, 0.5])
    return [
        C.agrees("a", "Table II", 0.5, e, unit="share"),
        C.agrees("b", "Table II", 0.9, e, unit="share"),
        C.not_applicable("c", "Fig. 3", "text", reason="no data", seeds=5),
        C.by_construction("d", "Fig. 6", "1-2", "1-2", reason="the model draws it", seeds=5),
        C.judged("e", "Sec. 4", None, 0.001, True, rule="< 1e-3", seeds=1, kind="consistency"),
    ]


def test_headline_counts_paper_claims_only():
    claims = _sample()
    assert C.counts(claims) == {"PASS": 1, "FAIL": 1, "n/a": 1, "all": 3}
    text = C.headline(claims)
    assert text.startswith("1 of 3 statements of the paper PASS (1 FAIL, 1 n/a).")
    assert "1 consistency and 1 by-construction" in text
    md = "\n".join(C.claims_markdown(claims))
    assert "### Consistency checks" in md and "### Hold by construction" in md
    assert "| b | Table II | 90.0 % | 50.4 % [49.0 %, 51.8 %] | 5 |" in md
    assert "**FAIL**" in md


def test_claims_json_round_trip_and_schema(tmp_path):
    claims = _sample()
    path = C.write_claims(tmp_path, claims)
    data = json.loads(path.read_text())
    assert [d["statement"] for d in data] == ["a", "b", "c", "d", "e"]
    required = {"statement", "source", "paper", "ours", "ci_low", "ci_high", "seeds", "rule"}
    required |= {"verdict", "reason", "kind"}
    assert all(required <= set(d) for d in data)
    assert C.read_claims(tmp_path) == claims
    data[1]["verdict"] = "MAYBE"
    (tmp_path / "claims.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=r"claim 1: verdict: "):
        C.read_claims(tmp_path / "claims.json")


def test_seed_list():
    assert C.seed_list(5) == [1, 2, 3, 4, 5]
    with pytest.raises(ConfigError, match="--seeds: must be at least 1 \\(got 0\\)"):
        C.seed_list(0)
    # workers: as asked, at least one and at most one per seed (default one per core)
    assert [C.default_jobs(5, j) for j in (1, 3, 9, 0)] == [1, 3, 5, 1]
    assert C.default_jobs(1) == 1


def _square(seed: int, k: int) -> int:
    return seed * seed + k


def test_run_seeds_keeps_the_order_serial_and_in_workers():
    assert C.run_seeds(_square, [3, 1, 2], 10, jobs=1, progress=False) == [19, 11, 14]
    assert C.run_seeds(_square, [3, 1, 2], 10, jobs=2, progress=False) == [19, 11, 14]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0.01, 100, allow_nan=False), min_size=2, max_size=8),
    st.floats(0.01, 100),
    st.floats(0.001, 1000),
)
def test_agreement_does_not_depend_on_the_unit(values, paper, scale):
    """Metamorphic: rescaling ours and the paper's value (a change of unit) keeps the verdict."""
    a = C.agrees("x", "y", paper, C.across_seeds(values))
    b = C.agrees("x", "y", paper * scale, C.across_seeds([v * scale for v in values]))
    lo, hi = a.ci_low, a.ci_high
    tol = 0.1 * paper
    # away from the boundary (floating point), the verdicts agree
    if min(abs(paper - (lo - tol)), abs(paper - (hi + tol))) > 1e-6 * paper:
        assert a.verdict == b.verdict


def test_headline_names_claims_from_a_deterministic_computation():
    exact = C.judged("markov", "Fig. 1", None, 0.09, True, rule="≤ 10 %", seeds=0)
    sim = C.agrees("sim", "Fig. 3", 1.0, C.across_seeds([1.0, 1.02, 0.99, 1.01, 1.0]))
    assert C.headline([exact, sim]) == (
        "2 of 2 statements of the paper PASS (0 FAIL, 0 n/a). Numbers are means over 5 seeds "
        "with 95 % intervals; 1 of the statements rest on a deterministic computation (0 seeds)."
    )
    assert C.headline([exact]).endswith(
        "(0 FAIL, 0 n/a). 1 of the statements rest on a " + "deterministic computation (0 seeds)."
    )


def test_two_level_bootstrap_carries_a_trend_that_reverses_between_seeds():
    """Three seeds rise, two fall: pooled as independent units the trend looks certain; over
    seeds, then units (the clusters argument), its interval reaches below zero."""
    rng = np.random.default_rng(7)
    keys = np.tile(np.repeat(np.arange(6), 40), 5)
    seed = np.repeat(np.arange(1, 6), 240)
    slope = np.where(seed <= 3, 1.0, -0.9)
    values = slope * keys + rng.normal(0, 1, keys.size)
    pooled = C.spearman_trend(keys.size, _grouped(values, keys), seeds=5, what="jobs")
    assert pooled.value == 1.0 and pooled.low > 0.5
    two = C.spearman_trend(keys.size, _grouped(values, keys), seeds=5, what="jobs", clusters=seed)
    assert two.value == 1.0 and two.low < 0 < two.high
    assert "two-level bootstrap over 5 seeds" in two.method
    assert C.trend("rises", "Fig. 10b", "rising", two).verdict == "FAIL"
    with pytest.raises(ValueError, match="clusters: expected 1200 labels"):
        C.bootstrap_units(keys.size, lambda i: 0.0, seeds=5, clusters=seed[:10])


def test_agrees_range_and_every_setting() -> None:
    # the paper's 80-85 % widened by 10 % of its ends: 72 % to 93.5 %
    inside = C.agrees_range("s", "src", 0.80, 0.85, C.Estimate(0.70, 0.69, 0.721, 5, "t"))
    outside = C.agrees_range("s", "src", 0.80, 0.85, C.Estimate(0.70, 0.69, 0.719, 5, "t"))
    assert (inside.verdict, outside.verdict) == ("PASS", "FAIL")
    assert inside.paper == "80-85 %" and "72.0 % to 93.5 %" in inside.rule
    parts = [
        ("50 users", outside),
        (
            "100 users",
            C.agrees_range("s", "src", 0.8, 0.85, C.Estimate(0.4, 0.39, 0.41, 5, "t")),
        ),
        ("150 users", inside),
    ]
    worst = C.every_setting("every scale", parts, target=(0.80, 0.85), what="scales")
    assert worst.verdict == "FAIL" and worst.ours == 0.4 and worst.statement == "every scale"
    assert worst.reason.startswith("worst of 3 scales: 100 users; every one: 50 users: 70.0 %")


def test_identify_gives_each_claim_the_id_and_quote_of_its_statement(tmp_path, caplog):
    statements = (
        C.Statement("table2", "Table II: Slots with {slots} slots, mean {resource}", "Table II"),
        C.Statement("best", "Table II: 14 slots give the highest utilisation", "Table II", "q14"),
        C.Statement("fig4", "Fig. 4: {user}'s share", "Fig. 4", "26% to all three users"),
    )

    def claim(statement: str, source: str) -> C.Claim:
        return C.judged(statement, source, 0.5, 0.5, True, rule="r", seeds=1)

    claims = [
        claim("Table II: Slots with 10 slots, mean CPU", "Table II"),
        claim("Table II: Slots with 10 slots, mean memory", "Table II"),
        claim("Table II: 14 slots give the highest utilisation", "Table II"),
        claim("Fig. 4: user 1 (A/B)'s share", "Fig. 4"),
    ]
    path = C.write_claims(tmp_path, claims, statements)
    data = json.loads(path.read_text())
    assert [d["id"] for d in data] == [
        "table2.slots-10.resource-cpu",
        "table2.slots-10.resource-memory",
        "best",
        "fig4.user-user-1-a-b",
    ]
    assert [d["quote"] for d in data] == ["", "", "q14", "26% to all three users"]
    assert list(data[0])[:4] == ["statement", "source", "id", "quote"]  # DESIGN.md's order
    assert [c.id for c in C.read_claims(path)] == [d["id"] for d in data]
    # the same statement twice, and a claim of no statement: kept apart, and said
    twice = C.identify([claims[2], claims[2], claim("ours alone", "—")], statements)
    assert [c.id for c in twice] == ["best", "best.2", "ours-alone"]
    assert "given twice" in caplog.text and "no statement of the paper" in caplog.text
    # the source is part of the match: the same words from another section are another claim
    assert C.identify([claim("Fig. 4: u's share", "Fig. 5")], statements)[0].quote == ""
