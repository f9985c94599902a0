"""A scheduler shipped by another distribution (``tests/plugin_dist``: one module, one entry
point in the ``fairsim.schedulers`` group) is installed in isolation (``pip install --target``,
offline, no build isolation) and used by name like a built-in one: ``fairsim run``,
``fairsim sweep``, ``--help`` and ``fairsim.testing.check_scheduler``. Entry points that are
broken or clash with another name are refused with one line naming the entry point."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml

import fairsim
from fairsim.cli import main
from fairsim.errors import ConfigError, RegistryError
from fairsim.scenario.config import parse_config
from fairsim.schedulers import registry
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S

PLUGIN_DIST = Path(__file__).resolve().parents[1] / "plugin_dist"
FAIRSIM = Path(sys.executable).with_name("fairsim")  # the console script of this environment
BASE = {
    "trace": {"format": "synthetic", "n_tasks": 300, "duration_s": SAMPLE_WINDOW_S},
    "cluster": {"servers": 10, "source": "table-i"},
    "collect": {"utilization_interval_s": 600},
}


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plug-in distribution, built and installed into a folder of its own."""
    tmp = tmp_path_factory.mktemp("plugin")
    src = shutil.copytree(PLUGIN_DIST, tmp / "src")  # the build writes into its source folder
    site = tmp / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(site), str(src)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert (site / "fairsim_fifo_plugin.py").is_file()
    return site


def _run(site: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)


def test_plugin_runs_by_name_in_run_and_sweep(plugin_site: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "plug.yaml"
    cfg.write_text(yaml.safe_dump({"name": "plug", **BASE, "schedulers": ["fifo-plugin", "drf"]}))
    p = _run(plugin_site, str(FAIRSIM), "run", str(cfg), "--out", str(tmp_path / "run"))
    assert p.returncode == 0, p.stderr
    got = json.loads((tmp_path / "run" / "fifo-plugin" / "summary.json").read_text())
    drf = json.loads((tmp_path / "run" / "drf" / "summary.json").read_text())
    assert got["scheduler"] == "fifo-plugin" and got["tasks"] == drf["tasks"] == 300
    assert 0 < got["tasks_completed"] <= got["tasks"]

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(
        yaml.safe_dump(
            {
                "name": "plug-sweep",
                "base": {**BASE, "schedulers": ["fifo-plugin"]},
                "grid": {"cluster.servers": [5, 10]},
                "seeds": [1],
            }
        )
    )
    out = tmp_path / "sweep"
    p = _run(plugin_site, str(FAIRSIM), "sweep", str(sweep), "--out", str(out), "--no-progress")
    assert p.returncode == 0, p.stderr
    runs = pd.read_parquet(out / "runs.parquet")
    assert runs["scheduler"].tolist() == ["fifo-plugin"] * 2
    assert runs["status"].tolist() == ["ok"] * 2

    # without the distribution the name is unknown, and said so in one line
    p = _run(None, str(FAIRSIM), "run", str(cfg), "--out", str(tmp_path / "none"))
    assert p.returncode == 2
    assert p.stderr.startswith(
        "fairsim: error: config: schedulers: unknown scheduler 'fifo-plugin'"
    )
    assert p.stderr.count("\n") == 1


def test_plugin_passes_the_conformance_suite_and_is_listed(plugin_site: Path) -> None:
    code = (
        "import fairsim\n"
        "from fairsim.schedulers.registry import available, registrations\n"
        "fairsim.testing.check_scheduler('fifo-plugin')\n"
        "row = [r for r in registrations() if r.name == 'fifo-plugin'][0]\n"
        "print(available()[-1], row.origin)\n"
    )
    p = _run(plugin_site, sys.executable, "-c", code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == (
        "fifo-plugin entry point 'fifo-plugin = fairsim_fifo_plugin:Fifo' of distribution "
        "'fairsim-fifo-plugin'"
    )
    p = _run(plugin_site, str(FAIRSIM), "run", "--help")
    listed = " ".join(p.stdout.split())
    assert p.returncode == 0
    assert "udrf, udrf-backfill, hdrf, yarn-fair, kueue-fair, recorded, fifo-plugin" in listed


# --------------------------------------------------------------------------- broken entry points

BROKEN = """\
[fairsim.schedulers]
broken-import = fairsim_no_such_module:Fifo
broken-type = json:dumps
ff-drfh = json:loads
"""


@pytest.fixture
def broken_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An installed distribution (a dist-info folder on sys.path) with bad entry points."""
    info = tmp_path / "broken_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry._entry_points.cache_clear()
    yield
    registry._entry_points.cache_clear()


@pytest.mark.usefixtures("broken_dist")
def test_broken_entry_points_are_named() -> None:
    assert {"broken-import", "broken-type"} <= set(registry.available())  # listed, not imported
    origin = "the entry point 'broken-import = fairsim_no_such_module:Fifo' of distribution"
    with pytest.raises(
        RegistryError,
        match=rf"^scheduler 'broken-import': {origin} 'broken-plugin' cannot be loaded: "
        r"ModuleNotFoundError: No module named 'fairsim_no_such_module'$",
    ):
        registry.make_scheduler("broken-import")
    with pytest.raises(
        RegistryError,
        match=r"^scheduler 'broken-type': the entry point 'broken-type = json:dumps' of "
        r"distribution 'broken-plugin' names <function dumps .*>, not a subclass of "
        r"fairsim\.Scheduler$",
    ):
        registry.make_scheduler("broken-type")
    with pytest.raises(
        RegistryError,
        match=r"^scheduler 'ff-drfh' is defined twice: by fairsim and by the entry point "
        r"'ff-drfh = json:loads' of distribution 'broken-plugin'$",
    ):
        registry.resolve("ff-drfh")
    with pytest.raises(RegistryError, match=r"the name is taken by the entry point 'broken-type"):
        registry.register_scheduler("broken-type")(type("X", (fairsim.Scheduler,), {}))


@pytest.mark.usefixtures("broken_dist")
def test_broken_entry_point_in_a_config_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = {"name": "b", **BASE, "schedulers": ["broken-import"]}
    with pytest.raises(ConfigError, match=r"^config: schedulers: scheduler 'broken-import': "):
        parse_config(data)
    cfg = tmp_path / "b.yaml"
    cfg.write_text(yaml.safe_dump(data))
    assert main(["run", str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fairsim: error: config: schedulers: scheduler 'broken-import': the ")
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()
