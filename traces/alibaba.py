"""Convert Alibaba cluster traces (v2017, v2018, GPU v2023) to the canonical tables.

Formats (``fairsim trace convert FORMAT SRC --out DIR``; SRC is a folder). The semantics are in
``docs/traces-alibaba.md``; in short:

``alibaba-2017``
    ``batch_task.csv[.gz]`` (8 columns: create time, end time, job id, task id, instances, status,
    CPU request per instance with 100 = 1 core, normalised memory per instance), with or without
    the header row some copies carry, and optionally ``server_event.csv[.gz]`` (7 columns).
``alibaba-2018``
    ``batch_task.csv[.gz]`` in the official v2018 layout (9 columns: task_name, instance_num,
    job_name, task_type, status, start_time, end_time, plan_cpu, plan_mem) and optionally
    ``machine_meta.csv[.gz]`` (7 columns). Task names carry the DAG (:mod:`fairsim.traces.dag`).
``alibaba-2018-spar``
    The derived one-hour v2018 sample of the ``spar`` package: ``sample_tasks.csv[.gz]`` (7
    columns: arrival offset, job_name, task_name, duration, plan_cpu, plan_mem, instance_num);
    ``machine_meta.csv[.gz]`` is looked up in SRC and its parent folder.
``alibaba-gpu-2023``
    ``openb_node_list_all_node.csv`` (or ``openb_node_list_gpu_node.csv``) and
    ``openb_pod_list_default.csv``, with header rows; three resources ``cpu, mem, gpu``.

Normalisation: every resource is divided by the largest server's capacity of that resource, as
read from the machine table of the same trace, so the largest machine has 1 (as for Google).
Without a machine table the documented machine sizes are used (v2017: 64 cores, memory 1.0;
v2018: 96 cores, memory 100); the divisors are recorded in ``conversion.json`` ("normalisation").

A task with ``n`` instances stays one row with ``instances = n``. Every input row is either used or
counted in ``skipped`` with a reason, and ``rows_used + sum(skipped) == rows_read`` per table. A
header row is not a data row and is not counted.
"""

from __future__ import annotations

import gzip
import logging
import re
import time as _time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from fairsim.errors import TraceError
from fairsim.traces.dag import dag_columns
from fairsim.traces.io import (
    BAD_ROW_THRESHOLD,
    BadRows,
    FirstBadRow,
    check_bad_rows,
    csv_batches,
    write_json_atomic,
    write_servers,
    write_tasks,
)
from fairsim.traces.schema import SCHEMA_VERSION

log = logging.getLogger(__name__)

FORMATS = ("alibaba-2017", "alibaba-2018", "alibaba-2018-spar", "alibaba-gpu-2023")
BLOCK_SIZE = 4 << 20

R_MALFORMED = "malformed row (wrong column count)"
R_UNPARSEABLE = "unparseable field"
R_MISSING_REQ = "missing cpu or mem request"
R_NEG_REQ = "negative request"
R_NEG_INST = "negative instance count"
R_ZERO_INST = "zero instance count"
R_BAD_STATUS = "unknown status"
R_END_BEFORE_START = "end time before start time"
R_NEG_ARRIVAL = "negative arrival offset"
R_DUP_TASK = "duplicate task id"
R_BAD_JOB = "unparseable job name"
R_SUPERSEDED = "superseded by a later row for the machine"
R_EMPTY_CAP = "empty or invalid capacity"
R_DUP_NODE = "duplicate node name"
R_NO_SCHEDULE = "ran (finished, failed or running) without a scheduled time"
R_MEM_RANGE = "normalised memory out of range"
#: Skip reasons that mean a row could not be read (they count toward ``bad_row_threshold``).
BAD_REASONS = (R_UNPARSEABLE, R_BAD_JOB, R_BAD_STATUS)

BATCH_TASK_2017 = (
    "create", "end", "job", "task", "instances", "status", "cpu", "mem",
)  # fmt: skip
SERVER_EVENT_2017 = ("time", "machine", "event", "detail", "cpu", "mem", "disk")
BATCH_TASK_2018 = (
    "task_name", "instances", "job_name", "task_type", "status", "start", "end", "cpu", "mem",
)  # fmt: skip
MACHINE_META_2018 = ("machine", "time", "fd1", "fd2", "cpu", "mem", "status")
SPAR_TASKS = ("arrival", "job_name", "task_name", "duration", "cpu", "mem", "instances")
GPU_NODES = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
GPU_PODS = (
    "name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
    "creation_time", "deletion_time", "scheduled_time",
)  # fmt: skip

STATUS_2017 = {
    "Terminated": "finish", "Failed": "fail", "Running": "censored", "Waiting": "unscheduled",
}  # fmt: skip
STATUS_2018 = {
    "Terminated": "finish", "Failed": "fail", "Running": "censored", "Waiting": "unscheduled",
    "Ready": "unscheduled", "Cancelled": "kill", "Interrupted": "kill",
}  # fmt: skip
PHASE_GPU = {
    "Succeeded": "finish",
    "Failed": "fail",
    "Running": "censored",
    "Pending": "unscheduled",
}

DEFAULT_2017 = {"cpu": 64.0, "mem": 1.0}
DEFAULT_2018 = {"cpu": 96.0, "mem": 100.0}
#: The documented range of the normalised memory columns (requests and capacities): v2017
#: ``schema.csv`` normalises memory to 0..1, v2018 ``schema.txt`` to 0..100. A value above the
#: top is no memory size of the trace (:data:`R_MEM_RANGE`).
MEM_MAX_2017 = 1.0
MEM_MAX_2018 = 100.0


# --------------------------------------------------------------------------- reading helpers

#: The bound of an integer field (times, ids, counts): 2**53; below it float64, through which the
#: fields are parsed, holds every integer exactly (2**53 + 1 reads as 2**53).
MAX_EXACT_INT = float(2**53)


class _Table:
    """One input table: string columns, and the rows' skip reasons as they are decided."""

    def __init__(self, path: Path, names: tuple[str, ...], rel: str, required: bool = True) -> None:
        self.rel = rel
        self.path = path
        self.names = names
        self.required = required
        self._bad = BadRows()
        header = _has_header(path, path.name)  # errors reading the file name it, as Google's
        self.header = header
        batches = list(
            csv_batches(
                path,
                names,
                bad=self._bad,
                rel=path.name,
                skip_rows=1 if header else 0,
                block_size=BLOCK_SIZE,
            )
        )
        schema = pa.schema([(c, pa.string()) for c in names])
        self.table = pa.Table.from_batches(batches, schema=schema)
        self.n = self.table.num_rows
        self.reason = np.full(self.n, None, dtype=object)

    @property
    def malformed(self) -> int:
        """Rows with a wrong column count (skipped while reading)."""
        return self._bad.count

    def check_bad_rows(self, threshold: float) -> None:
        """Refuse the table if it has no data rows (when required) or more than ``threshold``
        of its rows are malformed or unreadable (:data:`BAD_REASONS`,
        :func:`fairsim.traces.io.check_bad_rows`)."""
        read = self.n + self.malformed
        if read == 0 and self.required:
            raise TraceError(f"{self.rel}: no data rows in {self.path}")
        bad_mask = np.isin(self.reason.astype(str), list(BAD_REASONS))
        first = FirstBadRow(len(self.names), skip_rows=1 if self.header else 0)
        if bad_mask.any():
            why = str(self.reason[bad_mask.argmax()])
            first.parsed(self.path, self.path.name, 0, bad_mask, why)
        first.file_done(self.path, self.path.name, self._bad)
        n_bad = int(bad_mask.sum()) + self.malformed
        check_bad_rows(self.rel, read, n_bad, threshold, first.describe)

    def text(self, name: str) -> np.ndarray:
        """Column ``name`` as stripped Python strings (``None`` for empty)."""
        col = pc.utf8_trim_whitespace(self.table.column(name))
        return np.asarray(col.to_pandas(), dtype=object)

    def num(self, name: str, *, required: bool = True) -> np.ndarray:
        """Column ``name`` as float64; unparseable (and, if ``required``, empty) rows rejected."""
        raw = pc.utf8_trim_whitespace(self.table.column(name))
        empty = np.asarray(pc.is_null(raw)) | np.asarray(pc.equal(raw, "").fill_null(True))
        vals = pd.to_numeric(pd.Series(raw.to_pandas()), errors="coerce").to_numpy(
            np.float64, copy=True
        )
        bad = ~empty & ~np.isfinite(vals)
        if required:
            bad |= empty
        self.reject(bad, R_UNPARSEABLE)
        vals[empty] = np.nan
        return vals

    def whole(self, name: str, *, required: bool = True, fraction: bool = False) -> np.ndarray:
        """Column ``name`` as float64 holding whole numbers (NaN where empty or rejected);
        non-integers (unless ``fraction``), and numbers of magnitude :data:`MAX_EXACT_INT` or
        more (read through float64, they may come back as another integer, or wrap to -2**63 in
        an int64 cast), rejected as unparseable.

        ``fraction`` reads a count in fine units that may have a fractional part (a CPU request
        where 100 = 1 core): only the magnitude bound applies.
        """
        vals = self.num(name, required=required)
        bad = np.isfinite(vals) & (np.abs(vals) >= MAX_EXACT_INT)
        if not fraction:
            bad |= np.isfinite(vals) & (vals != np.round(vals))
        self.reject(bad, R_UNPARSEABLE)
        vals[bad | ~np.isfinite(vals)] = np.nan
        return vals

    def integer(self, name: str, *, required: bool = True) -> np.ndarray:
        """Column ``name`` as int64 (0 where empty or rejected), read as :meth:`whole`."""
        vals = self.whole(name, required=required)
        return np.where(np.isnan(vals), 0, vals).astype(np.int64)

    def reject(self, mask: np.ndarray, reason: str) -> None:
        """Give ``reason`` to the rows in ``mask`` that have no reason yet."""
        sel = np.asarray(mask, dtype=bool) & (self.reason == None)  # noqa: E711
        self.reason[sel] = reason

    @property
    def ok(self) -> np.ndarray:
        """Rows not rejected so far."""
        return self.reason == None  # noqa: E711

    def report(self) -> tuple[int, int, dict[str, int]]:
        """Return ``(rows_read, rows_used, skipped)`` and check the accounting."""
        skipped: dict[str, int] = {R_MALFORMED: self.malformed}
        reasons, counts = np.unique(self.reason[~self.ok].astype(str), return_counts=True)
        skipped.update({str(r): int(c) for r, c in zip(reasons, counts, strict=True)})
        used = int(self.ok.sum())
        read = self.n + self.malformed
        if used + sum(skipped.values()) != read:  # pragma: no cover - internal guard
            raise TraceError(f"{self.rel}: accounting error")
        return read, used, skipped


HEADER_WORDS = {
    "task_create_time", "timestamp", "time_stamp", "task_name", "machine_id", "sn", "name",
    "arrival_offset_s", "job_name", "create_time",
}  # fmt: skip


def _has_header(path: Path, rel: str) -> bool:
    """True when the first line is a header row (a known column name or a non-number)."""
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            first = fh.readline()
    except (OSError, EOFError) as exc:
        raise TraceError(f"{rel}: unreadable ({str(exc).splitlines()[0]})") from None
    field = first.split(",", 1)[0].strip().lower()
    if field in HEADER_WORDS:
        return True
    if not field or re.match(r"^(m_|j_|task_|[a-z]+\d)", field) or "-" in field:
        return False
    try:
        float(field)
    except ValueError:
        return True
    return False


def _find(src: Path, stem: str, *, required: bool) -> Path | None:
    for name in (stem, stem + ".gz"):
        if (src / name).is_file():
            return src / name
    if required:
        raise TraceError(f"{src}: {stem}[.gz] not found")
    return None


def _need(src: Path, stem: str) -> Path:
    """The path of a required table (``stem`` or ``stem.gz``); TraceError if missing."""
    path = _find(src, stem, required=True)
    assert path is not None
    return path


def _check_src(src: Path) -> Path:
    src = Path(src)
    if not src.is_dir():
        raise TraceError(f"{src}: not a directory")
    return src


def _finish(
    fmt: str,
    out: Path,
    tables: dict[str, _Table],
    tasks: pd.DataFrame,
    servers: pd.DataFrame | None,
    resources: tuple[str, ...],
    extra: dict[str, Any],
    started: float,
    bad_row_threshold: float = BAD_ROW_THRESHOLD,
) -> dict[str, Any]:
    for t in tables.values():
        t.check_bad_rows(bad_row_threshold)
    report: dict[str, Any] = {
        "format": fmt,
        "schema": SCHEMA_VERSION,
        "resources": list(resources),
        "rows_read": {},
        "rows_used": {},
        "skipped": {},
    }
    for name, t in tables.items():
        read, used, skipped = t.report()
        report["rows_read"][name] = read
        report["rows_used"][name] = used
        report["skipped"][name] = skipped
        report.setdefault("header_row", {})[name] = t.header
    tasks = tasks.sort_values(["submit_s", "job_id", "task_index"], kind="stable")
    states, counts = np.unique(tasks["end_state"].to_numpy(str), return_counts=True)
    report.update(
        {
            "tasks": len(tasks),
            "instances": int(tasks["instances"].sum()),
            "jobs": int(tasks["job_id"].nunique()),
            "users": int(tasks["user"].nunique()),
            "servers": None if servers is None else len(servers),
            "end_states": {str(s): int(c) for s, c in zip(states, counts, strict=True)},
            "censored_tasks": int(tasks["censored"].sum()),
            **extra,
        }
    )
    if "window_end_s" in extra:
        # the trace's data: from 0 to its last end (or submit) time; a run's default horizon
        last = float(tasks["submit_s"].max()) if len(tasks) else 0.0
        report["window_s"] = [0.0, max(float(extra["window_end_s"]), last)]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_tasks(tasks, out / "tasks.parquet", resources=resources)
    if servers is not None:
        write_servers(servers, out / "servers.parquet", resources=resources)
    report["wall_s"] = round(_time.perf_counter() - started, 3)
    write_json_atomic(report, out / "conversion.json")
    return report


def _task_frame(
    t: _Table,
    *,
    job_id: np.ndarray,
    task_index: np.ndarray,
    user: np.ndarray,
    submit: np.ndarray,
    demand: dict[str, np.ndarray],
    run: np.ndarray,
    state: np.ndarray,
    instances: np.ndarray,
    parents: np.ndarray | None = None,
    qos: np.ndarray | None = None,
) -> pd.DataFrame:
    ok = t.ok
    n = int(ok.sum())
    run = run[ok]
    return pd.DataFrame(
        {
            "job_id": job_id[ok],
            "task_index": task_index[ok].astype(np.int32),
            "user": user[ok],
            "submit_s": submit[ok],
            **{r: v[ok] for r, v in demand.items()},
            "run_s": run,
            "end_state": state[ok],
            "censored": state[ok] == "censored",
            "attempts": (~np.isnan(run)).astype(np.int32),
            "instances": instances[ok].astype(np.int32),
            "constraint": np.full(n, None, dtype=object),
            "parents": np.full(n, None, dtype=object) if parents is None else parents[ok],
            "priority": pd.array([None] * n, dtype="Int32"),
            "scheduling_class": pd.array([None] * n, dtype="Int32"),
            "qos": np.full(n, None, dtype=object) if qos is None else qos[ok],
        }
    )


def _instances(t: _Table, name: str) -> np.ndarray:
    inst = t.integer(name)
    t.reject(inst < 0, R_NEG_INST)
    t.reject(inst == 0, R_ZERO_INST)
    t.reject(inst >= 1 << 31, R_UNPARSEABLE)
    return inst


def _states(t: _Table, status: np.ndarray, mapping: dict[str, str]) -> np.ndarray:
    state = np.array([mapping.get(s, "") if s is not None else "" for s in status], dtype=object)
    t.reject(state == "", R_BAD_STATUS)
    return state


#: Run times and the window's end, computed once every row of a table has been judged.
RunTimes = Callable[[], tuple[np.ndarray, float]]


def _run_times(
    t: _Table,
    start: np.ndarray,
    end: np.ndarray,
    state: np.ndarray,
    key: np.ndarray | None = None,
) -> RunTimes:
    """Run time ``end - start``; right-censored tasks run to the latest end time of the rows used.

    A task is right-censored when its status says it is running, or when it ran (its status is
    not a waiting one) but its end time is missing (empty or 0). Its ``state`` becomes
    ``"censored"`` (in place) and, when its end is missing or before its start, its run time is
    the latest end time of the rows used minus its start: a lower bound.

    ``key`` (a task id per row): of the rows still usable once those ending before their start
    are rejected, every row after the first of its key is rejected as a duplicate, so that a
    rejected row never makes a usable one a duplicate.

    Returns
    -------
    callable
        ``() -> (run_s, window end)``, to call once the table's last rejection is made (the DAG
        checks of v2018 come later): the latest end time is taken over the rows used then.
    """
    run = end - start
    censored = (state == "censored") | ((state != "unscheduled") & (end == 0))
    state[censored] = "censored"
    t.reject(~censored & (state != "unscheduled") & (run < 0), R_END_BEFORE_START)
    if key is not None:
        ok = t.ok
        dup = np.zeros(t.n, dtype=bool)
        dup[ok] = pd.Series(key[ok]).duplicated(keep="first").to_numpy()
        t.reject(dup, R_DUP_TASK)

    def finish() -> tuple[np.ndarray, float]:
        valid = t.ok
        t_end = float(end[valid].max()) if valid.any() else 0.0
        late = censored & ((run < 0) | (end == 0))
        out = np.where(late, np.maximum(t_end - start, 0.0), run)
        return np.where(state == "unscheduled", np.nan, out), t_end

    return finish


# --------------------------------------------------------------------------- machine tables


def _servers_2017(path: Path) -> tuple[_Table, pd.DataFrame]:
    t = _Table(path, SERVER_EVENT_2017, "server_event", required=False)
    event = t.text("event")
    cpu = t.whole("cpu", required=False)  # a number of cores
    mem = t.num("mem", required=False)
    t.integer("time")
    machine = t.text("machine")
    t.reject(pd.isna(machine), R_UNPARSEABLE)
    is_add = event == "add"
    for ev in sorted({e for e in event[t.ok & ~is_add] if e is not None}):
        t.reject(event == ev, f"{ev} event (capacity unchanged)")
    t.reject(event == None, R_UNPARSEABLE)  # noqa: E711
    t.reject(~(np.isfinite(cpu) & np.isfinite(mem)) | (cpu <= 0) | (mem <= 0), R_EMPTY_CAP)
    t.reject(mem > MEM_MAX_2017, R_MEM_RANGE)
    return t, _last_per_machine(t, machine, {"cpu": cpu, "mem": mem}, None)


def _servers_2018(path: Path) -> tuple[_Table, pd.DataFrame]:
    t = _Table(path, MACHINE_META_2018, "machine_meta", required=False)
    machine = t.text("machine")
    t.integer("time")
    cpu = t.whole("cpu", required=False)  # cpu_num, a number of cores
    mem = t.num("mem", required=False)
    t.reject(pd.isna(machine), R_UNPARSEABLE)
    t.reject(~(np.isfinite(cpu) & np.isfinite(mem)) | (cpu <= 0) | (mem <= 0), R_EMPTY_CAP)
    t.reject(mem > MEM_MAX_2018, R_MEM_RANGE)
    return t, _last_per_machine(t, machine, {"cpu": cpu, "mem": mem}, None)


def _last_per_machine(
    t: _Table, machine: np.ndarray, cap: dict[str, np.ndarray], platform: np.ndarray | None
) -> pd.DataFrame:
    """Keep each machine's last valid row (file order); earlier ones are superseded."""
    ok = np.flatnonzero(t.ok)
    frame = pd.DataFrame({"row": ok, "server": machine[ok]})
    last = frame.drop_duplicates("server", keep="last")["row"].to_numpy()
    superseded = np.zeros(t.n, bool)
    superseded[ok] = True
    superseded[last] = False
    t.reject(superseded, R_SUPERSEDED)
    out = {"server": machine[last].astype(str)}
    out.update({r: v[last] for r, v in cap.items()})
    out["platform"] = np.full(len(last), None, dtype=object) if platform is None else platform[last]
    return pd.DataFrame(out)


def _cpu_mem_units(
    servers: pd.DataFrame | None, norm: dict[str, float], cpu: str, mem: str, source: str
) -> tuple[pd.DataFrame | None, dict[str, str]]:
    """The servers' cpu and mem in units of the normalising machine ``norm`` (v2017, v2018), and
    the report's ``normalisation`` entry: how the trace's ``cpu`` (100 = 1 core) and ``mem``
    columns became the canonical units, and ``source`` of ``norm``."""
    if servers is not None:
        servers = servers.assign(cpu=servers["cpu"] / norm["cpu"], mem=servers["mem"] / norm["mem"])
    return servers, {
        "cpu": f"{cpu} / 100 / {_exact(norm['cpu'])} cores",
        "mem": f"{mem} / {_exact(norm['mem'])}",
        "source": source,
    }


def _exact(x: float) -> str:
    """``x`` as the shortest text that reads back as the same float (``repr``): the divisors in
    ``conversion.json`` are exact (1048576.0, not ``:g``'s 1.04858e+06)."""
    return repr(float(x))


def _normalise(servers: pd.DataFrame | None, default: dict[str, float]) -> dict[str, float]:
    if servers is None or servers.empty:
        return dict(default)
    return {r: float(servers[r].max()) for r in default}


# --------------------------------------------------------------------------- alibaba-2017


def _convert_2017(
    src: Path, out: Path, *, bad_row_threshold: float = BAD_ROW_THRESHOLD
) -> dict[str, Any]:
    """Convert Alibaba v2017 ``batch_task`` (+ ``server_event``) to the canonical tables.

    ``src`` holds ``batch_task.csv[.gz]`` (header row optional) and optionally
    ``server_event.csv[.gz]``; the rest as :func:`convert_alibaba`.

    Notes
    -----
    v2017 has no user column: each job is its own user (``"job-<id>"``). ``task_index`` is the
    trace's task id (unique in the whole table). ``submit_s`` is the create time, clamped to 0
    (negative = before the window); ``run_s = end - create`` (the task's span, an upper bound of
    one instance's run time). Statuses: Terminated -> finish, Failed -> fail, Running -> censored,
    Waiting -> unscheduled. A task that is running or has no end time (empty or 0) is
    right-censored (``censored``): with no end, or an end before create, it runs to the latest end
    time in the table (a lower bound).
    """
    started = _time.perf_counter()
    src = _check_src(src)
    bt = _Table(_need(src, "batch_task.csv"), BATCH_TASK_2017, "batch_task")
    tables = {"batch_task": bt}
    servers = None
    se_path = _find(src, "server_event.csv", required=False)
    if se_path is not None:
        tables["server_event"], servers = _servers_2017(se_path)
    norm = _normalise(servers, DEFAULT_2017)

    create = bt.integer("create").astype(np.float64)
    end = bt.integer("end", required=False).astype(np.float64)  # empty: right-censored
    job = bt.integer("job")
    task = bt.integer("task")
    bt.reject((job < 0) | (task < 0) | (task >= 1 << 31), R_UNPARSEABLE)
    inst = _instances(bt, "instances")
    state = _states(bt, bt.text("status"), STATUS_2017)
    cpu = bt.whole("cpu", required=False, fraction=True)
    mem = bt.num("mem", required=False)
    bt.reject(np.isnan(cpu) | np.isnan(mem), R_MISSING_REQ)
    bt.reject((cpu < 0) | (mem < 0), R_NEG_REQ)
    bt.reject(mem > MEM_MAX_2017, R_MEM_RANGE)
    run, t_end = _run_times(bt, create, end, state, key=task)()

    tasks = _task_frame(
        bt,
        job_id=job,
        task_index=task,
        user=np.array([f"job-{j}" for j in job], dtype=object),
        submit=np.maximum(create, 0.0),
        demand={"cpu": cpu / 100.0 / norm["cpu"], "mem": mem / norm["mem"]},
        run=run,
        state=state,
        instances=inst,
    )
    source = "server_event" if se_path is not None else "default v2017 machine"
    servers, normalisation = _cpu_mem_units(servers, norm, "plan cpu", "normalised memory", source)
    extra = {"normalisation": normalisation, "window_end_s": t_end}
    return _finish(
        "alibaba-2017",
        out,
        tables,
        tasks,
        servers,
        ("cpu", "mem"),
        extra,
        started,
        bad_row_threshold,
    )


# --------------------------------------------------------------------------- alibaba-2018


def _job_ids(t: _Table, job_name: np.ndarray) -> np.ndarray:
    """``j_123`` -> 123, parsed exactly; other names, and numbers of more than 18 digits (they
    would not fit in int64), rejected."""
    digits = pd.Series(job_name, dtype=object).str.extract(r"^j_0*(\d{1,18})$", expand=False)
    ids = pc.cast(pa.array(digits, type=pa.string(), from_pandas=True), pa.int64())
    valid = np.asarray(ids.is_valid())
    t.reject(~valid, R_BAD_JOB)
    return np.asarray(ids.fill_null(0), dtype=np.int64)


def _dag(t: _Table, job: np.ndarray, task_name: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DAG columns for the rows still valid; invalid jobs rejected with the DAG reason."""
    ok = np.flatnonzero(t.ok & ~pd.isna(task_name))
    t.reject(pd.isna(task_name), R_UNPARSEABLE)
    index = np.zeros(t.n, np.int64)
    parents = np.full(t.n, None, dtype=object)
    idx, par, why = dag_columns(job[ok], task_name[ok])
    index[ok], parents[ok] = idx, par
    reason = np.full(t.n, None, dtype=object)
    reason[ok] = why
    for r in sorted({w for w in why if w is not None}):
        t.reject(reason == r, r)
    return index, parents


def _servers_2018_near(src: Path) -> Path | None:
    return _find(src, "machine_meta.csv", required=False) or _find(
        src.parent, "machine_meta.csv", required=False
    )


def _v2018(
    fmt: str,
    src: Path,
    out: Path,
    t: _Table,
    mm_path: Path | None,
    columns: dict,
    started: float,
    bad_row_threshold: float = BAD_ROW_THRESHOLD,
) -> dict[str, Any]:
    tables = {columns["table"]: t}
    servers = None
    if mm_path is not None:
        tables["machine_meta"], servers = _servers_2018(mm_path)
    norm = _normalise(servers, DEFAULT_2018)
    job_name = t.text("job_name")
    job = _job_ids(t, job_name)
    task_name = t.text("task_name")
    inst = _instances(t, "instances")
    cpu = t.whole("cpu", required=False, fraction=True)
    mem = t.num("mem", required=False)
    t.reject(np.isnan(cpu) | np.isnan(mem), R_MISSING_REQ)
    t.reject((cpu < 0) | (mem < 0), R_NEG_REQ)
    t.reject(mem > MEM_MAX_2018, R_MEM_RANGE)
    submit, state, runs = columns["times"](t)
    index, parents = _dag(t, job, task_name)
    run, t_end = runs()  # after the DAG checks: the window ends with the rows used
    tasks = _task_frame(
        t,
        job_id=job,
        task_index=index,
        user=np.array([f"job-{j}" for j in job], dtype=object),
        submit=submit,
        demand={"cpu": cpu / 100.0 / norm["cpu"], "mem": mem / norm["mem"]},
        run=run,
        state=state,
        instances=inst,
        parents=parents,
    )
    source = "machine_meta" if mm_path is not None else "default v2018 machine"
    servers, normalisation = _cpu_mem_units(servers, norm, "plan_cpu", "plan_mem", source)
    extra = {
        "normalisation": normalisation,
        "window_end_s": t_end,
        "dag_tasks_with_parents": int(tasks["parents"].notna().sum()),
    }
    return _finish(
        fmt, out, tables, tasks, servers, ("cpu", "mem"), extra, started, bad_row_threshold
    )


def _convert_2018(
    src: Path, out: Path, *, bad_row_threshold: float = BAD_ROW_THRESHOLD
) -> dict[str, Any]:
    """Convert Alibaba v2018 ``batch_task`` (official layout) + ``machine_meta``.

    ``src`` holds ``batch_task.csv[.gz]`` (9 columns, official order) and optionally
    ``machine_meta.csv[.gz]``; the rest as :func:`convert_alibaba`.

    Notes
    -----
    ``submit_s = start_time`` (v2018 has no create time), ``run_s = end_time - start_time``;
    statuses: Terminated -> finish, Failed -> fail, Running -> censored, Waiting/Ready ->
    unscheduled, Cancelled/Interrupted -> kill. A running task, or one with no end time, is
    right-censored (``censored``) and, with no end or an end before its start, runs to the latest
    end time (a lower bound).
    ``batch_instance`` is not read. Each job is its own user (``"job-<id>"``).
    """
    started = _time.perf_counter()
    src = _check_src(src)
    t = _Table(_need(src, "batch_task.csv"), BATCH_TASK_2018, "batch_task")

    def times(t: _Table) -> tuple[np.ndarray, np.ndarray, RunTimes]:
        start = t.integer("start").astype(np.float64)
        end = t.integer("end", required=False).astype(np.float64)  # empty: right-censored
        state = _states(t, t.text("status"), STATUS_2018)
        return np.maximum(start, 0.0), state, _run_times(t, start, end, state)

    mm = _find(src, "machine_meta.csv", required=False)
    cols = {"table": "batch_task", "times": times}
    return _v2018("alibaba-2018", src, out, t, mm, cols, started, bad_row_threshold)


def _convert_2018_spar(
    src: Path, out: Path, *, bad_row_threshold: float = BAD_ROW_THRESHOLD
) -> dict[str, Any]:
    """Convert the derived one-hour v2018 sample of the ``spar`` package.

    ``src`` holds ``sample_tasks.csv[.gz]``; ``machine_meta.csv[.gz]`` is looked up in ``src``
    and its parent; the rest as :func:`convert_alibaba`.

    Notes
    -----
    ``submit_s`` = the job's arrival offset, ``run_s`` = the task duration; every task ended
    (``finish``; the derived format dropped the status). ``sample_instances`` is not read (its
    rows are the tasks' instances, already counted by ``instance_num``).
    """
    started = _time.perf_counter()
    src = _check_src(src)
    t = _Table(_need(src, "sample_tasks.csv"), SPAR_TASKS, "sample_tasks")

    def times(t: _Table) -> tuple[np.ndarray, np.ndarray, RunTimes]:
        arrival = t.whole("arrival")
        duration = t.whole("duration")
        t.reject(arrival < 0, R_NEG_ARRIVAL)  # an offset into the sample's hour
        t.reject(duration < 0, R_END_BEFORE_START)
        state = np.full(t.n, "finish", dtype=object)

        def runs() -> tuple[np.ndarray, float]:
            ends = (arrival + duration)[t.ok]
            return duration, float(ends.max()) if len(ends) else 0.0

        return arrival, state, runs

    cols = {"table": "sample_tasks", "times": times}
    return _v2018(
        "alibaba-2018-spar",
        src,
        out,
        t,
        _servers_2018_near(src),
        cols,
        started,
        bad_row_threshold,
    )


# --------------------------------------------------------------------------- alibaba-gpu-2023


def _convert_gpu_2023(
    src: Path, out: Path, *, bad_row_threshold: float = BAD_ROW_THRESHOLD
) -> dict[str, Any]:
    """Convert Alibaba cluster-trace-gpu-v2023 (openb) nodes and pods: resources cpu, mem, gpu.

    ``src`` holds ``openb_pod_list_default.csv`` and ``openb_node_list_all_node.csv`` (or
    ``openb_node_list_gpu_node.csv``); the rest as :func:`convert_alibaba`.

    Notes
    -----
    Each resource is divided by the largest node's amount (cpu_milli, memory_mib, gpu). A pod's
    GPU demand is ``num_gpu * gpu_milli / 1000`` GPUs. Each pod is one job (``job_id`` = row
    number) and its own user (the pod name), with its ``qos`` class (the table's ``qos``:
    ``LS``, ``BE``, ``Burstable``, ``Guaranteed``). ``submit_s = creation_time``;
    ``run_s = deletion_time - scheduled_time``. Phases: Succeeded -> finish, Failed -> fail,
    Running -> censored, Pending -> unscheduled.
    """
    started = _time.perf_counter()
    src = _check_src(src)
    node_path = _find(src, "openb_node_list_all_node.csv", required=False) or _need(
        src, "openb_node_list_gpu_node.csv"
    )
    pod_path = _need(src, "openb_pod_list_default.csv")
    nodes = _Table(node_path, GPU_NODES, "nodes")
    sn = nodes.text("sn")
    n_cpu, n_mem, n_gpu = (nodes.whole(c) for c in ("cpu_milli", "memory_mib", "gpu"))
    nodes.reject(pd.isna(sn), R_UNPARSEABLE)
    nodes.reject((n_cpu < 0) | (n_mem < 0) | (n_gpu < 0), R_EMPTY_CAP)
    nodes.reject(pd.Series(sn).duplicated().to_numpy() & nodes.ok, R_DUP_NODE)
    model = nodes.text("model")
    model = np.where(pd.isna(model) | (model == ""), np.array(None, dtype=object), model)
    ok = nodes.ok
    norm = {
        "cpu": float(n_cpu[ok].max()) if ok.any() else 1.0,
        "mem": float(n_mem[ok].max()) if ok.any() else 1.0,
        "gpu": float(n_gpu[ok].max()) if ok.any() else 1.0,
    }
    norm = {k: (v if v > 0 else 1.0) for k, v in norm.items()}
    servers = pd.DataFrame(
        {
            "server": sn[ok].astype(str),
            "cpu": n_cpu[ok] / norm["cpu"],
            "mem": n_mem[ok] / norm["mem"],
            "gpu": n_gpu[ok] / norm["gpu"],
            "platform": model[ok],
        }
    )

    pods = _Table(pod_path, GPU_PODS, "pods")
    name = pods.text("name")
    pods.reject(pd.isna(name), R_UNPARSEABLE)
    cpu = pods.whole("cpu_milli", required=False)
    mem = pods.whole("memory_mib", required=False)
    pods.reject(np.isnan(cpu) | np.isnan(mem), R_MISSING_REQ)
    num_gpu = pods.whole("num_gpu")
    gpu_milli = pods.whole("gpu_milli")
    pods.reject((cpu < 0) | (mem < 0) | (num_gpu < 0) | (gpu_milli < 0), R_NEG_REQ)
    state = _states(pods, pods.text("pod_phase"), PHASE_GPU)
    created = pods.whole("creation_time")
    deleted = pods.whole("deletion_time", required=False)
    scheduled = pods.whole("scheduled_time", required=False)
    ran = state != "unscheduled"
    pods.reject(ran & np.isnan(scheduled), R_NO_SCHEDULE)
    # right-censored: running, or scheduled with no deletion time; such a pod runs to the
    # latest deletion time of the table (a lower bound of its run time)
    censored = ran & ((state == "censored") | np.isnan(deleted))
    state[censored] = "censored"
    run = np.where(ran, deleted - scheduled, np.nan)
    pods.reject(ran & ~censored & (run < 0), R_END_BEFORE_START)
    valid = pods.ok & ~np.isnan(deleted)  # the last rejection made: the window of the rows used
    t_end = float(deleted[valid].max()) if valid.any() else 0.0
    late = censored & (np.isnan(run) | (run < 0))
    run[late] = np.maximum(t_end - scheduled[late], 0.0)
    gpu = num_gpu * gpu_milli / 1000.0
    qos_text = pods.text("qos")
    tasks = _task_frame(
        pods,
        job_id=np.arange(pods.n, dtype=np.int64),
        task_index=np.zeros(pods.n, np.int64),
        user=name,
        submit=np.maximum(created, 0.0),
        demand={"cpu": cpu / norm["cpu"], "mem": mem / norm["mem"], "gpu": gpu / norm["gpu"]},
        run=run,
        state=state,
        instances=np.ones(pods.n, np.int64),
        qos=np.array([q if isinstance(q, str) and q else None for q in qos_text], dtype=object),
    )
    extra = {
        "window_end_s": t_end,
        "normalisation": {
            "cpu": f"cpu_milli / {_exact(norm['cpu'])}",
            "mem": f"memory_mib / {_exact(norm['mem'])}",
            "gpu": f"num_gpu * gpu_milli / 1000 / {_exact(norm['gpu'])}",
            "source": node_path.name,
        },
    }
    tables = {"nodes": nodes, "pods": pods}
    return _finish(
        "alibaba-gpu-2023",
        out,
        tables,
        tasks,
        servers,
        ("cpu", "mem", "gpu"),
        extra,
        started,
        bad_row_threshold,
    )


CONVERTERS = {
    "alibaba-2017": _convert_2017,
    "alibaba-2018": _convert_2018,
    "alibaba-2018-spar": _convert_2018_spar,
    "alibaba-gpu-2023": _convert_gpu_2023,
}


def convert_alibaba(
    fmt: str, src: Path, out: Path, *, bad_row_threshold: float = BAD_ROW_THRESHOLD
) -> dict[str, Any]:
    """Convert an Alibaba trace of format ``fmt`` to the canonical tables (the format's files:
    this module's docstring; its conventions: ``docs/traces-alibaba.md``).

    Parameters
    ----------
    fmt : str
        One of :data:`FORMATS`.
    src : pathlib.Path
        The folder of the format's files.
    out : pathlib.Path
        Output folder (``tasks.parquet``, ``servers.parquet``, ``conversion.json``).
    bad_row_threshold : float
        Largest share (0-1) of a table's rows that may be malformed or unreadable (default
        0.5); more is an error naming the first bad row (:func:`fairsim.traces.io.check_bad_rows`).

    Returns
    -------
    dict
        The conversion report written to ``conversion.json``.

    Raises
    ------
    TraceError
        If ``fmt`` is unknown, ``src`` or one of the format's tables is missing or unreadable, or
        the conversion fails.
    """
    if fmt not in CONVERTERS:
        raise TraceError(f"trace convert: unknown format {fmt!r} (available: {', '.join(FORMATS)})")
    return CONVERTERS[fmt](Path(src), Path(out), bad_row_threshold=bad_row_threshold)
