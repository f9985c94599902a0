"""``fairsim solve`` refuses what it cannot answer or read in one line naming the field and the
value (status 2), never with a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fairsim.cli import main


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``fairsim ARGV``; it must exit 2 with one line on stderr and nothing on stdout."""
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert len(err.splitlines()) == 1, err
    return err.strip()


def _file(tmp_path: Path, data: Any, name: str = "inst.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def _alternating(n_users: int) -> dict[str, Any]:
    """``n_users`` users, <1, 2> and <2, 1> in turn: each may be bottlenecked on either resource."""
    return {
        "resources": ["cpu", "mem"],
        "servers": [{"id": "s1", "capacity": [10000, 10000]}],
        "users": [{"id": f"u{i}", "demand": [1, 2] if i % 2 else [2, 1]} for i in range(n_users)],
    }


@pytest.mark.parametrize(("n_users", "count"), [(30, "1073741824"), (1100, "about 1.36e+331")])
def test_bmf_with_too_many_mappings_is_one_line(
    n_users: int, count: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 2**1100 mappings overflowed a float (OverflowError) instead of this line
    path = _file(tmp_path, _alternating(n_users))
    want = (
        f"fairsim: error: bmf: {count} bottleneck mappings to enumerate (limit 200000); "
        "use fewer users or resources"
    )
    assert _refused(["solve", "bmf", path], capsys) == want
    out = tmp_path / "pr3"
    argv = ["properties", "--instance", path, "--mechanism", "bmf", "--out", str(out)]
    assert _refused(argv, capsys) == want
    assert not out.exists()


def test_pf_above_its_solvers_size_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """2,000 users on 7 servers (14,000 variables) reached 11.5 GB in 50 s inside SLSQP; it is
    refused before any solve. 1,001 variables (1,001 users, one server) are one too many."""
    data = _alternating(2000)
    data["servers"] = [{"id": f"s{j}", "capacity": [10_000, 10_000]} for j in range(7)]
    want = (
        "fairsim: error: pf: 14,000 variables (users x servers that can serve them) is more "
        "than the 1,000 its solver takes on (SLSQP's memory grows with the square, its time "
        "with the cube); use fewer users or servers, or an online heuristic (pf --online)"
    )
    assert _refused(["solve", "pf", _file(tmp_path, data)], capsys) == want
    one_over = _file(tmp_path, _alternating(1001), "over.json")
    assert "pf: 1,001 variables" in _refused(["solve", "pf", one_over], capsys)


# Ghodsi et al. (DRF), Section 4: one server <9 CPU, 18 GB>; A = <1, 4>, B = <3, 1>.
DRF: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [9, 18]}],
    "users": [{"id": "a", "demand": [1, 4]}, {"id": "b", "demand": [3, 1]}],
}
#: 1 followed by 400 zeros: a JSON integer beyond float64's range (float() overflows).
HUGE = 10**400


def _patched(where: str, key: str, value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(DRF))
    data[where][0][key] = value
    return data


@pytest.mark.parametrize(
    ("where", "key", "value", "field"),
    [
        ("servers", "capacity", [HUGE, 18], "servers[0].capacity[0]: "),
        ("users", "demand", [1, HUGE], "users[0].demand[1]: "),
        ("users", "max_tasks", HUGE, "users[0].max_tasks: "),
        ("users", "weight", HUGE, "users[0].weight: "),
    ],
    ids=["capacity", "demand", "max_tasks", "weight"],
)
def test_an_integer_beyond_float64_is_refused_naming_the_field(
    where: str,
    key: str,
    value: Any,
    field: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # float(10**400) raised OverflowError (a traceback); 1e999 read as a float was refused
    path = _file(tmp_path, _patched(where, key, value))
    rel = "> 0" if key == "weight" else ">= 0"
    assert _refused(["solve", "drf", path], capsys) == (
        f"fairsim: error: {field}an integer of 401 digits is out of float64's range "
        f"(expected a finite number {rel})"
    )


def test_an_integer_python_cannot_read_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # beyond 4,300 digits json.loads itself raised ValueError (a traceback)
    path = tmp_path / "inst.json"
    text = json.dumps(DRF).replace("[9, 18]", "[1" + "0" * 5000 + ", 18]")
    path.write_text(text)
    assert _refused(["solve", "ff-drfh", str(path)], capsys) == (
        f"fairsim: error: instance: {path} holds an integer of 5001 digits, out of float64's "
        "range (Python reads at most 4300)"
    )


def _edited(data: dict[str, Any], edit: str, value: Any) -> dict[str, Any]:
    """``data`` with the dotted path ``edit`` (list indices as numbers) set to ``value``."""
    out = json.loads(json.dumps(data))
    node: Any = out
    *head, last = edit.split(".")
    for step in head:
        node = node[int(step)] if step.isdigit() else node[step]
    node[int(last) if last.isdigit() else last] = value
    return out


@pytest.mark.parametrize(
    ("edit", "value", "message"),
    [
        ("servers.0.foo", 1, "servers[0]: unknown key 'foo' (known: id, capacity)"),
        ("servers.0.id", None, "servers[0].id: expected a string, got null"),
        ("servers.0.id", 7, "servers[0].id: expected a string, got 7"),
        ("servers.0.id", [1, 2], "servers[0].id: expected a string, got [1, 2]"),
        ("servers.0.id", {"a": 1}, 'servers[0].id: expected a string, got {"a": 1}'),
        ("users.1.id", None, "users[1].id: expected a string, got null"),
        ("users.1.id", 2.5, "users[1].id: expected a string, got 2.5"),
        ("users.0.eligible", [1], "users[0].eligible[0]: expected a string, got 1"),
        ("resources", ["cpu", "cpu"], "resources[1]: duplicate 'cpu'"),
        ("resources", ["", ""], "resources[0]: empty name"),
    ],
)
def test_instance_fields_are_used_or_refused(
    edit: str, value: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # each was accepted: the unknown key ignored, the id turned into text ("None", "[1, 2]"),
    # the repeated or empty resource names used as they were
    path = _file(tmp_path, _edited(DRF, edit, value))
    for argv in (["solve", "drf", path], ["solve", "ff-drfh", path]):
        assert _refused(argv, capsys) == f"fairsim: error: {message}"


# UDRF paper, Fig. 1-like: two machine classes, users' jobs over them
JOBS: dict[str, Any] = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "hadoop", "capacity": [56, 64]}, {"id": "standard", "capacity": [16, 20]}],
    "users": [
        {"id": "u1", "jobs": [{"id": "job1", "demand": {"hadoop": [1, 1]}}]},
        {"id": "u2", "jobs": [{"id": "job", "demand": {"standard": [1, 0.5]}}]},
    ],
}


@pytest.mark.parametrize(
    ("edit", "value", "message"),
    [
        ("servers.1.count", 3, "servers[1]: unknown key 'count' (known: id, capacity)"),
        ("servers.1.id", None, "servers[1].id: expected a string, got null"),
        ("users.0.id", 1, "users[0].id: expected a string, got 1"),
        ("users.1.jobs.0.id", [], "users[1].jobs[0].id: expected a string, got []"),
        ("resources", ["cpu", "cpu"], "resources[1]: duplicate 'cpu'"),
    ],
)
def test_jobs_instance_fields_are_used_or_refused(
    edit: str, value: Any, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _file(tmp_path, _edited(JOBS, edit, value))
    assert _refused(["solve", "udrf", path], capsys) == f"fairsim: error: {message}"


def test_the_instances_used_above_are_valid(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for mechanism, data in (("drf", DRF), ("ff-drfh", DRF), ("udrf", JOBS)):
        assert main(["solve", mechanism, _file(tmp_path, data)]) == 0
        assert json.loads(capsys.readouterr().out)["mechanism"] == mechanism


def test_a_byte_order_mark_is_not_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An instance saved with a UTF-8 byte-order mark (Windows Notepad) was "not valid JSON (line
    1)"; the mark is dropped, and the instance solves as without it."""
    plain, marked = tmp_path / "plain.json", tmp_path / "marked.json"
    plain.write_text(json.dumps(DRF), encoding="utf-8")
    marked.write_text(json.dumps(DRF), encoding="utf-8-sig")
    assert marked.read_bytes()[:3] == b"\xef\xbb\xbf"
    assert main(["solve", "drf", str(marked)]) == 0
    with_mark = capsys.readouterr().out
    assert main(["solve", "drf", str(plain)]) == 0
    assert with_mark == capsys.readouterr().out
    assert json.loads(with_mark)["tasks"] == [[3.0], [2.0]]
