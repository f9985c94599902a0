"""The UDRF reproduction's report (Section V, Figs. 6-10) over seeds: ``claims.json`` (the
claims of :mod:`fairsim.experiments.udrf.claims`), the figures and ``report.md``, whose table of
statements is generated from the claims, then the per-scheduler means over the seeds, the
reductions by group and the runs.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fairsim.atomic import write_text
from fairsim.experiments import kit
from fairsim.experiments.claims import Claim, claims_markdown, write_claims
from fairsim.experiments.udrf import figures, paper
from fairsim.experiments.udrf import numbers as N
from fairsim.experiments.udrf.claims import build_claims
from fairsim.experiments.udrf.experiment import BASELINE, UDRF_NAME
from fairsim.scenario.reporting.markdown import table
from fairsim.scenario.sweep import default_jobs

log = logging.getLogger(__name__)

#: The report's prose.
T = kit.Template(Path(__file__).with_name("report_template.md"))
#: The per-scheduler means in seconds, in the table's order.
_MEANS_S = ("jct_mean_s", "jct_median_s", "wait_mean_s", "exec_mean_s", "before_queue_mean_s")


def _counts(groups: Any) -> str:
    """``group: jobs`` for every group of a column, in the groups' order."""
    return ", ".join(f"{k}: {v:,}" for k, v in groups.value_counts().sort_index().items())


def write_report(out: Path, run: dict[str, Any]) -> Path:
    """Read the seeds' files back, write ``claims.json``, the figures and ``report.md`` into
    ``out``, and return the report's path.

    Parameters
    ----------
    out : Path
        The folder holding ``seed-<s>/`` per seed.
    run : dict
        :func:`fairsim.experiments.udrf.experiment.run_experiment`'s result.
    """
    out = Path(out)
    data = N.load_seeds(out, run["seeds"])
    claims = build_claims(data)
    write_claims(out, claims, paper.STATEMENTS)
    figs = figures.draw(out, data)
    wall = time.perf_counter() - run["started"]
    text = report_text(data, claims, run["config"], figs, wall_s=wall, jobs=run["jobs"])
    return write_text(out / "report.md", text)


def _reductions(data: N.Seeds, other: str) -> list[str]:
    """UDRF's reductions against ``other``, overall and by group, every part of the JCT, under
    both readings (:data:`~fairsim.experiments.udrf.numbers.REDUCTION_MEASURES`)."""
    n = len(data.seeds)
    pairs = N.pooled_pairs(data, other, UDRF_NAME)
    rows = []
    for part in N.PARTS:
        for measure in N.REDUCTION_MEASURES:
            cells = []
            for col in ("repetitions", "classes"):
                t = N.reduction_table(pairs, col, part, n, measure)
                cells.append(
                    ", ".join(
                        f"{g}: {100 * r:.0f} [{kit.number(lo, 'share', '.0f', suffix=False)}, "
                        f"{kit.number(hi, 'share', '.0f', suffix=False)}]"
                        for g, _, r, lo, hi in t.itertuples(index=False)
                    )
                )
            overall = kit.estimate(N.overall_reduction(pairs, part, n, measure))
            rows.append([part, _MEASURE_LABEL[measure], overall, *cells])
    head = ["part", "reduction", "overall", "by repetitions", "by classes needed"]
    return [*T.lines("reductions.against", other=other, jobs=len(pairs)), *table(head, rows)]


#: The report's name of each reading of a reduction.
_MEASURE_LABEL = {"mean_of_ratios": "mean of per-job", "ratio_of_means": "of the mean"}


def _setup(data: N.Seeds, cfg: Any) -> kit.Setup:
    """The set-up table's rows: our run beside the paper's Section V set-up
    (:data:`~fairsim.experiments.udrf.paper.SETUP`)."""
    s0 = data.summaries[data.seeds[0]]
    return kit.Setup(
        trace=f"Google 2011 cluster trace (`{cfg.trace.format}`, parts {cfg.trace.parts})",
        window=T.text("setup.window", cfg=cfg, s0=s0),
        servers=T.text("setup.servers", cfg=cfg, s0=s0),
        schedulers=data.schedulers,
        seeds=data.seeds,
        quick=bool(s0["quick"]),
        model_tol="none: no claim compares with a number the paper prints (orders and trends)",
        paper=T.rows(
            "setup.paper",
            window=str(paper.SETUP["trace"]).split(", ", 1)[1],
            classes=paper.SETUP["machine_classes"],
        ),
    )


def report_text(
    data: N.Seeds,
    claims: Sequence[Claim],
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
    workers = default_jobs(n, jobs)
    means = []
    for name in data.schedulers:
        e = lambda k, sub=None, name=name: N.seed_estimate(data, name, k, sub)  # noqa: E731
        means.append(
            [
                name,
                f"{e('jobs_completed').value:,.0f}",
                *(kit.estimate(e(k), "s") for k in _MEANS_S),
                *(kit.estimate(e("wasted_mean", r)) for r in ("cpu", "mem")),
                f"{e('makespan_s').value / 3600:.2f}",
            ]
        )
    pairs = N.pooled_pairs(data)
    runs = [
        [
            s,
            name,
            f"{r['tasks']:,}",
            f"{r['tasks_completed']:,}",
            f"{r['ended'].get('unplaceable', 0):,}",
            f"{r['wall_s']:.1f}",
            f"{r['tasks_per_s']:,.0f}",
        ]
        for s in data.seeds
        for name, r in data.summaries[s]["runs"].items()
    ]
    lines = [
        *T.lines(
            "head",
            baseline=BASELINE,
            cfg=cfg,
            s0=s0,
            first=data.seeds[0],
            last=data.seeds[-1],
            n=n,
            quick=", --quick" if s0["quick"] else "",
            udrf=UDRF_NAME,
            wall_s=wall_s,
            workers=workers,
            es="es" if workers > 1 else "",
        ),
        *kit.setup_table(_setup(data, cfg)),
        *T.lines("setup.why", s0=s0, cfg=cfg),
        *claims_markdown(claims),
        *T.lines("means"),
        *table(T.cells("means.head"), means),
        *T.lines("reductions"),
    ]
    for other in [BASELINE, *[s for s in data.schedulers if s not in (BASELINE, UDRF_NAME)]]:
        lines += _reductions(data, other)
    lines += [
        *T.lines("runs", repetitions=_counts(pairs["repetitions"]), by=_counts(pairs["classes"])),
        *table(T.cells("runs.head"), runs),
        *T.lines("runs.end", figures=", ".join(f"`{f}`" for f in figs)),
    ]
    return "\n".join(lines)
