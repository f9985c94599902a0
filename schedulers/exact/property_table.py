"""The fairness-property table of the exact mechanisms (PS-DSF paper, Table I style), as
``fairsim properties`` prints it.

:func:`property_table` checks every property of :mod:`fairsim.schedulers.exact.properties` on the
papers' example instances (:data:`LITERATURE`) followed by random heterogeneous instances with
placement constraints (:func:`random_instance`), and counts "violations / instances checked" per
mechanism and property; with an output folder it writes one counterexample instance per violated
property to ``<mechanism>--<property>.json`` (replayable with ``fairsim solve``). An instance
that cannot be verified is counted apart with its reason, and the run goes on.
:func:`format_table` prints the table in Markdown.

``hdrf``, the hierarchical mechanism, is checked on instances with queue trees instead, with the
properties of :mod:`fairsim.schedulers.exact.hierarchy_properties` and the paper's two wrong
variants beside it (rows ``hdrf-collapsed`` and ``hdrf-naive``), from draws of its own: the flat
rows do not move when it is added.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fairsim.schedulers.exact import HIERARCHICAL
from fairsim.schedulers.exact.hierarchy_properties import (
    HIER_PROPERTIES,
    describe_hierarchy,
    hierarchy_table,
)
from fairsim.schedulers.exact.properties import (
    PROPERTIES,
    check_with_evidence,
    property_rows,
)

#: The papers' instances that carry known violations, checked first.
LITERATURE: list[dict[str, Any]] = [
    {  # PS-DSF Fig. 1: C-DRFH and TSF break bottleneck fairness
        "resources": ["cpu", "mem", "bw"],
        "servers": [{"id": "s1", "capacity": [9, 12, 100]}, {"id": "s2", "capacity": [12, 12, 0]}],
        "users": [
            {"id": "u1", "demand": [1, 2, 10]},
            {"id": "u2", "demand": [1, 2, 1]},
            {"id": "u3", "demand": [1, 2, 0], "weight": 2},
        ],
    },
    {  # Bonald-Roberts 2.3: PF is not strategy-proof
        "resources": ["r1", "r2"],
        "servers": [{"id": "s", "capacity": [1, 1]}],
        "users": [{"id": "1", "demand": [0.5, 1]}, {"id": "2", "demand": [1, 0.5]}],
    },
    {  # AF breaks sharing incentive: <30, 30>, <1, 3>, <1, 1>
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s", "capacity": [30, 30]}],
        "users": [{"id": "1", "demand": [1, 3]}, {"id": "2", "demand": [1, 1]}],
    },
    {  # DRFH Fig. 1
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s1", "capacity": [2, 12]}, {"id": "s2", "capacity": [12, 2]}],
        "users": [{"id": "u1", "demand": [0.2, 1]}, {"id": "u2", "demand": [1, 0.2]}],
    },
]


#: What the papers' instances are (:data:`LITERATURE`, in order).
LITERATURE_NAMES = (
    "PS-DSF Fig. 1",
    "Bonald-Roberts Section 2.3",
    "AF's sharing-incentive counterexample",
    "DRFH Fig. 1",
)
#: Ranges (inclusive) and probabilities of :func:`random_instance`.
USERS = (2, 4)
SERVERS = (1, 3)
RESOURCES = (2, 3)
CAPACITY = (1, 12)  # integer units per resource
DEMAND = (0, 4)  # integer units per resource; 1-4 with ``positive``
WEIGHTS = (1, 3)  # integer weights, drawn for a user with probability WEIGHT_P (else 1)
WEIGHT_P = 0.3
ELIGIBLE_P = 0.4  # a user restricted to some servers (``constrained``, several servers)
KEEP_P = 0.6  # each server kept in a restricted user's ``eligible`` (one always kept)
LACKING_P = 0.3  # an instance whose last server lacks one resource (``constrained``)


def random_instance(
    rng: np.random.Generator, k: int, *, constrained: bool = True, positive: bool = False
) -> dict[str, Any]:
    """A small heterogeneous instance (2-4 users, 1-3 servers; :func:`describe_instances`).

    ``constrained``: some users restricted to servers, some servers lacking a resource;
    ``positive``: every demand entry positive (the setting of several theorems).
    """
    n_r = int(rng.integers(RESOURCES[0], RESOURCES[1] + 1))
    n_s = int(rng.integers(SERVERS[0], SERVERS[1] + 1))
    n_u = int(rng.integers(USERS[0], USERS[1] + 1))
    servers = [
        {
            "id": f"s{j}",
            "capacity": rng.integers(CAPACITY[0], CAPACITY[1] + 1, n_r).astype(float).tolist(),
        }
        for j in range(n_s)
    ]
    if (
        constrained and rng.random() < LACKING_P and n_s > 1
    ):  # a server lacking a resource, as in PS-DSF Fig. 1
        servers[-1]["capacity"][int(rng.integers(n_r))] = 0.0
    users = []
    for i in range(n_u):
        d = rng.integers(max(1, DEMAND[0]) if positive else DEMAND[0], DEMAND[1] + 1, n_r)
        d = d.astype(float)
        if not d.any():
            d[int(rng.integers(n_r))] = 1.0
        u: dict[str, Any] = {"id": f"u{i}", "demand": d.tolist()}
        if rng.random() < WEIGHT_P:
            u["weight"] = int(rng.integers(WEIGHTS[0], WEIGHTS[1] + 1))
        if constrained and rng.random() < ELIGIBLE_P and n_s > 1:
            keep = rng.random(n_s) < KEEP_P
            keep[int(rng.integers(n_s))] = True
            u["eligible"] = [s["id"] for s, kk in zip(servers, keep, strict=True) if kk]
        users.append(u)
    return {"resources": [f"r{j}" for j in range(n_r)], "servers": servers, "users": users}


def describe_instances(
    n_instances: int,
    seed: int,
    *,
    constrained: bool = True,
    positive: bool = False,
    instance: str | None = None,
) -> str:
    """What :func:`property_table` checks, in words (``fairsim properties`` prints it).

    Parameters
    ----------
    n_instances, seed, constrained, positive
        As for :func:`property_table`.
    instance : str, optional
        The file of ``fairsim properties --instance`` (then the only instance).

    Returns
    -------
    str
        One paragraph, no trailing newline.
    """
    if instance is not None:
        return (
            f"1 instance: {instance} (the misreports and the leaving user drawn with seed {seed})."
        )
    lit = LITERATURE_NAMES[:n_instances] if constrained and not positive else ()
    n_random = max(0, n_instances - len(lit))
    parts = [f"{n_instances} instance{'s' if n_instances > 1 else ''}"]
    if lit:
        parts.append(f": the papers' {len(lit)} ({', '.join(lit)})")
        if n_random:
            parts.append(f", then {n_random} random ones")
    elif n_random:
        parts.append(", all random")
    text = "".join(parts)
    if not n_random:
        return text + "."
    lo = max(1, DEMAND[0]) if positive else DEMAND[0]
    text += (
        f" (seed {seed}): {USERS[0]}-{USERS[1]} users, {SERVERS[0]}-{SERVERS[1]} servers, "
        f"{RESOURCES[0]}-{RESOURCES[1]} resources; integer capacities {CAPACITY[0]}-"
        f"{CAPACITY[1]} and demands {lo}-{DEMAND[1]} per resource"
        + (" (a user drawing all zeros gets one unit of one)" if lo == 0 else "")
        + f"; weights {WEIGHTS[0]}-{WEIGHTS[1]} for {WEIGHT_P:.0%} of users (else 1); no "
        "max_tasks; "
    )
    if constrained:
        text += (
            f"placement constraints: {ELIGIBLE_P:.0%} of users restricted to some servers (each "
            f"kept with probability {KEEP_P:g}), and in {LACKING_P:.0%} of instances with "
            "several servers the last one lacks a resource."
        )
    else:
        text += "no placement constraints (--unconstrained)."
    return text


def property_table(
    mechanisms: list[str],
    n_instances: int,
    seed: int,
    out: Path | None,
    *,
    constrained: bool = True,
    positive: bool = False,
    instances: list[dict[str, Any]] | None = None,
) -> dict:
    """Check every mechanism on the literature instances plus random ones.

    ``instances``: check these (``fairsim solve`` input mappings, ``fairsim properties
    --instance``) instead of the literature and random ones; ``n_instances`` is then ignored and
    ``seed`` only draws the misreports and the leaving user.

    A counterexample file is the instance (replayable with ``fairsim solve``) plus a
    ``violation`` key: ``{"mechanism", "property", "instance" (its number in the run), ...}`` with
    the users involved and the amounts
    (:func:`~fairsim.schedulers.exact.properties.check_with_evidence`; for strategy-proofness the
    misreport).

    An instance on which a mechanism's properties cannot be checked
    (:class:`~fairsim.schedulers.exact.properties.Unverifiable`) is left out of that mechanism's
    counts and listed under ``"unverifiable"`` with its reason; the run goes on. With ``out``,
    the instance that failed (for a misreport, the misreported one) is written to
    ``out/<mechanism>--unverifiable-<instance>.json``, replayable with ``fairsim solve``.

    Returns
    -------
    dict
        ``{mechanism: {property: {"checked": N, "violations": K}, ..., "unverifiable": [{"instance":
        i, "step": ..., "reason": ..., "file": ...}, ...]}}``; ``i`` counts the instances of the run
        from 0, the papers' instances first; ``file`` is ``None`` without ``out``. With ``hdrf``
        among the mechanisms, its rows are those of
        :func:`~fairsim.schedulers.exact.hierarchy_properties.hierarchy_table` (``hdrf``,
        ``hdrf-collapsed``, ``hdrf-naive``), with the properties of both tables.
    """
    rng = np.random.default_rng(seed)
    lit = LITERATURE if constrained and not positive else []  # described by LITERATURE_NAMES
    hier = [m for m in mechanisms if m in HIERARCHICAL]
    mechanisms = [m for m in mechanisms if m not in HIERARCHICAL]
    if instances is not None:
        # the flat mechanisms allocate the same users without the queue tree
        datas = [
            {
                "resources": d["resources"],
                "servers": d["servers"],
                "users": [{k: v for k, v in u.items() if k != "queue"} for u in d["users"]],
            }
            for d in instances
        ]
    else:
        datas = lit[:n_instances] + [
            random_instance(rng, k, constrained=constrained, positive=positive)
            for k in range(max(0, n_instances - len(lit)))
        ]
    table = property_rows(mechanisms, PROPERTIES, datas, check_with_evidence, out, rng)
    if hier:
        kept = None
        if instances is not None:
            kept = [
                {k: v for k, v in d.items() if k in ("resources", "servers", "users", "queues")}
                for d in instances
            ]
        table.update(hierarchy_table(n_instances, seed, out, instances=kept))
    return table


def format_table(table: dict, *, given: bool = False) -> str:
    """Markdown table (violations / checked, and the unverifiable instances per mechanism),
    followed by one line per unverifiable instance with its reason; the hierarchical rows
    (``hdrf`` and its variants) in a table of their own, with a line on their instances
    (``given``: the instances were the caller's, ``fairsim properties --instance``, not the
    H-DRF examples and random trees)."""
    flat = {m: row for m, row in table.items() if HIER_PROPERTIES[0] not in row}
    hier = {m: row for m, row in table.items() if HIER_PROPERTIES[0] in row}
    lines: list[str] = []
    for rows, props in ((flat, list(PROPERTIES)), (hier, list(HIER_PROPERTIES))):
        if not rows:
            continue
        if lines:
            lines.append("")
        lines += [
            "| mechanism | " + " | ".join(props) + " | unverifiable |",
            "|---" * (len(props) + 2) + "|",
        ]
        for m, row in rows.items():
            cells = [f"{row[p]['violations']}/{row[p]['checked']}" for p in props]
            lines.append(f"| `{m}` | " + " | ".join(cells) + f" | {len(row['unverifiable'])} |")
    if hier:
        lines += ["", describe_hierarchy(hier, given=given)]
    missing = [(m, u) for m, row in table.items() for u in row["unverifiable"]]
    if missing:
        lines.append("")
        lines.append("Unverifiable (left out of the counts above):")
        lines += [
            f"- `{m}`, instance {u['instance']}, {u['step']}: {u['reason']} ({u['file']})"
            for m, u in missing
        ]
    return "\n".join(lines) + "\n"
