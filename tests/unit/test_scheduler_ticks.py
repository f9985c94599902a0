"""A scheduler's tick period is bounded like the utilisation grid: a period of 1e-9 s over a
200 s window ran until killed (``dynamic-drf``, ``udrf``, ``drf-lockstep``, ``kueue-fair``);
it is refused before running, in one line naming the scheduler, the parameter and its value.
The period grid never returns a wake-up at or before the clock, whatever the step."""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import pytest
import yaml

from fairsim.cli import main
from fairsim.errors import ConfigError
from fairsim.scenario.config import MAX_SCHEDULER_TICKS, parse_config
from fairsim.schedulers.periodic import next_multiple_after, next_period_start
from fairsim.schedulers.registry import available, resolve
from fairsim.simulator.scheduler import Scheduler

#: Every registered scheduler that ticks and the parameter that is its period.
TICKING = [
    ("dynamic-drf", "period_s"),
    ("udrf", "period_s"),
    ("drf-lockstep", "period_s"),
    ("kueue-fair", "cycle_s"),
    ("psdsf", "period_s"),
    ("yarn-fair", "update_interval_s"),
]

INLINE = {
    "name": "ticks",
    "seed": 1,
    "trace": {
        "format": "inline",
        "users": [
            {"name": "a", "demand": [0.5, 0.1], "tasks": 10, "run_s": 10},
            {"name": "b", "demand": [0.1, 0.5], "tasks": 10, "run_s": 10},
        ],
    },
    "cluster": {"classes": [{"name": "s", "count": 2, "capacity": [1.0, 1.0]}]},
    "schedulers": ["drf"],
    "collect": {"utilization_interval_s": 5, "horizon_s": 200},
}


def _with_scheduler(entry: object) -> dict:
    return {**INLINE, "schedulers": [entry]}


def test_every_ticking_scheduler_names_its_period() -> None:
    assert MAX_SCHEDULER_TICKS == 10_000_000
    assert Scheduler.period_parameter is None
    # every registered scheduler that wakes itself up, but the replay of a recorded run (its
    # wake-ups are the recorded times, not a grid), declares its period
    timed = {
        name
        for name in available(plugins=False)
        if "<" not in name and resolve(name).cls.next_wakeup is not Scheduler.next_wakeup
    }
    assert timed - {"recorded", "udrf-backfill"} == {name for name, _ in TICKING}
    assert resolve("udrf-backfill").cls.period_parameter == "period_s"  # udrf, another mode
    for name, param in TICKING:
        cls = resolve(name).cls
        assert cls.period_parameter == param, name
        assert param in inspect.signature(cls).parameters, name


@pytest.mark.parametrize(("name", "param"), TICKING)
def test_a_period_giving_too_many_ticks_is_refused(name: str, param: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(_with_scheduler({"name": name, param: 1e-9}))
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        f"config: schedulers.0.{param}: 1e-09 s gives 200,000,000,001 ticks of {name}-1e-09 over "
        "200 s, more than the 10,000,000 a run may make ("
    ), message


@pytest.mark.parametrize(("name", "param"), TICKING)
def test_a_period_within_the_bound_is_accepted(name: str, param: str) -> None:
    parse_config(_with_scheduler({"name": name, param: 200 / (MAX_SCHEDULER_TICKS - 1)}))
    parse_config(_with_scheduler(name))  # the default period


def test_udrf_event_driven_period_is_not_a_tick() -> None:
    parse_config(_with_scheduler({"name": "udrf", "period_s": 0}))


def test_the_refusal_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(INLINE))
    out = tmp_path / "o"
    code = main(
        [
            "run",
            str(config),
            "--out",
            str(out),
            "--no-progress",
            "--set",
            "schedulers=[{name: kueue-fair, cycle_s: 1e-9}]",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("fairsim: error: config: schedulers.0.cycle_s: 1e-09 s gives ")
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("grid", [next_multiple_after, next_period_start])
@pytest.mark.parametrize(
    ("now", "step"), [(1e6, 1e-12), (1e6, 1e-10), (3600.0, 1e-14), (0.0, 1e-300), (7.0, 1.0)]
)
def test_the_next_tick_is_always_later_than_the_clock(grid, now: float, step: float) -> None:  # type: ignore[no-untyped-def]
    t = grid(now, step)
    assert t > now
    assert math.isfinite(t)
