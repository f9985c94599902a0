"""The generic run report compares schedulers on the same job set and gives n per curve."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from fairsim.scenario.config import RunConfig
from fairsim.scenario.output import run_to_folder
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S

CFG = {
    "name": "report-test",
    "seed": 3,
    "trace": {"format": "synthetic", "n_tasks": 3000, "duration_s": SAMPLE_WINDOW_S},
    "cluster": {"servers": 6, "source": "table-i"},
    "schedulers": ["slots-10", "bf-drfh"],
    "collect": {"utilization_interval_s": 60},
}


def test_report_has_common_job_set_and_own_numbers(tmp_path: Path) -> None:
    out = tmp_path / "o"
    summaries = run_to_folder(RunConfig.model_validate(CFG), out, progress=False)
    done = {
        s: set(
            pd.read_parquet(out / s / "jobs.parquet").dropna(subset=["completion_time_s"])["job_id"]
        )
        for s in CFG["schedulers"]
    }
    common = done["slots-10"] & done["bf-drfh"]
    assert 0 < len(common) < min(len(d) for d in done.values())  # the sets differ: a real test
    text = (out / "report.md").read_text()
    assert f"Same job set: the {len(common):,} jobs completed under every scheduler:" in text
    for s in CFG["schedulers"]:
        jobs = pd.read_parquet(out / s / "jobs.parquet").set_index("job_id")
        mean = jobs.loc[sorted(common), "completion_time_s"].mean()
        row = re.search(rf"^\| {s} \| {len(common):,} \| ([\d,]+) \|", text, re.M)
        assert row is not None and int(row.group(1).replace(",", "")) == round(mean)
        # the per-scheduler row reports its own completed jobs, and how every task ended
        s_json = json.loads((out / s / "summary.json").read_text())
        assert s_json == {**summaries[s]}
        assert s_json["jobs_completed"] == len(done[s])
        assert sum(s_json["ended"].values()) == s_json["tasks"]
    assert (out / "jct_cdf.png").is_file()


def test_decimate_keeps_each_bins_first_extremes_and_last() -> None:
    import numpy as np
    import pytest

    from fairsim.scenario.reporting.plotting import decimate

    y = np.array([5.0, 3, 9, 1, 7, 2, 8, 6, 4, 5])
    x = np.arange(10) * 0.5
    # One bin: first (5), maximum (9 at 2), minimum (1 at 3), last (5 at 9), in time order.
    xs, ys = decimate(x, y, max_points=4)
    assert xs.tolist() == [0.0, 1.0, 1.5, 4.5] and ys.tolist() == [5, 9, 1, 5]
    # Two bins of five: [5 3 9 1 7] keeps 0, 2, 3, 4; [2 8 6 4 5] keeps 5, 6, 9.
    xs, ys = decimate(x, y, max_points=8)
    assert (xs * 2).tolist() == [0, 2, 3, 4, 5, 6, 9] and ys.tolist() == [5, 9, 1, 7, 2, 8, 5]
    # Eleven points in two bins of six: the last bin is padded with its last point.
    y11 = np.append(y, 0.0)
    xs, ys = decimate(np.arange(11), y11, max_points=8)
    assert xs.tolist() == [0, 2, 3, 5, 6, 10] and ys.tolist() == [5, 9, 1, 2, 8, 0]
    # Short series come back whole.
    xs, ys = decimate(x, y, max_points=10)
    assert xs.tolist() == x.tolist() and ys.tolist() == y.tolist()
    with pytest.raises(ValueError, match=r"^decimate: max_points must be at least 4 \(got 3\)$"):
        decimate(x, y, max_points=3)
    with pytest.raises(ValueError, match=r"^decimate: x and y must be 1-d of one length"):
        decimate(x[:5], y)


def test_utilization_figure_of_five_million_samples_draws_a_bounded_line(tmp_path: Path) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fairsim.scenario.reporting.plotting import MAX_LINE_POINTS, save_figure
    from fairsim.scenario.reporting.run_report import utilization_figure
    from fairsim.simulator.results import write_table

    n = 5_000_000  # collect.utilization_interval_s: 1e-6 over 5 s
    t = np.arange(n) * 1e-6
    cpu = np.full(n, 0.4)
    cpu[3_141_592] = 0.995  # one sample's spike
    mem = 0.2 + 0.1 * (np.arange(n) % 2)  # alternates every sample: 0.2, 0.3, ...
    (tmp_path / "bf-drfh").mkdir()
    table = pa.table({"time_s": t, "cpu": cpu, "mem": mem})
    write_table(table, tmp_path / "bf-drfh" / "utilization.parquet")
    fig = utilization_figure(tmp_path, ["bf-drfh"], ["cpu", "mem"])
    (line_cpu,), (line_mem,) = (ax.get_lines() for ax in fig.axes)
    for line in (line_cpu, line_mem):
        x = np.asarray(line.get_xdata())
        assert 1000 <= len(x) <= MAX_LINE_POINTS
        assert x[0] == 0.0 and x[-1] == t[-1] / 3600.0  # the whole window
    y_cpu, y_mem = np.asarray(line_cpu.get_ydata()), np.asarray(line_mem.get_ydata())
    assert y_cpu.max() == 99.5 and y_cpu.min() == 40.0
    assert set(np.round(y_mem, 9)) == {20.0, 30.0}  # the band is drawn, not one of its edges
    assert save_figure(fig, tmp_path / "utilization.png").stat().st_size > 0
    assert pq.ParquetFile(tmp_path / "bf-drfh" / "utilization.parquet").metadata.num_rows == n
