"""The public Python API: ``fairsim.simulate`` / ``fairsim.RunResult`` (the same pipeline and the
same files as ``fairsim run``), the pipeline's hooks, and ``fairsim.solve`` (the ``fairsim solve``
contract)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

import fairsim
from fairsim.cli import main
from fairsim.errors import ConfigError, OutputError
from fairsim.scenario.pipeline import Hooks, SchedulerRun, default_scheduler
from fairsim.schedulers.exact.instance import InstanceError
from fairsim.simulator.scheduler import DelegatingScheduler, Scheduler
from fairsim.traces.io import write_tasks
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S
from fairsim.traces.synth import synth_google_like

#: The file contract's columns (``fairsim run``), for the two resources of these scenarios.
COLUMNS = {
    "tasks": [
        "job_id",
        "task_index",
        "user",
        "submit_s",
        "start_s",
        "finish_s",
        "server",
        "ended",
        "cpu",
        "mem",
    ],
    "jobs": ["job_id", "user", "n_tasks", "submit_s", "finish_s", "completion_time_s"],
    "users": ["user", "tasks_submitted", "tasks_completed", "completion_ratio"],
    "utilization": ["time_s", "cpu", "mem"],
}
TABLES = tuple(COLUMNS)
#: Summary fields that measure the machine, not the simulation.
VOLATILE = {"wall_s", "tasks_per_s", "peak_rss_mb"}
SCHEDULERS = ["bf-drfh", "slots-4"]


def _config(trace_path: str) -> dict[str, Any]:
    return {
        "name": "api",
        "seed": 3,
        "trace": {"format": "canonical", "path": trace_path, "end_s": 3600},
        "cluster": {"servers": 8, "source": "table-i"},
        "schedulers": SCHEDULERS,
        "collect": {"utilization_interval_s": 60, "horizon_s": 5400},
    }


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    """``data/tasks.parquet`` (a seeded Google-like hour) and ``cfg/run.yaml`` pointing to it
    with a path relative to the config file's folder (``../data``)."""
    frame = synth_google_like(600, seed=5, duration_s=3600.0, n_users=12)
    (tmp_path / "data").mkdir()
    write_tasks(frame, tmp_path / "data" / "tasks.parquet")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "run.yaml").write_text(yaml.safe_dump(_config("../data")))
    return tmp_path


def _strip(summary: dict[str, Any], *more: str) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in VOLATILE and k not in more}


def _parquet_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.parquet"))}


def test_dict_yaml_and_runconfig_give_the_tables_of_fairsim_run(
    layout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fairsim run: the files of the contract
    out = layout / "cli"
    assert main(["run", str(layout / "cfg" / "run.yaml"), "--out", str(out), "--no-progress"]) == 0
    # a dict's relative paths resolve against the working directory, a YAML file's against
    # its folder: both name the same trace here
    monkeypatch.chdir(layout)
    from_dict = fairsim.simulate(_config("data"))
    from_yaml = fairsim.simulate(layout / "cfg" / "run.yaml")
    from_model = fairsim.simulate(fairsim.RunConfig.model_validate(_config("data")))
    for results in (from_dict, from_yaml, from_model):
        assert list(results) == SCHEDULERS
        for name, r in results.items():
            assert isinstance(r, fairsim.RunResult)
            assert r.scheduler == name and r.folder is None
            for table in TABLES:
                frame = getattr(r, table)
                assert list(frame.columns) == COLUMNS[table]
                pd.testing.assert_frame_equal(
                    frame, pd.read_parquet(out / name / f"{table}.parquet")
                )
            assert r.user_shares is None  # not collected
            written = json.loads((out / name / "summary.json").read_text())
            if results is from_yaml:  # the same config (a dict spells trace.path otherwise)
                assert r.summary["config_hash"] == written["config_hash"]
            assert _strip(r.summary, "config_hash") == _strip(written, "config_hash")
    r = from_dict["bf-drfh"]
    # real numbers: 600 tasks arrive, some finish, utilisation is a fraction
    assert r.summary["tasks"] == len(r.tasks) == 600
    assert 0 < r.summary["tasks_completed"] < 600
    assert r.users["tasks_submitted"].sum() == 600
    assert r.utilization[["cpu", "mem"]].to_numpy().max() <= 1.0 + 1e-12
    model = fairsim.RunConfig.model_validate(_config("data"))
    assert r.summary["config_hash"] == model.config_hash()
    text = repr(r)
    assert text.startswith("RunResult(scheduler='bf-drfh', tasks=600, completed=")
    assert "mean_utilization=(cpu=" in text and "\n" not in text


def test_out_writes_the_files_of_fairsim_run(layout: Path) -> None:
    config = layout / "cfg" / "run.yaml"
    cli, api = layout / "cli", layout / "api"
    assert main(["run", str(config), "--out", str(cli), "--no-progress"]) == 0
    results = fairsim.simulate(config, out=api)
    names = {str(p.relative_to(cli)) for p in cli.rglob("*")}
    assert names == {str(p.relative_to(api)) for p in api.rglob("*")}
    assert {"config.yaml", "servers.parquet", "summary.json", "report.md"} <= names
    assert {f"bf-drfh/{t}.parquet" for t in TABLES} <= names
    assert _parquet_bytes(cli) == _parquet_bytes(api)  # byte-identical
    assert (cli / "config.yaml").read_text() == (api / "config.yaml").read_text()
    for name, r in results.items():
        assert r.folder == api / name
        assert _strip(r.summary) == _strip(json.loads((api / name / "summary.json").read_text()))
        pd.testing.assert_frame_equal(r.tasks, pd.read_parquet(cli / name / "tasks.parquet"))
    # an existing non-empty folder is refused before any work, unless overwrite
    with pytest.raises(OutputError, match=r"^out: .* is not empty"):
        fairsim.simulate(config, out=api)
    again = fairsim.simulate(config, out=api, overwrite=True)
    assert _parquet_bytes(api) == _parquet_bytes(cli)
    assert list(again) == SCHEDULERS


def test_saved_config_runs_again_byte_identical(
    layout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 39: ``OUT/config.yaml`` copied the config's relative ``trace.path`` (``../data``,
    relative to ``cfg/``), so ``fairsim run OUT/config.yaml`` failed ("is not a directory").
    Its paths are now relative to the run folder: run from another working directory and
    another depth, it gives the same Parquet bytes; the config hash of the original config is
    unchanged (it is the hash of the config as given)."""
    first = layout / "results" / "first"
    config = layout / "cfg" / "run.yaml"
    assert main(["run", str(config), "--out", str(first), "--no-progress"]) == 0
    saved = yaml.safe_load((first / "config.yaml").read_text())
    assert saved["trace"]["path"] == "../../data"  # from results/first/ to data/
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    again = layout / "again"
    assert main(["run", str(first / "config.yaml"), "--out", str(again), "--no-progress"]) == 0
    assert _parquet_bytes(again) == _parquet_bytes(first)
    assert yaml.safe_load((again / "config.yaml").read_text())["trace"]["path"] == "../data"
    # the summary keeps the hash of the config as given (sweeps' run ids, earlier results)
    given = fairsim.RunConfig.model_validate(_config("../data"))
    summary = json.loads((first / "bf-drfh" / "summary.json").read_text())
    assert summary["config_hash"] == given.config_hash()
    # an absolute path is written as it was given
    absolute = str(layout / "data")
    cfg = fairsim.RunConfig.model_validate(_config(absolute))
    assert yaml.safe_load(cfg.to_yaml(folder=first))["trace"]["path"] == absolute


def test_overrides_and_bad_configs() -> None:
    cfg = {
        "name": "small",
        "trace": {"format": "synthetic", "n_tasks": 200, "duration_s": SAMPLE_WINDOW_S},
        "cluster": {"servers": 10},
        "schedulers": ["ff-drfh"],
    }
    a = fairsim.simulate(cfg, overrides=["cluster.servers=5"])["ff-drfh"]
    b = fairsim.simulate({**cfg, "cluster": {"servers": 5}})["ff-drfh"]
    assert a.summary["servers"] == 5
    pd.testing.assert_frame_equal(a.tasks, b.tasks)
    with pytest.raises(ConfigError, match=r"^config: schedulers: unknown scheduler 'ff-drf'"):
        fairsim.simulate({**cfg, "schedulers": ["ff-drf"]})
    with pytest.raises(ConfigError, match=r"^config: expected a YAML file path, a mapping"):
        fairsim.simulate(42)  # type: ignore[arg-type]


class _Counting(DelegatingScheduler):
    """Count the placements of the wrapped scheduler."""

    def __init__(self, inner: Scheduler) -> None:
        super().__init__(inner)
        self.placed = 0

    def decide(self):  # type: ignore[no-untyped-def]
        for task, server in self.inner.decide():
            self.placed += 1
            yield task, server


def test_pipeline_hooks_see_every_run_and_grid_point() -> None:
    from fairsim.scenario.config import parse_config
    from fairsim.scenario.pipeline import prepare_scenario

    cfg = parse_config(
        {
            "name": "hooks",
            "trace": {"format": "synthetic", "n_tasks": 300, "duration_s": SAMPLE_WINDOW_S},
            "cluster": {"servers": 6},
            "schedulers": ["ff-drfh", "slots-8"],
            "collect": {"utilization_interval_s": 600},
        }
    )
    samples: dict[str, list[float]] = {}
    peak: dict[str, float] = {}

    def sample(run: SchedulerRun, t: float, cluster: Any) -> None:
        samples.setdefault(run.name, []).append(t)
        used = 1 - np.asarray(cluster.free).sum() / np.asarray(cluster.capacity).sum()
        peak[run.name] = max(peak.get(run.name, 0.0), used)

    hooks = Hooks(scheduler=lambda run: _Counting(default_scheduler(run)), on_sample=sample)
    scenario = prepare_scenario(cfg, hooks=hooks)
    plain = fairsim.simulate(cfg)
    for run in scenario.runs():
        assert run.result is not None and isinstance(run.scheduler, _Counting)
        # the wrapper saw every placement, and the run is the unhooked one
        assert run.scheduler.placed == int((run.result.tasks["server"] >= 0).sum()) > 0
        assert samples[run.name] == run.result.utilization[:, 0].tolist()
        np.testing.assert_array_equal(
            plain[run.name].tasks["start_s"].to_numpy(), run.result.tasks["start_s"]
        )
        assert 0 < peak[run.name] <= 1
    assert sorted(samples) == ["ff-drfh", "slots-8"]


#: The DRF paper's worked example (Ghodsi et al., Section 4): <9 CPUs, 18 GB>; user A's tasks
#: need <1 CPU, 4 GB>, user B's <3 CPUs, 1 GB>.
DRF_EXAMPLE = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s", "capacity": [9, 18]}],
    "users": [{"id": "A", "demand": [1, 4]}, {"id": "B", "demand": [3, 1]}],
}


def test_solve_drf_worked_example(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = fairsim.solve(DRF_EXAMPLE, "drf")
    assert out["mechanism"] == "drf" and out["users"] == ["A", "B"] and out["servers"] == ["pool"]
    np.testing.assert_allclose(out["tasks"], [[3.0], [2.0]], atol=1e-9)  # 3 tasks of A, 2 of B
    # the online DRF scheduler as static progressive filling: the same, in integer tasks
    online = fairsim.solve(DRF_EXAMPLE, "drf", online=True)
    assert online["online"] is True and online["tasks"] == [[3], [2]]
    # the command line prints exactly what the function returns (a file or the parsed mapping)
    path = tmp_path / "drf.json"
    path.write_text(json.dumps(DRF_EXAMPLE))
    assert fairsim.solve(path, "drf") == out
    for args, expected in (
        (["solve", "drf", str(path)], out),
        (["solve", "psdsf", str(path), "--sharing", "tdm"], None),
    ):
        assert main(args) == 0
        printed = json.loads(capsys.readouterr().out)
        assert printed == (expected or fairsim.solve(DRF_EXAMPLE, "psdsf", sharing="tdm"))


@pytest.mark.parametrize(
    ("mechanism", "options", "instance", "error", "match"),
    [
        ("drfx", {}, DRF_EXAMPLE, ConfigError, r"^unknown scheduler 'drfx'; did you mean 'drf"),
        ("psdsf", {"sharing": "xdm"}, DRF_EXAMPLE, ConfigError, r"^sharing: 'xdm' \(expected"),
        (
            "drf",
            {},
            {**DRF_EXAMPLE, "users": [{"id": "A", "demand": [1, 4, 2]}]},
            InstanceError,
            r"^users\[0\]\.demand: ",
        ),
        ("drf", {}, 3.5, InstanceError, r"^instance: expected a mapping"),
    ],
)
def test_solve_errors_name_the_field(
    mechanism: str, options: dict[str, Any], instance: Any, error: type, match: str
) -> None:
    with pytest.raises(error, match=match) as err:
        fairsim.solve(instance, mechanism, **options)
    assert "\n" not in str(err.value)


def test_public_names() -> None:
    for name in ("simulate", "solve", "RunResult", "RunConfig", "Scheduler"):
        assert name in fairsim.__all__ and name in dir(fairsim)
    assert fairsim.simulate.__module__ == "fairsim.scenario.api"
    assert fairsim.solve.__module__ == "fairsim.schedulers.solve"
    with pytest.raises(AttributeError, match="has no attribute 'simulat'"):
        fairsim.simulat  # noqa: B018
