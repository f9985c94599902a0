"""Bonald and Roberts's Section 4: the statements the reproduction checks, and our thresholds.

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

from types import MappingProxyType
from typing import Final

from fairsim.experiments.claims import Statement

#: The statements the reproduction checks, in the report's order (Sections 4.3-4.4).
STATEMENTS: Final = (
    Statement(
        "fig1_order",
        "Balanced load: γ2 > γ3 for every allocation at every load",
        "Fig. 1 caption",
        "for each allocation we have, gamma1 = gamma2 > gamma3",
    ),
    Statement(
        "fig1_similar",
        "Balanced load: performance is similar for all three allocations (largest relative gap "
        "between two allocations, every class and load)",
        "Section 4.3, Fig. 1",
        "shows performance is similar for all three allocations",
    ),
    Statement(
        "fig1_bmf_close_pf",
        "Balanced load: BMF is very close to PF (per class)",
        "Section 4.3, Fig. 1(b)",
        "BMF is very close to PF",
    ),
    Statement(
        "fig1_better_than_drf",
        "Balanced load: PF and BMF both better than DRF at high load (every class)",
        "Section 4.3, Fig. 1(a)",
        "while both are somewhat better than DRF, especially at high load",
    ),
    # the equality part of the Fig. 1 caption, which holds by the model's symmetry
    Statement(
        "fig1_equal",
        "Balanced load: γ1 = γ2 for every allocation at every load",
        "Fig. 1 caption",
        "for each allocation we have, gamma1 = gamma2 > gamma3",
    ),
    Statement(
        "fig2_order",
        "Unbalanced load: γ2 > γ1 > γ3 for every allocation at every load",
        "Figs. 2-3 captions",
        "for each allocation we have, gamma2 > gamma1 > gamma3",
    ),
    Statement(
        "fig2_accentuated",
        "Unbalanced load accentuates the difference between the allocations (largest relative "
        "gap of PF and BMF from DRF, unbalanced minus balanced)",
        "Section 4.3, Figs. 1-2",
        "The difference in performance is accentuated under unbalanced load",
    ),
    Statement(
        "fig2_pf_bmf_equivalent",
        "Unbalanced load: PF and BMF roughly equivalent (per class)",
        "Section 4.3, Fig. 2",
        "The service rates of PF and BMF are roughly equivalent",
    ),
    Statement(
        "fig2_gain",
        "Unbalanced load: PF and BMF give a significant gain in γ2 over DRF",
        "Section 4.3, Fig. 2",
        "a significant gain in gamma2",
    ),
    Statement(
        "fig2_negligible_loss",
        "Unbalanced load: PF and BMF reduce γ1 and γ3 negligibly against DRF",
        "Section 4.3, Fig. 2",
        "for negligible reductions in gamma1 and gamma3",
    ),
    Statement(
        "fig3_packet_close",
        "Packet-based DRFQ, PF-SFQ and BMF-SFQ closely approximate the fluid service rates",
        "Section 4.4, Fig. 3",
        "all three packet-based algorithms closely approximate the service rates of the ideal "
        "allocations",
    ),
    Statement(
        "fig3_packet_order",
        "Packet runs, unbalanced load: γ2 > γ1 > γ3 for every packet algorithm at every load "
        "(Fig. 3's crosses)",
        "Fig. 3 caption",
        "for each allocation, gamma2 > gamma1 > gamma3",
    ),
    Statement(
        "fig3_packet_pf_bmf",
        "Packet runs, unbalanced load: PF-SFQ and BMF-SFQ give similar service rates (per class "
        "and load)",
        "Section 4.4, Fig. 3",
        "Given the similarity of the results for PF and BMF",
    ),
    # our consistency checks
    Statement(
        "truncation",
        "Markov truncation error bounded: relative bound on every γ_k",
        "ours (method)",
    ),
    Statement(
        "coverage",
        "SimPy batch-means 95 % CIs cover the Markov service rates",
        "ours (a consistency check)",
    ),
    Statement(
        "seed_means",
        "Mean SimPy service rates over seeds agree with the Markov chain",
        "ours (a consistency check)",
    ),
)
#: The statements by key.
BY_KEY: Final = MappingProxyType({s.key: s for s in STATEMENTS})

#: "very close" / "roughly equivalent": every class's relative gap |gamma_BMF / gamma_PF - 1|
#: within 10 % (the default tolerance of :func:`fairsim.experiments.claims.agrees`).
CLOSE_REL: Final = 0.10
#: "performance is similar for all three allocations" (balanced load): every class's relative gap
#: between any two allocations within 20 %, twice "very close" (:data:`CLOSE_REL`): the paper
#: says both "similar" and "somewhat better than DRF" of the same curves. Ours.
SIMILAR_REL: Final = 0.20
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
