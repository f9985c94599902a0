"""Validation of the replay of recorded placements (issues 32 and 39) against an independent
reading of the raw Google 2011 files.

The expected utilisation is computed here with pandas straight from the raw task_events CSV
(parts 0-13, the whole sample: about 10 s) and machine_events, without fairsim's converter or
engine: every task's CPU and memory request by the converter's documented rule (each on its own:
the first SUBMIT row that carries it, else the first UPDATE_PENDING/UPDATE_RUNNING row, else the
first other row; a task without both, without a SUBMIT or without a user is left out), every run
(a SCHEDULE and the task's next terminal event; none: right-censored, held to the horizon; time 0
taken at 600 s; never before the task's first SUBMIT) with the request of its SCHEDULE row, on
the machines of machine_events (the last non-empty capacity of each). At every sample time ``g``
of a ``recorded`` run's ``utilization.parquet`` the runs with ``start <= g < end`` are running;
their requests summed over the cluster, divided by its capacity, must equal the ``cpu`` and
``mem`` columns (rtol 1e-9), and per machine the number of machines whose requests exceed
capacity by more than 1e-9 and the sum of the excess must equal ``overcommitted_<r>`` (exactly)
and ``overcommit_<r>`` (rtol 1e-9). Both readings of the parameter ``requests``: ``schedule``
(each run holds its SCHEDULE row's request) and ``first`` (each run holds its task's request).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
#: Result folder of each reading in the run of ``CONFIG``'s two ``recorded`` entries.
FOLDERS = {"schedule": "recorded", "first": "recorded-first"}


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
    """Every SCHEDULE and the task's next terminal event (none: held, end = inf), with the
    SCHEDULE row's request (``schedule_<r>``) and the task's (``<r>``)."""
    key = ["job_id", "task_index"]
    se = ev[ev["event"].isin((SCHEDULE, *TERMINAL))].sort_values([*key, "seq"])
    nxt = se.groupby(key)[["event", "t"]].shift(-1)
    is_sch = se["event"] == SCHEDULE
    runs = se.loc[is_sch, [*key, "machine_id", "t", *RES]].rename(
        columns={r: f"schedule_{r}" for r in RES}
    )
    runs = runs.assign(end_event=nxt.loc[is_sch, "event"], end=nxt.loc[is_sch, "t"])
    assert not (runs["end_event"] == SCHEDULE).any()  # no task scheduled twice without an end
    assert runs[[f"schedule_{r}" for r in RES]].notna().all().all()  # no empty request
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


@pytest.fixture(scope="module")
def replayed(
    google_dir: Path, _trace_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    """The config's two ``recorded`` entries (``schedule`` then ``first``), run once."""
    out = tmp_path_factory.mktemp("recorded")
    cfg = load_config(
        CONFIG,
        overrides=[
            f"trace.path={google_dir}",
            f"trace.cache_dir={_trace_cache}",
            "schedulers=[recorded, {name: recorded, requests: first}]",
            "collect.fairness=null",  # not checked here (the utilisation does not depend on it)
        ],
    )
    assert cfg.scheduler_labels() == list(FOLDERS.values())
    return out, run_to_folder(cfg, out, progress=False, report=False)


@pytest.fixture(scope="module")
def raw(google_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The machines' capacities and every run, read from the raw CSV with pandas."""
    cap = _capacity(google_dir)
    ev = _events(google_dir)
    runs = _runs(ev, _tasks(ev), cap.index)
    assert len(runs) == 890_514  # the converter's runs (3 on machines machine_events lacks)
    return cap, runs


def _expected(
    g: np.ndarray, cap: pd.DataFrame, runs: pd.DataFrame, column: str, r: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """At every sample time: the requests running (share of the pool), the machines
    over-committed and the amount above capacity (share of the pool), one resource."""
    start, end = runs["start"].to_numpy(), runs["end"].to_numpy()
    server = cap.index.get_indexer(runs["machine_id"])
    first = np.searchsorted(g, start, side="left")  # first sample at or after the start
    stop = np.searchsorted(g, end, side="left")  # first sample at or after the end
    demand = runs[column].to_numpy()
    delta = np.zeros((len(g) + 1, len(cap)))
    np.add.at(delta, (first, server), demand)
    np.add.at(delta, (stop, server), -demand)
    per_machine = np.cumsum(delta, axis=0)[:-1]  # (samples, machines): requests running
    total = float(cap[r].sum())
    above = per_machine - cap[r].to_numpy()[None, :]
    return (
        per_machine.sum(axis=1) / total,
        (above > 1e-9).sum(axis=1),
        np.maximum(above, 0.0).sum(axis=1) / total,
    )


@pytest.mark.slow
@pytest.mark.parametrize(("reading", "column"), [("schedule", "schedule_{r}"), ("first", "{r}")])
def test_recorded_utilisation_equals_the_raw_trace(
    replayed: tuple[Path, dict[str, Any]],
    raw: tuple[pd.DataFrame, pd.DataFrame],
    reading: str,
    column: str,
) -> None:
    """Fails (never skips) when ``$FAIRSIM_SHARED/traces/google-2011`` is missing."""
    out, _ = replayed
    cap, runs = raw
    util = pd.read_parquet(out / FOLDERS[reading] / "utilization.parquet")
    g = util["time_s"].to_numpy()
    assert g[0] == 600.0 and len(g) == 1170  # 600 s to 70,740 s every minute
    for r in RES:
        used, n_over, amount = _expected(g, cap, runs, column.format(r=r), r)
        np.testing.assert_allclose(util[r], used, rtol=1e-9)
        np.testing.assert_array_equal(util[f"overcommitted_{r}"], n_over)
        np.testing.assert_allclose(util[f"overcommit_{r}"], amount, rtol=1e-9)


@pytest.mark.slow
def test_the_figures_docs_recorded_quotes(replayed: tuple[Path, dict[str, Any]]) -> None:
    out, summaries = replayed
    util = {k: pd.read_parquet(out / f / "utilization.parquet") for k, f in FOLDERS.items()}
    summary = {k: json.loads((out / f / "summary.json").read_text()) for k, f in FOLDERS.items()}
    # the same tasks, ending the same way: only what their runs hold differs
    for f in FOLDERS.values():
        assert summaries[f]["tasks"] == 573_602 and summaries[f]["ended"]["queued"] == 3
    assert summary["schedule"]["ended"] == summary["first"]["ended"]
    # first (each task's first request): the replay of issue 32
    u, s = util["first"], summary["first"]
    assert (u["overcommitted_cpu"].iloc[-1], u["overcommitted_mem"].iloc[-1]) == (6_575, 4_740)
    assert round(u["cpu"].iloc[-1], 4) == 1.0139 and round(u["mem"].iloc[-1], 4) == 0.8719
    assert s["overcommit"]["cpu"]["max_servers"] == 7_778
    # schedule (each run's SCHEDULE-row request, what production placed): 9-11 % more CPU
    # requested at every sample, more machines over-committed
    u, s = util["schedule"], summary["schedule"]
    ratio = u["cpu"] / util["first"]["cpu"]
    assert ratio.min() > 1.09 and ratio.max() < 1.11
    assert (u["overcommitted_cpu"].iloc[-1], u["overcommitted_mem"].iloc[-1]) == (10_247, 6_270)
    assert round(u["cpu"].iloc[-1], 4) == 1.1149 and round(u["mem"].iloc[-1], 4) == 0.9628
    assert s["overcommit"]["cpu"]["max_servers"] == 10_912
    assert s["overcommit"]["mem"]["max_servers"] == 7_341
    assert round(s["mean_utilization"]["cpu"], 4) == 1.1290
