"""Code shown on the documentation pages is an exact copy of the example files it comes from.

A page shows a section of a file as a fenced block preceded by an HTML comment naming it::

    <!-- from docs/examples/fifo_scheduler.py:scheduler -->
    ```python
    ...
    ```

and the file marks the section with the comment lines ``# [start:scheduler]`` and
``# [end:scheduler]``. The page then reads the same on GitHub and on the site (no include
syntax to expand), and this test keeps the copy and the file the same: the file is the one that
runs (tests/unit/test_docs_tutorial.py), the copy is what a reader sees.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md"])
#: ``<!-- from PATH:SECTION -->`` then a fenced block (its info string, its body).
COPY = re.compile(
    r"<!-- from (?P<path>[^:\s]+):(?P<section>[\w-]+) -->\n```[^\n]*\n(?P<body>.*?)\n```\n", re.S
)


def section(path: Path, name: str) -> str:
    """The lines of ``path`` between ``# [start:name]`` and ``# [end:name]`` (exclusive), without
    blank lines at either end (ruff formats the copy on the page as a module of its own)."""
    lines = path.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == f"# [start:{name}]"]
    ends = [i for i, line in enumerate(lines) if line.strip() == f"# [end:{name}]"]
    assert len(starts) == 1 and len(ends) == 1, f"{path}: section {name!r} must be marked once"
    assert starts[0] < ends[0], f"{path}: section {name!r} ends before it starts"
    return "\n".join(lines[starts[0] + 1 : ends[0]]).strip("\n")


def copies() -> list[tuple[Path, str, str, str]]:
    """Every ``(page, file path, section, body)`` copied on a page."""
    return [
        (page, m["path"], m["section"], m["body"])
        for page in PAGES
        for m in COPY.finditer(page.read_text())
    ]


def test_the_pages_show_seven_copies() -> None:
    shown = [(p.name, f, s) for p, f, s, _ in copies()]
    assert shown == [
        ("preemption.md", "docs/examples/priority_preemption.py", "scheduler"),
        ("preemption.md", "docs/examples/priority_preemption.py", "scenario"),
        ("write-a-scheduler.md", "docs/examples/fifo_scheduler.py", "scheduler"),
        ("write-a-scheduler.md", "docs/examples/fifo_scheduler.py", "scenario"),
        ("write-a-scheduler.md", "docs/examples/fifo_scheduler.py", "run"),
        ("write-a-scheduler.md", "docs/examples/test_fifo_scheduler.py", "check"),
        ("write-a-scheduler.md", "docs/examples/fewest_tasks.py", "parts"),
    ]


@pytest.mark.parametrize(
    ("page", "path", "name", "body"),
    copies(),
    ids=[f"{p.name}:{f}:{s}" for p, f, s, _ in copies()],
)
def test_copy_equals_the_section_of_the_file(page: Path, path: str, name: str, body: str) -> None:
    source = ROOT / path
    assert source.is_file(), f"{page.name}: {path} does not exist"
    assert body == section(source, name), (
        f"{page.name} shows an outdated copy of {path}:{name}; paste the section again"
    )


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_no_include_syntax_left(page: Path) -> None:
    """Every ``<!-- from -->`` comment is followed by its block, and no page uses an include
    (``--8<--``) that GitHub would show raw."""
    text = page.read_text()
    assert text.count("<!-- from ") == len(COPY.findall(text))
    assert "--8<--" not in text


def test_a_stale_copy_is_caught(tmp_path: Path) -> None:
    example = tmp_path / "x.py"
    example.write_text("a = 1\n# [start:s]\nb = 2\n# [end:s]\n")
    assert section(example, "s") == "b = 2"
    page = "<!-- from x.py:s -->\n```python\nb = 3\n```\n"
    (m,) = COPY.finditer(page)
    assert m["body"] != section(example, "s")
