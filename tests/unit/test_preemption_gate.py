"""A scheduler that may preempt and a job gate (DAG parents, repetitions, a job queue): refused
before any run when its parameters let it evict, run in the ordinary event loop when they do not
(``Scenario.check_gate_preemption``); each scheduler is built once per run either way."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

import fairsim
from fairsim.errors import ConfigError
from fairsim.scenario.config import parse_config
from fairsim.scenario.pipeline import Hooks, SchedulerRun, default_scheduler, prepare_scenario
from fairsim.schedulers.kueue_fair import KueueFair
from fairsim.schedulers.yarn_fair import YarnFair
from fairsim.simulator.scheduler import DelegatingScheduler, Scheduler


def _config(*schedulers: Any) -> dict[str, Any]:
    return {
        "name": "gate",
        "trace": {
            "format": "inline",
            "repetitions": 2,
            "users": [{"name": "a", "join_s": 0, "demand": [0.25, 0.25], "tasks": 2, "run_s": 10}],
        },
        "cluster": {"classes": [{"name": "one", "count": 1, "capacity": [1.0, 1.0]}]},
        "schedulers": list(schedulers),
        "collect": {"utilization_interval_s": 10},
    }


def test_schedulers_that_never_evict_run_with_a_job_gate() -> None:
    results = fairsim.simulate(_config("ff-drfh", "yarn-fair", "kueue-fair"))
    for name in ("yarn-fair", "kueue-fair"):
        s = results[name].summary
        assert s["tasks_completed"] == 4 and s["jobs_completed"] == 1
        assert "preemption" not in s  # the ordinary event loop: no eviction record
    assert results["yarn-fair"].summary["mean_jct_s"] == 10.0
    assert results["kueue-fair"].summary["mean_jct_s"] == 11.0  # admitted at the 1-s cycle


@pytest.mark.parametrize(
    ("entry", "label"),
    [
        ({"name": "kueue-fair", "reclaim_within_cohort": "Any"}, "kueue-fair-Any"),
        ({"name": "yarn-fair", "fair_share_preemption_timeout_s": 30, "label": "y"}, "y"),
    ],
)
def test_a_scheduler_that_may_evict_is_refused_before_any_run(
    tmp_path: Path, entry: dict[str, Any], label: str
) -> None:
    with pytest.raises(ConfigError) as err:
        fairsim.simulate(_config("ff-drfh", entry), out=tmp_path / "out")
    assert str(err.value) == (
        f"schedulers: {label!r} may evict tasks (its parameters turn preemption on), which is "
        "not supported with a job gate (trace.repetitions); turn its preemption off or "
        "remove the gate"
    )
    assert not (tmp_path / "out" / "ff-drfh").exists()  # nothing was simulated


def _count_builds(monkeypatch: pytest.MonkeyPatch, cls: type[Scheduler], built: list[str]) -> None:
    """Record every construction of ``cls`` (the registry reads the wrapped signature)."""
    init = cls.__init__

    @functools.wraps(init)
    def counted(self: Scheduler, *args: Any, **kwargs: Any) -> None:
        built.append(cls.__name__)
        init(self, *args, **kwargs)

    monkeypatch.setattr(cls, "__init__", counted)


@pytest.mark.parametrize("gate", [True, False])
def test_each_scheduler_is_built_once_per_run(monkeypatch: pytest.MonkeyPatch, gate: bool) -> None:
    built: list[str] = []
    for cls in (YarnFair, KueueFair):
        _count_builds(monkeypatch, cls, built)
    cfg = _config("ff-drfh", "yarn-fair", "kueue-fair")
    if not gate:
        cfg["trace"] = {k: v for k, v in cfg["trace"].items() if k != "repetitions"}
    results = fairsim.simulate(cfg)
    assert sorted(built) == ["KueueFair", "YarnFair"]
    # with the gate, the ordinary event loop (no eviction record); without, the preempting one
    assert all(("preemption" in results[n].summary) != gate for n in ("yarn-fair", "kueue-fair"))


class _Wrapped(DelegatingScheduler):
    """A hook's measurement wrapper: hides the wrapped scheduler's ``evicts``."""


def test_a_hook_wrapper_is_looked_through() -> None:
    """The gate check reads ``evicts`` from the instance that runs, inside a hook's wrapper."""
    seen: list[Scheduler] = []

    def wrap(run: SchedulerRun) -> Scheduler:
        seen.append(_Wrapped(default_scheduler(run)))
        return seen[-1]

    ok = prepare_scenario(parse_config(_config("yarn-fair")), hooks=Hooks(scheduler=wrap))
    (run,) = ok.runs()
    assert run.scheduler is seen[0] and not run.scheduler.preempts  # the ordinary loop
    assert run.result is not None and run.result.preemption is None
    evicting = {"name": "yarn-fair", "fair_share_preemption_timeout_s": 30}
    bad = prepare_scenario(parse_config(_config(evicting)), hooks=Hooks(scheduler=wrap))
    with pytest.raises(ConfigError, match=r"may evict tasks \(its parameters turn preemption on"):
        next(bad.runs())
