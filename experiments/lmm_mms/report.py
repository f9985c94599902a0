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
from fairsim.experiments.lmm_mms.experiment import LABELS, MECHANISMS, SATURATED, Units
from fairsim.experiments.lmm_mms.figures import mean_intervals, write_figures


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
    return kit.table(["setting", *(LABELS[x] for x in MECHANISMS)], rows)


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
    return kit.table(head, rows)


def _sharing_table(share: Any) -> list[str]:
    rows = []
    for n in sorted(int(x) for x in share["users"].unique()):
        for mech in MECHANISMS:
            g = share.loc[(share["users"] == n) & (share["mechanism"] == mech), "sharing_degree"]
            rows.append(
                [n, LABELS[mech], f"{g.min():.3f}", f"{100 * float((g < 1 - TOL).mean()):.2f}"]
            )
    return kit.table(["users", "mechanism", "min sharing degree", "users below 1 (%)"], rows)


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
    write_claims(out, claims)
    n_seeds = len(run["seeds"])
    per = run["samples_per_setting"]
    quick = " (quick run: fewer settings and samples)" if run["quick"] else ""
    lines = [
        "# LMM-MMS paper, Section 5, on the Alibaba v2018 batch tasks",
        "",
        f"{per} samples per setting and seed{quick}, "
        f"{n_seeds} seed(s) (1..{n_seeds}): {units.n} samples per setting in all. Users are "
        "Alibaba batch tasks: demand (plan_cpu/100 cores, plan_mem GB), bound instance_num. "
        f"Wall time of the runs: {run['wall_s']:.0f} s.",
        "",
        "**Seeds, intervals, rules.** Seed s draws every sample of every setting "
        "(`SeedSequence(s)`, one child per setting); seed 1 gives the single-seed numbers of "
        "before. Every number is a mean over the samples of all seeds; its 95 % interval is the "
        "percentile bootstrap over the samples (a sample's users are drawn together, so the "
        "sample is the unit). A number the paper prints agrees when it lies within our interval "
        "widened by 10 % of its value (a range: when our interval meets the range widened by 10 % "
        "of its ends); an order holds when the whole interval of the difference is on the "
        "paper's side; a trend when the interval of Spearman's rho excludes 0 in the paper's "
        "direction; a statement 'at every setting' is judged per setting and the worst is shown. "
        "Kinds: `paper` (counted in the headline), `by-construction` (cannot fail: LMM-MMS is "
        "bounded DRF on one pool; sharing incentive is a theorem), `consistency` (our checks of "
        "the solvers).",
        "",
        "Baselines, two readings (the paper does not say how its DRF and AF treat the task "
        "bounds): **bounded** (`drf`, `af`: progressive filling that stops each user at its "
        "bound, the others keep rising) and **unbounded, capped** (`drf-unbounded`, "
        "`af-unbounded`: the allocation as if no user had a bound, then each user capped at its "
        "bound; the excess is wasted). Every statement that compares LMM-MMS with DRF and AF is "
        "checked against both. A resource is *saturated* in a sample when LMM-MMS uses all of it "
        f"(>= {100 * SATURATED:g} %).",
        "",
        *claims_markdown(claims),
    ]
    for fig, title in (
        ("fig2", "Fig. 2: utilisation by number of users, capacity (100, 100)"),
        ("fig3", "Fig. 3: utilisation by capacity (CPU cores, memory GB), 100 users"),
        ("fig4", "Fig. 4: utilisation by share of elephants, 100 users"),
    ):
        lines += [
            f"## {title}",
            "",
            f"Paper: {paper.BY_KEY[fig].text}. Mean [95 % interval], %.",
            "",
        ]
        for metric, name in (("util_cpu", "CPU"), ("util_mem", "Memory")):
            lines += [f"{name} utilisation:", "", *_table(units, fig, metric)]
        lines += [f"![{fig}]({fig}.png)", ""]
    lines += ["## Saturation under LMM-MMS (samples)", "", *_saturation_table(units)]
    lines += [
        "## Fig. 5: user completion rate (%)",
        "",
        f"Paper: {paper.BY_KEY['fig5'].text}. All samples, mean [95 % interval]:",
        "",
        *_table(units, "fig2", "completion_rate"),
        "![fig5](fig5.png)",
        "",
        "## Fig. 6: sharing degree",
        "",
        f"Paper: {paper.BY_KEY['fig6'].text}.",
        "",
        *_sharing_table(share),
        "![fig6](fig6.png)",
        "",
        "Why LMM-MMS and bounded DRF coincide: on one pool a user's maximin share is "
        "mu_i = min_r (C_r / n) / d_ir, so its MMS ratio x_i / mu_i = n * max_r (x_i d_ir / C_r) "
        "is n times its dominant share; lexicographically max-minimising MMS ratios under task "
        "bounds is then exactly DRF's progressive filling with bounds. The paper's reported gains "
        "over DRF (e.g. 12.3-15.59 % utilisation with unbalanced capacities) cannot come from a "
        "bounded DRF; a DRF that ignores the bounds and caps afterwards (the excess wasted) "
        "gives them, so that is the paper's probable baseline.",
        "",
        "Where we differ: the paper draws users from 'the actual probability distribution' of "
        "batch_task without giving it; we draw real rows of the one-hour v2018 sample, whose tasks "
        "are CPU-bound (median 1 core, 0.3 GB), so CPU saturates for every mechanism and memory is "
        "where they differ. Its elephant definition is not given either (ours: top 10 % by total "
        "dominant demand).",
        "",
        "Tables: `samples.parquet`, `sharing.parquet`; claims: `claims.json`; method: "
        "`docs/lmm-mms.md`.",
        "",
    ]
    return write_text(out / "report.md", "\n".join(lines))
