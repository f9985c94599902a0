"""Published numbers, settings and statements of the LMM-MMS paper's Section 5, used by the runs
and the report.

Source: J. Li, H. Wang, J. Wang, Y. Zhang, "LMM-MMS", *Mathematics* (MDPI) 2025, 13(13), 2214,
Section 5 "Experimental Results" and Section 6. Utilisation and rates are fractions in [0, 1].
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

#: Section 5.1 (6): "Each experimental setting involved generating 100 random samples."
SAMPLES: Final = 100
#: Section 5.2: user scales 50-300 on capacity (100, 100) (Figs. 2 and 5).
USER_SCALES: Final = (50, 100, 150, 200, 250, 300)
#: Section 5.1 (5): the four capacities (CPU cores, memory GB), the first two balanced (Fig. 3).
CAPACITIES: Final = ((100.0, 100.0), (500.0, 500.0), (50.0, 500.0), (500.0, 50.0))
BALANCED: Final = ("(100, 100)", "(500, 500)")
#: Section 5.4: shares of elephant requirements among 100 users (Fig. 4).
ELEPHANT_SHARES: Final = (0.0, 0.05, 0.10, 0.20, 0.50)
#: Section 5.6: the user scales of Fig. 6 (we add 50).
SHARING_SCALES: Final = (100, 300)

#: Fig. 2a: "a CPU resource utilization rate of nearly 100% under all user scales".
FIG2_CPU: Final = 1.0
#: Fig. 2b: "maintaining around 80-85% for all user scales" (memory).
FIG2_MEM: Final = (0.80, 0.85)
#: Fig. 3: "In scenarios with significant capacity differences, LMM-MMS exhibited a performance
#: advantage ranging from 12.3% to 15.59% over the other mechanisms."
FIG3_ADVANTAGE: Final = (0.123, 0.1559)

#: What the paper reports, per figure, for the report.
STATEMENTS: Final = MappingProxyType(
    {
        "fig2": "LMM-MMS keeps CPU utilisation near 100 % at every scale (50-300 users) and memory "
        "at 80-85 %; above DRF and AF while resources are not saturated",
        "fig3": "LMM-MMS at least as good as DRF/AF on balanced capacities; 12.3-15.59 % better "
        "when the capacities differ a lot",
        "fig4": "LMM-MMS utilisation grows with the share of elephants and stays above DRF/AF",
        "fig5": "LMM-MMS user completion rate above DRF and AF unless resources are saturated",
        "fig6": "every user's sharing degree >= 1 under LMM-MMS (sharing incentive); LMM-MMS has "
        "'significant advantages in sharing degree distribution'",
    }
)
