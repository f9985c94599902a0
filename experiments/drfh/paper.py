"""Published numbers of the DRFH paper, used as reference values by figures and reports.

Source: W. Wang, B. Li, B. Liang, "Dominant Resource Fairness in Cloud Computing Systems with
Heterogeneous Servers" (IEEE INFOCOM 2014), Section VI "Simulation Results".

All utilisation and share values are fractions in [0, 1]; times are in seconds.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

#: Table II (Sec. VI, "Resource utilization"): mean (CPU, memory) utilisation of the Slots
#: scheduler, keyed by the number of slots per maximum server.
TABLE_II: Final = MappingProxyType(
    {
        10: (0.351, 0.234),
        12: (0.422, 0.274),
        14: (0.439, 0.280),
        16: (0.454, 0.242),
        20: (0.406, 0.200),
    }
)

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
        "user 1 alone": {"user 1": {"cpu": 0.40, "mem": 0.62, "dominant": 0.62}},
        "users 1+2": {"user 1": {"dominant": 0.44}, "user 2": {"dominant": 0.44}},
        "users 1-3": {
            "user 1": {"dominant": 0.26},
            "user 2": {"dominant": 0.26},
            "user 3": {"dominant": 0.26},
        },
    }
)

#: Fig. 5 (Sec. VI): qualitative. "the two DRFH implementations significantly outperform the
#: traditional Slots scheduler" and "Best-Fit DRFH leads to uniformly higher resource utilization
#: than the First-Fit alternative at all times".
FIG5_CLAIM: Final = (
    "DRFH (FF and BF) utilisation well above Slots; Best-Fit uniformly above First-Fit"
)

#: Fig. 6b (Sec. VI): job-size bins (inclusive task-count bounds; None = unbounded).
FIG6_BINS: Final = ((1, 50), (51, 100), (101, 500), (501, 1000), (1001, None))
FIG6_BIN_LABELS: Final = ("1-50", "51-100", "101-500", "501-1000", ">1000")
#: Fig. 6b text (qualitative): "DRFH shows no improvement over Slots scheduler for small jobs, a
#: significant completion time reduction has been observed for those containing more tasks.
#: Generally, the larger the job is, the more improvement one may expect."
FIG6_CLAIM: Final = "no improvement for small jobs, larger improvement for larger jobs"

#: Fig. 7 text (the paper's prose says "Fig. 8" but describes Fig. 7): "Around 20% users have all
#: their tasks completed under Best-Fit DRFH but do not under Slots."
FIG7_FULL_UNDER_BF_NOT_SLOTS: Final = 0.20
#: Fig. 7 text: "Best-Fit DRFH leads to higher task completion ratio for almost all users"
#: (qualitative; no number given).
FIG7_CLAIM: Final = "higher task completion ratio under Best-Fit DRFH for almost all users"

#: Fig. 8 (Sec. VI, "Sharing incentive"): "only 2% users see fewer tasks finished in the shared
#: environment"; "the task completion ratio decreases only slightly" (no number given).
FIG8_WORSE_OFF_FRACTION: Final = 0.02
