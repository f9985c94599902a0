"""The message for an unknown scheduler name: the mechanism of ``fairsim solve`` it may be, the
registered names it is part of, else the closest registered name."""

from __future__ import annotations

import pytest

from fairsim.errors import ConfigError
from fairsim.schedulers.registry import available, make_scheduler

KNOWN = (
    f" (known: {', '.join(available(plugins=False))}; a class of your own: 'module:Class', from "
    "an installed module or a file in the working directory, or an entry point of the group "
    "'fairsim.schedulers')"
)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "drfh",
            "unknown scheduler 'drfh' (it is an exact mechanism of 'fairsim solve', which "
            "allocates a static instance, not an online scheduler); did you mean 'ff-drfh', "
            "'bf-drfh' or 'c-drfh'?",
        ),
        ("lock", "unknown scheduler 'lock'; did you mean 'drf-lockstep'?"),
        ("slot", "unknown scheduler 'slot'; did you mean 'slots-<S>'?"),
        ("bf-drf", "unknown scheduler 'bf-drf'; did you mean 'bf-drfh'?"),
        ("udrff", "unknown scheduler 'udrff'; did you mean 'udrf'?"),
        ("x", "unknown scheduler 'x'"),
    ],
)
def test_unknown_scheduler_message(name: str, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        make_scheduler(name)
    assert str(err.value) == message + KNOWN


def test_drfh_never_suggests_drf_alone() -> None:
    """The issue's message was "did you mean 'drf'?": DRF is not DRFH."""
    with pytest.raises(ConfigError, match=r"did you mean 'ff-drfh', 'bf-drfh'") as err:
        make_scheduler("drfh")
    assert "'drf'?" not in str(err.value)
