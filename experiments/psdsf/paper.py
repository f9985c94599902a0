"""Published numbers and statements of the PS-DSF paper's Section V, used by the report.

Source: M. Khamse-Ashari, I. Lambadaris, G. Kesidis, B. Urgaonkar, Y. Zhao, "Per-Server
Dominant-Share Fairness (PS-DSF): A Multi-Resource Fair Allocation Mechanism for Heterogeneous
Servers", Section V (Tables III-IV, Fig. 6). Tasks are in the paper's units (a paper task; the
reproduction runs each as several small tasks); utilisation values are fractions in [0, 1]; times
are in seconds.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

#: Table III: tasks each user could run monopolising each class of servers (A, B, C, D). The
#: class counts and demand vectors of Fig. 5 (an image) are recovered from it (docs/psdsf.md).
TABLE_III: Final = (
    (80.0, 340.0, 82.5, 55.0),
    (40.0, 170.0, 41.25, 41.25),
    (0.0, 0.0, 82.5, 27.5),
    (0.0, 0.0, 27.5, 27.5),
)

#: Table IV: tasks of each user (rows, users 1-4) on each class (columns A-D), all users active,
#: under PS-DSF (RDM) and TSF.
TABLE_IV: Final = MappingProxyType(
    {
        "psdsf": (
            (40.0, 170.0, 0.0, 0.0),
            (20.0, 85.0, 0.0, 0.0),
            (0.0, 0.0, 82.5, 0.0),
            (0.0, 0.0, 0.0, 27.5),
        ),
        "tsf": (
            (35.0, 170.0, 0.0, 0.0),
            (22.5, 85.0, 0.0, 0.0),
            (0.0, 0.0, 58.33, 0.0),
            (0.0, 0.0, 8.05, 27.5),
        ),
    }
)

#: Section V: "User 4 is inactive during interval (100, 250) sec, and is active elsewhere", over
#: "the interval (0, 300) sec".
USER4_INACTIVE_S: Final = (100.0, 250.0)
INTERVAL_S: Final = (0.0, 300.0)

#: Section V, Fig. 6 text, verbatim.
FIG6_METHOD: Final = (
    "For the PS-DSF, we start with an initial allocation and update the allocation every second "
    "according to the servers' procedure [...]. For TSF and C-DRFH mechanisms we precisely find "
    "these allocations every second."
)
FIG6_GREATER: Final = (
    "It can be observed that the PS-DSF allocation mechanism results in greater utilization "
    "compared to the two other mechanisms in this example."
)
FIG6_CONVERGES: Final = (
    "the distributed version of the PS-DSF allocation algorithm promptly converges when changes "
    "occur in the set of active users."
)
FULLY_USED: Final = (
    "The CPU on the first two classes of servers and also the memory on all servers are fully "
    "utilized under any of the allocation mechanisms"
)
TABLE_IV_SPLIT: Final = (
    "Under both allocations the servers of the first two classes (the second two classes "
    "respectively) are allocated to the first (the last) two users."
)
