"""Synthetic Google-like workloads, with parameters fitted to the real 2011 sample.

Model (one draw per job, then per task):

* **Job sizes** (tasks per job): 1 with probability ``P_SINGLE_TASK_JOB``, otherwise
  ``max(2, round(exp(N(SIZE_LOG_MU, SIZE_LOG_SIGMA))))`` capped at ``SIZE_MAX`` (a lognormal fitted
  by maximum likelihood to the sizes of the multi-task jobs).
* **Job arrivals**: jobs are drawn until they hold ``n_tasks`` tasks (the last job is truncated),
  then their submit times are i.i.d. uniform on ``[0, duration_s)``, sorted: a Poisson process
  conditioned on the number of jobs. By default the window scales with the size,
  ``duration_s = n_tasks / TASK_RATE_PER_S``: the sample's load per hour at any number of tasks
  (613,827 tasks give the sample's 70,756 s; 25 million tasks 33.4 days). An explicit
  ``duration_s`` fixes the window instead; a fixed window with more tasks is a *denser* load
  (the "dense" stress test of ``make bench`` keeps ``SAMPLE_DURATION_S`` at every size).
* **Users**: each job belongs to user ``k`` (``u0``..``u{n_users-1}``) with probability
  proportional to ``(k + 1) ** -USER_ZIPF_S`` (a Zipf law over user ranks, exponent fitted by
  maximum likelihood to the sample's jobs per user, grid step 0.001).
* **Requests**: one (cpu, mem) per job, shared by its tasks (99 % of the sample's jobs have a
  single request): ``(log cpu, log mem)`` bivariate normal with means ``REQ_LOG_MU``, standard
  deviations ``REQ_LOG_SIGMA`` and correlation ``REQ_LOG_RHO`` (fitted on jobs with positive
  requests), clipped to ``[REQ_MIN, 1]``.
* **Run times**: lognormal with a job effect: ``log run_s = RUN_LOG_MU + b_job + e_task`` with
  ``b_job ~ N(0, RUN_LOG_SIGMA_JOB)`` and ``e_task ~ N(0, RUN_LOG_SIGMA_TASK)`` (one-way
  random-effects decomposition of ``log run_s`` of the sample's finished tasks with ``run_s > 0``).
  Every synthetic task has ``end_state = "finish"``, ``censored = False`` and ``attempts = 1``.

The constants below were obtained by :func:`fit_google_sample` on the conversion of task_events
parts 0–13 (``convert_google_2011(..., parts=range(14))``: 613,827 tasks, 19,115 jobs, 565 users).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from fairsim.errors import TraceError

log = logging.getLogger(__name__)

# ---- fitted by fit_google_sample() on the conversion of Google 2011 task_events parts 0-13 ----
P_SINGLE_TASK_JOB = 0.7516
SIZE_LOG_MU = 2.9376
SIZE_LOG_SIGMA = 1.7627
SIZE_MAX = 20010
JOB_RATE_PER_S = 0.2162
SAMPLE_TASKS = 613_827
SAMPLE_DURATION_S = 70_756.0
#: Tasks per second of the sample (``SAMPLE_TASKS / SAMPLE_DURATION_S`` = 8.675): the default
#: arrival rate, whatever the number of tasks.
TASK_RATE_PER_S = SAMPLE_TASKS / SAMPLE_DURATION_S
USER_ZIPF_S = 1.123
REQ_LOG_MU = (-3.9573, -4.5548)
REQ_LOG_SIGMA = (1.0948, 1.1843)
REQ_LOG_RHO = 0.4421
REQ_MIN = 1e-6
RUN_LOG_MU = 6.3190
RUN_LOG_SIGMA_JOB = 1.5169
RUN_LOG_SIGMA_TASK = 0.4431
# -----------------------------------------------------------------------------------------------

TASK_COLUMNS = (
    "job_id", "task_index", "user", "submit_s", "cpu", "mem", "run_s", "end_state", "censored",
    "attempts", "instances", "constraint", "parents", "priority", "scheduling_class", "qos",
)  # fmt: skip


def default_duration_s(n_tasks: int) -> float:
    """The arrival window of ``n_tasks`` synthetic tasks at the sample's rate, in seconds.

    ``n_tasks / TASK_RATE_PER_S``: 613,827 tasks give the sample's 70,756 s.
    """
    return float(n_tasks) / TASK_RATE_PER_S


def synth_google_like(
    n_tasks: int, *, seed: int, duration_s: float | None = None, n_users: int = 567
) -> pd.DataFrame:
    """Generate a Google-like tasks table (canonical tasks schema), seeded.

    Parameters
    ----------
    n_tasks : int
        Number of tasks (rows), > 0.
    seed : int
        Seed of the ``numpy.random.Generator``; the same seed gives an identical frame.
    duration_s : float, optional
        Length of the arrival window in seconds (> 0); jobs arrive in ``[0, duration_s)``.
        Default: :func:`default_duration_s` (the sample's tasks per second at any size).
    n_users : int
        Number of users (> 0).

    Returns
    -------
    pandas.DataFrame
        Columns of :func:`fairsim.traces.schema.tasks_schema`, sorted by ``(submit_s, job_id,
        task_index)``; write it with :func:`fairsim.traces.io.write_tasks`.

    Raises
    ------
    TraceError
        If ``n_tasks``, ``duration_s`` or ``n_users`` is not positive.
    """
    if isinstance(n_tasks, bool) or int(n_tasks) != n_tasks or n_tasks <= 0:
        raise TraceError(f"n_tasks={n_tasks!r}: expected a positive integer")
    if duration_s is None:
        duration_s = default_duration_s(int(n_tasks))
    if not duration_s > 0:
        raise TraceError(f"duration_s={duration_s!r}: expected a positive number of seconds")
    if isinstance(n_users, bool) or int(n_users) != n_users or n_users <= 0:
        raise TraceError(f"n_users={n_users!r}: expected a positive integer")
    n_tasks, n_users = int(n_tasks), int(n_users)
    rng = np.random.default_rng(seed)

    # job sizes: draw enough jobs in chunks, then truncate to exactly n_tasks tasks
    sizes_parts: list[np.ndarray] = []
    total = 0
    chunk = max(16, int(n_tasks / 30))
    while total < n_tasks:
        single = rng.random(chunk) < P_SINGLE_TASK_JOB
        multi = np.rint(np.exp(rng.normal(SIZE_LOG_MU, SIZE_LOG_SIGMA, chunk)))
        s = np.where(single, 1, np.clip(multi, 2, SIZE_MAX)).astype(np.int64)
        sizes_parts.append(s)
        total += int(s.sum())
    sizes = np.concatenate(sizes_parts)
    csum = np.cumsum(sizes)
    n_jobs = int(np.searchsorted(csum, n_tasks) + 1)
    sizes = sizes[:n_jobs]
    sizes[-1] -= int(csum[n_jobs - 1] - n_tasks)

    submit = np.sort(rng.uniform(0.0, duration_s, n_jobs))
    ranks = np.arange(1, n_users + 1, dtype=np.float64)
    p_user = ranks**-USER_ZIPF_S
    job_user = rng.choice(n_users, size=n_jobs, p=p_user / p_user.sum())

    z = rng.standard_normal((n_jobs, 2))
    z[:, 1] = REQ_LOG_RHO * z[:, 0] + np.sqrt(1.0 - REQ_LOG_RHO**2) * z[:, 1]
    log_req = np.asarray(REQ_LOG_MU) + z * np.asarray(REQ_LOG_SIGMA)
    req = np.clip(np.exp(log_req), REQ_MIN, 1.0)
    job_effect = rng.normal(0.0, RUN_LOG_SIGMA_JOB, n_jobs)

    job_of_task = np.repeat(np.arange(n_jobs), sizes)
    starts = np.cumsum(sizes) - sizes
    task_index = np.arange(n_tasks, dtype=np.int64) - np.repeat(starts, sizes)
    run_s = np.exp(
        RUN_LOG_MU + job_effect[job_of_task] + rng.normal(0.0, RUN_LOG_SIGMA_TASK, n_tasks)
    )
    user_names = np.array([f"u{k}" for k in range(n_users)], dtype=object)
    return pd.DataFrame(
        {
            "job_id": job_of_task.astype(np.int64),
            "task_index": task_index.astype(np.int32),
            "user": user_names[job_user[job_of_task]],
            "submit_s": submit[job_of_task],
            "cpu": req[job_of_task, 0],
            "mem": req[job_of_task, 1],
            "run_s": run_s,
            "end_state": np.full(n_tasks, "finish", dtype=object),
            "censored": np.zeros(n_tasks, dtype=bool),
            "attempts": np.ones(n_tasks, np.int32),
            "instances": np.ones(n_tasks, np.int32),
            "constraint": np.full(n_tasks, None, dtype=object),
            "parents": np.full(n_tasks, None, dtype=object),
            "priority": pd.array([None] * n_tasks, dtype="Int32"),
            "scheduling_class": pd.array([None] * n_tasks, dtype="Int32"),
            "qos": np.full(n_tasks, None, dtype=object),
        },
        columns=list(TASK_COLUMNS),
    )


def fit_google_sample(tasks_parquet: Path) -> dict[str, Any]:
    """Fit the synthetic model's parameters to a converted Google tasks table.

    Parameters
    ----------
    tasks_parquet : pathlib.Path
        A ``tasks.parquet`` written by :func:`fairsim.traces.google2011.convert_google_2011`.

    Returns
    -------
    dict
        Keys named like the module constants (``P_SINGLE_TASK_JOB``, ``SIZE_LOG_MU``, ...,
        ``RUN_LOG_SIGMA_TASK``) plus descriptive counts (``n_tasks``, ``n_jobs``, ``n_users``,
        ``mean_tasks_per_job``, ``window_s``).

    Raises
    ------
    TraceError
        If the file is missing or has no finished tasks / no multi-task jobs.
    """
    path = Path(tasks_parquet)
    if not path.is_file():
        raise TraceError(f"{path}: tasks file not found")
    cols = ["job_id", "user", "submit_s", "cpu", "mem", "run_s", "end_state"]
    t = pq.read_table(path, columns=cols).to_pandas()
    jobs = t.groupby("job_id", sort=False).agg(
        n=("job_id", "size"),
        submit_s=("submit_s", "min"),
        user=("user", "first"),
        cpu=("cpu", "first"),
        mem=("mem", "first"),
    )
    multi = jobs["n"][jobs["n"] > 1].to_numpy(np.float64)
    if len(multi) == 0:
        raise TraceError(f"{path}: no multi-task jobs to fit job sizes")
    log_size = np.log(multi)

    window_end = float(t["submit_s"].max())
    inside = jobs["submit_s"] > 0
    window_len = window_end - 600.0
    job_rate = float(inside.sum() / window_len) if window_len > 0 else float("nan")

    per_user = np.sort(jobs.groupby("user").size().to_numpy())[::-1].astype(np.float64)
    rank = np.arange(1, len(per_user) + 1, dtype=np.float64)
    # maximum likelihood of P(rank r) = r**-s / sum_k k**-s, grid search on s in [0, 3]
    grid = np.linspace(0.0, 3.0, 3001)
    log_rank = np.log(rank)
    loglik = [
        -(per_user * s * log_rank).sum() - per_user.sum() * np.log((rank**-s).sum()) for s in grid
    ]
    zipf_s = float(grid[int(np.argmax(loglik))])

    pos = jobs[(jobs["cpu"] > 0) & (jobs["mem"] > 0)]
    lc, lm = np.log(pos["cpu"].to_numpy()), np.log(pos["mem"].to_numpy())

    fin = t[(t["end_state"] == "finish") & (t["run_s"] > 0)]
    if len(fin) == 0:
        raise TraceError(f"{path}: no finished tasks with run_s > 0 to fit run times")
    lr = np.log(fin["run_s"].to_numpy())
    codes = pd.factorize(fin["job_id"])[0]
    counts = np.bincount(codes).astype(np.float64)
    job_mean = np.bincount(codes, weights=lr) / counts
    resid = lr - job_mean[codes]
    # one-way random effects (ANOVA estimators)
    k, n = len(counts), len(lr)
    ms_within = float((resid**2).sum() / max(n - k, 1))
    grand = lr.mean()
    ms_between = float((counts * (job_mean - grand) ** 2).sum() / max(k - 1, 1))
    n0 = (n - (counts**2).sum() / n) / max(k - 1, 1)
    var_job = max((ms_between - ms_within) / n0, 0.0)

    return {
        "P_SINGLE_TASK_JOB": float((jobs["n"] == 1).mean()),
        "SIZE_LOG_MU": float(log_size.mean()),
        "SIZE_LOG_SIGMA": float(log_size.std()),
        "SIZE_MAX": int(jobs["n"].max()),
        "JOB_RATE_PER_S": job_rate,
        "USER_ZIPF_S": zipf_s,
        "REQ_LOG_MU": (float(lc.mean()), float(lm.mean())),
        "REQ_LOG_SIGMA": (float(lc.std()), float(lm.std())),
        "REQ_LOG_RHO": float(np.corrcoef(lc, lm)[0, 1]),
        "RUN_LOG_MU": float(grand),
        "RUN_LOG_SIGMA_JOB": float(np.sqrt(var_job)),
        "RUN_LOG_SIGMA_TASK": float(np.sqrt(ms_within)),
        "n_tasks": len(t),
        "n_jobs": len(jobs),
        "n_users": int(t["user"].nunique()),
        "mean_tasks_per_job": float(jobs["n"].mean()),
        "window_s": [0.0, window_end],
    }


# ---- complex jobs: fitted by fit_dag_sample() on the Alibaba v2018 spar sample (67,634 tasks) ----
P_DAG_JOB = 0.9269  # multi-task jobs whose tasks form a DAG
P_ROOT = 0.3698  # tasks of DAG jobs without parents
PARENTS_MEAN = 1.3745  # parents per task that has parents (1 + geometric)
P_SINGLE_INSTANCE = 0.6523  # tasks (rows) with one instance
INST_LOG_MU = 2.9483  # log instances of the rows with more than one (lognormal)
INST_LOG_SIGMA = 1.8111
INST_MAX = 25152
# --------------------------------------------------------------------------------------------------


def synth_complex_jobs(
    n_tasks: int,
    *,
    seed: int,
    duration_s: float | None = None,
    n_users: int = 567,
    instances: bool = True,
) -> pd.DataFrame:
    """A Google-like workload of complex jobs: DAG dependencies and Alibaba-like instance counts.

    Jobs, users, requests and run times are those of :func:`synth_google_like` (same seed, same
    rows). Then, with a generator spawned from the same seed:

    * each multi-task job is a DAG with probability ``P_DAG_JOB``; in a DAG job, task 0 is a root
      and each later task is a root with probability ``P_ROOT`` (but the last one is not if all
      the others are: a DAG job has at least one edge), otherwise it waits for
      ``1 + Geometric`` (mean ``PARENTS_MEAN``, at most its index) distinct earlier tasks of its
      job, drawn uniformly — so every DAG is acyclic by construction;
    * with ``instances``, each row stands for 1 instance with probability ``P_SINGLE_INSTANCE``,
      otherwise ``round(exp(N(INST_LOG_MU, INST_LOG_SIGMA)))`` clipped to ``[2, INST_MAX]``.

    The constants were fitted by :func:`fit_dag_sample` on the Alibaba cluster-trace-v2018 sample
    (``alibaba-2018-spar`` conversion: 67,634 tasks, 16,749 jobs).

    Parameters
    ----------
    n_tasks : int
        Number of task rows, > 0.
    seed : int
        The same seed gives an identical frame.
    duration_s, n_users
        As :func:`synth_google_like`.
    instances : bool
        Draw instance counts (else every row has one instance).

    Returns
    -------
    pandas.DataFrame
        Canonical tasks columns; ``parents`` is a comma-separated list of parent task indices or
        None (``traces/dag.py``'s encoding).

    Raises
    ------
    TraceError
        As :func:`synth_google_like`.
    """
    frame = synth_google_like(n_tasks, seed=seed, duration_s=duration_s, n_users=n_users)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    job = frame["job_id"].to_numpy()
    idx = frame["task_index"].to_numpy().astype(np.int64)
    n = len(frame)
    sizes = np.bincount(job)
    dag_job = (sizes > 1) & (rng.random(len(sizes)) < P_DAG_JOB)
    child = (idx > 0) & dag_job[job] & (rng.random(n) >= P_ROOT)
    # a DAG job has at least one edge: if every later task drew "root", its last task is not
    has_edge = np.bincount(job, weights=child, minlength=len(sizes)) > 0
    last = (idx == sizes[job] - 1) & dag_job[job] & ~has_edge[job]
    child |= last
    k = np.minimum(rng.geometric(1.0 / PARENTS_MEAN, n), np.maximum(idx, 1))
    one = np.floor(rng.random(n) * idx).astype(np.int64)  # the parent when k == 1
    parents = np.full(n, None, dtype=object)
    for row in np.flatnonzero(child).tolist():
        if k[row] == 1:
            parents[row] = str(one[row])
        else:
            ps = np.sort(rng.choice(idx[row], size=k[row], replace=False))
            parents[row] = ",".join(map(str, ps.tolist()))
    frame["parents"] = parents
    if instances:
        n = len(frame)
        multi = np.rint(np.exp(rng.normal(INST_LOG_MU, INST_LOG_SIGMA, n)))
        inst = np.where(rng.random(n) < P_SINGLE_INSTANCE, 1, np.clip(multi, 2, INST_MAX))
        frame["instances"] = inst.astype(np.int32)
    return frame


def fit_dag_sample(tasks_parquet: Path) -> dict[str, float]:
    """Fit the complex-job constants of :func:`synth_complex_jobs` to a canonical tasks table.

    Parameters
    ----------
    tasks_parquet : pathlib.Path
        A ``tasks.parquet`` with ``parents`` and ``instances`` (e.g. ``alibaba-2018-spar``).

    Returns
    -------
    dict
        ``P_DAG_JOB``, ``P_ROOT``, ``PARENTS_MEAN``, ``P_SINGLE_INSTANCE``, ``INST_LOG_MU``,
        ``INST_LOG_SIGMA``, ``INST_MAX``.

    Raises
    ------
    TraceError
        If the file is missing or has no DAG edges.
    """
    path = Path(tasks_parquet)
    if not path.is_file():
        raise TraceError(f"{path}: tasks file not found")
    t = pq.read_table(path, columns=["job_id", "instances", "parents"]).to_pandas()
    has = t["parents"].notna()
    if not has.any():
        raise TraceError(f"{path}: no task has DAG parents")
    size = t.groupby("job_id")["job_id"].transform("size")
    dag_job = has.groupby(t["job_id"]).transform("any")
    jobs = pd.DataFrame({"size": size, "dag": dag_job, "job": t["job_id"]}).drop_duplicates("job")
    multi = jobs[jobs["size"] > 1]
    n_parents = t.loc[has, "parents"].str.count(",") + 1
    inst = t["instances"].to_numpy()
    log_multi = np.log(inst[inst > 1])
    return {
        "P_DAG_JOB": float(multi["dag"].mean()),
        "P_ROOT": float((~has[dag_job]).mean()),
        "PARENTS_MEAN": float(n_parents.mean()),
        "P_SINGLE_INSTANCE": float((inst == 1).mean()),
        "INST_LOG_MU": float(log_multi.mean()),
        "INST_LOG_SIGMA": float(log_multi.std()),
        "INST_MAX": int(inst.max()),
    }
