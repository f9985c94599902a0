"""The scenario layer's config: one model per trace format, machine limits checked where a config
runs, one dotted-path setter, typed scheduler specs (a Scheduler subclass given directly)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario.config import (
    TRACE_FORMATS,
    GoogleTrace,
    InlineTrace,
    RunConfig,
    SyntheticTrace,
    parse_config,
    set_dotted,
)
from fairsim.scenario.limits import check_limits
from fairsim.scenario.sweep import expand, parse_sweep
from fairsim.schedulers.drfh import BestFitDRFH
from fairsim.schedulers.registry import SchedulerSpec
from fairsim.simulator.cluster import ClusterView

BASE = {
    "name": "t",
    "trace": {"format": "synthetic", "n_tasks": 200, "duration_s": 3600},
    "cluster": {"servers": 10},
    "schedulers": ["bf-drfh"],
}


def test_each_format_has_its_own_model() -> None:
    google = parse_config({**BASE, "trace": {"format": "google-2011", "path": "g", "parts": "0"}})
    assert isinstance(google.trace, GoogleTrace) and google.trace.parts == "0"
    assert not hasattr(google.trace, "n_tasks")
    synthetic = parse_config(BASE)
    assert isinstance(synthetic.trace, SyntheticTrace) and not hasattr(synthetic.trace, "parts")
    inline = {
        "format": "inline",
        "users": [{"name": "a", "demand": [0.1, 0.1], "tasks": 3, "run_s": 5}],
    }
    assert isinstance(parse_config({**BASE, "trace": inline}).trace, InlineTrace)
    assert set(TRACE_FORMATS) == {
        "google-2011",
        "alibaba-2017",
        "alibaba-2018",
        "alibaba-2018-spar",
        "alibaba-gpu-2023",
        "canonical",
        "synthetic",
        "inline",
    }


def test_a_key_of_another_format_names_the_key_and_the_formats() -> None:
    data = {**BASE, "trace": {"format": "canonical", "path": "x", "cache_dir": "c"}}
    with pytest.raises(ConfigError) as info:
        parse_config(data)
    assert str(info.value) == (
        "config: trace: cache_dir: not a key of format 'canonical' (it belongs to formats "
        "'google-2011', 'alibaba-2017', 'alibaba-2018', 'alibaba-2018-spar', "
        "'alibaba-gpu-2023' and 'synthetic')"
    )


def test_the_resolved_config_lists_the_formats_own_keys_first() -> None:
    written = yaml.safe_load(parse_config(BASE).to_yaml())
    assert list(written["trace"])[:5] == ["format", "n_tasks", "duration_s", "model", "cache_dir"]
    assert "parts" not in written["trace"] and "users" not in written["trace"]
    assert parse_config(written).config_hash() == parse_config(BASE).config_hash()


def test_a_config_is_valid_wherever_it_is_read_and_limited_where_it_runs() -> None:
    huge = {
        **BASE,
        "trace": {"format": "synthetic", "n_tasks": 10**12, "duration_s": 3600},
        "cluster": {"servers": 10**12},
    }
    cfg = parse_config(huge)  # valid: sizes are not a property of the config
    assert isinstance(cfg.trace, SyntheticTrace) and cfg.trace.n_tasks == 10**12
    with pytest.raises(ConfigError, match=r"^config: cluster\.servers: 1000000000000 servers need"):
        check_limits(cfg)
    small_pool = parse_config({**huge, "cluster": {"servers": 10}})
    with pytest.raises(ConfigError, match=r"^config: trace\.n_tasks: 1000000000000 tasks need"):
        check_limits(small_pool)
    with pytest.raises(ConfigError, match=r"^config: trace\.n_tasks: 1000000000000 tasks need"):
        fairsim.simulate(small_pool)  # the pipeline checks before anything is allocated
    check_limits(parse_config(BASE))  # a small config passes


def test_one_setter_for_set_and_sweep_grids() -> None:
    data = {"a": {"b": 1}, "l": [1, 2]}
    set_dotted(data, "a.c.d", 3, where="w")
    set_dotted(data, "l.1", 5, where="w")
    assert data == {"a": {"b": 1, "c": {"d": 3}}, "l": [1, 5]}
    with pytest.raises(ConfigError, match=r"^w: '2' is not an index of a list of 2$"):
        set_dotted(data, "l.2", 0, where="w")
    with pytest.raises(ConfigError, match=r"^w: 'a\.b' is not a mapping or list$"):
        set_dotted(data, "a.b.x", 0, where="w")
    # the same rule and words, named as --set or as the grid path
    with pytest.raises(ConfigError, match=r"^--set 'schedulers\.3=ff-drfh': '3' is not an index"):
        parse_config(BASE, overrides=["schedulers.3=ff-drfh"])
    sweep = {"name": "s", "base": {k: v for k, v in BASE.items() if k != "name"}}
    sweep["grid"] = {"schedulers.3": ["ff-drfh"]}
    with pytest.raises(ConfigError, match=r"grid\.schedulers\.3: '3' is not an index of a list"):
        expand(parse_sweep(sweep))
    sweep["grid"] = {"schedulers.0": ["ff-drfh", "slots-14"]}
    assert [r.config.scheduler_labels() for r in expand(parse_sweep(sweep))] == [
        ["ff-drfh"],
        ["slots-14"],
    ]


class FifoFirstFit(fairsim.Scheduler):
    """One FIFO queue for every user: each task to the first server that fits it (a test class,
    given to the config directly, never registered)."""

    name = "fifo-first-fit"

    def bind(self, cluster: ClusterView) -> None:
        self.cluster_ = cluster
        self._queue: list[tuple[int, tuple[float, ...]]] = []

    def on_arrival(self, task: int, user: int, demand: tuple[float, ...]) -> None:
        self._queue.append((task, demand))

    def on_completion(self, task: int, user: int, demand: tuple[float, ...], server: int) -> None:
        pass

    def decide(self) -> Iterator[tuple[int, int]]:
        while self._queue:
            task, demand = self._queue[0]
            fits = (self.cluster_.free >= demand).all(axis=1).nonzero()[0]
            if len(fits) == 0:
                return
            self._queue.pop(0)
            yield task, int(fits[0])

    def pending(self) -> int:
        return len(self._queue)


def test_schedulers_are_typed_specs_and_a_class_may_be_given_directly() -> None:
    cfg = parse_config({**BASE, "schedulers": ["slots-14", FifoFirstFit, BestFitDRFH]})
    assert all(isinstance(s, SchedulerSpec) for s in cfg.schedulers)
    assert [s.cls for s in cfg.schedulers][1:] == [FifoFirstFit, BestFitDRFH]
    assert cfg.scheduler_labels() == ["slots-14", "fifo-first-fit", "bf-drfh"]
    # a registered class is written as its name; an unregistered one as its import path
    entries = cfg.model_dump(mode="json")["schedulers"]
    assert entries == ["slots-14", f"{__name__}:FifoFirstFit", "bf-drfh"]
    with pytest.raises(ConfigError, match=r"^config: schedulers\.1: duplicate scheduler 'bf-drfh'"):
        parse_config({**BASE, "schedulers": ["bf-drfh", BestFitDRFH]})


def test_a_class_given_directly_runs_beside_registered_schedulers() -> None:
    results = fairsim.simulate({**BASE, "schedulers": ["ff-drfh", FifoFirstFit]})
    assert list(results) == ["ff-drfh", "fifo-first-fit"]
    assert [r.summary["tasks"] for r in results.values()] == [200, 200]
    tasks = results["fifo-first-fit"].tasks.sort_values(["submit_s", "job_id", "task_index"])
    started = tasks["start_s"].dropna()
    assert len(started) > 0 and started.is_monotonic_increasing  # one FIFO queue


def test_an_import_path_names_a_class_and_round_trips() -> None:
    path = "fairsim.schedulers.drfh:FirstFitDRFH"
    cfg = parse_config({**BASE, "schedulers": [path]})
    assert cfg.schedulers[0].cls.__name__ == "FirstFitDRFH"
    assert cfg.scheduler_labels() == ["ff-drfh"]
    again = parse_config(yaml.safe_load(cfg.to_yaml()))
    assert again.config_hash() == cfg.config_hash()
    with pytest.raises(ConfigError, match=r"^config: schedulers: scheduler 'os:path': .* not a"):
        parse_config({**BASE, "schedulers": ["os:path"]})
    with pytest.raises(ConfigError, match=r"cannot import 'no_such_module'"):
        parse_config({**BASE, "schedulers": ["no_such_module:X"]})


def test_a_config_object_keeps_its_specs_through_validation() -> None:
    cfg = parse_config(BASE)
    assert RunConfig.model_validate(cfg.model_dump()).config_hash() == cfg.config_hash()


def test_empty_classes_say_the_list_is_empty() -> None:
    # reported as "classes must have distinct names, got []"
    with pytest.raises(ConfigError) as err:
        parse_config({**BASE, "cluster": {"classes": []}})
    assert str(err.value) == (
        "config: cluster: classes: the list is empty (give at least one server class)"
    )
