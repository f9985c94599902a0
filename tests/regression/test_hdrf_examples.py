"""The worked examples of hierarchical DRF (``schedulers/exact/hdrf_examples.py``): the paper's
two examples of what goes wrong, as Volcano's design document restates them, with every
mechanism's numbers; the one-level tree is DRF."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hdrf_reference import stepped_hdrf

import fairsim
from fairsim.schedulers.exact.hdrf import refill, solve_collapsed, solve_naive
from fairsim.schedulers.exact.hdrf_examples import EXAMPLES, SINGLE_RESOURCE, Example, Expectation
from fairsim.schedulers.exact.hierarchy_properties import HIER_PROPERTIES
from fairsim.schedulers.exact.instance import parse_instance
from fairsim.schedulers.exact.property_table import property_table

CASES = [(ex, exp) for ex in EXAMPLES for exp in ex.expected]


def _allocate(ex: Example, exp: Expectation) -> np.ndarray:
    inst = parse_instance(ex.instance)
    users = list(inst.user_ids)
    if exp.start is not None:
        start = np.array([exp.start[u] for u in users])
        return refill(inst, start, exp.variant)[:, 0]
    if exp.variant in ("hdrf", "drf"):
        data = dict(ex.instance)
        if exp.variant == "drf":
            data.pop("queues", None)
        out = fairsim.solve(data, exp.variant)
        return np.array(out["tasks"])[:, 0]
    if exp.variant == "collapsed":
        return solve_collapsed(inst)[:, 0]
    if exp.variant == "naive":
        return solve_naive(inst)[:, 0]
    assert exp.variant == "rescale-all"
    return stepped_hdrf(ex.instance, rescale="all", eps=1e-3)


@pytest.mark.parametrize(("ex", "exp"), CASES, ids=[e.id for _, e in CASES])
def test_example(ex: Example, exp: Expectation) -> None:
    x = _allocate(ex, exp)
    want = [exp.tasks[u["id"]] for u in ex.instance["users"]]
    # the stepped reference moves in steps of 1e-3 of a dominant share (0.03 tasks here)
    tol = 0.05 if exp.variant == "rescale-all" else 1e-9
    np.testing.assert_allclose(x, want, rtol=tol, atol=tol)


def test_ids_are_unique_and_kinds_known() -> None:
    ids = [e.id for _, e in CASES]
    assert len(ids) == len(set(ids))
    assert {e.kind for _, e in CASES} <= {"paper", "consistency"}


def test_the_stepped_paper_descent_agrees_on_every_static_example() -> None:
    for ex, exp in CASES:
        if exp.start is None and exp.variant in ("hdrf", "naive"):
            kw = {} if exp.variant == "hdrf" else {"rescale": None, "ignore_saturated": False}
            y = stepped_hdrf(ex.instance, eps=1e-3, **kw)
            want = [exp.tasks[u["id"]] for u in ex.instance["users"]]
            np.testing.assert_allclose(y, want, rtol=0.01, atol=0.05)


def test_cli_answers_the_first_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fairsim.cli import main

    f = tmp_path / "complementary.json"
    f.write_text(json.dumps(EXAMPLES[0].instance))
    assert main(["solve", "hdrf", str(f)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["servers"] == ["pool"]
    assert out["tasks"] == [[5.0], [10.0], [5.0]]
    assert out["dominant_shares"] == [0.5, 1.0, 0.5]


def test_the_property_table_of_docs_hdrf() -> None:
    """``fairsim properties --mechanism hdrf --instances 150 --seed 1``, as docs/hdrf.md shows
    it: H-DRF keeps the hierarchical share guarantee before and after departures, collapsing the
    hierarchy breaks it (first on the one-resource example), naive H-DRF starves users once tasks
    finish."""
    table = property_table(["hdrf"], 150, 1, None)
    cells = {
        m: {p: f"{row[p]['violations']}/{row[p]['checked']}" for p in HIER_PROPERTIES}
        for m, row in table.items()
    }
    assert cells == {
        "hdrf": dict(zip(HIER_PROPERTIES, SHOWN["hdrf"], strict=True)),
        "hdrf-collapsed": dict(zip(HIER_PROPERTIES, SHOWN["hdrf-collapsed"], strict=True)),
        "hdrf-naive": dict(zip(HIER_PROPERTIES, SHOWN["hdrf-naive"], strict=True)),
    }
    assert all(row["unverifiable"] == [] for row in table.values())


#: The table of docs/hdrf.md ("What the property checker shows"), in HIER_PROPERTIES' order.
SHOWN = {
    "hdrf": ("0/150", "0/150", "0/150", "0/150", "11/150", "59/150", "65/150"),
    "hdrf-collapsed": ("11/150", "11/150", "0/150", "0/150", "18/150", "63/150", "68/150"),
    "hdrf-naive": ("0/150", "3/150", "0/150", "0/150", "11/150", "59/150", "65/150"),
}


def test_adding_hdrf_leaves_the_flat_rows_and_reads_one_instance_with_queues(
    tmp_path: Path,
) -> None:
    assert (
        property_table(["drf", "hdrf"], 12, 3, None)["drf"]
        == property_table(["drf"], 12, 3, None)["drf"]
    )
    one = property_table(["drf", "hdrf"], 1, 1, tmp_path, instances=[SINGLE_RESOURCE.instance])
    # drf allocates the same users without the tree; hdrf-collapsed breaks A's guarantee
    assert one["drf"]["pareto-optimality"] == {"checked": 1, "violations": 0}
    assert one["hdrf"]["hierarchical-share-guarantee"] == {"checked": 1, "violations": 0}
    assert one["hdrf-collapsed"]["hierarchical-share-guarantee"] == {"checked": 1, "violations": 1}
    saved = json.loads((tmp_path / "hdrf-collapsed--hierarchical-share-guarantee.json").read_text())
    assert saved["violation"]["nodes"] == [{"node": "A", "share": 0.4, "guaranteed_share": 0.5}]
    assert fairsim.solve(saved, "hdrf")["tasks"] == [[48.0], [192.0], [240.0]]  # replays
