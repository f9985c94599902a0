"""Validation of the replay of recorded placements (issue 32) against an independent reading of
the raw Google 2011 files.

The expected utilisation is computed here with pandas straight from the raw task_events CSV
(parts 0-13, the whole sample: about 10 s) and machine_events, without fairsim's converter or
engine: every task's CPU and memory request by the converter's documented rule (each on its own:
the first SUBMIT row that carries it, else the first UPDATE_PENDING/UPDATE_RUNNING row, else the
first other row; a task without both, without a SUBMIT or without a user is left out), every run
(a SCHEDULE and the task's next terminal event; none: right-censored, held to the horizon; time 0
taken at 600 s; never before the task's first SUBMIT), on the machines of machine_events (the
last non-empty capacity of each). At every sample time ``g`` of the ``recorded`` run's
``utilization.parquet`` the runs with ``start <= g < end`` are running; their requests summed
over the cluster, divided by its capacity, must equal the ``cpu`` and ``mem`` columns (rtol
1e-9), and per machine the number of machines whose requests exceed capacity by more than 1e-9
and the sum of the excess must equal ``overcommitted_<r>`` and ``overcommit_<r>``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairsim.scenario.config import load_config
from fairsim.scenario.output import run_to_folder

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "google-recorded.yaml"
PARTS = range(14)
EVENT_COLUMNS = (
    "time", "missing", "job_id", "task_index", "machine_id", "event", "user", "sched_class",
    "priority", "cpu", "mem", "disk", "diff_machines",
)  # fmt: skip
SUBMIT, SCHEDULE, UPDATE_PENDING, UPDATE_RUNNING = 0, 1, 7, 8
TERMINAL = (2, 3, 4, 5, 6)  # EVICT, FAIL, FINISH, KILL, LOST
RES = ("cpu", "mem")


def _events(google_dir: Path) -> pd.DataFrame:
    frames = [
        pd.read_csv(
            google_dir / "task_events" / f"part-{p:05d}-of-00500.csv.gz",
            header=None,
            names=list(EVENT_COLUMNS),
            usecols=["time", "job_id", "task_index", "machine_id", "event", "user", *RES],
            dtype={"time": "int64", "job_id": "int64", "task_index": "int64", "event": "int64"},
        )
        for p in PARTS
    ]
    ev = pd.concat(frames, ignore_index=True)
    ev["seq"] = np.arange(len(ev))  # file order is time order
    ev["t"] = np.where(ev["time"] == 0, 600.0, ev["time"] / 1e6)
    return ev


def _tasks(ev: pd.DataFrame) -> pd.DataFrame:
    """Requests, first SUBMIT time and user of every task (the converter's rule, in pandas)."""
    rank = ev["event"].map({SUBMIT: 0, UPDATE_PENDING: 1, UPDATE_RUNNING: 1}).fillna(2)
    key = ["job_id", "task_index"]
    req = {}
    for r in RES:
        has = ev[ev[r].notna()].assign(rank=rank)
        req[r] = has.sort_values(["rank", "seq"]).groupby(key)[r].first()
    submit = ev[ev["event"] == SUBMIT].groupby(key)["t"].min().rename("submit")
    user = ev[ev["user"].notna()].groupby(key)["user"].first()
    return pd.concat(req, axis=1).dropna().join(submit, how="inner").join(user, how="inner")


def _runs(ev: pd.DataFrame, tasks: pd.DataFrame, machines: pd.Index) -> pd.DataFrame:
    """Every SCHEDULE and the task's next terminal event (none: held, end = inf)."""
    key = ["job_id", "task_index"]
    se = ev[ev["event"].isin((SCHEDULE, *TERMINAL))].sort_values([*key, "seq"])
    nxt = se.groupby(key)[["event", "t"]].shift(-1)
    is_sch = se["event"] == SCHEDULE
    runs = se.loc[is_sch, [*key, "machine_id", "t"]].assign(
        end_event=nxt.loc[is_sch, "event"], end=nxt.loc[is_sch, "t"]
    )
    assert not (runs["end_event"] == SCHEDULE).any()  # no task scheduled twice without an end
    runs.loc[runs["end_event"].isna(), "end"] = np.inf
    runs = runs.join(tasks, on=key, how="inner")
    runs = runs[runs["machine_id"].isin(machines)]  # a SCHEDULE on an unknown machine: skipped
    runs["start"] = np.maximum(runs["t"], runs["submit"])
    runs["end"] = np.maximum(runs["end"], runs["start"])
    return runs


def _capacity(google_dir: Path) -> pd.DataFrame:
    ms = pd.read_csv(
        google_dir / "machine_events" / "part-00000-of-00001.csv.gz",
        header=None,
        names=["time", "machine_id", "event", "platform", *RES],
    )
    return ms.dropna(subset=list(RES)).groupby("machine_id")[list(RES)].last()


@pytest.mark.slow
def test_recorded_utilisation_equals_the_raw_trace(tmp_path: Path, google_dir: Path) -> None:
    """Fails (never skips) when ``$FAIRSIM_SHARED/traces/google-2011`` is missing."""
    cfg = load_config(
        CONFIG,
        overrides=[f"trace.path={google_dir}", "schedulers=[recorded]"],
    )
    out = run_to_folder(cfg, tmp_path, progress=False, report=False)
    util = pd.read_parquet(tmp_path / "recorded" / "utilization.parquet")
    g = util["time_s"].to_numpy()
    assert g[0] == 600.0 and len(g) == 1170  # 600 s to 70,740 s every minute

    cap = _capacity(google_dir)
    ev = _events(google_dir)
    runs = _runs(ev, _tasks(ev), cap.index)
    assert len(runs) == 890_514  # the converter's runs (3 on machines machine_events lacks)
    start, end = runs["start"].to_numpy(), runs["end"].to_numpy()
    server = cap.index.get_indexer(runs["machine_id"])
    first = np.searchsorted(g, start, side="left")  # first sample at or after the start
    stop = np.searchsorted(g, end, side="left")  # first sample at or after the end
    for r in RES:
        demand = runs[r].to_numpy()
        delta = np.zeros((len(g) + 1, len(cap)))
        np.add.at(delta, (first, server), demand)
        np.add.at(delta, (stop, server), -demand)
        per_machine = np.cumsum(delta, axis=0)[:-1]  # (samples, machines): requests running
        total = float(cap[r].sum())
        np.testing.assert_allclose(util[r], per_machine.sum(axis=1) / total, rtol=1e-9)
        above = per_machine - cap[r].to_numpy()[None, :]
        np.testing.assert_array_equal(util[f"overcommitted_{r}"], (above > 1e-9).sum(axis=1))
        np.testing.assert_allclose(
            util[f"overcommit_{r}"], np.maximum(above, 0.0).sum(axis=1) / total, rtol=1e-9
        )
    # the figures docs/recorded.md quotes
    s = out["recorded"]
    assert s["tasks"] == 573_602 and s["ended"]["queued"] == 3
    assert (
        util["overcommitted_cpu"].iloc[-1] == 6_575 and util["overcommitted_mem"].iloc[-1] == 4_740
    )
    assert round(util["cpu"].iloc[-1], 4) == 1.0139 and round(util["mem"].iloc[-1], 4) == 0.8719
    assert (
        json.loads((tmp_path / "recorded" / "summary.json").read_text())["overcommit"]["cpu"][
            "max_servers"
        ]
        == 7_778
    )
