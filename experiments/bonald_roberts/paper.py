"""The statements of Bonald and Roberts's Section 4 that the reproduction checks, and our rules.

Source: T. Bonald, J. Roberts, "Multi-resource fairness: objectives, algorithms and performance",
ACM SIGMETRICS 2015, Section 4 (Figs. 1-3). The paper gives Figs. 1-3 as plots without printed
numbers: its statements are the figure captions and the text of Sections 4.3-4.4, so every
threshold below is ours, chosen to scale with the quantity (relative differences of service
rates), and stated in each claim's rule.

Requirement vectors a1 = (.1, 1), a2 = (1, .1), a3 = (1, 1); balanced load rho1 = rho2 = rho3
(Fig. 1), unbalanced rho1 = 4 rho2 = 4 rho3 (Figs. 2-3); the x axis is the load of the most loaded
resource.
"""

from __future__ import annotations

from typing import Final

#: Fig. 1 caption: "for each allocation we have, gamma1 = gamma2 > gamma3" (balanced load).
FIG1_ORDER: Final = "Balanced load: γ2 > γ3 for every allocation at every load"
#: The equality part of the Fig. 1 caption, which holds by the model's symmetry.
FIG1_EQUAL: Final = "Balanced load: γ1 = γ2 for every allocation at every load"
#: Section 4.3 on Fig. 1: "BMF is very close to PF".
FIG1_BMF_CLOSE_PF: Final = "Balanced load: BMF is very close to PF (per class)"
#: Section 4.3 on Fig. 1: "while both are somewhat better than DRF, especially at high load".
FIG1_BETTER_THAN_DRF: Final = (
    "Balanced load: PF and BMF both better than DRF at high load (every class)"
)
#: Figs. 2-3 captions: "for each allocation we have, gamma2 > gamma1 > gamma3" (unbalanced).
FIG2_ORDER: Final = "Unbalanced load: γ2 > γ1 > γ3 for every allocation at every load"
#: Section 4.3 on Fig. 2: "The service rates of PF and BMF are roughly equivalent".
FIG2_PF_BMF_EQUIVALENT: Final = "Unbalanced load: PF and BMF roughly equivalent (per class)"
#: Section 4.3 on Fig. 2: "a significant gain in gamma2 ...".
FIG2_GAIN: Final = "Unbalanced load: PF and BMF give a significant gain in γ2 over DRF"
#: Section 4.3 on Fig. 2: "... for negligible reductions in gamma1 and gamma3".
FIG2_NEGLIGIBLE_LOSS: Final = "Unbalanced load: PF and BMF reduce γ1 and γ3 negligibly against DRF"
#: Section 4.4 on Fig. 3: "all three packet-based algorithms closely approximate the service
#: rates of the ideal allocations".
FIG3_PACKET_CLOSE: Final = (
    "Packet-based DRFQ, PF-SFQ and BMF-SFQ closely approximate the fluid service rates"
)

#: "very close" / "roughly equivalent": every class's relative gap |gamma_BMF / gamma_PF - 1|
#: within 10 % (the default tolerance of :func:`fairsim.experiments.claims.agrees`).
CLOSE_REL: Final = 0.10
#: "significant gain in gamma2": at least +10 % over DRF at the highest load.
GAIN_MIN: Final = 0.10
#: "negligible reductions": no class 1 or 3 loses more than 5 % of its DRF service rate.
LOSS_MAX: Final = 0.05
#: "closely approximate": the packet rate within 10 % of the fluid rate at every point.
PACKET_REL: Final = 0.10

#: Packet algorithm realising each fluid allocation (Section 3: DRFQ eq. 2, PF-SFQ eq. 5,
#: BMF-SFQ eq. 7).
PACKET_ALGORITHM: Final = {"drf": "drfq", "pf": "pf", "bmf": "bmf"}

#: Our consistency checks (not the paper's): the truncation-error bound of every Markov gamma_k
#: at most 1 %, and the simulation's 95 % intervals covering the Markov value at 85 % of the
#: points or more (95 % expected; batch means are somewhat optimistic at high load).
TRUNCATION_MAX: Final = 0.01
COVERAGE_MIN: Final = 0.85
