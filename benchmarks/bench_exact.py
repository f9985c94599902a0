"""Benchmark of the exact allocators (not a test): ``python -m benchmarks.bench_exact``.

Time per solve of ``drfh``, ``tsf``, ``c-drfh``, ``lmm-mms``, ``psdsf`` and ``pf`` (the solve and
the check after it, :func:`~fairsim.schedulers.exact.verification.verify`, timed apart) and the
number of HiGHS calls, on

- the DRFH experiment's instants (``configs/drfh-google.yaml``: Best-Fit DRFH on 2,000 Table I
  servers, the Google sample parts 0-13, seed 1, run to ``collect.horizon_s``): the users with tasks
  present at ``t`` (submitted by then and not finished by then), each with its count of tasks as
  ``max_tasks`` and their mean demand, on the servers aggregated into classes of identical servers
  (:func:`google_instant`; built at run time from the shared trace, never stored in the repository);
- synthetic instances shaped like them (:func:`drfh_like_instance`) against the number of users
  (on the Table I classes) and the number of classes (at 500 users);
- ``constrained``: 50 users on 200 random servers with 3 resources, half the users restricted
  to 20-150 servers, 30 % with a task bound, weights 1-3 (:func:`random_instance`): the pooled
  totals do not fit, the sequential LPs decide.

A solve stopped after ``--budget-s`` (SIGALRM) skips its mechanism on the larger instances
(``pf``: SLSQP on dense matrices; ``psdsf``: sweeps of per-server water-filling). Writes
``OUT/exact.json`` (:meth:`benchmarks.targets.RunInfo.record`: the targets, the commit and the
machine, then the points) and prints a table; ``--quick`` runs small sizes only and no trace
instant. ``--legacy`` also times the sequential LPs of
:func:`~fairsim.schedulers.exact.lexmaxmin.sequential_lps_fallback` (one LP per share level).

Target: ``drfh`` solve and check in about 10 ms per instant of the DRFH experiment (the budget
of fairness collection, at most 10 % of a run at 117 instants); reported, not asserted.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

import fairsim.schedulers.exact.common as exact_common
from benchmarks.targets import Target, parser, start, write_result
from fairsim.atomic import write_text
from fairsim.schedulers.exact import EXACT, POOLED
from fairsim.schedulers.exact.instance import (
    Instance,
    NumericalRangeError,
    check_range,
    parse_instance,
)
from fairsim.schedulers.exact.lexmaxmin import sequential_lps_fallback, share_per_task
from fairsim.schedulers.exact.pool import pooled
from fairsim.schedulers.exact.verification import LEX, verify

#: Mechanisms timed (``bmf`` is exponential in the users; ``drf``, ``af`` are one water-filling).
MECHANISMS = ("drfh", "tsf", "c-drfh", "lmm-mms", "psdsf", "pf")
#: Instants of the DRFH experiment's Best-Fit DRFH run.
INSTANTS_S = (10_000.0, 30_000.0, 50_000.0)
#: Users of the synthetic instances (Table I classes) and classes (500 users).
USERS = (10, 50, 200, 500, 1000, 2000)
CLASSES = (1, 3, 7, 15, 30)
#: Largest ``users x servers`` on which ``pf`` is timed: its SLSQP works on dense matrices in
#: compiled code, which the time limit cannot stop (50 x 200: minutes and 3.5 GB).
PF_MAX_CELLS = 1_000
#: ``drfh``'s solve and check on an instant of the DRFH experiment, milliseconds.
TARGET_DRFH_MS = 10.0


def random_instance(n_users: int, n_servers: int, n_res: int, seed: int) -> Instance:
    """A seeded heterogeneous instance with placement constraints and task bounds (the
    ``constrained`` case)."""
    rng = np.random.default_rng(seed)
    servers = [
        {"id": f"s{k}", "capacity": rng.choice([0.25, 0.5, 0.75, 1.0], n_res).tolist()}
        for k in range(n_servers)
    ]
    users = []
    for i in range(n_users):
        u: dict = {
            "id": f"u{i}",
            "demand": rng.uniform(0.001, 0.05, n_res).tolist(),
            "weight": int(rng.integers(1, 4)),
        }
        if rng.random() < 0.5:
            low = min(20, max(1, n_servers // 2))
            k = int(rng.integers(low, max(low + 1, min(150, n_servers))))
            u["eligible"] = [f"s{j}" for j in rng.choice(n_servers, k, replace=False)]
        if rng.random() < 0.3:
            u["max_tasks"] = int(rng.integers(10, 500))
        users.append(u)
    res = [f"r{k}" for k in range(n_res)]
    return parse_instance({"resources": res, "servers": servers, "users": users})


def drfh_like_instance(n_users: int, n_classes: int | None, seed: int) -> Instance:
    """An instant shaped like the DRFH experiment's: users with task bounds, classes of servers.

    ``n_users`` users with mean demands of Google-like tasks (CPU and memory uniform in [0.005,
    0.1] of the largest machine, one user in 20 demanding one resource only) and task counts
    log-uniform in [1, 45,000] as ``max_tasks``; ``n_classes=None``: 2,000 servers drawn from the
    DRFH paper's Table I (:func:`~fairsim.traces.pools.table_i_pool`) aggregated into one class per
    configuration drawn (9 at seed 1); otherwise ``n_classes`` classes of random (CPU, memory)
    capacities in {0.25, 0.5, 0.75, 1} times server counts summing to 2,000.

    Returns
    -------
    Instance
        Two resources, ``cpu`` and ``mem``.
    """
    from fairsim.traces.pools import table_i_pool

    rng = np.random.default_rng(seed)
    if n_classes is None:
        pool = table_i_pool(2000, rng)
        cls = pool.groupby(["cpu", "mem"]).size().reset_index(name="count")
        caps = (cls[["cpu", "mem"]].to_numpy() * cls["count"].to_numpy()[:, None]).tolist()
    else:
        counts = rng.multinomial(2000 - n_classes, np.ones(n_classes) / n_classes) + 1
        shapes = rng.choice([0.25, 0.5, 0.75, 1.0], (n_classes, 2))
        caps = (shapes * counts[:, None]).tolist()
    demand = rng.uniform(0.005, 0.1, (n_users, 2))
    one = rng.random(n_users) < 0.05
    demand[one, rng.integers(0, 2, int(one.sum()))] = 0.0
    tasks = np.ceil(np.exp(rng.uniform(0.0, np.log(45_000), n_users))).astype(int)
    return parse_instance(
        {
            "resources": ["cpu", "mem"],
            "servers": [{"id": f"c{k}", "capacity": c} for k, c in enumerate(caps)],
            "users": [
                {"id": f"u{i}", "demand": demand[i].tolist(), "max_tasks": int(tasks[i])}
                for i in range(n_users)
            ],
        }
    )


def instant_instance(tasks: Any, servers: Any, t_s: float) -> dict[str, Any]:
    """The ``fairsim solve`` instance of the tasks present at ``t_s`` (a dict, the JSON contract).

    Parameters
    ----------
    tasks : pandas.DataFrame
        A run's ``tasks.parquet`` (``submit_s``, ``finish_s``, ``user`` and one column per
        resource).
    servers : pandas.DataFrame
        The run's ``servers.parquet`` (``server`` and one column per resource).
    t_s : float
        The instant, seconds.

    Returns
    -------
    dict
        One user per user with a task submitted by ``t_s`` and not finished by then (running,
        waiting, or censored), its count of such tasks as ``max_tasks`` and their mean demand; one
        server per distinct capacity row, its capacity times the number of such servers (identical
        servers aggregated, exact for divisible allocations).
    """
    res = [c for c in servers.columns if c != "server"]
    present = tasks[(tasks["submit_s"] <= t_s) & ~(tasks["finish_s"] <= t_s)]
    users = present.groupby("user").agg(n=(res[0], "size"), **{r: (r, "mean") for r in res})
    cls = servers.groupby(res).size().reset_index(name="count")
    return {
        "resources": res,
        "servers": [
            {"id": f"c{k}", "capacity": [float(row[r]) * int(row["count"]) for r in res]}
            for k, row in cls.iterrows()
        ],
        "users": [
            {"id": str(u), "demand": [float(row[r]) for r in res], "max_tasks": int(row["n"])}
            for u, row in users.iterrows()
        ],
    }


def google_instants(shared: Path, cache: Path, instants: tuple[float, ...]) -> dict[float, Path]:
    """Instance files of the DRFH experiment's Best-Fit DRFH run at ``instants`` (seconds).

    Runs ``configs/drfh-google.yaml`` with ``bf-drfh`` only, to the last instant, once; the
    instances are cached in ``cache`` (``instant-<t>.json``) and rebuilt when missing.
    """
    import pandas as pd
    import yaml

    import fairsim

    paths = {t: cache / f"instant-{int(t)}.json" for t in instants}
    if all(p.exists() for p in paths.values()):
        return paths
    cfg = yaml.safe_load(Path("configs/drfh-google.yaml").read_text())
    cfg["trace"]["path"] = str(shared / "traces" / "google-2011")
    cfg["schedulers"] = ["bf-drfh"]
    cfg.setdefault("collect", {})["horizon_s"] = max(instants)
    run = cache / "bf-drfh-run"
    fairsim.simulate(cfg, out=str(run))
    tasks = pd.read_parquet(run / "bf-drfh" / "tasks.parquet")
    servers = pd.read_parquet(run / "servers.parquet")
    for t, p in paths.items():
        write_text(p, json.dumps(instant_instance(tasks, servers, t)) + "\n")
    return paths


@contextmanager
def count_lps() -> Iterator[list[int]]:
    """Count the HiGHS calls made inside the block: through ``scipy.optimize.linprog`` and
    through highspy (``exact_common._run_highs``, the split LPs)."""
    calls = [0]
    real, real_direct = exact_common.linprog, exact_common._run_highs

    def counted(*args: Any, **kw: Any) -> Any:
        calls[0] += 1
        return real(*args, **kw)

    def counted_direct(*args: Any, **kw: Any) -> Any:
        calls[0] += 1
        return real_direct(*args, **kw)

    exact_common.linprog = counted
    exact_common._run_highs = counted_direct
    try:
        yield calls
    finally:
        exact_common.linprog = real
        exact_common._run_highs = real_direct


class SolveTimeout(Exception):
    """A solve ran past the benchmark's budget."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`SolveTimeout` in the block after ``seconds`` of wall time (SIGALRM, Unix)."""

    def expire(signum: int, frame: Any) -> None:
        raise SolveTimeout

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def time_one(
    name: str,
    inst: Instance,
    *,
    repeat: int,
    budget_s: float,
    solver: Callable[..., np.ndarray] | None = None,
) -> dict[str, Any]:
    """Median wall time of the solve and of the check after it, and the HiGHS calls of one solve.

    One run when the first takes more than a tenth of ``budget_s``, else ``repeat``. ``solver``
    replaces the mechanism's allocator (the legacy sequential LPs).

    Raises
    ------
    SolveTimeout
        If one solve and its check take more than ``budget_s``.
    """
    own = pooled(inst) if name in POOLED else inst
    check_range(own)
    solve_s: list[float] = []
    verify_s: list[float] = []
    lps = 0
    x = np.zeros(0)
    for _ in range(repeat):
        with count_lps() as calls, time_limit(budget_s):
            t0 = time.perf_counter()
            x = EXACT[name](own) if solver is None else solver(own, share_per_task(name, own))
            t1 = time.perf_counter()
            lps = calls[0]
            verify(name, own, x)
            t2 = time.perf_counter()
        solve_s.append(t1 - t0)
        verify_s.append(t2 - t1)
        if t2 - t0 > budget_s / 10:
            break
    s, v = float(np.median(solve_s)), float(np.median(verify_s))
    return {
        "solve_ms": 1e3 * s,
        "verify_ms": 1e3 * v,
        "total_ms": 1e3 * (s + v),
        "runs": len(solve_s),
        "lps": lps,
        "tasks": round(float(x.sum()), 6),
    }


def bench(
    cases: list[tuple[str, dict[str, Any], Instance]],
    mechanisms: tuple[str, ...],
    *,
    budget_s: float,
    repeat: int,
    legacy: bool,
) -> list[dict[str, Any]]:
    """Time every mechanism on every case; a solve stopped at ``budget_s`` skips that mechanism on
    the later (larger) cases of its group."""
    points: list[dict[str, Any]] = []
    slow: set[tuple[str, str]] = set()
    for group, meta, inst in cases:
        for name in mechanisms:
            for variant in ("new", "legacy") if legacy and name in LEX else ("new",):
                point = {"group": group, **meta, "mechanism": name, "algorithm": variant}
                point["users"] = len(inst.user_ids)
                point["classes"] = len(inst.server_ids)
                if (group, name + variant) in slow:
                    point["skipped"] = f"over {budget_s:g} s on a smaller instance"
                elif name == "pf" and inst.eligible.size > PF_MAX_CELLS:
                    # SLSQP runs in compiled code the time limit cannot interrupt
                    point["skipped"] = f"users x servers above {PF_MAX_CELLS}"
                else:
                    solver = sequential_lps_fallback if variant == "legacy" else None
                    try:
                        point.update(
                            time_one(name, inst, repeat=repeat, budget_s=budget_s, solver=solver)
                        )
                    except SolveTimeout:
                        point["skipped"] = f"over {budget_s:g} s"
                        slow.add((group, name + variant))
                    except NumericalRangeError as err:  # the check refused the answer
                        point["error"] = str(err)
                points.append(point)
                sys.stdout.write(_row(point) + "\n")
                sys.stdout.flush()
    return points


def _row(p: dict[str, Any]) -> str:
    where = (
        f"{p['group']:9s} {p.get('instant_s', ''):>8} {p['users']:5d} users {p['classes']:3d} cl"
    )
    head = f"{where}  {p['mechanism']:8s} {p['algorithm']:6s}"
    if "skipped" in p or "error" in p:
        return f"{head}  {p.get('skipped') or p['error']}"
    return (
        f"{head}  solve {p['solve_ms']:10.2f} ms  verify {p['verify_ms']:9.2f} ms  "
        f"total {p['total_ms']:10.2f} ms  {p['lps']:4d} LPs"
    )


def main(argv: list[str] | None = None) -> None:
    """Time the exact mechanisms; write ``OUT/exact.json``."""
    p = parser("benchmarks.bench_exact", __doc__.split("\n\n")[0])
    p.add_argument("--mechanisms", default=",".join(MECHANISMS))
    p.add_argument("--budget-s", type=float, default=5.0)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="small sizes, no trace instant")
    p.add_argument("--legacy", action="store_true", help="also time the sequential LPs")
    p.add_argument(
        "--groups", default="google,users,classes,constrained", help="which instances to time"
    )
    a = p.parse_args(argv)
    run = start()
    mechanisms = tuple(a.mechanisms.split(","))
    out = Path(a.out)
    groups = set(a.groups.split(","))
    cases: list[tuple[str, dict[str, Any], Instance]] = []
    if not a.quick and "google" in groups:
        paths = google_instants(Path(a.shared), out / "exact-instants", INSTANTS_S)
        for t, path in paths.items():
            inst = parse_instance(json.loads(path.read_text()))
            cases.append(("google", {"instant_s": t}, inst))
    for n in (USERS[:3] if a.quick else USERS) if "users" in groups else ():
        cases.append(("users", {}, drfh_like_instance(n, None, a.seed)))
    for k in (CLASSES[:3] if a.quick else CLASSES) if "classes" in groups else ():
        cases.append(("classes", {}, drfh_like_instance(100 if a.quick else 500, k, a.seed)))
    if "constrained" in groups:
        cases.append(("constrained", {}, random_instance(50, 200, 3, a.seed)))
    points = bench(
        cases, mechanisms, budget_s=a.budget_s, repeat=1 if a.quick else a.repeat, legacy=a.legacy
    )
    note = (
        "median wall time per solve (solve, then the check after it) and HiGHS calls of one "
        "solve; google: the DRFH experiment's Best-Fit DRFH run at instant_s (users with tasks "
        "present, max_tasks = their count, servers aggregated into classes); users / classes: "
        f"drfh_like_instance (seed {a.seed}); one process, {1 if a.quick else a.repeat} runs each"
    )
    record = run.record("exact", targets(points), note=note, points=points)
    write_result(out, record)


def targets(points: list[dict[str, Any]]) -> list[Target]:
    """``drfh``'s solve and check at most :data:`TARGET_DRFH_MS` on each instant of the DRFH
    experiment (the ``google`` group; none in ``--quick``)."""
    out = []
    for p in points:
        if p["group"] != "google" or p["mechanism"] != "drfh" or p["algorithm"] != "new":
            continue
        what = f"drfh solve and check at t = {p['instant_s']:,.0f} s ({p['users']} users)"
        total = p.get("total_ms")
        ctx = (
            f"median of {p['runs']} runs" if total is not None else p.get("skipped", p.get("error"))
        )
        key = f"drfh t={p['instant_s']:.0f}"
        out.append(Target.check(key, what, total, "ms", "<=", TARGET_DRFH_MS, str(ctx)))
    return out


if __name__ == "__main__":
    main()
