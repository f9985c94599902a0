"""A raw trace's own consistency (``fairsim trace check FORMAT PATH``).

Google 2011 (:func:`check_google_2011`) is read from the raw ``task_events`` parts (streamed block
by block, per-task state only) and ``machine_events``:

* **events out of time order**: rows whose time is below an earlier row's, within a part and at
  the start of a part (below the previous part's latest time);
* **runs on unknown machines**: SCHEDULE rows whose machine_id machine_events never mentions, and
  SCHEDULE rows without a machine;
* **scheduled twice without an end**: a SCHEDULE of a task whose previous SCHEDULE has no
  terminal event (EVICT, FAIL, FINISH, KILL, LOST) in between;
* **requests larger than every machine**: tasks with a row whose CPU (memory) request exceeds the
  largest machine's CPU (memory) capacity;
* **over-committed machines over time**: every ``sample_s`` seconds from the window start (600 s)
  and at the last event, the tasks running (a SCHEDULE without a terminal event yet, a time-0 event
  taken at 600 s) with the CPU and memory request of their SCHEDULE row (the converter's rule for
  a run's request, :func:`fairsim.traces.google2011.schedule_request`, as ``placements.parquet``
  and the scheduler ``recorded`` with ``requests: schedule`` read it), summed per machine: the
  machines holding tasks (and, once, the machines any SCHEDULE names), those whose requests
  exceed their capacity (each machine's last capacity in machine_events, as
  ``servers.parquet``; by more than
  :data:`fairsim.simulator.cluster.CAPACITY_TOLERANCE`) in CPU and in memory, and the requests of
  all running tasks as a fraction of the cluster's capacity (every machine with a capacity).
  Runs on machines without a capacity are left out of the per-machine sums (counted above).

The Alibaba formats (:func:`check_alibaba`) record no machine per task or instance and one row per
task rather than an event stream: only the requests are checked (on the converted tables, whose
requests are normalised so that the largest machine has 1); the other checks are reported as not
supported, with the reason.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairsim.errors import TraceError
from fairsim.traces.google2011 import (
    LOST,
    MACHINE_EVENT_COLUMNS,
    SCHEDULE,
    TASK_EVENT_COLUMNS,
    TASK_INDEX_LIMIT,
    US_PER_S,
    WINDOW_START_US,
    _machine_events_file,
    machine_events_table,
    schedule_request,
)
from fairsim.traces.google_parts import iter_batches, list_parts, to_float, to_int
from fairsim.traces.io import BadRows

#: Default spacing of the over-commitment samples, seconds.
SAMPLE_S = 3600.0
#: By how much a machine's summed requests must exceed its capacity to count as over-committed
#: (the engine's capacity tolerance, :data:`fairsim.simulator.cluster.CAPACITY_TOLERANCE`).
TOLERANCE = 1e-9


class _Ids:
    """Dense ids of task keys (``job_id * 2^24 + task_index``), with per-task state arrays."""

    def __init__(self) -> None:
        self.keys = np.empty(0, np.int64)
        self.key_ids = np.empty(0, np.int64)
        self.n = 0
        self.running = np.zeros(0, bool)
        self.machine = np.zeros(0, np.int64)  # index into the capacity arrays, -1: none
        self.cpu = np.zeros(0)
        self.mem = np.zeros(0)

    def ids(self, key: np.ndarray) -> np.ndarray:
        ukeys, inv = np.unique(key, return_inverse=True)
        pos = np.searchsorted(self.keys, ukeys)
        pos_c = np.minimum(pos, max(len(self.keys) - 1, 0))
        known = (self.keys[pos_c] == ukeys) if len(self.keys) else np.zeros(len(ukeys), bool)
        uids = np.empty(len(ukeys), np.int64)
        uids[known] = self.key_ids[pos_c[known]]
        new = ~known
        k = int(new.sum())
        if k:
            new_ids = np.arange(self.n, self.n + k, dtype=np.int64)
            uids[new] = new_ids
            self.keys = np.insert(self.keys, pos[new], ukeys[new])
            self.key_ids = np.insert(self.key_ids, pos[new], new_ids)
            self.n += k
            if self.n > len(self.running):
                room = max(2 * len(self.running), self.n, 1024)
                for name, fill in (("running", False), ("machine", -1), ("cpu", 0.0), ("mem", 0.0)):
                    old = getattr(self, name)
                    grown = np.full(room, fill, old.dtype)
                    grown[: len(old)] = old
                    setattr(self, name, grown)
        return uids[inv.ravel()]


def _sample_row(
    time_us: int, used: np.ndarray, holding: np.ndarray, cap: np.ndarray, running: int
) -> dict[str, Any]:
    over = used > cap + TOLERANCE
    total = cap.sum(axis=0)
    return {
        "time_s": time_us / US_PER_S,
        "running_tasks": running,
        "machines_holding_tasks": int((holding > 0).sum()),
        "overcommitted_cpu": int(over[:, 0].sum()),
        "overcommitted_mem": int(over[:, 1].sum()),
        "requested_cpu": float(used[:, 0].sum() / total[0]),
        "requested_mem": float(used[:, 1].sum() / total[1]),
    }


def check_google_2011(
    src: Path, *, parts: list[int] | None = None, sample_s: float = SAMPLE_S
) -> dict[str, Any]:
    """Check a Google 2011 folder's own consistency (see the module docstring).

    Parameters
    ----------
    src : pathlib.Path
        Folder with ``task_events/part-NNNNN-of-00500.csv.gz`` and ``machine_events/``.
    parts : list of int, optional
        task_events parts to read (default: every part present).
    sample_s : float
        Spacing of the over-commitment samples, seconds (> 0).

    Returns
    -------
    dict
        ``{"format", "path", "parts", "rows", "checks": {name: {"supported": True, ...}}}``;
        the ``overcommitted_machines`` check holds ``samples`` (one dict per sample time:
        ``time_s``, ``running_tasks``, ``machines_holding_tasks``, ``overcommitted_cpu``,
        ``overcommitted_mem``, ``requested_cpu``, ``requested_mem`` as fractions of the cluster),
        ``max`` (the largest value of each over all samples) and ``end`` (at the last event).

    Raises
    ------
    TraceError
        If the folder, its task_events parts or its machine_events file is missing, a part is
        unreadable, or ``sample_s`` is not positive.
    """
    src = Path(src)
    if not (sample_s > 0):
        raise TraceError(f"sample_s={sample_s!r}: must be > 0")
    if not (src / "task_events").is_dir():
        raise TraceError(f"{src}: no task_events folder")
    files = list_parts(src / "task_events", parts, "task_events")
    if not files:
        raise TraceError(f"{src / 'task_events'}: no part-NNNNN-of-00500.csv.gz files")
    me_file = _machine_events_file(src / "machine_events")
    mentioned = pd.read_csv(
        me_file, header=None, names=list(MACHINE_EVENT_COLUMNS), usecols=["machine_id"]
    )["machine_id"]
    mentioned_ids = np.unique(pd.to_numeric(mentioned, errors="coerce").dropna().astype(np.int64))
    caps = machine_events_table(me_file)
    cap_ids = caps["machine_id"].to_numpy(np.int64)
    cap = caps[["cpu", "mem"]].to_numpy(np.float64)
    largest = cap.max(axis=0)

    st = _Ids()
    used = np.zeros_like(cap)
    holding = np.zeros(len(cap), np.int64)
    running = 0
    samples: list[dict[str, Any]] = []
    step = round(sample_s * US_PER_S)
    next_sample = WINDOW_START_US
    n_rows = n_bad = 0
    within = across = 0
    last_max = -1
    unknown_sched = no_machine = twice = 0
    unknown_tasks: list[np.ndarray] = []
    twice_tasks: list[np.ndarray] = []
    big: dict[str, list[np.ndarray]] = {"cpu": [], "mem": []}
    sched_machines: list[np.ndarray] = []
    include = ["time", "job_id", "task_index", "machine_id", "event_type", "cpu", "mem"]
    for _, file in files:
        rel = f"task_events/{file.name}"
        part_max = -1
        bad = BadRows()
        for batch in iter_batches(file, TASK_EVENT_COLUMNS, include, bad, rel):
            t, t_ok = to_int(batch.column("time"))
            job, j_ok = to_int(batch.column("job_id"))
            task, k_ok = to_int(batch.column("task_index"))
            ev, e_ok = to_int(batch.column("event_type"))
            mach, m_ok = to_int(batch.column("machine_id"))
            cpu, _ = to_float(batch.column("cpu"))
            mem, _ = to_float(batch.column("mem"))
            ok = t_ok & j_ok & k_ok & e_ok & (task >= 0) & (task < TASK_INDEX_LIMIT)
            n_rows += len(ok)
            n_bad += int((~ok).sum())
            t, job, task, ev, mach, m_ok = t[ok], job[ok], task[ok], ev[ok], mach[ok], m_ok[ok]
            cpu, mem = cpu[ok], mem[ok]
            if len(t) == 0:
                continue
            # time order: below the running maximum of the part's earlier rows
            prior = np.maximum.accumulate(np.r_[part_max, t[:-1]])
            late = t < prior
            if part_max < 0 and last_max >= 0 and t[0] < last_max:
                across += 1
            within += int(late[1:].sum()) + int(late[0] and part_max >= 0)
            part_max = max(part_max, int(t.max()))
            tid = st.ids(job * TASK_INDEX_LIMIT + task)
            for name, vals, top in (("cpu", cpu, largest[0]), ("mem", mem, largest[1])):
                sel = vals > top + TOLERANCE
                if sel.any():
                    big[name].append(np.unique(tid[sel]))

            life = np.nonzero((ev >= SCHEDULE) & (ev <= LOST))[0]
            if len(life) == 0:
                continue
            sched = ev[life] == SCHEDULE
            has_m = m_ok[life]
            pos = np.minimum(np.searchsorted(cap_ids, mach[life]), len(cap_ids) - 1)
            midx = np.where(has_m & (cap_ids[pos] == mach[life]), pos, -1)
            is_mentioned = np.isin(mach[life], mentioned_ids) & has_m
            no_machine += int((sched & ~has_m).sum())
            sched_machines.append(np.unique(mach[life][sched & has_m]))
            bad_m = sched & has_m & ~is_mentioned
            unknown_sched += int(bad_m.sum())
            if bad_m.any():
                unknown_tasks.append(np.unique(tid[life[bad_m]]))
            # sequential pairing, per task in file order (as the converter's attempts)
            order = np.argsort(tid[life], kind="stable")
            rows = life[order]
            g = tid[rows]
            s_ = sched[order]
            m_ = midx[order]
            c_ = schedule_request(cpu[rows])  # the converter's rule for a run's request
            r_ = schedule_request(mem[rows])
            first = np.r_[True, g[1:] != g[:-1]]
            prev_run = np.empty(len(rows), bool)
            prev_run[1:] = s_[:-1]
            prev_run[first] = st.running[g[first]]
            prev_m = np.empty(len(rows), np.int64)
            prev_m[1:] = m_[:-1]
            prev_m[first] = st.machine[g[first]]
            prev_c = np.empty(len(rows))
            prev_c[1:] = c_[:-1]
            prev_c[first] = st.cpu[g[first]]
            prev_r = np.empty(len(rows))
            prev_r[1:] = r_[:-1]
            prev_r[first] = st.mem[g[first]]
            again = s_ & prev_run
            twice += int(again.sum())
            if again.any():
                twice_tasks.append(np.unique(g[again]))
            # usage deltas: a run ends (its SCHEDULE's request leaves its machine) and a run starts
            ends = prev_run  # a terminal row or a SCHEDULE closes the running attempt
            d_row = np.r_[rows[ends], rows[s_]]
            d_m = np.r_[prev_m[ends], m_[s_]]
            d_cpu = np.r_[-prev_c[ends], c_[s_]]
            d_mem = np.r_[-prev_r[ends], r_[s_]]
            d_n = np.r_[-np.ones(int(ends.sum()), np.int64), np.ones(int(s_.sum()), np.int64)]
            last = np.r_[g[1:] != g[:-1], True]
            lg = g[last]
            st.running[lg] = s_[last]
            st.machine[lg] = m_[last]
            st.cpu[lg] = c_[last]
            st.mem[lg] = r_[last]
            # apply the deltas in time order, sampling at each sample time they pass
            te = np.maximum(t[d_row], WINDOW_START_US)
            o = np.argsort(d_row, kind="stable")
            te, d_m, d_cpu, d_mem, d_n = te[o], d_m[o], d_cpu[o], d_mem[o], d_n[o]
            known = d_m >= 0
            start = 0
            while True:
                cut = int(np.searchsorted(te, next_sample, side="right"))
                if cut >= len(te):
                    break
                k = slice(start, cut)
                running += _apply(used, holding, d_m[k], known[k], d_cpu[k], d_mem[k], d_n[k])
                samples.append(_sample_row(next_sample, used, holding, cap, running))
                start = cut
                next_sample += step
            k = slice(start, len(te))
            running += _apply(used, holding, d_m[k], known[k], d_cpu[k], d_mem[k], d_n[k])
        if part_max >= 0:
            last_max = max(last_max, part_max)
        if bad.count:
            n_rows += bad.count
            n_bad += bad.count
    t_end = max(last_max, WINDOW_START_US)
    # the samples left before the end of the data, then the end itself
    running_now = int(st.running[: st.n].sum())
    if running_now != running:  # pragma: no cover - consistency guard
        raise TraceError(f"trace check: {running} running tasks counted, {running_now} in state")
    while next_sample < t_end:
        samples.append(_sample_row(next_sample, used, holding, cap, running_now))
        next_sample += step
    end = _sample_row(t_end, used, holding, cap, running_now)
    keys = [k for k in end if k != "time_s"]
    maxima = {k: max((s[k] for s in [*samples, end]), default=0) for k in keys}
    ever = np.unique(np.concatenate(sched_machines)) if sched_machines else np.empty(0)

    def n_tasks(chunks: list[np.ndarray]) -> int:
        return len(np.unique(np.concatenate(chunks))) if chunks else 0

    return {
        "format": "google-2011",
        "path": str(src),
        "parts": [i for i, _ in files],
        "rows": {"task_events": n_rows, "unparseable_or_malformed": n_bad},
        "checks": {
            "events_out_of_order": {
                "supported": True,
                "rows_within_parts": within,
                "parts_starting_before_previous_part": across,
            },
            "runs_on_unknown_machines": {
                "supported": True,
                "machines_in_machine_events": len(mentioned_ids),
                "schedules_on_unknown_machines": unknown_sched,
                "tasks": n_tasks(unknown_tasks),
                "schedules_without_machine": no_machine,
            },
            "scheduled_twice_without_end": {
                "supported": True,
                "schedules": twice,
                "tasks": n_tasks(twice_tasks),
            },
            "requests_above_every_machine": {
                "supported": True,
                "largest_machine": {"cpu": float(largest[0]), "mem": float(largest[1])},
                "tasks_cpu": n_tasks(big["cpu"]),
                "tasks_mem": n_tasks(big["mem"]),
            },
            "overcommitted_machines": {
                "supported": True,
                "sample_s": sample_s,
                "machines_with_capacity": len(cap),
                "machines_ever_holding_tasks": len(ever),
                "samples": samples,
                "max": maxima,
                "end": end,
            },
        },
    }


def _apply(
    used: np.ndarray,
    holding: np.ndarray,
    m: np.ndarray,
    known: np.ndarray,
    d_cpu: np.ndarray,
    d_mem: np.ndarray,
    d_n: np.ndarray,
) -> int:
    """Add usage deltas to the machines; return the change in running tasks."""
    mk = m[known]
    np.add.at(used[:, 0], mk, d_cpu[known])
    np.add.at(used[:, 1], mk, d_mem[known])
    np.add.at(holding, mk, d_n[known])
    return int(d_n.sum())


_NO_MACHINE = "the format records no machine per task or instance"
_NO_EVENTS = "the format has one row per task (start and end), not an event stream"


def check_alibaba(fmt: str, src: Path) -> dict[str, Any]:
    """Check an Alibaba trace folder: the requests; the other checks are not supported.

    Parameters
    ----------
    fmt : str
        One of :data:`fairsim.traces.alibaba.FORMATS`.
    src : pathlib.Path
        The trace folder (as for ``fairsim trace convert``).

    Returns
    -------
    dict
        As :func:`check_google_2011`; ``requests_above_every_machine`` counts the tasks whose
        normalised request exceeds 1 (the largest machine) per resource, every other check is
        ``{"supported": False, "why": ...}``.

    Raises
    ------
    TraceError
        As :func:`fairsim.traces.alibaba.convert_alibaba`.
    """
    from fairsim.traces.alibaba import convert_alibaba

    with tempfile.TemporaryDirectory() as tmp:
        report = convert_alibaba(fmt, Path(src), Path(tmp) / "out")
        tasks = pd.read_parquet(Path(tmp) / "out" / "tasks.parquet")
    resources = [c for c in ("cpu", "mem", "gpu") if c in tasks.columns]
    above = {f"tasks_{r}": int((tasks[r] > 1 + TOLERANCE).sum()) for r in resources}
    return {
        "format": fmt,
        "path": str(src),
        "parts": None,
        "rows": {"tasks": len(tasks)},
        "checks": {
            "events_out_of_order": {"supported": False, "why": _NO_EVENTS},
            "runs_on_unknown_machines": {"supported": False, "why": _NO_MACHINE},
            "scheduled_twice_without_end": {"supported": False, "why": _NO_EVENTS},
            "requests_above_every_machine": {
                "supported": True,
                "largest_machine": {r: 1.0 for r in resources},
                "normalisation": report.get("normalisation"),
                **above,
            },
            "overcommitted_machines": {"supported": False, "why": _NO_MACHINE},
        },
    }


def check_text(result: dict[str, Any]) -> str:
    """The readable report of :func:`check_google_2011` or :func:`check_alibaba`."""
    c = result["checks"]
    lines = [f"trace check {result['format']} {result['path']}"]
    rows = result["rows"]
    if result.get("parts") is not None:
        lines.append(
            f"task_events parts {result['parts'][0]}-{result['parts'][-1]}: "
            f"{rows['task_events']:,} rows ({rows['unparseable_or_malformed']:,} unparseable or "
            "malformed, left out)"
        )
    else:
        lines.append(f"{rows['tasks']:,} tasks (converted)")

    def off(name: str, title: str) -> bool:
        if not c[name]["supported"]:
            lines.append(f"{title}: not supported ({c[name]['why']})")
            return True
        return False

    if not off("events_out_of_order", "events out of time order"):
        e = c["events_out_of_order"]
        lines.append(
            f"events out of time order: {e['rows_within_parts']:,} rows within parts, "
            f"{e['parts_starting_before_previous_part']} parts starting before the previous one"
        )
    if not off("runs_on_unknown_machines", "runs on unknown machines"):
        u = c["runs_on_unknown_machines"]
        lines.append(
            f"runs on unknown machines: {u['schedules_on_unknown_machines']:,} SCHEDULE events "
            f"({u['tasks']:,} tasks) on machines machine_events never mentions "
            f"({u['machines_in_machine_events']:,} machines); "
            f"{u['schedules_without_machine']:,} without a machine"
        )
    if not off("scheduled_twice_without_end", "tasks scheduled twice without an end"):
        s = c["scheduled_twice_without_end"]
        lines.append(
            f"tasks scheduled twice without an end: {s['schedules']:,} SCHEDULE events "
            f"({s['tasks']:,} tasks)"
        )
    r = c["requests_above_every_machine"]
    per = ", ".join(f"{k[6:]} {v:,}" for k, v in r.items() if k.startswith("tasks_"))
    lines.append(f"tasks requesting more than the largest machine: {per}")
    if not off("overcommitted_machines", "over-committed machines"):
        o = c["overcommitted_machines"]
        lines.append(
            f"over-committed machines (requests of running tasks above capacity), every "
            f"{o['sample_s']:g} s; {o['machines_with_capacity']:,} machines, "
            f"{o['machines_ever_holding_tasks']:,} ever holding tasks:"
        )
        lines.append(
            f"  {'time_s':>10} {'running':>8} {'holding':>8} {'over cpu':>8} {'over mem':>8} "
            f"{'req cpu':>8} {'req mem':>8}"
        )
        for label, row in [*(("", s) for s in o["samples"]), ("end", o["end"])]:
            lines.append(
                f"  {row['time_s']:>10.0f} {row['running_tasks']:>8,} "
                f"{row['machines_holding_tasks']:>8,} {row['overcommitted_cpu']:>8,} "
                f"{row['overcommitted_mem']:>8,} {row['requested_cpu']:>8.1%} "
                f"{row['requested_mem']:>8.1%} {label}".rstrip()
            )
        m = o["max"]
        lines.append(
            f"  max: {m['overcommitted_cpu']:,} machines over in cpu, {m['overcommitted_mem']:,} "
            f"in mem; requests {m['requested_cpu']:.1%} of cpu, {m['requested_mem']:.1%} of mem"
        )
    return "\n".join(lines) + "\n"
