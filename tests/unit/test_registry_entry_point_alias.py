"""An installed entry point cannot take a name that a built-in answers to: a short name of a
built-in's alias (``slots-14``, ``udrf-backfill``) or a built-in's name in another case
(``DRF``). Before, the plug-in's class silently replaced the built-in for that name (a config
saying ``slots-14`` ran the plug-in); now it is refused, as :func:`fairsim.register_scheduler`
refuses those names, and the listing leaves it out."""

from __future__ import annotations

import importlib.metadata

import pytest

from fairsim.errors import RegistryError
from fairsim.schedulers import registry
from fairsim.schedulers.slots import Slots


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("slots-14", "a short name of fairsim's built-in 'slots'"),
        ("udrf-backfill", "a short name of fairsim's built-in 'udrf'"),
        ("DRF", "differs only by case from fairsim's built-in 'drf'"),
    ],
)
def test_entry_point_named_like_a_builtin_is_refused(
    monkeypatch: pytest.MonkeyPatch, name: str, why: str
) -> None:
    ep = importlib.metadata.EntryPoint(
        name=name, value="my_package.mine:Mine", group=registry.ENTRY_POINT_GROUP
    )
    monkeypatch.setattr(registry, "_entry_points", lambda: {name: [ep]})
    with pytest.raises(
        RegistryError, match=rf"^scheduler '{name}': the entry point .* is refused: "
    ):
        registry.resolve(name)
    with pytest.raises(RegistryError, match=why):
        registry.resolve(name)
    # not listed as a plug-in (``udrf-backfill`` stays listed once, as the built-in's form)
    assert all(r.entry_point is None for r in registry.registrations())
    assert registry.available().count(name) == registry.available(plugins=False).count(name)


def test_builtin_alias_still_resolves_without_a_clashing_entry_point() -> None:
    spec = registry.resolve("slots-14")
    assert spec.cls is Slots and spec.params == {"slots": 14}
