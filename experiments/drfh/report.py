"""The DRFH reproduction's report: ``report.md`` (our numbers over seeds beside the paper's,
Sec. VI: Table II, Figs. 4-8, and fairness over time), whose table of statements is generated from
the claims of :mod:`fairsim.experiments.drfh.claims`, then one section per table and figure; and
``claims.json`` and the figures beside it (:func:`write_report`).
"""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from fairsim.atomic import write_text
from fairsim.experiments import kit
from fairsim.experiments.claims import claims_markdown, write_claims
from fairsim.experiments.drfh import estimates as E
from fairsim.experiments.drfh import figures, paper
from fairsim.experiments.drfh import numbers as N
from fairsim.experiments.drfh.claims import CALIBRATION, build_claims, fig4_pools
from fairsim.scenario.reporting.plotting import scheduler_label

logger = logging.getLogger(__name__)


def _pct(x: Any, digits: int = 1) -> str:
    return kit.number(x, "share", f".{digits}f")


def _pp(x: Any) -> str:
    """A difference in points, ``+0.0 pp`` below 0.05 points either way (no ``-0.0``)."""
    if x is None or not math.isfinite(float(x)):
        return "—"
    return kit.number(x if abs(100.0 * float(x)) >= 0.05 else 0.0, "pp")


def _ratio(x: float, ref: float) -> str:
    """``x`` as a percentage of ``ref`` (``—`` when ``ref`` is not positive)."""
    return f"{100.0 * x / ref:.0f} %" if ref > 0 else "—"


def _sec(x: Any) -> str:
    return kit.number(x, "s")


def _section_header(numbers: dict[str, Any], key: str, title: str) -> list[str] | None:
    lines = [f"## {title}", ""]
    if key not in numbers:
        reason = (numbers.get("skipped") or {}).get(key, "inputs missing")
        return [*lines, f"*Skipped: {reason}.*", ""]
    return None


def _image(numbers: dict[str, Any], key: str, alt: str) -> list[str]:
    name = (numbers.get("figures") or {}).get(key)
    return [f"![{alt}]({name})", ""] if name else []


def _sensitivity_intro() -> str:
    return (
        "Under the older rule `complete` (right-censored tasks complete after their observed "
        "span, a lower bound of their run time)"
    )


def _totals(servers: dict[str, Any]) -> str:
    if "cpu" not in servers or "mem" not in servers:
        return "—"
    return f"{servers['cpu']:.2f} / {servers['mem']:.2f}"


def _provenance(numbers: dict[str, Any]) -> list[str]:
    per_seed = numbers.get("per_seed") or {}
    first: dict[str, Any] = next(iter(per_seed.values()), {})
    cfg = first.get("config") or {}
    trace = cfg.get("trace") or {}
    cluster = cfg.get("cluster") or {}
    seeds = numbers.get("seeds") or []
    lines = ["## How this was produced", ""]
    lines.append(
        f"- Scenario: `{cfg.get('name', '?')}`, seeds {', '.join(map(str, seeds))}, each in its "
        "folder `seed-<k>/` (the run files of `fairsim run`, `dedicated/`, `censored-complete/`, "
        "`fig4/`); the figures, `claims.json` and this report are over all seeds."
    )
    summaries = first.get("summaries") or {}
    if trace:
        main = [s for name, s in summaries.items() if "/" not in name and "horizon_s" in s]
        start = f"{main[0]['start_s']:,.0f} s" if main else f"{trace.get('start_s', '?')} s"
        end = trace.get("end_s")
        if end is None:
            end = f"{main[0]['horizon_s']:,.0f} s (the end of the converted data)" if main else "?"
        else:
            end = f"{end:,.0f} s"
        lines.append(
            f"- Trace (fixed, the same for every seed): {trace.get('format', '?')} at "
            f"`{trace.get('path', '?')}`, task_events parts {trace.get('parts') or 'all present'}, "
            f"simulated from {start} (where the trace's data starts) to {end}."
        )
    lines.append(
        f"- Servers: {cluster.get('servers', '?')} drawn from {cluster.get('source', '?')} with "
        "each seed; the seed also draws the dedicated clouds of Fig. 8 and picks Fig. 4's pool "
        "(the k-th closest of 399 Table I draws to the paper's totals). No scheduler draws "
        "random numbers: a seed's runs are deterministic."
    )
    if cfg.get("schedulers"):
        lines.append(f"- Schedulers: {', '.join(map(str, cfg['schedulers']))}.")
    rule = trace.get("censored", "hold")
    ded = first.get("dedicated") or {}
    counts = (
        f" The workload has {ded['censored_tasks']:,} right-censored tasks, of "
        f"{ded['users_with_censored_tasks']} users."
        if "censored_tasks" in ded
        else ""
    )
    lines.append(
        f"- Right-censored tasks (still running when the trace data ends; their run time is "
        f"unknown): rule `{rule}` — "
        + (
            "once started, such a task holds its server until the horizon and never counts as "
            "completed, in every run and figure."
            if rule == "hold"
            else "such a task completes after its observed span (a lower bound)."
        )
        + counts
        + " Figs. 6-8 give their numbers under the other rule for comparison."
    )
    runs = {r["seed"]: r for r in numbers.get("runs") or []}
    rows = []
    for s, v in per_seed.items():
        srv = v.get("servers") or {}
        f4 = v.get("fig4_servers") or {}
        hashes = sorted(
            {
                str(x["config_hash"])
                for x in (v.get("summaries") or {}).values()
                if "config_hash" in x
            }
        )
        rows.append(
            [
                str(s),
                _totals(srv),
                f"`{v.get('best_slots', '—')}`",
                str((v.get("fig4_config") or {}).get("seed", "—")),
                _totals(f4),
                ", ".join(hashes) or "—",
                f"{runs[s]['wall_s']:.0f}" if s in runs else "—",
            ]
        )
    lines += ["", "Per seed:", ""]
    lines += kit.table(
        [
            "seed",
            "pool CPU / memory (units)",
            "best Slots",
            "Fig. 4 pool seed",
            "Fig. 4 pool CPU / memory",
            "config hashes",
            "wall (s)",
        ],
        rows,
    )[:-1]
    lines += [
        "",
        "- Intervals: 95 %. Run-level numbers (Table II, Fig. 4's phase means, Fig. 5, "
        "Figs. 7-8's fractions of users): mean over seeds, Student-t interval over seeds. "
        "Fig. 6b: every (job, seed) pair finished under both schedulers of a seed, pooled, "
        "bootstrap over jobs (a job's seeds resampled together). Fig. 8's mean decrease: the "
        "worse-off (user, seed) pairs pooled, bootstrap over users.",
        "- Figures and this report: `fairsim.experiments.drfh.report` (`collect_numbers`, "
        "`build_claims`, `write_report`); the claims are also in `claims.json`; paper numbers "
        "from `fairsim.experiments.drfh.paper` (DRFH paper, Sec. VI).",
        "",
    ]
    return lines


_TABLE_II_HEADER = [
    "slots / max server",
    "CPU ours [95 % CI]",
    "CPU paper",
    "CPU diff",
    "mem ours [95 % CI]",
    "mem paper",
    "mem diff",
]


def _table_ii_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            str(int(r["slots"])),
            kit.estimate(r["cpu"]),
            _pct(r["paper_cpu"]),
            _pp(r["cpu"].value - r["paper_cpu"]),
            kit.estimate(r["mem"]),
            _pct(r["paper_mem"]),
            _pp(r["mem"].value - r["paper_mem"]),
        ]
        for r in rows
    ]


def _table_ii_shape(rows: list[dict[str, Any]], model: str) -> str:
    """Where each Table II column peaks (means over seeds) and how it moves from 16 to 20 slots."""
    by = {int(r["slots"]): r for r in rows}
    ref = paper.TABLE_II

    def argmax(values: dict[int, float]) -> int:
        return max(values, key=values.__getitem__)

    peak = {res: argmax({s: r[res].value for s, r in by.items()}) for res in ("cpu", "mem")}
    ref_peak = {i: argmax({s: v[i] for s, v in ref.items()}) for i in (0, 1)}
    text = (
        f"- Shape ({model}, means over seeds): ours peaks at {peak['cpu']} slots in CPU and "
        f"{peak['mem']} in memory (paper: {ref_peak[0]} and {ref_peak[1]})"
    )
    if 16 in by and 20 in by:
        d_cpu, d_mem = (by[20][k].value - by[16][k].value for k in ("cpu", "mem"))
        text += (
            f"; from 16 to 20 slots ours moves {_pp(d_cpu)} in CPU and {_pp(d_mem)} in memory "
            f"(paper: {_pp(ref[20][0] - ref[16][0])} and {_pp(ref[20][1] - ref[16][1])})"
        )
    return text + "."


def _sec_table_ii(numbers: dict[str, Any]) -> list[str]:
    title = "Table II — Slots utilisation by slot size"
    skipped = _section_header(numbers, "table_ii", title)
    if skipped:
        return skipped
    lines = [
        f"## {title}",
        "",
        "Default slot model (`slots-S`): a slot is 1/S of the largest server in every resource, a "
        "server holds floor((min_r c_r + 0.0012) · S) slots and a task takes ceil(max_r d_r · S) "
        "slots; users get a fair share of slots. Mean utilisation over the window, mean over "
        "seeds with its 95 % interval.",
        "",
    ]
    rows = sorted(numbers["table_ii"], key=lambda r: int(r["slots"]))
    lines += kit.table(_TABLE_II_HEADER, _table_ii_rows(rows))
    notes = [
        _table_ii_shape(rows, "multi-slot"),
        "- The CPU column at 10-14 slots is where the slot model was fitted (kind "
        "`by-construction` in the claims): " + CALIBRATION.removeprefix("calibration: "),
    ]
    memory = (numbers.get("explanations") or {}).get("table_ii:memory")
    if memory:
        notes.append(f"- The memory column: {memory}")
    orders = numbers.get("table_ii_orders") or {}
    best = numbers.get("best_slots") or {}
    counts = pd.Series([b for b in best.values() if b]).value_counts()
    notes.append(
        "- Best slot size (highest mean of CPU and memory utilisation), per seed: "
        + ", ".join(f"`{k}` in {v} of {len(best)}" for k, v in counts.items())
        + f" (paper: {paper.TABLE_II_BEST_SLOTS} slots); 14 slots minus the best other, "
        f"paired per seed: {kit.estimate(orders.get('best14'), 'pp')}; CPU at 16 slots minus the "
        f"highest other: {kit.estimate(orders.get('peak16'), 'pp')}."
    )
    if numbers.get("table_ii_single"):
        single = sorted(numbers["table_ii_single"], key=lambda r: int(r["slots"]))
        notes += [
            "",
            "One slot per task (`slots-S-single`: every task takes one slot; a task larger "
            "than one slot never runs):",
            "",
            *kit.table(_TABLE_II_HEADER, _table_ii_rows(single)),
            _table_ii_shape(single, "one slot per task"),
            "- The tasks larger than a slot, which this model never runs, carry much of the CPU "
            "demand: it lies below the paper in CPU. Multi-slot (`slots-S`) stays the default "
            "and the Slots baseline of Figs. 5-7: it is the stronger baseline, so DRFH's gains "
            "are not overstated (docs/drfh-google.md).",
        ]
    return [*lines, *notes, "", *_image(numbers, "table_ii", "Table II")]


def _sec_fig4(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 4 — dynamic allocation, three users on 100 servers (Best-Fit DRFH)"
    skipped = _section_header(numbers, "fig4", title)
    if skipped:
        return skipped
    lines = [
        f"## {title}",
        "",
        "Means over the middle 60 % of each phase window (time-weighted), then over the seeds' "
        f"pools ({fig4_pools(numbers)}).",
        "",
    ]
    rows = []
    for phase, per_user in numbers["fig4"].items():
        ref_phase = paper.FIG4_SHARES.get(phase, {})
        for user, vals in per_user.items():
            for res in ("cpu", "mem", "dominant"):
                ref = ref_phase.get(user, {}).get(res)
                rows.append(
                    [
                        phase,
                        user,
                        res,
                        kit.estimate(vals[res]),
                        _pct(ref),
                        _pp(vals[res].value - ref) if ref is not None else "—",
                    ]
                )
    lines += kit.table(["phase", "user", "share", "ours [95 % CI]", "paper", "diff"], rows)
    notes = []
    for phase, per_user in numbers["fig4"].items():
        dom = [v["dominant"].value for v in per_user.values()]
        if len(dom) > 1:
            notes.append(
                f"- {phase}: mean dominant shares differ by {100 * (max(dom) - min(dom)):.1f} pp "
                "(DRFH equalises them up to one task's size)."
            )
    expl = (numbers.get("explanations") or {}).get("fig4")
    if expl:
        notes.append(f"- Where ours differs: {expl}")
    return [*lines, *notes, "", *_image(numbers, "fig4", "Fig. 4")]


def _sec_fig4_deficit(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 4 — Best-Fit DRFH against the DRFH allocation"
    skipped = _section_header(numbers, "fig4_deficit", title)
    if skipped:
        return skipped
    d = numbers["fig4_deficit"]
    phases = d["phases"]
    first = phases[N.FIG4_DEFICIT_PHASES[0]]
    lines = [
        f"## {title}",
        "",
        "Every 5 s (`collect.fairness`), each active user's global dominant share online "
        "against the divisible DRFH allocation of the same users (their tasks present as "
        "bounds) on the same pool. A phase runs from one join or departure to the next, as the "
        "run played them (user 1 departs when its last task finishes); its first "
        f"{first['settle_s'].value:,.0f} s (one task run time) are left out of the settled "
        "numbers. Means over seeds with their 95 % interval "
        f"({fig4_pools(numbers)}).",
        "",
    ]
    rows = []
    for phase, v in phases.items():
        rows.append(
            [
                phase,
                f"{v['start_s'].value:,.0f} – {v['end_s'].value:,.0f} s",
                kit.estimate(v["max_deficit_mean"]),
                kit.estimate(v["max_deficit_max"]),
                kit.estimate(v["max_deficit_max_all"]),
                kit.estimate(v["jain_mean"], ""),
                kit.estimate(v["online"]),
                kit.estimate(v["whole"]),
                kit.estimate(v["reference"]),
                kit.estimate(v["divisible"]),
            ]
        )
    lines += kit.table(
        [
            "phase",
            "window (mean over seeds)" if len(numbers.get("seeds") or []) > 1 else "window",
            "largest deficit, mean",
            "largest deficit, max",
            "max with the first run time",
            "Jain's index, mean",
            "online dominant share",
            "whole tasks placed at once",
            "DRFH allocation (reference)",
            "divisible, unbounded",
        ],
        rows,
    )
    lines += [
        "Dominant shares are the mean over the phase's active users and settled instants; "
        '"whole tasks placed at once" is progressive filling of whole tasks with the server '
        'Best-Fit chooses (`fairsim solve bf-drfh`) and "divisible, unbounded" the DRFH '
        "allocation (`fairsim solve drfh`), both on the pool with every active user's backlog "
        "unbounded.",
        "",
        f"- Bound of the claim: {100 * paper.FIG4_DEFICIT_BOUND:.2f} % "
        f"({paper.FIG4_BOUND_WHY}). Largest settled deficit over the phases, per seed then over "
        f"seeds: {kit.estimate(d['worst'])}.",
    ]
    expl = (numbers.get("explanations") or {}).get("fig4:deficit")
    if expl and d["worst"].finite and d["worst"].bounds()[1] > paper.FIG4_DEFICIT_BOUND:
        lines.append(f"- Where ours differs: {expl}")
    return [*lines, "", *_image(numbers, "fig4_deficit", "Fig. 4's deficit")]


def _sec_fairness(numbers: dict[str, Any]) -> list[str]:
    title = "Fairness over time on the Google trace — Slots-16, First-Fit and Best-Fit DRFH"
    skipped = _section_header(numbers, "fairness", title)
    if skipped:
        return skipped
    f = numbers["fairness"]
    lines = [
        f"## {title}",
        "",
        f"Step 1's runs of {', '.join(N.FAIRNESS_SCHEDULERS)} again with "
        f"`collect.fairness: {{interval_s: {f['interval_s']:g}}}` ({f['instants']} instants in "
        "seed 1's run; `seed-<k>/fairness/`): at every instant each active user (a task "
        "running or waiting), represented by its tasks present and their mean demand, against "
        "the DRFH allocation of the same users on the same pool (docs/fairness.md). Time "
        "averages over the instants, then the mean over seeds with its 95 % interval; the "
        "paper gives none of these numbers.",
        "",
    ]
    head = ["scheduler", *(E.FAIRNESS_AVERAGES[k][1] for k in E.FAIRNESS_AVERAGES)]
    head.insert(3, "Jain's index of the DRFH allocation")
    rows = []
    for s in N.FAIRNESS_SCHEDULERS:
        a = f["averages"][s]
        cells = [
            kit.estimate(a[k], "share", ".2f") if k == "max_deficit" else kit.estimate(a[k], unit)
            for k, (unit, _) in E.FAIRNESS_AVERAGES.items()
        ]
        cells.insert(2, kit.estimate(f["context"][s]["reference_jain"], ""))
        rows.append([scheduler_label(s), *cells])
    lines += kit.table(head, rows)
    worst = f["context"][N.FAIRNESS_SCHEDULERS[-1]]
    lines += [
        "The DRFH allocation itself, which bounds each user by its tasks present, has a low "
        "Jain's index too (fourth column): most active users have few tasks present. The "
        "largest deficit is about the share DRFH gives "
        "a user with a backlog: at the median instant the user with the largest deficit has "
        f"{worst['worst_running'].value:,.0f} task(s) running and "
        f"{worst['worst_waiting'].value:,.0f} waiting under Best-Fit DRFH (medians over the "
        "instants, mean over seeds); the L1 distance sums the differences over every user.",
        "",
    ]
    same = {s: v for s, v in f["same_schedule"].items()}
    n_same = sum(bool(x) for v in same.values() for x in v)
    n_all = sum(len(v) for v in same.values())
    lines += [
        f"- The schedules are step 1's: {n_same} of {n_all} (seed, scheduler) `tasks.parquet` "
        "byte-identical to the main run's.",
        "- Time in the reference solves per run (mean over seeds; measured on a shared machine): "
        + ", ".join(
            f"{s} {kit.estimate(f['solve_s'][s], '')} s of {kit.estimate(f['wall_s'][s], '')} s"
            for s in N.FAIRNESS_SCHEDULERS
        )
        + ".",
    ]
    return [*lines, "", *_image(numbers, "fairness", "fairness over time")]


def _sec_production(numbers: dict[str, Any]) -> list[str]:
    title = "Production context — the trace's own schedule beside DRFH and Slots"
    skipped = _section_header(numbers, "production", title)
    if skipped:
        return skipped
    p = numbers["production"]
    per = p["per"]
    lines = [
        f"## {title}",
        "",
        f"`configs/google-recorded.yaml` (`{N.PRODUCTION_DIR}/`, one run: nothing in it "
        f"depends on a seed): the sample's {p['tasks']:,} tasks on the trace's own "
        f"{p['servers']:,} machines, not on Table I draws. `recorded` replays what Google's "
        "scheduler did (each recorded run from its SCHEDULE to its FINISH, FAIL, KILL, EVICT or "
        "LOST, on its machine; docs/recorded.md); it is the only schedule allowed to "
        "over-commit a machine. Utilisation is by requests, like every other number of this "
        f"report. JCT over the {p['common_jobs']:,} jobs finished under all four; fairness over "
        "time every 600 s against the DRFH allocation (docs/fairness.md). One run each: no "
        "interval.",
        "",
    ]
    head = [
        "schedule",
        "mean CPU",
        "mean memory",
        "peak CPU",
        "peak memory",
        "tasks completed",
        "users' mean completion ratio",
        "mean JCT",
        "median JCT",
        "Jain's index",
        "largest deficit",
    ]
    rows = []
    for s in p["schedulers"]:
        v = per[s]
        rows.append(
            [
                "recorded (trace)" if s == "recorded" else scheduler_label(s),
                _pct(v["cpu"]),
                _pct(v["mem"]),
                _pct(v["peak_cpu"]),
                _pct(v["peak_mem"]),
                _pct(v["completed"]),
                _pct(v["user_ratio"]),
                _sec(v["jct_mean_s"]),
                _sec(v["jct_median_s"]),
                "—" if v["jain"] is None else f"{v['jain']:.3f}",
                "—" if v["max_deficit"] is None else f"{100 * v['max_deficit']:.2f} %",
            ]
        )
    lines += kit.table(head, rows)
    oc = p.get("overcommit") or {}
    for r, name in (("cpu", "CPU"), ("mem", "memory")):
        if r in oc:
            o = oc[r]
            lines.append(
                f"- Over-commitment in {name} (recorded): up to {o['servers_max']:,} of "
                f"{p['servers']:,} machines at once, {o['servers_end']:,} at the end of the "
                f"sample; the running tasks request up to {_pct(o['amount_max'])} of the pool's "
                f"{name} above the machines' capacity, and {_pct(o['utilization_end'])} of the "
                "pool's capacity in all at the end."
            )
    rule = p.get("request_rule")
    if rule:
        c, m = rule["cpu"], rule["mem"]
        lines.append(
            "- Requests: every schedule here uses each task's first request (the converter's "
            "rule, docs/traces.md). Read instead from each SCHEDULE row (the request the run was "
            "placed with; `fairsim trace check`, `trace_check.json`), the running tasks of the "
            f"trace request {_pct(c['schedule_row'])} of the CPU and {_pct(m['schedule_row'])} "
            f"of the memory on average over {rule['samples']} samples every "
            f"{rule['sample_s']:,.0f} s (the replay: {_pct(c['first_request'])} and "
            f"{_pct(m['first_request'])}), with {c['over_schedule_row']:,.0f} and "
            f"{m['over_schedule_row']:,.0f} machines over-committed in CPU and memory (the "
            f"replay: {c['over_first_request']:,.0f} and {m['over_first_request']:,.0f}): the "
            "over-commitment figures depend on that reading, the comparison of schedules "
            "below does not (they all use the first request)."
        )
    rec, bf, slots = per["recorded"], per["bf-drfh"], per["slots-16"]
    over = max((o["servers_max"] for o in oc.values()), default=0)
    lines += [
        "",
        "What this says about the paper's comparison: the paper measures DRFH against a slot "
        "scheduler, not against what the cluster achieved. On the same machines and tasks, "
        f"Slots-16 keeps {_ratio(slots['cpu'], rec['cpu'])} of the CPU and "
        f"{_ratio(slots['mem'], rec['mem'])} of the memory that the trace's own schedule kept "
        f"requested on average, Best-Fit DRFH {_ratio(bf['cpu'], rec['cpu'])} and "
        f"{_ratio(bf['mem'], rec['mem'])}. "
        + (
            f"The trace's schedule over-committed up to {over:,} machines at once, which no "
            "simulated scheduler may do (requests are not usage), so its utilisation by requests "
            "is reachable only by over-committing, and the simulated JCTs and completion ratios "
            "are those of a cluster that admits none."
            if over
            else "The trace's schedule over-committed no machine in this window."
        ),
        "",
    ]
    return [*lines, *_image(numbers, "production", "production context")]


def _sec_fig5(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 5 — CPU and memory utilisation over time"
    skipped = _section_header(numbers, "fig5", title)
    if skipped:
        return skipped
    f5 = numbers["fig5"]
    lines = [f"## {title}", "", f"Baseline: {E.slots_label(numbers)}.", ""]
    rows = [
        [label, kit.estimate(f5["mean"][role]["cpu"]), kit.estimate(f5["mean"][role]["mem"])]
        for role, label in f5["roles"].items()
    ]
    lines += kit.table(["scheduler", "mean CPU [95 % CI]", "mean memory [95 % CI]"], rows)
    lines += [
        f"Paper: {paper.BY_KEY['fig5'].text}. Fraction of sampled times (one a minute) at which "
        "the first scheduler's utilisation is at least the second's, mean over seeds:",
        "",
    ]
    rows = []
    for a, b in (("bf-drfh", "ff-drfh"), ("bf-drfh", "slots"), ("ff-drfh", "slots")):
        rows.append(
            [
                f"{f5['roles'][a]} ≥ {f5['roles'][b]}",
                kit.estimate(f5["above"][(a, b, "cpu")]),
                kit.estimate(f5["above"][(a, b, "mem")]),
            ]
        )
    lines += kit.table(["comparison", "CPU", "memory"], rows)
    notes = [
        f"- {f5['roles'][a]} minus Slots, the lower of CPU and memory (paired per seed): "
        f"{kit.estimate(f5['diff'][a], 'pp')}."
        for a in ("bf-drfh", "ff-drfh")
    ]
    return [*lines, *notes, "", *_image(numbers, "fig5", "Fig. 5")]


def _fig6_table(f6: dict[str, Any]) -> list[str]:
    rows = []
    for _, r in f6["bins"].iterrows():
        rows.append(
            [
                str(r["bin"]),
                f"{r['jobs']:,}",
                f"{r['pairs']:,}",
                _sec(r["mean_jct_a_s"]),
                _sec(r["mean_jct_b_s"]),
                kit.estimate(r["ratio_of_means"]),
                kit.estimate(r["mean_of_ratios"]),
            ]
        )
    return kit.table(
        [
            "job size (tasks)",
            "jobs",
            "(job, seed) pairs",
            "mean JCT BF-DRFH",
            "mean JCT Slots",
            "reduction of the mean JCT [95 % CI]",
            "mean of per-job reductions [95 % CI]",
        ],
        rows,
    )


def _sec_fig6(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 6 — job completion times, Best-Fit DRFH vs best Slots"
    skipped = _section_header(numbers, "fig6", title)
    if skipped:
        return skipped
    f6 = numbers["fig6"]
    lines = [
        f"## {title}",
        "",
        f"Jobs finished under both Best-Fit DRFH and {E.slots_label(numbers)} (each seed's own "
        "best Slots run), pooled over seeds. Two readings of the paper's \"mean completion time "
        'reduction" per bin, each with its 95 % bootstrap interval over jobs: the reduction of '
        "the bin's mean JCT, 1 - mean(JCT_BF) / mean(JCT_Slots), and the mean of every job's "
        "own reduction, mean(1 - JCT_BF / JCT_Slots).",
        "",
        *_fig6_table(f6),
        f"**The verdicts use the mean of per-job reductions.** {paper.FIG6_WHY}",
        "",
        "- Trend (Spearman's rho between bin and reduction, bootstrap over jobs): "
        f"mean of per-job reductions {kit.estimate(f6['trend']['mean_of_ratios'], '')}; "
        f"reduction of the mean JCT {kit.estimate(f6['trend']['ratio_of_means'], '')}.",
    ]
    expl = numbers.get("explanations") or {}
    for key in ("fig6", "fig6:trend"):
        if key in expl:
            lines.append(f"- {'Small jobs' if key == 'fig6' else 'Trend'}: {expl[key]}")
    sens = (numbers.get("sensitivity") or {}).get("fig6")
    if sens:
        lines += [
            "",
            f"{_sensitivity_intro()}, on the jobs finished under both there:",
            "",
            *_fig6_table(sens)[:-1],
            "",
            "- Trend under `complete`: mean of per-job reductions "
            f"{kit.estimate(sens['trend']['mean_of_ratios'], '')}; reduction of the mean JCT "
            f"{kit.estimate(sens['trend']['ratio_of_means'], '')}.",
        ]
    return [*lines, "", *_image(numbers, "fig6", "Fig. 6")]


def _sec_fig7(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 7 — per-user task completion ratio, Best-Fit DRFH vs best Slots"
    skipped = _section_header(numbers, "fig7", title)
    if skipped:
        return skipped
    f7 = numbers["fig7"]
    lines = [
        f"## {title}",
        "",
        f"Users in both runs: {', '.join(map(str, sorted(set(f7['users']))))}.",
        "",
    ]
    first: dict[str, Any] = next(iter((numbers.get("per_seed") or {}).values()), {})
    ded = first.get("dedicated") or {}
    if ded.get("censored_rule") == "hold" and "users_with_censored_tasks" in ded:
        n_users, n_cens = int(ded["users"]), int(ded["users_with_censored_tasks"])
        lines += [
            f"Under the rule `hold` a user with a right-censored task can never complete every "
            f"task: {n_cens} of the {n_users} users have one, so at most {n_users - n_cens} "
            f"({_pct((n_users - n_cens) / n_users)}) can count in the last row.",
            "",
        ]
    sens = (numbers.get("sensitivity") or {}).get("fig7") or {}
    rows = [
        [
            "users with a higher ratio under BF-DRFH",
            kit.estimate(f7["higher_under_a"]),
            kit.estimate(sens.get("higher_under_a")),
            f'"almost all" (read as ≥ {_pct(paper.ALMOST_ALL, 0)})',
        ],
        [
            "users with a lower ratio under BF-DRFH",
            kit.estimate(f7["lower_under_a"]),
            kit.estimate(sens.get("lower_under_a")),
            "not given",
        ],
        [
            "users with all tasks completed under BF-DRFH but not under Slots",
            kit.estimate(f7["full_under_a_not_b"]),
            kit.estimate(sens.get("full_under_a_not_b")),
            _pct(paper.FIG7_FULL_UNDER_BF_NOT_SLOTS),
        ],
    ]
    lines += kit.table(["quantity", "ours [95 % CI]", "ours, rule `complete`", "paper"], rows)
    expl = (numbers.get("explanations") or {}).get("fig7")
    notes = [f"- Where ours differs: {expl}"] if expl else []
    return [*lines, *notes, "", *_image(numbers, "fig7", "Fig. 7")]


def _sec_fig8(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 8 — sharing incentive, dedicated clouds vs shared cloud"
    skipped = _section_header(numbers, "fig8", title)
    if skipped:
        return skipped
    f8 = numbers["fig8"]
    sens = (numbers.get("sensitivity") or {}).get("fig8") or {}
    lines = [
        f"## {title}",
        "",
        f"Users compared: {', '.join(map(str, sorted(set(f8['users']))))}; worse off per seed: "
        f"{', '.join(map(str, f8['worse_off']))}.",
        "",
    ]
    rows = [
        [
            "users worse off in the shared cloud",
            kit.estimate(f8["worse_off_fraction"]),
            kit.estimate(sens.get("worse_off_fraction")),
            _pct(paper.FIG8_WORSE_OFF_FRACTION),
        ],
        [
            "mean decrease of their completion ratio (points)",
            kit.estimate(f8["mean_decrease"], "pp"),
            kit.estimate(sens.get("mean_decrease"), "pp"),
            f'"only slightly" (read as ≤ {100 * paper.ONLY_SLIGHTLY:.0f} points)',
        ],
        [
            "users better off in the shared cloud",
            kit.estimate(f8["better_off_fraction"]),
            kit.estimate(sens.get("better_off_fraction")),
            '"most"',
        ],
    ]
    lines += kit.table(["quantity", "ours [95 % CI]", "ours, rule `complete`", "paper"], rows)
    expl = (numbers.get("explanations") or {}).get("fig8")
    notes = [f"- Where ours differs: {expl}"] if expl else []
    return [*lines, *notes, "", *_image(numbers, "fig8", "Fig. 8")]


def _sec_run_stats(numbers: dict[str, Any]) -> list[str]:
    lines = ["## Run statistics", ""]
    per_seed = numbers.get("per_seed") or {}
    names: list[str] = []
    for v in per_seed.values():
        names += [s for s in v.get("summaries") or {} if s not in names]
    rows = []
    for s in names:
        summ = [v["summaries"][s] for v in per_seed.values() if s in v.get("summaries", {})]
        wall = [x["wall_s"] for x in summ if isinstance(x.get("wall_s"), int | float)]
        tps = [x["tasks_per_s"] for x in summ if isinstance(x.get("tasks_per_s"), int | float)]
        rows.append(
            [
                s,
                str(len(summ)),
                ", ".join(sorted({f"{x.get('tasks', '—')}" for x in summ})),
                kit.estimate(E.across([x.get("tasks_completed") for x in summ]), "n"),
                f"{sum(wall):.1f}" if wall else "—",
                f"{sum(tps) / len(tps):,.0f}" if tps else "—",
            ]
        )
    if not rows:
        return [*lines, "*No summary.json found.*", ""]
    lines += kit.table(
        [
            "scheduler",
            "seeds",
            "tasks",
            "completed, mean [95 % CI]",
            "wall_s (all seeds)",
            "tasks_per_s (mean)",
        ],
        rows,
    )
    total = numbers.get("wall_s_total")
    if total is not None:
        lines += [
            f"Wall time of the whole reproduction: {total:,.0f} s ({len(per_seed)} seeds over "
            f"{numbers.get('workers', 1)} worker process(es)).",
            "",
        ]
    return lines


def write_report(results: str | os.PathLike[str], numbers: dict[str, Any]) -> Path:
    """Draw the figures (:func:`fairsim.experiments.drfh.figures.draw`), then write
    ``claims.json`` and ``report.md`` into ``results`` (atomically).

    Parameters
    ----------
    results : path-like
        The reproduction's folder.
    numbers : dict
        Output of :func:`fairsim.experiments.drfh.estimates.collect_numbers` (with
        :func:`fairsim.experiments.drfh.experiment.run_experiment`'s additions), optionally with
        ``numbers["explanations"]`` filled:
        keys are a section (``"table_ii"``, ``"fig4"`` ... ``"fig8"``) or a finer key (e.g.
        ``"table_ii:14:cpu"``, ``"fig6:trend"``); values are sentences giving the likely causes
        of a difference, added to the reason of a failed claim and to the section.
        ``"table_ii:memory"`` is a note on Table II's memory column.

    Returns
    -------
    pathlib.Path
        Path of the written report.
    """
    root = Path(results)
    figures.draw(root, numbers)
    claims = build_claims(numbers)
    write_claims(root, claims)
    n = len(numbers.get("seeds") or [])
    lines = [
        "# DRFH reproduction — our results beside the paper's",
        "",
        "Paper: W. Wang, B. Li, B. Liang, *Dominant Resource Fairness in Cloud Computing Systems "
        "with Heterogeneous Servers*, Section VI (Table II, Figs. 4–8). "
        + (
            f"Every number is over {n} seeds with its 95 % interval; each statement is decided by "
            "the rule in its row."
            if n > 1
            else "One seed: no intervals over seeds; verdicts rest on point estimates (Fig. 6b "
            "still has bootstrap intervals over jobs)."
        ),
        "",
    ]
    lines += _provenance(numbers)
    lines += claims_markdown(claims)
    for section in (
        _sec_table_ii,
        _sec_fig4,
        _sec_fig4_deficit,
        _sec_fig5,
        _sec_fig6,
        _sec_fig7,
        _sec_fig8,
        _sec_fairness,
        _sec_production,
        _sec_run_stats,
    ):
        lines += section(numbers)
    skipped = numbers.get("skipped") or {}
    if skipped:
        lines += ["## Skipped", ""] + [f"- {k}: {v}" for k, v in skipped.items()] + [""]
    dest = root / "report.md"
    write_text(dest, "\n".join(lines))
    logger.info("wrote %s", dest)
    return dest
