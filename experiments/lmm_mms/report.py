"""The LMM-MMS reproduction's report: the figures, ``claims.json`` (the claims of
:mod:`fairsim.experiments.lmm_mms.claims`) and ``report.md``, whose statements table is generated
from the claims, then the utilisation, saturation, completion and sharing-degree tables.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fairsim.atomic import write_text
from fairsim.experiments import kit
from fairsim.experiments.claims import claims_markdown, write_claims
from fairsim.experiments.lmm_mms import paper
from fairsim.experiments.lmm_mms.claims import TOL, build_claims
from fairsim.experiments.lmm_mms.experiment import (
    ELEPHANT_QUANTILE,
    LABELS,
    MECHANISMS,
    SATURATED,
    Units,
    settings,
)
from fairsim.experiments.lmm_mms.figures import mean_intervals, write_figures
from fairsim.scenario.reporting.markdown import table

#: The report's prose.
T = kit.Template(Path(__file__).with_name("report_template.md"))


def _table(u: Units, fig: str, metric: str) -> list[str]:
    rows = []
    for k in u.keys(fig):
        vals = np.stack([u.get(fig, k, metric, m) for m in MECHANISMS], axis=1)
        low, high = mean_intervals(vals)
        cells = [
            kit.interval(a, lo, hi, "share", suffix=False, min_width=5e-4)
            for a, lo, hi in zip(vals.mean(axis=0), low, high, strict=True)
        ]
        rows.append([f"{100 * k:.0f} %" if fig == "fig4" else str(k), *cells])
    return table(["setting", *(LABELS[x] for x in MECHANISMS)], rows)


def _saturation_table(u: Units) -> list[str]:
    rows = []
    for fig in ("fig2", "fig3", "fig4"):
        for k in u.keys(fig):
            c = u.get(fig, k, "saturated_cpu", "lmm-mms")
            m = u.get(fig, k, "saturated_mem", "lmm-mms")
            name = f"{100 * k:.0f} % elephants" if fig == "fig4" else str(k)
            rows.append(
                [fig, name, u.n, int(c.sum()), int(m.sum()), int(((c == 0) & (m == 0)).sum())]
            )
    head = ["figure", "setting", "samples", "CPU saturated", "memory saturated", "neither"]
    return table(head, rows)


def _sharing_table(share: Any) -> list[str]:
    rows = []
    for n in sorted(int(x) for x in share["users"].unique()):
        for mech in MECHANISMS:
            g = share.loc[(share["users"] == n) & (share["mechanism"] == mech), "sharing_degree"]
            rows.append(
                [n, LABELS[mech], f"{g.min():.3f}", f"{100 * float((g < 1 - TOL).mean()):.2f}"]
            )
    return table(["users", "mechanism", "min sharing degree", "users below 1 (%)"], rows)


def _setup(run: dict[str, Any], units: Units) -> kit.Setup:
    """The set-up table's rows: our run beside Section 5.1's set-up."""
    specs = settings(bool(run["quick"]))
    scales = sorted({s["users"] for s in specs if s["figure"] == "fig2"})
    shares = [s["elephants"] for s in specs if s["figure"] == "fig4"]
    return kit.Setup(
        trace=T.text("setup.trace"),
        window=f"{run['samples_per_setting']} samples per setting and seed ({units.n} in all); "
        f"users {', '.join(map(str, scales))} (Figs. 2, 5), 100 users on 4 capacities (Fig. 3), "
        f"elephants {', '.join(f'{100 * e:g} %' for e in shares)} (Fig. 4)",
        servers="one pool: (100, 100) cores and GB; Fig. 3 also (500, 500), (50, 500), (500, 50)",
        schedulers=[LABELS[m] for m in MECHANISMS],
        seeds=run["seeds"],
        quick=bool(run["quick"]),
        model_tol=f"{100 * paper.MODEL_TOL:g} pp (a utilisation), added to the printed precision",
        notes=[("baselines judged", "unbounded, capped (the bounded reading shown beside)")],
        paper=T.rows(
            "setup.paper",
            samples=paper.SAMPLES,
            users=f"{paper.USER_SCALES[0]}-{paper.USER_SCALES[-1]}",
            elephants=", ".join(f"{100 * e:g} %" for e in paper.ELEPHANT_SHARES),
            capacities=", ".join(f"({c:g}, {m:g})" for c, m in paper.CAPACITIES),
        ),
    )


def write_report(out: Path, run: dict[str, Any]) -> Path:
    """Write the figures, ``claims.json`` and ``report.md`` into ``out``.

    Parameters
    ----------
    out : Path
        The folder (holding the run's tables).
    run : dict
        :func:`fairsim.experiments.lmm_mms.experiment.run_experiment`'s result.

    Returns
    -------
    Path
        The report.
    """
    out = Path(out)
    frame, share = run["samples"], run["sharing"]
    units = Units(frame)
    write_figures(units, share, out)
    claims = build_claims(frame, share)
    write_claims(out, claims, paper.STATEMENTS)
    quick = " (quick run: fewer settings and samples)" if run["quick"] else ""
    lines = [
        *T.lines(
            "head",
            per=run["samples_per_setting"],
            quick=quick,
            seeds=len(run["seeds"]),
            n=units.n,
            wall_s=run["wall_s"],
            saturated=100 * SATURATED,
        ),
        *kit.setup_table(_setup(run, units)),
        *T.lines(
            "why",
            elephant_top=round(100 * (1 - ELEPHANT_QUANTILE), 6),
            quick_why=T.text("why.quick") if run["quick"] else "",
        ),
        *claims_markdown(claims),
    ]
    for fig in ("fig2", "fig3", "fig4"):
        lines += [*T.lines(fig), *T.lines("utilisation", text=paper.BY_KEY[fig].text)]
        for metric, name in (("util_cpu", "CPU"), ("util_mem", "Memory")):
            lines += [*T.lines("utilisation.metric", name=name), *_table(units, fig, metric)]
        lines += T.lines("image", fig=fig)
    lines += [*T.lines("saturation"), *_saturation_table(units)]
    lines += [
        *T.lines("fig5", text=paper.BY_KEY["fig5"].text),
        *_table(units, "fig2", "completion_rate"),
        *T.lines("fig6", text=paper.BY_KEY["fig6"].text),
        *_sharing_table(share),
        *T.lines("end"),
    ]
    return write_text(out / "report.md", "\n".join(lines))
