"""The scheduler registry (``schedulers/registry.py``): in-process registration with
``@fairsim.register_scheduler``, scheduler parameters from YAML validated against each scheduler's
own signature, labels (result folders), aliases, and the conformance suite given a name, a config
entry or a class with parameters (its checks failing on broken schedulers:
``test_schedulers_conformance.py``)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairsim
from fairsim.cli import build_parser
from fairsim.errors import ConfigError, RegistryError
from fairsim.scenario.config import parse_config
from fairsim.scenario.output import run_to_folder
from fairsim.schedulers import registry
from fairsim.schedulers.psdsf_distributed import DistributedPSDSF
from fairsim.schedulers.slots import Slots
from fairsim.simulator.cluster import ClusterState
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S

TINY = {
    "name": "reg",
    "trace": {"format": "synthetic", "n_tasks": 200, "duration_s": SAMPLE_WINDOW_S},
    "cluster": {"servers": 8, "source": "table-i"},
    "collect": {"utilization_interval_s": 600},
}


class Fifo(fairsim.Scheduler):
    """First come, first served on the first server that fits (the docs' example)."""

    work_conserving = False  # a user's task that fits waits behind the head of the queue
    lowest_share_first = False  # arrival order, whoever submitted the task

    def bind(self, cluster: fairsim.ClusterView) -> None:
        super().bind(cluster)
        self._queue: deque[tuple[int, tuple[float, ...]]] = deque()

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self._queue.append((task, demand))

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        pass

    def decide(self) -> Iterator[tuple[int, int]]:
        while self._queue:
            task, demand = self._queue[0]
            fits = np.all(self.cluster_.free >= np.asarray(demand), axis=1)
            mask = self.cluster_.task_mask(task)
            if mask is not None:
                fits &= mask
            if not fits.any():
                return
            self._queue.popleft()
            yield task, int(fits.argmax())

    def pending(self) -> int:
        return len(self._queue)


@pytest.fixture
def fifo() -> Iterator[str]:
    """``test-fifo`` registered for one test."""
    fairsim.register_scheduler("test-fifo")(Fifo)
    yield "test-fifo"
    registry.unregister_scheduler("test-fifo")


# --------------------------------------------------------------------------- registration


def test_register_scheduler_in_process(fifo: str, tmp_path: Path) -> None:
    assert "test-fifo" in registry.available() and "test-fifo" in registry.examples()
    assert "test-fifo" not in registry.available(plugins=False)
    sched = registry.make_scheduler(fifo)
    assert isinstance(sched, Fifo) and sched.name == "test-fifo"  # constructed with no argument
    fairsim.testing.check_scheduler(fifo)
    cfg = parse_config({**TINY, "schedulers": [fifo, "ff-drfh"]})
    out = run_to_folder(cfg, tmp_path / "out", progress=False, report=False)
    assert out["test-fifo"]["tasks"] == out["ff-drfh"]["tasks"] == 200
    summary = json.loads((tmp_path / "out" / "test-fifo" / "summary.json").read_text())
    assert summary["scheduler"] == "test-fifo"


def test_help_lists_the_registry(fifo: str) -> None:
    """``fairsim run --help`` and ``fairsim sweep --help`` list every registered name."""
    parser = build_parser()
    (sub,) = (a for a in parser._actions if a.dest == "command")
    names = ", ".join(registry.available())
    assert names.startswith("slots-<S>, slots-<S>-single, slots-<S>-cpu, ff-drfh, bf-drfh, ")
    assert names.endswith(
        ", drf-lockstep, udrf, udrf-backfill, hdrf, yarn-fair, kueue-fair, recorded, test-fifo"
    )
    for command in ("run", "sweep"):
        epilog = sub.choices[command].epilog  # type: ignore[index]
        assert f"scheduler names: {names}" in epilog


def test_duplicate_and_invalid_registrations_are_refused(fifo: str) -> None:
    class Other(Fifo):
        pass

    with pytest.raises(
        RegistryError,
        match=r"^register_scheduler\('test-fifo'\): the name is already registered to "
        r"test_scheduler_registry\.Fifo \(pass replace=True to replace it\)$",
    ):
        fairsim.register_scheduler("test-fifo")(Other)
    fairsim.register_scheduler("test-fifo")(Fifo)  # the same class again: nothing changes
    fairsim.register_scheduler("test-fifo", replace=True)(Other)
    assert registry.resolve("test-fifo").cls is Other
    with pytest.raises(
        RegistryError,
        match=r"^register_scheduler\('bf-drfh'\): the name is taken by fairsim's built-in "
        r"BestFitDRFH$",
    ):
        fairsim.register_scheduler("bf-drfh")(Fifo)
    with pytest.raises(
        RegistryError,
        match=r"^register_scheduler\('not-a-scheduler'\): <class 'dict'> is not a subclass of "
        r"fairsim\.Scheduler$",
    ):
        fairsim.register_scheduler("not-a-scheduler")(dict)  # type: ignore[type-var]
    with pytest.raises(RegistryError, match=r"^register_scheduler: 'my fifo' is not a scheduler"):
        fairsim.register_scheduler("my fifo")
    with pytest.raises(RegistryError, match=r"^unregister_scheduler: 'nope' was not registered"):
        registry.unregister_scheduler("nope")
    assert "not-a-scheduler" not in registry.available()


def test_scheduler_with_parameters_and_weights() -> None:
    class Greedy(Fifo):
        def __init__(self, *, limit: int = 3, weights: dict[int, float] | None = None) -> None:
            self.limit = limit
            self.weights = weights

    fairsim.register_scheduler("test-greedy")(Greedy)
    try:
        s = registry.make_scheduler({"name": "test-greedy", "limit": 5}, weights={0: 2.0})
        assert isinstance(s, Greedy) and (s.limit, s.weights, s.name) == (
            5,
            {0: 2.0},
            "test-greedy-5",
        )
        with pytest.raises(
            ConfigError, match=r"^test-greedy: limit: 'x' \(Input should be a valid integer\)$"
        ):
            registry.resolve({"name": "test-greedy", "limit": "x"})
    finally:
        registry.unregister_scheduler("test-greedy")
    # a scheduler without a weights parameter takes no weights other than 1; a class given
    # directly is labelled by its class name
    assert registry.make_scheduler(Fifo, weights={0: 1.0, 1: 1.0}).name == "Fifo"
    with pytest.raises(
        ConfigError, match=r"^scheduler 'Fifo' takes no user weights \(its __init__ has no"
    ):
        registry.make_scheduler(Fifo, weights={0: 2.0})


# --------------------------------------------------------------------------- the conformance suite


def test_check_scheduler_with_parameters() -> None:
    fairsim.testing.check_scheduler("psdsf", period_s=2.0)
    fairsim.testing.check_scheduler({"name": "slots", "slots": 12, "model": "cpu"})
    fairsim.testing.check_scheduler(Slots, slots=8)


# --------------------------------------------------------------------------- YAML parameters


def test_parameters_from_yaml(tmp_path: Path) -> None:
    cfg = parse_config(
        {
            **TINY,
            "schedulers": [
                "ff-drfh",
                {"name": "psdsf", "period_s": 2},
                {"name": "slots", "slots": 14},
                "slots-14-single",
                {"name": "udrf", "period_s": 0, "label": "udrf-events"},
            ],
        }
    )
    # the validated values are kept, in the scheduler's order; plain names are unchanged
    assert cfg.model_dump(mode="json")["schedulers"] == [
        "ff-drfh",
        {"name": "psdsf", "period_s": 2.0},
        {"name": "slots", "slots": 14},
        "slots-14-single",
        {"name": "udrf", "period_s": 0.0, "label": "udrf-events"},
    ]
    assert cfg.scheduler_labels() == [
        "ff-drfh",
        "psdsf-2",
        "slots-14",
        "slots-14-single",
        "udrf-events",
    ]
    specs = cfg.scheduler_specs()
    built = [registry.make_scheduler(s) for s in specs]
    assert isinstance(built[1], DistributedPSDSF) and built[1].period_s == 2.0
    assert isinstance(built[3], Slots) and (built[3].slots, built[3].model) == (14, "single")
    assert [b.name for b in built] == cfg.scheduler_labels()
    assert parse_config(cfg.model_dump()).config_hash() == cfg.config_hash()  # round trip
    out = run_to_folder(cfg, tmp_path / "out", progress=False, report=False)
    assert list(out) == cfg.scheduler_labels()
    for label in out:
        s = json.loads((tmp_path / "out" / label / "summary.json").read_text())
        assert s["scheduler"] == label
    # the parameter reaches the scheduler: PS-DSF with T = 2 s starts tasks only at the ticks of
    # its period (Section III-D), although tasks are submitted at other times
    tasks = pd.read_parquet(tmp_path / "out" / "psdsf-2" / "tasks.parquet")
    start = tasks["start_s"].dropna()
    assert len(start) > 100 and (start % 2 == 0).all() and (tasks["submit_s"] % 2 != 0).any()


def test_aliases_and_their_parameters_are_the_same_scheduler() -> None:
    a, b = registry.resolve("slots-14"), registry.resolve({"name": "slots", "slots": 14})
    assert (
        (a.name, a.params, a.label)
        == (b.name, b.params, b.label)
        == ("slots", {"slots": 14}, "slots-14")
    )
    assert registry.resolve("slots-14-multi").label == "slots-14"  # the default model
    assert registry.resolve({"name": "psdsf", "period_s": 1}).label == "psdsf"  # the default
    with pytest.raises(
        ConfigError,
        match=r"^config: schedulers\.1: duplicate scheduler 'slots-14' \(entry 0 has the same "
        r"result folder; remove one or give it another label\)$",
    ):
        parse_config({**TINY, "schedulers": ["slots-14", {"name": "slots", "slots": 14}]})
    cfg = parse_config(
        {**TINY, "schedulers": ["slots-14", {"name": "slots", "slots": 14, "label": "s14"}]}
    )
    assert cfg.scheduler_labels() == ["slots-14", "s14"]


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        (
            {"name": "psdsf", "period_s": -1},
            r"schedulers\.0: psdsf: period_s: -1 \(Input should be greater than 0\)",
        ),
        (
            {"name": "psdsf", "period_s": "2"},
            r"schedulers\.0: psdsf: period_s: '2' \(Input should be a valid number\)",
        ),
        (
            {"name": "psdsf", "period": 2},
            r"schedulers\.0: psdsf: unknown parameter 'period'; did you mean 'period_s'\? "
            r"\(known: period_s\)",
        ),
        (
            {"name": "drf", "period_s": 2},
            r"schedulers\.0: drf: unknown parameter 'period_s' \(drf ",
        ),
        ({"name": "slots"}, r"schedulers\.0: slots: slots: required parameter is missing"),
        (
            {"name": "slots", "slots": 14, "model": "dual"},
            r"schedulers\.0: slots: model: 'dual' \(Input should be 'multi', 'single' or 'cpu'\)",
        ),
        (
            "slots-0",
            r"schedulers: slots-0: slots: 0 \(Input should be greater than or equal to 1\)",
        ),
        (
            {"name": "psdsf", "weights": {"a": 2}},
            r"schedulers\.0: psdsf: weights: given per user by the scenario",
        ),
        (
            {"name": "slots-14", "model": "cpu"},
            r"schedulers\.0: name: 'slots-14' is a short name; in a mapping give "
            r"\{name: slots, \.\.\.\}",
        ),
        ({"period_s": 2}, r"schedulers\.0: \{'period_s': 2\}: a scheduler given as a mapping "),
        (
            {"name": "psdsf", "label": "a/b"},
            r"schedulers\.0: psdsf: label 'a/b' is not a single folder name",
        ),
        (
            7,
            r"schedulers\.0: 7 \(expected a scheduler name, a mapping \{name: \.\.\., "
            r"parameter: value\} or a fairsim\.Scheduler subclass\)$",
        ),
        ("bf-drfx", r"schedulers: unknown scheduler 'bf-drfx'; did you mean 'bf-drfh'\?"),
    ],
)
def test_bad_parameters_name_the_field_and_value(entry: object, match: str) -> None:
    with pytest.raises(ConfigError, match=rf"^config: {match}"):
        parse_config({**TINY, "schedulers": [entry]})


def test_cli_names_the_bad_parameter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from fairsim.cli import main

    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({**TINY, "schedulers": [{"name": "psdsf", "period_s": 0}]}))
    assert main(["run", str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "fairsim: error: config: schedulers.0: psdsf: period_s: 0 (Input should be greater "
        "than 0)\n"
    )


def test_view_accessors_without_an_engine() -> None:
    """A hand-driven view: every task its own job, no constraint, classes from capacities."""
    view = ClusterState(np.array([[1.0, 0.5], [1.0, 0.5], [0.5, 0.5]]), ("cpu", "mem")).view()
    assert view.task_job(7) == (7, 0) and view.task_mask(7) is None and not view.constrained
    assert view.machine_classes.tolist() == ["1/0.5", "1/0.5", "0.5/0.5"]
