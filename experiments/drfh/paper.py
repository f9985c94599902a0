"""Published numbers and statements of the DRFH paper, and our readings of its words.

Source: W. Wang, B. Li, B. Liang, "Dominant Resource Fairness in Cloud Computing Systems with
Heterogeneous Servers" (IEEE INFOCOM 2014), Section VI "Simulation Results".

All utilisation and share values are fractions in [0, 1]; times are in seconds.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Final

from fairsim.experiments.claims import Printed, load_statements
from fairsim.experiments.kit import Template

#: The blocks of ``statements.md`` (beside this module) by name; ``text.*``: prose (quotes,
#: our readings, the claims' reasons).
TEXT: Final = MappingProxyType(Template(Path(__file__).with_name("statements.md")).blocks)

#: The model tolerance of every DRFH claim that compares with a number the paper prints (a share,
#: in [0, 1]): 1 pp, added to the paper's printed precision (``docs/drfh-google.md`` says why).
MODEL_TOL: Final = 0.01

#: Table II (Sec. VI, "Resource utilization"): mean (CPU, memory) utilisation of the Slots
#: scheduler, keyed by the number of slots per maximum server; printed with one decimal
#: ("35.1%": ±0.05 pp).
TABLE_II: Final = MappingProxyType(
    {
        10: (Printed("35.1", True), Printed("23.4", True)),
        12: (Printed("42.2", True), Printed("27.4", True)),
        14: (Printed("43.9", True), Printed("28.0", True)),
        16: (Printed("45.4", True), Printed("24.2", True)),
        20: (Printed("40.6", True), Printed("20.0", True)),
    }
)

#: Table II's caption and header, as printed: a Table II claim quotes them with the row it checks
#: (:func:`table_ii_row`).
TABLE_II_HEAD: Final = TEXT["text.table_ii_head"]


def table_ii_row(slots: int) -> str:
    """Table II's row of ``slots`` as printed ("16 per maximum server | 45.4% | 24.2%"), after
    its caption and header: the quote of a claim on that row."""
    cpu, mem = TABLE_II[slots]
    return f"{TABLE_II_HEAD}: {slots} per maximum server | {cpu.text}% | {mem.text}%"


#: Table II text: "dividing the maximum server ... into 14 slots leads to the highest overall
#: utilization".
TABLE_II_BEST_SLOTS: Final = 14

#: Fig. 4 (Sec. VI, "Dynamic allocation"): 3 users on 100 servers (52.75 CPU, 51.32 memory units).
FIG4_SERVERS: Final = 100
FIG4_TOTAL_CPU: Final = 52.75
FIG4_TOTAL_MEM: Final = 51.32
#: Per-task demands (cpu, mem) of users 1-3 (Sec. VI text).
FIG4_DEMANDS: Final = MappingProxyType(
    {"user 1": (0.2, 0.3), "user 2": (0.5, 0.1), "user 3": (0.1, 0.3)}
)
#: Join and departure times named in the Fig. 4 text.
FIG4_USER2_JOIN_S: Final = 200.0
FIG4_USER3_JOIN_S: Final = 500.0
FIG4_USER1_DEPART_S: Final = 1080.0
#: Phase windows (start_s, end_s) of Fig. 4 with the shares the text reports.
FIG4_PHASES: Final = MappingProxyType(
    {
        "user 1 alone": (0.0, FIG4_USER2_JOIN_S),
        "users 1+2": (FIG4_USER2_JOIN_S, FIG4_USER3_JOIN_S),
        "users 1-3": (FIG4_USER3_JOIN_S, FIG4_USER1_DEPART_S),
    }
)
#: Shares reported in the Fig. 4 text, per phase and user: {"cpu"|"mem"|"dominant": share}.
#: "it is allocated 40% CPU share and 62% memory share"; "both users receive 44% global dominant
#: share"; "the same global dominant share of 26% to all three users".
FIG4_SHARES: Final = MappingProxyType(
    {
        "user 1 alone": {
            "user 1": {
                "cpu": Printed("40", True),
                "mem": Printed("62", True),
                "dominant": Printed("62", True),
            }
        },
        "users 1+2": {
            "user 1": {"dominant": Printed("44", True)},
            "user 2": {"dominant": Printed("44", True)},
        },
        "users 1-3": {
            "user 1": {"dominant": Printed("26", True)},
            "user 2": {"dominant": Printed("26", True)},
            "user 3": {"dominant": Printed("26", True)},
        },
    }
)

#: Fig. 4's shares that repeat another of the same user: user 1 alone's dominant share is its
#: memory share (62 %), one statement of the paper, so one claim (the memory share's).
FIG4_SAME_AS: Final = MappingProxyType({("user 1 alone", "user 1", "dominant"): "mem"})

#: Fig. 6b (Sec. VI): job-size bins (inclusive task-count bounds; None = unbounded).
FIG6_BINS: Final = ((1, 50), (51, 100), (101, 500), (501, 1000), (1001, None))
FIG6_BIN_LABELS: Final = ("1-50", "51-100", "101-500", "501-1000", ">1000")
#: Fig. 7 text (the paper's prose says "Fig. 8" but describes Fig. 7): "Around 20% users have all
#: their tasks completed under Best-Fit DRFH but do not under Slots."
FIG7_FULL_UNDER_BF_NOT_SLOTS: Final = Printed("20", True)
#: Fig. 8 (Sec. VI, "Sharing incentive"): "only 2% users see fewer tasks finished in the shared
#: environment"; "the task completion ratio decreases only slightly" (no number given).
FIG8_WORSE_OFF_FRACTION: Final = Printed("2", True)

# --------------------------------------------------------------------------- our readings

#: "almost all users" (Fig. 7): at least this fraction.
ALMOST_ALL: Final = 0.90
#: "at all times" (Fig. 5): at least this fraction of the sampled times (one sample a minute; a
#: single sample of a transient does not decide).
AT_ALL_TIMES: Final = 0.98
#: "significantly outperform ... with much higher resource utilization" (Fig. 5): the minimum
#: effect, a mean utilisation at least this much above the best Slots run's (a fraction: 5 pp).
SIGNIFICANTLY: Final = 0.05
#: "decreases only slightly" (Fig. 8): a mean decrease of at most 5 points.
ONLY_SLIGHTLY: Final = 0.05
#: "no improvement" (Fig. 6b, small jobs): a reduction within ±5 %.
NO_IMPROVEMENT: Final = 0.05
#: "a significant completion time reduction has been observed for those containing more tasks"
#: (Fig. 6b): the minimum effect, a mean of per-job reductions above 5 % for the jobs of more
#: than 50 tasks (the same 5 % that bounds "no improvement", so the two readings do not overlap).
SIGNIFICANT_REDUCTION: Final = NO_IMPROVEMENT
#: "shorter job completion times shown in Fig. 6a" (the CDFs): Best-Fit DRFH's JCT CDF at or
#: above Slots' at every completion time, within this much (a fraction of the jobs: the model
#: tolerance, 1 pp).
CDF_BEHIND: Final = MODEL_TOL
#: "it benefits most of them by pooling their DCs together" (Fig. 8): more than this fraction of
#: the users finish a larger fraction of their tasks in the shared cloud.
MOST: Final = 0.5
#: The reading of Fig. 6b's reduction the verdicts use (of
#: :data:`fairsim.experiments.drfh.numbers.FIG6_MEASURES`), and why.
FIG6_VERDICT_MEASURE: Final = "mean_of_ratios"
FIG6_WHY: Final = TEXT["text.fig6_why"]
#: "precisely" (Fig. 4): the bound on Best-Fit DRFH's largest deficit to the DRFH allocation
#: restricted to whole tasks (dominant share), one task of the user with the largest task on the
#: paper's pool (user 2's 0.5 CPU of 52.75 CPU units: 0.95 %), and why.
FIG4_DEFICIT_BOUND: Final = max(
    max(cpu / FIG4_TOTAL_CPU, mem / FIG4_TOTAL_MEM) for cpu, mem in FIG4_DEMANDS.values()
)
#: "each receiving the same share" (Fig. 4, users 2 and 3 after user 1 departs): the largest
#: spread of their dominant shares while both have tasks waiting, within one task (the bound of
#: "precisely").
FIG4_SAME_SHARE_BOUND: Final = FIG4_DEFICIT_BOUND
FIG4_BOUND_WHY: Final = TEXT["text.fig4_bound_why"].format(
    cpu=FIG4_TOTAL_CPU, bound=100 * FIG4_DEFICIT_BOUND
)

# --------------------------------------------------------------------------- statements

#: The statements the reproduction checks (``statements.md`` beside this module,
#: :func:`~fairsim.experiments.claims.load_statements`), in the report's order (fields in braces
#: are filled per slot count, phase, user or scheduler), and what Fig. 5 shows (``fig5``, the
#: report's "Paper:" line).
STATEMENTS: Final = load_statements(Path(__file__).with_name("statements.md"))
#: The statements by key.
BY_KEY: Final = MappingProxyType({s.key: s for s in STATEMENTS})
