"""Published numbers and statements of the PS-DSF paper's Section V, and our thresholds.

Source: M. Khamse-Ashari, I. Lambadaris, G. Kesidis, B. Urgaonkar, Y. Zhao, "Per-Server
Dominant-Share Fairness (PS-DSF): A Multi-Resource Fair Allocation Mechanism for Heterogeneous
Servers", Section V (Tables III-IV, Fig. 6). Tasks are in the paper's units (a paper task; the
reproduction runs each as several small tasks); utilisation values are fractions in [0, 1]; times
are in seconds.
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

#: The paper's names of the mechanisms.
LABELS: Final = MappingProxyType({"psdsf": "PS-DSF", "tsf": "TSF", "c-drfh": "C-DRFH"})

#: Table IV: tasks of each user (rows, users 1-4) on each class (columns A-D), all users active,
#: under PS-DSF (RDM) and TSF.
#: Each cell is :class:`~fairsim.experiments.claims.Printed` as the table prints it ("40",
#: "82.5", "58.33"), for its printed precision.
TABLE_IV: Final = MappingProxyType(
    {
        m: tuple(tuple(Printed(c) for c in row.split()) for row in rows)
        for m, rows in {
            "psdsf": ("40 170 0 0", "20 85 0 0", "0 0 82.5 0", "0 0 0 27.5"),
            "tsf": ("35 170 0 0", "22.5 85 0 0", "0 0 58.33 0", "0 0 8.05 27.5"),
        }.items()
    }
)

#: Table IV's caption, as printed: a Table IV claim quotes it with the row it checks
#: (:func:`table_iv_row`).
TABLE_IV_CAPTION: Final = TEXT["text.table_iv_caption"]


def table_iv_row(mech: str, user: int) -> str:
    """Table IV's row of ``user`` (0-3) under ``mech`` as printed, after its caption and the
    columns' header ("PS-DSF | Class A | Class B | Class C | Class D: User 3 | 0 | 0 | 82.5 |
    0"): the quote of a claim on that row."""
    cells = " | ".join(c.text for c in TABLE_IV[mech][user])
    head = f"{LABELS[mech]} | Class A | Class B | Class C | Class D"
    return f"{TABLE_IV_CAPTION} {head}: User {user + 1} | {cells}"


#: The model tolerance of every PS-DSF claim that compares with a number of Table IV, in paper
#: tasks: 0.25 (one of the four small tasks a paper task is run as), added to the table's printed
#: precision (``docs/psdsf.md`` says why).
MODEL_TOL: Final = 0.25

#: Section V: "User 4 is inactive during interval (100, 250) sec, and is active elsewhere", over
#: "the interval (0, 300) sec".
USER4_INACTIVE_S: Final = (100.0, 250.0)
INTERVAL_S: Final = (0.0, 300.0)

#: "Promptly converges": the slowest settling after a change of the active users, simulated
#: seconds (five mean run times; :data:`~fairsim.experiments.psdsf.experiment.CONVERGED`). Ours.
SETTLE_S: Final = 10.0
#: Utilisation at or above which a resource is "fully utilized" (Section V). Ours.
FULL: Final = 0.95

#: The statements the reproduction checks (``statements.md`` beside this module,
#: :func:`~fairsim.experiments.claims.load_statements`), in the report's order (fields in braces
#: are filled per user, class or resource). Section V, Fig. 6 text: "For the PS-DSF, we start
#: with an initial allocation and update the allocation every second according to the servers'
#: procedure [...]. For TSF and C-DRFH mechanisms we precisely find these allocations every
#: second."
STATEMENTS: Final = load_statements(Path(__file__).with_name("statements.md"))
#: The statements by key.
BY_KEY: Final = MappingProxyType({s.key: s for s in STATEMENTS})
