"""The Bonald-Roberts reproduction's report (Section 4, Figs. 1-3): ``claims.json`` (the claims of
:mod:`fairsim.experiments.bonald_roberts.claims`), ``run.json`` (wall times), the figures and
``report.md``, whose statements table is generated from the claims, then BMF against PF per class
and the service rates at the highest load.
"""

from __future__ import annotations

import itertools
import logging
import math
from pathlib import Path
from typing import Any

import pandas as pd

from fairsim.atomic import write_text
from fairsim.experiments import kit
from fairsim.experiments.bonald_roberts import paper
from fairsim.experiments.bonald_roberts.claims import build_claims
from fairsim.experiments.bonald_roberts.figures import figure_fluid, figure_packet
from fairsim.experiments.bonald_roberts.numbers import Markov, seed_summary
from fairsim.experiments.claims import Claim, claims_markdown, counts, write_claims
from fairsim.scenario.reporting.markdown import table
from fairsim.schedulers.flows.markov_chain import ALLOCATIONS
from fairsim.simulator.results import write_json

log = logging.getLogger(__name__)

#: The report's prose.
T = kit.Template(Path(__file__).with_name("report_template.md"))


def _bmf_pf_table(m: Markov, scen: list[str]) -> list[str]:
    rows = []
    for sc in scen:
        pf, bmf = m.g(sc, "pf"), m.g(sc, "bmf")
        gap = (100 * (bmf / pf - 1).abs()).map("{:.1f}".format)
        cell = pf.map("{:.4f}".format) + " / " + bmf.map("{:.4f}".format) + " (" + gap + " %)"
        rows += [[sc, f"{load:g}", *cell.loc[load]] for load in pf.index]
    close = kit.number(paper.CLOSE_REL, "share", "g")
    head = ["scenario", "load", *(f"class {k}: PF / BMF (gap)" for k in (1, 2, 3))]
    return [*T.lines("bmf_pf", close=close), *table(head, rows)]


def _rates_table(m: Markov, summ: pd.DataFrame, scen: list[str]) -> list[str]:
    """Markov, SimPy and packet rates of every allocation and class at the highest load."""

    def rate(sel: pd.DataFrame) -> str:
        return kit.interval(sel.gamma.iloc[0], sel.ci_low.iloc[0], sel.ci_high.iloc[0], "", ".4f")

    rows = []
    top = float(m.d.load.max())
    allocs = [x for x in ALLOCATIONS if x in set(m.d.allocation)]
    for sc, al, k in itertools.product(scen, allocs, range(1, int(m.d["class"].max()) + 1)):
        mk = m.d[(m.d.scenario == sc) & (m.d.allocation == al) & (m.d["class"] == k)]
        sel = summ[(summ.scenario == sc) & (summ.allocation == al) & (summ["class"] == k)]
        mk, sm = mk[mk.load == top], sel[(sel.method == "simulation") & (sel.load == top)]
        pk = sel[sel.method == "packet"]
        pk = pk[pk.load == pk.load.max()]
        rows.append(
            [
                sc,
                al.upper(),
                f"{top:g}",
                k,
                f"{mk.gamma.iloc[0]:.4f} (±{mk.error_bound.iloc[0]:.0e})" if len(mk) else "-",
                rate(sm) if len(sm) else "-",
                f"{rate(pk)} at load {pk.load.iloc[0]:g}" if len(pk) else "-",
            ]
        )
    head = ["scenario", "allocation", "load", "class", "Markov", "SimPy", "packet"]
    return table(head, rows)


def _setup_text(cfg: Any, seeds: list[int]) -> str:
    """The report's paragraph on the run's parameters."""
    s = f"{seeds[0]}..{seeds[-1]}" if len(seeds) > 2 else ", ".join(str(x) for x in seeds)
    return T.text("setup_text", cfg=cfg, classes=len(cfg.vectors), seeds=s)


def setup_rows(cfg: Any, seeds: list[int], quick: bool) -> kit.Setup:
    """The set-up table's rows: our run beside the paper's Section 5 (Figs. 1-3)."""
    scen, on = ", ".join(cfg.scenarios), ", ".join(cfg.packet.scenarios)
    loads, packet = (", ".join(f"{x:g}" for x in v) for v in (cfg.loads, cfg.packet.loads))
    return kit.Setup(
        trace="none: the paper's Markovian model (Poisson arrivals, exponential work of mean 1)",
        window=T.text("setup.window", cfg=cfg, loads=loads, scen=scen, packet=packet, on=on),
        servers=T.text("setup.servers", cfg=cfg, resources=len(cfg.vectors[0]), n=len(cfg.vectors)),
        schedulers=list(cfg.allocations),
        seeds=seeds,
        quick=quick,
        model_tol="none: no claim compares with a number the paper prints (orders and gains)",
        notes=[("methods", T.text("setup.methods", cfg=cfg))],
        paper=T.rows("setup.paper"),
    )


def _why(details: pd.DataFrame, cfg: Any, quick: bool) -> list[str]:
    """The "why the set-ups differ" paragraph below the set-up table: the highest load and the
    packet runs' flow size and arrivals against the paper's (Section 4.4)."""
    top = float(details[details.method == "markov"].load.max())
    packets, flows = float(cfg.packet.mean_packets), int(cfg.packet.flows)
    shorter = (20_000 * 1e5) / (packets * flows)
    note = " (`--quick`: fewer loads, a lower truncation level and shorter packet runs)"
    return T.lines(
        "why", top=top, packets=packets, flows=flows, shorter=shorter, quick=note if quick else ""
    )


def report_text(
    details: pd.DataFrame, claims: list[Claim], timing: dict[str, Any], cfg: Any, quick: bool
) -> str:
    """``report.md``: the run's parameters and set-up beside the paper's (``cfg``, ``quick``),
    the claims (generated from ``claims``), per-class BMF v PF, service rates at the highest load,
    figures and wall times (``timing``)."""
    summ = seed_summary(details)
    seeds = [int(s) for s in timing["seeds"]]
    m = Markov(details)
    n = max(1, len(seeds))
    rows = setup_rows(cfg, seeds, quick)
    how = T.text("head.seeds" if n > 1 else "head.one_seed", n=n)
    lines = [
        *T.lines("head", setup=_setup_text(cfg, seeds), seeds=how),
        *kit.setup_table(rows),
        *_why(details, cfg, rows.quick),
        *claims_markdown(claims),
    ]
    scen = [str(x) for x in m.d.scenario.unique()]
    if {"pf", "bmf"} <= set(m.d.allocation):
        lines += _bmf_pf_table(m, scen)
    t = dict.fromkeys(("total_s", "markov_s", "seeds_wall_s", "simulation_s", "packet_s"), math.nan)
    lines += [
        *T.lines("rates", how=T.text("rates.seeds" if n > 1 else "rates.one_seed", n=n)),
        *_rates_table(m, summ, scen),
        *T.lines("end", n=n, t={**t, "packets": 0, **timing}),
    ]
    return "\n".join(lines) + "\n"


def write_report(out: Path, run: dict[str, Any]) -> Path:
    """Claims (``claims.json``), ``run.json`` (wall times), figures and ``report.md``; returns
    the report's path.

    Parameters
    ----------
    out : Path
        The results folder.
    run : dict
        :func:`fairsim.experiments.bonald_roberts.experiment.run_experiment`'s result:
        ``details`` (the Markov rows and every seed's rows), ``timing`` (wall times ``markov_s``,
        ``seeds_wall_s``, ``simulation_s``, ``packet_s``, ``total_s``, ``packets`` and
        ``seeds``), ``config`` and ``quick``.
    """
    out = Path(out)
    details, timing, cfg = run["details"], run["timing"], run["config"]
    claims = build_claims(
        details,
        packet_run=(cfg.packet.mean_packets, cfg.packet.flows),
        truncation_target=cfg.markov.tol,
    )
    write_claims(out, claims, paper.STATEMENTS)
    write_json({"timing": timing}, out / "run.json")
    summ = seed_summary(details)
    scen = set(details[details.method == "markov"].scenario)
    for sc, png in (("balanced", "fig1_balanced.png"), ("unbalanced", "fig2_unbalanced.png")):
        if sc in scen:
            figure_fluid(summ, sc, out / png)
    for sc in details[details.method == "packet"].scenario.unique()[:1]:
        figure_packet(summ, str(sc), out / "fig3_packet.png")
    path = write_text(out / "report.md", report_text(details, claims, timing, cfg, run["quick"]))
    c = counts(claims)
    log.info("bonald-roberts: %d of %d paper statements PASS", c["PASS"], c["all"])
    return path
