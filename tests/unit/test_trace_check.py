"""``fairsim trace check``: a raw trace's own consistency (traces/check.py)."""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from fairsim.cli import main
from fairsim.traces.check import check_alibaba, check_google_2011

S = 1_000_000


def _row(t, job, task, ev, machine="", cpu="0.3", mem="0.2"):
    return f"{t},,{job},{task},{machine},{ev},u,0,0,{cpu},{mem},0,0"


def _write(folder: Path, name: str, rows: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(folder / name, "wt") as fh:
        fh.write("\n".join(rows) + "\n")


MACHINES = ["0,5,0,p,0.5,0.5", "0,6,0,p,1,1", "100,9,1,p,,"]  # 9 mentioned, no capacity


def _src(tmp_path: Path, part0: list[str], part1: list[str] | None = None) -> Path:
    src = tmp_path / "g"
    _write(src / "task_events", "part-00000-of-00500.csv.gz", part0)
    if part1 is not None:
        _write(src / "task_events", "part-00001-of-00500.csv.gz", part1)
    _write(src / "machine_events", "part-00000-of-00001.csv.gz", MACHINES)
    return src


CLEAN = [
    _row(0, 1, 0, 1, machine=5),  # running since before the window on 5
    _row(700 * S, 2, 0, 1, machine=6),
    _row(800 * S, 2, 0, 4, machine=6),
]


def test_a_consistent_trace_passes_every_check(tmp_path: Path) -> None:
    r = check_google_2011(_src(tmp_path, CLEAN), sample_s=100)
    c = r["checks"]
    assert c["events_out_of_order"]["rows_within_parts"] == 0
    assert c["runs_on_unknown_machines"]["schedules_on_unknown_machines"] == 0
    assert c["runs_on_unknown_machines"]["schedules_without_machine"] == 0
    assert c["scheduled_twice_without_end"]["schedules"] == 0
    assert c["requests_above_every_machine"]["tasks_cpu"] == 0
    o = c["overcommitted_machines"]
    assert [s["time_s"] for s in o["samples"]] == [600.0, 700.0]
    assert [s["running_tasks"] for s in o["samples"]] == [1, 2]
    assert o["end"]["time_s"] == 800.0
    assert o["end"]["running_tasks"] == 1
    assert o["max"]["overcommitted_cpu"] == 0
    assert o["end"]["requested_cpu"] == pytest.approx(0.3 / 1.5)


def test_every_check_can_fail(tmp_path: Path) -> None:
    part0 = [
        _row(0, 1, 0, 1, machine=5),  # 0.3 cpu on 5 (capacity 0.5)
        _row(700 * S, 1, 1, 1, machine=5),  # 0.6 on 5 now: over-committed in CPU
        _row(650 * S, 1, 2, 0),  # out of time order within the part
        _row(710 * S, 3, 0, 1, machine=77),  # a machine machine_events never mentions
        _row(710 * S, 3, 1, 1),  # no machine
        _row(720 * S, 4, 0, 1, machine=6, cpu="1.5"),  # above every machine's CPU
        _row(730 * S, 4, 0, 1, machine=6, cpu="1.5"),  # scheduled again without an end
        _row(900 * S, 1, 1, 4, machine=5),  # 1/1 ends: 5 back to 0.3
    ]
    part1 = [_row(850 * S, 5, 0, 0)]  # the next part starts before the previous one ended
    r = check_google_2011(_src(tmp_path, part0, part1), sample_s=100)
    c = r["checks"]
    assert c["events_out_of_order"] == {
        "supported": True, "rows_within_parts": 1, "parts_starting_before_previous_part": 1,
    }  # fmt: skip
    u = c["runs_on_unknown_machines"]
    assert (u["schedules_on_unknown_machines"], u["tasks"], u["schedules_without_machine"]) == (
        1, 1, 1,
    )  # fmt: skip
    assert c["scheduled_twice_without_end"] == {"supported": True, "schedules": 1, "tasks": 1}
    assert (c["requests_above_every_machine"]["tasks_cpu"], c["requests_above_every_machine"][
        "tasks_mem"]) == (1, 0)  # fmt: skip
    o = c["overcommitted_machines"]
    by_time = {s["time_s"]: s for s in o["samples"]}
    assert by_time[600.0]["overcommitted_cpu"] == 0
    assert by_time[800.0]["overcommitted_cpu"] == 2  # 5 (0.6 > 0.5) and 6 (1.5 > 1)
    assert by_time[800.0]["running_tasks"] == 5  # 1/0, 1/1, 3/0, 3/1, 4/0
    assert o["end"]["overcommitted_cpu"] == 1  # 6 only, once 1/1 ended
    assert o["end"]["requested_cpu"] == pytest.approx((0.3 + 1.5) / 1.5)
    assert o["max"]["overcommitted_cpu"] == 2
    assert o["machines_ever_holding_tasks"] == 3  # 5, 6 and the unknown 77


def test_cli_writes_json_and_a_readable_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _src(tmp_path, CLEAN)
    out = tmp_path / "check.json"
    argv = ["fairsim", "trace", "check", "google-2011", str(src), "--json", str(out)]
    monkeypatch.setattr(sys, "argv", [*argv, "--sample-s", "100"])
    assert main() == 0
    text = capsys.readouterr().out
    assert "runs on unknown machines: 0 SCHEDULE events" in text
    assert json.loads(out.read_text())["checks"]["overcommitted_machines"]["sample_s"] == 100


def test_cli_refuses_a_json_path_it_cannot_or_must_not_write_before_the_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--json over the trace's own file replaced it with JSON (exit 0); an existing folder or
    a path below a file was a traceback after the whole check; '' was silently ignored. Each
    is refused in one line, exit 2, before the trace is read."""
    import fairsim.traces.check as check

    src = _src(tmp_path, CLEAN)
    part = src / "task_events" / "part-00000-of-00500.csv.gz"
    before = part.read_bytes()
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "folder").mkdir()

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("the check ran")

    monkeypatch.setattr(check, "check_google_2011", never)
    cases = [
        (part, f"refusing to write {str(part)!r}: it lies inside the input folder {str(src)!r}"),
        (src / "check.json", f"refusing to write {str(src / 'check.json')!r}: it lies inside "
         f"the input folder {str(src)!r}"),
        (src, f"{str(src)!r} is an existing folder, not a file"),
        (tmp_path / "folder", f"{str(tmp_path / 'folder')!r} is an existing folder, not a file"),
        (tmp_path / "file.txt" / "x.json", f"{str(tmp_path / 'file.txt' / 'x.json')!r} is below "
         f"{str(tmp_path / 'file.txt')!r}, which is a file"),
        ("", "'' is not a file path"),
    ]  # fmt: skip
    for json_path, message in cases:
        argv = ["trace", "check", "google-2011", str(src), "--json", str(json_path)]
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err == f"fairsim: error: --json: {message}\n"
    assert part.read_bytes() == before
    assert sorted(p.name for p in src.rglob("*")) == [
        "machine_events", "part-00000-of-00001.csv.gz", "part-00000-of-00500.csv.gz",
        "task_events",
    ]  # fmt: skip


def test_sample_s_that_would_take_too_many_samples_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--sample-s 1e-5 on a short trace took a sample (and printed a line) every 10 µs, and
    below 0.5 µs the samples never advanced: the count is capped (MAX_CHECK_SAMPLES, as
    collect.utilization_interval_s is), refused in one line as soon as the events read reach
    it, and exactly at the end of the data when only the last event passes it."""
    from fairsim.errors import TraceError
    from fairsim.traces.check import MAX_CHECK_SAMPLES

    assert MAX_CHECK_SAMPLES == 100_000
    src = _src(tmp_path, CLEAN)  # runs from 600 s to 800 s
    argv = ["trace", "check", "google-2011", str(src), "--sample-s"]
    assert main([*argv, "1e-3"]) == 2
    assert capsys.readouterr().err == (
        "fairsim: error: --sample-s: 0.001 s gives at least 200,001 over-commitment samples "
        "(over the first 200 s from 600 s of the events read so far), more than the 100,000 "
        "trace check may take\n"
    )
    assert main([*argv, "1e-9"]) == 2
    assert capsys.readouterr().err == (
        "fairsim: error: --sample-s: 1e-09 s is below the trace's time step of 1 µs (its "
        "samples would never advance)\n"
    )
    # the runs end at 600 s; only a SUBMIT row reaches 800 s: the count is known at the end
    late = _src(tmp_path / "late", [_row(0, 1, 0, 1, machine=5), _row(800 * S, 2, 0, 0)])
    with pytest.raises(TraceError) as err:
        check_google_2011(late, sample_s=0.002, what="--sample-s")
    assert str(err.value) == (
        "--sample-s: 0.002 s gives 100,001 over-commitment samples over the 200 s from 600 s "
        "to the last event, more than the 100,000 trace check may take (0.0021 s stays within)"
    )
    o = check_google_2011(late, sample_s=0.0021)["checks"]["overcommitted_machines"]
    assert len(o["samples"]) + 1 == 95_239 + 1  # ceil(200 / 0.0021) samples and the end


def test_alibaba_says_what_it_cannot_check() -> None:
    from fairsim.traces.paths import shared_dir

    r = check_alibaba("alibaba-2017", shared_dir() / "traces" / "alibaba-2017")
    c = r["checks"]
    assert c["overcommitted_machines"] == {
        "supported": False, "why": "the format records no machine per task or instance",
    }  # fmt: skip
    assert not c["runs_on_unknown_machines"]["supported"]
    assert (c["requests_above_every_machine"]["tasks_cpu"], r["rows"]["tasks"]) == (0, 71_536)


@pytest.mark.slow
def test_real_sample_numbers(google_dir: Path) -> None:
    r = check_google_2011(google_dir)
    c = r["checks"]
    assert r["rows"] == {"task_events": 2_609_335, "unparseable_or_malformed": 0}
    assert c["events_out_of_order"]["rows_within_parts"] == 0
    assert c["runs_on_unknown_machines"]["schedules_on_unknown_machines"] == 3
    assert c["scheduled_twice_without_end"]["schedules"] == 0
    assert c["requests_above_every_machine"]["tasks_cpu"] == 0
    o = c["overcommitted_machines"]
    assert len(o["samples"]) == 20
    assert o["machines_ever_holding_tasks"] == 12_510
    end = o["end"]
    assert (end["time_s"], end["running_tasks"], end["machines_holding_tasks"]) == (
        70756.165077, 137_578, 12_482,
    )  # fmt: skip
    assert (end["overcommitted_cpu"], end["overcommitted_mem"]) == (10_277, 6_250)
    assert round(100 * end["requested_cpu"]) == 112
    assert round(100 * end["requested_mem"]) == 96
    assert (o["max"]["overcommitted_cpu"], o["max"]["overcommitted_mem"]) == (10_620, 6_932)
