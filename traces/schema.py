"""Canonical, versioned schemas of the two tables every trace converter writes.

fairsim turns each published trace into two Parquet tables (docs/architecture.md, "Data flow"):

``tasks.parquet``
    One row per task, sorted by ``(submit_s, job_id, task_index)``. Columns, in order:

    ========== ========= =====================================================================
    column     type      meaning
    ========== ========= =====================================================================
    job_id     int64     job identifier from the trace
    task_index int32     index of the task within its job
    user       string    user (Google: the hashed user name)
    submit_s   float64   first SUBMIT time, seconds of trace time (0 = before the window)
    cpu        float64   CPU request, normalised so that the largest machine has 1
    mem        float64   memory request, normalised so that the largest machine has 1
    run_s      float64   run time in seconds (see the converter for how it is derived);
                         null when the task never ran in the trace
    end_state  string    how the task's last attempt ended: ``finish``, ``fail``, ``kill``,
                         ``evict``, ``lost``, ``censored`` (still running at window end) or
                         ``unscheduled`` (never scheduled within the window)
    censored   bool      right-censored: the trace data ends while the task runs (its last
                         attempt has no end), so ``run_s`` is only a lower bound of its run
                         time; the simulator never counts such a task as completed
    attempts   int32     number of SCHEDULE events seen for the task
    instances  int32     identical instances this row stands for (Google: always 1)
    constraint string    placement constraint (a machine class label), null when unconstrained
    parents    string    comma-separated DAG parent task names, null when none
    priority   int32     the trace's priority of the task (Google 2011: 0-11, bigger is more
                         important; :data:`GOOGLE_PRIORITY_BANDS`), null when the trace has none
    scheduling_class
               int32     the trace's scheduling class (Google 2011: 0-3, 3 the most
                         latency-sensitive), null when the trace has none
    qos        string    the trace's quality-of-service class (Alibaba GPU 2023: ``LS``,
                         ``BE``, ``Burstable``, ``Guaranteed``), null when the trace has none
    ========== ========= =====================================================================

``servers.parquet``
    One row per server: ``server`` (string id), one float64 column per resource (``cpu``,
    ``mem``, ...) with its capacity in the trace's normalised units, ``platform`` (string, may be
    null).

``placements.parquet`` (Google 2011 only)
    One row per recorded run of a task of ``tasks.parquet``: a SCHEDULE event and the task's next
    terminal event. Columns, in order:

    ========== ========= =====================================================================
    column     type      meaning
    ========== ========= =====================================================================
    job_id     int64     job identifier (as in ``tasks.parquet``)
    task_index int32     index of the task within its job
    run        int32     0, 1, 2, ... in time order within the task
    machine    string    the SCHEDULE row's machine ID, as ``servers.parquet``'s ``server``
    start_s    float64   SCHEDULE time, seconds (a time-0 SCHEDULE is taken at 600 s)
    end_s      float64   terminal event time, seconds; for a right-censored run the last event
                         time of all converted parts (a lower bound)
    end_event  string    ``finish``, ``fail``, ``kill``, ``evict``, ``lost`` or ``censored``
    censored   bool      ``end_event == "censored"``
    cpu        float64   the CPU request of the SCHEDULE row: the request the run was placed
                         with (:func:`fairsim.traces.google2011.schedule_request`), normalised
                         as in ``tasks.parquet``
    mem        float64   the memory request of the SCHEDULE row, likewise
    ========== ========= =====================================================================

    Sorted by ``(start_s, job_id, task_index, run)``; its own version,
    :data:`PLACEMENTS_SCHEMA_VERSION`, under the same metadata key. A task's runs may carry
    requests other than the task's ``cpu`` and ``mem`` (its first request, the converter's rule):
    a task resubmitted with a new request, or updated while pending.

All tables carry the schema version and the resource names in the Parquet key-value metadata
(keys ``fairsim.schema`` and ``fairsim.resources``, the latter a JSON list).
"""

from __future__ import annotations

import json

import pyarrow as pa

#: Version 2 added the ``censored`` column, version 3 ``priority``, ``scheduling_class`` and
#: ``qos`` (older tables are converted again; a canonical table of an older version reads as
#: one whose tasks carry no priority).
SCHEMA_VERSION = "3"
#: Version of ``placements.parquet`` (independent of the tasks table's). Version 2 added each
#: run's request (``cpu``, ``mem``: its SCHEDULE row's); a version 1 table is converted again.
PLACEMENTS_SCHEMA_VERSION = 2
RESOURCES_GOOGLE = ("cpu", "mem")
PLACEMENT_END_EVENTS = ("finish", "fail", "kill", "evict", "lost", "censored")
END_STATES = ("finish", "fail", "kill", "evict", "lost", "censored", "unscheduled")
#: The Google 2011 trace's priority bands (inclusive): ``free`` 0-1 and ``production`` 9-11 as
#: Google's ClusterData2011_2.md documents them ("0 and 1 are 'free' priorities; 9, 10, and 11
#: are 'production' priorities"), ``middle`` the priorities between, as Reiss et al. (SoCC 2012)
#: group the trace's tasks (docs/traces.md, "Priorities and tiers").
GOOGLE_PRIORITY_BANDS: dict[str, tuple[int, int]] = {
    "free": (0, 1),
    "middle": (2, 8),
    "production": (9, 11),
}
#: The tier columns of the tasks table (version 3), all nullable: what a trace says of a task's
#: importance. A table written without them gets them as nulls
#: (:func:`fairsim.traces.io.write_tasks`).
TIER_COLUMNS = ("priority", "scheduling_class", "qos")


def tasks_schema(resources: tuple[str, ...] = RESOURCES_GOOGLE) -> pa.Schema:
    """Arrow schema of the canonical tasks table.

    Parameters
    ----------
    resources : tuple of str
        Resource column names, in order (Google 2011: ``("cpu", "mem")``).

    Returns
    -------
    pyarrow.Schema
        Schema with the version and resource names in its metadata.
    """
    fields = [
        pa.field("job_id", pa.int64(), nullable=False),
        pa.field("task_index", pa.int32(), nullable=False),
        pa.field("user", pa.string(), nullable=False),
        pa.field("submit_s", pa.float64(), nullable=False),
        *[pa.field(r, pa.float64(), nullable=False) for r in resources],
        pa.field("run_s", pa.float64()),
        pa.field("end_state", pa.string(), nullable=False),
        pa.field("censored", pa.bool_(), nullable=False),
        pa.field("attempts", pa.int32(), nullable=False),
        pa.field("instances", pa.int32(), nullable=False),
        pa.field("constraint", pa.string()),
        pa.field("parents", pa.string()),
        pa.field("priority", pa.int32()),
        pa.field("scheduling_class", pa.int32()),
        pa.field("qos", pa.string()),
    ]
    return pa.schema(fields, metadata=_metadata("tasks", resources))


def servers_schema(resources: tuple[str, ...] = RESOURCES_GOOGLE) -> pa.Schema:
    """Arrow schema of the canonical servers table.

    Parameters
    ----------
    resources : tuple of str
        Resource column names, in order.

    Returns
    -------
    pyarrow.Schema
    """
    fields = [
        pa.field("server", pa.string(), nullable=False),
        *[pa.field(r, pa.float64(), nullable=False) for r in resources],
        pa.field("platform", pa.string()),
    ]
    return pa.schema(fields, metadata=_metadata("servers", resources))


def placements_schema(resources: tuple[str, ...] = RESOURCES_GOOGLE) -> pa.Schema:
    """Arrow schema of the recorded placements table (``placements.parquet``).

    Parameters
    ----------
    resources : tuple of str
        The request columns of each run, in order (Google 2011: ``("cpu", "mem")``).

    Returns
    -------
    pyarrow.Schema
        Schema with ``fairsim.table = "placements"``, ``fairsim.schema =
        str(PLACEMENTS_SCHEMA_VERSION)`` and ``fairsim.resources`` in its metadata.
    """
    fields = [
        pa.field("job_id", pa.int64(), nullable=False),
        pa.field("task_index", pa.int32(), nullable=False),
        pa.field("run", pa.int32(), nullable=False),
        pa.field("machine", pa.string(), nullable=False),
        pa.field("start_s", pa.float64(), nullable=False),
        pa.field("end_s", pa.float64(), nullable=False),
        pa.field("end_event", pa.string(), nullable=False),
        pa.field("censored", pa.bool_(), nullable=False),
        *[pa.field(r, pa.float64(), nullable=False) for r in resources],
    ]
    meta = {
        "fairsim.table": "placements",
        "fairsim.schema": str(PLACEMENTS_SCHEMA_VERSION),
        "fairsim.resources": json.dumps(list(resources)),
    }
    return pa.schema(fields, metadata=meta)


def resources_of(schema: pa.Schema) -> tuple[str, ...]:
    """Resource names recorded in a canonical table's metadata.

    Raises
    ------
    ValueError
        If the schema carries no ``fairsim.resources`` metadata (not a canonical table).
    """
    meta = schema.metadata or {}
    raw = meta.get(b"fairsim.resources")
    if raw is None:
        raise ValueError("table has no 'fairsim.resources' metadata: not a fairsim canonical table")
    return tuple(json.loads(raw))


def _metadata(table: str, resources: tuple[str, ...]) -> dict[str, str]:
    return {
        "fairsim.table": table,
        "fairsim.schema": SCHEMA_VERSION,
        "fairsim.resources": json.dumps(list(resources)),
    }
