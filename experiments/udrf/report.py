"""Claims and report of the UDRF reproduction (Section V, Figs. 6-10) over seeds.

:func:`reproduce` runs :func:`fairsim.experiments.udrf.experiment.run_seed` for seeds ``1 ..
N`` in parallel (:func:`fairsim.experiments.claims.run_seeds`; each seed draws its own pool,
repetitions, run times and constraints, the trace is fixed), reads the seeds' files back
(:func:`fairsim.experiments.udrf.figures.load_seeds`), turns every statement of the paper's
Section V (:data:`fairsim.experiments.udrf.paper.STATEMENTS`) into a
:class:`~fairsim.experiments.claims.Claim` (:func:`make_claims`), writes ``claims.json``, the
figures and ``report.md``, whose table of statements is generated from the claims.

How each statement is decided:

* run-level orders (Fig. 9: DRF wastes more; Fig. 10a: JCT lower; the time before the queue)
  by the per-seed paired difference (baseline minus UDRF), PASS when its 95 % interval across
  seeds lies above 0 (:func:`~fairsim.experiments.claims.exceeds`);
* trends (Figs. 10b and 10c, the baseline's JCT by repetitions) by Spearman's rho over the
  groups, PASS when its bootstrap 95 % interval over the jobs (pooled over the seeds) lies above
  0 (:func:`~fairsim.experiments.claims.trend`);
* Figs. 6, 7 and 8 and the users' range of classes are listed as ``by-construction`` with the
  reason (:func:`make_claims` says which property of the set-up makes each hold).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairsim.atomic import write_text
from fairsim.experiments import claims as C
from fairsim.experiments.udrf import figures as F
from fairsim.experiments.udrf import paper
from fairsim.experiments.udrf.experiment import (
    BASELINE,
    CONFIG,
    TASK_LEVEL,
    UDRF_NAME,
    run_seed,
    seed_config,
)
from fairsim.simulator.constraints import needed_classes_distribution

log = logging.getLogger(__name__)

#: Fig. 8 holds by construction when the share of jobs needing one or two classes is within
#: this many points of what the constraint model leads one to expect.
FIG8_MODEL_TOL = 0.03


def _seed_run(seed: int, out: str, trace: str | None, quick: bool) -> dict[str, Any]:
    """One seed into ``OUT/seed-<seed>`` (a module-level function: worker processes import it)."""
    return run_seed(
        seed, F.seed_dir(Path(out), seed), trace=Path(trace) if trace else None, quick=quick
    )


def reproduce(
    *,
    out: Path,
    shared: Path | None = None,
    quick: bool = False,
    progress: bool = True,
    seeds: int = C.DEFAULT_SEEDS,
    jobs: int | None = None,
) -> Path:
    """Run seeds ``1 .. seeds`` over ``jobs`` worker processes into ``out``; write
    ``claims.json``, the figures and ``report.md``, and return the report's path.

    Parameters
    ----------
    out : Path
        Output folder: ``seed-<s>/`` per seed, and the files above.
    shared : Path, optional
        The folder holding ``traces/google-2011`` (when missing, the sample is fetched into the
        download cache, :func:`fairsim.traces.fetch.google_2011_sample`); default: the config's
        ``trace.path``.
    quick : bool
        The small version of :func:`~fairsim.experiments.udrf.experiment.run_seed`.
    progress : bool
        A progress bar over the seeds.
    seeds : int
        Number of seeds (:func:`fairsim.experiments.claims.seed_list`).
    jobs : int, optional
        Worker processes (default: one per core, at most one per seed).

    Raises
    ------
    fairsim.errors.ConfigError
        For ``seeds < 1`` or a scenario without both ``drf-lockstep`` and ``udrf``.
    """
    t0 = time.perf_counter()
    ids = C.seed_list(seeds)
    trace = None
    if shared is not None:
        from fairsim.traces.fetch import google_2011_sample  # fetched when shared lacks it

        trace = google_2011_sample(Path(shared), progress=progress)
    cfg = seed_config(ids[0], trace=trace, quick=quick)  # refuses a bad scenario before any run
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    C.run_seeds(
        _seed_run,
        ids,
        str(out),
        str(trace) if trace else None,
        quick,
        jobs=jobs,
        progress=progress,
        desc="udrf seeds",
    )
    data = F.load_seeds(out, ids)
    claims = make_claims(data)
    C.write_claims(out, claims)
    figs = F.draw(out, data)
    wall = time.perf_counter() - t0
    report = out / "report.md"
    write_text(report, report_text(data, claims, cfg, figs, wall_s=wall, jobs=jobs))
    return report


# --------------------------------------------------------------------------- claims


def _fmt_rho(values: Sequence[float]) -> str:
    return ", ".join("—" if math.isnan(v) else f"{v:+.2f}" for v in values)


def _seed_rhos(data: F.Seeds, frame: pd.DataFrame, fn: Any, *args: str) -> list[float]:
    """Spearman's rho of a grouped trend in every seed alone (for the reason text)."""
    out = []
    for s in data.seeds:
        g = frame[frame["seed"] == s]
        keys, vals = fn(*(g[a].to_numpy(float) for a in args))(np.arange(len(g)))
        out.append(C.spearman(keys, vals))
    return out


def fig8_expectation(data: F.Seeds) -> tuple[float, float, float]:
    """What the constraint model leads one to expect for Fig. 8, over the seeds' jobs.

    Returns
    -------
    tuple of float
        The expected share of jobs needing one or two classes (each job's cap, its distinct
        tasks up to the number of classes, through
        :func:`~fairsim.simulator.constraints.needed_classes_distribution`), the share with one
        task, and the share with two.
    """
    s0 = data.summaries[data.seeds[0]]
    target = s0.get("classes_target")
    n_c = int(s0["machine_classes"])
    tasks = data.jobs["tasks"].clip(lower=1)
    caps = tasks.clip(upper=n_c).astype(int)
    one = float((tasks == 1).mean())
    two = float((tasks == 2).mean())
    if not target:
        return math.nan, one, two
    dist = needed_classes_distribution(
        {int(k): float(v) for k, v in target.items()},
        {int(str(c)): int(m) for c, m in caps.value_counts().items()},
    )
    expected = float(np.mean([dist[c].get(1, 0.0) + dist[c].get(2, 0.0) for c in caps.tolist()]))
    return expected, one, two


def make_claims(data: F.Seeds) -> list[C.Claim]:
    """Every statement of :data:`~fairsim.experiments.udrf.paper.STATEMENTS` as a claim, in the
    paper's order, then our consistency checks."""
    n = len(data.seeds)
    st = paper.BY_KEY
    out: list[C.Claim] = []
    n_c = int(data.summaries[data.seeds[0]]["machine_classes"])

    # Fig. 6: degree by users, over the grid points of all seeds
    rd = data.rducs.reset_index(drop=True)
    rho6 = C.spearman_trend(
        len(rd),
        F.grouped_mean(rd["users"].to_numpy(float), rd["mean_degree"].to_numpy(float)),
        seeds=n,
        what="samples",
    )
    linked = (
        float((rd["mean_degree"] / (rd["users"] - 1).where(rd["users"] > 1)).mean())
        if len(rd)
        else math.nan
    )
    out.append(
        C.by_construction(
            st["fig6"].text,
            st["fig6"].source,
            "increasing",
            rho6.value,
            reason=(
                f"Spearman's rho of the mean degree over the active users {_ci(rho6)}; but an "
                f"active user shares a (class, resource) pair with {100 * linked:.0f} % of the "
                f"others on average: with {n_c} machine classes, drawn in proportion to their "
                "servers, almost every pair of users meets on the large classes, so the degree "
                "is about the number of users minus one whatever the scheduler (the paper's "
                "~700 classes make it a finding)"
            ),
            seeds=n,
            holds=rho6.finite and rho6.bounds()[0] > 0,
        )
    )

    # Fig. 7: RDUCs at every grid point
    lo7, hi7 = (int(rd["rducs"].min()), int(rd["rducs"].max())) if len(rd) else (0, 0)
    out.append(
        C.by_construction(
            st["fig7"].text,
            st["fig7"].source,
            "1-8",
            f"{lo7}-{hi7} (mean {rd['rducs'].mean():.2f})" if len(rd) else "—",
            reason=(
                f"an RDUC holds at least one whole machine class (every task demands CPU and "
                f"memory), so with {n_c} classes there are at most {n_c}: the upper bound 8 "
                "cannot be exceeded, and one RDUC exists whenever a task waits"
            ),
            seeds=n,
            holds=paper.FIG7_RDUCS[0] <= lo7 and hi7 <= paper.FIG7_RDUCS[1],
        )
    )

    # Fig. 8: classes the jobs need (the constraint model's input)
    share12 = C.across_seeds(
        [
            float(data.jobs.loc[data.jobs["seed"] == s, "classes"].between(1, 2).mean())
            for s in data.seeds
        ]
    )
    expected, one, two = fig8_expectation(data)
    out.append(
        C.by_construction(
            st["fig8"].text,
            st["fig8"].source,
            paper.FIG8_ONE_OR_TWO,
            share12.value,
            reason=(
                "the constraint model's input: it draws the classes of every job to follow "
                "Fig. 8 (65 % need one or two, the rest 3 to "
                f"{n_c}), as far as the jobs' sizes allow: {100 * one:.0f} % of the jobs have "
                f"one task and {100 * two:.0f} % two, and a task is pinned to one class, so the "
                f"model expects {100 * expected:.1f} % (holds: within "
                f"{100 * FIG8_MODEL_TOL:.0f} points of that)"
            ),
            seeds=n,
            holds=abs(share12.value - expected) <= FIG8_MODEL_TOL,
            unit="share",
        )
    )

    # users with many jobs span many classes
    spans = []
    for s in data.seeds:
        j = data.jobs[data.jobs["seed"] == s]
        agg = j.groupby("user").agg(
            jobs=("job_id", "size"),
            classes=(
                "class_set",
                lambda c: n_c if (c == "").any() else len(set("|".join(c).split("|"))),
            ),
        )
        spans.append(agg.assign(seed=s))
    users = pd.concat(spans, ignore_index=True)
    rho_u = C.spearman_trend(
        len(users),
        F.grouped_mean(users["jobs"].to_numpy(float), users["classes"].to_numpy(float)),
        seeds=n,
        what="users",
    )
    out.append(
        C.by_construction(
            st["users"].text,
            st["users"].source,
            "increasing",
            rho_u.value,
            reason=(
                f"Spearman's rho of the classes a user's jobs need together over its number of "
                f"jobs {_ci(rho_u)}; the model draws every job's classes on their own, so a "
                "user with more jobs spans more classes"
            ),
            seeds=n,
            holds=rho_u.finite and rho_u.bounds()[0] > 0,
        )
    )

    # Fig. 9: wasted CPU and memory, paired by seed
    for key, res, label in (("fig9_cpu", "cpu", "CPU"), ("fig9_mem", "mem", "memory")):
        d = F.paired_diff(data, "wasted_mean", res)
        out.append(
            C.exceeds(
                st[key].text,
                st[key].source,
                "DRF > UDRF",
                d,
                unit="pp",
                what=f"{BASELINE} minus {UDRF_NAME} (mean wasted {label}, paired by seed)",
                reason=(
                    f"means {_pct(F.seed_estimate(data, BASELINE, 'wasted_mean', res))} "
                    f"({BASELINE}) and "
                    f"{_pct(F.seed_estimate(data, UDRF_NAME, 'wasted_mean', res))} "
                    f"({UDRF_NAME}) of the pool, while each had work"
                ),
            )
        )

    # Fig. 10a: mean and median JCT, paired by seed
    for key, stat in (("fig10a_mean", "jct_mean_s"), ("fig10a_median", "jct_median_s")):
        d = F.paired_diff(data, stat)
        out.append(
            C.exceeds(
                st[key].text,
                st[key].source,
                "DRF > UDRF",
                d,
                unit="s",
                what=f"{BASELINE} minus {UDRF_NAME} ({stat[4:-2]} JCT, paired by seed)",
                reason=(
                    f"{_secs(F.seed_estimate(data, BASELINE, stat))} ({BASELINE}) vs "
                    f"{_secs(F.seed_estimate(data, UDRF_NAME, stat))} ({UDRF_NAME})"
                ),
            )
        )

    # Figs. 10c and 10b: reduction trends, bootstrap over seeds, then the paired jobs of each
    pairs = F.pooled_pairs(data)
    for key, col in (("fig10c", "classes"), ("fig10b", "repetitions")):
        fn = F.grouped_ratio(
            pairs[col].to_numpy(int),
            pairs["jct_s_o"].to_numpy(float),
            pairs["jct_s_b"].to_numpy(float),
        )
        rho = C.spearman_trend(
            len(pairs), fn, seeds=n, what="jobs", clusters=pairs["seed"].to_numpy()
        )
        per = _seed_rhos(data, pairs, F.grouped_ratio, col, "jct_s_o", "jct_s_b")
        groups = F.reduction_table(pairs, col, "jct", n)
        out.append(
            C.trend(
                st[key].text,
                st[key].source,
                "increasing",
                rho,
                reason=(
                    f"reduction by {col}: "
                    + ", ".join(
                        f"{g}: {100 * r:.0f} %"
                        for g, r in zip(groups["group"], groups["reduction"], strict=True)
                    )
                    + f"; rho per seed: {_fmt_rho(per)}"
                ),
            )
        )

    # after Fig. 10: under DRF, jobs that run many times take longer, and new jobs wait longer
    base = (
        data.jct[(data.jct["scheduler"] == BASELINE)]
        .dropna(subset=["jct_s"])
        .reset_index(drop=True)
    )
    fn = F.grouped_mean(base["repetitions"].to_numpy(int), base["jct_s"].to_numpy(float))
    rho_q = C.spearman_trend(len(base), fn, seeds=n, what="jobs", clusters=base["seed"].to_numpy())
    per_q = _seed_rhos(data, base, F.grouped_mean, "repetitions", "jct_s")
    out.append(
        C.trend(
            st["queue_reps"].text,
            st["queue_reps"].source,
            "increasing",
            rho_q,
            reason=f"{BASELINE}'s mean JCT by repetitions; rho per seed: {_fmt_rho(per_q)}",
        )
    )
    d = F.paired_diff(data, "before_queue_mean_s")
    out.append(
        C.exceeds(
            st["queue_wait"].text,
            st["queue_wait"].source,
            "DRF > UDRF",
            d,
            unit="s",
            what=f"{BASELINE} minus {UDRF_NAME} (mean time before the queue, paired by seed)",
            reason=(
                f"{_secs(F.seed_estimate(data, BASELINE, 'before_queue_mean_s'))} ({BASELINE}) "
                f"vs {_secs(F.seed_estimate(data, UDRF_NAME, 'before_queue_mean_s'))} "
                f"({UDRF_NAME}) from first submit to queue entry"
            ),
        )
    )

    # our own checks
    unplaceable = sum(
        int(r["ended"].get("unplaceable", 0))
        for s in data.seeds
        for r in data.summaries[s]["runs"].values()
    )
    out.append(
        C.judged(
            "every task can be placed: its class is drawn among those that can hold it",
            "constraint model (issue 30)",
            None,
            float(unplaceable),
            unplaceable == 0,
            rule="no task reported unplaceable in any seed or run",
            seeds=n,
            kind="consistency",
        )
    )
    left = {
        name: sum(
            int(data.summaries[s]["runs"][name]["tasks"])
            - int(data.summaries[s]["runs"][name]["tasks_completed"])
            for s in data.seeds
        )
        for name in data.schedulers
    }
    out.append(
        C.judged(
            "every job completes under every scheduler (a reserved-for job is not starved, "
            "and nothing waits for ever behind it)",
            "Fig. 5, line 6",
            None,
            float(sum(left.values())),
            all(v == 0 for v in left.values()),
            rule="tasks not completed by the horizon, over all seeds and runs, is 0",
            seeds=n,
            kind="consistency",
            reason=", ".join(f"{k}: {v}" for k, v in left.items()),
        )
    )
    return out


def _ci(e: C.Estimate) -> str:
    if e.low is None or e.high is None:
        return f"{e.value:+.2f}"
    return f"{e.value:+.2f} [{e.low:+.2f}, {e.high:+.2f}]"


def _pct(e: C.Estimate) -> str:
    if e.low is None or e.high is None:
        return f"{100 * e.value:.1f} %"
    return f"{100 * e.value:.1f} % [{100 * e.low:.1f}, {100 * e.high:.1f}]"


def _secs(e: C.Estimate) -> str:
    if e.low is None or e.high is None:
        return f"{e.value:,.0f} s"
    return f"{e.value:,.0f} s [{e.low:,.0f}, {e.high:,.0f}]"


# --------------------------------------------------------------------------- report


def report_text(
    data: F.Seeds,
    claims: Sequence[C.Claim],
    cfg: Any,
    figs: Sequence[str],
    *,
    wall_s: float,
    jobs: int | None,
) -> str:
    """``report.md``: the scenario, the claims (generated from ``claims``), per-scheduler means
    over the seeds, the reductions by group, and the runs."""
    n = len(data.seeds)
    s0 = data.summaries[data.seeds[0]]
    quick = bool(s0["quick"])
    workers = C.default_jobs(n) if jobs is None else max(1, min(jobs, n))
    lines = [
        f"# UDRF paper, Section V: DRF ({BASELINE}) vs online UDRF",
        "",
        f"Scenario `{cfg.name}` (`configs/udrf-google.yaml`{', --quick' if quick else ''}), "
        f"seeds {data.seeds[0]}-{data.seeds[-1]} ({n}; each draws its own {s0['servers']} "
        f"Table I servers, repetitions, run times and constraints; the trace is fixed): "
        f"{s0['machine_classes']} machine classes, {s0['jobs']:,} jobs, repetitions "
        f"{cfg.trace.repetitions} ({s0['repetition_mode']}), queue of {cfg.trace.queue_jobs} "
        f"jobs, run times {cfg.trace.job_run_s} s, constraint model `{s0['constraint_model']}` "
        "(every job; classes drawn among those that can hold the task, their number following "
        f"Fig. 8). `{UDRF_NAME}` follows Fig. 5, line 6: the lowest-share user's job is served, "
        "or its servers are reserved for it, before anyone else's. JCT is measured from the "
        f"moment a job enters the queue. Wall time {wall_s:,.0f} s ({workers} worker "
        f"process{'es' if workers > 1 else ''}).",
        "",
        *C.claims_markdown(claims),
        "## Per scheduler (mean over seeds [95 % interval])",
        "",
        "| scheduler | jobs completed | mean JCT (s) | median JCT (s) | mean wait (s) "
        "| mean execution (s) | mean time before the queue (s) | wasted CPU (%) "
        "| wasted memory (%) | last finish (h) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in data.schedulers:
        e = lambda k, sub=None, name=name: F.seed_estimate(data, name, k, sub)  # noqa: E731
        mk = e("makespan_s")
        lines.append(
            f"| {name} | {e('jobs_completed').value:,.0f} | {_secs(e('jct_mean_s'))} | "
            f"{_secs(e('jct_median_s'))} | {_secs(e('wait_mean_s'))} | "
            f"{_secs(e('exec_mean_s'))} | {_secs(e('before_queue_mean_s'))} | "
            f"{_pct(e('wasted_mean', 'cpu'))} | {_pct(e('wasted_mean', 'mem'))} | "
            f"{mk.value / 3600:.2f} |"
        )
    lines += [
        "",
        "JCT = last finish − queue entry = wait (queue entry → first start) + execution (first "
        "start → last finish). Time before the queue = first submit → queue entry. Wasted = free "
        "CPU / memory of the servers on which some waiting task could start now (Section II-A's "
        "meaning; the paper does not define the plotted quantity), averaged until the "
        "scheduler's last task finished.",
        "",
        "## Reductions of UDRF (1 − mean udrf / mean baseline over the jobs completed under both, "
        "all seeds; 95 % bootstrap interval over jobs)",
        "",
    ]
    for other in [BASELINE, *[s for s in data.schedulers if s not in (BASELINE, UDRF_NAME)]]:
        pairs = F.pooled_pairs(data, other, UDRF_NAME)
        lines += [
            f"### against {other} ({len(pairs):,} jobs)",
            "",
            "| part | overall | by repetitions | by classes needed |",
            "|---|---|---|---|",
        ]
        for part in F.PARTS:
            cells = []
            for col in ("repetitions", "classes"):
                t = F.reduction_table(pairs, col, part, n)
                cells.append(
                    ", ".join(
                        f"{g}: {100 * r:.0f} [{_num(lo)}, {_num(hi)}]"
                        for g, r, lo, hi in zip(
                            t["group"], t["reduction"], t["low"], t["high"], strict=True
                        )
                    )
                )
            total = _pct(F.overall_reduction(pairs, part, n))
            lines.append(f"| {part} | {total} | {cells[0]} | {cells[1]} |")
        lines.append("")
    pairs = F.pooled_pairs(data)
    lines += [
        "Jobs per group (completed under both, all seeds): by repetitions "
        + ", ".join(
            f"{k}: {v:,}" for k, v in pairs["repetitions"].value_counts().sort_index().items()
        )
        + "; by classes "
        + ", ".join(f"{k}: {v:,}" for k, v in pairs["classes"].value_counts().sort_index().items())
        + ".",
        "",
        "## Runs",
        "",
        "| seed | scheduler | tasks | completed | unplaceable | engine wall (s) | tasks/s |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in data.seeds:
        for name, r in data.summaries[s]["runs"].items():
            lines.append(
                f"| {s} | {name} | {r['tasks']:,} | {r['tasks_completed']:,} | "
                f"{r['ended'].get('unplaceable', 0):,} | {r['wall_s']:.1f} | "
                f"{r['tasks_per_s']:,.0f} |"
            )
    lines += [
        "",
        "Figures: " + ", ".join(f"`{f}`" for f in figs) + ". Data: `claims.json`; per seed "
        "`seed-<s>/`: `waste.parquet`, `rducs.parquet`, `jct.parquet`, `jobs.parquet`, "
        "`<scheduler>/tasks.parquet`, `summary.json`.",
        "",
    ]
    return "\n".join(lines)


def _num(v: Any) -> str:
    return "—" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{100 * v:.0f}"


__all__ = ["CONFIG", "TASK_LEVEL", "make_claims", "report_text", "reproduce"]
