"""Import checks that import-linter's contracts (pyproject.toml) do not make.

1. No file cycles: the graph of fairsim's modules (every import, also inside functions and under
   ``TYPE_CHECKING``) is acyclic; a cycle is printed file by file with the importing lines.
2. The facade ``fairsim/__init__.py`` imports its public names lazily, so importing a lower layer
   never loads the upper ones. No module of the lower layers may import the facade (``import
   fairsim`` or ``from fairsim import X``): that would pull the upper layers in on first use.
3. The command line (``fairsim.cli``) is the top: no module outside it imports it, the facade
   included (import-linter's layers leave the facade, which is in no layer, unchecked).

Run from the repository with the project's environment: ``python .ci/import_cycles.py``
(``make imports``). Exit status 0 when all three hold, 1 otherwise.
"""

from __future__ import annotations

import sys

import grimp

PACKAGE = "fairsim"
#: Packages and modules below the facade's public names (they must not import the facade).
LOWER = (
    "fairsim.simulator",
    "fairsim.schedulers",
    "fairsim.traces",
    "fairsim.scenario",
    "fairsim.atomic",
    "fairsim.errors",
)
#: The top layer, which no module outside it imports.
TOP = "fairsim.cli"


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _lines(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    details = graph.get_import_details(importer=importer, imported=imported)
    return "; ".join(f"l.{d['line_number']}: {d['line_contents']}" for d in details)


def main() -> int:
    graph = grimp.build_graph(PACKAGE)
    failed = False
    for component in cycles(graph):
        failed = True
        print(f"import cycle between {len(component)} modules:")
        members = set(component)
        for a in component:
            for b in sorted(graph.find_modules_directly_imported_by(a) & members):
                print(f"  {a} -> {b} ({_lines(graph, a, b)})")
    for module in sorted(graph.find_modules_that_directly_import(PACKAGE)):
        if any(module == p or module.startswith(p + ".") for p in LOWER):
            failed = True
            print(
                f"{module} imports the facade {PACKAGE!r} ({_lines(graph, module, PACKAGE)}); "
                f"import the defining module instead"
            )
    top = {m for m in graph.modules if m == TOP or m.startswith(TOP + ".")}
    for imported in sorted(top):
        for module in sorted(graph.find_modules_that_directly_import(imported) - top):
            failed = True
            print(
                f"{module} imports the command line {imported!r} "
                f"({_lines(graph, module, imported)}); nothing imports the top layer"
            )
    n = len(graph.modules)
    print(
        f"import_cycles: {n} modules, "
        + ("FAILED" if failed else "no cycle, facade unused below, command line on top")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
