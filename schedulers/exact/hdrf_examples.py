"""The worked examples of hierarchical DRF, with the numbers each mechanism gives: one place for
the tests (``tests/regression/test_hdrf_examples.py``), the property checker's first
hierarchical instances and a later claims report.

Sources. Bhattacharya et al., "Hierarchical Scheduling for Diverse Datacenter Workloads", SoCC
2013 (the H-DRF paper) is not in ``../shared/papers``; its two examples of what goes wrong
(Section 3, "naive H-DRF" and "ignoring blocked nodes") are reconstructed from the paper's
restatement in Volcano's design document (``docs/design/hdrf.md`` of volcano-sh/volcano, which
gives the trees, the demands and the outcome in words) and the capacities of Volcano's tests of
those examples (``pkg/scheduler/plugins/drf/hdrf_test.go``). The paper's figure and example
numbers could not be read (``docs/hdrf.md``, "What could be confirmed"), so every entry names the
document it comes from and whether the number is the source's (``kind="paper"``: stated in
words there) or fairsim's own computation on that instance (``kind="consistency"``).

Each :class:`Example` is a ``fairsim solve`` instance (queues included) and a list of
:class:`Expectation` records: which mechanism or variant, from which starting allocation, and
the tasks every user gets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Expectation:
    """The tasks of every user under one mechanism or variant on an :class:`Example`.

    Attributes
    ----------
    id : str
        Stable, unique among the examples.
    variant : str
        ``"hdrf"`` (``fairsim solve hdrf``), ``"drf"``, ``"collapsed"``
        (:func:`~fairsim.schedulers.exact.hdrf.solve_collapsed`), ``"naive"``
        (:func:`~fairsim.schedulers.exact.hdrf.solve_naive`) or ``"rescale-all"`` (rescaling to the
        smallest level of all children, blocked ones included: only in the stepped reference of
        the tests, ``tests/hdrf_reference.py``).
    tasks : dict
        ``{user: tasks}``.
    statement : str
        What the numbers show, in words.
    kind : str
        ``"paper"`` when the source states the outcome, ``"consistency"`` for fairsim's own
        computation on the source's instance.
    start : dict, optional
        ``{user: tasks}`` held before the mechanism fills the rest (the paper's dynamic setting:
        tasks that finished freed their resources), ``None`` for a static solve.
    """

    id: str
    variant: str
    tasks: dict[str, float]
    statement: str
    kind: str
    start: dict[str, float] | None = None


@dataclass(frozen=True)
class Example:
    """One worked example: its instance, where it comes from and what each mechanism gives."""

    name: str
    source: str
    instance: dict[str, Any]
    expected: list[Expectation] = field(default_factory=list)


#: The paper's first example (Section 3, rescaling; Volcano docs/design/hdrf.md, first tree):
#: ``n1`` (weight 50 %) runs GPU tasks, ``n2`` (50 %) has ``n2,1`` on CPUs and ``n2,2`` on GPUs.
#: Capacities 10 CPUs and 10 GPUs (Volcano's "(10,0) * (0.5/1) = (5,0)").
COMPLEMENTARY = Example(
    name="complementary demands (rescaling)",
    source="H-DRF paper Section 3 (naive H-DRF, rescaling), as restated in Volcano "
    "docs/design/hdrf.md",
    instance={
        "resources": ["cpu", "gpu"],
        "servers": [{"id": "cluster", "capacity": [10, 10]}],
        "queues": [{"id": "n1", "weight": 1}, {"id": "n2", "weight": 1}],
        "users": [
            {"id": "n1-jobs", "demand": [0, 1], "queue": "n1"},
            {"id": "n2,1", "demand": [1, 0], "queue": "n2"},
            {"id": "n2,2", "demand": [0, 1], "queue": "n2"},
        ],
    },
    expected=[
        Expectation(
            "complementary-hdrf",
            "hdrf",
            {"n1-jobs": 5.0, "n2,1": 10.0, "n2,2": 5.0},
            "n1 and n2 split the GPUs equally and n2,1 takes every CPU: n2's share is 50 % "
            "with n2,1 rescaled to (5, 0), the desired state",
            "paper",
        ),
        Expectation(
            "complementary-naive-starves",
            "naive",
            {"n1-jobs": 10.0, "n2,1": 10.0, "n2,2": 0.0},
            "after n2,2's tasks finish (n2,1 holds every CPU), naive H-DRF counts n2 at 100 % "
            "and hands every freed GPU to n1: n2,2 starves",
            "paper",
            start={"n1-jobs": 5.0, "n2,1": 10.0, "n2,2": 0.0},
        ),
        Expectation(
            "complementary-hdrf-refills",
            "hdrf",
            {"n1-jobs": 5.0, "n2,1": 10.0, "n2,2": 5.0},
            "from the same state H-DRF rescales n2,1 to the smallest non-blocked level and "
            "gives the freed GPUs back to n2,2",
            "paper",
            start={"n1-jobs": 5.0, "n2,1": 10.0, "n2,2": 0.0},
        ),
        Expectation(
            "complementary-naive-static",
            "naive",
            {"n1-jobs": 5.0, "n2,1": 10.0, "n2,2": 5.0},
            "filled from an empty cluster, naive H-DRF gives the same allocation: its failure "
            "is in the dynamic setting",
            "consistency",
        ),
        Expectation(
            "complementary-collapsed",
            "collapsed",
            {"n1-jobs": 20 / 3, "n2,1": 10.0, "n2,2": 10 / 3},
            "collapsed into weights 1/2, 1/4, 1/4, DRF gives n1 two thirds of the GPUs and "
            "n2,2 one third, as if n2,1 competed for them",
            "consistency",
        ),
    ],
)

#: The paper's second example (Section 3, ignoring blocked nodes; Volcano docs/design/hdrf.md,
#: second tree): n1, n2 on CPUs, n3 with n3,1 on CPUs and n3,2 on GPUs, n4 on GPUs, equal
#: weights. Capacities 30 CPUs and 30 GPUs (Volcano's test of this tree).
BLOCKING = Example(
    name="blocked nodes",
    source="H-DRF paper Section 3 (ignoring blocked nodes), as restated in Volcano "
    "docs/design/hdrf.md; capacities of Volcano's pkg/scheduler/plugins/drf/hdrf_test.go",
    instance={
        "resources": ["cpu", "gpu"],
        "servers": [{"id": "cluster", "capacity": [30, 30]}],
        "queues": [{"id": "n3", "weight": 1}],
        "users": [
            {"id": "n1", "demand": [1, 0]},
            {"id": "n2", "demand": [1, 0]},
            {"id": "n3,1", "demand": [1, 0], "queue": "n3"},
            {"id": "n3,2", "demand": [0, 1], "queue": "n3"},
            {"id": "n4", "demand": [0, 1]},
        ],
    },
    expected=[
        Expectation(
            "blocking-hdrf",
            "hdrf",
            {"n1": 10.0, "n2": 10.0, "n3,1": 10.0, "n3,2": 15.0, "n4": 15.0},
            "every leaf gets a third of its dominant resource until the CPUs run out; then "
            "n3,2 and n4 split the remaining GPUs equally",
            "paper",
        ),
        Expectation(
            "blocking-rescale-all",
            "rescale-all",
            {"n1": 10.0, "n2": 10.0, "n3,1": 10.0, "n3,2": 20.0, "n4": 10.0},
            "rescaling to the minimum of all children, the blocked n3,1 included, keeps n3 at "
            "1/3: n3,2 takes every remaining GPU, 2/3 of them, and n4 keeps 1/3",
            "paper",
        ),
        Expectation(
            "blocking-collapsed",
            "collapsed",
            {"n1": 12.0, "n2": 12.0, "n3,1": 6.0, "n3,2": 10.0, "n4": 20.0},
            "collapsed into weights 1/4, 1/4, 1/8, 1/8, 1/4, DRF gives n3,1 6 CPUs and n3,2 10 "
            "GPUs while n4, of the same weight as n3, gets 20 GPUs",
            "consistency",
        ),
    ],
)

#: A single-resource tree in which collapsing the hierarchy breaks the hierarchical share
#: guarantee: 480 slots, A (weight 1) with a1 (at most 48 tasks) and a2, B (weight 1) with b1.
#: fairsim's own example, in the spirit of the paper's Section 2 (a node's unused share goes to
#: its siblings first); the paper's own figure (480 servers) could not be read.
SINGLE_RESOURCE = Example(
    name="one resource, a capped user",
    source="fairsim (the hierarchical share guarantee of the H-DRF paper Section 2 on one "
    "resource)",
    instance={
        "resources": ["slots"],
        "servers": [{"id": "cluster", "capacity": [480]}],
        "queues": [{"id": "A", "weight": 1}, {"id": "B", "weight": 1}],
        "users": [
            {"id": "a1", "demand": [1], "queue": "A", "max_tasks": 48},
            {"id": "a2", "demand": [1], "queue": "A"},
            {"id": "b1", "demand": [1], "queue": "B"},
        ],
    },
    expected=[
        Expectation(
            "single-resource-hdrf",
            "hdrf",
            {"a1": 48.0, "a2": 192.0, "b1": 240.0},
            "A keeps half of the slots: what a1 does not use goes to its sibling a2",
            "consistency",
        ),
        Expectation(
            "single-resource-collapsed",
            "collapsed",
            {"a1": 48.0, "a2": 144.0, "b1": 288.0},
            "collapsed into weights 1/4, 1/4, 1/2, a1's unused slots go to a2 and b1 by "
            "weight: A holds 192 of 480, below its guaranteed half",
            "consistency",
        ),
    ],
)

#: A one-level tree is DRF: Ghodsi et al. (NSDI 2011) Section 4, <9 CPU, 18 GB>, A <1, 4>, B <3, 1>.
ONE_LEVEL = Example(
    name="one level is DRF",
    source="DRF paper (Ghodsi et al., NSDI 2011) Section 4",
    instance={
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s", "capacity": [9, 18]}],
        "users": [{"id": "A", "demand": [1, 4]}, {"id": "B", "demand": [3, 1]}],
    },
    expected=[
        Expectation(
            "one-level-hdrf",
            "hdrf",
            {"A": 3.0, "B": 2.0},
            "without queues H-DRF is DRF: A runs 3 tasks and B 2",
            "paper",
        ),
    ],
)

#: Volcano's test of a three-level tree (not the paper's): sci (weight 50) with <1 CPU, 1 GB>
#: tasks, eng (50) with dev <1 CPU> and prod <1 GB> (50 each), ten tasks each, on <10, 10>.
VOLCANO_RESCALING = Example(
    name="three levels (Volcano's rescaling test)",
    source="volcano-sh/volcano pkg/scheduler/plugins/drf/hdrf_test.go, 'rescaling test' (not "
    "the paper)",
    instance={
        "resources": ["cpu", "mem"],
        "servers": [{"id": "n", "capacity": [10, 10]}],
        "queues": [
            {"id": "sci", "weight": 50},
            {"id": "eng", "weight": 50},
            {"id": "dev", "parent": "eng", "weight": 50},
            {"id": "prod", "parent": "eng", "weight": 50},
        ],
        "users": [
            {"id": "pg1", "demand": [1, 1], "queue": "sci", "max_tasks": 10},
            {"id": "pg21", "demand": [1, 0], "queue": "dev", "max_tasks": 10},
            {"id": "pg22", "demand": [0, 1], "queue": "prod", "max_tasks": 10},
        ],
    },
    expected=[
        Expectation(
            "volcano-rescaling-hdrf",
            "hdrf",
            {"pg1": 5.0, "pg21": 5.0, "pg22": 5.0},
            "sci and eng each hold half of both resources, eng's split between dev and prod",
            "consistency",
        ),
    ],
)

#: Every example, the paper's first.
EXAMPLES: tuple[Example, ...] = (
    COMPLEMENTARY,
    BLOCKING,
    SINGLE_RESOURCE,
    ONE_LEVEL,
    VOLCANO_RESCALING,
)
