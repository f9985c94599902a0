"""The DRFH reproduction's report: ``report.md`` (our numbers over seeds beside the paper's,
Sec. VI: Table II, Figs. 4-8, and fairness over time), whose table of statements is generated from
the claims of :mod:`fairsim.experiments.drfh.claims`, then one section per table and figure; and
``claims.json`` and the figures beside it (:func:`write_report`). The sections' prose is the
Markdown template ``report_template.md`` beside this module (:class:`fairsim.experiments.kit.
Template`); the functions below compute its fields and its tables.
"""

from __future__ import annotations

import functools
import logging
import math
import os
from collections.abc import Callable, Iterable, Sequence
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
from fairsim.experiments.drfh.experiment import is_quick
from fairsim.scenario.reporting.markdown import table
from fairsim.scenario.reporting.plotting import scheduler_label

logger = logging.getLogger(__name__)

#: The report's prose.
T = kit.Template(Path(__file__).with_name("report_template.md"))


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


Section = Callable[[dict[str, Any]], list[str]]
#: A table's column: its heading and the cell of a row's item.
Column = tuple[str, Callable[[Any], str]]


def _table(columns: Sequence[Column], items: Iterable[Any]) -> list[str]:
    """:func:`~fairsim.scenario.reporting.markdown.table` with one row per item, its cells from
    ``columns``."""
    return table([h for h, _ in columns], [[cell(x) for _, cell in columns] for x in items])


def _section(key: str, alt: str, gap: bool = True) -> Callable[[Section], Section]:
    """A section of ``numbers[key]`` (its template block ``key``), then (after an empty line
    unless not ``gap``) its figure with the text ``alt``; its title and the reason instead when
    that piece was skipped."""

    def wrap(section: Section) -> Section:
        @functools.wraps(section)
        def lines(numbers: dict[str, Any]) -> list[str]:
            if key not in numbers:
                reason = (numbers.get("skipped") or {}).get(key, "inputs missing")
                return T.lines("skipped", title=T.title(key), reason=reason)
            name = (numbers.get("figures") or {}).get(key)
            image = [f"![{alt}]({name})", ""] if name else []
            return [*section(numbers), *([""] if gap else []), *image]

        return lines

    return wrap


def _differs(numbers: dict[str, Any], key: str) -> list[str]:
    why = (numbers.get("explanations") or {}).get(key)
    return [T.text("differs", why=why)] if why else []


def _totals(servers: dict[str, Any]) -> str:
    if "cpu" not in servers or "mem" not in servers:
        return "—"
    return f"{servers['cpu']:.2f} / {servers['mem']:.2f}"


def _first(numbers: dict[str, Any]) -> dict[str, Any]:
    """The first seed's numbers (``{}`` without any)."""
    return next(iter((numbers.get("per_seed") or {}).values()), {})


def _window(first: dict[str, Any]) -> tuple[Any, Any, dict[str, Any] | None]:
    """The trace window's start and end (its config, else the first main run's summary), and
    that summary (None without one)."""
    trace = (first.get("config") or {}).get("trace") or {}
    summaries = first.get("summaries") or {}
    main = next((s for name, s in summaries.items() if "/" not in name and "horizon_s" in s), None)
    start = main["start_s"] if main else trace.get("start_s")
    end = trace.get("end_s")
    if end is None and main:
        end = main["horizon_s"]
    return start, end, main


def _hours(start: Any, end: Any) -> str | None:
    """The window's length in hours, ``"2.0 h"`` (None unless both ends are numbers)."""
    if isinstance(start, int | float) and isinstance(end, int | float):
        return f"{(end - start) / 3600:.1f} h"
    return None


def _best(numbers: dict[str, Any]) -> str:
    """The seeds' best Slots runs, ```slots-14`, `slots-16``` (``—`` without any)."""
    best = sorted({b for b in (numbers.get("best_slots") or {}).values() if b})
    return ", ".join(f"`{b}`" for b in best) or "—"


def _trace_line(first: dict[str, Any], trace: dict[str, Any]) -> list[str]:
    """Where the trace's window starts and ends (its config, else the runs' summaries)."""
    if not trace:
        return []
    start, end, main = _window(first)
    if trace.get("end_s") is None:
        end = f"{end:,.0f} s (the end of the converted data)" if main else "?"
    else:
        end = f"{end:,.0f} s"
    return T.lines(
        "provenance.trace",
        format=trace.get("format", "?"),
        path=trace.get("path", "?"),
        parts=trace.get("parts") or "all present",
        start=f"{start:,.0f} s" if main else f"{trace.get('start_s', '?')} s",
        end=end,
    )


def _setup(numbers: dict[str, Any]) -> kit.Setup:
    """The set-up table's rows: our run (the first seed's configuration) beside Section VI's."""
    first = _first(numbers)
    cfg = first.get("config") or {}
    trace = cfg.get("trace") or {}
    cluster = cfg.get("cluster") or {}
    start, end, _ = _window(first)
    hours = _hours(start, end)
    parts, source = trace.get("parts") or "all present", cluster.get("source", "?")
    return kit.Setup(
        trace=T.text("setup.trace", format=trace.get("format", "?"), parts=parts),
        window=f"[{start:,.0f}, {end:,.0f}) s ({hours})" if hours else "?",
        servers=T.text("setup.servers", n=cluster.get("servers", "?"), source=source),
        schedulers=[str(x) for x in cfg.get("schedulers") or []],
        seeds=[int(x) for x in numbers.get("seeds") or []],
        quick=is_quick(cfg),
        model_tol=T.text("setup.model_tol", tol=100 * paper.MODEL_TOL),
        notes=[
            ("Slots baseline", _best(numbers)),
            ("Fig. 4", _fig4_setup(first.get("fig4_config") or {})),
        ],
        paper=T.rows(
            "setup.paper",
            best14=paper.TABLE_II_BEST_SLOTS,
            servers=paper.FIG4_SERVERS,
            cpu=paper.FIG4_TOTAL_CPU,
            mem=paper.FIG4_TOTAL_MEM,
            depart=paper.FIG4_USER1_DEPART_S,
        ),
    )


def _fig4_setup(cfg: dict[str, Any]) -> str:
    """Fig. 4's set-up from its run's ``config.yaml``: the users' task counts and run times,
    the pool's seed (``—`` without the config)."""
    users = (cfg.get("trace") or {}).get("users") or []
    if not users:
        return "—"
    tasks = " / ".join(f"{int(u.get('tasks', 0)):,}" for u in users)
    runs = sorted({float(u.get("run_s", math.nan)) for u in users})
    run = " / ".join(f"{r:g} s" for r in runs)
    servers = (cfg.get("cluster") or {}).get("servers", "?")
    seed = cfg.get("seed", "?")
    return T.text("fig4_setup", users=len(users), servers=servers, seed=seed, tasks=tasks, run=run)


def _setup_differs(numbers: dict[str, Any]) -> list[str]:
    """Why our set-up differs from the paper's (the prose under the set-up table)."""
    first = _first(numbers)
    return T.lines(
        "setup.differs",
        hours=_hours(*_window(first)[:2]) or "?",
        best=_best(numbers),
        best14=paper.TABLE_II_BEST_SLOTS,
        fig4=_fig4_setup(first.get("fig4_config") or {}),
    )


def _provenance(numbers: dict[str, Any]) -> list[str]:
    per_seed = numbers.get("per_seed") or {}
    first = _first(numbers)
    cfg = first.get("config") or {}
    trace = cfg.get("trace") or {}
    cluster = cfg.get("cluster") or {}
    seeds = ", ".join(map(str, numbers.get("seeds") or []))
    rule = trace.get("censored", "hold")
    ded = first.get("dedicated") or {}
    counts = T.text("provenance.counts", **ded) if "censored_tasks" in ded else ""
    lines = [
        *T.lines("provenance.scenario", name=cfg.get("name", "?"), seeds=seeds),
        *_trace_line(first, trace),
        *T.lines(
            "provenance.servers",
            servers=cluster.get("servers", "?"),
            source=cluster.get("source", "?"),
        ),
        *(
            [f"- Schedulers: {', '.join(map(str, cfg['schedulers']))}."]
            if cfg.get("schedulers")
            else []
        ),
        *T.lines(
            "provenance.censored",
            rule=rule,
            what=T.text("provenance.hold" if rule == "hold" else "provenance.complete"),
            counts=counts,
        ),
    ]
    runs = {r["seed"]: r for r in numbers.get("runs") or []}

    def hashes(v: dict[str, Any]) -> str:
        summaries = (v.get("summaries") or {}).values()
        return ", ".join(sorted({str(x["config_hash"]) for x in summaries if "config_hash" in x}))

    columns: list[Column] = [
        ("seed", lambda sv: str(sv[0])),
        ("pool CPU / memory (units)", lambda sv: _totals(sv[1].get("servers") or {})),
        ("best Slots", lambda sv: f"`{sv[1].get('best_slots', '—')}`"),
        ("Fig. 4 pool seed", lambda sv: str((sv[1].get("fig4_config") or {}).get("seed", "—"))),
        ("Fig. 4 pool CPU / memory", lambda sv: _totals(sv[1].get("fig4_servers") or {})),
        ("config hashes", lambda sv: hashes(sv[1]) or "—"),
        ("wall (s)", lambda sv: f"{runs[sv[0]]['wall_s']:.0f}" if sv[0] in runs else "—"),
    ]
    return [
        *lines,
        *T.lines("provenance.per_seed"),
        *_table(columns, per_seed.items())[:-1],
        *T.lines("provenance.end"),
    ]


def _table_ii_table(rows: list[dict[str, Any]]) -> list[str]:
    """Table II: per slot count and resource ours with its interval, the paper's, the difference."""

    def resource(res: str, name: str) -> list[Column]:
        return [
            (f"{name} ours [95 % CI]", lambda r: kit.estimate(r[res])),
            (f"{name} paper", lambda r: _pct(r[f"paper_{res}"])),
            (f"{name} diff", lambda r: _pp(r[res].value - r[f"paper_{res}"])),
        ]

    slots: Column = ("slots / max server", lambda r: str(int(r["slots"])))
    return _table([slots, *resource("cpu", "CPU"), *resource("mem", "mem")], rows)


def _table_ii_shape(rows: list[dict[str, Any]], model: str) -> str:
    """Where each Table II column peaks (means over seeds) and how it moves from 16 to 20 slots."""
    by = {int(r["slots"]): r for r in rows}
    ref = paper.TABLE_II

    def argmax(values: dict[int, float]) -> int:
        return max(values, key=values.__getitem__)

    peak = {res: argmax({s: r[res].value for s, r in by.items()}) for res in E.RES}
    peak |= {
        f"paper_{res}": argmax({s: v[i] for s, v in ref.items()}) for i, res in enumerate(E.RES)
    }
    moves = ""
    if 16 in by and 20 in by:
        d = {res: _pp(by[20][res].value - by[16][res].value) for res in E.RES}
        d |= {f"paper_{res}": _pp(ref[20][i] - ref[16][i]) for i, res in enumerate(E.RES)}
        moves = T.text("table_ii.moves", **d)
    return T.text("table_ii.shape", model=model, moves=moves, **peak)


@_section("table_ii", "Table II")
def _sec_table_ii(numbers: dict[str, Any]) -> list[str]:
    rows = sorted(numbers["table_ii"], key=lambda r: int(r["slots"]))
    orders = numbers.get("table_ii_orders") or {}
    best = numbers.get("best_slots") or {}
    counts = pd.Series([b for b in best.values() if b]).value_counts()
    memory = (numbers.get("explanations") or {}).get("table_ii:memory")
    lines = [
        *T.lines("table_ii"),
        *_table_ii_table(rows),
        _table_ii_shape(rows, "multi-slot"),
        T.text("table_ii.calibration", calibration=CALIBRATION.removeprefix("calibration: ")),
        *([f"- The memory column: {memory}"] if memory else []),
        T.text(
            "table_ii.best",
            counts=", ".join(f"`{k}` in {v} of {len(best)}" for k, v in counts.items()),
            paper=paper.TABLE_II_BEST_SLOTS,
            best14=kit.estimate(orders.get("best14"), "pp"),
            peak16=kit.estimate(orders.get("peak16"), "pp"),
        ),
    ]
    if numbers.get("table_ii_single"):
        single = sorted(numbers["table_ii_single"], key=lambda r: int(r["slots"]))
        lines += [
            *T.lines("table_ii.single"),
            *_table_ii_table(single),
            _table_ii_shape(single, "one slot per task"),
            *T.lines("table_ii.single_end"),
        ]
    return lines


@_section("fig4", "Fig. 4")
def _sec_fig4(numbers: dict[str, Any]) -> list[str]:
    rows, spread = [], []
    for phase, per_user in numbers["fig4"].items():
        ref_phase = paper.FIG4_SHARES.get(phase, {})
        for user, vals in per_user.items():
            for res in ("cpu", "mem", "dominant"):
                ref = ref_phase.get(user, {}).get(res)
                diff = _pp(vals[res].value - ref) if ref is not None else "—"
                rows.append([phase, user, res, kit.estimate(vals[res]), _pct(ref), diff])
        dom = [v["dominant"].value for v in per_user.values()]
        if len(dom) > 1:
            spread.append(T.text("fig4.spread", phase=phase, spread=100 * (max(dom) - min(dom))))
    return [
        *T.lines("fig4", pools=fig4_pools(numbers)),
        *table(["phase", "user", "share", "ours [95 % CI]", "paper", "diff"], rows),
        *spread,
        *_differs(numbers, "fig4"),
    ]


#: The columns of Fig. 4's deficit table after the phase and its window: key → heading.
_DEFICIT_COLUMNS = {
    "max_deficit_mean": "largest deficit, mean",
    "max_deficit_max": "largest deficit, max",
    "max_deficit_max_all": "max with the first run time",
    "jain_mean": "Jain's index of the raw dominant shares, mean",
    "online": "online dominant share",
    "whole": "whole tasks placed at once",
    "reference": "DRFH allocation (reference)",
    "divisible": "divisible, unbounded",
    "whole_exact": "whole-task DRFH allocation (exact, tasks present as bounds)",
    "max_deficit_whole_max": "largest deficit to it, max (the claim's)",
}


@_section("fig4_deficit", "Fig. 4's deficit")
def _sec_fig4_deficit(numbers: dict[str, Any]) -> list[str]:
    d = numbers["fig4_deficit"]
    phases = d["phases"]
    first = phases[N.FIG4_DEFICIT_PHASES[0]]
    window = "window (mean over seeds)" if len(numbers.get("seeds") or []) > 1 else "window"
    rows = [
        [
            phase,
            f"{v['start_s'].value:,.0f} – {v['end_s'].value:,.0f} s",
            *(kit.estimate(v[c], "" if c == "jain_mean" else "share") for c in _DEFICIT_COLUMNS),
        ]
        for phase, v in phases.items()
    ]
    worst = d.get("worst_whole", d["worst"])
    above = worst.finite and worst.bounds()[1] > paper.FIG4_DEFICIT_BOUND
    return [
        *T.lines("fig4_deficit", settle=first["settle_s"].value, pools=fig4_pools(numbers)),
        *table(["phase", window, *_DEFICIT_COLUMNS.values()], rows),
        *T.lines(
            "fig4_deficit.end",
            bound=100 * paper.FIG4_DEFICIT_BOUND,
            why=paper.FIG4_BOUND_WHY,
            worst=kit.estimate(worst),
            divisible=kit.estimate(d["worst"]),
        ),
        *(_differs(numbers, "fig4:deficit") if above else []),
    ]


@_section("fairness", "fairness over time", gap=False)
def _sec_fairness(numbers: dict[str, Any]) -> list[str]:
    f = numbers["fairness"]
    head = ["scheduler", *(E.FAIRNESS_AVERAGES[k][1] for k in E.FAIRNESS_AVERAGES)]
    # the raw index of the DRFH allocation itself, beside the online raw index
    raw = 2 + list(E.FAIRNESS_AVERAGES).index("jain_index")
    head.insert(raw, "Jain's index of the DRFH allocation's raw dominant shares")
    rows = []
    for s in N.FAIRNESS_SCHEDULERS:
        a = f["averages"][s]
        cells = [
            kit.estimate(a[k], "share", ".2f") if k == "max_deficit" else kit.estimate(a[k], unit)
            for k, (unit, _) in E.FAIRNESS_AVERAGES.items()
        ]
        cells.insert(raw - 1, kit.estimate(f["context"][s]["reference_jain"], ""))
        rows.append([scheduler_label(s), *cells])
    worst = f["context"][N.FAIRNESS_SCHEDULERS[-1]]
    same = f["same_schedule"].values()
    solves = ", ".join(
        f"{s} {kit.estimate(f['solve_s'][s], '')} s of {kit.estimate(f['wall_s'][s], '')} s"
        for s in N.FAIRNESS_SCHEDULERS
    )
    return [
        *T.lines(
            "fairness",
            schedulers=", ".join(N.FAIRNESS_SCHEDULERS),
            interval=f["interval_s"],
            instants=f["instants"],
        ),
        *table(head, rows),
        *T.lines(
            "fairness.end",
            running=worst["worst_running"].value,
            waiting=worst["worst_waiting"].value,
            same=sum(bool(x) for v in same for x in v),
            all=sum(len(v) for v in same),
            solves=solves,
        ),
    ]


def _production_notes(p: dict[str, Any]) -> list[str]:
    """The requests of the trace's own schedule as production placed them, and its
    over-commitment, beside those on each task's first request (the table's)."""
    sch, fst = p["readings"]["schedule"], p["readings"]["first"]

    def both(o: dict[str, Any], f: dict[str, Any], show: Any = None, **keys: str) -> Any:
        """The fields ``keys`` of ``o`` and, prefixed ``first_``, of ``f`` (shown by ``show``)."""
        pairs = [(k, o[v]) for k, v in keys.items()]
        pairs += [(f"first_{k}", f[v]) for k, v in keys.items()]
        return {k: x if show is None else show(x) for k, x in pairs}

    peaks = {k: k for k in ("cpu", "mem", "peak_cpu", "peak_mem")}
    lines = [T.text("production.requests", **both(sch, fst, _pct, **peaks))]
    for r, name in (("cpu", "CPU"), ("mem", "memory")):
        if r not in sch["overcommit"] or r not in fst["overcommit"]:
            continue
        o, f = sch["overcommit"][r], fst["overcommit"][r]
        counts = both(o, f, most="servers_max", end="servers_end", mean="servers_mean")
        shares = {"amount": "amount_max", "amount_mean": "amount_mean"}
        shares = both(o, f, _pct, **shares, utilization="utilization_end")
        lines.append(
            T.text("production.overcommit", name=name, servers=p["servers"], **counts, **shares)
        )
    return lines


def _jain(x: Any) -> str:
    return kit.number(x, "", ".3f")


#: The production table's columns after the schedule: key of its numbers → heading, format.
_PRODUCTION_COLUMNS: dict[str, tuple[str, Callable[[Any], str]]] = {
    "cpu": ("mean CPU", _pct),
    "mem": ("mean memory", _pct),
    "peak_cpu": ("peak CPU", _pct),
    "peak_mem": ("peak memory", _pct),
    "completed": ("tasks completed", _pct),
    "user_ratio": ("users' mean completion ratio", _pct),
    "jct_mean_s": ("mean JCT", _sec),
    "jct_median_s": ("median JCT", _sec),
    "jain_entitlement": ("Jain's index of the fractions of the DRFH share", _jain),
    "jain": ("Jain's index of the raw dominant shares", _jain),
    "max_deficit": ("largest deficit", lambda x: kit.number(x, "share", ".2f")),
}


@_section("production", "production context", gap=False)
def _sec_production(numbers: dict[str, Any]) -> list[str]:
    p = numbers["production"]
    per = p["per"]
    first, schedule = (N.PRODUCTION_READINGS[k] for k in ("first", "schedule"))
    rows = [
        [
            "recorded (trace, first request)" if s == first else scheduler_label(s),
            *(show(per[s][k]) for k, (_, show) in _PRODUCTION_COLUMNS.items()),
        ]
        for s in p["schedulers"]
    ]
    head = ["schedule", *(h for h, _ in _PRODUCTION_COLUMNS.values())]
    over, over_first = (
        max((o["servers_max"] for o in p["readings"][k]["overcommit"].values()), default=0)
        for k in ("schedule", "first")
    )
    over_text = (
        T.text("production.over", machines=over, first_machines=over_first)
        if over or over_first
        else T.text("production.no_over")
    )
    return [
        *T.lines(
            "production",
            folder=N.PRODUCTION_DIR,
            tasks=p["tasks"],
            servers=p["servers"],
            jobs=p["common_jobs"],
            first=first,
            schedule=schedule,
        ),
        *table(head, rows),
        *_production_notes(p),
        *T.lines(
            "production.comparison",
            over=over_text,
            **{
                f"{name}_{r}": _ratio(per[s][r], per[first][r])
                for name, s in (("slots", "slots-16"), ("bf", "bf-drfh"))
                for r in ("cpu", "mem")
            },
        ),
    ]


@_section("fig5", "Fig. 5")
def _sec_fig5(numbers: dict[str, Any]) -> list[str]:
    f5 = numbers["fig5"]
    roles = f5["roles"]
    means = [
        [label, *(kit.estimate(f5["mean"][role][r]) for r in E.RES)]
        for role, label in roles.items()
    ]
    above = [
        [f"{roles[a]} ≥ {roles[b]}", *(kit.estimate(f5["above"][(a, b, r)]) for r in E.RES)]
        for a, b in E.FIG5_PAIRS
    ]
    return [
        *T.lines("fig5", slots=E.slots_label(numbers)),
        *table(["scheduler", "mean CPU [95 % CI]", "mean memory [95 % CI]"], means),
        *T.lines("fig5.above", paper=paper.BY_KEY["fig5"].text),
        *table(["comparison", "CPU", "memory"], above),
        *(
            T.text("fig5.diff", label=roles[a], diff=kit.estimate(f5["diff"][a], "pp"))
            for a in ("bf-drfh", "ff-drfh")
        ),
    ]


#: Fig. 6's table: heading and cell of a row of ``bins``.
_FIG6_COLUMNS: list[Column] = [
    ("job size (tasks)", lambda r: str(r["bin"])),
    ("jobs", lambda r: f"{r['jobs']:,}"),
    ("(job, seed) pairs", lambda r: f"{r['pairs']:,}"),
    ("mean JCT BF-DRFH", lambda r: _sec(r["mean_jct_a_s"])),
    ("mean JCT Slots", lambda r: _sec(r["mean_jct_b_s"])),
    ("reduction of the mean JCT [95 % CI]", lambda r: kit.estimate(r["ratio_of_means"])),
    ("mean of per-job reductions [95 % CI]", lambda r: kit.estimate(r["mean_of_ratios"])),
]


def _fig6_table(f6: dict[str, Any]) -> list[str]:
    return _table(_FIG6_COLUMNS, (r for _, r in f6["bins"].iterrows()))


def _trends(f6: dict[str, Any]) -> dict[str, str]:
    t = f6["trend"]
    per_seed = (f6.get("trend_per_seed") or {}).get("mean_of_ratios") or []
    return {
        "per_job": kit.estimate(t["mean_of_ratios"], ""),
        "of_means": kit.estimate(t["ratio_of_means"], ""),
        "per_seed": ", ".join(kit.number(v, "", "+.2f") for v in per_seed) or "—",
    }


@_section("fig6", "Fig. 6")
def _sec_fig6(numbers: dict[str, Any]) -> list[str]:
    f6 = numbers["fig6"]
    expl = numbers.get("explanations") or {}
    sens = (numbers.get("sensitivity") or {}).get("fig6")
    lines = [
        *T.lines("fig6", slots=E.slots_label(numbers)),
        *_fig6_table(f6),
        *T.lines("fig6.verdicts", why=paper.FIG6_WHY, **_trends(f6)),
        *(
            f"- {'Small jobs' if key == 'fig6' else 'Trend'}: {expl[key]}"
            for key in ("fig6", "fig6:trend")
            if key in expl
        ),
    ]
    if sens:
        lines += [
            *T.lines("fig6.complete"),
            *_fig6_table(sens)[:-1],
            *T.lines("fig6.complete_end", **_trends(sens)),
        ]
    return lines


#: The rows of Figs. 7 and 8's tables (:func:`_users_table`): the quantities' keys in the
#: numbers (shares, but Fig. 8's mean decrease in points); a row's quantity and the paper's value
#: are the two lines of the template's block ``users.<key>``.
_USERS_ROWS = {
    "fig7": ("higher_under_a", "lower_under_a", "full_under_a_not_b"),
    "fig8": ("worse_off_fraction", "mean_decrease", "better_off_fraction"),
}


def _users_table(numbers: dict[str, Any], key: str) -> list[str]:
    """Fig. 7's or 8's quantities: ours, ours under the older rule ``complete``, the paper's;
    then the explanation and the figure."""
    ours, old = numbers[key], (numbers.get("sensitivity") or {}).get(key) or {}
    papers = {
        "almost_all": _pct(paper.ALMOST_ALL, 0),
        "fig7_full": _pct(paper.FIG7_FULL_UNDER_BF_NOT_SLOTS),
        "fig8_worse": _pct(paper.FIG8_WORSE_OFF_FRACTION),
        "slightly": 100 * paper.ONLY_SLIGHTLY,
    }
    rows = []
    for k in _USERS_ROWS[key]:
        q, p = T.lines(f"users.{k}", **papers)
        u = "pp" if k == "mean_decrease" else "share"
        rows.append([q, kit.estimate(ours[k], u), kit.estimate(old.get(k), u), p])
    head = ["quantity", "ours [95 % CI]", "ours, rule `complete`", "paper"]
    return [*table(head, rows), *_differs(numbers, key)]


@_section("fig7", "Fig. 7")
def _sec_fig7(numbers: dict[str, Any]) -> list[str]:
    f7 = numbers["fig7"]
    ded = _first(numbers).get("dedicated") or {}
    hold = []
    if ded.get("censored_rule") == "hold" and "users_with_censored_tasks" in ded:
        n_users, n_cens = int(ded["users"]), int(ded["users_with_censored_tasks"])
        hold = T.lines(
            "fig7.hold",
            censored=n_cens,
            users=n_users,
            left=n_users - n_cens,
            share=_pct((n_users - n_cens) / n_users),
        )
    return [
        *T.lines("fig7", users=", ".join(map(str, sorted(set(f7["users"]))))),
        *hold,
        *_users_table(numbers, "fig7"),
    ]


@_section("fig8", "Fig. 8")
def _sec_fig8(numbers: dict[str, Any]) -> list[str]:
    f8 = numbers["fig8"]
    return [
        *T.lines(
            "fig8",
            users=", ".join(map(str, sorted(set(f8["users"])))),
            worse=", ".join(map(str, f8["worse_off"])),
        ),
        *_users_table(numbers, "fig8"),
    ]


def _sec_run_stats(numbers: dict[str, Any]) -> list[str]:
    per_seed = numbers.get("per_seed") or {}
    names = dict.fromkeys(s for v in per_seed.values() for s in v.get("summaries") or {})
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
        return ["## Run statistics", "", "*No summary.json found.*", ""]
    head = ["scheduler", "seeds", "tasks", "completed, mean [95 % CI]", "wall_s (all seeds)"]
    total = numbers.get("wall_s_total")
    return [
        "## Run statistics",
        "",
        *table([*head, "tasks_per_s (mean)"], rows),
        *(
            T.lines(
                "run_stats.wall",
                total=total,
                seeds=len(per_seed),
                workers=numbers.get("workers", 1),
            )
            if total is not None
            else []
        ),
    ]


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
        ``numbers["explanations"]`` filled: keys are a section (``"table_ii"``, ``"fig4"`` ...
        ``"fig8"``) or a finer key (e.g. ``"table_ii:14:cpu"``, ``"fig6:trend"``); values are
        sentences giving the likely causes of a difference, added to the reason of a failed
        claim and to the section. ``"table_ii:memory"`` is a note on Table II's memory column.

    Returns
    -------
    pathlib.Path
        Path of the written report.
    """
    root = Path(results)
    figures.draw(root, numbers)
    claims = build_claims(numbers)
    write_claims(root, claims, paper.STATEMENTS)
    n = len(numbers.get("seeds") or [])
    seeds = T.text("head.seeds", n=n) if n > 1 else T.text("head.one_seed")
    lines = [
        *T.lines("head", seeds=seeds),
        *kit.setup_table(_setup(numbers)),
        *_setup_differs(numbers),
        *_provenance(numbers),
        *claims_markdown(claims),
    ]
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
