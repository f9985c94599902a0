"""The README and the documentation pages point at things that exist, on GitHub and on the site.

* Every relative link of README.md and docs/**/*.md resolves to a file of the repository or to a
  page docs/hooks/generate.py writes at build time (the API reference), and its ``#anchor``, on a
  Markdown file, names one of that file's headings (GitHub's anchors, which the site uses too:
  mkdocs.yml's ``toc.slugify``).
* Every ``fairsim COMMAND`` shown as code (a line of a code block or a code span) is a command
  of ``fairsim --help``, and ``fairsim trace ACTION`` an action of ``fairsim trace --help``.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
from pymdownx.slugs import slugify

from fairsim.cli import build_parser
from fairsim.schedulers.exact import EXACT, JOB_EXACT
from fairsim.schedulers.registry import available

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *ROOT.glob("docs/**/*.md")])
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
SPAN = re.compile(r"(`+)(.+?)\1", re.S)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
SLUG = slugify(case="lower")


def _generate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs/hooks/generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generated_pages() -> set[Path]:
    """The pages the build adds to docs/ (the API reference)."""
    g = _generate()
    pages = {ROOT / "docs" / g.PUBLIC_PAGE}
    pages |= {ROOT / "docs" / "api" / f"{m}.md" for ms in g._api_pages().values() for m in ms}
    return pages


def links(page: Path) -> list[str]:
    """The link targets of a Markdown page, outside code blocks and code spans."""
    text = SPAN.sub("", FENCE.sub("", page.read_text()))
    return LINK.findall(text)


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown file's headings, as GitHub and the site make them."""
    text = FENCE.sub("", page.read_text())
    out = set()
    for heading in HEADING.findall(text):
        words = re.sub(r"\[([^\]]*)\]\[[^\]]*\]|\[([^\]]*)\]\([^)]*\)", r"\1\2", heading)
        out.add(SLUG(words.replace("`", ""), "-"))
    return out


def test_pages_are_found() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in PAGES}
    assert {"README.md", "docs/write-a-scheduler.md", "docs/config-reference.md"} <= names
    assert sum(len(links(p)) for p in PAGES) > 100


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    generated = generated_pages()
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not (dest.is_file() or dest in generated):
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and dest.is_file() and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor})")
    assert broken == [], f"{page.relative_to(ROOT)}: broken links"


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def shown_commands(page: Path) -> list[str]:
    """``fairsim WORD [WORD]`` at the start of a code line or a code span."""
    text = page.read_text()
    code = [line for m in FENCE.finditer(text) for line in m.group(0).splitlines()]
    code += [m.group(2) for m in SPAN.finditer(FENCE.sub("", text))]
    out = []
    for line in code:
        m = re.match(r"\s*(?:\$\s*)?fairsim\s+([a-z][a-z-]*)(?:\s+([a-z][a-z-]*))?", line)
        if m:
            out.append(" ".join(w for w in m.groups() if w))
    return out


def _first_choices(parser: argparse.ArgumentParser) -> set[str] | None:
    """The choices of a command's first positional argument (an action, a reproduction, a
    mechanism), or None when it takes any word."""
    for action in parser._actions:
        if not action.option_strings:
            return set(action.choices) if action.choices else None
    return None


def test_commands_shown_exist() -> None:
    commands = _commands(build_parser())
    shown = {(p.relative_to(ROOT).as_posix(), c) for p in PAGES for c in shown_commands(p)}
    assert len(shown) > 30
    unknown = []
    for page, words in sorted(shown):
        command, _, rest = words.partition(" ")
        choices = _first_choices(commands[command]) if command in commands else None
        if command == "solve":  # an exact mechanism or an online scheduler, run on the instance
            choices = {*EXACT, *JOB_EXACT, *available(plugins=False)}
        if command not in commands:
            unknown.append(f"{page}: fairsim {command}")
        elif rest and choices is not None and rest not in choices:
            unknown.append(f"{page}: fairsim {words}")
    assert unknown == []
    assert {"trace", "experiment"} <= {
        c for c, p in commands.items() if _first_choices(p) is not None
    }


def test_readme_lists_every_page_of_the_site() -> None:
    """The README's documentation list links every hand-written page of mkdocs.yml's nav."""
    nav = re.findall(r":\s+([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert len(nav) >= 17
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(ROOT / "README.md")}
    missing = [p for p in nav if p != "index.md" and (ROOT / "docs" / p).resolve() not in linked]
    assert missing == []
