"""Published numbers, settings and statements of the LMM-MMS paper's Section 5, used by the runs
and the report.

Source: J. Li, H. Wang, J. Wang, Y. Zhang, "LMM-MMS", *Mathematics* (MDPI) 2025, 13(13), 2214,
Section 5 "Experimental Results" and Section 6. Utilisation and rates are fractions in [0, 1].
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

#: The model tolerance of every LMM-MMS claim that compares with a number the paper prints (a
#: share, in [0, 1]): 1 pp, added to the printed precision (``docs/lmm-mms.md`` says why).
MODEL_TOL: Final = 0.01
#: Fig. 2a: "a CPU resource utilization rate of nearly 100% under all user scales".
FIG2_CPU: Final = Printed("100", True)
#: Fig. 2b: "maintaining around 80-85% for all user scales" (memory).
FIG2_MEM: Final = (Printed("80", True), Printed("85", True))
#: Fig. 3: "In scenarios with significant capacity differences, LMM-MMS exhibited a performance
#: advantage ranging from 12.3% to 15.59% over the other mechanisms."
FIG3_ADVANTAGE: Final = (Printed("12.3", True), Printed("15.59", True))

#: Section 5.2, "stability [...] at all scales": the largest spread over the user scales of
#: LMM-MMS's mean utilisation (CPU or memory) that still counts as stable: 5 pp, the width of the
#: band the paper itself calls stable ("around 80-85% for all user scales", Fig. 2b). Ours.
STABLE: Final = 0.05

#: Why every comparison with DRF and AF is judged against the unbounded, capped baselines, the
#: bounded ones shown beside (``docs/lmm-mms.md``): the paper's words.
BASELINES_READING: Final = TEXT["text.baselines_reading"]

#: What the paper reports, per figure (keys ``fig2`` ... ``fig6``: the report's "Paper:" lines),
#: and the statements the reproduction checks, in the report's order (``{family}``: the reading
#: of the baselines, :data:`fairsim.experiments.lmm_mms.experiment.FAMILIES`); ``statements.md``
#: beside this module holds them (:func:`~fairsim.experiments.claims.load_statements`).
STATEMENTS: Final = load_statements(Path(__file__).with_name("statements.md"))
#: The statements by key.
BY_KEY: Final = MappingProxyType({s.key: s for s in STATEMENTS})
