"""Fairness-property table of the exact mechanisms (PS-DSF paper, Table I style).

``python -m fairsim.experiments.scenario.fairness_properties [--mechanism M ...] [--instances N]
[--seed S] [--json]
[--out DIR]`` checks every property of :mod:`fairsim.schedulers.exact.properties` on the papers'
example
instances followed by random heterogeneous instances with placement constraints, prints
"violations / instances checked" per mechanism and property, and writes one counterexample
instance per violated property to ``DIR/<mechanism>--<property>.json`` (replayable with
``fairsim solve``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from fairsim.atomic import atomic_dir, check_output_dir, json_text, write_text
from fairsim.experiments.argtypes import int_at_least
from fairsim.schedulers.exact import EXACT
from fairsim.schedulers.exact.properties import PROPERTIES, Unverifiable, check, instance_data
from fairsim.schedulers.instance import parse_instance

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


def random_instance(
    rng: np.random.Generator, k: int, *, constrained: bool = True, positive: bool = False
) -> dict[str, Any]:
    """A small heterogeneous instance (2-4 users, 1-3 servers).

    ``constrained``: some users restricted to servers, some servers lacking a resource;
    ``positive``: every demand entry positive (the setting of several theorems).
    """
    n_r = int(rng.integers(2, 4))
    n_s = int(rng.integers(1, 4))
    n_u = int(rng.integers(2, 5))
    servers = [
        {"id": f"s{j}", "capacity": rng.integers(1, 13, n_r).astype(float).tolist()}
        for j in range(n_s)
    ]
    if (
        constrained and rng.random() < 0.3 and n_s > 1
    ):  # a server lacking a resource, as in PS-DSF Fig. 1
        servers[-1]["capacity"][int(rng.integers(n_r))] = 0.0
    users = []
    for i in range(n_u):
        d = rng.integers(1 if positive else 0, 5, n_r).astype(float)
        if not d.any():
            d[int(rng.integers(n_r))] = 1.0
        u: dict[str, Any] = {"id": f"u{i}", "demand": d.tolist()}
        if rng.random() < 0.3:
            u["weight"] = int(rng.integers(1, 4))
        if constrained and rng.random() < 0.4 and n_s > 1:
            keep = rng.random(n_s) < 0.6
            keep[int(rng.integers(n_s))] = True
            u["eligible"] = [s["id"] for s, kk in zip(servers, keep, strict=True) if kk]
        users.append(u)
    return {"resources": [f"r{j}" for j in range(n_r)], "servers": servers, "users": users}


def run(
    mechanisms: list[str],
    n_instances: int,
    seed: int,
    out: Path | None,
    *,
    constrained: bool = True,
    positive: bool = False,
) -> dict:
    """Check every mechanism on the literature instances plus random ones.

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
        from 0, the papers' instances first; ``file`` is ``None`` without ``out``.
    """
    rng = np.random.default_rng(seed)
    lit = LITERATURE if constrained and not positive else []
    datas = lit[:n_instances] + [
        random_instance(rng, k, constrained=constrained, positive=positive)
        for k in range(max(0, n_instances - len(lit)))
    ]
    table: dict[str, dict[str, Any]] = {
        m: {**{p: {"checked": 0, "violations": 0} for p in PROPERTIES}, "unverifiable": []}
        for m in mechanisms
    }
    saved: set[tuple[str, str]] = set()
    for k, data in enumerate(datas):
        inst = parse_instance(data)
        for m in mechanisms:
            try:
                res = check(m, inst, np.random.default_rng(rng.integers(2**32)))
            except Unverifiable as exc:
                name = None
                if out is not None:
                    name = f"{m}--unverifiable-{k}.json"
                    write_text(out / name, json_text(instance_data(exc.instance), indent=1) + "\n")
                table[m]["unverifiable"].append(
                    {"instance": k, "step": exc.step, "reason": exc.reason, "file": name}
                )
                continue
            for p, ok in res.items():
                if ok is None:
                    continue
                table[m][p]["checked"] += 1
                if not ok:
                    table[m][p]["violations"] += 1
                    if out is not None and (m, p) not in saved:
                        write_text(
                            out / f"{m}--{p}.json",
                            json_text(data, indent=1, sort_keys=False) + "\n",
                        )
                        saved.add((m, p))
    return table


def format_table(table: dict) -> str:
    """Markdown table (violations / checked, and the unverifiable instances per mechanism),
    followed by one line per unverifiable instance with its reason."""
    props = list(PROPERTIES)
    lines = [
        "| mechanism | " + " | ".join(props) + " | unverifiable |",
        "|---" * (len(props) + 2) + "|",
    ]
    for m, row in table.items():
        cells = [f"{row[p]['violations']}/{row[p]['checked']}" for p in props]
        lines.append(f"| `{m}` | " + " | ".join(cells) + f" | {len(row['unverifiable'])} |")
    missing = [(m, u) for m, row in table.items() for u in row["unverifiable"]]
    if missing:
        lines.append("")
        lines.append("Unverifiable (left out of the counts above):")
        lines += [
            f"- `{m}`, instance {u['instance']}, {u['step']}: {u['reason']} ({u['file']})"
            for m, u in missing
        ]
    return "\n".join(lines) + "\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``fairsim properties`` (also ``python -m
    fairsim.experiments.scenario.fairness_properties``)."""
    p.add_argument(
        "--mechanism",
        action="append",
        choices=sorted([*EXACT, "psdsf-tdm"]),
        metavar="M",
        help="a mechanism to check (repeatable; default: all): %(choices)s",
    )
    p.add_argument(
        "--instances",
        type=int_at_least(1),
        default=150,
        metavar="N",
        help="instances to check, >= 1 (the papers' instances first; default 150)",
    )
    p.add_argument(
        "--seed", type=int_at_least(0), default=1, metavar="S", help="random seed (>= 0)"
    )
    p.add_argument("--json", action="store_true", help="print the table as JSON")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="folder of the table, the counterexamples and the unverifiable instances (default "
        "results/properties, replaced by each run); a DIR given here is refused if it exists "
        "and is not empty, unless --overwrite",
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    p.add_argument("--unconstrained", action="store_true", help="no placement constraints")
    p.add_argument("--positive", action="store_true", help="every demand entry positive")


def run_from_args(a: argparse.Namespace) -> int:
    """Run the checker with parsed options, write the table (``table.md``, ``table.json``) and the
    counterexamples into ``a.out`` atomically (:func:`fairsim.atomic.atomic_dir`) and print the
    table (or JSON).

    Without ``--out`` the folder is ``results/properties`` and each run replaces it (a rerun
    never fails on the previous output); a folder given with ``--out`` is refused when it exists
    and is not empty, unless ``--overwrite``.

    Returns
    -------
    int
        The exit status: 0 when every property held on every instance; plus 1 when some property
        was violated, plus 4 when some instance could not be verified (so 1, 4 or 5).
    """
    mechs = a.mechanism or [*EXACT, "psdsf-tdm"]
    out = a.out if a.out is not None else "results/properties"
    overwrite = a.out is None or bool(getattr(a, "overwrite", False))
    check_output_dir(out, overwrite=overwrite)  # before any work
    with atomic_dir(out, overwrite=overwrite) as tmp:
        table = run(
            mechs,
            a.instances,
            a.seed,
            tmp,
            constrained=not a.unconstrained,
            positive=a.positive,
        )
        write_text(tmp / "table.md", format_table(table))
        write_text(tmp / "table.json", json_text(table) + "\n")
    sys.stdout.write(json_text(table, indent=None) + "\n" if a.json else format_table(table))
    violated = any(row[p]["violations"] for row in table.values() for p in PROPERTIES)
    unverifiable = any(row["unverifiable"] for row in table.values())
    return (1 if violated else 0) | (4 if unverifiable else 0)


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m fairsim.experiments.scenario.fairness_properties``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(p)
    return run_from_args(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
