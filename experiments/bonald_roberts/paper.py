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

from pathlib import Path
from types import MappingProxyType
from typing import Final

from fairsim.experiments.claims import load_statements
from fairsim.experiments.kit import Template

#: The blocks of ``statements.md`` (beside this module) by name; ``text.*``: prose (quotes,
#: our readings, the claims' reasons).
TEXT: Final = MappingProxyType(Template(Path(__file__).with_name("statements.md")).blocks)

#: The statements the reproduction checks, in the report's order (Sections 4.3-4.4), from
#: ``statements.md`` beside this module (:func:`~fairsim.experiments.claims.load_statements`).
STATEMENTS: Final = load_statements(Path(__file__).with_name("statements.md"))
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
