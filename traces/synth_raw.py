"""A raw-format Google 2011 trace of any length, resampled from a real sample's jobs.

:func:`resample_google_2011` writes a folder in the clusterdata-2011-2 raw format
(``task_events/part-NNNNN-of-NNNNN.csv.gz``: gzip CSV, no header, the 13 columns of Google's
``schema.csv`` in order; ``machine_events/`` copied from the source) that
``fairsim trace convert google-2011`` reads like Google's own files. It is the input of the
whole-trace benchmark (25 million tasks over 29 days, ``make bench-scale``).

What is resampled
-----------------
The unit is the **job with all its raw task_events rows**: every event of every task (SUBMIT,
SCHEDULE, EVICT, FAIL, FINISH, KILL, LOST, UPDATE), with every column as the source wrote it
(user, machine, scheduling class, priority, CPU, memory and disk requests as text), at its
original time relative to the job's first row. Jobs are drawn uniformly with replacement from
the source's jobs until about ``tasks`` distinct tasks are drawn (the draw that crosses
``tasks`` is kept when that brings the count closer, so the count is off by at most half the
largest source job: 10,005 tasks on the Google sample, whose largest job has 20,010). Each drawn
job gets a fresh job ID (1, 2, ... in order of start) and a start offset; the offsets are a
Poisson process over the window (``n`` i.i.d. uniform offsets, ``n`` the number of jobs drawn,
sorted). A row's new time is ``offset + (its time - the job's first time)``.

Choices (see ``docs/traces.md``)
--------------------------------
* **Time-0 rows** (the job existed before the source window): taken at the window start
  (600 s), as the converter does. Such a job therefore starts at its new offset with those rows;
  what it did before the source window is unknown, so its run times (lower bounds in the source)
  become ordinary run times: left-censoring is not carried over.
* **Right-censoring at the end of the source**: a task whose last SCHEDULE has no terminal
  event in the source (137,578 of the sample's 614,019 tasks) was still running when the source
  ended. Kept open, it would run until the end of the much longer new window and the 29-day
  trace would accumulate millions of never-ending tasks. Each such task gets one synthesised LOST
  row (event type 6, ``missing info = 1``: Google's marker for a synthesised termination, copied
  otherwise from its last SCHEDULE row) at the source's last time. Its run time in the new trace
  is therefore the source's lower bound, and the converter counts it ``lost``, not ``censored``.
* **The new window's end**: rows shifted to or past ``600 s + duration_s`` are dropped (counted
  in ``rows_past_end``); the tasks they leave open are right-censored by the new trace's end, as
  in Google's own trace.
* Rows the converter would count unparseable or malformed in the source are not resampled
  (counted in the report's ``source.rows_skipped``).
* Written: ``task_events`` and ``machine_events``. Not written: ``job_events`` (the converter
  only cross-checks it), ``task_constraints`` and ``machine_attributes``.

Memory does not grow with ``tasks``: the source is held once (about 35 bytes per source row: 90
MB of arrays for the Google sample, 0.5 GB peak RSS while it is read), the drawn jobs take about
20 bytes each, and one part is built at a time (each part covers an equal slice of the window,
so file order is time order) from the jobs whose span overlaps it, found by binary search in
the jobs sorted by offset. 25 million tasks over 29 days: 109 million rows, 1.5 GB of gzip, about
2 minutes and 0.51 GB peak (``docs/traces.md``).
"""

from __future__ import annotations

import gzip
import logging
import shutil
import time as _time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from tqdm import tqdm

from fairsim.atomic import atomic_path
from fairsim.errors import TraceError
from fairsim.traces.google2011 import (
    AFTER_WINDOW_US,
    FORMAT,
    LOST,
    SCHEDULE,
    SUBMIT,
    TASK_EVENT_COLUMNS,
    TASK_INDEX_LIMIT,
    UPDATE_RUNNING,
    WINDOW_START_US,
)
from fairsim.traces.google_parts import (
    PART_RE,
    int_columns,
    iter_batches,
    list_parts,
    to_float,
)
from fairsim.traces.io import BadRows, write_json_atomic

log = logging.getLogger(__name__)

#: The columns passed through as the source wrote them (dictionary-coded text).
PASS_COLUMNS = (
    "missing_info", "machine_id", "user", "scheduling_class", "priority", "cpu", "mem", "disk",
    "different_machines",
)  # fmt: skip
#: ``missing info`` of a synthesised termination (Google's NO_SNAPSHOT_OR_TRANSITION).
MISSING_INFO_SYNTHESISED = "1"
#: Draws per batch when drawing jobs (fixed, so the draw does not depend on memory).
_DRAW_CHUNK = 1 << 16
#: gzip level of the written parts (1: fast; the files are about 1.5x Google's level-9 size).
GZIP_LEVEL = 1
R_UNPARSEABLE = "unparseable field"
R_BAD_EVENT = "bad event type"
R_MALFORMED = "malformed row (wrong column count)"


@dataclass(frozen=True)
class _Source:
    """The source's rows, grouped by job and sorted by time relative to the job's first row.

    Row entries (``n_entries``: the valid source rows plus one synthesised LOST row per task
    open at the source's end) are sorted by ``(job, r)``, ties in file order, LOST rows last.
    """

    key: np.ndarray  # int64 (n_entries,): job * stride + r, sorted
    row: np.ndarray  # int32 (n_entries,): source row holding the entry's columns
    lost: np.ndarray  # bool (n_entries,): a synthesised LOST entry
    stride: int  # > every r
    task_index: np.ndarray  # int32 (n_rows,)
    event: np.ndarray  # int8 (n_rows,)
    codes: dict[str, np.ndarray]  # column -> int (n_rows,) codes into values[column], -1: empty
    values: dict[str, pa.Array]  # column -> distinct texts
    job_tasks: np.ndarray  # int64 (n_jobs,): distinct tasks of each job
    job_rmax: np.ndarray  # int64 (n_jobs,): r of the job's last entry
    job_entries: np.ndarray  # int64 (n_jobs,): entries of each job
    task_key: np.ndarray  # int64 (n_tasks,): job * stride + r of the task's first row, sorted
    report: dict[str, Any]


def _small_codes(parts: list[np.ndarray], n_values: int) -> np.ndarray:
    """Concatenate code arrays into the smallest signed integer type that holds ``n_values``."""
    dtype = next(d for d in (np.int8, np.int16, np.int32) if n_values <= np.iinfo(d).max)
    return np.concatenate(parts, dtype=dtype, casting="same_kind")


def _read_source(src: Path, progress: bool) -> _Source:
    """Read every task_events part of ``src`` into a :class:`_Source`."""
    te_dir = src / "task_events"
    if not te_dir.is_dir():
        raise TraceError(f"{src}: no task_events folder")
    files = list_parts(te_dir, None, "task_events")
    if not files:
        raise TraceError(f"{te_dir}: no part-NNNNN-of-NNNNN.csv.gz files")
    maps: dict[str, dict[str, int]] = {c: {} for c in PASS_COLUMNS}
    maps["missing_info"][MISSING_INFO_SYNTHESISED] = 0
    names = ("time", "job", "task", "event", *PASS_COLUMNS)
    per_file: dict[str, list[np.ndarray]] = {c: [] for c in names}
    bad = BadRows()
    skipped = {R_UNPARSEABLE: 0, R_BAD_EVENT: 0}
    for _, file in tqdm(files, desc="source task_events", disable=not progress, leave=False):
        rel = f"task_events/{file.name}"
        per_batch: dict[str, list[np.ndarray]] = {c: [] for c in names}
        for batch in iter_batches(file, TASK_EVENT_COLUMNS, list(TASK_EVENT_COLUMNS), bad, rel):
            (t, t_ok), (job, j_ok), (task, k_ok), (ev, e_ok) = int_columns(
                batch, ("time", "job_id", "task_index", "event_type")
            )
            _, cpu_bad = to_float(batch.column("cpu"))
            _, mem_bad = to_float(batch.column("mem"))
            # the converter's test of a usable row (fairsim.traces.google2011)
            ok = t_ok & j_ok & k_ok & e_ok & ~cpu_bad & ~mem_bad
            ok &= (t >= 0) & (t != AFTER_WINDOW_US) & (job >= 0)
            ok &= (task >= 0) & (task < TASK_INDEX_LIMIT)
            bad_ev = ok & ((ev < SUBMIT) | (ev > UPDATE_RUNNING))
            skipped[R_UNPARSEABLE] += int((~ok).sum())
            skipped[R_BAD_EVENT] += int(bad_ev.sum())
            keep = np.nonzero(ok & ~bad_ev)[0]
            per_batch["time"].append(t[keep])
            per_batch["job"].append(job[keep])
            per_batch["task"].append(task[keep].astype(np.int32))
            per_batch["event"].append(ev[keep].astype(np.int8))
            for name in PASS_COLUMNS:
                enc = pc.dictionary_encode(batch.column(name))
                mapping = maps[name]
                lut = np.array(
                    [mapping.setdefault(v, len(mapping)) for v in enc.dictionary.to_pylist()],
                    dtype=np.int32,
                )
                idx = np.asarray(enc.indices.fill_null(-1), dtype=np.int64)[keep]
                code = np.full(len(keep), -1, np.int32)
                if len(lut):
                    code[idx >= 0] = lut[idx[idx >= 0]]
                per_batch[name].append(code)
        # one array per file and column, not per batch: fewer, larger blocks
        for name in names:
            if per_batch[name]:
                per_file[name].append(np.concatenate(per_batch[name]))
        del per_batch
    skipped[R_MALFORMED] = bad.count
    if not per_file["time"] or sum(len(a) for a in per_file["time"]) == 0:
        raise TraceError(f"{te_dir}: no usable task_events rows")
    codes = {name: _small_codes(per_file.pop(name), len(maps[name])) for name in PASS_COLUMNS}
    values = {
        name: pa.array(sorted(maps[name], key=maps[name].__getitem__), pa.string())
        for name in PASS_COLUMNS
    }
    task = np.concatenate(per_file.pop("task"))
    event = np.concatenate(per_file.pop("event"))
    n_rows = len(task)

    # time 0 (before the window) is taken at the window start, as the converter does
    t_eff = np.maximum(np.concatenate(per_file.pop("time")), WINDOW_START_US)
    t_end = int(t_eff.max())
    jobs, jidx = np.unique(np.concatenate(per_file.pop("job")), return_inverse=True)
    jidx = jidx.astype(np.int64)
    origin = np.full(len(jobs), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(origin, jidx, t_eff)
    r = t_eff
    r -= origin[jidx]  # µs after the job's first row (in place)
    del t_eff

    # tasks: distinct (job, task index); open ones get a LOST entry at the source's end
    tasks, tidx = np.unique(jidx * TASK_INDEX_LIMIT + task, return_inverse=True)
    task_job = tasks // TASK_INDEX_LIMIT
    del tasks
    life = np.nonzero((event >= SCHEDULE) & (event <= LOST))[0]
    life = life[np.argsort(tidx[life], kind="stable")]
    lt = tidx[life]
    last_rows = life[np.r_[lt[1:] != lt[:-1], True]] if len(life) else life
    del life, lt
    open_rows = last_rows[event[last_rows] == SCHEDULE]
    lost_r = t_end - origin[jidx[open_rows]]
    first_r = np.full(len(task_job), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first_r, tidx, r)
    del tidx
    stride = int(max(r.max(), lost_r.max() if len(lost_r) else 0)) + 1
    if len(jobs) >= (1 << 62) // stride:  # pragma: no cover - a trace far beyond Google's
        raise TraceError(f"{te_dir}: {len(jobs)} jobs over {stride} µs do not fit a 64-bit key")
    task_key = np.sort(task_job * stride + first_r)
    del first_r

    # entries: the rows and the LOST rows, sorted by (job, r); ties in file order, LOST last
    key = np.concatenate([jidx * stride + r, jidx[open_rows] * stride + lost_r])
    del r
    job_rmax = np.zeros(len(jobs), np.int64)
    np.maximum.at(job_rmax, jidx, key[:n_rows] - jidx * stride)
    np.maximum.at(job_rmax, jidx[open_rows], lost_r)
    job_entries = np.bincount(jidx, minlength=len(jobs)) + np.bincount(
        jidx[open_rows], minlength=len(jobs)
    )
    del jidx
    order = np.argsort(key, kind="stable")
    key = key[order]
    row = np.concatenate([np.arange(n_rows, dtype=np.int32), open_rows.astype(np.int32)])[order]
    lost = order >= n_rows
    del order
    report = {
        "parts": [i for i, _ in files],
        "rows_read": n_rows + sum(skipped.values()),
        "rows": n_rows,
        "rows_skipped": skipped,
        "jobs": len(jobs),
        "tasks": len(task_job),
        "open_tasks_closed_lost": len(open_rows),
        "largest_job_tasks": int(np.bincount(task_job).max()),
        "window_s": [WINDOW_START_US / 1e6, t_end / 1e6],
    }
    return _Source(
        key=key,
        row=row,
        lost=lost,
        stride=stride,
        task_index=task,
        event=event,
        codes=codes,
        values=values,
        job_tasks=np.bincount(task_job, minlength=len(jobs)).astype(np.int64),
        job_rmax=job_rmax,
        job_entries=job_entries.astype(np.int64),
        task_key=task_key,
        report=report,
    )


def _draw_jobs(job_tasks: np.ndarray, tasks: int, rng: np.random.Generator) -> np.ndarray:
    """Source job indices drawn uniformly with replacement until about ``tasks`` tasks.

    The draw that crosses ``tasks`` is kept when that brings the total closer to ``tasks``.
    """
    drawn: list[np.ndarray] = []
    total = 0
    while True:
        chunk = rng.integers(0, len(job_tasks), _DRAW_CHUNK)
        cum = total + np.cumsum(job_tasks[chunk])
        m = int(np.searchsorted(cum, tasks, side="left"))
        if m < len(chunk):
            before = int(cum[m - 1]) if m else total
            keep = m + 1 if (int(cum[m]) - tasks <= tasks - before or before == 0) else m
            drawn.append(chunk[:keep])
            return np.concatenate(drawn)
        drawn.append(chunk)
        total = int(cum[-1])


def _ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Concatenated ``arange(lo[i], hi[i])``, and the ``i`` of each element."""
    counts = hi - lo
    owner = np.repeat(np.arange(len(lo)), counts)
    start = np.cumsum(counts) - counts
    return np.arange(int(counts.sum()), dtype=np.int64) - start[owner] + lo[owner], owner


def _column(src: _Source, name: str, rows: np.ndarray, lost: np.ndarray) -> pa.Array:
    code = src.codes[name][rows]
    if name == "missing_info":
        code = np.where(lost, 0, code)  # code 0 is MISSING_INFO_SYNTHESISED
    return pa.DictionaryArray.from_arrays(pa.array(code, mask=code < 0), src.values[name])


def _write_part(path: Path, table: pa.Table) -> int:
    """Write ``table`` as a headerless gzip CSV (deterministic bytes); return its size."""
    with atomic_path(path) as tmp, open(tmp, "wb") as raw:
        # mtime=0 and no file name in the gzip header: the same rows give the same bytes
        with gzip.GzipFile(
            filename="", mode="wb", compresslevel=GZIP_LEVEL, fileobj=raw, mtime=0
        ) as gz:
            opts = pacsv.WriteOptions(
                include_header=False, batch_size=1 << 16, quoting_style="none"
            )
            pacsv.write_csv(table, gz, opts)
    return path.stat().st_size


def _check_arguments(tasks: int, duration_s: float, parts: int, seed: int) -> None:
    """Refuse arguments of :func:`resample_google_2011` out of range (``ValueError`` naming the
    argument and its value)."""
    if isinstance(tasks, bool) or not isinstance(tasks, (int, np.integer)) or tasks < 1:
        raise ValueError(f"tasks must be an integer >= 1, got {tasks!r}")
    if not (isinstance(duration_s, (int, float)) and np.isfinite(duration_s) and duration_s > 0):
        raise ValueError(
            f"duration_s must be a positive, finite number of seconds, got {duration_s!r}"
        )
    if (
        isinstance(parts, bool)
        or not isinstance(parts, (int, np.integer))
        or not 1 <= parts <= 99_999
    ):
        raise ValueError(f"parts must be an integer between 1 and 99999, got {parts!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")


def _write_parts(
    source: _Source,
    drawn: np.ndarray,
    offset: np.ndarray,
    te_dir: Path,
    parts: int,
    span_us: int,
    progress: bool,
) -> tuple[int, int, int]:
    """Write the task_events parts of the drawn jobs (``drawn``: source job indices in order of
    start; ``offset``: their start, µs, sorted), each an equal slice of the window of
    ``span_us`` µs from the window start; return the rows, the LOST rows and the bytes
    written."""
    te_dir.mkdir(parents=True, exist_ok=True)
    job_id = np.arange(1, len(drawn) + 1, dtype=np.int64)  # fresh IDs, in order of start
    rmax_all = int(source.job_rmax.max())
    bounds = WINDOW_START_US + (np.arange(parts + 1, dtype=np.int64) * span_us) // parts
    n_rows = n_lost = n_bytes = 0
    for k in tqdm(range(parts), desc="task_events", disable=not progress):
        a, b = int(bounds[k]), int(bounds[k + 1])
        lo_job = int(np.searchsorted(offset, a - rmax_all, side="left"))
        hi_job = int(np.searchsorted(offset, b, side="left"))
        sel = np.arange(lo_job, hi_job)
        sel = sel[offset[sel] + source.job_rmax[drawn[sel]] >= a]
        base = drawn[sel] * source.stride
        lo = np.searchsorted(source.key, base + np.maximum(a - offset[sel], 0), side="left")
        hi = np.searchsorted(
            source.key, base + np.minimum(b - offset[sel], source.stride), side="left"
        )
        ent, owner = _ranges(lo, hi)
        new_t = offset[sel][owner] + (source.key[ent] - base[owner])  # + r
        order = np.argsort(new_t, kind="stable")  # ties: jobs in order of start, file order
        ent, owner, new_t = ent[order], owner[order], new_t[order]
        if len(ent) == 0:
            raise TraceError(
                f"task_events part {k} of {parts} ({a / 1e6:.0f}-{b / 1e6:.0f} s) has no rows: "
                f"use fewer parts or more tasks"
            )
        rows, lost = source.row[ent], source.lost[ent]
        event = np.where(lost, LOST, source.event[rows]).astype(np.int8)
        data = {
            "time": pa.array(new_t, pa.int64()),
            "missing_info": _column(source, "missing_info", rows, lost),
            "job_id": pa.array(job_id[sel][owner], pa.int64()),
            "task_index": pa.array(source.task_index[rows], pa.int32()),
            "machine_id": _column(source, "machine_id", rows, lost),
            "event_type": pa.array(event, pa.int8()),
            **{c: _column(source, c, rows, lost) for c in PASS_COLUMNS[2:]},
        }
        table = pa.table([data[c] for c in TASK_EVENT_COLUMNS], names=list(TASK_EVENT_COLUMNS))
        n_bytes += _write_part(te_dir / f"part-{k:05d}-of-{parts:05d}.csv.gz", table)
        n_rows += len(ent)
        n_lost += int(lost.sum())
    return n_rows, n_lost, n_bytes


def _copy_machine_events(src: Path, out: Path) -> list[str]:
    """Copy the source's machine_events parts, when it has them, into ``out/machine_events``
    (each atomically); return the tables copied (``["machine_events"]`` or ``[]``)."""
    me_src = src / "machine_events"
    if not me_src.is_dir():
        return []
    me_dir = out / "machine_events"
    me_dir.mkdir(parents=True, exist_ok=True)
    for f in sorted(p for p in me_src.iterdir() if PART_RE.match(p.name)):
        with atomic_path(me_dir / f.name) as tmp:
            shutil.copyfile(f, tmp)
    return ["machine_events"]


def resample_google_2011(
    src: Path,
    out: Path,
    *,
    tasks: int,
    duration_s: float,
    seed: int,
    parts: int = 500,
    progress: bool = True,
) -> dict[str, Any]:
    """Write a raw Google 2011 trace of about ``tasks`` tasks by resampling the jobs of ``src``.

    See the module docstring for what is resampled and how time-0 rows, right-censoring and
    the window's end are handled.

    Parameters
    ----------
    src : pathlib.Path
        A Google 2011 folder with ``task_events/part-NNNNN-of-NNNNN.csv.gz`` (every part present
        is read; the shared sample has parts 0-13) and optionally ``machine_events/``.
    out : pathlib.Path
        Output folder (created if needed): ``task_events/part-NNNNN-of-{parts:05d}.csv.gz``,
        ``machine_events/`` (a copy of the source's, when it has one) and ``synth.json``.
    tasks : int
        Distinct tasks to draw (>= 1); the drawn count is within half the largest source job of
        it (the report's ``tasks``). Tasks whose first row falls past the window's end are drawn
        but not written (``tasks_in_window``).
    duration_s : float
        Length of the window in seconds (> 0); it runs from 600 s (Google's window start) to
        ``600 + duration_s``. 29 days: 2,505,600 s.
    seed : int
        Seed (>= 0); the same source, arguments and seed give byte-identical part files.
    parts : int
        Number of task_events part files (>= 1), each an equal slice of the window.
    progress : bool
        Show tqdm progress bars.

    Returns
    -------
    dict
        The report, also written atomically to ``out/synth.json``: ``tasks`` (drawn),
        ``tasks_in_window``, ``jobs``, ``rows`` (written), ``rows_past_end``, ``lost_rows``
        (synthesised LOST rows written), ``parts``, ``window_s``, ``bytes`` (of the task_events
        files), ``seconds`` (wall time), ``source`` (what was read) and the arguments.

    Raises
    ------
    ValueError
        If ``tasks``, ``duration_s``, ``parts`` or ``seed`` is out of range (the message names
        the argument and its value).
    TraceError
        If ``src`` has no task_events parts or no usable row, or a written part would be empty
        (fewer parts or more tasks fix it).
    """
    started = _time.perf_counter()
    _check_arguments(tasks, duration_s, parts, seed)
    src, out = Path(src), Path(out)
    if not src.is_dir():
        raise TraceError(f"{src}: {'not a directory' if src.exists() else 'no such folder'}")

    source = _read_source(src, progress)
    draw_rng, offset_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))
    drawn = _draw_jobs(source.job_tasks, int(tasks), draw_rng)
    start_us = WINDOW_START_US
    span_us = max(round(duration_s * 1e6), 1)
    end_us = start_us + span_us
    offset = start_us + np.sort(offset_rng.integers(0, span_us, len(drawn)))

    # tasks whose first row falls in the window (the others are drawn but never written)
    in_window = np.searchsorted(
        source.task_key, drawn * source.stride + np.minimum(end_us - offset, source.stride)
    )
    in_window -= np.searchsorted(source.task_key, drawn * source.stride)
    n_rows, n_lost, n_bytes = _write_parts(
        source, drawn, offset, out / "task_events", parts, span_us, progress
    )
    tables = ["task_events", *_copy_machine_events(src, out)]
    report: dict[str, Any] = {
        "format": FORMAT,
        "generator": "fairsim.traces.synth_raw.resample_google_2011",
        "src": str(src),
        "seed": int(seed),
        "tasks_requested": int(tasks),
        "tasks": int(source.job_tasks[drawn].sum()),
        "tasks_in_window": int(in_window.sum()),
        "jobs": len(drawn),
        "rows": n_rows,
        "rows_past_end": int(source.job_entries[drawn].sum()) - n_rows,
        "lost_rows": n_lost,
        "parts": int(parts),
        "window_s": [start_us / 1e6, end_us / 1e6],
        "duration_s": float(duration_s),
        "bytes": n_bytes,
        "tables": tables,
        "missing_tables": ["job_events", "task_constraints", "machine_attributes"],
        "source": source.report,
        "seconds": round(_time.perf_counter() - started, 3),
    }
    write_json_atomic(report, out / "synth.json")
    log.info(
        "google-2011 resample: %d tasks, %d jobs, %d rows in %d parts, %.1f s",
        report["tasks"], report["jobs"], n_rows, parts, report["seconds"],
    )  # fmt: skip
    return report
