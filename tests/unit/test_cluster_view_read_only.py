"""A scheduler cannot write the cluster view it is given, and the engine checks each placement
against free amounts of its own (a scheduler that made ``free`` writable over-committed servers)."""

from __future__ import annotations

import numpy as np
import pytest

from fairsim.errors import PlacementError
from fairsim.simulator.cluster import ClusterState, TaskRecords
from fairsim.simulator.constraints import ConstraintIndex

REFUSED = "cannot set WRITEABLE flag to True of this array"


def _view() -> tuple[ClusterState, object]:
    state = ClusterState(np.array([[1.0, 1.0], [1.0, 1.0]]), ("cpu", "mem"))
    index = ConstraintIndex(np.array(["big", "small"], dtype=object))
    code = index.code("class=big")
    view = state.view(tasks=TaskRecords(constraint=[code]), constraints=index)
    return state, view


@pytest.mark.parametrize("name", ["free", "capacity", "total", "machine_classes"])
def test_view_arrays_cannot_be_made_writable(name: str) -> None:
    _, view = _view()
    array = getattr(view, name)
    with pytest.raises(ValueError, match=f"^{REFUSED}$"):
        array.flags.writeable = True
    assert not array.flags.writeable


def test_task_mask_cannot_be_made_writable() -> None:
    _, view = _view()
    mask = view.task_mask(0)  # type: ignore[attr-defined]
    assert mask.tolist() == [True, False]
    with pytest.raises(ValueError, match=f"^{REFUSED}$"):
        mask.flags.writeable = True
    assert view.task_mask(0).tolist() == [True, False]  # type: ignore[attr-defined]


def test_view_follows_commits_without_copying() -> None:
    state, view = _view()
    free = view.free  # type: ignore[attr-defined]
    state.commit(0, 1, (0.25, 0.5))
    assert free.tolist() == [[1.0, 1.0], [0.75, 0.5]]
    state.release(1, (0.25, 0.5))
    assert free.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert view.capacity.tolist() == [[1.0, 1.0], [1.0, 1.0]]  # type: ignore[attr-defined]
    assert view.total.tolist() == [2.0, 2.0]  # type: ignore[attr-defined]


def test_commit_checks_its_own_free_amounts_not_the_shared_array() -> None:
    state, _ = _view()
    state.commit(0, 0, (0.5, 0.5))
    state.free[:] = 1000.0  # what a scheduler that wrote through the view would leave
    with pytest.raises(PlacementError) as err:
        state.commit(1, 0, (0.75, 0.25))
    assert str(err.value) == (
        "task 1 does not fit on server 0: cpu demand 0.75 > free 0.5 (capacity 1)"
    )
    state.commit(2, 0, (0.5, 0.5))  # fits the engine's own amounts; the shared array is reset
    assert state.free[0].tolist() == [0.0, 0.0]
    assert state.used == [1.0, 1.0]
