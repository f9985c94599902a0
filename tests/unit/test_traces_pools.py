"""Server pools: Table I as published and as machine_events holds it, seeded draws, load_pool."""

from __future__ import annotations

import numpy as np
import pytest

from fairsim.errors import TraceError
from fairsim.traces.paths import google_2011_dir
from fairsim.traces.pools import (
    TABLE_I,
    TABLE_I_MACHINE_EVENTS,
    load_pool,
    machine_events_pool,
    table_i_counts,
    table_i_pool,
)


@pytest.mark.slow
def test_machine_events_reproduce_table_i_exactly() -> None:
    pool = machine_events_pool(google_2011_dir(), None, None)
    assert len(pool) == 12_583
    want = [(cpu, mem, count) for count, cpu, mem in TABLE_I_MACHINE_EVENTS]
    assert table_i_counts(pool) == want
    assert [c for c, _, _ in TABLE_I] == [6732, 3863, 1001, 795, 126, 52, 5, 5, 3, 1]


def test_table_i_is_the_published_table_and_rounds_machine_events() -> None:
    # DRFH paper, Table I, as printed (two decimals)
    assert TABLE_I == (
        (6732, 0.50, 0.50),
        (3863, 0.50, 0.25),
        (1001, 0.50, 0.75),
        (795, 1.00, 1.00),
        (126, 0.25, 0.25),
        (52, 0.50, 0.12),
        (5, 0.50, 0.03),
        (5, 0.50, 0.97),
        (3, 1.00, 0.50),
        (1, 0.50, 0.06),
    )
    for (n, c, m), (n_me, c_me, m_me) in zip(TABLE_I, TABLE_I_MACHINE_EVENTS, strict=True):
        assert (n, c, m) == (n_me, round(c_me, 2), round(m_me, 2))
        # the trace's values lie at most 0.001 below a multiple of 1/32 (Slots.CAPACITY_TOL)
        assert 0 <= round(m_me * 32) / 32 - m_me <= 0.001 + 1e-12
        assert 0 <= round(c_me * 32) / 32 - c_me <= 0.001 + 1e-12


@pytest.mark.slow
def test_machine_events_sample_without_replacement() -> None:
    a = machine_events_pool(google_2011_dir(), 500, np.random.default_rng(3))
    b = machine_events_pool(google_2011_dir(), 500, np.random.default_rng(3))
    assert len(a) == 500
    assert a.server.is_unique
    assert a.equals(b)
    with pytest.raises(TraceError, match=r"n=12584: more servers than the 12583 available"):
        machine_events_pool(google_2011_dir(), 12_584, np.random.default_rng(0))


def test_table_i_pool_seeded_and_distributed() -> None:
    a = table_i_pool(20_000, np.random.default_rng(7))
    b = table_i_pool(20_000, np.random.default_rng(7))
    assert a.equals(b)
    assert list(a.columns) == ["server", "cpu", "mem"]
    assert a.server.is_unique
    configs = {(cpu, mem) for _, cpu, mem in TABLE_I}
    assert set(zip(a.cpu, a.mem, strict=True)) <= configs
    share = ((a.cpu == 0.5) & (a.mem == 0.5)).mean()
    assert share == pytest.approx(6732 / 12583, abs=0.015)
    # the same generator state draws the same configurations from the trace's values
    me = table_i_pool(20_000, np.random.default_rng(7), TABLE_I_MACHINE_EVENTS)
    assert ((me.cpu == 0.5) & (me.mem == 0.4995)).sum() == ((a.cpu == 0.5) & (a.mem == 0.5)).sum()
    assert np.allclose(me.mem.round(2), a.mem) and me.cpu.equals(a.cpu)


def test_load_pool_dispatch_and_errors() -> None:
    pool = load_pool("table-i", 100, 1, None)
    assert len(pool) == 100
    assert pool.equals(load_pool("table-i", 100, np.random.default_rng(1), None))
    with pytest.raises(TraceError, match=r"source='slots': unknown pool source"):
        load_pool("slots", 10, 1, None)
    with pytest.raises(TraceError, match=r"n=0: must be > 0"):
        load_pool("table-i", 0, 1, None)
    with pytest.raises(TraceError, match=r"n=-3: must be > 0"):
        load_pool("table-i", -3, 1, None)
    with pytest.raises(TraceError, match=r"n=None"):
        load_pool("table-i", None, 1, None)
    with pytest.raises(TraceError, match=r"trace_dir=None"):
        load_pool("machine-events", 10, 1, None)


@pytest.mark.slow
def test_load_pool_machine_events() -> None:
    assert len(load_pool("machine-events", None, 0, google_2011_dir())) == 12_583
    assert len(load_pool("machine-events", 2000, 0, google_2011_dir())) == 2000


def test_fig4_seed_draws_the_pool_closest_to_the_paper_totals() -> None:
    # DRFH paper, Fig. 4: 100 Table I servers with 52.75 CPU and 51.32 memory units in total.
    from pathlib import Path

    from fairsim.scenario.config import component_rng, load_config
    from fairsim.scenario.pool import build_pool

    def dist(seed: int) -> float:
        pool = table_i_pool(100, component_rng(seed, "pool"))
        return float(np.hypot(pool.cpu.sum() - 52.75, pool.mem.sum() - 51.32))

    cfg = load_config(Path(__file__).resolve().parents[2] / "configs" / "drfh-fig4.yaml")
    assert cfg.seed == min(range(1, 400), key=dist) == 50
    pool = build_pool(cfg, None, None)
    assert (pool.cpu.sum(), round(pool.mem.sum(), 6)) == (53.75, 51.5)
