"""Bad input at the boundary: one-line errors naming the field, never a traceback, nothing
half-written."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from simulator.config import load_config, parse_config
from simulator.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent

BASE = {
    "name": "t",
    "trace": {"format": "synthetic", "n_tasks": 300},
    "cluster": {"servers": 20, "source": "table-i"},
    "schedulers": ["bf-drfh"],
}


def _with(**patch: object) -> dict:
    d = yaml.safe_load(yaml.safe_dump(BASE))
    for dotted, value in patch.items():
        node = d
        *head, last = dotted.split("__")
        for h in head:
            node = node[h]
        node[last] = value
    return d


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {**BASE, "schedulerz": ["bf-drfh"]},
            r"unknown key 'schedulerz'; did you mean 'schedulers'\?",
        ),
        (_with(trace__pathh="x"), r"trace: unknown key 'pathh'; did you mean 'path'\?"),
        (
            _with(schedulers=["bf-drfh", "slot-14"]),
            r"schedulers: unknown scheduler 'slot-14'; did you mean 'slots-14'\?",
        ),
        (
            _with(cluster__servers=-5),
            r"cluster\.servers: servers must be a positive integer, got -5",
        ),
        (
            _with(cluster__source="tableI"),
            r"cluster\.source: .*'table-i', 'machine-events' or 'trace' \(got 'tableI'\)",
        ),
        (
            _with(collect={"utilization_interval_s": 0}),
            r"collect\.utilization_interval_s: .*greater than 0",
        ),
        ({k: v for k, v in BASE.items() if k != "trace"}, r"trace: required key is missing"),
    ],
)
def test_config_errors_name_the_field(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config(data)
    assert "\n" not in str(info.value)


def test_overrides_and_hash() -> None:
    cfg = parse_config(BASE, overrides=["cluster.servers=40", "schedulers=[ff-drfh, slots-12]"])
    assert cfg.cluster.servers == 40 and cfg.schedulers == ["ff-drfh", "slots-12"]
    assert cfg.config_hash() != parse_config(BASE).config_hash()
    assert parse_config(BASE).config_hash() == parse_config(BASE).config_hash()
    with pytest.raises(ConfigError, match=r"--set 'cluster': expected key=value"):
        parse_config(BASE, overrides=["cluster"])


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config: file '.*nope\.yaml' does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_shipped_configs_validate() -> None:
    from experiments import bonald_roberts

    for path in sorted((ROOT / "configs").glob("*.yaml")):
        if path.name == "bonald-roberts.yaml":  # the dynamic-demand model, not a cluster run
            bonald_roberts.load_config(path)
        else:
            load_config(path)


def _fairsim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "experiments.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )


def _one_line_error(p: subprocess.CompletedProcess[str], pattern: str) -> None:
    import re

    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert re.search(pattern, lines[0]), lines[0]


def test_cli_run_bad_config_one_line(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump({**BASE, "schedulers": ["bff-drfh"]}))
    _one_line_error(
        _fairsim("run", str(f), "--out", str(tmp_path / "o")),
        r"^fairsim: error: config: schedulers: unknown scheduler 'bff-drfh'",
    )
    assert not (tmp_path / "o").exists()


def test_cli_run_trace_without_task_events(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    f = tmp_path / "c.yaml"
    f.write_text(
        yaml.safe_dump(
            {**BASE, "trace": {"format": "google-2011", "path": str(tmp_path / "empty")}}
        )
    )
    _one_line_error(
        _fairsim("run", str(f), "--out", str(tmp_path / "o")),
        r"trace\.path: '.*empty' has no task_events folder",
    )


def test_cli_convert_truncated_gzip(tmp_path: Path, google_dir: Path) -> None:
    src = tmp_path / "g" / "task_events"
    src.mkdir(parents=True)
    raw = (google_dir / "task_events" / "part-00001-of-00500.csv.gz").read_bytes()
    (src / "part-00001-of-00500.csv.gz").write_bytes(raw[: len(raw) // 2])
    p = _fairsim(
        "trace",
        "convert",
        "google-2011",
        str(tmp_path / "g"),
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    )
    _one_line_error(p, r"part-00001-of-00500\.csv\.gz: truncated or corrupt")
    assert not (tmp_path / "out" / "tasks.parquet").exists()


def test_cli_convert_skips_rows_with_missing_requests(tmp_path: Path) -> None:
    src = tmp_path / "g" / "task_events"
    src.mkdir(parents=True)
    rows = [
        "0,,1,0,,0,u,0,0,0.1,0.2,0,0",
        "1000000000,,1,0,5,1,u,0,0,0.1,0.2,0,0",
        "2000000000,,1,0,5,4,u,0,0,0.1,0.2,0,0",
        "0,,2,0,,0,u,0,0,,,0,0",
    ]
    with gzip.open(src / "part-00000-of-00500.csv.gz", "wt") as fh:
        fh.write("\n".join(rows) + "\n")
    p = _fairsim(
        "trace",
        "convert",
        "google-2011",
        str(tmp_path / "g"),
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    )
    assert p.returncode == 0, p.stderr
    import json

    report = json.loads((tmp_path / "out" / "conversion.json").read_text())
    assert report["skipped"]["task_events"]["missing cpu or mem request"] == 1
    assert report["rows_used"]["task_events"] + sum(report["skipped"]["task_events"].values()) == 4


def test_cli_run_writes_contract_files(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(yaml.safe_dump({**BASE, "schedulers": ["bf-drfh", "slots-14"]}))
    p = _fairsim("run", str(f), "--out", str(tmp_path / "o"), "--no-progress")
    assert p.returncode == 0, p.stderr
    out = tmp_path / "o"
    for name in ("config.yaml", "servers.parquet", "report.md", "utilization.png"):
        assert (out / name).is_file(), name
    for sched in ("bf-drfh", "slots-14"):
        for name in ("tasks", "jobs", "users", "utilization"):
            assert (out / sched / f"{name}.parquet").is_file()
        import json

        s = json.loads((out / sched / "summary.json").read_text())
        assert s["tasks"] == 300 and s["seed"] == 1 and len(s["config_hash"]) == 16
        assert s["wall_s"] > 0 and s["tasks_per_s"] > 0
    assert not list(out.glob(".*")), "temporary files left behind"
