"""Bad input at the boundary: one-line errors naming the field, never a traceback, nothing
half-written."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fairsim.errors import ConfigError
from fairsim.scenario.config import load_config, parse_config
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S

ROOT = Path(__file__).resolve().parents[2]

BASE = {
    "name": "t",
    "trace": {"format": "synthetic", "n_tasks": 300, "duration_s": SAMPLE_WINDOW_S},
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
        (_with(trace__n_taks=5), r"trace: unknown key 'n_taks'; did you mean 'n_tasks'\?"),
        (
            {**BASE, "trace": {"format": "canonical", "pathh": "x"}},
            r"trace: unknown key 'pathh'; did you mean 'path'\?",
        ),
        # a key of another format is refused naming the key and both formats (it was ignored)
        (
            _with(trace__parts="0-13"),
            r"^config: trace: parts: not a key of format 'synthetic' \(it belongs to format "
            r"'google-2011'\)$",
        ),
        (
            {**BASE, "trace": {"format": "google-2011", "path": "g", "n_tasks": 5}},
            r"^config: trace: n_tasks: not a key of format 'google-2011' \(it belongs to format "
            r"'synthetic'\)$",
        ),
        (
            {**BASE, "trace": {"format": "inline", "users": [], "model": "complex"}},
            r"^config: trace: model: not a key of format 'inline'",
        ),
        (
            {**BASE, "trace": {"format": "synthetic", "n_tasks": 5, "users": []}},
            r"^config: trace: users: not a key of format 'synthetic' \(it belongs to format "
            r"'inline'\)$",
        ),
        (
            {**BASE, "trace": {"format": "alibaba-2017", "path": "a", "parts": "0"}},
            r"^config: trace: parts: not a key of format 'alibaba-2017'",
        ),
        (
            {**BASE, "trace": {"format": "synthetc", "n_tasks": 5}},
            r"^config: trace\.format: 'synthetc' is not a trace format; did you mean "
            r"'synthetic'\?",
        ),
        (
            {**BASE, "trace": {"n_tasks": 5}},
            r"^config: trace\.format: required key is missing \(one of google-2011, ",
        ),
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
        (_with(trace__duration_s=0), r"trace\.duration_s: .*greater than 0 \(got 0\)"),
        (
            {**BASE, "trace": {"format": "canonical", "path": "x", "duration_s": 60}},
            r"trace: duration_s: not a key of format 'canonical' \(it belongs to format "
            r"'synthetic'\)",
        ),
    ],
)
def test_config_errors_name_the_field(data: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        parse_config(data)
    assert "\n" not in str(info.value)


def test_overrides_and_hash() -> None:
    cfg = parse_config(BASE, overrides=["cluster.servers=40", "schedulers=[ff-drfh, slots-12]"])
    assert cfg.cluster.servers == 40 and cfg.scheduler_labels() == ["ff-drfh", "slots-12"]
    assert cfg.config_hash() != parse_config(BASE).config_hash()
    assert parse_config(BASE).config_hash() == parse_config(BASE).config_hash()
    with pytest.raises(ConfigError, match=r"--set 'cluster': expected key=value"):
        parse_config(BASE, overrides=["cluster"])


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"config: file '.*nope\.yaml' does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_shipped_configs_validate() -> None:
    from fairsim.experiments.bonald_roberts import experiment as bonald_roberts

    for path in sorted((ROOT / "configs").glob("*.yaml")):
        if path.name == "bonald-roberts.yaml":  # the dynamic-demand model, not a cluster run
            bonald_roberts.load_config(path)
        else:
            load_config(path)


def _fairsim(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fairsim.cli", *args],
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


# --------------------------------------------------------------------------- hardening
# Each case of the hardening review: exit status and message pinned, nothing left behind.

TINY = {
    "name": "tiny",
    "trace": {"format": "synthetic", "n_tasks": 60, "duration_s": SAMPLE_WINDOW_S},
    "cluster": {"servers": 5, "source": "table-i"},
    "schedulers": ["bf-drfh", "slots-14"],
}


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from fairsim.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def _refused(
    argv: list[str], capsys: pytest.CaptureFixture[str], pattern: str, *gone: Path
) -> None:
    import re

    code, _, err = _main(argv, capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert re.search(pattern, lines[0]), lines[0]
    for path in gone:
        assert not path.exists(), path
        assert not list(path.parent.glob(f".{path.name}.*")), "temporary folder left behind"


def _config(tmp_path: Path, data: dict | None = None, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data if data is not None else TINY))
    return path


def test_run_reads_its_config_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`fairsim run` reads and validates the YAML file once (it read it twice: once for the
    run's name, once more in fairsim.simulate); the run still has the overrides applied and the
    config hash of the file with them."""
    import fairsim.scenario.config as config

    real, reads = config.read_yaml, []

    def counted(path, what):  # every config file read goes through read_yaml
        reads.append((Path(path).name, what))
        return real(path, what)

    monkeypatch.setattr(config, "read_yaml", counted)
    cfg, out = _config(tmp_path), tmp_path / "o"
    argv = ["run", str(cfg), "--out", str(out), "--no-progress", "--set", "cluster.servers=4"]
    assert _main(argv, capsys)[0] == 0
    assert reads == [("c.yaml", "config")]
    monkeypatch.undo()
    expected = load_config(cfg, overrides=["cluster.servers=4"]).config_hash()
    summary = json.loads((out / "summary.json").read_text())
    assert {s["config_hash"] for s in summary.values()} == {expected}
    assert len(pd.read_parquet(out / "servers.parquet")) == 4


# -- 2. results are atomic


def test_run_refuses_an_existing_out_and_overwrite_replaces_it_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg, out = _config(tmp_path), tmp_path / "o"
    assert _main(["run", str(cfg), "--out", str(out), "--no-progress"], capsys)[0] == 0
    (out / "stale-scheduler").mkdir()
    _refused(
        ["run", str(cfg), "--out", str(out), "--no-progress"],
        capsys,
        r"^fairsim: error: --out: '.*o' already exists and is not empty \(--overwrite replaces "
        r"it, or choose another folder\)$",
    )
    assert (out / "stale-scheduler").is_dir()  # untouched
    argv = ["run", str(cfg), "--out", str(out), "--no-progress", "--overwrite"]
    assert _main(argv, capsys)[0] == 0
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["bf-drfh", "slots-14"]
    assert not list(tmp_path.glob(".*"))


def test_interrupted_run_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import fairsim.scenario.output as run

    real = run.write_run
    calls = []

    def write_then_interrupt(*args, **kw):  # Ctrl-C after the first scheduler's folder
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kw)

    monkeypatch.setattr(run, "write_run", write_then_interrupt)
    out = tmp_path / "deep" / "o"
    argv = ["run", str(_config(tmp_path)), "--out", str(out), "--no-progress"]
    code, _, err = _main(argv, capsys)
    assert code == 130 and err.strip() == "fairsim: interrupted; no partial output was left"
    assert not (tmp_path / "deep").exists()


def test_refused_run_leaves_no_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = {
        **TINY,
        "trace": {
            "format": "synthetic",
            "n_tasks": 60,
            "duration_s": SAMPLE_WINDOW_S,
            "start_s": 1e9,
        },
    }
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "a" / "o")],
        capsys,
        r"trace\.start_s/end_s: no task of the trace is submitted in the window "
        r"\[1e\+09 s, [\d.]+ s\) \(its 60 tasks are submitted from [\d.]+ s to [\d.]+ s\)$",
        tmp_path / "a",
    )


def test_convert_synth_properties_are_atomic_and_refuse_existing_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "syn"
    argv = ["trace", "synth", "--tasks", "50", "--out", str(out)]
    assert _main(argv, capsys)[0] == 0
    _refused(argv, capsys, r"^fairsim: error: --out: '.*syn' already exists and is not empty")
    assert _main([*argv, "--overwrite"], capsys)[0] == 0
    assert [p.name for p in out.iterdir()] == ["tasks.parquet"]

    src = tmp_path / "g" / "task_events"
    src.mkdir(parents=True)
    with gzip.open(src / "part-00000-of-00500.csv.gz", "wt") as fh:
        fh.write("0,,1,0,,0,u,0,0,0.1,0.2,0,0\n")
    conv = ["trace", "convert", "google-2011", str(tmp_path / "g"), "--no-progress"]
    assert _main([*conv, "--out", str(out), "--overwrite"], capsys)[0] == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "conversion.json",
        "placements.parquet",
        "tasks.parquet",
    ]
    _refused([*conv, "--out", str(out)], capsys, r"already exists and is not empty")
    # --overwrite never deletes the input, nor part of it
    _refused(
        [*conv, "--out", str(tmp_path / "g"), "--overwrite"],
        capsys,
        r"refusing to replace '.*g': it is an input$",
    )
    _refused(
        [*conv, "--out", str(src), "--overwrite"],
        capsys,
        r"refusing to replace '.*task_events': it lies inside the input folder '.*g'$",
    )
    assert [p.name for p in src.iterdir()] == ["part-00000-of-00500.csv.gz"]

    props = ["properties", "--instances", "6", "--mechanism", "af", "--out", str(out)]
    _refused(props, capsys, r"already exists and is not empty")
    code, stdout, _ = _main([*props, "--overwrite"], capsys)
    assert code == 0 and "| `af` |" in stdout  # AF breaks sharing incentive (papers' instance)
    assert sorted(p.name for p in out.iterdir()) == [
        "af--bottleneck-fairness.json",
        "af--sharing-incentive.json",
        "table.json",
        "table.md",
    ]


def test_compare_never_replaces_a_folder_it_compares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``compare RUN --out RUN --overwrite`` deleted the run (and ``--out RUN/bf-drfh`` one of
    its schedulers): an output folder that is, holds or lies inside a compared folder is
    refused in one line and the run is left whole."""
    run = tmp_path / "run"
    assert (
        _main(["run", str(_config(tmp_path)), "--out", str(run), "--no-progress"], capsys)[0] == 0
    )
    files = sorted(str(p.relative_to(run)) for p in run.rglob("*"))
    cmp = ["compare", str(run), "--overwrite", "--out"]
    _refused(
        [*cmp, str(run)],
        capsys,
        r"^fairsim: error: out: refusing to replace '.*run': it is an input$",
    )
    _refused(
        [*cmp, str(run / "bf-drfh")],
        capsys,
        r"refusing to replace '.*bf-drfh': it lies inside the input folder '.*run'$",
    )
    both = [
        "compare",
        str(run / "bf-drfh"),
        str(run / "slots-14"),
        "--overwrite",
        "--out",
        str(run),
    ]
    _refused(both, capsys, r"refusing to replace '.*run': it holds '.*bf-drfh'$")
    assert sorted(str(p.relative_to(run)) for p in run.rglob("*")) == files
    assert _main([*cmp, str(tmp_path / "cmp")], capsys)[0] == 0  # elsewhere: written


# -- 3. tracebacks and crashes


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ("file", r"--out: '.*afile' is an existing file, not a folder$"),
        ("below", r"--out: '.*afile/sub' is below '.*afile', which is a file$"),
        ("denied", r"--out: cannot write into '.*' \(permission denied\)$"),
    ],
)
@pytest.mark.parametrize("which", ["run", "sweep", "convert", "synth", "properties"])
def test_unusable_out_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    message: str,
    which: str,
) -> None:
    import os

    (tmp_path / "afile").write_text("x")
    out = {"file": tmp_path / "afile", "below": tmp_path / "afile" / "sub"}.get(
        command, tmp_path / "ro" / "o"
    )
    if command == "denied":  # root may write anywhere: the permission check is what is tested
        import fairsim.atomic

        real = os.access
        monkeypatch.setattr(
            fairsim.atomic.os, "access", lambda p, m: real(p, m) and "ro" not in str(p)
        )
        (tmp_path / "ro").mkdir()
    sweep = tmp_path / "s.yaml"
    sweep.write_text(
        yaml.safe_dump({"name": "s", "base": {k: TINY[k] for k in TINY if k != "name"}})
    )
    src = tmp_path / "g"
    (src / "task_events").mkdir(parents=True)
    argv = {
        "run": ["run", str(_config(tmp_path)), "--no-progress"],
        "sweep": ["sweep", str(sweep), "--executor", "local:1", "--no-progress"],
        "convert": ["trace", "convert", "google-2011", str(src), "--no-progress"],
        "synth": ["trace", "synth", "--tasks", "10"],
        "properties": ["properties", "--instances", "2"],
    }[which]
    _refused([*argv, "--out", str(out)], capsys, rf"^fairsim: error: {message}")
    assert (tmp_path / "afile").read_text() == "x"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "cluster.servers=1000000000000",
            r"^fairsim: error: config: cluster\.servers: 1000000000000 servers need about "
            r"[\d.]+ TB of memory \(estimate\), more than this machine's [\d.]+ [GMT]B$",
        ),
        (
            "trace.n_tasks=1000000000000",
            r"^fairsim: error: config: trace\.n_tasks: 1000000000000 tasks need about [\d.]+ TB",
        ),
        (  # scientific notation as users write it (YAML 1.2; YAML 1.1 reads a string)
            "cluster.servers=1e12",
            r"^fairsim: error: config: cluster\.servers: 1000000000000 servers need about ",
        ),
        (
            "trace.n_tasks=1E12",
            r"^fairsim: error: config: trace\.n_tasks: 1000000000000 tasks need about [\d.]+ TB",
        ),
        (
            "collect.utilization_interval_s=1e-6",
            r"^fairsim: error: config: collect\.utilization_interval_s: 1e-06 s gives "
            r"66,854,180,808 utilisation samples over 66854\.2 s, more than the 10,000,000 ",
        ),
        (
            "collect.utilization_interval_s=1.0e-6",
            r"^fairsim: error: config: collect\.utilization_interval_s: 1e-06 s gives "
            r"66,854,180,808 utilisation samples over 66854\.2 s, more than the 10,000,000 a "
            r"run may record \(mean utilisation is exact at any interval; 0\.0067 s stays "
            r"within\)$",
        ),
        ("seed=-1", r"^fairsim: error: config: seed: .*greater than or equal to 0 \(got -1\)$"),
        # a boolean is not a number (pydantic reads true as 1: cluster.servers: true ran 1 server)
        (
            "cluster.servers=true",
            r"^fairsim: error: config: cluster: servers: True is a boolean, expected a number$",
        ),
        ("seed=true", r"^fairsim: error: config: seed: True is a boolean, expected a number$"),
        (
            "schedulers=[bf-drfh",
            r"^fairsim: error: --set 'schedulers=\[bf-drfh': the value is not valid YAML "
            r"\(expected ',' or '\]', but got '<stream end>'\)$",
        ),
    ],
)
def test_sizes_and_values_refused_before_allocating(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], override: str, message: str
) -> None:
    _refused(
        ["run", str(_config(tmp_path)), "--set", override, "--out", str(tmp_path / "o")],
        capsys,
        message,
        tmp_path / "o",
    )


def test_utilisation_grid_of_more_than_ten_million_samples_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fairsim.scenario.config import MAX_UTILIZATION_SAMPLES, parse_config

    assert MAX_UTILIZATION_SAMPLES == 10_000_000
    # 1e-6 s over 20 s: 20,000,001 samples, about 1.4 GB by the memory estimate alone (which let
    # it through on any machine with more memory, and the run then failed while plotting).
    short = {**TINY, "collect": {"utilization_interval_s": 1e-6, "horizon_s": 20}}
    with pytest.raises(
        ConfigError,
        match=r"^config: collect\.utilization_interval_s: 1e-06 s gives 20,000,001 utilisation "
        r"samples over 20 s, more than the 10,000,000 a run may record \(mean utilisation is "
        r"exact at any interval; 2\.1e-06 s stays within\)$",
    ):
        parse_config(short)
    short["collect"]["utilization_interval_s"] = 2.1e-6  # 9,523,810 samples
    assert parse_config(short).collect.utilization_interval_s == 2.1e-6
    # A synthetic trace's window is known once its tasks are drawn: refused before the
    # simulation, and nothing is written.
    data = {**TINY, "trace": {**TINY["trace"], "duration_s": 20}}
    data["collect"] = {"utilization_interval_s": 1e-6}
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o"), "--no-progress"],
        capsys,
        r"^fairsim: error: config: collect\.utilization_interval_s: 1e-06 s gives "
        r"19,896,824 utilisation samples over 19\.8968 s, more than the 10,000,000 a run may "
        r"record \(mean utilisation is exact at any interval; 2e-06 s stays within\)$",
        tmp_path / "o",
    )


def test_fairness_interval_of_too_many_instants_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 39: ``collect.fairness.interval_s: 1e-9`` on the Google hour (3.6e12 instants)
    ended in a traceback (numpy could not allocate the grid); it is refused up front, in one
    line with the count and the limit, and so is a synthetic window known only once drawn."""
    from fairsim.scenario.config import MAX_FAIRNESS_INSTANTS, parse_config

    assert MAX_FAIRNESS_INSTANTS == 100_000
    _refused(
        [
            "run",
            str(ROOT / "configs" / "google-1h.yaml"),
            "--set",
            "collect.fairness.interval_s=1e-9",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
        r"^fairsim: error: config: collect\.fairness\.interval_s: 1e-09 s gives "
        r"3,600,000,000,001 instants over 3600 s, more than the 100,000 a run may sample "
        r"\(each instant solves the reference mechanism; 0\.037 s stays within\)$",
        tmp_path / "o",
    )
    # 0.036 s over 3600 s: 100,001 instants, one too many; 0.037 s: 97,298
    hour = {**TINY, "collect": {"horizon_s": 3600, "fairness": {"interval_s": 0.036}}}
    with pytest.raises(ConfigError, match=r"gives 100,001 instants over 3600 s"):
        parse_config(hour)
    hour["collect"]["fairness"]["interval_s"] = 0.037
    assert parse_config(hour).collect.fairness is not None
    data = {**TINY, "trace": {**TINY["trace"], "duration_s": 20}}
    data["collect"] = {"utilization_interval_s": 1, "fairness": {"interval_s": 1e-4}}
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o"), "--no-progress"],
        capsys,
        r"^fairsim: error: config: collect\.fairness\.interval_s: 0\.0001 s gives 198,969 "
        r"instants over 19\.8968 s, more than the 100,000 a run may sample",
        tmp_path / "o",
    )
    # the utilisation grid's count reads as a number however long the window
    far = {**TINY, "collect": {"utilization_interval_s": 1e-6, "horizon_s": 1e300}}
    with pytest.raises(ConfigError, match=r"1e-06 s gives 1e\+306 utilisation samples over"):
        parse_config(far)


def test_config_not_utf8_deep_json_and_non_parquet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("name: caf\xe9\n".encode("latin-1"))
    _refused(
        ["run", str(bad)],
        capsys,
        r"^fairsim: error: config: '.*latin1\.yaml' is not UTF-8 text \(byte 0xe9 at offset 9\)$",
    )
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    _refused(
        ["solve", "drf", str(deep)],
        capsys,
        r"^fairsim: error: instance: .*deep\.json is nested too deeply to be an instance$",
    )
    (tmp_path / "canon").mkdir()
    (tmp_path / "canon" / "tasks.parquet").write_text("not parquet")
    data = {**TINY, "trace": {"format": "canonical", "path": "canon"}}
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o")],
        capsys,
        r"^fairsim: error: trace\.path: '.*canon/tasks\.parquet' is not a Parquet file",
        tmp_path / "o",
    )


# -- 4. garbage accepted with exit 0


@pytest.mark.parametrize(
    ("demand", "message"),
    [
        ([-0.1, 0.1], r"trace\.users\.0\.demand: demand must be a non-empty list of numbers >= 0"),
        ([".nan", 0.1], r"trace\.users\.0\.demand\.0: Input should be a finite number \(got nan\)"),
    ],
)
def test_inline_users_with_bad_demand_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], demand: list, message: str
) -> None:
    text = yaml.safe_dump({**TINY, "trace": {"format": "inline", "users": []}})
    text = text.replace(
        "users: []",
        f"users: [{{name: a, demand: [{demand[0]}, {demand[1]}], tasks: 3, run_s: 1}}]",
    )
    path = tmp_path / "c.yaml"
    path.write_text(text)
    _refused(["run", str(path), "--out", str(tmp_path / "o")], capsys, message, tmp_path / "o")


def test_name_is_one_folder_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(
        ["run", str(_config(tmp_path, {**TINY, "name": "../../escape"}))],
        capsys,
        r"^fairsim: error: config: name: '\.\./\.\./escape' is not a single folder name",
    )
    assert not (tmp_path.parent.parent / "escape").exists()


def test_json_is_strict_no_nan(tmp_path: Path) -> None:
    import json
    import math

    from fairsim.simulator.results import write_json

    write_json({"ratio": math.nan, "x": [math.inf, 1.5], "n": np.float64("nan")}, tmp_path / "a")
    text = (tmp_path / "a").read_text()
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"n": None, "ratio": None, "x": [None, 1.5]}


def test_empty_window_is_refused_not_written_as_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fairsim.traces.io import write_json_atomic

    syn = tmp_path / "syn"
    assert _main(["trace", "synth", "--tasks", "40", "--out", str(syn)], capsys)[0] == 0
    write_json_atomic({"window_s": [0.0, 100.0]}, syn / "conversion.json")
    data = {**TINY, "trace": {"format": "canonical", "path": "syn", "start_s": 1.0e6}}
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o")],
        capsys,
        r"^fairsim: error: trace\.start_s/end_s: no task of the trace is submitted in the window "
        r"\[1e\+06 s, 100 s\)",
        tmp_path / "o",
    )


def test_properties_instances_must_be_positive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(
        ["properties", "--instances", "-1", "--out", str(tmp_path / "p")],
        capsys,
        r"^fairsim: error: properties: argument --instances: -1 is not >= 1 "
        r"\(see fairsim properties --help\)$",
        tmp_path / "p",
    )


def test_huge_utilization_interval_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = {**TINY, "collect": {"utilization_interval_s": 1e300}}
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o")],
        capsys,
        r"^fairsim: error: config: collect\.utilization_interval_s: 1e\+300 s is longer than the "
        r"simulated window of [\d.e+]+ s .*no utilisation sample after the start",
        tmp_path / "o",
    )


def test_zero_capacity_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    classes = {"classes": [{"name": "A", "count": 2, "capacity": [0, 0]}]}
    _refused(
        ["run", str(_config(tmp_path, {**TINY, "cluster": classes}))],
        capsys,
        r"^fairsim: error: config: cluster\.classes\.0\.capacity: capacity must have a positive "
        r"entry, got \[0\.0, 0\.0\]$",
    )
    classes = {"classes": [{"name": "A", "count": 2, "capacity": [1, 0]}]}
    _refused(
        ["run", str(_config(tmp_path, {**TINY, "cluster": classes})), "--out", str(tmp_path / "o")],
        capsys,
        r"^fairsim: error: cluster: the pool's total capacity of mem is 0 \(utilisation would be "
        r"undefined\)",
        tmp_path / "o",
    )


def test_a_server_with_a_nan_or_negative_capacity_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A converted trace's servers.parquet with a NaN and a negative capacity: the first such
    server named, not "the pool's total capacity of cpu is 0" (NaN's total)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fairsim.traces.io import write_tasks

    folder = tmp_path / "trace"
    folder.mkdir()
    tasks = pd.DataFrame(
        {
            "job_id": [1, 2],
            "task_index": np.zeros(2, np.int32),
            "user": ["a", "b"],
            "submit_s": [0.0, 600.0],
            "cpu": [0.1, 0.1],
            "mem": [0.1, 0.1],
            "run_s": [5.0, 5.0],
            "end_state": "finished",
            "attempts": 1,
            "instances": 1,
            "constraint": None,
            "parents": None,
        }
    )
    write_tasks(tasks, folder / "tasks.parquet")
    # written as they are: write_servers refuses the NaN (as a null)
    servers = pa.table(
        {
            "server": ["m1", "m2", "m3"],
            "cpu": pa.array([0.5, np.nan, -1.0], from_pandas=False),
            "mem": [0.5, 0.5, 0.5],
        }
    )
    pq.write_table(servers, folder / "servers.parquet")
    data = {
        "name": "bad-servers",
        "trace": {"format": "canonical", "path": str(folder / "tasks.parquet")},
        "cluster": {"source": "trace"},
        "schedulers": ["drf"],
    }
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o")],
        capsys,
        r"^fairsim: error: cluster: server 'm2' has cpu capacity nan \(expected a finite number "
        r">= 0; 2 server\(s\) of 3 have such a capacity\)$",
        tmp_path / "o",
    )


# -- 5. friction


def test_relative_paths_are_relative_to_the_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = tmp_path / "configs"
    conf.mkdir()
    assert (
        _main(
            [
                "trace",
                "synth",
                "--tasks",
                "40",
                "--duration-s",
                "70756",
                "--out",
                str(tmp_path / "data"),
            ],
            capsys,
        )[0]
        == 0
    )
    data = {**TINY, "trace": {"format": "canonical", "path": "../data"}}
    cfg = _config(conf, data)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, stdout, err = _main(["run", str(cfg), "--out", "o", "--no-progress"], capsys)
    assert code == 0, err
    assert "40/40 tasks completed" in stdout
    assert (elsewhere / "o" / "bf-drfh" / "summary.json").is_file()  # --out: working directory
    # a --set path is relative to the working directory
    (elsewhere / "d2").mkdir()
    (tmp_path / "data" / "tasks.parquet").rename(elsewhere / "d2" / "tasks.parquet")
    argv = ["run", str(cfg), "--set", "trace.path=d2", "--out", "o2", "--no-progress"]
    assert _main(argv, capsys)[0] == 0


def test_shipped_configs_resolve_the_shared_folder_from_their_own_folder() -> None:
    """Their trace paths, relative to their own folder, reach ``shared`` beside the repository
    (wherever the working directory is)."""
    from fairsim.scenario.trace_cache import resolve_path

    shared = (ROOT.parent / "shared").resolve()
    n = 0
    for path in sorted((ROOT / "configs").rglob("*.yaml")):
        data = yaml.safe_load(path.read_text())
        trace = (data.get("base") or data).get("trace") or {}
        if isinstance(trace.get("path"), str):
            got = resolve_path(trace["path"], path.parent).resolve()
            assert got.is_relative_to(shared / "traces"), (path, got)
            n += 1
    assert n >= 9


def test_weighted_users_get_weighted_shares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Weighted DRF (and every DRF-family scheduler): 60 task slots of equal tasks, weights
    2 : 1 give 40 : 20 running tasks; trace.weights and default_weight 3 : 1 give 45 : 15."""
    import pandas as pd

    users = [
        {"name": "a", "demand": [0.1, 0.1], "tasks": 200, "run_s": 100, "weight": 2},
        {"name": "b", "demand": [0.1, 0.1], "tasks": 200, "run_s": 100},
    ]
    data = {
        "name": "w",
        "trace": {"format": "inline", "users": users},
        "cluster": {"classes": [{"name": "A", "count": 6, "capacity": [1, 1]}]},
        "schedulers": ["bf-drfh", "drf", "tsf", "psdsf", "slots-10"],
        "collect": {"utilization_interval_s": 10, "horizon_s": 50},
    }

    def running(out: Path, sched: str) -> dict[str, int]:
        t = pd.read_parquet(out / sched / "tasks.parquet")
        return t[(t.start_s <= 10) & t.server.notna()].groupby("user").size().to_dict()

    out = tmp_path / "o"
    assert _main(["run", str(_config(tmp_path, data)), "--out", str(out)], capsys)[0] == 0
    for sched in data["schedulers"]:
        assert running(out, sched) == {"a": 40, "b": 20}, sched
    users[0].pop("weight")
    data["trace"]["weights"] = {"b": 3.0}
    data["trace"]["default_weight"] = 1.0
    out = tmp_path / "o2"
    assert _main(["run", str(_config(tmp_path, data)), "--out", str(out)], capsys)[0] == 0
    assert running(out, "bf-drfh") == {"a": 15, "b": 45}
    data["trace"]["weights"] = {"c": 2.0}
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o3")],
        capsys,
        r"^fairsim: error: trace\.weights: user\(s\) 'c' submit no task in the simulated window "
        r"\(2 users do\)$",
        tmp_path / "o3",
    )


@pytest.mark.parametrize(
    ("command", "needles"),
    [
        (
            ["run"],
            [
                "the scenario, a YAML file",
                "--overwrite",
                "KEY=VALUE",
                "scheduler names: slots-<S>",
                "bf-drfh",
                "psdsf",
                "relative to the config file's folder",
            ],
        ),
        (
            ["solve"],
            [
                "exact mechanisms (fractional tasks): drf, drfh, c-drfh",
                "udrf",
                "online heuristics",
                "an exact mechanism or an online heuristic",
                "JSON file",
            ],
        ),
        (["trace", "synth"], ["number of tasks", "random seed", "--overwrite", "output folder"]),
        (["properties"], ["instances to check", "mechanisms: af, bmf"]),
    ],
)
def test_help_describes_arguments_and_lists_names(
    capsys: pytest.CaptureFixture[str], command: list[str], needles: list[str]
) -> None:
    code, out, _ = _main([*command, "--help"], capsys)
    assert code == 0
    text = " ".join(out.split())
    for needle in needles:
        assert needle in text, needle


def test_config_path_that_is_a_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _refused(
        ["run", str(tmp_path)],
        capsys,
        r"^fairsim: error: config: '.*' is a directory, not a YAML file$",
    )


def _write_into(dest: Path, name: str, *, overwrite: bool = False, then: object = None) -> None:
    """Write ``name`` into ``atomic_dir(dest)``; ``then`` raises it (an exception instance) or,
    if a Path, makes another writer create that folder first."""
    from fairsim.atomic import atomic_dir

    with atomic_dir(dest, overwrite=overwrite) as tmp:
        (tmp / name).write_text(name)
        if isinstance(then, BaseException):
            raise then
        if isinstance(then, Path):
            then.mkdir()
            (then / "theirs").write_text("t")


def test_atomic_dir_is_the_one_output_writer(tmp_path: Path) -> None:
    from fairsim.errors import OutputError

    dest = tmp_path / "a" / "b" / "out"
    with pytest.raises(ZeroDivisionError):
        _write_into(dest, "half", then=ZeroDivisionError())
    assert not (tmp_path / "a").exists()  # created parents removed too
    _write_into(dest, "v1")
    assert [p.name for p in dest.iterdir()] == ["v1"]
    with pytest.raises(KeyboardInterrupt):
        _write_into(dest, "v2", overwrite=True, then=KeyboardInterrupt())
    assert [p.name for p in dest.iterdir()] == ["v1"]  # the earlier result is kept
    _write_into(dest, "v2", overwrite=True)
    assert [p.name for p in dest.iterdir()] == ["v2"]  # replaced whole
    race = tmp_path / "race"
    with pytest.raises(OutputError, match=r"another command write there meanwhile"):
        _write_into(race, "mine", then=race)
    assert [p.name for p in race.iterdir()] == ["theirs"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "race"]
    assert not list((tmp_path / "a" / "b").glob(".*"))


def test_synthetic_window_scales_unless_given(tmp_path: Path) -> None:
    """trace.duration_s: null spreads n_tasks at the sample's 8.675 tasks/s; a value fixes it."""
    from fairsim.scenario.workload import resolve_workload

    for duration, window in ((None, 3_000 / 8.675), (7_200.0, 7_200.0)):
        trace = {"format": "synthetic", "n_tasks": 3_000, "duration_s": duration}
        cfg = parse_config({**BASE, "trace": trace, "collect": {"utilization_interval_s": 10}})
        w = resolve_workload(cfg)
        assert w.last_submit_s is not None
        assert 0.9 * window < w.last_submit_s < window * 1.0001, (duration, w.last_submit_s)


def test_cli_trace_synth_duration(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    def synth(*extra: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "fairsim.cli", "trace", "synth"]
        return subprocess.run([*cmd, "--tasks", "500", *extra], capture_output=True, text=True)

    bad = synth("--duration-s", "-5", "--out", str(tmp_path / "bad"))
    assert bad.returncode == 2 and "--duration-s: '-5' is not a positive" in bad.stderr
    assert not (tmp_path / "bad").exists()
    ok = synth("--duration-s", "100", "--out", str(tmp_path / "ok"))
    assert ok.returncode == 0, ok.stderr
    submit = pq.read_table(tmp_path / "ok" / "tasks.parquet").column("submit_s").to_numpy()
    assert 0 <= submit.min() and submit.max() < 100


def test_short_synthetic_window_suggests_duration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """200 tasks at the sample's rate span 23 s, less than a 60 s grid: the error says how to
    get a longer window."""
    data = {**BASE, "trace": {"format": "synthetic", "n_tasks": 200}}
    code, _out, err = _main(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o")], capsys
    )
    assert code == 2
    assert err.count("\n") == 1 and "give trace.duration_s for a longer one" in err


def test_sigterm_unwinds_like_ctrl_c(tmp_path: Path) -> None:
    """SIGTERM (``timeout``, a batch scheduler, ``kill``) killed the process where it stood and
    left its hidden temporary folder (``.<out>.<random>.tmp``); now the command unwinds as on
    Ctrl-C: exit status 143, one line, nothing left."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "props"
    cmd = [sys.executable, "-m", "fairsim.cli", "properties", "--instances", "99999999"]
    proc = subprocess.Popen(
        [*cmd, "--mechanism", "drf", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120  # a failure timeout: the folder appears within seconds
    while not list(tmp_path.glob(".props.*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.glob(".props.*")), "the command never started its output"
    os.kill(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err == "fairsim: terminated; no partial output was left\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("horizon", ["50", "100"])
def test_horizon_not_after_start_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], horizon: str
) -> None:
    """A horizon before trace.start_s was an engine traceback (``ValueError: horizon_s: 50.0 is
    before start_s 100.0``), a horizon equal to it an empty 0/0 run: both are refused in one
    line naming collect.horizon_s and trace.start_s."""
    _refused(
        [
            "run",
            str(_config(tmp_path)),
            "--out",
            str(tmp_path / "o"),
            "--set",
            "trace.start_s=100",
            "--set",
            f"collect.horizon_s={horizon}",
        ],
        capsys,
        rf"^fairsim: error: config: collect\.horizon_s: {horizon} s is not after the start of "
        r"the window, trace\.start_s 100 s: the simulation would end before any task is "
        r"simulated \(give a later horizon\)$",
        tmp_path / "o",
    )


def test_horizon_before_the_converted_data_start_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A converted trace whose data starts at 2 s moves trace.start_s 0 there: a horizon of
    1 s was an engine traceback."""
    from fairsim.traces.io import write_json_atomic

    syn = tmp_path / "syn"
    assert _main(["trace", "synth", "--tasks", "40", "--out", str(syn)], capsys)[0] == 0
    write_json_atomic({"window_s": [2.0, 1.0e6]}, syn / "conversion.json")
    data = {
        **TINY,
        "trace": {"format": "canonical", "path": "syn"},
        "collect": {"horizon_s": 1, "utilization_interval_s": 0.5},
    }
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o")],
        capsys,
        r"^fairsim: error: config: collect\.horizon_s: 1 s is not after the start of the "
        r"window, 2 s where the trace's data starts \(trace\.start_s 0 s moves there\): ",
        tmp_path / "o",
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        (
            "eligible",
            ["x"],
            r"trace\.users\.1\.eligible: \['x'\]: an inline user's placement constraint is read "
            r"only by 'fairsim experiment psdsf', not 'fairsim run'",
        ),
        (
            "windows",
            [[0, 5]],
            r"trace\.users\.1\.windows: \[\[0\.0, 5\.0\]\]: an inline user's backlog windows are "
            r"read only by 'fairsim experiment psdsf', not 'fairsim run'",
        ),
    ],
)
def test_inline_eligible_and_windows_say_what_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, value: object, message: str
) -> None:
    """The refusal called both keys 'backlogged users'; eligible is a placement constraint."""
    users = [
        {"name": "a", "tasks": 2, "demand": [0.5, 0.5], "run_s": 10},
        {"name": "b", "tasks": 2, "demand": [0.5, 0.5], "run_s": 10, key: value},
    ]
    data = {
        **TINY,
        "trace": {"format": "inline", "users": users},
        "cluster": {"classes": [{"name": "x", "count": 1, "capacity": [1, 1]}]},
        "collect": {"utilization_interval_s": 1},
    }
    _refused(
        ["run", str(_config(tmp_path, data)), "--out", str(tmp_path / "o")],
        capsys,
        rf"^fairsim: error: {message}$",
        tmp_path / "o",
    )


def test_duplicate_yaml_key_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A key given twice was silently overridden by the last (cluster servers 4, then 50: the
    run had 50 servers); the config, a sweep file and --set refuse it in one line."""
    text = (
        "name: dup\n"
        "trace: {format: synthetic, n_tasks: 60, duration_s: 600}\n"
        "cluster: {servers: 4}\n"
        "schedulers: [bf-drfh]\n"
        "cluster: {servers: 50}\n"
    )
    (tmp_path / "c.yaml").write_text(text)
    _refused(
        ["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "o")],
        capsys,
        r"^fairsim: error: config: \S*c\.yaml is not valid YAML: duplicate key 'cluster' at "
        r"line 5 \(first given at line 3; YAML forbids a key twice in one mapping\)$",
        tmp_path / "o",
    )
    sweep = "name: s\nbase: {trace: {format: synthetic, n_tasks: 60}}\nseeds: [1]\nseeds: [2]\n"
    (tmp_path / "s.yaml").write_text(sweep)
    _refused(
        ["sweep", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "so")],
        capsys,
        r"^fairsim: error: sweep: \S*s\.yaml is not valid YAML: duplicate key 'seeds' at line 4 "
        r"\(first given at line 3;",
        tmp_path / "so",
    )
    _refused(
        [
            "run",
            str(_config(tmp_path)),
            "--out",
            str(tmp_path / "o"),
            "--set",
            "cluster={servers: 1, servers: 2}",
        ],
        capsys,
        r"^fairsim: error: --set 'cluster=\{servers: 1, servers: 2\}': the value is not valid "
        r"YAML \(duplicate key 'servers' at line 1 \(first given at line 1;",
        tmp_path / "o",
    )


def test_a_merge_key_may_still_be_overridden() -> None:
    from fairsim.scenario.config import yaml_load

    text = "a: &a {servers: 4, source: table-i}\nb:\n  <<: *a\n  servers: 50\n"
    assert yaml_load(text)["b"] == {"servers": 50, "source": "table-i"}
