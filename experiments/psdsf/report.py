"""The PS-DSF reproduction's report: ``fig6.png``, ``claims.json`` (the claims of
:mod:`fairsim.experiments.psdsf.claims`) and ``report.md``, whose statements table is generated
from the claims, then Table IV, Fig. 6 and the sensitivity to user 2's CPU demand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fairsim.atomic import write_text
from fairsim.experiments import kit
from fairsim.experiments.claims import across_seeds, claims_markdown, write_claims
from fairsim.experiments.psdsf import figures, paper
from fairsim.experiments.psdsf.claims import BASELINES, build_claims, show, tasks
from fairsim.experiments.psdsf.experiment import (
    EXACT,
    QUICK_SPLIT,
    QUICK_TIME,
    SCHEDULERS,
    SPLIT,
    scenario_users,
)
from fairsim.experiments.psdsf.paper import LABELS
from fairsim.scenario.config import RunConfig
from fairsim.scenario.reporting.markdown import table

#: The report's prose.
T = kit.Template(Path(__file__).with_name("report_template.md"))


def _cell(
    mech: str,
    paper_m: np.ndarray,
    exact_m: np.ndarray,
    online: np.ndarray | None,
    i: int,
    j: int | None,
) -> str:
    """One cell of the Table IV comparison: user ``i`` on class ``j`` (``None``: the total)."""

    def pick(a: np.ndarray) -> np.ndarray:
        return a[..., i, :].sum(axis=-1) if j is None else a[..., i, j]

    ours = show(across_seeds(pick(online).tolist()), "") if online is not None else "—"
    p = f"{float(pick(paper_m)):g}"
    e = f"{float(pick(exact_m)):.2f}".rstrip("0").rstrip(".")
    return f"{ours} / {p} / {e}" if mech == "psdsf" else f"{e} / {p} / {ours}"


def _table_iv(summary: dict[str, Any], cfg: RunConfig) -> list[str]:
    names = [c.name for c in cfg.cluster.classes or []]
    runs = [r["schedulers"] for r in summary["runs"]]
    lines: list[str] = []
    for mech in ("psdsf", "tsf"):
        paper_m = np.asarray(paper.TABLE_IV[mech])
        exact_m = tasks(summary["exact"], mech)
        online = np.stack([tasks(s, mech) for s in runs]) if all(mech in s for s in runs) else None
        rows = [
            [
                u.name,
                *(_cell(mech, paper_m, exact_m, online, i, j) for j in [*range(len(names)), None]),
            ]
            for i, u in enumerate(scenario_users(cfg))
        ]
        head = ["user", *(f"class {k}" for k in names), "total"]
        lines += [
            *T.lines("table_iv.mechanism", label=LABELS[mech], how=T.text(f"table_iv.{mech}")),
            *table(head, rows),
        ]
    return lines


def _fig6_table(summary: dict[str, Any]) -> list[str]:
    runs = [r["schedulers"] for r in summary["runs"]]
    ex = summary["exact"]
    phases = summary["phases"]
    curves: list[tuple[str, list[dict[str, Any]]]] = [
        ("PS-DSF, distributed online", [s["psdsf"] for s in runs]),
        *((f"{LABELS[m]}, exact every second (the paper's)", [ex[m]]) for m in BASELINES),
        ("PS-DSF, exact (reference)", [ex["psdsf"]]),
        *(
            (f"{LABELS[m]}, ours online first fit (extra)", [s[m] for s in runs])
            for m in BASELINES
            if all(m in s for s in runs)
        ),
    ]
    rows = []
    for label, vs in curves:
        means = [show(across_seeds([v["mean_util"][f"cpu_{k}"] for v in vs])) for k in "CD"]
        cells = [
            ", ".join(
                kit.number(np.mean([v["phases"][i]["util"][f"cpu_{k}"] for v in vs]), "share")
                for k in "CD"
            )
            for i in range(len(phases))
        ]
        settle = (
            "— (recomputed at once)"
            if "exact" in label
            else ", ".join(
                show(across_seeds([v["settle"][i]["settle_s"] for v in vs]), "")
                for i in range(len(vs[0]["settle"]))
            )
        )
        rows.append([label, *means, *cells, settle])
    head = [
        "curve",
        "class C mean",
        "class D mean",
        *(f"C, D in ({a:g}, {b:g}) s" for a, b in phases),
        "settling after the changes (s)",
    ]
    return table(head, rows)


def _sensitivity(summary: dict[str, Any]) -> list[str]:
    sens = summary.get("d2_sensitivity")
    if not sens:
        return []
    mechs = ("psdsf", *BASELINES)
    rows = [
        [
            f"{v['cpu']:.4g}{' (this run)' if v['config'] else ''}",
            *(
                f"{kit.number(v[m]['away'], 'share')} / {kit.number(v[m]['mean'], 'share')}"
                for m in mechs
            ),
        ]
        for v in sorted(sens, key=lambda e: -e["cpu"])
    ]
    return [*T.lines("sensitivity"), *table(["d_2 CPU", *(LABELS[m] for m in mechs)], rows)]


def _setup(summary: dict[str, Any], cfg: Any, servers: str) -> kit.Setup:
    """The set-up table's rows: our run beside Section V's (Tables III and IV, Fig. 6)."""
    scale = QUICK_TIME if summary["quick"] else 1.0
    horizon = float(cfg.collect.horizon_s) * scale
    split, n = summary["split"], sum(c.count for c in cfg.cluster.classes or [])
    return kit.Setup(
        trace=T.text("setup.trace"),
        window=T.text(
            "setup.window", horizon=horizon, early=100 * scale, late=250 * scale, split=split
        ),
        servers=T.text("setup.servers", n=n, servers=servers),
        schedulers=[*SCHEDULERS, *(f"{m} (exact, every second)" for m in EXACT)],
        seeds=summary["seeds"],
        quick=bool(summary["quick"]),
        model_tol=T.text("setup.model_tol", tol=paper.MODEL_TOL),
        paper=T.rows("setup.paper"),
    )


def _smaller(summary: dict[str, Any]) -> str:
    """What the smallest CPU demand of user 2 in the sensitivity grid gives (measured)."""
    sens = summary.get("d2_sensitivity")
    if not sens:
        return ""

    def means(e: dict[str, Any]) -> str:
        return ", ".join(f"{LABELS[m]} {kit.number(e[m]['mean'], 'share')}" for m in LABELS)

    low = min(sens, key=lambda e: e["cpu"])
    this = next((e for e in sens if e["config"]), None)
    against = "" if this is None else T.text("smaller.this", means=means(this), cpu=this["cpu"])
    return T.text("smaller", cpu=low["cpu"], means=means(low), this=against)


def _quick_why(summary: dict[str, Any]) -> str:
    if not summary["quick"]:
        return ""
    away = np.mean(
        [r["schedulers"]["psdsf"]["phases"][1]["util"]["cpu_D"] for r in summary["runs"]]
    )
    return T.text(
        "quick_why", time=QUICK_TIME, split=QUICK_SPLIT, away=kit.number(float(away), "share")
    )


def write_report(out: Path, run: dict[str, Any]) -> Path:
    """Write ``fig6.png``, ``claims.json`` and ``report.md`` into ``out`` and return the report's
    path.

    Parameters
    ----------
    out : Path
        The folder holding the run's ``series.parquet`` and ``exact.parquet``.
    run : dict
        :func:`fairsim.experiments.psdsf.experiment.run_experiment`'s result: ``summary`` and
        ``config`` (the scenario).
    """
    out = Path(out)
    summary, cfg = run["summary"], run["config"]
    online, exact = (pd.read_parquet(out / f"{name}.parquet") for name in ("series", "exact"))
    figures.fig6(online, exact, cfg, out / "fig6.png")
    claims = build_claims(summary, cfg)
    write_claims(out, claims, paper.STATEMENTS)
    n = len(summary["seeds"])
    demands = ", ".join(
        f"{u.name} ({', '.join(f'{x * SPLIT:.4g}' for x in u.demand)})" for u in scenario_users(cfg)
    )
    walls = [r["wall_s"] for r in summary["runs"]]
    wall = ", ".join(f"{m} {np.mean([w[m] for w in walls]):.1f} s" for m in walls[0])
    quick = " (--quick: times / 10, tasks split in 2)" if summary["quick"] else ""
    servers = ", ".join(
        f"{c.count} x {c.name} {tuple(c.capacity)}" for c in cfg.cluster.classes or []
    )
    lines = [
        *T.lines("head", quick=quick, servers=servers, demands=demands, s=summary, n=n, wall=wall),
        *kit.setup_table(_setup(summary, cfg, servers)),
        *T.lines("why", s=summary, smaller=_smaller(summary), quick_why=_quick_why(summary)),
        *claims_markdown(claims),
        *T.lines("table_iv"),
        *_table_iv(summary, cfg),
        *T.lines("fig6"),
        *_fig6_table(summary),
        *_sensitivity(summary),
        *T.lines("end"),
    ]
    return write_text(out / "report.md", "\n".join(lines))
