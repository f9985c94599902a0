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

import math
import tempfile
from collections.abc import Callable
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
    DenseKeys,
    _machine_events_file,
    machine_events_table,
    schedule_request,
)
from fairsim.traces.google_parts import int_columns, iter_batches, list_parts, to_float
from fairsim.traces.io import BadRows

#: Default spacing of the over-commitment samples, seconds.
SAMPLE_S = 3600.0

#: Most over-commitment samples a check may take (the end one included): each is a line of the
#: readable report, a row of the JSON and a sum over every machine (the default 3600 s takes 697
#: over the whole 29-day trace, 30 s about 83,500; 1 s would take 2.5 million).
MAX_CHECK_SAMPLES = 100_000
#: By how much a machine's summed requests must exceed its capacity to count as over-committed:
#: the engine's capacity tolerance (:func:`fairsim.simulator.cluster.capacity_tolerance`,
#: :data:`~fairsim.simulator.cluster.CAPACITY_TOLERANCE` times the largest machine's capacity),
#: which is :data:`~fairsim.simulator.cluster.CAPACITY_TOLERANCE` itself in the traces'
#: normalised units, where the largest machine has 1 of each resource.
TOLERANCE = 1e-9  # traces stand beside the simulator and do not import it


class _Ids(DenseKeys):
    """Dense ids of task keys (``job_id * 2^24 + task_index``), with per-task state arrays."""

    def __init__(self) -> None:
        super().__init__()
        self.running = np.zeros(0, bool)
        self.machine = np.zeros(0, np.int64)  # index into the capacity arrays, -1: none
        self.cpu = np.zeros(0)
        self.mem = np.zeros(0)

    def ids(self, key: np.ndarray) -> np.ndarray:
        ukeys, inv = np.unique(key, return_inverse=True)
        uids, _ = self.register(ukeys)
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
    src: Path,
    *,
    parts: list[int] | None = None,
    sample_s: float = SAMPLE_S,
    what: str = "sample_s",
) -> dict[str, Any]:
    """Check a Google 2011 folder's own consistency (see the module docstring).

    Parameters
    ----------
    src : pathlib.Path
        Folder with ``task_events/part-NNNNN-of-00500.csv.gz`` and ``machine_events/``.
    parts : list of int, optional
        task_events parts to read (default: every part present).
    sample_s : float
        Spacing of the over-commitment samples, seconds (> 0, at least the trace's 1 µs time
        step, and giving at most :data:`MAX_CHECK_SAMPLES` samples).
    what : str
        How messages about ``sample_s`` name it (``--sample-s`` on the command line).

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
        unreadable, or ``sample_s`` is not positive, is below 1 µs (its samples would never
        advance), or would take more than :data:`MAX_CHECK_SAMPLES` samples: refused as soon
        as the events read reach that many, naming ``what``, the number of samples and (at the
        end of the data, when the span is known) a spacing that stays within.
    """
    src = Path(src)
    if not (sample_s > 0):
        raise TraceError(f"sample_s={sample_s!r}: must be > 0")
    if round(sample_s * US_PER_S) < 1:
        raise TraceError(
            f"{what}: {sample_s:g} s is below the trace's time step of 1 µs (its samples would "
            "never advance)"
        )
    if not (src / "task_events").is_dir():
        raise TraceError(f"{src}: no task_events folder")
    files = list_parts(src / "task_events", parts, "task_events")
    if not files:
        raise TraceError(f"{src / 'task_events'}: no part-NNNNN-of-00500.csv.gz files")
    check = _GoogleCheck(src, sample_s, what)
    for _, file in files:
        check.read_part(file)
    return check.report(src, [i for i, _ in files], sample_s)


def _machines(src: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The machines of ``src/machine_events``: the ids it mentions (sorted), and the machines
    with a capacity (``machine_events_table``: each machine's last capacity) as their sorted ids
    and an ``(n, 2)`` array of (cpu, mem) capacities."""
    me_file = _machine_events_file(src / "machine_events")
    mentioned = pd.read_csv(
        me_file, header=None, names=list(MACHINE_EVENT_COLUMNS), usecols=["machine_id"]
    )["machine_id"]
    mentioned_ids = np.unique(pd.to_numeric(mentioned, errors="coerce").dropna().astype(np.int64))
    caps = machine_events_table(me_file)
    return (
        mentioned_ids,
        caps["machine_id"].to_numpy(np.int64),
        caps[["cpu", "mem"]].to_numpy(np.float64),
    )


class _GoogleCheck:
    """The state of :func:`check_google_2011` while it reads the task_events rows in file order:
    per-task state (:class:`_Ids`), per-machine usage, the counters of each check and the
    over-commitment samples taken so far."""

    def __init__(self, src: Path, sample_s: float, what: str = "sample_s") -> None:
        self.sample_s, self.what = sample_s, what
        self.mentioned_ids, self.cap_ids, self.cap = _machines(src)
        self.largest = self.cap.max(axis=0)
        self.st = _Ids()
        self.used = np.zeros_like(self.cap)
        self.holding = np.zeros(len(self.cap), np.int64)
        self.running = 0
        self.samples: list[dict[str, Any]] = []
        self.step = round(sample_s * US_PER_S)
        self.next_sample = WINDOW_START_US
        self.n_rows = self.n_bad = 0
        self.within = self.across = 0
        self.last_max = -1
        self.unknown_sched = self.no_machine = self.twice = 0
        self.unknown_tasks: list[np.ndarray] = []
        self.twice_tasks: list[np.ndarray] = []
        self.big: dict[str, list[np.ndarray]] = {"cpu": [], "mem": []}
        self.sched_machines: list[np.ndarray] = []

    def read_part(self, file: Path) -> None:
        """Read one task_events part, batch by batch."""
        include = ["time", "job_id", "task_index", "machine_id", "event_type", "cpu", "mem"]
        part_max = -1
        bad = BadRows()
        for batch in iter_batches(
            file, TASK_EVENT_COLUMNS, include, bad, f"task_events/{file.name}"
        ):
            part_max = self._read_batch(batch, part_max)
        if part_max >= 0:
            self.last_max = max(self.last_max, part_max)
        if bad.count:
            self.n_rows += bad.count
            self.n_bad += bad.count

    def _read_batch(self, batch: Any, part_max: int) -> int:
        """Check one batch's time order and requests, then its lifecycle rows; return the
        part's latest time so far (``part_max``, -1 before its first row)."""
        (t, t_ok), (job, j_ok), (task, k_ok), (ev, e_ok), (mach, m_ok) = int_columns(
            batch, ("time", "job_id", "task_index", "event_type", "machine_id")
        )
        cpu, _ = to_float(batch.column("cpu"))
        mem, _ = to_float(batch.column("mem"))
        ok = t_ok & j_ok & k_ok & e_ok & (task >= 0) & (task < TASK_INDEX_LIMIT)
        self.n_rows += len(ok)
        self.n_bad += int((~ok).sum())
        t, job, task, ev, mach, m_ok = t[ok], job[ok], task[ok], ev[ok], mach[ok], m_ok[ok]
        cpu, mem = cpu[ok], mem[ok]
        if len(t) == 0:
            return part_max
        # time order: below the running maximum of the part's earlier rows
        prior = np.maximum.accumulate(np.r_[part_max, t[:-1]])
        late = t < prior
        if part_max < 0 and self.last_max >= 0 and t[0] < self.last_max:
            self.across += 1
        self.within += int(late[1:].sum()) + int(late[0] and part_max >= 0)
        part_max = max(part_max, int(t.max()))
        tid = self.st.ids(job * TASK_INDEX_LIMIT + task)
        for name, vals, top in (("cpu", cpu, self.largest[0]), ("mem", mem, self.largest[1])):
            sel = vals > top + TOLERANCE
            if sel.any():
                self.big[name].append(np.unique(tid[sel]))
        life = np.nonzero((ev >= SCHEDULE) & (ev <= LOST))[0]
        if len(life):
            self._read_lifecycle(life, t, ev, mach, m_ok, tid, cpu, mem)
        return part_max

    def _read_lifecycle(
        self,
        life: np.ndarray,
        t: np.ndarray,
        ev: np.ndarray,
        mach: np.ndarray,
        m_ok: np.ndarray,
        tid: np.ndarray,
        cpu: np.ndarray,
        mem: np.ndarray,
    ) -> None:
        """The SCHEDULE and terminal rows (``life``, indices into the batch's valid rows): the
        unknown machines, the runs paired per task (scheduled twice without an end) and the
        usage they add to and take from the machines."""
        st, cap_ids = self.st, self.cap_ids
        sched = ev[life] == SCHEDULE
        has_m = m_ok[life]
        pos = np.minimum(np.searchsorted(cap_ids, mach[life]), len(cap_ids) - 1)
        midx = np.where(has_m & (cap_ids[pos] == mach[life]), pos, -1)
        is_mentioned = np.isin(mach[life], self.mentioned_ids) & has_m
        self.no_machine += int((sched & ~has_m).sum())
        self.sched_machines.append(np.unique(mach[life][sched & has_m]))
        bad_m = sched & has_m & ~is_mentioned
        self.unknown_sched += int(bad_m.sum())
        if bad_m.any():
            self.unknown_tasks.append(np.unique(tid[life[bad_m]]))
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
        self.twice += int(again.sum())
        if again.any():
            self.twice_tasks.append(np.unique(g[again]))
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
        self._apply_sampling(te[o], d_m[o], d_cpu[o], d_mem[o], d_n[o])

    def _apply_sampling(
        self,
        te: np.ndarray,
        d_m: np.ndarray,
        d_cpu: np.ndarray,
        d_mem: np.ndarray,
        d_n: np.ndarray,
    ) -> None:
        """Apply usage deltas in time order (``te``, µs), taking a sample at each sample time
        they pass."""
        known = d_m >= 0
        used, holding = self.used, self.holding
        if len(te):
            self._check_samples(int(te.max()), final=False)
        start = 0
        while True:
            cut = int(np.searchsorted(te, self.next_sample, side="right"))
            if cut >= len(te):
                break
            k = slice(start, cut)
            self.running += _apply(used, holding, d_m[k], known[k], d_cpu[k], d_mem[k], d_n[k])
            self.samples.append(
                _sample_row(self.next_sample, used, holding, self.cap, self.running)
            )
            start = cut
            self.next_sample += self.step
        k = slice(start, len(te))
        self.running += _apply(used, holding, d_m[k], known[k], d_cpu[k], d_mem[k], d_n[k])

    def _check_samples(self, until_us: int, *, final: bool) -> None:
        """Refuse a spacing whose samples up to ``until_us`` (the latest event read; at the end
        of the data, the last event) and the end one number more than
        :data:`MAX_CHECK_SAMPLES`, before any of them is taken."""
        ahead = max(0, -(-(until_us - self.next_sample) // self.step))
        count = len(self.samples) + ahead + 1
        if count <= MAX_CHECK_SAMPLES:
            return
        span_s = (until_us - WINDOW_START_US) / US_PER_S
        if final:
            wider = _round_up(span_s / (MAX_CHECK_SAMPLES - 1))
            raise TraceError(
                f"{self.what}: {self.sample_s:g} s gives {count:,} over-commitment samples over "
                f"the {span_s:g} s from 600 s to the last event, more than the "
                f"{MAX_CHECK_SAMPLES:,} trace check may take ({wider:g} s stays within)"
            )
        raise TraceError(
            f"{self.what}: {self.sample_s:g} s gives at least {count:,} over-commitment samples "
            f"(over the first {span_s:g} s from 600 s of the events read so far), more than the "
            f"{MAX_CHECK_SAMPLES:,} trace check may take"
        )

    def report(self, src: Path, parts: list[int], sample_s: float) -> dict[str, Any]:
        """The samples left before the end of the data and at the end, and the result of
        :func:`check_google_2011`."""
        t_end = max(self.last_max, WINDOW_START_US)
        running_now = int(self.st.running[: self.st.n].sum())
        if running_now != self.running:  # pragma: no cover - consistency guard
            raise TraceError(
                f"trace check: {self.running} running tasks counted, {running_now} in state"
            )
        self._check_samples(t_end, final=True)
        samples, used, holding, cap = self.samples, self.used, self.holding, self.cap
        while self.next_sample < t_end:
            samples.append(_sample_row(self.next_sample, used, holding, cap, running_now))
            self.next_sample += self.step
        end = _sample_row(t_end, used, holding, cap, running_now)
        keys = [k for k in end if k != "time_s"]
        maxima = {k: max((s[k] for s in [*samples, end]), default=0) for k in keys}
        ever = (
            np.unique(np.concatenate(self.sched_machines)) if self.sched_machines else np.empty(0)
        )

        def n_tasks(chunks: list[np.ndarray]) -> int:
            return len(np.unique(np.concatenate(chunks))) if chunks else 0

        return {
            "format": "google-2011",
            "path": str(src),
            "parts": parts,
            "rows": {"task_events": self.n_rows, "unparseable_or_malformed": self.n_bad},
            "checks": {
                "events_out_of_order": {
                    "supported": True,
                    "rows_within_parts": self.within,
                    "parts_starting_before_previous_part": self.across,
                },
                "runs_on_unknown_machines": {
                    "supported": True,
                    "machines_in_machine_events": len(self.mentioned_ids),
                    "schedules_on_unknown_machines": self.unknown_sched,
                    "tasks": n_tasks(self.unknown_tasks),
                    "schedules_without_machine": self.no_machine,
                },
                "scheduled_twice_without_end": {
                    "supported": True,
                    "schedules": self.twice,
                    "tasks": n_tasks(self.twice_tasks),
                },
                "requests_above_every_machine": {
                    "supported": True,
                    "largest_machine": {
                        "cpu": float(self.largest[0]),
                        "mem": float(self.largest[1]),
                    },
                    "tasks_cpu": n_tasks(self.big["cpu"]),
                    "tasks_mem": n_tasks(self.big["mem"]),
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


def _round_up(x: float, digits: int = 2) -> float:
    """``x`` > 0 rounded up to ``digits`` significant digits."""
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return math.ceil(x / step) * step


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


#: The checks :func:`check_text` writes one line for: the check's key, its title, and what a
#: supported check found (the line's text after the title).
_CHECK_LINES: tuple[tuple[str, str, Callable[[dict[str, Any]], str]], ...] = (
    (
        "events_out_of_order",
        "events out of time order",
        lambda e: (
            f"{e['rows_within_parts']:,} rows within parts, "
            f"{e['parts_starting_before_previous_part']} parts starting before the previous one"
        ),
    ),
    (
        "runs_on_unknown_machines",
        "runs on unknown machines",
        lambda u: (
            f"{u['schedules_on_unknown_machines']:,} SCHEDULE events ({u['tasks']:,} "
            "tasks) on machines machine_events never mentions "
            f"({u['machines_in_machine_events']:,} machines); "
            f"{u['schedules_without_machine']:,} without a machine"
        ),
    ),
    (
        "scheduled_twice_without_end",
        "tasks scheduled twice without an end",
        lambda s: f"{s['schedules']:,} SCHEDULE events ({s['tasks']:,} tasks)",
    ),
)


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

    for name, title, found in _CHECK_LINES:
        check = c[name]
        text = found(check) if check["supported"] else f"not supported ({check['why']})"
        lines.append(f"{title}: {text}")
    r = c["requests_above_every_machine"]
    per = ", ".join(f"{k[6:]} {v:,}" for k, v in r.items() if k.startswith("tasks_"))
    lines.append(f"tasks requesting more than the largest machine: {per}")
    o = c["overcommitted_machines"]
    if not o["supported"]:
        lines.append(f"over-committed machines: not supported ({o['why']})")
    else:
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
