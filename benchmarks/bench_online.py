"""``make bench``: speed and memory benchmarks of the engine against its targets (docs/bench.md).

Four benchmarks, each a list of *points* (one scheduler on one workload and one pool):

``real-2000``
    FF- and BF-DRFH on the real Google sample (task_events parts 0-13) with 2,000 Table I servers
    (drawn with the config's seed, as ``make experiment`` does). Compared with the absolute targets
    (BF >= 60,000 tasks/s, FF >= 100,000 tasks/s, peak RSS < 2,048 MB) and with the reference
    "minimal heapq + numpy replay" (46,000 FF / 26,000 BF tasks/s; pass if within 2x of it).
``online-2000``
    Every other built-in scheduler of the registry (:mod:`fairsim.schedulers.registry`) that runs
    without parameters: the online mechanisms (``drf``, ``c-drfh``, ``tsf``, ``af``, ``pf``,
    ``bmf``, ``lmm-mms``; :mod:`fairsim.schedulers.online_mechanisms`), distributed PS-DSF
    (``psdsf``), ``drf-classes``, ``drf-lockstep`` and ``udrf``, on the real Google sample with
    the ``real-2000`` pool. Target: each >= 25,000 tasks/s, peak RSS < 2,048 MB.
``servers``
    BF- and FF-DRFH on the real sample with 500 / 2,000 / 12,583 Table I servers: the cost curve
    versus the number of servers (should be sub-linear; Best-Fit at 12,583 servers at most 1.5x
    its cost per task at 2,000).
``tasks``
    BF- and FF-DRFH on synthetic Google-like workloads of 10^4 / 10^5 / 10^6 / 10^7 tasks on 2,000
    servers at the sample's load per hour (the generator's window scales with the number of tasks,
    :func:`fairsim.traces.synth.default_duration_s`): cost per task and the ratio
    cost(largest) / cost(smallest) (target <= 1.5).
``tiers``
    Flat BF-DRFH and online H-DRF (``hdrf``, Best-Fit placement) on the ``real-2000`` workload
    and pool, H-DRF on the tree of ``configs/google-tiers.yaml`` (the trace's three tiers, each
    user a leaf under its tier; the tasks carry their queue), BF-DRFH on the same workload
    without the tree. Target: ``hdrf``'s tasks/s at least 2/3 of BF-DRFH's.
``tasks-dense``
    The stress case: the same sizes up to 10^6 in the sample's fixed 70,756 s window, so larger
    sizes are *denser* loads (more queueing, higher utilisation), not longer traces. Reported with
    the ratio cost(10^6) / cost(10^4) (target <= 2).

``make bench-scale`` (:mod:`benchmarks.bench_scale`, too long for ``make bench``) runs the whole
path from raw files: 25 million tasks over 29 days, converted, then FF- and BF-DRFH on the trace's
12,583 machines.

Every point runs in a fresh child process (``python -m benchmarks.bench_online --one KIND
...``, from the repository's root) so that its peak RSS is its own (:mod:`benchmarks.child`);
the child prints one JSON object on stdout. Points run one after another, never in parallel.
The timed quantity is the engine's wall time (``EngineResult.wall_s``); loading/generating the
workload and drawing the pool are reported separately as ``setup_s``.

With ``--vs REV`` (``make bench`` passes ``HEAD~1``) every point of ``real-2000``,
``online-2000`` and ``servers`` runs four times, A B A B: this tree, then REV checked out in a
temporary git worktree (its children import ``fairsim`` and run the harness from there), so that
both revisions see the same machine load. A point reports the median of its A runs and the ratio
of the medians.

Outputs (written atomically into ``--out``): ``real-2000.json``, ``online-2000.json``,
``servers.json``, ``tiers.json``, ``tasks.json``, ``tasks-dense.json`` (each
:meth:`benchmarks.targets.RunInfo.record`: the targets, the commit and the machine, then the
points) and ``summary.md``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.child import child_json
from benchmarks.targets import RunInfo, Target, start, write_result
from fairsim.atomic import write_text
from fairsim.experiments import config_path
from fairsim.schedulers.registry import registrations

log = logging.getLogger("benchmarks.bench_online")

BENCHMARKS = ("real-2000", "online-2000", "servers", "tiers", "tasks", "tasks-dense")
SCHEDULERS = ("ff-drfh", "bf-drfh")
CONFIG = config_path("drfh-google.yaml")

#: Engineering targets (docs/bench.md; issue 15 raised them from 20,000 / 50,000 / 10,000).
TARGET_TASKS_PER_S = {"bf-drfh": 60_000.0, "ff-drfh": 100_000.0}
REFERENCE_TASKS_PER_S = {"ff-drfh": 46_000.0, "bf-drfh": 26_000.0}  # minimal heapq + numpy replay
REFERENCE_FACTOR = 2.0
TARGET_PEAK_RSS_MB = 2048.0
#: Every other built-in scheduler that runs without parameters (a registry row without
#: ``examples``), on the real sample with 2,000 servers; derived from the registry. Not
#: ``recorded`` (a row with ``requires``): it replays on the trace's own machines, benchmarked
#: by ``benchmarks.bench_recorded`` beside FF-DRFH on that pool.
ONLINE_SCHEDULERS = tuple(
    r.name
    for r in registrations(plugins=False)
    if not r.examples and not r.requires and r.name not in SCHEDULERS
)
TARGET_ONLINE_TASKS_PER_S = 25_000.0
#: Best-Fit's cost per task at 12,583 servers over its cost at 2,000 (an index, not a scan).
TARGET_BF_SERVER_RATIO = 1.5
#: Benchmarks whose points run paired with ``--vs REV`` (A B A B: this tree, then REV's).
PAIRED = ("real-2000", "online-2000", "servers")
ONLINE_REFERENCE = "ff-drfh"  # run alongside, as a yardstick of the machine's speed
#: ``tiers``: the queue tree of this config on the ``real-2000`` workload and pool; hdrf's
#: speed over flat BF-DRFH's (issue 41).
TIERS_CONFIG = config_path("google-tiers.yaml")
TIERS_SCHEDULERS = ("bf-drfh", "hdrf")
TARGET_TIERS_RATIO = 2.0 / 3.0
TARGET_TASK_COST_RATIO = 1.5  # constant load per hour
TARGET_DENSE_COST_RATIO = 2.0  # the dense stress case

SERVER_SIZES = (500, 2_000, 12_583)
SERVER_SIZES_QUICK = (500, 2_000)
TASK_SIZES = (10_000, 100_000, 1_000_000, 10_000_000)
DENSE_SIZES = (10_000, 100_000, 1_000_000)
TASK_SIZES_QUICK = (10_000, 100_000)
SYNTH_SERVERS = 2_000
DENSE_DURATION_S = 70_756.0  # the Google sample's window, whatever the number of tasks
SEED = 1
INTERVAL_S = 60.0
CHILD_TIMEOUT_S = 3_600.0


# --------------------------------------------------------------------------- one point (child)


def _peak_rss_mb() -> float:
    """Peak resident set size of this process in MB (``ru_maxrss`` is KiB on Linux)."""
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024.0 if sys.platform != "darwin" else kb / 2**20


def _measure(
    scheduler: str,
    capacity: np.ndarray,
    source: Any,
    start_s: float,
    end_s: float,
    tasks_out: Path | None = None,
) -> dict[str, Any]:
    """Run one point; with ``tasks_out``, ended tasks are streamed to that file
    (``collect.stream_tasks``) and the engine time includes writing it."""
    from fairsim.scenario.scheduler_run import run_scheduler

    r = run_scheduler(
        scheduler,
        capacity,
        source,
        start_s=start_s,
        horizon_s=end_s,
        interval_s=INTERVAL_S,
        tasks_out=tasks_out,
    )
    if r.streamed is not None:
        s = r.streamed
        return _point(
            r,
            scheduler,
            capacity,
            s.rows,
            s.started,
            int(s.ended[0]),
            end_s - start_s,
            streamed={
                "tasks_file_mb": s.path.stat().st_size / 2**20,
                "row_groups": s.row_groups,
                "jobs": len(s.jobs),
            },
        )
    n = len(r.tasks["submit_s"])
    server, finish = r.tasks.get("server"), r.tasks.get("finish_s")
    # counted in slices: a temporary of n booleans would add to the peak being measured
    step = 1 << 20
    started = (
        sum(int(np.count_nonzero(server[i : i + step] >= 0)) for i in range(0, n, step))
        if server is not None
        else None
    )
    finished = (
        sum(int(np.count_nonzero(np.isfinite(finish[i : i + step]))) for i in range(0, n, step))
        if finish is not None
        else None
    )
    return _point(r, scheduler, capacity, n, started, finished, end_s - start_s)


def _point(
    r: Any,
    scheduler: str,
    capacity: np.ndarray,
    n: int,
    started: int | None,
    finished: int | None,
    horizon_s: float,
    streamed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    util = r.mean_utilization if r.mean_utilization is not None else np.full(2, np.nan)
    wall = float(r.wall_s)
    return {
        "scheduler": scheduler,
        "servers": int(capacity.shape[0]),
        "tasks": n,
        "tasks_started": started,
        "tasks_finished": finished,
        "wall_s": wall,
        "tasks_per_s": n / wall if wall > 0 else None,
        "us_per_task": 1e6 * wall / n if n else None,
        "util_cpu": float(util[0]),
        "util_mem": float(util[1]),
        "horizon_s": float(horizon_s),
        "skipped": {str(k): int(v) for k, v in (r.skipped or {}).items()},
        **({"streamed": streamed} if streamed is not None else {}),
    }


def run_real_point(scheduler: str, servers: int, shared: Path) -> dict[str, Any]:
    """One scheduler on the real Google sample (parts 0-13) with ``servers`` Table I servers."""
    from fairsim.scenario.config import load_config
    from fairsim.scenario.pool import build_pool, pool_capacity
    from fairsim.scenario.workload import resolve_workload

    t0 = time.perf_counter()
    cfg = load_config(
        CONFIG,
        overrides=[
            f"trace.path={Path(shared) / 'traces' / 'google-2011'}",
            f"cluster.servers={servers}",
        ],
    )
    w = resolve_workload(cfg)
    cap = pool_capacity(build_pool(cfg))
    setup = time.perf_counter() - t0
    out = _measure(scheduler, cap, w.open(), w.start_s, w.end_s)
    conv = w.describe.get("conversion", {})
    out.update(
        workload="google-2011 parts 0-13",
        trace_tasks=conv.get("tasks"),
        trace_users=conv.get("users"),
        tasks_parquet=w.describe.get("tasks_parquet"),
        setup_s=setup,
    )
    return out


def run_tiers_point(scheduler: str, servers: int, shared: Path) -> dict[str, Any]:
    """``hdrf`` (Best-Fit) on the queue tree of ``configs/google-tiers.yaml``, or ``bf-drfh``
    without it, on the real Google sample (parts 0-13, the whole window) with ``servers`` Table
    I servers: the scenario's own pipeline (:func:`fairsim.scenario.pipeline.prepare_scenario`),
    without fairness collection."""
    from fairsim.scenario.config import load_config
    from fairsim.scenario.pipeline import prepare_scenario

    t0 = time.perf_counter()
    flat = scheduler != "hdrf"
    entry = "[bf-drfh]" if flat else "[{name: hdrf, fit: best-fit}]"
    overrides = [
        f"trace.path={Path(shared) / 'traces' / 'google-2011'}",
        "trace.end_s=null",
        f"cluster.servers={servers}",
        "collect.fairness=null",
        f"schedulers={entry}",
    ]
    if flat:
        overrides += ["queues=null", "leaves=null"]
    scenario = prepare_scenario(load_config(TIERS_CONFIG, overrides=overrides))
    setup = time.perf_counter() - t0
    run = next(scenario.runs())
    assert run.result is not None
    r = run.result
    n = len(r.tasks["submit_s"])
    server, finish = r.tasks.get("server"), r.tasks.get("finish_s")
    started = int(np.count_nonzero(server >= 0)) if server is not None else None
    finished = int(np.count_nonzero(np.isfinite(finish))) if finish is not None else None
    out = _point(r, scheduler, scenario.capacity, n, started, finished, scenario.horizon_s)
    out.update(
        workload="google-2011 parts 0-13" + ("" if flat else ", the google-tiers tree"),
        setup_s=setup,
    )
    return out


def run_synth_point(
    scheduler: str, n_tasks: int, servers: int = SYNTH_SERVERS, duration_s: float | None = None
) -> dict[str, Any]:
    """One scheduler on ``synth_google_like(n_tasks, seed=SEED, duration_s=duration_s)`` with
    ``servers`` Table I servers drawn with :data:`SEED` (``duration_s`` None: the window scales
    with ``n_tasks``)."""
    seed = SEED
    from fairsim.simulator.workload import FrameTaskSource
    from fairsim.traces.pools import table_i_pool
    from fairsim.traces.synth import default_duration_s, synth_google_like

    t0 = time.perf_counter()
    window = duration_s if duration_s is not None else default_duration_s(n_tasks)
    frame = synth_google_like(n_tasks, seed=seed, duration_s=window)
    pool = table_i_pool(servers, np.random.default_rng(seed))
    cap = pool[["cpu", "mem"]].to_numpy(dtype=np.float64)
    end = float(frame["submit_s"].max()) + 1.0
    src = FrameTaskSource(frame, resources=("cpu", "mem"), start_s=0.0, end_s=end)
    setup = time.perf_counter() - t0
    out = _measure(scheduler, cap, src, 0.0, end)
    out.update(
        workload=f"synth_google_like({n_tasks}, seed={seed}, duration_s={window:.0f})",
        duration_s=window,
        setup_s=setup,
    )
    return out


def _last_submit(f: Any) -> float:
    """The last ``submit_s`` of a canonical ``tasks.parquet`` (sorted by ``submit_s``), from the
    last row group's statistics, else from that row group alone.

    Reading the whole column instead (25 million tasks: 200 MB) left about 350 MB resident in
    pyarrow's memory pool for the rest of the run, counted in the point's peak RSS.
    """
    import pyarrow.compute as pc

    last = f.metadata.num_row_groups - 1
    rg = f.metadata.row_group(last)
    for i in range(rg.num_columns):
        col = rg.column(i)
        if col.path_in_schema == "submit_s" and col.statistics is not None:
            if col.statistics.has_min_max:
                return float(col.statistics.max)
    return float(pc.max(f.read_row_group(last, columns=["submit_s"]).column(0)).as_py())


def run_parquet_point(
    scheduler: str, path: Path, servers: int, stream: bool = False
) -> dict[str, Any]:
    """One scheduler on a canonical ``tasks.parquet``, streamed row group by row group (never
    the whole table in memory), with ``servers`` Table I servers.

    With ``stream``, ended tasks are also streamed out (``collect.stream_tasks``), to a
    temporary file deleted after the point: memory then holds the live tasks only.
    """
    import tempfile

    import pyarrow.parquet as pq

    from fairsim.simulator.workload import ParquetTaskSource
    from fairsim.traces.pools import table_i_pool

    t0 = time.perf_counter()
    pool = table_i_pool(servers, np.random.default_rng(SEED))
    cap = pool[["cpu", "mem"]].to_numpy(dtype=np.float64)
    end = _last_submit(pq.ParquetFile(path)) + 1.0
    src = ParquetTaskSource(path, start_s=0.0, end_s=end)
    setup = time.perf_counter() - t0
    if not stream:
        out = _measure(scheduler, cap, src, 0.0, end)
    else:
        with tempfile.TemporaryDirectory(prefix="fairsim-bench-") as tmp:
            out = _measure(scheduler, cap, src, 0.0, end, tasks_out=Path(tmp) / "tasks.parquet")
    out.update(workload=str(path), setup_s=setup, stream_tasks=stream)
    return out


def _run_spec(spec: dict[str, Any], shared: Path | None) -> dict[str, Any]:
    """Run one point of ``spec`` (``kind`` real, synth or parquet) in this process."""
    if spec["kind"] == "synth":
        return run_synth_point(
            spec["scheduler"], spec["tasks"], spec["servers"], duration_s=spec.get("duration_s")
        )
    if spec["kind"] == "parquet":
        return run_parquet_point(
            spec["scheduler"], Path(spec["path"]), spec["servers"], bool(spec.get("stream_tasks"))
        )
    if spec["kind"] == "real" and shared is not None:
        return run_real_point(spec["scheduler"], spec["servers"], shared)
    if spec["kind"] == "tiers" and shared is not None:
        return run_tiers_point(spec["scheduler"], spec["servers"], shared)
    raise ValueError(f"point kind: {spec['kind']!r} (real and tiers need --shared)")


def _child_main(args: argparse.Namespace) -> int:
    """One point in this process, JSON on stdout (its peak RSS is measured by the parent,
    :func:`benchmarks.child.child_json`)."""
    spec = {"kind": args.one, "scheduler": args.scheduler, "servers": args.servers}
    spec.update(tasks=args.tasks, duration_s=args.duration_s, path=args.path)
    spec["stream_tasks"] = args.stream_tasks
    res = _run_spec(spec, Path(args.shared) if args.shared else None)
    res["loadavg_1m_at_end"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    sys.stdout.write(json.dumps(res) + "\n")
    sys.stdout.flush()
    return 0


# --------------------------------------------------------------------------- running points


#: Where a revision keeps this harness: the repository's ``benchmarks/`` folder, or (revisions
#: before it left the installed package) ``fairsim.experiments.benchmarks``.
HARNESS = "benchmarks.bench_online"
#: The repository holding this harness: the children run ``python -m benchmarks...`` there.
REPO = Path(__file__).resolve().parents[1]
OLD_HARNESS = "fairsim.experiments.benchmarks.bench_online"


def _point_argv(spec: dict[str, Any], shared: Path | None, tree: Path | None = None) -> list[str]:
    harness = HARNESS
    if tree is not None and not (tree / "benchmarks" / "bench_online.py").is_file():
        harness = OLD_HARNESS
    argv = [sys.executable, "-m", harness, "--one", spec["kind"]]
    argv += ["--scheduler", spec["scheduler"], "--servers", str(spec["servers"])]
    if spec["kind"] == "synth":
        argv += ["--tasks", str(spec["tasks"])]
        if spec.get("duration_s") is not None:
            argv += ["--duration-s", repr(float(spec["duration_s"]))]
    elif spec["kind"] == "parquet":
        argv += ["--path", str(spec["path"])]
        if spec.get("stream_tasks"):
            argv.append("--stream-tasks")
    else:
        argv += ["--shared", str(shared)]
    return argv


def run_point(
    spec: dict[str, Any], shared: Path | None, isolate: bool = True, tree: Path | None = None
) -> dict[str, Any]:
    """Run one point, in a child process if ``isolate`` (for a per-point peak RSS).

    With ``tree`` (a checkout of another revision, :func:`reference_tree`) the child imports
    ``fairsim`` from that tree instead (always isolated).
    """
    if tree is not None:
        isolate = True
    if not isolate:
        res = _run_spec(spec, shared)
        res["peak_rss_mb"] = _peak_rss_mb()
        res["rss_isolated"] = False
        return res
    env = None
    if tree is not None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(x for x in (str(tree), env.get("PYTHONPATH", "")) if x)
    res = child_json(
        _point_argv(spec, shared, tree),
        cwd=tree if tree is not None else REPO,
        env=env,
        timeout_s=CHILD_TIMEOUT_S,
    )
    if "error" in res:
        return {**spec, **res}
    res["rss_isolated"] = True
    return res


def _paired(spec: dict[str, Any], shared: Path | None, ref: tuple[str, Path]) -> dict[str, Any]:
    """Run ``spec`` four times, A B A B (A: this tree, B: the reference tree), and return A's
    point with the median of its runs and a ``paired`` record (both sides' runs, the ratio)."""
    rev, tree = ref
    runs = {"a": [], "b": []}  # type: dict[str, list[dict[str, Any]]]
    for side in ("a", "b", "a", "b"):
        runs[side].append(run_point(spec, shared, True, tree if side == "b" else None))
    good_a = [r for r in runs["a"] if _ok(r)]
    if not good_a:
        return runs["a"][0]
    point = dict(good_a[0])
    point["wall_s"] = float(np.median([r["wall_s"] for r in good_a]))
    point["tasks_per_s"] = point["tasks"] / point["wall_s"]
    point["us_per_task"] = 1e6 * point["wall_s"] / point["tasks"]
    point["peak_rss_mb"] = max(r["peak_rss_mb"] for r in good_a)
    tps_a = [r["tasks_per_s"] for r in good_a]
    tps_b = [r["tasks_per_s"] for r in runs["b"] if _ok(r)]
    errors = [r["error"] for r in runs["b"] if "error" in r]
    point["paired"] = {
        "ref": rev,
        "order": "A B A B",
        "tasks_per_s": tps_a,
        "ref_tasks_per_s": tps_b,
        "ref_tasks": [r["tasks"] for r in runs["b"] if _ok(r)],
        "ratio": float(np.median(tps_a) / np.median(tps_b)) if tps_b else None,
        **({"ref_error": errors[0]} if errors else {}),
    }
    return point


def reference_tree(rev: str, where: Path) -> tuple[str, Path]:
    """Check out ``rev`` of this repository into ``where`` (a detached git worktree).

    Returns ``(short commit, path)``. Raises ``RuntimeError`` with git's message when this
    module does not run from a git checkout or ``rev`` does not exist.
    """
    root = REPO
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"--vs {rev}: {proc.stderr.strip() or 'not a git checkout'}")
    short = proc.stdout.strip()
    proc = subprocess.run(
        ["git", "-C", str(root), "worktree", "add", "--detach", "--force", str(where), short],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"--vs {rev}: {proc.stderr.strip()}")
    return short, where


def _drop_tree(where: Path) -> None:
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "remove", "--force", str(where)],
        capture_output=True,
        check=False,
    )


#: The reference revision of a paired run (set by :func:`main` from ``--vs``).
_REF: dict[str, tuple[str, Path]] = {}


def _run_points(
    specs: Sequence[dict[str, Any]],
    shared: Path | None,
    isolate: bool,
    label: str,
    progress: bool,
) -> list[dict[str, Any]]:
    ref = _REF.get("ref") if label in PAIRED else None
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(specs), desc=label, unit="run", file=sys.stderr, leave=True)
    out = []
    for spec in specs:
        desc = f"{label}: {spec['scheduler']} servers={spec['servers']}" + (
            f" tasks={spec['tasks']:,}" if spec["kind"] in ("synth", "parquet") else ""
        )
        if bar is not None:
            bar.set_postfix_str(desc.split(": ", 1)[1])
        res = _paired(spec, shared, ref) if ref is not None else run_point(spec, shared, isolate)
        msg = (
            f"{desc}: ERROR {res['error']}"
            if "error" in res
            else f"{desc}: {res['tasks']:,} tasks in {res['wall_s']:.1f} s "
            f"({res['tasks_per_s']:,.0f} tasks/s, peak {res['peak_rss_mb']:.0f} MB)"
        )
        if ref is not None and res.get("paired", {}).get("ratio"):
            msg += f", {res['paired']['ratio']:.2f}× {ref[0]}"
        if bar is not None:
            bar.write(msg, file=sys.stderr)
            bar.update(1)
        else:
            log.info(msg)
        out.append(res)
    if bar is not None:
        bar.close()
    return out


def _ok(res: dict[str, Any]) -> bool:
    return "error" not in res and res.get("tasks_per_s") is not None


# --------------------------------------------------------------------------- benchmarks


def _context(p: dict[str, Any]) -> str:
    """How a point was measured, for its targets' ``context``."""
    pair = p.get("paired")
    if pair is not None:
        runs = len(pair["tasks_per_s"])
        ratio = "—" if pair.get("ratio") is None else f"{pair['ratio']:.2f}×"
        how = f"median of {runs} runs, A B A B with {pair['ref']} ({ratio} its speed)"
    else:
        how = "one run" + (", in a child process" if p.get("rss_isolated") else ", in-process")
    load = p.get("loadavg_1m_at_end")
    return how + (f"; load {load:.1f} at the end" if load is not None else "")


def _point_targets(p: dict[str, Any], speed: float, reference: float | None = None) -> list[Target]:
    """A point's targets: tasks/s >= ``speed``, >= ``reference / REFERENCE_FACTOR`` (when given,
    the minimal replay's rate) and peak RSS < :data:`TARGET_PEAK_RSS_MB`."""
    s, ctx = p["scheduler"], _context(p)
    tps = p.get("tasks_per_s") if _ok(p) else None
    rate = f"{s}, tasks per second of engine wall time"
    out = [Target.check(f"{s} speed", rate, tps, "tasks/s", ">=", speed, ctx)]
    if reference is not None:
        within = (
            f"{s} within {REFERENCE_FACTOR:g}× of the minimal replay's {reference:,.0f} tasks/s"
        )
        floor = reference / REFERENCE_FACTOR
        ref_ctx = ctx if tps is None else f"{tps / reference:.2f}× the replay's rate; {ctx}"
        out.append(Target.check(f"{s} vs reference", within, tps, "tasks/s", ">=", floor, ref_ctx))
    rss = p.get("peak_rss_mb") if _ok(p) else None
    mem = f"{s}, peak RSS of the point's process"
    out.append(Target.check(f"{s} memory", mem, rss, "MB", "<", TARGET_PEAK_RSS_MB, ctx))
    return out


def bench_real_2000(shared: Path, *, isolate: bool = True, progress: bool = True) -> dict[str, Any]:
    """FF/BF-DRFH on the real sample with 2,000 servers, against the targets and the reference.

    Returns ``points`` and ``targets`` (speed, within 2x of the reference replay, memory, per
    scheduler)."""
    specs = [{"kind": "real", "scheduler": s, "servers": 2_000} for s in SCHEDULERS]
    points = _run_points(specs, shared, isolate, "real-2000", progress)
    targets = [
        t
        for p in points
        for t in _point_targets(
            p, TARGET_TASKS_PER_S[p["scheduler"]], REFERENCE_TASKS_PER_S[p["scheduler"]]
        )
    ]
    return {"points": points, "targets": targets}


def bench_online_2000(
    shared: Path,
    *,
    isolate: bool = True,
    progress: bool = True,
    schedulers: Sequence[str] = ONLINE_SCHEDULERS,
) -> dict[str, Any]:
    """The other built-in schedulers on the real sample with 2,000 servers (each >= 25,000
    tasks/s, peak RSS < 2,048 MB).

    FF-DRFH runs first in the same benchmark as a yardstick of the machine's current speed (no
    target: ``real-2000`` checks it); each baseline records its speed relative to it.
    """
    names = [ONLINE_REFERENCE, *schedulers]
    specs = [{"kind": "real", "scheduler": s, "servers": 2_000} for s in names]
    points = _run_points(specs, shared, isolate, "online-2000", progress)
    ref = points[0].get("tasks_per_s") if _ok(points[0]) else None
    targets: list[Target] = []
    for p in points[1:]:
        tps = p.get("tasks_per_s") if _ok(p) else None
        p["vs_ff_drfh"] = tps / ref if tps and ref else None
        targets += _point_targets(p, TARGET_ONLINE_TASKS_PER_S)
    return {"points": points, "targets": targets}


def bench_tiers(shared: Path, *, isolate: bool = True, progress: bool = True) -> dict[str, Any]:
    """Flat BF-DRFH, then ``hdrf`` on the google-tiers tree, on the ``real-2000`` workload and
    pool (:func:`run_tiers_point`): ``hdrf``'s tasks/s at least :data:`TARGET_TIERS_RATIO` of
    BF-DRFH's, and its peak RSS < 2,048 MB."""
    specs = [{"kind": "tiers", "scheduler": s, "servers": 2_000} for s in TIERS_SCHEDULERS]
    points = _run_points(specs, shared, isolate, "tiers", progress)
    flat, tree = points
    ratio = (
        tree["tasks_per_s"] / flat["tasks_per_s"]
        if _ok(flat) and _ok(tree) and flat["tasks_per_s"]
        else None
    )
    tree["vs_bf_drfh"] = ratio
    ctx = (
        f"hdrf {_f(tree.get('tasks_per_s'))}, bf-drfh {_f(flat.get('tasks_per_s'))} tasks/s, "
        f"one after the other; {_context(tree)}"
    )
    what = "hdrf on the google-tiers tree, tasks/s over flat bf-drfh's on the same workload"
    targets = [Target.check("hdrf / bf-drfh", what, ratio, "×", ">=", TARGET_TIERS_RATIO, ctx)]
    rss = tree.get("peak_rss_mb") if _ok(tree) else None
    mem = "hdrf on the google-tiers tree, peak RSS of the point's process"
    targets.append(Target.check("hdrf memory", mem, rss, "MB", "<", TARGET_PEAK_RSS_MB, ctx))
    return {"points": points, "targets": targets}


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Exponent of ``y ~ x**k`` between the first and last point (log-log slope)."""
    if len(xs) < 2 or not ys[0] or not ys[-1] or ys[0] <= 0 or ys[-1] <= 0:
        return None
    return math.log(ys[-1] / ys[0]) / math.log(xs[-1] / xs[0])


def bench_servers(
    shared: Path,
    sizes: Sequence[int] = SERVER_SIZES,
    *,
    isolate: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """Cost versus the number of servers on the real sample (should be sub-linear)."""
    specs = [
        {"kind": "real", "scheduler": s, "servers": n}
        for s in ("bf-drfh", "ff-drfh")
        for n in sizes
    ]
    points = _run_points(specs, shared, isolate, "servers", progress)
    curves: dict[str, Any] = {}
    targets: list[Target] = []
    for s in ("bf-drfh", "ff-drfh"):
        pts = [p for p in points if p["scheduler"] == s]
        good = all(_ok(p) for p in pts)
        ns = [p["servers"] for p in pts]
        costs = [p.get("us_per_task") if _ok(p) else None for p in pts]
        k = _slope(ns, costs) if good else None  # type: ignore[arg-type]
        # the cost per task *started*: a larger pool starts more of the sample's tasks (every
        # start is a search, a commit and later a completion), so per task simulated it does more
        per_started = [
            1e6 * p["wall_s"] / p["tasks_started"] if _ok(p) and p.get("tasks_started") else None
            for p in pts
        ]
        # ... and per scheduling event (an arrival, a start or a completion): the engine's and
        # the scheduler's work, whatever share of the sample the pool gets to run
        per_event = [
            1e6 * p["wall_s"] / (p["tasks"] + p["tasks_started"] + p["tasks_finished"])
            if _ok(p) and p.get("tasks_started") is not None and p.get("tasks_finished") is not None
            else None
            for p in pts
        ]
        big = ns.index(12_583) if 12_583 in ns else None
        base = ns.index(2_000) if 2_000 in ns else None
        bf_ratio = (
            costs[big] / costs[base]  # type: ignore[operator]
            if good and big is not None and base is not None
            else None
        )
        curves[s] = {
            "servers": ns,
            "us_per_task": costs,
            "us_per_started_task": per_started,
            "us_per_event": per_event,
            "tasks_started": [p.get("tasks_started") for p in pts],
            "tasks_finished": [p.get("tasks_finished") for p in pts],
            "cost_ratio_12583_2000": bf_ratio,
            "cost_ratio_last_first": costs[-1] / costs[0] if good and costs[0] else None,
            "servers_ratio_last_first": ns[-1] / ns[0],
            "loglog_slope": k,
        }
        ns_text = "/".join(f"{n:,}" for n in ns)
        what = f"{s}, log-log slope of the cost per task against the servers ({ns_text})"
        ctx = " → ".join(_f(x, ".1f") for x in costs) + " µs per task; one run per point"
        targets.append(Target.check(f"{s} slope", what, k, "", "<", 1.0, ctx))
        if s == "bf-drfh" and big is not None and base is not None:
            what = f"{s}, cost per task at 12,583 servers over its cost at 2,000"
            ctx = (
                " → ".join(_f(x, ".1f") for x in per_started)
                + " µs per started task; "
                + " → ".join(_f(x, ".1f") for x in per_event)
                + " µs per arrival, start or completion"
            )
            limit = TARGET_BF_SERVER_RATIO
            targets.append(
                Target.check(f"{s} 12,583 / 2,000", what, bf_ratio, "×", "<=", limit, ctx)
            )
    return {"points": points, "curves": curves, "targets": targets}


def _n(n: int) -> str:
    """``10^k`` for powers of ten, else ``n`` with thousands separators."""
    k = round(math.log10(n)) if n > 0 else 0
    return f"10^{k}" if 10**k == n else f"{n:,}"


def bench_tasks(
    sizes: Sequence[int] = TASK_SIZES,
    servers: int = SYNTH_SERVERS,
    *,
    dense: bool = False,
    isolate: bool = True,
    progress: bool = True,
    schedulers: Sequence[str] = ("bf-drfh", "ff-drfh"),
) -> dict[str, Any]:
    """Cost per task versus the number of tasks on synthetic workloads.

    At the sample's load per hour (the window scales with the size; target: ratio <= 1.5), or
    with ``dense`` in the fixed 70,756 s window (the stress case; target: ratio <= 2).
    """
    duration = DENSE_DURATION_S if dense else None
    target = TARGET_DENSE_COST_RATIO if dense else TARGET_TASK_COST_RATIO
    name = "tasks-dense" if dense else "tasks"
    specs = [
        {"kind": "synth", "scheduler": s, "servers": servers, "tasks": n, "duration_s": duration}
        for s in schedulers
        for n in sizes
    ]
    points = _run_points(specs, None, isolate, name, progress)
    curves: dict[str, Any] = {}
    targets: list[Target] = []
    for s in schedulers:
        pts = [p for p in points if p["scheduler"] == s]
        good = all(_ok(p) for p in pts)
        costs = [p.get("us_per_task") if _ok(p) else None for p in pts]
        ratio = costs[-1] / costs[0] if good and costs[0] else None
        curves[s] = {"tasks": list(sizes), "us_per_task": costs, "ratio_largest_smallest": ratio}
        pairs = zip(sizes, costs, strict=True)
        ctx = "µs per task " + " → ".join(f"{_n(n)}: {_f(c, '.1f')}" for n, c in pairs)
        key = f"{s} cost({_n(sizes[-1])}) / cost({_n(sizes[0])})"
        what = f"{s}, cost per task at {_n(sizes[-1])} tasks over its cost at {_n(sizes[0])}"
        targets.append(Target.check(key, what, ratio, "×", "<=", target, ctx + "; one run each"))
    note = (
        f"the stress case: every size in the fixed {DENSE_DURATION_S:,.0f} s window, so larger "
        "sizes are denser loads (more queueing, higher utilisation), not longer traces"
        if dense
        else "the sample's load per hour at every size: the arrival window scales with the "
        "number of tasks (8.675 tasks/s)"
    )
    return {
        "points": points,
        "curves": curves,
        "targets": targets,
        "note": f"{note}; {servers:,} Table I servers.",
    }


def _f(x: Any, fmt: str = ",.0f") -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return format(x, fmt)


def summary_markdown(records: dict[str, dict[str, Any]], run: RunInfo) -> str:
    """``summary.md``: every point, then every target (``records``: benchmark -> its
    :meth:`~benchmarks.targets.RunInfo.record`)."""
    m = run.machine
    load = (m.get("loadavg_at_start") or [None])[0]
    lines = [
        "# fairsim benchmarks",
        "",
        f"{run.started} · {m['platform']} · {m['cpu_model']} · {m['cores']} cores · Python "
        f"{m['python']} · load at start {_f(load, '.2f')} · commit {run.commit or 'unknown'}",
        "",
        "Time = engine wall time (`EngineResult.wall_s`); peak RSS = that of the point's own "
        "child process (`benchmarks/child.py`).",
        "",
        "| benchmark | scheduler | servers | tasks | wall s | tasks/s | µs/task | peak RSS MB "
        "| util cpu | util mem | paired: × ref (ref tasks/s) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, res in records.items():
        for p in res["points"]:
            if "error" in p:
                lines.append(
                    f"| {name} | {p['scheduler']} | {p['servers']:,} | {_f(p.get('tasks'))} "
                    f"| ERROR: {p['error'][:80]} | | | | | | |"
                )
                continue
            pair = p.get("paired")
            vs = "—"
            if pair is not None:
                ref_tps = " / ".join(_f(x) for x in pair["ref_tasks_per_s"]) or "—"
                vs = f"{_f(pair['ratio'], '.2f')}× {pair['ref']} ({ref_tps})"
                if pair.get("ref_error"):
                    vs += f" ref error: {pair['ref_error'][:60]}"
            lines.append(
                f"| {name} | {p['scheduler']} | {p['servers']:,} | {p['tasks']:,} "
                f"| {p['wall_s']:.2f} | {_f(p['tasks_per_s'])} | {_f(p['us_per_task'], '.1f')} "
                f"| {_f(p['peak_rss_mb'])} | {_f(p['util_cpu'], '.3f')} "
                f"| {_f(p['util_mem'], '.3f')} | {vs} |"
            )
    lines += ["", "| benchmark | target | measured | met | context |", "|---|---|---|---|---|"]
    notes = []
    for name, res in records.items():
        for t in (Target.from_json(x) for x in res["targets"]):
            lines.append(
                f"| {name} | {t.measured} {t.limit_text()} | {t.value_text()} "
                f"| {'yes' if t.met else 'NO'} | {t.context} |"
            )
        if res.get("note"):
            notes.append(f"Note ({name}): {res['note']}")
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def all_checks(records: dict[str, dict[str, Any]]) -> list[bool]:
    """``met`` of every target of ``records`` (benchmark -> results record), in order."""
    return [bool(t["met"]) for res in records.values() for t in res["targets"]]


# --------------------------------------------------------------------------- CLI


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_online",
        description="fairsim speed/memory benchmarks",
    )
    ap.add_argument(
        "--shared",
        default=os.environ.get("FAIRSIM_SHARED", "../shared"),
        help="folder holding traces/google-2011 (default $FAIRSIM_SHARED or ../shared)",
    )
    ap.add_argument("--out", default="results/bench", help="output folder (default results/bench)")
    ap.add_argument(
        "--only",
        default=",".join(BENCHMARKS),
        help=f"comma-separated subset of {','.join(BENCHMARKS)}",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="10^4/10^5 tasks and 500/2,000 servers only (smoke runs)",
    )
    ap.add_argument("--no-progress", action="store_true", help="log lines instead of a tqdm bar")
    ap.add_argument("--strict", action="store_true", help="exit 1 if any target check fails")
    ap.add_argument(
        "--vs",
        metavar="REV",
        default=None,
        help="pair every point of real-2000, online-2000 and servers with the same point run by "
        "git revision REV (e.g. HEAD~1), A B A B, and report the speed ratio (make bench: "
        "HEAD~1)",
    )
    # child mode (internal): one point, JSON on stdout
    ap.add_argument("--one", choices=("real", "synth", "parquet", "tiers"), help=argparse.SUPPRESS)
    ap.add_argument("--scheduler", default="bf-drfh", help=argparse.SUPPRESS)
    ap.add_argument("--servers", type=int, default=SYNTH_SERVERS, help=argparse.SUPPRESS)
    ap.add_argument("--tasks", type=int, default=10_000, help=argparse.SUPPRESS)
    ap.add_argument("--duration-s", type=float, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--path", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--stream-tasks", action="store_true", help=argparse.SUPPRESS)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    if args.one:
        logging.getLogger().setLevel(logging.WARNING)
        return _child_main(args)
    only = [b.strip() for b in args.only.split(",") if b.strip()]
    unknown = sorted(set(only) - set(BENCHMARKS))
    if unknown:
        _parser().error(f"--only: unknown benchmark(s) {unknown}; choose from {BENCHMARKS}")
    shared = Path(args.shared).resolve()
    out = Path(args.out)
    needs_trace = any(b in only for b in ("real-2000", "online-2000", "servers", "tiers"))
    if needs_trace and not (shared / "traces" / "google-2011" / "task_events").is_dir():
        _parser().error(f"--shared: no traces/google-2011/task_events under {shared}")
    first = start()
    progress = not args.no_progress
    tree: Path | None = None
    if args.vs and any(b in only for b in PAIRED):
        import tempfile

        tree = Path(tempfile.mkdtemp(prefix="fairsim-ref-")) / "tree"
        try:
            _REF["ref"] = reference_tree(args.vs, tree)
        except RuntimeError as e:
            _parser().error(str(e))
        log.info("paired runs against %s (checked out in %s)", _REF["ref"][0], tree)
    runners: dict[str, Callable[[], dict[str, Any]]] = {
        "real-2000": lambda: bench_real_2000(shared, progress=progress),
        "online-2000": lambda: bench_online_2000(shared, progress=progress),
        "servers": lambda: bench_servers(
            shared, SERVER_SIZES_QUICK if args.quick else SERVER_SIZES, progress=progress
        ),
        "tiers": lambda: bench_tiers(shared, progress=progress),
        "tasks": lambda: bench_tasks(
            TASK_SIZES_QUICK if args.quick else TASK_SIZES, progress=progress
        ),
        "tasks-dense": lambda: bench_tasks(
            TASK_SIZES_QUICK if args.quick else DENSE_SIZES, dense=True, progress=progress
        ),
    }
    records: dict[str, dict[str, Any]] = {}
    try:
        for name in BENCHMARKS:
            if name not in only:
                continue
            log.info("benchmark %s ...", name)
            run = first if not records else start()
            t0 = time.perf_counter()
            res = runners[name]()
            targets = res.pop("targets")
            paired = {"paired_with": _REF["ref"][0]} if name in PAIRED and _REF else {}
            res.update(quick=bool(args.quick), total_s=time.perf_counter() - t0, **paired)
            records[name] = run.record(name, targets, **res)
            write_result(out, records[name])
    finally:
        if tree is not None:
            _drop_tree(tree)
            _REF.clear()
    md = summary_markdown(records, first)
    write_text(out / "summary.md", md)
    sys.stdout.write(md)
    checks = all_checks(records)
    log.info("%d/%d checks passed; results in %s", sum(checks), len(checks), out)
    return 1 if args.strict and not all(checks) else 0


if __name__ == "__main__":
    sys.exit(main())
