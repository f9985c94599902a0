"""Griffe extension: the docstrings' Sphinx roles become mkdocstrings cross-references.

The numpydoc docstrings name other objects the Sphinx way (``:func:`load_config```,
``:class:`~fairsim.simulator.engine.Engine```). mkdocstrings renders Markdown, where such a role
would show as literal text; this extension rewrites each one, when the package is loaded, into an
optional autorefs link to the object's API page. The name is resolved the way Sphinx resolves
it, from the scope of the object whose docstring holds it (its module's imports and members);
``~`` shows the last component only. A name that does not resolve, or whose object has no page
(a private helper, a paper reproduction's module), stays code without a link: no warning, no
broken link. A paragraph ending in reStructuredText's ``::`` (a literal block follows) keeps one
colon.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

#: reStructuredText's "paragraph::" before a literal block (in Markdown the indented block is
#: code already): the colon stays single.
LITERAL = re.compile(r"(?<=\S)::$", re.MULTILINE)
ROLE = re.compile(r":(?:py:)?(?:func|meth|class|mod|data|attr|exc|obj|const):`(~?)\.?([^`<>]+?)`")


def _resolve(obj: griffe.Object, target: str) -> str | None:
    if target.startswith("fairsim."):
        return target
    head, _, rest = target.partition(".")
    scopes = [obj] if obj.is_module or obj.is_class else []
    if obj.parent is not None:
        scopes.append(obj.parent)
    for scope in scopes:
        try:
            full = scope.resolve(head)
        except (griffe.NameResolutionError, KeyError, AttributeError):
            continue
        return f"{full}.{rest}" if rest else full
    return None


def _rewrite(obj: griffe.Object, text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        tilde, target = m.group(1), m.group(2)
        shown = target.rsplit(".", 1)[-1] if tilde else target
        full = _resolve(obj, target)
        if full is None:
            return f"`{shown}`"
        return f'<autoref identifier="{full}" optional>`{shown}`</autoref>'

    return ROLE.sub(sub, LITERAL.sub(":", text))


class SphinxRoles(griffe.Extension):
    """Rewrite ``:role:`target``` in every docstring of the loaded package."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Walk the package once it is loaded (every name can be resolved then)."""
        seen: set[str] = set()
        stack: list[griffe.Object] = [pkg]
        while stack:
            obj = stack.pop()
            if obj.path in seen:
                continue
            seen.add(obj.path)
            if obj.docstring is not None:
                obj.docstring.value = _rewrite(obj, obj.docstring.value)
            stack.extend(m for m in obj.members.values() if not m.is_alias)  # type: ignore[misc]
