"""Server pools: Table I reproduced from machine_events, seeded draws, load_pool dispatch."""

from __future__ import annotations

import numpy as np
import pytest

from traces.errors import TraceError
from traces.paths import google_2011_dir
from traces.pools import TABLE_I, load_pool, machine_events_pool, table_i_counts, table_i_pool


@pytest.mark.slow
def test_machine_events_reproduce_table_i_exactly() -> None:
    pool = machine_events_pool(google_2011_dir(), None, None)
    assert len(pool) == 12_583
    assert table_i_counts(pool) == [(cpu, mem, count) for count, cpu, mem in TABLE_I]
    assert [c for c, _, _ in TABLE_I] == [6732, 3863, 1001, 795, 126, 52, 5, 5, 3, 1]


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
    share = (a.mem == 0.4995).mean()
    assert share == pytest.approx(6732 / 12583, abs=0.015)


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
