"""Server pools: the DRFH paper's Table I mix, or the real Google 2011 machines.

``TABLE_I`` is Table I of Wang, Li and Liang (DRFH) as published: the (CPU, memory)
configurations of the 12,583 machines of Google's cluster, normalised so that the largest machine
has 1, with the paper's two-decimal values (0.50, 0.25, 0.75, ...). ``source: table-i`` draws
these, the paper's own set-up.

``TABLE_I_MACHINE_EVENTS`` has the same counts with the values Google's ``machine_events`` table
actually holds (0.4995, 0.2493, 0.749, ...): each machine's last non-empty capacity (see
:func:`fairsim.traces.google2011.machine_events_table`) gives exactly these counts; a test checks
this. The trace's memory capacities lie up to 0.001 below round fractions of the largest machine
(0.4995 for 1/2, 0.2493 for 1/4, 0.1241 for 1/8, 0.9678 for 31/32, ...), which the paper rounds to
two decimals; ``source: machine-events`` keeps the trace's values
(:class:`fairsim.schedulers.slots.Slots` counts slots on them with a tolerance).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fairsim.errors import TraceError
from fairsim.traces.google2011 import machine_events_table

#: (count, cpu, mem) per machine configuration of Google's machine_events table, in the order
#: (most frequent first) and with the counts of the DRFH paper's Table I (12,583 machines).
TABLE_I_MACHINE_EVENTS: tuple[tuple[int, float, float], ...] = (
    (6732, 0.5, 0.4995),
    (3863, 0.5, 0.2493),
    (1001, 0.5, 0.749),
    (795, 1.0, 1.0),
    (126, 0.25, 0.2498),
    (52, 0.5, 0.1241),
    (5, 0.5, 0.03085),
    (5, 0.5, 0.9678),
    (3, 1.0, 0.5),
    (1, 0.5, 0.06158),
)
#: The DRFH paper's Table I as published: the same configurations rounded to two decimals, as
#: the paper prints them (0.50, 0.25, 0.75, ...; ``tests/unit/test_traces_pools.py`` pins it).
TABLE_I: tuple[tuple[int, float, float], ...] = tuple(
    (count, round(cpu, 2), round(mem, 2)) for count, cpu, mem in TABLE_I_MACHINE_EVENTS
)
POOL_SOURCES = ("table-i", "machine-events")


def _frame(cpu: np.ndarray, mem: np.ndarray) -> pd.DataFrame:
    n = len(cpu)
    return pd.DataFrame(
        {
            "server": [f"s{i}" for i in range(n)],
            "cpu": np.asarray(cpu, dtype=np.float64),
            "mem": np.asarray(mem, dtype=np.float64),
        }
    )


def _check_n(n: int | None, available: int | None) -> None:
    if n is None:
        return
    if isinstance(n, bool) or not isinstance(n, int | np.integer):
        raise TraceError(f"n={n!r}: expected a positive integer")
    if n <= 0:
        raise TraceError(f"n={n}: must be > 0")
    if available is not None and n > available:
        raise TraceError(f"n={n}: more servers than the {available} available")


def table_i_pool(
    n: int,
    rng: np.random.Generator,
    table: tuple[tuple[int, float, float], ...] = TABLE_I,
) -> pd.DataFrame:
    """Draw ``n`` servers i.i.d. from the Table I distribution.

    Parameters
    ----------
    n : int
        Number of servers (> 0).
    rng : numpy.random.Generator
        Source of randomness.
    table : tuple of (count, cpu, mem), optional
        The configurations: :data:`TABLE_I` (default, the paper's published values) or
        :data:`TABLE_I_MACHINE_EVENTS` (the trace's values; the same ``rng`` state then draws the
        same configuration for every server).

    Returns
    -------
    pandas.DataFrame
        Columns ``server`` (``"s0"``, ``"s1"``, ...), ``cpu``, ``mem``; configuration ``k`` is
        drawn with probability ``count_k / 12583``.

    Raises
    ------
    TraceError
        If ``n`` is not a positive integer.
    """
    _check_n(n, None)
    counts = np.array([c for c, _, _ in table], dtype=np.float64)
    caps = np.array([(cpu, mem) for _, cpu, mem in table], dtype=np.float64)
    pick = rng.choice(len(table), size=n, p=counts / counts.sum())
    return _frame(caps[pick, 0], caps[pick, 1])


def machine_events_pool(
    path_to_google_dir: Path, n: int | None, rng: np.random.Generator | None
) -> pd.DataFrame:
    """The real Google machines (last non-empty capacity of each), all or a seeded sample.

    Parameters
    ----------
    path_to_google_dir : pathlib.Path
        Folder holding ``machine_events/part-00000-of-00001.csv.gz`` (or the file itself).
    n : int or None
        ``None`` for all 12,583 machines (in machine-ID order), else a sample of ``n`` machines
        without replacement.
    rng : numpy.random.Generator or None
        Source of randomness for the sample (unused, may be None, when ``n`` is None).

    Returns
    -------
    pandas.DataFrame
        Columns ``server`` (the Google machine ID as a string), ``cpu``, ``mem``.

    Raises
    ------
    TraceError
        If the machine_events file is missing or corrupt, or ``n`` is not in 1..#machines.
    """
    machines = machine_events_table(Path(path_to_google_dir))
    _check_n(n, len(machines))
    if n is not None:
        if rng is None:
            raise TraceError("rng=None: a numpy Generator is needed to sample machines")
        pick = np.sort(rng.choice(len(machines), size=n, replace=False))
        machines = machines.iloc[pick]
    return pd.DataFrame(
        {
            "server": machines["machine_id"].astype(str).to_numpy(),
            "cpu": machines["cpu"].to_numpy(np.float64),
            "mem": machines["mem"].to_numpy(np.float64),
        }
    )


def table_i_counts(df: pd.DataFrame) -> list[tuple[float, float, int]]:
    """Count servers per (cpu, mem) configuration, most frequent first.

    Parameters
    ----------
    df : pandas.DataFrame
        A pool with ``cpu`` and ``mem`` columns.

    Returns
    -------
    list of (cpu, mem, count)
        Sorted by decreasing count, ties by (cpu, mem).
    """
    counts = df.groupby(["cpu", "mem"]).size().reset_index(name="count")
    rows = [
        (float(c), float(m), int(k))
        for c, m, k in zip(counts["cpu"], counts["mem"], counts["count"], strict=True)
    ]
    return sorted(rows, key=lambda r: (-r[2], r[0], r[1]))


def load_pool(
    source: str,
    n: int | None,
    seed_or_rng: int | np.random.Generator | None,
    trace_dir: Path | None = None,
) -> pd.DataFrame:
    """Build a server pool from a named source.

    Parameters
    ----------
    source : {"table-i", "machine-events"}
        ``"table-i"``: i.i.d. draws from Table I's published configurations (``n`` required).
        ``"machine-events"``: the real machines from ``trace_dir``, with the trace's values (all
        when ``n`` is None).
    n : int or None
        Number of servers.
    seed_or_rng : int or numpy.random.Generator or None
        Seed (turned into ``numpy.random.default_rng(seed)``) or a Generator.
    trace_dir : pathlib.Path, optional
        Google 2011 folder with ``machine_events/`` (needed for ``"machine-events"``).

    Returns
    -------
    pandas.DataFrame
        Columns ``server``, ``cpu``, ``mem``.

    Raises
    ------
    TraceError
        Unknown source, ``n`` missing/<= 0/larger than the machines available, or a missing
        ``trace_dir``.
    """
    rng = (
        seed_or_rng
        if isinstance(seed_or_rng, np.random.Generator)
        else np.random.default_rng(seed_or_rng)
    )
    if source == "table-i":
        if n is None:
            raise TraceError("n=None: source 'table-i' needs a number of servers")
        return table_i_pool(n, rng)
    if source == "machine-events":
        if trace_dir is None:
            raise TraceError("trace_dir=None: source 'machine-events' needs the Google 2011 folder")
        return machine_events_pool(Path(trace_dir), n, rng)
    raise TraceError(f"source={source!r}: unknown pool source, expected one of {POOL_SOURCES}")
