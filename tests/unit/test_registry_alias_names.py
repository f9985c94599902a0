"""``register_scheduler`` refuses the short names of built-in aliases (``slots-14``) and names that
differ from a built-in only by case (``DRF``): they were accepted, and ``slots-14`` then resolved to
the user's class instead of the built-in Slots with 14 slots."""

from __future__ import annotations

import pytest

import fairsim
from fairsim.errors import RegistryError
from fairsim.schedulers import registry
from fairsim.schedulers.online_mechanisms import DRF
from fairsim.schedulers.slots import Slots
from fairsim.schedulers.udrf_online import UDRF

SLOTS = "fairsim's built-in 'slots' (Slots: slots-<S>, slots-<S>-single, slots-<S>-cpu)"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("slots-14", f"the name is a short name of {SLOTS}"),
        ("slots-3", f"the name is a short name of {SLOTS}"),
        ("slots-2-single", f"the name is a short name of {SLOTS}"),
        (
            "udrf-backfill",
            "the name is a short name of fairsim's built-in 'udrf' (UDRF: udrf, udrf-backfill)",
        ),
        ("SLOTS-14", f"the name is a short name (ignoring case) of {SLOTS}"),
        ("DRF", "the name differs only by case from fairsim's built-in 'drf' (DRF)"),
        (
            "Bf-DRFH",
            "the name differs only by case from fairsim's built-in 'bf-drfh' (BestFitDRFH)",
        ),
        ("drf", "the name is taken by fairsim's built-in DRF"),
    ],
)
def test_builtin_names_aliases_and_case_variants_are_refused(name: str, message: str) -> None:
    class Mine(fairsim.Scheduler):
        pass

    before = registry.available()
    with pytest.raises(RegistryError) as err:
        fairsim.register_scheduler(name)(Mine)
    assert str(err.value) == f"register_scheduler({name!r}): {message}"
    assert registry.available() == before  # slots-14 was listed twice


def test_aliases_still_resolve_to_the_builtins() -> None:
    for name in ("slots-14", "udrf-backfill", "SLOTS-14", "DRF"):
        with pytest.raises(RegistryError):
            fairsim.register_scheduler(name)(type("Mine", (fairsim.Scheduler,), {}))
    spec = registry.resolve("slots-14")
    assert (spec.cls, spec.params, spec.label) == (Slots, {"slots": 14}, "slots-14")
    spec = registry.resolve("udrf-backfill")
    assert (spec.cls, spec.params["blocked"]) == (UDRF, "backfill")
    assert registry.resolve("drf").cls is DRF


def test_a_name_that_only_starts_like_an_alias_is_accepted() -> None:
    class Mine(fairsim.Scheduler):
        pass

    try:
        assert fairsim.register_scheduler("slots-x")(Mine) is Mine
        assert registry.resolve("slots-x").cls is Mine
    finally:
        registry.unregister_scheduler("slots-x")
