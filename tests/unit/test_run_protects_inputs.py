"""``fairsim run --overwrite`` and ``fairsim.simulate(..., overwrite=True)`` never replace a
folder that is, holds or lies inside an input of the config: its ``trace.path``,
``trace.cache_dir`` or ``cluster.path`` (they protected the YAML file only, so ``--out data``
over a config reading ``data/syn`` deleted the trace and wrote the run there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import fairsim
from fairsim.cli import main
from fairsim.errors import OutputError


def _trace(tmp_path: Path) -> Path:
    """A canonical trace at ``tmp_path/data/syn`` (``fairsim trace synth``)."""
    syn = tmp_path / "data" / "syn"
    assert main(["trace", "synth", "--tasks", "50", "--duration-s", "3600", "--out", str(syn)]) == 0
    return syn


def _config(tmp_path: Path, **more: object) -> Path:
    data = {
        "name": "c",
        "trace": {"format": "canonical", "path": "data/syn"},  # relative to the config's folder
        "cluster": {"servers": 5},
        "schedulers": ["ff-drfh"],
        **more,
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_run_overwrite_never_replaces_the_trace_or_what_holds_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    syn = _trace(tmp_path)
    cfg = _config(tmp_path)
    run = ["run", str(cfg), "--no-progress", "--overwrite", "--out"]
    data = tmp_path / "data"
    assert _refused([*run, str(data)], capsys) == (
        f"fairsim: error: --out: refusing to replace {str(data)!r}: it holds {str(syn)!r}"
    )
    assert _refused([*run, str(syn)], capsys) == (
        f"fairsim: error: --out: refusing to replace {str(syn)!r}: it is an input"
    )
    assert [p.name for p in syn.iterdir()] == ["tasks.parquet"]
    assert [p.name for p in data.iterdir()] == ["syn"]
    assert main([*run, str(tmp_path / "out")]) == 0  # elsewhere: written


def test_run_overwrite_never_replaces_the_cache_or_machine_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _trace(tmp_path)
    cfg = _config(
        tmp_path,
        trace={"format": "synthetic", "n_tasks": 50, "duration_s": 3600, "cache_dir": "cache"},
    )
    cache = tmp_path / "cache"
    (cache / "kept").mkdir(parents=True)
    line = _refused(["run", str(cfg), "--overwrite", "--out", str(cache)], capsys)
    assert line == f"fairsim: error: --out: refusing to replace {str(cache)!r}: it is an input"
    assert (cache / "kept").is_dir()
    machines = tmp_path / "machines"
    (machines / "machine_events").mkdir(parents=True)
    cfg = _config(tmp_path, cluster={"servers": 5, "source": "machine-events", "path": "machines"})
    line = _refused(["run", str(cfg), "--overwrite", "--out", str(tmp_path)], capsys)
    assert line == (
        f"fairsim: error: --out: refusing to replace {str(tmp_path)!r}: it holds "
        f"{str(tmp_path / 'c.yaml')!r}"
    )
    line = _refused(
        ["run", str(cfg), "--overwrite", "--out", str(machines / "machine_events")], capsys
    )
    assert line == (
        f"fairsim: error: --out: refusing to replace {str(machines / 'machine_events')!r}: it "
        f"lies inside the input folder {str(machines)!r}"
    )
    assert (machines / "machine_events").is_dir()


def test_simulate_overwrite_never_replaces_the_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python API protects the inputs of a mapping too (relative to the working
    directory), where it protected nothing."""
    syn = _trace(tmp_path)
    monkeypatch.chdir(tmp_path)
    cfg = yaml.safe_load(_config(tmp_path).read_text())
    with pytest.raises(OutputError) as err:
        fairsim.simulate(cfg, out="data", overwrite=True)
    assert str(err.value) == (f"out: refusing to replace 'data': it holds {str(syn)!r}")
    with pytest.raises(
        OutputError, match=re.escape("refusing to replace 'data/syn': it is an input")
    ):
        fairsim.simulate(fairsim.RunConfig.model_validate(cfg), out="data/syn", overwrite=True)
    assert [p.name for p in syn.iterdir()] == ["tasks.parquet"]


def test_sweep_out_over_the_trace_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sweep never replaces its --out: a trace folder, or a folder holding one, is refused as
    not a sweep's output."""
    syn = _trace(tmp_path)
    base = yaml.safe_load(_config(tmp_path).read_text())
    del base["name"]
    sweep = tmp_path / "s.yaml"
    sweep.write_text(yaml.safe_dump({"name": "s", "base": base, "seeds": [1]}))
    for out in (syn, tmp_path / "data"):
        line = _refused(["sweep", str(sweep), "--no-progress", "--out", str(out)], capsys)
        assert line == (
            f"fairsim: error: --out: {str(out)!r} is a non-empty folder that is not a sweep's "
            "output (no runs.parquet); choose another folder"
        )
    assert [p.name for p in syn.iterdir()] == ["tasks.parquet"]
