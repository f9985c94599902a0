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
