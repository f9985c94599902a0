"""Markdown report of the DRFH reproduction: our numbers beside the paper's (Sec. VI, Figs. 4-8).

:func:`collect_numbers` runs every figure function of :mod:`fairsim.experiments.drfh.figures`
on a results directory (saving ``fig4.png`` ... ``fig8.png`` into it) and gathers the numbers;
:func:`write_report` turns them into ``R/report.md``, written atomically.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from fairsim.atomic import write_text
from fairsim.experiments.drfh import figures as figures
from fairsim.experiments.drfh import paper as paper

logger = logging.getLogger(__name__)

#: Differences from the paper larger than this (fraction, i.e. 2 percentage points) get explained.
TOLERANCE = 0.02

_GENERIC_CAUSES = {
    "table_ii": (
        "The paper leaves the slot model open (how a task larger than one slot is placed, and "
        "how slots are shared among users), and our trace slice and server draw differ from the "
        "paper's."
    ),
    "fig4": (
        "The paper's 100-server draw is not published (only its totals, 52.75 CPU and 51.32 "
        "memory units), so indivisible tasks pack differently on our servers; task run times "
        "and arrival rates are not given either."
    ),
    "fig5": "Trace slice, server draw (seed) and the Slots model differ from the paper's.",
    "fig6": (
        "The job population (trace slice), the horizon, and the Slots baseline chosen differ "
        "from the paper's; small bins may hold few jobs."
    ),
    "fig7": (
        "The trace slice, horizon and the Slots baseline differ from the paper's; the paper "
        "gives only an approximate figure ('around 20%')."
    ),
    "fig8": (
        "The dedicated clouds are rounded to whole servers (2000/n per user) drawn from our "
        "pool, and the trace slice differs from the paper's."
    ),
}


# --------------------------------------------------------------------------- helpers


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        return {}
    return data if isinstance(data, dict) else {}


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if hasattr(obj, "item"):  # numpy scalar
        return _jsonable(obj.item())
    return obj


def _pct(x: Any, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{100.0 * float(x):.{digits}f} %"


def _pp(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    v = 100.0 * float(x)
    return f"{0.0 if abs(v) < 0.05 else v:+.1f} pp"


def _sec(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return f"{float(x):,.0f} s"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return [*lines, ""]


def _explain(numbers: dict[str, Any], section: str, key: str | None = None) -> str:
    expl = numbers.get("explanations") or {}
    if key is not None and key in expl:
        return str(expl[key])
    return str(expl.get(section, _GENERIC_CAUSES.get(section, "")))


def _compare_sentence(
    numbers: dict[str, Any], section: str, what: str, ours: float, ref: float, key: str
) -> str:
    """One sentence on the difference between our number and the paper's."""
    if ours is None or ref is None or not (math.isfinite(ours) and math.isfinite(ref)):
        return f"- {what}: no comparison possible (missing value)."
    diff = ours - ref
    if abs(diff) <= TOLERANCE + 1e-9:  # float noise must not flip a 2.0 pp difference
        return (
            f"- {what}: ours {_pct(ours)} vs paper {_pct(ref)} — within ±"
            f"{100 * TOLERANCE:.0f} pp, agrees."
        )
    way = "higher" if diff > 0 else "lower"
    return (
        f"- {what}: ours {_pct(ours)} is {abs(100 * diff):.1f} pp {way} than the paper's "
        f"{_pct(ref)}. Likely causes: {_explain(numbers, section, key)}"
    )


# --------------------------------------------------------------------------- collection


def collect_numbers(results: str | os.PathLike[str]) -> dict[str, Any]:
    """Run every figure function on ``results`` (saving ``fig4.png`` ... ``fig8.png``) and collect.

    A piece whose inputs are missing is skipped and recorded in ``numbers["skipped"]`` with the
    reason; the others still run.

    Parameters
    ----------
    results : path-like
        Results directory of ``fairsim run`` for the DRFH reproduction.

    Returns
    -------
    dict
        JSON-serialisable: ``config``, ``servers`` (count and totals), ``summaries``
        (``{scheduler: summary}``, including ``"fig4/bf-drfh"``), ``table_ii`` (list of row
        dicts), ``best_slots``, ``fig4``, ``fig5``, ``fig6`` (``{"a", "b", "overall", "bins"}``),
        ``fig7``, ``fig8``, ``figures`` (``{key: file name}``), ``skipped`` (``{key: reason}``)
        and an empty ``explanations`` dict for the caller to fill.
    """
    root = Path(results)
    numbers: dict[str, Any] = {
        "results": str(root),
        "config": _read_yaml(root / "config.yaml"),
        "summaries": {},
        "figures": {},
        "skipped": {},
        "explanations": {},
    }
    servers_path = root / "servers.parquet"
    if servers_path.exists():
        srv = pd.read_parquet(servers_path)
        numbers["servers"] = {
            "count": len(srv),
            **{r: float(srv[r].sum()) for r in ("cpu", "mem") if r in srv},
        }
    for s in figures.present_schedulers(root):
        numbers["summaries"][s] = figures.read_summary(root, s)
    fig4_summary = root / "fig4" / "bf-drfh" / "summary.json"
    if fig4_summary.exists():
        numbers["summaries"]["fig4/bf-drfh"] = json.loads(fig4_summary.read_text())

    def attempt(key: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except (FileNotFoundError, KeyError, ValueError) as exc:
            logger.warning("skipping %s: %s", key, exc)
            numbers["skipped"][key] = f"{type(exc).__name__}: {exc}"
            return None

    table = attempt("table_ii", lambda: figures.table_ii(root))
    if table is not None and table.empty:
        numbers["skipped"]["table_ii"] = "no R/slots-S/ results found"
        table = None
    if table is not None:
        numbers["table_ii"] = table.to_dict(orient="records")
        numbers["best_slots"] = figures.best_slots(table)
    best = numbers.get("best_slots")
    single = attempt("table_ii_single", lambda: figures.table_ii(root, model="single"))
    if single is not None and not single.empty:
        numbers["table_ii_single"] = single.to_dict(orient="records")
        numbers["best_slots_single"] = figures.best_slots(single)

    fig4 = attempt("fig4", lambda: figures.fig4_shares(root, root / "fig4.png"))
    if fig4 is not None:
        numbers["fig4"] = fig4
        numbers["figures"]["fig4"] = "fig4.png"

    fig5_scheds = ([best] if best else []) + [
        s for s in ("ff-drfh", "bf-drfh") if (root / s / "utilization.parquet").exists()
    ]
    if fig5_scheds:
        fig5 = attempt(
            "fig5", lambda: figures.fig5_utilization(root, fig5_scheds, root / "fig5.png")
        )
        if fig5 is not None:
            numbers["fig5"] = fig5
            numbers["figures"]["fig5"] = "fig5.png"
    else:
        numbers["skipped"]["fig5"] = "no utilization.parquet for Slots, ff-drfh or bf-drfh"

    if best is None:
        for key in ("fig6", "fig7"):
            numbers["skipped"][key] = "no Slots baseline (no R/slots-S/ results)"
    else:
        fig6 = attempt("fig6", lambda: figures.fig6_jct(root, "bf-drfh", best, root / "fig6.png"))
        if fig6 is not None:
            numbers["fig6"] = {
                "a": fig6.attrs["a"],
                "b": fig6.attrs["b"],
                "overall": fig6.attrs["overall"],
                "jobs_both": fig6.attrs["jobs_both"],
                "bins": fig6.to_dict(orient="records"),
            }
            numbers["figures"]["fig6"] = "fig6.png"
        fig7 = attempt(
            "fig7", lambda: figures.fig7_completion(root, "bf-drfh", best, root / "fig7.png")
        )
        if fig7 is not None:
            numbers["fig7"] = fig7
            numbers["figures"]["fig7"] = "fig7.png"

    fig8 = attempt("fig8", lambda: figures.fig8_sharing_incentive(root, root / "fig8.png"))
    if fig8 is not None:
        numbers["fig8"] = fig8
        numbers["figures"]["fig8"] = "fig8.png"
    dedicated = root / "dedicated" / "summary.json"
    if dedicated.exists():
        numbers["dedicated"] = json.loads(dedicated.read_text())
    sens = attempt("sensitivity", lambda: sensitivity_numbers(root, best))
    if sens is not None:
        numbers["sensitivity"] = sens
    return _jsonable(numbers)


def sensitivity_numbers(results: Path, best: str | None) -> dict[str, Any] | None:
    """Figs. 6-8 numbers of the runs under the older rule for right-censored tasks.

    Reads ``R/censored-complete/`` (the best Slots run and Best-Fit DRFH, and the dedicated
    clouds, where right-censored tasks complete after their observed span); None when absent.

    Returns
    -------
    dict or None
        ``fig6`` (``overall``, ``jobs_both``, ``small`` = the 1-50 tasks bin's reduction,
        ``reductions`` = every bin's),
        ``fig7`` and ``fig8`` (as :func:`fairsim.experiments.drfh.figures.fig7_completion` and
        :func:`fairsim.experiments.drfh.figures.fig8_sharing_incentive`), ``completed`` (tasks
        completed by
        Best-Fit DRFH).
    """
    sub = Path(results) / figures.SENSITIVITY_DIR
    if best is None or not (sub / best).is_dir() or not (sub / "bf-drfh").is_dir():
        return None
    f6 = figures.fig6_jct(sub, "bf-drfh", best)
    out: dict[str, Any] = {
        "rule": "complete",
        "b": best,
        "fig6": {
            "overall": f6.attrs["overall"],
            "jobs_both": f6.attrs["jobs_both"],
            "small": f6["reduction"].iloc[0],
            "reductions": [None if not np.isfinite(x) else float(x) for x in f6["reduction"]],
        },
        "fig7": figures.fig7_completion(sub, "bf-drfh", best),
        "completed": figures.read_summary(sub, "bf-drfh").get("tasks_completed"),
    }
    if (sub / "dedicated" / "users.parquet").exists():
        out["fig8"] = figures.fig8_sharing_incentive(sub)
    return out


def _sensitivity_line(numbers: dict[str, Any], fig: str) -> list[str]:
    """One line: the same figure's headline under the older rule for right-censored tasks."""
    sens = numbers.get("sensitivity") or {}
    if fig not in sens:
        return []
    head = (
        "- Sensitivity to the censoring rule: under the older rule `complete` (right-censored "
        "tasks complete after their observed span, a lower bound of their run time), "
    )
    v = sens[fig]
    if fig == "fig6":
        return [
            head + f"the mean JCT reduction is {_pct(v['overall'])} over {v['jobs_both']:,} "
            f"jobs ({_pct(v['small'])} for 1-50 tasks)."
        ]
    if fig == "fig7":
        return [
            head + f"{_pct(v['full_under_a_not_b'])} of users complete every task under "
            f"BF-DRFH but not under Slots, and {_pct(v['higher_under_a'])} have a higher ratio."
        ]
    return [
        head + f"{_pct(v['worse_off_fraction'])} of users ({v['worse_off']}) are worse off in "
        "the shared cloud."
    ]


# --------------------------------------------------------------------------- sections


def _section_header(numbers: dict[str, Any], key: str, title: str) -> list[str] | None:
    lines = [f"## {title}", ""]
    if key not in numbers:
        reason = (numbers.get("skipped") or {}).get(key, "inputs missing")
        return [*lines, f"*Skipped: {reason}.*", ""]
    return None


def _image(numbers: dict[str, Any], key: str, alt: str) -> list[str]:
    name = (numbers.get("figures") or {}).get(key)
    return [f"![{alt}]({name})", ""] if name else []


def _provenance(numbers: dict[str, Any]) -> list[str]:
    cfg = numbers.get("config") or {}
    trace = cfg.get("trace") or {}
    cluster = cfg.get("cluster") or {}
    summaries = numbers.get("summaries") or {}
    seeds = sorted({str(s["seed"]) for s in summaries.values() if "seed" in s})
    hashes = sorted({str(s["config_hash"]) for s in summaries.values() if "config_hash" in s})
    servers = numbers.get("servers") or {}
    lines = ["## How this was produced", ""]
    lines.append(
        f"- Scenario: `{cfg.get('name', '?')}`; every file named here is in this report's folder."
    )
    if trace:
        main = [s for name, s in summaries.items() if "/" not in name and "horizon_s" in s]
        start = f"{main[0]['start_s']:,.0f} s" if main else f"{trace.get('start_s', '?')} s"
        end = trace.get("end_s")
        if end is None:
            end = f"{main[0]['horizon_s']:,.0f} s (the end of the converted data)" if main else "?"
        else:
            end = f"{end:,.0f} s"
        parts = trace.get("parts") or "all present"
        lines.append(
            f"- Trace: {trace.get('format', '?')} at `{trace.get('path', '?')}`, task_events "
            f"parts {parts}, simulated from {start} (where the trace's data starts) to {end}."
        )
    srv = f"- Servers: {servers.get('count', cluster.get('servers', '?'))}"
    if "source" in cluster:
        srv += f" drawn from {cluster['source']}"
    if "cpu" in servers and "mem" in servers:
        srv += f" (total {servers['cpu']:.2f} CPU, {servers['mem']:.2f} memory units)"
    lines.append(srv + ".")
    seed = cluster.get("seed") if cluster.get("seed") is not None else cfg.get("seed")
    lines.append(
        f"- Seed: config {seed if seed is not None else '?'}; in summaries: "
        f"{', '.join(seeds) or '?'}."
    )
    if hashes:
        lines.append(f"- Config hash: {', '.join(hashes)}.")
    if cfg.get("schedulers"):
        lines.append(f"- Schedulers: {', '.join(map(str, cfg['schedulers']))}.")
    rule = trace.get("censored", "hold")
    ded = numbers.get("dedicated") or {}
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
        + " Figs. 6-8 give one line under the other rule for comparison."
    )
    lines.append(
        "- Figures and this report: `fairsim.experiments.drfh.report.collect_numbers` + "
        "`write_report`; paper numbers from `fairsim.experiments.drfh.paper` (DRFH paper, "
        "Sec. VI)."
    )
    return [*lines, ""]


def _table_ii_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    return [
        [
            str(int(r["slots"])),
            _pct(r["cpu"]),
            _pct(r["paper_cpu"]),
            _pp(_diff(r["cpu"], r["paper_cpu"])),
            _pct(r["mem"]),
            _pct(r["paper_mem"]),
            _pp(_diff(r["mem"], r["paper_mem"])),
        ]
        for r in rows
    ]


_TABLE_II_HEADER = [
    "slots / max server",
    "CPU ours",
    "CPU paper",
    "CPU diff",
    "mem ours",
    "mem paper",
    "mem diff",
]


def _table_ii_shape(rows: list[dict[str, Any]], model: str) -> str:
    """Where each Table II column peaks and how it moves from 16 to 20 slots, beside the paper."""
    by = {int(r["slots"]): r for r in rows}
    ref = paper.TABLE_II

    def argmax(values: dict[int, float]) -> int:
        return max(values, key=values.__getitem__)

    peak = {res: argmax({s: float(r[res]) for s, r in by.items()}) for res in ("cpu", "mem")}
    ref_peak = {i: argmax({s: v[i] for s, v in ref.items()}) for i in (0, 1)}
    text = (
        f"- Shape ({model}): ours peaks at {peak['cpu']} slots in CPU and {peak['mem']} in memory "
        f"(paper: {ref_peak[0]} and {ref_peak[1]})"
    )
    if 16 in by and 20 in by:
        d_cpu, d_mem = (by[20][k] - by[16][k] for k in ("cpu", "mem"))
        text += (
            f"; from 16 to 20 slots ours moves {_pp(d_cpu)} in CPU and {_pp(d_mem)} in memory "
            f"(paper: {_pp(ref[20][0] - ref[16][0])} and {_pp(ref[20][1] - ref[16][1])})"
        )
    return text + "."


def _same_shape(rows: list[dict[str, Any]], res: str) -> bool:
    """Whether our column ``res`` peaks where the paper's does and falls from 16 to 20 slots."""
    by = {int(r["slots"]): r for r in rows}
    i = 0 if res == "cpu" else 1
    ref = paper.TABLE_II
    if not (16 in by and 20 in by) or set(by) != set(ref):
        return False
    peak = max(by, key=lambda s: by[s][res])
    return peak == max(ref, key=lambda s: ref[s][i]) and by[20][res] < by[16][res]


def _single_slot_notes(numbers: dict[str, Any]) -> list[str]:
    """Table II under the one-slot-per-task model (``slots-S-single``), beside the paper's."""
    rows = sorted(numbers["table_ii_single"], key=lambda r: int(r["slots"]))
    multi = sorted(numbers["table_ii"], key=lambda r: int(r["slots"]))

    def diffs(res: str) -> str:
        return ", ".join(
            f"{_pp(_diff(r[res], r[f'paper_{res}']))} at {int(r['slots'])}"
            for r in rows
            if not np.isnan(r[f"paper_{res}"])
        )

    cpu_shape = "reproduces" if _same_shape(multi, "cpu") else "does not reproduce"
    return [
        "",
        "One slot per task (`slots-S-single`: every task takes one slot; a task larger than "
        "one slot never runs):",
        "",
        *_table(_TABLE_II_HEADER, _table_ii_rows(rows)),
        _table_ii_shape(rows, "one slot per task"),
        f"- One slot per task differs from the paper by {diffs('cpu')} in CPU and "
        f"{diffs('mem')} in memory: the tasks larger than a slot, which it never runs, carry "
        "much of the CPU demand. (A CPU-sized slot model, `slots-S-cpu`, peaks at 16 slots in "
        "CPU but lies 8-17 pp above the paper; docs/drfh-google.md.)",
        f"- Multi-slot (`slots-S`) stays the default and the Slots baseline of Figs. 5-7: it "
        f"{cpu_shape} the shape of the paper's CPU column (its peak, and a fall from 16 to 20 "
        "slots), and it is the stronger baseline, so DRFH's gains are not overstated.",
    ]


def _sec_table_ii(numbers: dict[str, Any]) -> list[str]:
    skipped = _section_header(numbers, "table_ii", "Table II — Slots utilisation by slot size")
    if skipped:
        return skipped
    lines = [
        "## Table II — Slots utilisation by slot size",
        "",
        "Default slot model (`slots-S`): a slot is 1/S of the largest server in every resource, a "
        "server holds floor((min_r c_r + 0.0012) · S) slots and a task takes ceil(max_r d_r · S) "
        "slots; users get a fair share of slots.",
        "",
    ]
    rows = sorted(numbers["table_ii"], key=lambda r: int(r["slots"]))
    notes = [_table_ii_shape(rows, "multi-slot")]
    for r in rows:
        s = int(r["slots"])
        for res, name in (("cpu", "CPU"), ("mem", "memory")):
            notes.append(
                _compare_sentence(
                    numbers,
                    "table_ii",
                    f"{s} slots, {name}",
                    r[res],
                    r[f"paper_{res}"],
                    f"table_ii:{s}:{res}",
                )
            )
    lines += _table(_TABLE_II_HEADER, _table_ii_rows(rows))
    memory = (numbers.get("explanations") or {}).get("table_ii:memory")
    if memory:
        notes.append(f"- The memory column: {memory}")
    best = numbers.get("best_slots")
    agree = "agrees with" if best == f"slots-{paper.TABLE_II_BEST_SLOTS}" else "differs from"
    notes.append(
        f"- Best slot size (highest mean of CPU and memory utilisation): ours `{best}`, paper "
        f"{paper.TABLE_II_BEST_SLOTS} slots — {agree} the paper."
    )
    if numbers.get("table_ii_single"):
        notes += _single_slot_notes(numbers)
    return [*lines, *notes, ""]


def _diff(a: Any, b: Any) -> float:
    try:
        return float(a) - float(b)
    except (TypeError, ValueError):
        return float("nan")


def _sec_fig4(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 4 — dynamic allocation, three users on 100 servers (Best-Fit DRFH)"
    skipped = _section_header(numbers, "fig4", title)
    if skipped:
        return skipped
    lines = [
        f"## {title}",
        "",
        "Means over the middle 60 % of each phase window (time-weighted).",
        "",
    ]
    rows, notes = [], []
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
                        _pct(vals[res]),
                        _pct(ref),
                        _pp(_diff(vals[res], ref)) if ref is not None else "—",
                    ]
                )
                if ref is not None:
                    notes.append(
                        _compare_sentence(
                            numbers,
                            "fig4",
                            f"{phase}, {user}, {res}",
                            vals[res],
                            ref,
                            f"fig4:{phase}:{user}:{res}",
                        )
                    )
        for user in ref_phase:
            if user not in per_user:
                notes.append(f"- {phase}: {user} is active in the paper but not in our run.")
    lines += _table(["phase", "user", "share", "ours", "paper", "diff"], rows)
    for phase, per_user in numbers["fig4"].items():
        dom = [v["dominant"] for v in per_user.values()]
        if len(dom) > 1:
            spread = max(dom) - min(dom)
            verdict = (
                "equal within 2 pp, as DRFH requires"
                if spread <= TOLERANCE
                else (
                    "not equal; DRFH equalises global dominant shares only up to task granularity"
                )
            )
            notes.append(f"- {phase}: dominant shares differ by {100 * spread:.1f} pp — {verdict}.")
    return [*lines, *notes, "", *_image(numbers, "fig4", "Fig. 4")]


def _sec_fig5(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 5 — CPU and memory utilisation over time"
    skipped = _section_header(numbers, "fig5", title)
    if skipped:
        return skipped
    f5 = numbers["fig5"]
    lines = [f"## {title}", ""]
    rows = []
    for s, m in f5["mean"].items():
        m_s = numbers.get("summaries", {}).get(s, {}).get("mean_utilization", {})
        ref = None
        slots = s.removeprefix("slots-")
        if slots.isdigit() and int(slots) in paper.TABLE_II:
            ref = paper.TABLE_II[int(slots)]
        rows.append(
            [
                figures.scheduler_label(s),
                _pct(m["cpu"]),
                _pct(m["mem"]),
                f"{_pct(ref[0])} / {_pct(ref[1])} (Table II)" if ref else "not given (figure only)",
                f"{_pct(m_s.get('cpu'))} / {_pct(m_s.get('mem'))}" if m_s else "—",
            ]
        )
    lines += _table(
        [
            "scheduler",
            "mean CPU ours",
            "mean mem ours",
            "paper (CPU / mem)",
            "summary.json (CPU / mem)",
        ],
        rows,
    )
    lines.append(
        "Paper claim: " + paper.FIG5_CLAIM + ". Fraction of sampled times at which the "
        "first scheduler's utilisation is at least the second's:"
    )
    lines.append("")
    rows = []
    notes = []
    for pair, fr in f5["above"].items():
        a, b = pair.split(">=")
        rows.append(
            [
                f"{figures.scheduler_label(a)} ≥ {figures.scheduler_label(b)}",
                _pct(fr["cpu"]),
                _pct(fr["mem"]),
                '100 % ("at all times" / "significantly outperform")',
            ]
        )
        for res in ("cpu", "mem"):
            if fr[res] < 1.0 - TOLERANCE:
                notes.append(
                    f"- {figures.scheduler_label(a)} is below {figures.scheduler_label(b)} in "
                    f"{res} utilisation {100 * (1 - fr[res]):.1f} % of the time, unlike the paper. "
                    f"Likely causes: {_explain(numbers, 'fig5', f'fig5:{pair}:{res}')}"
                )
    lines += _table(["comparison", "CPU ours", "mem ours", "paper"], rows)
    if not notes and rows:
        notes.append("- Every comparison holds at least 98 % of the time, as the paper reports.")
    return [*lines, *notes, "", *_image(numbers, "fig5", "Fig. 5")]


def _sec_fig6(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 6 — job completion times, Best-Fit DRFH vs best Slots"
    skipped = _section_header(numbers, "fig6", title)
    if skipped:
        return skipped
    f6 = numbers["fig6"]
    a, b = figures.scheduler_label(f6["a"]), figures.scheduler_label(f6["b"])
    lines = [
        f"## {title}",
        "",
        f"Jobs finished under both {a} and {b}: {f6['jobs_both']}. Mean completion-time "
        f"reduction over all of them: {_pct(f6['overall'])}.",
        "",
    ]
    rows = []
    for r in f6["bins"]:
        rows.append(
            [
                r["bin"],
                str(r["jobs"]),
                _sec(r["mean_jct_a_s"]),
                _sec(r["mean_jct_b_s"]),
                _pct(r["reduction"]),
                "≈ 0 %" if r["bin"] == paper.FIG6_BIN_LABELS[0] else "positive, growing with size",
            ]
        )
    lines += _table(
        [
            "job size (tasks)",
            "jobs",
            f"mean JCT {a}",
            f"mean JCT {b}",
            "reduction ours",
            "paper (qualitative)",
        ],
        rows,
    )
    red = [r["reduction"] for r in f6["bins"]]
    small = red[0]
    notes = [f"- Paper: {paper.FIG6_CLAIM} (no numbers are given)."]
    if small is None:
        notes.append("- Smallest bin (1-50 tasks) has no jobs finished under both.")
    elif abs(small) <= 0.05:
        notes.append(f"- Small jobs: reduction {_pct(small)}, i.e. no improvement — agrees.")
    else:
        way = "an improvement" if small > 0 else "a slowdown"
        notes.append(
            f"- Small jobs: reduction {_pct(small)} is {way}, unlike the paper's \"no "
            f'improvement". Likely causes: {_explain(numbers, "fig6", "fig6:small")}'
        )
    finite = [x for x in red if x is not None]
    mono = figures.monotone_nondecreasing(finite, tol=TOLERANCE)
    if mono:
        notes.append(
            "- Reduction does not fall with job size (within 2 pp) — agrees with "
            '"the larger the job, the more improvement".'
        )
    else:
        notes.append(
            "- Reduction is not non-decreasing in job size, unlike the paper. Likely "
            f"causes: {_explain(numbers, 'fig6', 'fig6:trend')}"
        )
    notes += _sensitivity_line(numbers, "fig6")
    return [*lines, *notes, "", *_image(numbers, "fig6", "Fig. 6")]


def _sec_fig7(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 7 — per-user task completion ratio, Best-Fit DRFH vs best Slots"
    skipped = _section_header(numbers, "fig7", title)
    if skipped:
        return skipped
    f7 = numbers["fig7"]
    lines = [f"## {title}", "", f"Users in both runs: {f7['users']}.", ""]
    ded = numbers.get("dedicated") or {}
    if ded.get("censored_rule") == "hold" and "users_with_censored_tasks" in ded:
        n_users, n_cens = int(ded["users"]), int(ded["users_with_censored_tasks"])
        lines += [
            f"Under the rule `hold` a user with a right-censored task can never complete every "
            f"task: {n_cens} of the {n_users} users have one, so at most {n_users - n_cens} "
            f"({_pct((n_users - n_cens) / n_users)}) can count in the first row.",
            "",
        ]
    ref = paper.FIG7_FULL_UNDER_BF_NOT_SLOTS
    rows = [
        [
            "users with all tasks completed under BF-DRFH but not under Slots",
            _pct(f7["full_under_a_not_b"]),
            _pct(ref),
            _pp(_diff(f7["full_under_a_not_b"], ref)),
        ],
        [
            "users with a higher ratio under BF-DRFH",
            _pct(f7["higher_under_a"]),
            '"almost all"',
            "—",
        ],
        ["users with a lower ratio under BF-DRFH", _pct(f7["lower_under_a"]), "not given", "—"],
    ]
    lines += _table(["quantity", "ours", "paper", "diff"], rows)
    same = 1.0 - f7["higher_under_a"] - f7["lower_under_a"]
    if f7["higher_under_a"] >= 0.9:
        verdict = 'agrees with the paper\'s "almost all users"'
    else:
        verdict = (
            f'fewer than the paper\'s "almost all users" ({_pct(same)} have the same ratio '
            "under both, e.g. complete under both). Likely causes: "
            + _explain(numbers, "fig7", "fig7:higher")
        )
    notes = [
        f"- Higher completion ratio under BF-DRFH for {_pct(f7['higher_under_a'])} of users: "
        f"{verdict}",
        _compare_sentence(
            numbers,
            "fig7",
            "Fully complete under BF-DRFH, not under Slots",
            f7["full_under_a_not_b"],
            ref,
            "fig7:full",
        ),
        *_sensitivity_line(numbers, "fig7"),
    ]
    return [*lines, *notes, "", *_image(numbers, "fig7", "Fig. 7")]


def _sec_fig8(numbers: dict[str, Any]) -> list[str]:
    title = "Fig. 8 — sharing incentive, dedicated clouds vs shared cloud"
    skipped = _section_header(numbers, "fig8", title)
    if skipped:
        return skipped
    f8 = numbers["fig8"]
    ref = paper.FIG8_WORSE_OFF_FRACTION
    lines = [f"## {title}", "", f"Users compared: {f8['users']}.", ""]
    rows = [
        [
            "users worse off in the shared cloud",
            f"{_pct(f8['worse_off_fraction'])} ({f8['worse_off']})",
            _pct(ref),
            _pp(_diff(f8["worse_off_fraction"], ref)),
        ],
        [
            "mean decrease of their completion ratio",
            _pct(f8["mean_decrease"]),
            '"only slightly"',
            "—",
        ],
        ["users better off in the shared cloud", _pct(f8["better_off_fraction"]), '"most"', "—"],
    ]
    lines += _table(["quantity", "ours", "paper", "diff"], rows)
    notes = [
        _compare_sentence(
            numbers,
            "fig8",
            "Users worse off in the shared cloud",
            f8["worse_off_fraction"],
            ref,
            "fig8:worse_off",
        ),
        *_sensitivity_line(numbers, "fig8"),
    ]
    return [*lines, *notes, "", *_image(numbers, "fig8", "Fig. 8")]


def _verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def _within(ours: Any, ref: float) -> bool | None:
    d = _diff(ours, ref)
    return None if not math.isfinite(d) else abs(d) <= TOLERANCE + 1e-9


def statements(numbers: dict[str, Any]) -> list[dict[str, str]]:
    """Every numbered or qualitative statement of the paper's Section VI, with our verdict.

    A number agrees (PASS) when ours is within :data:`TOLERANCE` (2 percentage points) of the
    paper's; a qualitative statement by the rule given in its ``rule`` field.

    Returns
    -------
    list of dict
        Keys ``statement``, ``paper``, ``ours``, ``verdict`` (``PASS``, ``FAIL`` or ``n/a``),
        ``rule`` and ``old_rule`` (ours under the older rule for right-censored tasks, where
        it was measured, else ``—``).
    """
    rows: list[dict[str, str]] = []
    sens = numbers.get("sensitivity") or {}

    def add(
        statement: str, paper_: str, ours: str, ok: bool | None, rule: str, old: str = "—"
    ) -> None:
        rows.append(
            {
                "statement": statement,
                "paper": paper_,
                "ours": ours,
                "verdict": _verdict(ok),
                "rule": rule,
                "old_rule": old,
            }
        )

    table = numbers.get("table_ii") or []
    for res, name in (("cpu", "CPU"), ("mem", "memory")):
        for r in table:
            if not math.isfinite(float(r[f"paper_{res}"])):
                continue
            add(
                f"Table II: Slots with {int(r['slots'])} slots, mean {name} utilisation",
                _pct(r[f"paper_{res}"]),
                _pct(r[res]),
                _within(r[res], r[f"paper_{res}"]),
                "within 2 pp",
            )
    by = {int(r["slots"]): r for r in table}
    if 16 in by and 20 in by:
        peak = max(by, key=lambda k: by[k]["cpu"])
        fall = by[20]["cpu"] - by[16]["cpu"]
        add(
            "Table II: CPU utilisation peaks at 16 slots and falls at 20",
            "peak at 16, 20 slots 4.8 pp lower",
            f"peak at {peak}, 20 slots {_pp(fall)}",
            peak == 16 and fall < 0,
            "same peak, a fall from 16 to 20",
        )
    if numbers.get("best_slots"):
        add(
            "Table II: 14 slots give the highest utilisation",
            f"{paper.TABLE_II_BEST_SLOTS} slots",
            f"`{numbers['best_slots']}`",
            numbers["best_slots"] == f"slots-{paper.TABLE_II_BEST_SLOTS}",
            "highest mean of CPU and memory",
        )
    for phase, per_user in (numbers.get("fig4") or {}).items():
        for user, ref in paper.FIG4_SHARES.get(phase, {}).items():
            vals = per_user.get(user)
            for res, want in ref.items():
                ours = None if vals is None else vals.get(res)
                add(
                    f"Fig. 4, {phase}: {user}'s {res} share",
                    _pct(want),
                    _pct(ours),
                    _within(ours, want),
                    "within 2 pp",
                )
    f5 = numbers.get("fig5") or {}
    for pair, fr in (f5.get("above") or {}).items():
        a, b = pair.split(">=")
        add(
            f"Fig. 5: {figures.scheduler_label(a)} utilisation at or above "
            f"{figures.scheduler_label(b)}'s at all times",
            "at all times",
            f"CPU {_pct(fr['cpu'])}, memory {_pct(fr['mem'])} of sampled times",
            min(fr["cpu"], fr["mem"]) >= 1.0 - TOLERANCE,
            "at least 98 % of sampled times",
        )
    f6 = numbers.get("fig6")
    if f6:
        small = f6["bins"][0]["reduction"] if f6["bins"] else None
        old6 = sens.get("fig6") or {}
        add(
            "Fig. 6b: no JCT improvement for small jobs (1-50 tasks)",
            "≈ 0 %",
            _pct(small),
            None if small is None else abs(float(small)) <= 0.05,
            "reduction within ±5 %",
            _pct(old6.get("small")) if old6 else "—",
        )
        red = [r["reduction"] for r in f6["bins"] if r["reduction"] is not None]
        old_red = [x for x in old6.get("reductions", []) if x is not None]
        add(
            "Fig. 6b: the larger the job, the larger the JCT reduction",
            "growing with size",
            ", ".join(_pct(x, 0) for x in red),
            figures.monotone_nondecreasing(red, tol=TOLERANCE) if red else None,
            "never falls by more than 2 pp from one bin to the next",
            ", ".join(_pct(x, 0) for x in old_red) if old_red else "—",
        )
    f7 = numbers.get("fig7")
    if f7:
        old7 = sens.get("fig7") or {}
        add(
            "Fig. 7: users with every task completed under BF-DRFH but not under Slots",
            _pct(paper.FIG7_FULL_UNDER_BF_NOT_SLOTS),
            _pct(f7["full_under_a_not_b"]),
            _within(f7["full_under_a_not_b"], paper.FIG7_FULL_UNDER_BF_NOT_SLOTS),
            "within 2 pp",
            _pct(old7.get("full_under_a_not_b")) if old7 else "—",
        )
        add(
            "Fig. 7: higher task completion ratio under BF-DRFH for almost all users",
            '"almost all"',
            _pct(f7["higher_under_a"]),
            f7["higher_under_a"] >= 0.9,
            "at least 90 % of users",
            _pct(old7.get("higher_under_a")) if old7 else "—",
        )
    f8 = numbers.get("fig8")
    if f8:
        old8 = sens.get("fig8") or {}
        add(
            "Fig. 8: users with fewer tasks finished in the shared cloud",
            _pct(paper.FIG8_WORSE_OFF_FRACTION),
            _pct(f8["worse_off_fraction"]),
            _within(f8["worse_off_fraction"], paper.FIG8_WORSE_OFF_FRACTION),
            "within 2 pp",
            _pct(old8.get("worse_off_fraction")) if old8 else "—",
        )
        dec = f8.get("mean_decrease")
        add(
            "Fig. 8: their completion ratio decreases only slightly",
            '"only slightly"',
            _pct(dec),
            None if dec is None or not math.isfinite(float(dec)) else float(dec) <= 0.05,
            "mean decrease at most 5 points",
            _pct(old8.get("mean_decrease")) if old8 else "—",
        )
    return rows


def _sec_statements(numbers: dict[str, Any]) -> list[str]:
    rows = statements(numbers)
    lines = ["## The paper's statements, checked", ""]
    if not rows:
        return [*lines, "*No statement could be checked (inputs missing).*", ""]
    n_pass = sum(r["verdict"] == "PASS" for r in rows)
    lines += [
        f"{n_pass} of {len(rows)} statements PASS. Ours under the rule `hold` for right-censored "
        "tasks (they never complete); the last column gives ours under the older rule "
        "`complete` where it was measured (Figs. 6-8). Each difference is discussed in the "
        "sections below.",
        "",
    ]
    lines += _table(
        ["statement", "paper", "ours", "verdict", "rule", "ours, rule `complete`"],
        [
            [r["statement"], r["paper"], r["ours"], r["verdict"], r["rule"], r["old_rule"]]
            for r in rows
        ],
    )
    return lines


def _sec_run_stats(numbers: dict[str, Any]) -> list[str]:
    lines = ["## Run statistics", ""]
    rows = []
    for s, summ in (numbers.get("summaries") or {}).items():
        wall = summ.get("wall_s")
        tps = summ.get("tasks_per_s")
        rows.append(
            [
                s,
                str(summ.get("tasks", "—")),
                str(summ.get("tasks_completed", "—")),
                f"{wall:.1f}" if isinstance(wall, int | float) else "—",
                f"{tps:,.0f}" if isinstance(tps, int | float) else "—",
            ]
        )
    if not rows:
        return [*lines, "*No summary.json found.*", ""]
    return lines + _table(["scheduler", "tasks", "completed", "wall_s", "tasks_per_s"], rows)


def write_report(results: str | os.PathLike[str], *, numbers: dict[str, Any]) -> Path:
    """Write ``R/report.md``: our numbers beside the DRFH paper's, section by section.

    Parameters
    ----------
    results : path-like
        Results directory; the report is written there (atomically).
    numbers : dict
        Output of :func:`collect_numbers`, optionally with ``numbers["explanations"]`` filled:
        keys are a section (``"table_ii"``, ``"fig4"`` ... ``"fig8"``) or a finer key (e.g.
        ``"table_ii:14:cpu"``, ``"fig8:worse_off"``); values are sentences giving the likely
        causes of a difference. A generic sentence is used where none is given.
        ``"table_ii:memory"`` is a note on Table II's memory column, printed once below it.

    Returns
    -------
    pathlib.Path
        Path of the written report.
    """
    root = Path(results)
    numbers = {**numbers, "results": numbers.get("results", str(root))}
    lines = [
        "# DRFH reproduction — our results beside the paper's",
        "",
        "Paper: W. Wang, B. Li, B. Liang, *Dominant Resource Fairness in Cloud Computing Systems "
        "with Heterogeneous Servers*, Section VI (Table II, Figs. 4–8). Differences larger than "
        f"{100 * TOLERANCE:.0f} percentage points (pp) are explained.",
        "",
    ]
    lines += _provenance(numbers)
    for section in (
        _sec_statements,
        _sec_table_ii,
        _sec_fig4,
        _sec_fig5,
        _sec_fig6,
        _sec_fig7,
        _sec_fig8,
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
