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
