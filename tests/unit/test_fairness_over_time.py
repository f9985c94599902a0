"""Fairness over time (``collect.fairness``, docs/fairness.md): the config, the engine's user
snapshots, the probe's metrics, the files and the Python API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario.config import parse_config
from fairsim.scenario.fairness import (
    FairnessProbe,
    envious_pairs,
    fairness_columns,
    jain_entitlement,
    jain_index,
    reference_mechanism,
    sharing_incentive_shares,
)
from fairsim.scenario.pipeline import prepare_scenario
from fairsim.scenario.scheduler_run import run_scheduler
from fairsim.schedulers.exact.aggregate import aggregate_servers
from fairsim.schedulers.registry import resolve
from fairsim.simulator.snapshot import UserSnapshot

SYNTH: dict[str, Any] = {
    "name": "fair",
    "trace": {"format": "synthetic", "n_tasks": 1500, "duration_s": 3600},
    "cluster": {"servers": 12},
    "schedulers": ["bf-drfh"],
    "collect": {"fairness": {"interval_s": 600}},
}

#: One server of 12 CPUs and 12 GB; A's tasks need <1, 2>, B's <2, 1>, both join at 0 with more
#: tasks than fit. Every DRF-family mechanism gives each 4 tasks (12 CPUs and 12 GB used), and
#: progressive filling with indivisible tasks reaches exactly that allocation.
ONE_SERVER: dict[str, Any] = {
    "name": "one-server",
    "trace": {
        "format": "inline",
        "users": [
            {"name": "A", "demand": [1, 2], "tasks": 10, "run_s": 1000},
            {"name": "B", "demand": [2, 1], "tasks": 10, "run_s": 1000},
        ],
    },
    "cluster": {"classes": [{"name": "big", "count": 1, "capacity": [12, 12]}]},
    "schedulers": ["bf-drfh"],
    "collect": {"horizon_s": 500, "utilization_interval_s": 100, "fairness": {"interval_s": 100}},
}

SUMMARY_SCHEMA = pa.schema(
    [
        ("time_s", pa.float64()),
        ("active_users", pa.int64()),
        ("jain_index", pa.float64()),
        ("max_deficit", pa.float64()),
        ("l1_distance", pa.float64()),
        ("si_violations", pa.int64()),
        ("envious_pairs", pa.int64()),
        ("jain_entitlement", pa.float64()),
        ("zero_reference_users", pa.int64()),
        ("jain_raw_dominant", pa.float64()),
    ]
)
FAIRNESS_SCHEMA = pa.schema(
    [
        ("time_s", pa.float64()),
        ("user", pa.string()),
        ("tasks_running", pa.int64()),
        ("tasks_waiting", pa.int64()),
        ("demand_cpu", pa.float64()),
        ("demand_mem", pa.float64()),
        ("share_cpu", pa.float64()),
        ("share_mem", pa.float64()),
        ("dominant_share", pa.float64()),
        ("reference_dominant_share", pa.float64()),
        ("deficit", pa.float64()),
    ]
)


# --------------------------------------------------------------------------- config


def test_config_defaults_and_hash_unchanged_when_off() -> None:
    """``collect.fairness`` defaults to off and then leaves the resolved config, hence the hash
    of every earlier config, as it was (pinned: the hash on main before fairness existed)."""
    base = {k: v for k, v in SYNTH.items() if k != "collect"}
    cfg = parse_config(base)
    assert cfg.collect.fairness is None
    assert "fairness" not in cfg.to_yaml()
    assert cfg.config_hash() == "42b44cf129c031d4"
    on = parse_config({**base, "collect": {"fairness": {}}})
    assert on.collect.fairness is not None
    assert (on.collect.fairness.interval_s, on.collect.fairness.reference) == (600.0, "auto")
    assert on.config_hash() != cfg.config_hash()


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ({"reference": "drfhh"}, r"collect\.fairness\.reference: 'drfhh' is not an exact "
         r"mechanism; did you mean 'drfh'\?"),
        ({"reference": "udrf"}, r"collect\.fairness\.reference: 'udrf' takes jobs"),
        ({"interval_s": 0}, r"collect\.fairness\.interval_s: .*greater than 0"),
        ({"interval": 5}, r"collect\.fairness.*'interval'.*interval_s"),
    ],
)  # fmt: skip
def test_config_errors(value: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        parse_config({**SYNTH, "collect": {"fairness": value}})


def test_reference_mechanism_from_the_registry() -> None:
    """``auto`` takes the scheduler class's ``mechanism``; DRFH where it has none or its
    mechanism takes jobs (udrf); an explicit reference wins."""
    want = {
        "ff-drfh": "drfh",
        "bf-drfh": "drfh",
        "slots-14": "drfh",
        "drf": "drf",
        "c-drfh": "c-drfh",
        "tsf": "tsf",
        "psdsf": "psdsf",
        "lmm-mms": "lmm-mms",
        "af": "af",
        "pf": "pf",
        "bmf": "bmf",
        "udrf": "drfh",
        "drf-classes": "drfh",
        "drf-lockstep": "drfh",
    }
    for name, mech in want.items():
        assert reference_mechanism(resolve(name).cls, "auto") == mech, name
    assert reference_mechanism(resolve("bf-drfh").cls, "tsf") == "tsf"
    assert reference_mechanism(None, "auto") == "drfh"


# --------------------------------------------------------------------------- engine


def _snapshots(cfg: dict[str, Any], interval_s: float = 600.0) -> tuple[list[UserSnapshot], Any]:
    config = parse_config(cfg)
    sc = prepare_scenario(config)
    snaps: list[UserSnapshot] = []
    res = run_scheduler(
        "bf-drfh",
        sc.capacity,
        sc.open_source(),
        start_s=sc.workload.start_s,
        horizon_s=sc.horizon_s,
        interval_s=60.0,
        constraints=sc.constraint_index() if sc.constraint_index is not None else None,
        fairness_interval_s=interval_s,
        on_fairness=lambda t, s: snaps.append(s),
    )
    return snaps, (sc, res)


def test_engine_snapshots_match_the_tasks_table() -> None:
    """At every instant the counts and demand sums are those the tasks table implies: running
    = started at or before and not finished; waiting = arrived, placeable, not started."""
    snaps, (_, res) = _snapshots(SYNTH, 300.0)
    assert [s.time_s for s in snaps] == [300.0 * k for k in range(len(snaps))]
    assert len(snaps) == int(res.horizon_s // 300) + 1
    t = res.tasks
    n_users = len(res.users)
    checked = 0
    for s in snaps:
        time_s = s.time_s
        started = t["start_s"] <= time_s
        ended = t["finish_s"] <= time_s
        arrived = (t["submit_s"] <= time_s) & ~t["unplaceable"]
        run = started & ~ended
        wait = arrived & ~started
        ru = np.bincount(t["user"][run], minlength=n_users)
        wu = np.bincount(t["user"][wait], minlength=n_users)
        np.testing.assert_array_equal(s.users, np.flatnonzero(ru + wu))
        np.testing.assert_array_equal(s.tasks_running, ru[s.users])
        np.testing.assert_array_equal(s.tasks_waiting, wu[s.users])
        alloc = np.zeros((n_users, 2))
        np.add.at(alloc, t["user"][run], t["demand"][run])
        dem = np.zeros((n_users, 2))
        np.add.at(dem, t["user"][run | wait], t["demand"][run | wait])
        np.testing.assert_allclose(s.allocation, alloc[s.users], atol=1e-12)
        np.testing.assert_allclose(s.demand, dem[s.users], atol=1e-12)
        assert s.names == tuple(res.users[u] for u in s.users)
        assert s.eligible is None
        checked += int(wu.sum() > 0)
    assert checked >= 3  # instants with waiting tasks were compared


def test_engine_snapshot_eligibility_with_constraints() -> None:
    """With placement constraints a user's eligible servers are the union of its present tasks'
    allowed servers (every server when one of them is unconstrained)."""
    cfg = {
        **SYNTH,
        "trace": {**SYNTH["trace"], "constraints": {"share": 0.8, "classes": 1}},
        "cluster": {"servers": 30},
    }
    snaps, (sc, res) = _snapshots(cfg, 900.0)
    index = sc.constraint_index()
    codes = np.concatenate([index.codes(b.constraint) for b in sc.open_source().batches()])
    masks = [np.ones(len(sc.capacity), bool) if m is None else m for m in index.masks]
    t = res.tasks
    partial = 0
    for s in snaps[1:]:
        assert s.eligible is not None
        assert s.eligible.shape == (len(s.users), len(sc.capacity))
        time_s = s.time_s
        present = (t["submit_s"] <= time_s) & ~t["unplaceable"] & ~(t["finish_s"] <= time_s)
        for i, u in enumerate(s.users):
            mine = np.flatnonzero(present & (t["user"] == u))
            want = np.zeros(len(sc.capacity), bool)
            for c in np.unique(codes[mine]):
                want |= masks[c]
            np.testing.assert_array_equal(s.eligible[i], want)
            partial += int(not want.all())
    assert partial > 0  # some user was restricted


def test_engine_refuses_half_a_fairness_hook() -> None:
    config = parse_config(SYNTH)
    sc = prepare_scenario(config)
    with pytest.raises(ValueError, match="fairness_interval_s and on_fairness: give both"):
        run_scheduler(
            "bf-drfh", sc.capacity, sc.open_source(), start_s=0.0, horizon_s=100.0,
            interval_s=60.0, fairness_interval_s=10.0,
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"fairness_interval_s: -1\.0 \(expected a number > 0\)"):
        run_scheduler(
            "bf-drfh", sc.capacity, sc.open_source(), start_s=0.0, horizon_s=100.0,
            interval_s=60.0, fairness_interval_s=-1.0, on_fairness=lambda t, s: None,
        )  # fmt: skip


# --------------------------------------------------------------------------- metrics


def test_jain_index_values() -> None:
    """Jain, Chiu and Hawe (1984): 1 for equal amounts, 1/n when one user has everything,
    (sum y)^2 / (n sum y^2) between; NaN without a positive amount."""
    assert jain_index(np.array([0.3, 0.3, 0.3, 0.3])) == 1.0
    assert jain_index(np.array([0.0, 0.0, 0.7])) == pytest.approx(1 / 3)
    assert jain_index(np.array([1.0, 2.0])) == pytest.approx(9 / 10)
    assert np.isnan(jain_index(np.zeros(3)))
    assert np.isnan(jain_index(np.zeros(0)))


#: One server (1 CPU, 1 GB). A has 6 tasks of <0.1, 0.05> present, B and C one task of
#: <0.1, 0.1> each: DRFH (here DRF with task bounds) gives B and C their one task (dominant share
#: 0.1) and A its six (0.6; 0.8 CPU used in all). The entitlements are 0.6, 0.1, 0.1.
RANKING_DEMAND = np.array([[0.1, 0.05], [0.1, 0.1], [0.1, 0.1]])
RANKING_PRESENT = np.array([6, 1, 1])


def _ranking_row(a_running: int) -> dict[str, Any]:
    """The probe's summary row with A running ``a_running`` tasks, B and C their one each."""
    probe = FairnessProbe(
        mechanism="drfh", resources=("cpu", "mem"), capacity=np.ones((1, 2)), interval_s=10.0
    )
    running = np.array([a_running, 1, 1])
    snap = UserSnapshot(
        time_s=10.0,
        users=np.arange(3),
        names=("A", "B", "C"),
        tasks_running=running,
        tasks_waiting=RANKING_PRESENT - running,
        demand=RANKING_PRESENT[:, None] * RANKING_DEMAND,
        allocation=running[:, None] * RANKING_DEMAND,
    )
    probe(10.0, snap)
    fair = probe.tables()["fairness"].to_pandas()
    np.testing.assert_allclose(fair["reference_dominant_share"], [0.6, 0.1, 0.1], rtol=1e-9)
    row: dict[str, Any] = probe.tables()["fairness_summary"].to_pylist()[0]
    return row


def test_raw_and_entitlement_indices_rank_two_allocations_oppositely() -> None:
    """A holding half its entitlement (3 of its 6 tasks) against A holding all of it, B and C
    their one task in both. Raw dominant shares 0.3, 0.1, 0.1 have Jain's index
    0.25 / (3 * 0.11) = 25/33 = 0.758 and the reference's own 0.6, 0.1, 0.1 only
    0.64 / (3 * 0.38) = 32/57 = 0.561: the raw index calls the short allocation fairer, because
    B and C need little. The fractions of entitlement 0.5, 1, 1 give 6.25 / (3 * 2.25) = 25/27 =
    0.926 and 1, 1, 1 give 1: the exact allocation is the fairer, as it is."""
    short, exact = _ranking_row(3), _ranking_row(6)
    assert short["jain_raw_dominant"] == pytest.approx(25 / 33, rel=1e-9)
    assert exact["jain_raw_dominant"] == pytest.approx(32 / 57, rel=1e-9)
    assert short["jain_entitlement"] == pytest.approx(25 / 27, rel=1e-9)
    assert exact["jain_entitlement"] == pytest.approx(1.0, rel=1e-9)
    assert short["jain_raw_dominant"] > exact["jain_raw_dominant"]
    assert short["jain_entitlement"] < exact["jain_entitlement"]
    assert short["jain_index"] == short["jain_raw_dominant"]  # DESIGN.md's name, same values
    assert short["zero_reference_users"] == exact["zero_reference_users"] == 0
    assert short["l1_distance"] == pytest.approx(0.3, rel=1e-9)


def test_jain_entitlement_leaves_out_and_counts_users_with_reference_zero() -> None:
    """A user entitled to nothing (reference 0, or a solver's rounding of it at most
    ZERO_REFERENCE) cannot hold a fraction of it: it is left out and counted; no reference at
    all (NaN) gives no index; nobody entitled, or every entitled user holding nothing, no
    index either."""
    index, zero = jain_entitlement(np.array([0.3, 0.1, 0.2, 0.0]), np.array([0.6, 0.1, 0.0, 1e-13]))
    assert (index, zero) == (pytest.approx(2.25 / 2.5), 2)  # x = 0.5, 1: 1.5^2 / (2 * 1.25)
    index, zero = jain_entitlement(np.array([0.3, 0.1]), np.array([0.6, np.nan]))
    assert np.isnan(index) and zero == 0
    index, zero = jain_entitlement(np.array([0.3]), np.array([0.0]))
    assert np.isnan(index) and zero == 1
    index, zero = jain_entitlement(np.zeros(2), np.array([0.5, 0.5]))
    assert np.isnan(index) and zero == 0
    index, zero = jain_entitlement(np.zeros(0), np.zeros(0))
    assert np.isnan(index) and zero == 0


def test_sharing_incentive_and_envy_by_hand() -> None:
    """Two servers (4, 4) and (2, 2), two users of demand (1, 1) and (2, 1), equal weights:
    the halves hold floor(2) + floor(1) = 3 tasks of the first user and floor(1) + floor(0.5)
    = 1 of the second (both bounded by their tasks present). Envy: user 1 runs 1 task, and
    user 0's bundle (4, 4) would hold 2 of its tasks: it envies user 0 unless it has only 1
    task present; user 0 runs 4 and user 1's bundle (2, 1) holds 1 of its tasks."""
    cap = np.array([[4.0, 4.0], [2.0, 2.0]])
    classes = aggregate_servers(cap)
    demand = np.array([[1.0, 1.0], [2.0, 1.0]])
    si = sharing_incentive_shares(
        demand, np.array([9.0, 9.0]), np.ones(2), classes, cap.sum(axis=0)
    )
    np.testing.assert_allclose(si, [3 * 1 / 6, 1 * 2 / 6])
    si_capped = sharing_incentive_shares(
        demand, np.array([2.0, 9.0]), np.ones(2), classes, cap.sum(axis=0)
    )
    np.testing.assert_allclose(si_capped, [2 / 6, 2 / 6])
    weighted = sharing_incentive_shares(
        demand, np.array([9.0, 9.0]), np.array([1.0, 3.0]), classes, cap.sum(axis=0)
    )  # quarters for user 0: floor(1) + floor(0.5); three quarters for user 1: 1 + 0
    np.testing.assert_allclose(weighted, [1 / 6, 2 / 6])
    alloc = np.array([[4.0, 4.0], [2.0, 1.0]])
    running = np.array([4.0, 1.0])
    assert envious_pairs(demand, np.array([4.0, 3.0]), running, alloc) == 1
    assert envious_pairs(demand, np.array([4.0, 1.0]), running, alloc) == 0


def test_reference_unavailable_is_nan_and_counted() -> None:
    """BMF enumerates bottleneck mappings (exponential in users): where it cannot answer, the
    reference is NaN (null in the file) and the instant is counted with its reason."""
    rng = np.random.default_rng(3)
    n = 20
    probe = FairnessProbe(
        mechanism="bmf", resources=("cpu", "mem"), capacity=np.ones((4, 2)), interval_s=10.0
    )
    demand = rng.uniform(0.01, 0.1, size=(n, 2))
    snap = UserSnapshot(
        time_s=10.0,
        users=np.arange(n),
        names=tuple(f"u{i}" for i in range(n)),
        tasks_running=np.ones(n, dtype=np.int64),
        tasks_waiting=np.ones(n, dtype=np.int64),
        demand=2 * demand,
        allocation=demand,
    )
    probe(10.0, snap)
    s = probe.summary()
    assert s["reference_unavailable"]["instants"] == 1
    (reason,) = s["reference_unavailable"]["reasons"]
    assert reason.startswith("bmf: N bottleneck mappings to enumerate (limit N)")
    tables = probe.tables()
    assert tables["fairness"].column("reference_dominant_share").null_count == n
    row = tables["fairness_summary"].to_pylist()[0]
    assert row["max_deficit"] is None and row["l1_distance"] is None
    assert row["jain_index"] is not None and row["active_users"] == n
    assert row["jain_raw_dominant"] == row["jain_index"]
    # no reference, no entitlement: neither the index nor the users without one are known
    assert row["jain_entitlement"] is None and row["zero_reference_users"] is None
    assert s["time_average"]["max_deficit"] is None
    assert s["time_average"]["jain_entitlement"] is None


# --------------------------------------------------------------------------- runs and files


@pytest.mark.parametrize("scheduler", ["bf-drfh", "ff-drfh", "drf", "tsf", "c-drfh"])
def test_zero_deficit_when_the_online_allocation_is_the_mechanisms(scheduler: str) -> None:
    """One server and tasks whose sizes divide it: the online scheduler reaches the mechanism's
    allocation (4 tasks each, dominant share 8/12), so the deficit is 0 at every instant with
    users, Jain's index is 1, and no user is below its sharing incentive or envious."""
    r = fairsim.simulate({**ONE_SERVER, "schedulers": [scheduler]})[scheduler]
    fair, summ = r.fairness, r.fairness_summary
    assert fair is not None and summ is not None
    busy = fair[fair["time_s"] > 0]
    assert len(busy) == 2 * 5  # A and B at 100, ..., 500
    np.testing.assert_array_equal(busy["tasks_running"], 4)
    np.testing.assert_array_equal(busy["tasks_waiting"], 6)
    np.testing.assert_allclose(busy["dominant_share"], 8 / 12, rtol=1e-12)
    np.testing.assert_allclose(busy["reference_dominant_share"], 8 / 12, rtol=1e-9)
    assert busy["deficit"].abs().max() < 1e-9
    later = summ[summ["time_s"] > 0]
    np.testing.assert_allclose(later["jain_index"], 1.0)
    np.testing.assert_allclose(later["jain_entitlement"], 1.0)
    assert (later["zero_reference_users"] == 0).all()
    assert later["max_deficit"].abs().max() < 1e-9
    assert (later["si_violations"] == 0).all() and (later["envious_pairs"] == 0).all()
    assert r.summary["fairness"]["reference"] == reference_mechanism(resolve(scheduler).cls, "auto")


def test_deficit_when_the_online_allocation_falls_short() -> None:
    """Slots with one slot per largest server places fewer tasks than the mechanism (its slot
    count, not the resources, binds): the deficit is the reference share minus the dominant
    share of the tasks each user runs (each task 2/12 of the server)."""
    r = fairsim.simulate({**ONE_SERVER, "schedulers": ["slots-1"]})["slots-1"]
    fair, summ = r.fairness, r.fairness_summary
    assert fair is not None and summ is not None
    busy = fair[fair["time_s"] > 0]
    np.testing.assert_allclose(busy["dominant_share"], busy["tasks_running"] * 2 / 12)
    np.testing.assert_allclose(busy["reference_dominant_share"], 8 / 12, rtol=1e-9)
    np.testing.assert_allclose(busy["deficit"], 8 / 12 - busy["tasks_running"] * 2 / 12)
    assert (busy["tasks_running"] < 4).all()
    last = summ.iloc[-1]
    assert last["max_deficit"] == pytest.approx(busy["deficit"].max(), rel=1e-12)
    assert last["l1_distance"] == pytest.approx(
        busy.loc[busy["time_s"] == last["time_s"], "deficit"].abs().sum()
    )
    assert last["max_deficit"] > 0.1


def test_files_schema_streamed_and_reloaded(tmp_path: Path) -> None:
    """The two files have the contract's columns, dtypes and order; a streamed run writes the
    same tables; ``fairsim.load`` gives them back; ``summary.json`` has the time averages."""
    mem = fairsim.simulate(SYNTH, out=tmp_path / "mem")["bf-drfh"]
    streamed = {**SYNTH, "collect": {**SYNTH["collect"], "stream_tasks": True}}
    fairsim.simulate(streamed, out=tmp_path / "stream")
    for name, schema in (("fairness", FAIRNESS_SCHEMA), ("fairness_summary", SUMMARY_SCHEMA)):
        a = pq.read_table(tmp_path / "mem" / "bf-drfh" / f"{name}.parquet")
        b = pq.read_table(tmp_path / "stream" / "bf-drfh" / f"{name}.parquet")
        assert a.schema.remove_metadata() == schema, name
        assert a.equals(b), name
    assert list(FAIRNESS_SCHEMA.names) == fairness_columns(("cpu", "mem"))
    back = fairsim.load(tmp_path / "mem")
    assert isinstance(back, dict)
    assert back["bf-drfh"].fairness is not None and mem.fairness is not None
    assert back["bf-drfh"].fairness.equals(mem.fairness)
    summary = json.loads((tmp_path / "mem" / "bf-drfh" / "summary.json").read_text())
    f = summary["fairness"]
    assert f["interval_s"] == 600.0 and f["reference"] == "drfh"
    assert f["instants"] == len(mem.fairness_summary)  # type: ignore[arg-type]
    assert set(f["time_average"]) == set(SUMMARY_SCHEMA.names) - {"time_s"}
    assert f["reference_unavailable"] == {"instants": 0, "reasons": {}}
    frame = mem.fairness_summary
    assert frame is not None
    assert f["time_average"]["jain_index"] == pytest.approx(frame["jain_index"].mean())
    # the in-memory result has the same tables
    in_memory = fairsim.simulate(SYNTH)["bf-drfh"]
    assert in_memory.fairness is not None
    assert in_memory.fairness.equals(mem.fairness)


def test_fairness_off_writes_no_fairness_file(tmp_path: Path) -> None:
    off = {k: v for k, v in SYNTH.items() if k != "collect"}
    r = fairsim.simulate(off, out=tmp_path / "off")["bf-drfh"]
    assert r.fairness is None and r.fairness_summary is None
    assert "fairness" not in r.summary
    names = {p.name for p in (tmp_path / "off" / "bf-drfh").iterdir()}
    assert not {n for n in names if n.startswith("fairness")}
