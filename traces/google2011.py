"""Convert Google clusterdata-2011-2 ``task_events`` (+ ``machine_events``) to the canonical tables.

Input: a folder ``src`` with ``task_events/part-NNNNN-of-00500.csv.gz`` (required), and optionally
``job_events/part-NNNNN-of-00500.csv.gz`` (same part numbers; only counted and cross-checked) and
``machine_events/part-00000-of-00001.csv.gz`` (the machines, written to ``servers.parquet``).
Files are Google's originals: gzip, no header, columns as in the official ``schema.csv``.

The task_events parts are streamed with :func:`pyarrow.csv.open_csv` one block (a few MB) at a
time. Events are processed in file order, which in Google's files is time order (parts chain in
time).

Out of core (memory independent of the trace's length)
------------------------------------------------------
1. Parse: every row is validated and counted; the valid rows are hash-partitioned by ``job_id``
   into ``K`` Arrow IPC spill files (:mod:`fairsim.traces.spill`, a ``.spill-*`` folder inside
   the output folder, removed at the end and on error), each in file order.
2. Fold: each bucket's rows are folded into per-task state (about twenty numpy arrays of one
   entry per task) and finished into its tasks and runs, each sorted, written as sorted runs.
3. Merge: the runs are k-way merged into ``tasks.parquet`` and ``placements.parquet``
   (:class:`fairsim.traces.io.RowGroupWriter`: the bytes of writing the whole table at once).

``K`` comes from the parts' gzip size (:func:`auto_buckets`: up to :data:`BUCKET_ROWS` rows,
``K = 1``, else buckets of half as many rows); with ``K = 1`` the rows are folded in memory during
the parse, without spill files. The
output does not depend on ``K``: a task's rows keep their order in its bucket, and the report's
figures are sums over buckets, which share no task and no job.

Semantics (one output row per distinct ``(job_id, task_index)``)
-----------------------------------------------------------------
* **Times** are µs in the trace and seconds (float) in the output. Time 0 means "before the
  window" (the trace starts at 600 s = 600,000,000 µs).
* ``submit_s``: time of the task's first SUBMIT (0.0 for a time-0 SUBMIT). A task with no SUBMIT in
  the converted parts gets ``submit_s = 0.0`` if it has any time-0 row (it existed before the
  window), else it is dropped with reason ``"no SUBMIT event"``.
* ``user``: from the task's first row that names a user (dropped with ``"missing user"`` if none).
  ``cpu`` and ``mem`` (each on its own): from the first SUBMIT row that carries the value; if no
  SUBMIT carries it, from the first UPDATE_PENDING/UPDATE_RUNNING row that does; failing that,
  from the first other row (SCHEDULE, terminal) that does. A task left without a CPU or a
  memory request is dropped with ``"missing cpu or mem request"``. This keeps the 287 tasks of
  part 0 whose only SUBMIT is a time-0 row with empty requests (``missing info = 2``) but whose
  SCHEDULE row carries the request: they ran, so they are part of the workload.
  Zero requests are kept as they are (the trace has a few hundred tasks with cpu = mem = 0).
  A task any of whose rows carries a negative CPU or memory request is dropped with
  ``"negative request"`` (a negative request is no demand; the rows that carry one may be the
  SCHEDULE rows the recorded placements take their request from).
* **Attempts**: ``attempts`` is the number of SCHEDULE events. An attempt is a SCHEDULE followed by
  the task's next terminal event (EVICT=2, FAIL=3, FINISH=4, KILL=5, LOST=6). If any attempt ended
  in FINISH, the last such attempt is used (``end_state = "finish"``); otherwise the last attempt
  is used and ``end_state`` is its terminal event (``evict``, ``fail``, ``kill``, ``lost``).
  ``run_s = terminal time - schedule time``. Resubmitted tasks (SUBMIT again after EVICT, FAIL,
  KILL, ...) stay one row. A task with an attempt whose terminal event is earlier than its
  SCHEDULE (times out of order: no usable run time) is dropped with ``"terminal event before its
  SCHEDULE"``; Google's files are in time order, so the sample has none.
* If the task's last SCHEDULE has no terminal event (still running when the converted data ends)
  and no attempt finished: ``end_state = "censored"`` and ``run_s = last event time of all
  converted parts - schedule time`` (a lower bound).
* A task never scheduled: ``end_state = "unscheduled"``, ``run_s`` null.
* A SCHEDULE (or terminal event) at time 0 (already running before the window) is taken to happen
  at 600 s, the window start, so its ``run_s`` is a **lower bound**.
* ``instances = 1`` and ``parents`` null; ``constraint`` from ``task_constraints`` when the folder
  has that table (``traces/google_constraints.py``), else null.
* Output sorted by ``(submit_s, job_id, task_index)``, Parquet row groups of 65,536 rows.

Recorded placements (``placements.parquet``, :func:`fairsim.traces.schema.placements_schema`)
--------------------------------------------------------------------------------------------
One row per attempt above (a SCHEDULE and the task's next terminal event) of a task in the tasks
table: ``machine`` is the SCHEDULE row's machine_id, ``start_s``/``end_s`` the two events' times
(time 0 taken at 600 s), ``end_event`` the terminal event; an attempt without a terminal event is
right-censored (``end_event = "censored"``, ``end_s`` = last event time of all converted parts),
so a task's last run spans its ``run_s`` when no attempt finished. Runs not written are counted in
``conversion.json`` under ``"placements"`` by reason: ``"task not in the tasks table"``,
``"SCHEDULE without a machine"`` (empty or unparseable machine_id), ``"machine not in
machine_events"`` (no capacity there; only checked when the folder has machine_events,
``"machines_checked"``) and ``"SCHEDULE followed by another SCHEDULE (no end)"``.

Skip report (``conversion.json``)
---------------------------------
Every input row is counted exactly once, as used or skipped with one reason, so for every table
``rows_used + sum(skipped) == rows_read``.

task_events rows:

* used: SUBMIT and SCHEDULE rows; terminal rows that close an attempt (a SCHEDULE before them);
  UPDATE rows whose request was taken as the task's cpu or mem;
* ``"update event (no effect on run time)"``: other UPDATE_PENDING/UPDATE_RUNNING rows;
* ``"terminal event without a running attempt"``: EVICT/FAIL/FINISH/KILL/LOST of a task that was
  not running (e.g. killed while pending), unless its request was taken (then used);
* ``"missing cpu or mem request"``, ``"negative request"``, ``"terminal event before its
  SCHEDULE"``, ``"no SUBMIT event"``, ``"missing user"``: every row of a task dropped for that
  reason (a task that has several of them gets the first of ``"no SUBMIT event"``, ``"missing
  user"``, ``"missing cpu or mem request"``, ``"negative request"``, ``"terminal event before its
  SCHEDULE"``);
* ``"bad event type"``: event type outside 0..8;
* ``"unparseable field"``: time, job ID, task index or event type empty or not a number, a CPU or
  memory field that is neither empty nor a finite number (text, ``nan`` and ``inf`` alike: only
  an empty field is a missing request), a negative time or job ID, a task index outside
  [0, 2^24), or a time of 2^63-1 ("after the window");
* ``"malformed row (wrong column count)"``.

job_events rows (only cross-checked): used when the job has a task in the output, else
``"job not in converted tasks"``; ``"unparseable field"`` / ``"malformed row (wrong column
count)"`` as above. machine_events rows: used when the row gives the machine's last non-empty
capacity (see :func:`machine_events_table`); else ``"empty capacity"`` (CPU or memory empty),
``"superseded by a later capacity"``, or ``"unparseable field"`` (as above; a CPU or memory
capacity that is neither empty nor a finite number).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time as _time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from tqdm import tqdm

from fairsim.errors import TraceError
from fairsim.traces.google_parts import PART_RE, iter_batches, list_parts, to_float, to_int
from fairsim.traces.io import (
    BAD_ROW_THRESHOLD,
    ROW_GROUP_SIZE,
    BadRows,
    FirstBadRow,
    RowGroupWriter,
    check_bad_rows,
    write_json_atomic,
    write_servers,
)
from fairsim.traces.schema import (
    END_STATES,
    GOOGLE_PRIORITY_BANDS,
    PLACEMENTS_SCHEMA_VERSION,
    SCHEMA_VERSION,
)
from fairsim.traces.spill import FAN_IN, Partitioner, SpillDir, bucket_of, merge_runs, write_run

log = logging.getLogger(__name__)

FORMAT = "google-2011"
WINDOW_START_US = 600_000_000
AFTER_WINDOW_US = 2**63 - 1
US_PER_S = 1e6
TASK_INDEX_LIMIT = 1 << 24
NO_MACHINE = -1  # machine_id of a SCHEDULE row with an empty or unparseable machine field
#: Largest priority and scheduling class the 2011 trace documents (ClusterData2011_2.md and the
#: format + schema document); a value outside 0..max is read as "none".
PRIORITY_MAX = 11
CLASS_MAX = 3

TASK_EVENT_COLUMNS = (
    "time", "missing_info", "job_id", "task_index", "machine_id", "event_type", "user",
    "scheduling_class", "priority", "cpu", "mem", "disk", "different_machines",
)  # fmt: skip
JOB_EVENT_COLUMNS = (
    "time", "missing_info", "job_id", "event_type", "user", "scheduling_class", "job_name",
    "logical_job_name",
)  # fmt: skip
MACHINE_EVENT_COLUMNS = ("time", "machine_id", "event_type", "platform", "cpu", "mem")

SUBMIT, SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST, UPDATE_PENDING, UPDATE_RUNNING = range(9)
# terminal event type -> index into END_STATES
_TERMINAL_STATE = {EVICT: "evict", FAIL: "fail", FINISH: "finish", KILL: "kill", LOST: "lost"}

R_UPDATE = "update event (no effect on run time)"
R_TERM_PENDING = "terminal event without a running attempt"
R_MISSING_REQ = "missing cpu or mem request"
R_NEG_REQ = "negative request"
R_END_BEFORE_SCHED = "terminal event before its SCHEDULE"
R_NO_SUBMIT = "no SUBMIT event"
R_MISSING_USER = "missing user"
R_BAD_EVENT = "bad event type"
R_UNPARSEABLE = "unparseable field"
R_MALFORMED = "malformed row (wrong column count)"
R_JOB_UNUSED = "job not in converted tasks"
R_EMPTY_CAP = "empty capacity"
R_SUPERSEDED = "superseded by a later capacity"
# placements (runs) that are not written, by reason
P_DROPPED_TASK = "task not in the tasks table"
P_NO_MACHINE = "SCHEDULE without a machine"
P_UNKNOWN_MACHINE = "machine not in machine_events"
P_UNENDED = "SCHEDULE followed by another SCHEDULE (no end)"


# --------------------------------------------------------------------------- per-task state


class DenseKeys:
    """Dense ids ``0, 1, ...`` of integer keys, in the order they are first seen: the keys are
    kept sorted (with each one's id) and looked up by binary search, one batch at a time.

    Attributes
    ----------
    n : int
        Keys registered so far (the next new key's id).
    keys, key_ids : ndarray of int64, shape (n,)
        The registered keys, sorted, and the id of each.
    """

    def __init__(self) -> None:
        self.n = 0
        self.keys = np.empty(0, np.int64)
        self.key_ids = np.empty(0, np.int64)

    def register(self, ukeys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ids of ``ukeys``, registering those not seen before.

        Parameters
        ----------
        ukeys : ndarray of int64, shape (m,)
            Sorted and unique (as :func:`numpy.unique` returns them).

        Returns
        -------
        ids : ndarray of int64, shape (m,)
        new : ndarray of bool, shape (m,)
            The keys registered by this call (their ids are ``n`` before the call onwards).
        """
        pos = np.searchsorted(self.keys, ukeys)
        pos_c = np.minimum(pos, max(len(self.keys) - 1, 0))
        known = (
            (pos < len(self.keys)) & (self.keys[pos_c] == ukeys)
            if len(self.keys)
            else (np.zeros(len(ukeys), bool))
        )
        uids = np.empty(len(ukeys), np.int64)
        uids[known] = self.key_ids[pos_c[known]]
        new = ~known
        n_new = int(new.sum())
        if n_new:
            new_ids = np.arange(self.n, self.n + n_new, dtype=np.int64)
            uids[new] = new_ids
            self.n += n_new
            # both key lists are sorted and disjoint: insert the new ones in place (a merge)
            self.keys = np.insert(self.keys, pos[new], ukeys[new])
            self.key_ids = np.insert(self.key_ids, pos[new], new_ids)
        return uids, new


class _TaskState(DenseKeys):
    """Per-task aggregated state, one entry per distinct (job_id, task_index), grown as needed."""

    _SPEC: ClassVar[dict[str, tuple[Any, Any]]] = {
        "job_id": (np.int64, 0),
        "task_index": (np.int32, 0),
        "first_submit": (np.int64, -1),  # µs, -1: none seen
        "has_t0": (np.bool_, False),
        "user": (np.int32, -1),
        "cpu_sub": (np.float64, np.nan),
        "mem_sub": (np.float64, np.nan),
        "cpu_upd": (np.float64, np.nan),
        "mem_upd": (np.float64, np.nan),
        "cpu_oth": (np.float64, np.nan),
        "mem_oth": (np.float64, np.nan),
        "cpu_upd_row": (np.int64, -1),
        "mem_upd_row": (np.int64, -1),
        "cpu_oth_row": (np.int64, -1),
        "mem_oth_row": (np.int64, -1),
        "cpu_oth_pending": (np.bool_, False),
        "mem_oth_pending": (np.bool_, False),
        "neg_req": (np.bool_, False),  # a row of the task carries a negative cpu or mem request
        "attempts": (np.int32, 0),
        "open": (np.bool_, False),
        "last_sched": (np.int64, 0),  # effective µs of the latest SCHEDULE
        "last_machine": (np.int64, NO_MACHINE),  # machine of the latest SCHEDULE
        "last_cpu": (np.float64, np.nan),  # requests of the latest SCHEDULE row (nan: empty)
        "last_mem": (np.float64, np.nan),
        "last_term": (np.int8, -1),  # event type that closed the latest attempt
        "last_run": (np.int64, 0),  # µs
        "end_before_sched": (np.bool_, False),  # an attempt's terminal event precedes its SCHEDULE
        "finish_run": (np.int64, -1),  # µs of the latest attempt that ended in FINISH
        "n_rows": (np.int32, 0),
        "n_update": (np.int32, 0),
        "n_term_pending": (np.int32, 0),
        # priority and scheduling class: the first SUBMIT row's that carries one, else the first
        # row's; and whether another row of the task carries another value (-1: none seen)
        "prio_sub": (np.int8, -1),
        "prio_first": (np.int8, -1),
        "prio_changed": (np.bool_, False),
        "sclass_sub": (np.int8, -1),
        "sclass_first": (np.int8, -1),
        "sclass_changed": (np.bool_, False),
    }

    def __init__(self) -> None:
        super().__init__()  # n: tasks registered; the arrays have room for more (grown)
        self.a = {k: np.full(0, fill, dtype) for k, (dtype, fill) in self._SPEC.items()}
        # closed runs, one chunk per batch: (task id, start µs, end µs, terminal event, machine,
        # the SCHEDULE row's cpu and mem request, nan when empty)
        self.runs: list[tuple[np.ndarray, ...]] = []
        self.unended = 0  # SCHEDULE rows followed by another SCHEDULE of the task (no end)

    def ids(self, job: np.ndarray, task: np.ndarray) -> np.ndarray:
        """Dense task id of every row, registering unseen tasks."""
        key = job * TASK_INDEX_LIMIT + task
        ukeys, first, inv = np.unique(key, return_index=True, return_inverse=True)
        uids, new = self.register(ukeys)
        if new.any():
            self._grow()
            new_ids = uids[new]
            self.a["job_id"][new_ids] = job[first[new]]
            self.a["task_index"][new_ids] = task[first[new]]
        return uids[inv.ravel()]

    def _grow(self) -> None:
        """Make room in the arrays for the ``n`` tasks registered."""
        room = len(self.a["job_id"])
        if self.n <= room:
            return
        room = max(room + room // 4, self.n, 1024)
        for name, (dtype, fill) in self._SPEC.items():
            grown = np.full(room, fill, dtype)
            old = self.a[name]
            grown[: len(old)] = old
            self.a[name] = grown

    def trim(self) -> None:
        """Cut the arrays to the ``n`` tasks registered (once all rows are folded)."""
        self.a = {k: v[: self.n] for k, v in self.a.items()}


def schedule_request(values: np.ndarray) -> np.ndarray:
    """The request a run was placed with, one resource: its SCHEDULE row's value, an empty field
    taken as 0.

    The one rule for a run's request: the converter's ``placements.parquet`` (columns ``cpu``
    and ``mem``, :func:`fairsim.traces.schema.placements_schema`; the runs whose row is empty
    are counted in ``conversion.json``) and ``fairsim trace check``'s over-committed machines
    (:mod:`fairsim.traces.check`) both use it. A task's own request (``tasks.parquet``) is its
    first one instead (the module docstring); the Google 2011 sample has no SCHEDULE row with
    an empty request.

    Parameters
    ----------
    values : ndarray of float64, shape (n,)
        The CPU or memory field of SCHEDULE rows, normalised as the trace has it (the largest
        machine has 1); nan where the field is empty.

    Returns
    -------
    ndarray of float64, shape (n,)
        ``values`` with nan replaced by 0.
    """
    values = np.asarray(values, dtype=np.float64)
    return np.where(np.isnan(values), 0.0, values)


def _first_per_task(tid: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(task ids, row indices) of the first row per task among rows where ``mask`` holds."""
    rows = np.nonzero(mask)[0]
    utid, first = np.unique(tid[rows], return_index=True)
    return utid, rows[first]


def _update_tasks(
    st: _TaskState, tid: np.ndarray, t: np.ndarray, ev: np.ndarray, user: np.ndarray,
    cpu: np.ndarray, mem: np.ndarray, machine: np.ndarray, row0: int,
    prio: np.ndarray | None = None, sclass: np.ndarray | None = None,
) -> None:  # fmt: skip
    """Fold one batch of valid rows (in file order) into the per-task state."""
    a = st.a
    for vals, name in ((prio, "prio"), (sclass, "sclass")):
        if vals is not None:
            _first_value(a, tid, ev, vals, name)
    np.add.at(a["n_rows"], tid, 1)
    a["has_t0"][tid[t == 0]] = True

    # first SUBMIT time
    is_sub = ev == SUBMIT
    utid, rows = _first_per_task(tid, is_sub)
    unset = a["first_submit"][utid] < 0
    a["first_submit"][utid[unset]] = t[rows[unset]]

    # user: first row naming one
    utid, rows = _first_per_task(tid, user >= 0)
    unset = a["user"][utid] < 0
    a["user"][utid[unset]] = user[rows[unset]]

    # attempts: SCHEDULE / terminal state machine, vectorised per task
    pending = _attempts(st, tid, t, ev, machine, cpu, mem)

    # requests: first SUBMIT carrying the value, else first UPDATE, else first other row
    a["neg_req"][tid[(cpu < 0) | (mem < 0)]] = True
    is_upd = (ev == UPDATE_PENDING) | (ev == UPDATE_RUNNING)
    np.add.at(a["n_update"], tid[is_upd], 1)
    is_oth = ~is_sub & ~is_upd
    for vals, name in ((cpu, "cpu"), (mem, "mem")):
        have = ~np.isnan(vals)
        for tier, mask in (("sub", is_sub), ("upd", is_upd), ("oth", is_oth)):
            utid, rows = _first_per_task(tid, mask & have)
            unset = np.isnan(a[f"{name}_{tier}"][utid])
            utid, rows = utid[unset], rows[unset]
            a[f"{name}_{tier}"][utid] = vals[rows]
            if tier != "sub":
                a[f"{name}_{tier}_row"][utid] = row0 + rows
            if tier == "oth":
                a[f"{name}_oth_pending"][utid] = pending[rows]


def _first_value(
    a: dict[str, np.ndarray], tid: np.ndarray, ev: np.ndarray, vals: np.ndarray, name: str
) -> None:
    """Fold a per-row small integer (priority, scheduling class; -1 where the row has none):
    the first SUBMIT row's value, the first row's value, and whether a row differs from it."""
    have = vals >= 0
    for key, mask in ((f"{name}_sub", have & (ev == SUBMIT)), (f"{name}_first", have)):
        utid, rows = _first_per_task(tid, mask)
        unset = a[key][utid] < 0
        a[key][utid[unset]] = vals[rows[unset]]
    other = have & (vals != a[f"{name}_first"][tid])
    a[f"{name}_changed"][tid[other]] = True


def _attempts(
    st: _TaskState, tid: np.ndarray, t: np.ndarray, ev: np.ndarray, machine: np.ndarray,
    cpu: np.ndarray, mem: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """Fold SCHEDULE/terminal rows into the attempt state; return the rows' "pending" mask.

    A row is pending when it is a terminal event with no running attempt (no SCHEDULE before it).
    A task with an attempt whose terminal event is earlier than its SCHEDULE is marked
    (``end_before_sched``); its run time is negative and the task is dropped.
    Every closed attempt (a SCHEDULE and the task's next terminal event) is appended to
    ``st.runs`` as one numpy chunk per batch, in file order within each task, with its SCHEDULE
    row's machine and requests.
    """
    a = st.a
    pending = np.zeros(len(ev), bool)
    life = np.nonzero((ev >= SCHEDULE) & (ev <= LOST))[0]
    if len(life) == 0:
        return pending
    order = np.argsort(tid[life], kind="stable")
    life = life[order]
    g, e = tid[life], ev[life]
    te = np.where(t[life] == 0, WINDOW_START_US, t[life])
    first = np.r_[True, g[1:] != g[:-1]]
    last = np.r_[g[1:] != g[:-1], True]
    prev_sched = np.empty(len(life), bool)
    prev_sched[1:] = e[:-1] == SCHEDULE
    prev_sched[first] = a["open"][g[first]]
    prev_time = np.empty(len(life), np.int64)
    prev_time[1:] = te[:-1]
    prev_time[first] = a["last_sched"][g[first]]
    m = machine[life]
    prev_machine = np.empty(len(life), np.int64)
    prev_machine[1:] = m[:-1]
    prev_machine[first] = a["last_machine"][g[first]]
    req = {}  # the previous row's request, the SCHEDULE's for a closing row
    for name, vals in (("cpu", cpu), ("mem", mem)):
        v = vals[life]
        prev = np.empty(len(life))
        prev[1:] = v[:-1]
        prev[first] = a[f"last_{name}"][g[first]]
        req[name] = (v, prev)

    is_sched = e == SCHEDULE
    np.add.at(a["attempts"], g[is_sched], 1)
    st.unended += int((is_sched & prev_sched).sum())
    is_term = ~is_sched
    closing = is_term & prev_sched
    np.add.at(a["n_term_pending"], g[is_term & ~prev_sched], 1)
    pending[life[is_term & ~prev_sched]] = True
    run = te - prev_time
    a["end_before_sched"][g[closing & (run < 0)]] = True
    if closing.any():
        st.runs.append(
            (g[closing], prev_time[closing], prev_time[closing] + run[closing],
             e[closing].astype(np.int8), prev_machine[closing], req["cpu"][1][closing],
             req["mem"][1][closing])
        )  # fmt: skip

    for sel, key_state, key_run in (
        (closing, "last_term", "last_run"),
        (closing & (e == FINISH), None, "finish_run"),
    ):
        idx = np.nonzero(sel)[0]
        if len(idx) == 0:
            continue
        lg = g[idx]
        keep = np.r_[lg[1:] != lg[:-1], True]  # last selected row per task
        idx = idx[keep]
        if key_state is not None:
            a[key_state][g[idx]] = e[idx]
        a[key_run][g[idx]] = run[idx]

    lg = g[last]
    a["open"][lg] = is_sched[last]
    a["last_sched"][lg[is_sched[last]]] = te[last][is_sched[last]]
    a["last_machine"][lg[is_sched[last]]] = m[last][is_sched[last]]
    for name in ("cpu", "mem"):
        a[f"last_{name}"][lg[is_sched[last]]] = req[name][0][last][is_sched[last]]
    return pending


# --------------------------------------------------------------------------- machine_events


def _machine_events_file(path: Path) -> Path:
    path = Path(path)
    if path.is_file():
        return path
    for cand in (path / "machine_events", path):
        if cand.is_dir():
            files = sorted(p for p in cand.iterdir() if PART_RE.match(p.name))
            if files:
                return files[0]
    raise TraceError(f"{path}: no machine_events/part-NNNNN-of-NNNNN.csv.gz found")


def _machine_events(
    path: Path, bad_row_threshold: float = BAD_ROW_THRESHOLD
) -> tuple[pd.DataFrame, dict[str, Any]]:
    file = _machine_events_file(path)
    rel = f"machine_events/{file.name}"
    bad = BadRows()
    times, machines, platforms, cpus, mems, unparseable = [], [], [], [], [], 0
    first_bad = FirstBadRow(len(MACHINE_EVENT_COLUMNS))
    offset = 0
    for batch in iter_batches(file, MACHINE_EVENT_COLUMNS, list(MACHINE_EVENT_COLUMNS), bad, rel):
        t, t_ok = to_int(batch.column("time"))
        m, m_ok = to_int(batch.column("machine_id"))
        _, e_ok = to_int(batch.column("event_type"))
        cpu, cpu_bad = to_float(batch.column("cpu"))
        mem, mem_bad = to_float(batch.column("mem"))
        ok = t_ok & m_ok & e_ok & ~cpu_bad & ~mem_bad
        first_bad.parsed(file, rel, offset, ~ok, R_UNPARSEABLE)
        offset += batch.num_rows
        unparseable += int((~ok).sum())
        times.append(t[ok])
        machines.append(m[ok])
        platforms.append(np.asarray(batch.column("platform").to_pandas(), dtype=object)[ok])
        cpus.append(cpu[ok])
        mems.append(mem[ok])
    df = pd.DataFrame(
        {
            "machine_id": np.concatenate(machines) if machines else np.empty(0, np.int64),
            "cpu": np.concatenate(cpus) if cpus else np.empty(0),
            "mem": np.concatenate(mems) if mems else np.empty(0),
            "platform": np.concatenate(platforms) if platforms else np.empty(0, object),
        }
    )
    n_valid = len(df)
    first_bad.file_done(file, rel, bad)
    n_bad = unparseable + bad.count
    check_bad_rows("machine_events", n_valid + n_bad, n_bad, bad_row_threshold, first_bad.describe)
    full = df[df["cpu"].notna() & df["mem"].notna()]
    last = full.drop_duplicates(subset="machine_id", keep="last")
    last = last.sort_values("machine_id", kind="stable").reset_index(drop=True)
    skipped = {
        R_EMPTY_CAP: n_valid - len(full),
        R_SUPERSEDED: len(full) - len(last),
        R_UNPARSEABLE: unparseable,
        R_MALFORMED: bad.count,
    }
    report = {
        "rows_read": n_valid + unparseable + bad.count,
        "rows_used": len(last),
        "skipped": skipped,
        "machines": int(df["machine_id"].nunique()),
    }
    return last, report


def machine_events_table(path: Path) -> pd.DataFrame:
    """Each machine's last non-empty (cpu, mem) capacity from Google's machine_events table.

    Every machine_events row (ADD, REMOVE or UPDATE) with both CPU and memory capacity filled is a
    capacity observation; a machine's capacity is its last one in file (time) order. On the full
    table this gives 12,583 machines in the ten (cpu, mem) configurations of the DRFH paper's
    Table I, with the trace's values (e.g. 0.4995), which the paper prints rounded (0.50).

    Parameters
    ----------
    path : pathlib.Path
        The ``machine_events/part-00000-of-00001.csv.gz`` file, its folder, or the Google 2011
        folder that holds ``machine_events/``.

    Returns
    -------
    pandas.DataFrame
        Columns ``machine_id`` (int64), ``cpu``, ``mem`` (float64, normalised: largest machine =
        1) and ``platform`` (str hash), one row per machine, sorted by ``machine_id``.

    Raises
    ------
    TraceError
        If no machine_events file is found or the gzip is corrupt.
    """
    return _machine_events(path)[0]


# --------------------------------------------------------------------------- job_events


def _job_events(
    files: list[tuple[int, Path]],
    jobs: np.ndarray,
    progress: bool,
    bad_row_threshold: float = BAD_ROW_THRESHOLD,
) -> dict[str, Any]:
    bad = BadRows()
    used = unused = unparseable = 0
    seen: list[np.ndarray] = []
    first_bad = FirstBadRow(len(JOB_EVENT_COLUMNS))
    for _, file in tqdm(files, desc="job_events", disable=not progress, leave=False):
        rel = f"job_events/{file.name}"
        offset = 0
        for batch in iter_batches(file, JOB_EVENT_COLUMNS, ["job_id"], bad, rel):
            j, ok = to_int(batch.column("job_id"))
            first_bad.parsed(file, rel, offset, ~ok, R_UNPARSEABLE)
            offset += batch.num_rows
            unparseable += int((~ok).sum())
            j = j[ok]
            seen.append(np.unique(j))
            hit = np.isin(j, jobs)
            used += int(hit.sum())
            unused += int((~hit).sum())
        first_bad.file_done(file, rel, bad)
    n_bad = unparseable + bad.count
    check_bad_rows(
        "job_events", used + unused + n_bad, n_bad, bad_row_threshold, first_bad.describe
    )
    job_ids = np.unique(np.concatenate(seen)) if seen else np.empty(0, np.int64)
    return {
        "rows_read": used + unused + unparseable + bad.count,
        "rows_used": used,
        "skipped": {R_JOB_UNUSED: unused, R_UNPARSEABLE: unparseable, R_MALFORMED: bad.count},
        "jobs": len(job_ids),
        "task_jobs_missing_from_job_events": int((~np.isin(jobs, job_ids)).sum()),
    }


# --------------------------------------------------------------------------- main entry point


def convert_google_2011(
    src: Path,
    out: Path,
    *,
    parts: list[int] | None = None,
    progress: bool = True,
    bad_row_threshold: float = BAD_ROW_THRESHOLD,
    buckets: int | None = None,
) -> dict[str, Any]:
    """Convert Google clusterdata-2011-2 task_events (+ machine_events) to canonical Parquet.

    See the module docstring (and ``docs/traces.md``) for the exact semantics, the skip reasons
    and how memory stays bounded (the rows are hash-partitioned by job into ``buckets`` spill
    files, each folded on its own, and the sorted outputs merged).

    Parameters
    ----------
    src : pathlib.Path
        Folder holding ``task_events/part-NNNNN-of-00500.csv.gz`` and optionally ``job_events/``
        and ``machine_events/``.
    out : pathlib.Path
        Output folder; receives ``tasks.parquet``, ``placements.parquet``, ``servers.parquet``
        (when machine_events is present) and ``conversion.json``. Created if needed. Spill
        files go to a temporary folder inside it, removed at the end (also on error).
    parts : list of int, optional
        task_events (and job_events) part numbers to convert; default: all parts present.
    progress : bool
        Show a tqdm progress bar (one step per task_events part).
    bad_row_threshold : float
        Largest share (0-1) of a table's rows that may be malformed, unparseable or of an
        unknown event type (default 0.5); more is an error naming the first bad row.
    buckets : int, optional
        Number of spill buckets; default from the parts' compressed size
        (:func:`auto_buckets`). 1 folds every task in
        memory without spill files. The output does not depend on it.

    Returns
    -------
    dict
        The conversion report, also written to ``conversion.json``.

    Raises
    ------
    TraceError
        If ``src`` has no ``task_events`` folder or none of the requested parts, a part is empty,
        a truncated or corrupt gzip, has no data rows, or more than ``bad_row_threshold`` of a
        table's rows are bad. Nothing is written in that case.
    ValueError
        If ``buckets`` is below 1.
    """
    if buckets is not None and buckets < 1:
        raise ValueError(f"buckets: {buckets}, expected at least 1")
    src, out = Path(src), Path(out)
    started = _time.perf_counter()
    te_dir = src / "task_events"
    if not src.is_dir():
        raise TraceError(f"{src}: {'not a directory' if src.exists() else 'no such folder'}")
    if not te_dir.is_dir():
        raise TraceError(f"{src}: no task_events folder")
    te_files = list_parts(te_dir, parts, "task_events")
    if not te_files:
        wanted = "any part" if parts is None else f"parts {sorted(set(parts))}"
        raise TraceError(f"{te_dir}: no part-NNNNN-of-00500.csv.gz files for {wanted}")
    if parts is not None:
        missing = sorted(set(parts) - {i for i, _ in te_files})
        if missing:
            raise TraceError(f"{te_dir}: missing task_events part(s) {missing}")
    k = auto_buckets([f for _, f in te_files]) if buckets is None else buckets
    created = not out.exists()
    try:
        with contextlib.ExitStack() as stack:
            spill = stack.enter_context(SpillDir(out)) if k > 1 else None
            report = _convert(src, out, te_files, progress, bad_row_threshold, k, spill)
    except BaseException:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        raise
    log.info("google-2011: converted in %.1f s (%d bucket(s))", _time.perf_counter() - started, k)
    return report


#: Valid task_events rows folded in memory at most (about 350,000 tasks of the sample); a longer
#: trace is split into spill buckets of half as many rows, so that its peak (the parse, then one
#: bucket's fold) stays at about that of the longest trace folded in memory.
BUCKET_ROWS = 1_500_000
#: task_events rows per byte of gzip in the sample (2,609,335 rows in 29.3 MB): estimates the
#: rows of the parts before they are read, to choose the number of buckets.
ROWS_PER_GZ_BYTE = 0.089


def auto_buckets(files: list[Path], bucket_rows: int = BUCKET_ROWS) -> int:
    """Number of spill buckets for these task_events parts (1: fold in memory, no spill).

    Parameters
    ----------
    files : list of pathlib.Path
        The ``.csv.gz`` parts.
    bucket_rows : int
        Rows folded in memory at most.

    Returns
    -------
    int
        1 when the estimated rows are at most ``bucket_rows``, else
        ``ceil(estimated rows / (bucket_rows / 2))``; the rows are estimated from the files'
        compressed size (:data:`ROWS_PER_GZ_BYTE`).
    """
    rows = sum(Path(f).stat().st_size for f in files) * ROWS_PER_GZ_BYTE
    if rows <= bucket_rows:
        return 1
    return math.ceil(rows / (bucket_rows / 2))


_ROW_SCHEMA = pa.schema(
    [
        ("job", pa.int64()),
        ("task", pa.int32()),
        ("t", pa.int64()),
        ("ev", pa.int8()),
        ("user", pa.int32()),
        ("cpu", pa.float64()),
        ("mem", pa.float64()),
        ("machine", pa.int64()),
        ("prio", pa.int8()),
        ("sclass", pa.int8()),
    ]
)  # a valid task_events row, as spilled to a bucket file


def _fold(st: _TaskState, cols: dict[str, np.ndarray], row0: int) -> None:
    """Fold valid rows (in file order; columns of :data:`_ROW_SCHEMA`) into ``st``."""
    job = cols["job"].astype(np.int64, copy=False)
    task = cols["task"].astype(np.int64, copy=False)
    tid = st.ids(job, task)
    _update_tasks(
        st, tid, cols["t"], cols["ev"].astype(np.int64, copy=False), cols["user"], cols["cpu"],
        cols["mem"], cols["machine"], row0, cols["prio"].astype(np.int8, copy=False),
        cols["sclass"].astype(np.int8, copy=False),
    )  # fmt: skip


class _Pass1:
    """What the parse of task_events leaves: counts, the user dictionary, t_max."""

    def __init__(self) -> None:
        self.users: dict[str, int] = {}
        self.bad = BadRows()
        self.skipped_rows = {R_BAD_EVENT: 0, R_UNPARSEABLE: 0}
        self.empty = {"cpu": 0, "mem": 0}
        self.rows_valid = 0
        self.t_max = 0
        self.first_bad = FirstBadRow(len(TASK_EVENT_COLUMNS))


def _read_task_events(te_files: list[tuple[int, Path]], progress: bool, sink: Any) -> _Pass1:
    """Parse and validate every task_events row; hand the valid ones to ``sink(cols, row0)``."""
    p1 = _Pass1()
    include = [
        "time", "job_id", "task_index", "machine_id", "event_type", "user", "cpu", "mem",
        "priority", "scheduling_class",
    ]  # fmt: skip
    for _, file in tqdm(te_files, desc="task_events", disable=not progress):
        rel = f"task_events/{file.name}"
        offset = 0
        for batch in iter_batches(file, TASK_EVENT_COLUMNS, include, p1.bad, rel):
            t, t_ok = to_int(batch.column("time"))
            job, j_ok = to_int(batch.column("job_id"))
            task, k_ok = to_int(batch.column("task_index"))
            ev, e_ok = to_int(batch.column("event_type"))
            cpu, cpu_bad = to_float(batch.column("cpu"))
            mem, mem_bad = to_float(batch.column("mem"))
            machine, m_ok = to_int(batch.column("machine_id"))
            machine = np.where(m_ok, machine, NO_MACHINE)
            # a priority or class that is empty or out of range is "none" (-1), not a bad row
            prio, p_ok = to_int(batch.column("priority"))
            prio = np.where(p_ok & (prio >= 0) & (prio <= PRIORITY_MAX), prio, -1)
            sclass, c_ok = to_int(batch.column("scheduling_class"))
            sclass = np.where(c_ok & (sclass >= 0) & (sclass <= CLASS_MAX), sclass, -1)
            ok = t_ok & j_ok & k_ok & e_ok & ~cpu_bad & ~mem_bad
            ok &= (t >= 0) & (t != AFTER_WINDOW_US) & (job >= 0)
            ok &= (task >= 0) & (task < TASK_INDEX_LIMIT)
            p1.skipped_rows[R_UNPARSEABLE] += int((~ok).sum())
            bad_ev = ok & ((ev < SUBMIT) | (ev > UPDATE_RUNNING))
            p1.skipped_rows[R_BAD_EVENT] += int(bad_ev.sum())
            row_bad = ~ok | bad_ev
            why = R_BAD_EVENT if row_bad.any() and bad_ev[row_bad.argmax()] else R_UNPARSEABLE
            p1.first_bad.parsed(file, rel, offset, row_bad, why)
            offset += batch.num_rows
            ok &= ~bad_ev
            p1.empty["cpu"] += int((ok & np.isnan(cpu)).sum())
            p1.empty["mem"] += int((ok & np.isnan(mem)).sum())

            ucol = batch.column("user")
            enc = pc.dictionary_encode(ucol)
            if isinstance(enc, pa.ChunkedArray):
                enc = enc.combine_chunks()
            users = p1.users
            codes = np.array([users.setdefault(u, len(users)) for u in enc.dictionary.to_pylist()])
            idx = np.asarray(enc.indices.fill_null(-1), dtype=np.int64)
            ucodes = np.where(idx >= 0, codes[np.maximum(idx, 0)] if len(codes) else -1, -1)

            rows = np.nonzero(ok)[0]
            if len(rows) == 0:
                continue
            cols = {
                "job": job[rows],
                "task": task[rows].astype(np.int32),
                "t": t[rows],
                "ev": ev[rows].astype(np.int8),
                "user": ucodes[rows].astype(np.int32),
                "cpu": cpu[rows],
                "mem": mem[rows],
                "machine": machine[rows],
                "prio": prio[rows].astype(np.int8),
                "sclass": sclass[rows].astype(np.int8),
            }
            sink(cols, p1.rows_valid)
            p1.rows_valid += len(rows)
            p1.t_max = max(p1.t_max, int(cols["t"].max()))
        p1.first_bad.file_done(file, rel, p1.bad)
    p1.skipped_rows[R_MALFORMED] = p1.bad.count
    return p1


class _Totals:
    """Report figures summed over buckets (every task, hence every job, is in one bucket)."""

    def __init__(self) -> None:
        self.tasks = 0
        self.skips: dict[str, int] = {}
        self.rows_used = 0
        self.jobs: list[np.ndarray] = []
        self.users: list[np.ndarray] = []
        self.states = np.zeros(len(END_STATES), np.int64)
        self.censored = 0
        self.zero_demand = 0
        self.keys: list[pd.DataFrame] = []  # (job_id, task_index) of every task, for constraints
        self.placements: dict[str, Any] = {}
        # tasks per priority (index PRIORITY_MAX + 1: none) and per scheduling class (likewise)
        self.priorities = np.zeros(PRIORITY_MAX + 2, np.int64)
        self.classes = np.zeros(CLASS_MAX + 2, np.int64)
        self.priority_changed = 0
        self.class_changed = 0

    def add_tasks(
        self, cols: dict[str, np.ndarray], skips: dict[str, int], rows_used: int, keys: bool
    ) -> None:
        self.tasks += len(cols["job_id"])
        for r, n in skips.items():
            self.skips[r] = self.skips.get(r, 0) + n
        self.rows_used += rows_used
        self.jobs.append(np.unique(cols["job_id"]))
        self.users.append(np.unique(cols["user"]))
        self.states += np.bincount(cols["end_state"], minlength=len(END_STATES))
        self.censored += int(cols["censored"].sum())
        self.zero_demand += int(((cols["cpu"] == 0) & (cols["mem"] == 0)).sum())
        for counts, values in (
            (self.priorities, cols["priority"]),
            (self.classes, cols["scheduling_class"]),
        ):
            v = np.asarray(values, dtype=np.int64)
            counts += np.bincount(np.where(v >= 0, v, len(counts) - 1), minlength=len(counts))
        self.priority_changed += int(cols["priority_changed"].sum())
        self.class_changed += int(cols["class_changed"].sum())
        if keys:
            self.keys.append(
                pd.DataFrame({"job_id": cols["job_id"], "task_index": cols["task_index"]})
            )

    def add_placements(self, rep: dict[str, Any]) -> None:
        tot = self.placements
        if not tot:
            tot.update(
                {
                    **rep,
                    "runs_with_empty_request": dict(rep["runs_with_empty_request"]),
                    "skipped": dict(rep["skipped"]),
                }
            )
            return
        for key in ("runs", "censored_runs", "tasks_with_runs", "tasks_with_several_runs"):
            tot[key] += rep[key]
        for r, n in rep["runs_with_empty_request"].items():
            tot["runs_with_empty_request"][r] += n
        for r, n in rep["skipped"].items():
            tot["skipped"][r] += n


_TASK_KEYS = ["submit_s", "job_id", "task_index"]
_PLACEMENT_KEYS = ["start_s", "job_id", "task_index", "run"]
#: Rows buffered before they are written to the bucket files, summed over the buckets.
_SPILL_BUFFER_ROWS = 1_000_000
#: Rows folded at once in pass 2 (fewer, larger numpy calls).
_FOLD_ROWS = 500_000
#: Rows held by a merge, summed over the runs it merges at once (at most FAN_IN).
_MERGE_ROWS = 500_000


def _convert(
    src: Path,
    out: Path,
    te_files: list[tuple[int, Path]],
    progress: bool,
    bad_row_threshold: float,
    k: int,
    spill: SpillDir | None,
) -> dict[str, Any]:
    """The conversion proper (see :func:`convert_google_2011`); ``spill`` is None when k == 1."""
    te_dir = src / "task_events"
    st: _TaskState | None = None
    part: Partitioner | None = None
    if spill is None:
        st = _TaskState()
        state = st

        def sink(cols: dict[str, np.ndarray], row0: int) -> None:
            _fold(state, cols, row0)

    else:
        # rows buffered per bucket: about _SPILL_BUFFER_ROWS in all, whatever k
        part = Partitioner(spill.path, k, _ROW_SCHEMA, max(4096, _SPILL_BUFFER_ROWS // k))
        partitioner = part
        dtype = np.int16 if k < (1 << 15) else np.int64  # int16: a radix sort

        def sink(cols: dict[str, np.ndarray], row0: int) -> None:
            partitioner.add(bucket_of(cols["job"], k).astype(dtype), cols)

    p1 = _read_task_events(te_files, progress, sink)
    if part is not None:
        part.close()
        pa.default_memory_pool().release_unused()  # the CSV reader's buffers, before the folds
    skipped_rows = p1.skipped_rows
    rows_read = p1.rows_valid + sum(skipped_rows.values())
    if rows_read == 0:
        raise TraceError(f"{te_dir}: no data rows in task_events parts {[i for i, _ in te_files]}")
    n_bad = p1.bad.count + skipped_rows[R_UNPARSEABLE] + skipped_rows[R_BAD_EVENT]
    check_bad_rows("task_events", rows_read, n_bad, bad_row_threshold, p1.first_bad.describe)
    t_end = max(p1.t_max, WINDOW_START_US)

    # machine_events first: a run on a machine without a capacity is not a placement
    servers = me = None
    if (src / "machine_events").is_dir():
        servers, me = _machine_events(src / "machine_events", bad_row_threshold)
    machine_ids = None if servers is None else servers["machine_id"]
    want_keys = (src / "task_constraints").is_dir()

    # pass 2: fold each bucket, its tasks and runs sorted (kept for k == 1, else spilled)
    tot = _Totals()
    task_runs: list[Path] = []
    place_runs: list[Path] = []
    one: tuple[dict[str, np.ndarray], _TaskState, np.ndarray] | None = None
    chunk = max(1024, _MERGE_ROWS // min(k, FAN_IN))  # rows per batch of a sorted run
    for b in tqdm(range(k), desc="buckets", disable=not progress or k == 1, leave=False):
        if part is not None:
            st = _TaskState()
            row0 = 0
            for batch in _coalesce(part.read(b), _FOLD_ROWS):
                cols = {name: batch.column(name).to_numpy() for name in _ROW_SCHEMA.names}
                _fold(st, cols, row0)
                row0 += batch.num_rows
            part.paths[b].unlink(missing_ok=True)
        assert st is not None
        st.trim()
        tcols, skips, rows_used, kept = _finish_tasks(st, t_end)
        tot.add_tasks(tcols, skips, rows_used, want_keys)
        if spill is None:  # its runs are built once the tasks are written (never both at once)
            one = (tcols, st, kept)
            continue
        placements, prep = _finish_placements(st, kept, t_end, machine_ids)
        tot.add_placements(prep)
        st = None
        task_runs.append(spill.path / f"tasks-{b:05d}.arrow")
        write_run(task_runs[-1], pa.table(tcols), chunk)
        place_runs.append(spill.path / f"placements-{b:05d}.arrow")
        write_run(place_runs[-1], placements, chunk)
        del tcols, placements
    te_skipped = {**tot.skips, **skipped_rows}
    log.info("google-2011: %d task_events rows read, %d tasks", rows_read, tot.tasks)

    report: dict[str, Any] = {
        "format": FORMAT,
        "schema": SCHEMA_VERSION,
        "parts": [i for i, _ in te_files],
        "rows_read": {"task_events": rows_read},
        "rows_used": {"task_events": tot.rows_used},
        "skipped": {"task_events": te_skipped},
    }
    jobs_out = np.sort(np.concatenate(tot.jobs)) if tot.jobs else np.empty(0, np.int64)
    tot.jobs = []
    je_files = list_parts(src / "job_events", [i for i, _ in te_files], "job_events")
    missing_tables = []
    if je_files:
        je = _job_events(je_files, jobs_out, progress, bad_row_threshold)
        report["rows_read"]["job_events"] = je["rows_read"]
        report["rows_used"]["job_events"] = je["rows_used"]
        report["skipped"]["job_events"] = je["skipped"]
    else:
        je = None
        missing_tables.append("job_events")
    if me is not None:
        report["rows_read"]["machine_events"] = me["rows_read"]
        report["rows_used"]["machine_events"] = me["rows_used"]
        report["skipped"]["machine_events"] = me["skipped"]
    else:
        missing_tables.append("machine_events")

    attributes = constraints = None
    if want_keys or (src / "machine_attributes").is_dir():
        keys = pd.concat(tot.keys, ignore_index=True) if tot.keys else None
        tot.keys = []
        constraints, attributes = _constraints(src, [i for i, _ in te_files], keys, report)

    users_out = np.unique(np.concatenate(tot.users)) if tot.users else np.empty(0, np.int32)
    report.update(
        {
            "tasks": tot.tasks,
            "window_s": [WINDOW_START_US / US_PER_S, t_end / US_PER_S],
            "censored_tasks": tot.censored,
            "users": len(users_out),
            "jobs": len(jobs_out),
            "servers": None if servers is None else len(servers),
            "end_states": {
                s: int(c) for s, c in sorted(zip(END_STATES, tot.states, strict=True)) if c
            },
            "zero_demand_tasks": tot.zero_demand,
            "priorities": _priority_report(tot),
            "empty_request_rows": p1.empty,
            "missing_tables": missing_tables,
            "job_events_check": None
            if je is None
            else {
                "jobs_in_job_events": je["jobs"],
                "task_jobs_missing_from_job_events": je["task_jobs_missing_from_job_events"],
            },
        }
    )
    for table, n in report["rows_read"].items():
        total = report["rows_used"][table] + sum(report["skipped"][table].values())
        if total != n:  # pragma: no cover - internal consistency guard
            raise TraceError(f"{table}: accounting error, used+skipped={total} != read={n}")

    names = np.array(sorted(p1.users, key=p1.users.__getitem__), dtype=object)
    # pieces of at most one row group, so that each becomes output rows on its own
    task_pieces: Iterable[pa.Table] = (
        _pieces(merge_runs(task_runs, _TASK_KEYS, chunk_rows=chunk))
        if one is None
        else _slices(pa.table(one[0]))
    )
    _write_stream(
        RowGroupWriter(out / "tasks.parquet", "tasks"),
        (_task_frame(p, names, constraints) for p in task_pieces),
    )
    if one is None:
        place_pieces: Iterable[pa.Table] = _pieces(
            merge_runs(place_runs, _PLACEMENT_KEYS, chunk_rows=chunk)
        )
    else:
        placements, prep = _finish_placements(one[1], one[2], t_end, machine_ids)
        tot.add_placements(prep)
        one = None
        place_pieces = _slices(placements)
        del placements
    _write_stream(RowGroupWriter(out / "placements.parquet", "placements"), place_pieces)
    report["placements"] = tot.placements
    if servers is not None:
        write_servers(
            pd.DataFrame(
                {
                    "server": servers["machine_id"].astype(str),
                    "cpu": servers["cpu"],
                    "mem": servers["mem"],
                    "platform": servers["platform"],
                }
            ),
            out / "servers.parquet",
        )
    if attributes is not None:
        from fairsim.traces.io import write_machine_attributes

        write_machine_attributes(attributes, out / "machine_attributes.parquet")
    write_json_atomic(report, out / "conversion.json")
    return report


def _priority_report(tot: _Totals) -> dict[str, Any]:
    """The ``priorities`` entry of ``conversion.json``: the rule, tasks per priority, per band
    (:data:`fairsim.traces.schema.GOOGLE_PRIORITY_BANDS`) and per scheduling class, and the
    tasks whose rows carry more than one value (the first SUBMIT's is kept)."""
    pr, cl = tot.priorities, tot.classes
    return {
        "rule": "the first SUBMIT row's priority and scheduling class (else the first row's)",
        "tasks_by_priority": {str(p): int(n) for p, n in enumerate(pr[:-1]) if n},
        "tasks_by_band": {
            band: int(pr[lo : hi + 1].sum()) for band, (lo, hi) in GOOGLE_PRIORITY_BANDS.items()
        },
        "tasks_by_scheduling_class": {str(c): int(n) for c, n in enumerate(cl[:-1]) if n},
        "tasks_without_priority": int(pr[-1]),
        "tasks_without_scheduling_class": int(cl[-1]),
        "tasks_with_priority_changes": tot.priority_changed,
        "tasks_with_scheduling_class_changes": tot.class_changed,
    }


def _coalesce(batches: Iterable[pa.RecordBatch], rows: int) -> Iterator[pa.Table]:
    """Consecutive record batches joined into tables of at least ``rows`` rows (the last fewer)."""
    held: list[pa.RecordBatch] = []
    n = 0
    for batch in batches:
        held.append(batch)
        n += batch.num_rows
        if n >= rows:
            yield pa.Table.from_batches(held).combine_chunks()
            held, n = [], 0
    if held:
        yield pa.Table.from_batches(held).combine_chunks()


def _slices(table: pa.Table, n: int = ROW_GROUP_SIZE) -> Iterator[pa.Table]:
    for start in range(0, max(table.num_rows, 1), n):
        yield table.slice(start, n)


def _pieces(tables: Iterable[pa.Table], n: int = ROW_GROUP_SIZE) -> Iterator[pa.Table]:
    for table in tables:
        for start in range(0, table.num_rows, n):
            yield table.slice(start, n)


def _write_stream(writer: RowGroupWriter, pieces: Iterable[pd.DataFrame | pa.Table]) -> None:
    """Write every piece, then move the file into place (nothing is left behind on error)."""
    try:
        for piece in pieces:
            writer.write(piece)
        writer.close()
    except BaseException:
        writer.abort()
        raise


def _task_frame(
    piece: pa.Table, names: np.ndarray, constraints: pd.DataFrame | None
) -> pd.DataFrame:
    """Output rows of the tasks table from sorted task columns (user, end state as codes)."""
    n = piece.num_rows
    job = piece.column("job_id").to_numpy()
    task_index = piece.column("task_index").to_numpy()
    constraint = np.full(n, None, dtype=object)
    if constraints is not None and n:
        keys = pd.DataFrame({"job_id": job, "task_index": task_index})
        merged = keys.merge(constraints, on=["job_id", "task_index"], how="left")
        constraint = (
            merged["constraint"]
            .astype(object)
            .where(merged["constraint"].notna(), None)
            .to_numpy(dtype=object)
        )
    return pd.DataFrame(
        {
            "job_id": job,
            "task_index": task_index,
            "user": names[piece.column("user").to_numpy()] if n else np.empty(0, object),
            "submit_s": piece.column("submit_s").to_numpy(),
            "cpu": piece.column("cpu").to_numpy(),
            "mem": piece.column("mem").to_numpy(),
            "run_s": piece.column("run_s").to_numpy(),
            "end_state": np.array(END_STATES, dtype=object)[piece.column("end_state").to_numpy()],
            "censored": piece.column("censored").to_numpy(),
            "attempts": piece.column("attempts").to_numpy(),
            "instances": np.ones(n, np.int32),
            "constraint": constraint,
            "parents": np.full(n, None, dtype=object),
            "priority": _nullable(piece.column("priority").to_numpy()),
            "scheduling_class": _nullable(piece.column("scheduling_class").to_numpy()),
            "qos": np.full(n, None, dtype=object),
        }
    )


def _nullable(codes: np.ndarray) -> pd.arrays.IntegerArray:
    """Small integers with -1 for "none" as a nullable int32 column."""
    v = np.asarray(codes)
    return pd.arrays.IntegerArray(np.where(v >= 0, v, 0).astype(np.int32), v < 0)


def _constraints(
    src: Path, parts: list[int], keys: pd.DataFrame | None, report: dict[str, Any]
) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The task constraints of the tasks ``keys`` and machine_attributes (either may be None).

    Adds their counts to ``report``. The constraints (one row per constrained task: job_id,
    task_index, constraint) are joined to the tasks as they are written.
    """
    from fairsim.traces.google_constraints import read_machine_attributes, read_task_constraints

    cons = None
    if (src / "task_constraints").is_dir():
        cons, rep_tc = read_task_constraints(src / "task_constraints", parts=parts, tasks=keys)
        for k in ("rows_read", "rows_used", "skipped"):
            report[k]["task_constraints"] = rep_tc[k]
        report["constrained_tasks"] = rep_tc["constrained_tasks"]
    attributes = None
    if (src / "machine_attributes").is_dir():
        attributes, rep_ma = read_machine_attributes(src / "machine_attributes")
        for k in ("rows_read", "rows_used", "skipped"):
            report[k]["machine_attributes"] = rep_ma[k]
    return cons, attributes


def _finish_tasks(
    st: _TaskState, t_max: int
) -> tuple[dict[str, np.ndarray], dict[str, int], int, np.ndarray]:
    """Turn per-task state into the tasks' columns, sorted by (submit_s, job_id, task_index).

    ``user`` holds user codes (of the converter's user dictionary) and ``end_state`` indices into
    :data:`fairsim.traces.schema.END_STATES`; :func:`_task_frame` turns them into output rows.

    Returns (columns, skip counts, rows used, mask of the task ids kept in the table).
    """
    a = st.a
    has_submit = a["first_submit"] >= 0
    tier = {}  # per resource: 0 from SUBMIT, 1 from UPDATE, 2 from another row, 3 none
    val = {}
    for name in ("cpu", "mem"):
        sub, upd = a[f"{name}_sub"], a[f"{name}_upd"]
        # other rows (SCHEDULE, terminal) supply a request no SUBMIT or UPDATE row carries
        oth = a[f"{name}_oth"]
        tier[name] = np.select(
            [~np.isnan(sub), ~np.isnan(upd), ~np.isnan(oth)], [0, 1, 2], default=3
        )
        val[name] = np.where(~np.isnan(sub), sub, np.where(~np.isnan(upd), upd, oth))
    cpu, mem = val["cpu"], val["mem"]
    no_submit = ~has_submit & ~a["has_t0"]
    missing_user = ~no_submit & (a["user"] < 0)
    missing_req = ~no_submit & ~missing_user & (np.isnan(cpu) | np.isnan(mem))
    negative_req = ~no_submit & ~missing_user & ~missing_req & a["neg_req"]
    backwards = ~(no_submit | missing_user | missing_req | negative_req) & a["end_before_sched"]
    keep = ~(no_submit | missing_user | missing_req | negative_req | backwards)

    skips = {
        R_UPDATE: 0,
        R_TERM_PENDING: 0,
        R_MISSING_REQ: int(a["n_rows"][missing_req].sum()),
        R_NEG_REQ: int(a["n_rows"][negative_req].sum()),
        R_END_BEFORE_SCHED: int(a["n_rows"][backwards].sum()),
        R_NO_SUBMIT: int(a["n_rows"][no_submit].sum()),
        R_MISSING_USER: int(a["n_rows"][missing_user].sum()),
    }
    # update rows used: those that supplied the kept cpu or mem (maybe the same row)
    cpu_row = np.where(tier["cpu"] == 1, a["cpu_upd_row"], -1)
    mem_row = np.where(tier["mem"] == 1, a["mem_upd_row"], -1)
    upd_used = (cpu_row >= 0).astype(np.int64) + ((mem_row >= 0) & (mem_row != cpu_row))
    # terminal rows without a running attempt that supplied a request are used too
    cpu_row = np.where((tier["cpu"] == 2) & a["cpu_oth_pending"], a["cpu_oth_row"], -1)
    mem_row = np.where((tier["mem"] == 2) & a["mem_oth_pending"], a["mem_oth_row"], -1)
    pend_used = (cpu_row >= 0).astype(np.int64) + ((mem_row >= 0) & (mem_row != cpu_row))
    k = keep
    skips[R_UPDATE] = int((a["n_update"][k] - upd_used[k]).sum())
    skips[R_TERM_PENDING] = int((a["n_term_pending"][k] - pend_used[k]).sum())
    rows_used = int(a["n_rows"][k].sum()) - skips[R_UPDATE] - skips[R_TERM_PENDING]

    # end state and run time
    t_end = max(t_max, WINDOW_START_US)
    state = np.full(st.n, END_STATES.index("unscheduled"), np.int8)
    run = np.full(st.n, np.nan)
    ended = a["last_term"] >= 0
    for ev_type, name in _TERMINAL_STATE.items():
        sel = ended & (a["last_term"] == ev_type)
        state[sel] = END_STATES.index(name)
        run[sel] = a["last_run"][sel] / US_PER_S
    fin = a["finish_run"] >= 0
    state[fin] = END_STATES.index("finish")
    run[fin] = a["finish_run"][fin] / US_PER_S
    # right-censored: the last SCHEDULE has no terminal event (even if an earlier attempt
    # finished): the task runs when the data ends, its run time is only a lower bound
    censored = a["open"]
    state[censored] = END_STATES.index("censored")
    run[censored] = np.maximum(t_end - a["last_sched"][censored], 0) / US_PER_S

    # a time-0 SUBMIT (the task existed before the window) is taken at the window start, like
    # a time-0 SCHEDULE, so that submit_s + run_s is the task's end in the trace
    submit_s = np.maximum(np.where(has_submit, a["first_submit"], 0), WINDOW_START_US) / US_PER_S
    idx = np.nonzero(keep)[0]
    order = np.lexsort((a["task_index"][idx], a["job_id"][idx], submit_s[idx]))
    idx = idx[order]
    cols = {
        "job_id": a["job_id"][idx],
        "task_index": a["task_index"][idx],
        "user": a["user"][idx],
        "submit_s": submit_s[idx],
        "cpu": cpu[idx],
        "mem": mem[idx],
        "run_s": run[idx],
        "end_state": state[idx],
        "censored": censored[idx],
        "attempts": a["attempts"][idx],
        **{
            out: np.where(a[f"{name}_sub"] >= 0, a[f"{name}_sub"], a[f"{name}_first"])[idx]
            for out, name in (("priority", "prio"), ("scheduling_class", "sclass"))
        },
        "priority_changed": a["prio_changed"][idx],
        "class_changed": a["sclass_changed"][idx],
    }
    return cols, skips, rows_used, keep


def _finish_placements(
    st: _TaskState, kept: np.ndarray, t_end: int, machines: pd.Series | None
) -> tuple[pa.Table, dict[str, Any]]:
    """The recorded runs of the kept tasks (``placements.parquet``) and their report.

    Parameters
    ----------
    st : _TaskState
        The folded state; ``st.runs`` holds the closed runs, ``st.a["open"]`` the censored ones.
    kept : ndarray of bool, shape (n_tasks,)
        Task ids written to ``tasks.parquet``.
    t_end : int
        Last event time of all converted parts (µs): the end of a right-censored run.
    machines : pandas.Series of int or None
        Machine IDs with a capacity in machine_events (``servers.parquet``); None when the folder
        has no machine_events (no run is then checked against machines).

    Returns
    -------
    (pyarrow.Table, dict)
        The placements in the order of :func:`fairsim.traces.schema.placements_schema` (each
        run's request by :func:`schedule_request`), and ``{"schema", "runs", "censored_runs",
        "tasks_with_runs", "tasks_with_several_runs", "machines_checked",
        "runs_with_empty_request", "skipped"}`` (``runs_with_empty_request``: per resource, the
        runs written whose SCHEDULE row has no request, taken as 0).
    """
    a = st.a
    open_ids = np.nonzero(a["open"])[0]
    chunks = [
        *st.runs,
        (open_ids, a["last_sched"][open_ids], np.full(len(open_ids), t_end, np.int64),
         np.full(len(open_ids), -1, np.int8), a["last_machine"][open_ids],
         a["last_cpu"][open_ids], a["last_mem"][open_ids]),
    ]  # fmt: skip
    tid, start, end, event, machine, cpu, mem = (
        np.concatenate(c) for c in zip(*chunks, strict=True)
    )
    st.runs, chunks = [], []
    end = np.maximum(end, start)
    n_all = len(tid)
    if int(a["attempts"].sum()) != n_all + st.unended:  # pragma: no cover - consistency guard
        raise TraceError("placements: accounting error, runs + unended SCHEDULEs != SCHEDULEs")
    dropped = ~kept[tid]
    no_machine = ~dropped & (machine == NO_MACHINE)
    unknown = np.zeros(n_all, bool)
    if machines is not None:
        known_ids = np.unique(np.asarray(machines, dtype=np.int64))
        pos = np.minimum(np.searchsorted(known_ids, machine), max(len(known_ids) - 1, 0))
        known = known_ids[pos] == machine if len(known_ids) else np.zeros(n_all, bool)
        unknown = ~dropped & ~no_machine & ~known
    use = ~(dropped | no_machine | unknown)
    skipped = {
        P_DROPPED_TASK: int(dropped.sum()),
        P_NO_MACHINE: int(no_machine.sum()),
        P_UNKNOWN_MACHINE: int(unknown.sum()),
        P_UNENDED: st.unended,
    }
    idx = np.nonzero(use)[0]  # chunk order: file order within each task, censored runs last
    idx = idx[np.argsort(tid[idx], kind="stable")]
    g = tid[idx]
    first = np.r_[True, g[1:] != g[:-1]] if len(g) else np.empty(0, bool)
    pos = np.arange(len(g))
    run = (pos - np.maximum.accumulate(np.where(first, pos, 0))).astype(np.int32)
    n_runs = np.bincount(g) if len(g) else np.empty(0, np.int64)
    key = a["job_id"][g] * TASK_INDEX_LIMIT + a["task_index"][g]
    order = np.lexsort((run, key, start[idx]))
    idx, g, run = idx[order], g[order], run[order]
    ev = event[idx]
    cpu, mem = cpu[idx], mem[idx]
    empty = {"cpu": int(np.isnan(cpu).sum()), "mem": int(np.isnan(mem).sum())}
    states = pa.array([*(_TERMINAL_STATE[k] for k in range(EVICT, LOST + 1)), "censored"])
    table = pa.table(
        {
            "job_id": a["job_id"][g],
            "task_index": a["task_index"][g],
            "run": run,
            "machine": pc.cast(pa.array(machine[idx]), pa.string()),
            "start_s": start[idx] / US_PER_S,
            "end_s": end[idx] / US_PER_S,
            "end_event": states.take(pa.array(np.where(ev < 0, len(states) - 1, ev - EVICT))),
            "censored": ev < 0,
            "cpu": schedule_request(cpu),
            "mem": schedule_request(mem),
        }
    )
    report = {
        "schema": PLACEMENTS_SCHEMA_VERSION,
        "runs": table.num_rows,
        "censored_runs": int((ev < 0).sum()),
        "tasks_with_runs": int((n_runs > 0).sum()),
        "tasks_with_several_runs": int((n_runs > 1).sum()),
        "machines_checked": machines is not None,
        "runs_with_empty_request": empty,
        "skipped": skipped,
    }
    return table, report
