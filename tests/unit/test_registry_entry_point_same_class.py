"""A scheduler that its distribution both decorates with ``@fairsim.register_scheduler`` and
ships as an entry point of the same name (as docs/write-a-scheduler.md shows) is one
registration; an entry point of that name naming another class is still a conflict."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator

import pytest

import fairsim
from fairsim.errors import RegistryError
from fairsim.schedulers import registry
from fairsim.schedulers.drfh import BestFitDRFH, FirstFitDRFH


class Shipped(FirstFitDRFH):
    """The plug-in's class (First-Fit DRFH under another name)."""


def _fake_entry_points(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> importlib.metadata.EntryPoint:
    ep = importlib.metadata.EntryPoint(name=name, value=value, group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "_entry_points", lambda: {name: [ep]})
    return ep


@pytest.fixture
def clean() -> Iterator[None]:
    yield
    registry._LOADED.pop("sdsf-bf", None)
    registry._REGISTERED.pop("sdsf-bf", None)


@pytest.mark.usefixtures("clean")
def test_same_class_under_its_entry_point_is_one_registration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_entry_points(monkeypatch, "sdsf-bf", f"{__name__}:Shipped")
    assert fairsim.register_scheduler("sdsf-bf")(Shipped) is Shipped
    assert registry.available().count("sdsf-bf") == 1
    assert [r.name for r in registry.registrations()].count("sdsf-bf") == 1
    assert registry.resolve("sdsf-bf").cls is Shipped  # not "defined twice"
    assert registry.resolve("sdsf-bf").label == "sdsf-bf"
    assert fairsim.register_scheduler("sdsf-bf")(Shipped) is Shipped  # module imported again


@pytest.mark.usefixtures("clean")
def test_entry_point_naming_a_reexport_of_the_class_is_the_same(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``fairsim.schedulers.drfh:BestFitDRFH`` reached through another imported module."""
    _fake_entry_points(monkeypatch, "sdsf-bf", "fairsim.schedulers.registry:BestFitDRFH")
    assert fairsim.register_scheduler("sdsf-bf")(BestFitDRFH) is BestFitDRFH
    assert registry.resolve("sdsf-bf").cls is BestFitDRFH


@pytest.mark.usefixtures("clean")
def test_entry_point_naming_another_class_is_still_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_entry_points(monkeypatch, "sdsf-bf", "my_package.sdsf:SmallestDominantShareBestFit")
    with pytest.raises(
        RegistryError,
        match=r"^register_scheduler\('sdsf-bf'\): the name is taken by the entry point "
        r"'sdsf-bf = my_package.sdsf:SmallestDominantShareBestFit' of distribution '\?'$",
    ):
        fairsim.register_scheduler("sdsf-bf")(Shipped)
    assert "sdsf-bf" not in registry._REGISTERED
    assert "sdsf-bf" not in registry._LOADED
