"""The benchmarks' one target record, their results files, the child-process memory helper and
the table of docs/bench.md generated from docs/bench/results.json (benchmarks/targets.py,
benchmarks/child.py). Structure and semantics only, never speed targets."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import pytest

from benchmarks import bench_dynamic, bench_exact, bench_online
from benchmarks.child import child_json, run_child
from benchmarks.targets import (
    BENCHMARKS,
    COMMITTED,
    PAGE,
    TABLE_BEGIN,
    TABLE_END,
    Target,
    load_committed,
    machine_text,
    main,
    merge,
    page_with_table,
    read_record,
    start,
    table,
    write_result,
)


@pytest.mark.parametrize(
    ("value", "direction", "limit", "met"),
    [
        (2.0, ">=", 2.0, True),
        (2.0, ">", 2.0, False),
        (2.0, "<=", 2.0, True),
        (2.0, "<", 2.0, False),
        (1.0, "<", 2.0, True),
        (3.0, ">=", 2.0, True),
        (None, ">=", 2.0, False),  # a failed measurement never meets its target
        (math.nan, "<=", 2.0, False),
    ],
)
def test_met_follows_value_direction_and_limit(
    value: float | None, direction: str, limit: float, met: bool
) -> None:
    t = Target.check("x", "what", value, "s", direction, limit)  # type: ignore[arg-type]
    assert t.met is met
    assert Target.from_json(json.loads(json.dumps(t.to_json()))) == t


def test_a_record_that_contradicts_itself_is_refused() -> None:
    good = Target.check("x", "what", 3.0, "MB", "<", 4.0).to_json()
    with pytest.raises(ValueError, match=r"met: False for 'x', but 3.0 < 4.0 is True"):
        Target.from_json({**good, "met": False})
    with pytest.raises(ValueError, match=r"direction: '=>' is not one of"):
        Target.from_json({**good, "direction": "=>"})
    with pytest.raises(ValueError, match=r"keys \[.*'pass'.*\] differ from the fields"):
        Target.from_json({**{k: v for k, v in good.items() if k != "met"}, "pass": True})


def test_targets_read_for_people() -> None:
    t = Target.check("s", "FF-DRFH tasks/s", 113_941.2, "tasks/s", ">=", 100_000)
    assert (t.limit_text(), t.value_text()) == ("≥ 100,000 tasks/s", "113,941 tasks/s")
    r = Target.check("r", "ratio", 2.034, "×", "<=", 1.5)
    assert (r.limit_text(), r.value_text()) == ("≤ 1.5×", "2.03×")
    assert Target.check("w", "wall", 534.5, "s", "<", 600).value_text() == "534.5 s"
    assert Target.check("f", "failed", None, "MB", "<", 1).value_text() == "—"
    assert machine_text({"cpu_model": "AMD EPYC", "cores": 2, "memory_mb": 24_105.6}) == (
        "AMD EPYC, 2 cores, 23.5 GB"
    )
    assert machine_text({"cpu_model": None, "cores": 2}) == "unknown CPU, 2 cores"
    assert machine_text({"cpu_model": None, "cores": None}) == machine_text(None) == "unknown"


def test_a_result_record_names_its_commit_and_machine(tmp_path: Path) -> None:
    run = start()
    assert run.commit is not None and len(run.commit.split("-")[0]) == 40  # a git checkout
    assert run.machine["cores"] >= 1 and run.machine["memory_mb"] > 0
    assert 1.0 < run.machine["python_loop_ms"] < 60_000.0  # 2 million multiply-adds
    t = Target.check("x", "what", 1.0, "", "<", 2.0)
    text = write_result(tmp_path, run.record("exact", [t], points=[1, 2]), "# report\n")
    record = read_record(tmp_path / "exact.json")
    assert list(record) == ["benchmark", "started", "commit", "machine", "targets", "points"]
    assert record["targets"] == [t.to_json()] and record["commit"] == run.commit
    assert text == (tmp_path / "exact.md").read_text()
    assert text.startswith("# report\n\n## Targets\n") and "| what < 2 | 1 | yes | — |" in text
    with pytest.raises(ValueError, match=r"benchmark: 'nope' is not one of"):
        run.record("nope", [t])
    older = {
        **record,
        "machine": {k: v for k, v in record["machine"].items() if k != "python_loop_ms"},
    }
    (tmp_path / "exact.json").write_text(json.dumps(older))  # written before the key existed
    assert read_record(tmp_path / "exact.json")["machine"] == older["machine"]
    (tmp_path / "exact.json").write_text(json.dumps({**record, "machine": {"cpu_model": "x"}}))
    with pytest.raises(ValueError, match=r"exact.json: machine keys \['cpu_model'\]"):
        read_record(tmp_path / "exact.json")
    (tmp_path / "fairness.json").write_text(json.dumps({"benchmark": "fairness", "pass": True}))
    with pytest.raises(ValueError, match=r"fairness.json: not a results record"):
        read_record(tmp_path / "fairness.json")


def test_the_child_helper_measures_the_childs_own_peak() -> None:
    """The parent holds 400 MB; a small child's peak is its own (not the parent's, as
    ``ru_maxrss`` of a child started directly would be), and a child that allocates 300 MB
    shows them."""
    ballast = bytearray(400 * 2**20)
    ballast[::4096] = b"x" * len(ballast[::4096])  # touch every page
    small = run_child([sys.executable, "-c", "pass"])
    big = run_child(
        [sys.executable, "-c", "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096])"]
    )
    del ballast
    assert small.returncode == big.returncode == 0 and small.error is None
    assert small.peak_rss_mb < 100
    assert 300 < big.peak_rss_mb < 400
    assert big.cpu_s > 0 and big.wall_s > 0
    out = child_json([sys.executable, "-c", "print('noise'); print('{\"a\": 1}')"])
    assert out["a"] == 1 and out["peak_rss_mb"] > 0
    failed = child_json([sys.executable, "-c", "import sys; sys.exit('bad input')"])
    assert failed == {"error": "exit 1: bad input"}
    slow = run_child([sys.executable, "-c", "import time; time.sleep(30)"], timeout_s=0.5)
    assert slow.returncode is None and slow.error == "timed out" and slow.wall_s < 10


def _shape(path: Path, benchmark: str) -> list[Target]:
    record = read_record(path)
    assert record["benchmark"] == benchmark
    assert (path.with_suffix(".md")).read_text().rstrip().endswith("|")  # ends with its targets
    return [Target.from_json(t) for t in record["targets"]]


def test_bench_online_writes_the_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bench_online's main, --quick on 2,000 tasks (two child processes): the file starts with the
    commit, the machine and one target per scheduler."""
    monkeypatch.setattr(bench_online, "TASK_SIZES_QUICK", (2_000,))
    argv = ["--only", "tasks", "--quick", "--no-progress", "--out", str(tmp_path)]
    assert bench_online.main(argv) == 0
    targets = _shape(tmp_path / "tasks.json", "tasks")
    assert [(t.name, t.value, t.met) for t in targets] == [
        ("bf-drfh cost(2,000) / cost(2,000)", 1.0, True),
        ("ff-drfh cost(2,000) / cost(2,000)", 1.0, True),
    ]
    points = read_record(tmp_path / "tasks.json")["points"]
    assert all(p["rss_isolated"] and 50 < p["peak_rss_mb"] < 2_048 for p in points)
    assert "| tasks | bf-drfh | 2,000 | 2,000 |" in (tmp_path / "summary.md").read_text()


def test_bench_dynamic_writes_the_record(tmp_path: Path) -> None:
    bench_dynamic.main(["--out", str(tmp_path), "--flows", "50", "--level", "4", "--repeats", "1"])
    targets = _shape(tmp_path / "dynamic.json", "dynamic")
    assert [t.name for t in targets] == ["bmf packets", "drfq packets", "pf packets", "markov"]
    markov = targets[-1]
    assert markov.measured == "Markov solve, level 4 (125 states), wall time"
    assert (markov.direction, markov.limit, markov.met) == ("<", 60.0, True)


def test_bench_exact_writes_the_record(tmp_path: Path) -> None:
    """--quick has no DRFH instant, so no target; the target comes from the instants' points."""
    argv = ["--quick", "--groups", "users", "--mechanisms", "drfh", "--out", str(tmp_path)]
    bench_exact.main(argv)
    assert _shape(tmp_path / "exact.json", "exact") == []
    points = [
        {"group": "google", "instant_s": 1e4, "users": 510, "mechanism": "drfh",
         "algorithm": "new", "total_ms": 9.5, "runs": 5},
        {"group": "google", "instant_s": 3e4, "users": 513, "mechanism": "drfh",
         "algorithm": "new", "skipped": "over 5 s"},
        {"group": "google", "instant_s": 3e4, "users": 513, "mechanism": "tsf",
         "algorithm": "new", "total_ms": 1.0, "runs": 5},
    ]  # fmt: skip
    fast, slow = bench_exact.targets(points)
    assert (fast.name, fast.value, fast.met, fast.context) == (
        "drfh t=10000",
        9.5,
        True,
        "median of 5 runs",
    )
    assert (slow.value, slow.met, slow.context) == (None, False, "over 5 s")


def test_every_benchmark_writes_a_record_under_its_name() -> None:
    """The names the benchmark modules write records under (``run.record("name", ...)`` or
    ``paired_main("name", ...)``, and bench_online's five) are BENCHMARKS, the names the docs
    table knows."""
    folder = Path(bench_online.__file__).parent
    written = set(bench_online.BENCHMARKS)
    for path in sorted(folder.glob("bench_*.py")):
        if path.stem != "bench_online":
            (name,) = re.findall(r'(?:run\.record|paired_main)\(\s*"([\w-]+)"', path.read_text())
            written.add(name)
    assert sorted(written) == sorted(BENCHMARKS)


# --------------------------------------------------------------------------- the docs table


def test_the_table_in_docs_matches_the_committed_json() -> None:
    """docs/bench.md's table is what docs/bench/results.json generates (`python -m
    benchmarks.targets` rewrites it; `make bench` runs that)."""
    data = load_committed()
    page = PAGE.read_text(encoding="utf-8")
    assert page_with_table(page, data) == page, (
        "docs/bench.md's table differs from docs/bench/results.json: run "
        "`python -m benchmarks.targets` and commit both"
    )
    assert list(data["benchmarks"]) == list(BENCHMARKS)  # every benchmark has a row
    rows = page.split(TABLE_BEGIN)[1].split(TABLE_END)[0].strip().splitlines()[2:]
    n_targets = sum(len(e["targets"]) for e in data["benchmarks"].values())
    assert len(rows) == n_targets
    for name, entry in data["benchmarks"].items():
        short = (entry["commit"] or "unknown")[:7]
        mine = [r for r in rows if r.startswith(f"| `{name}` |")]
        assert mine and all(f"| {short} | " in r for r in mine), name
        assert entry["source"] == "measured" or entry["source"].endswith("at b6f55c4")


def test_merge_replaces_the_measured_benchmarks_only(tmp_path: Path) -> None:
    committed = load_committed()
    run = start()
    t = Target.check("ratio", "recorded over FF-DRFH", 1.5, "×", ">=", 1.0, "one pair")
    out = tmp_path / "results"
    write_result(out, run.record("recorded", [t], ratio=1.5))
    merged = merge(committed, [read_record(out / "recorded.json")])
    assert list(merged["benchmarks"]) == list(committed["benchmarks"])
    rec = merged["benchmarks"]["recorded"]
    assert (rec["source"], rec["commit"], rec["targets"]) == ("measured", run.commit, [t.to_json()])
    others = {k: v for k, v in merged["benchmarks"].items() if k != "recorded"}
    assert others == {k: v for k, v in committed["benchmarks"].items() if k != "recorded"}
    # the command: JSON and page updated together, then --check agrees; a page without markers fails
    json_path, page = tmp_path / "results.json", tmp_path / "bench.md"
    json_path.write_text(COMMITTED.read_text())
    page.write_text(f"# x\n\n{TABLE_BEGIN}\n{TABLE_END}\n\ntail\n")
    args = ["--results", str(out), "--json", str(json_path), "--page", str(page)]
    assert main(args) == 0
    assert load_committed(json_path) == merged
    assert page.read_text() == f"# x\n\n{TABLE_BEGIN}\n{table(merged)}{TABLE_END}\n\ntail\n"
    assert main([*args, "--check"]) == 0
    page.write_text("# no markers\n")
    assert main([*args, "--check"]) == 2
