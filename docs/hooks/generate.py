"""MkDocs hook: pages generated at build time (``mkdocs.yml``, ``hooks:``).

* ``config-reference.md`` from the pydantic models of the scenario config
  (:class:`fairsim.scenario.config.RunConfig` and every model nested in it): one table
  per model with each key's type, default, bounds and description. A key without a description
  is a warning, so ``mkdocs build --strict`` fails until it has one.
* The table of registered scheduler names in ``schedulers.md`` (in place of the comment
  ``<!-- fairsim:scheduler-table -->``), from the scheduler registry.
* ``api/index.md``, the "Public API" page: every name of ``fairsim`` (its ``_PUBLIC`` table) and
  the parts of a progressive-filling scheduler exported by ``fairsim.schedulers``, rendered in
  full by mkdocstrings from the numpydoc docstrings (:data:`PUBLIC_SECTIONS`).
* ``api/<module>.md``, one page per module of the packages listed in :data:`API_GROUPS` (found
  on disk, never listed by hand), without the names the Public API page documents: the
  "Internals". The "API reference" section of the navigation (Public API first, then Internals)
  is appended here.

Nothing is written into the source tree: the pages exist only in the built site.
"""

from __future__ import annotations

import logging
import types
import typing
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

log = logging.getLogger("mkdocs.hooks.generate")

ROOT = Path(__file__).resolve().parents[2]

#: Navigation groups of the API reference -> packages whose modules get a page, recursively
#: (``"pkg"``), or the package's own page only (``"pkg:"``). The paper reproductions, the
#: benchmarks and the command line are described on their own pages instead.
API_GROUPS = {
    "fairsim.simulator": ("fairsim.simulator",),
    "fairsim.schedulers": ("fairsim.schedulers",),
    "fairsim.traces": ("fairsim.traces",),
    "fairsim.scenario": ("fairsim.scenario",),
    "fairsim.experiments": ("fairsim.experiments:",),
}
#: Modules of ``fairsim`` itself (``fairsim/*.py``) get a page unless private (``_name``).


# --------------------------------------------------------------------------- API reference
#: The "Public API" page, in reading order: section title -> public names. A bare name is
#: ``fairsim.<name>`` (from ``fairsim._PUBLIC``); a dotted one is a name of that package's
#: ``__all__`` (the parts of a progressive-filling scheduler). A name of ``fairsim._PUBLIC`` missing
#: here is a warning (``mkdocs build --strict`` fails) and is rendered in a last section.
PUBLIC_SECTIONS: dict[str, tuple[str, ...]] = {
    "Run, read back, compare and sweep": (
        "simulate",
        "load",
        "RunResult",
        "compare",
        "sweep",
        "RunConfig",
    ),
    "Exact allocations": ("solve",),
    "Write a scheduler": ("Scheduler", "ClusterView", "register_scheduler", "testing"),
    "A scheduler from two parts: progressive filling": (
        "fairsim.schedulers.ProgressiveFilling",
        "fairsim.schedulers.UserOrder",
        "fairsim.schedulers.DominantShare",
        "fairsim.schedulers.PooledDominantShare",
        "fairsim.schedulers.ServerChoice",
        "fairsim.schedulers.FirstFit",
        "fairsim.schedulers.BestFit",
    ),
}
PUBLIC_PAGE = "api/index.md"


def _modules(package: str) -> list[str]:
    """Dotted names of ``package`` and every module below it, in a stable order."""
    folder = ROOT.joinpath(*package.split("."))
    names = [package]
    for path in sorted(folder.iterdir()):
        if path.name.startswith(("_", ".")):
            continue
        if path.is_dir() and (path / "__init__.py").is_file():
            names += _modules(f"{package}.{path.name}")
        elif path.suffix == ".py":
            names.append(f"{package}.{path.stem}")
    return names


def _public_objects() -> dict[str, Any]:
    """``fairsim._PUBLIC`` resolved: public name -> the object (a class, function or module)."""
    import importlib

    import fairsim

    out = {}
    for name, module in sorted(fairsim._PUBLIC.items()):
        mod = importlib.import_module(module)
        out[name] = getattr(mod, name) if hasattr(mod, name) else mod
    return out


def public_api() -> dict[str, list[tuple[str, Any]]]:
    """The Public API page's sections: title -> ``(public dotted name, object)`` in order.

    Every name of ``fairsim._PUBLIC`` is on it (as ``fairsim.<name>``), once.
    """
    import importlib

    objects = _public_objects()
    sections: dict[str, list[tuple[str, Any]]] = {}
    placed = set()
    for title, names in PUBLIC_SECTIONS.items():
        rows = sections.setdefault(title, [])
        for name in names:
            if "." in name:
                package, attr = name.rsplit(".", 1)
                rows.append((name, getattr(importlib.import_module(package), attr)))
            else:
                rows.append((f"fairsim.{name}", objects[name]))
                placed.add(name)
    for name in sorted(set(objects) - placed):
        log.warning(
            "public API: fairsim.%s is in fairsim._PUBLIC but in no section of PUBLIC_SECTIONS "
            "(docs/hooks/generate.py)",
            name,
        )
        sections.setdefault("More", []).append((f"fairsim.{name}", objects[name]))
    return sections


def _identifier(obj: Any) -> str:
    """Dotted path of the object where it is defined (its anchor on the Public API page)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return f"{obj.__module__}.{obj.__qualname__}"


def _summary(obj: Any) -> str:
    """First paragraph of an object's docstring, on one line."""
    doc = " ".join((obj.__doc__ or "").strip().split("\n\n")[0].split())
    return doc.replace("|", "\\|")


def _api_index() -> str:
    """The Public API page: a table of the public names, then each one rendered in full."""
    sections = public_api()
    lines = [
        "# Public API",
        "",
        "These names are fairsim's Python API: `import fairsim` is cheap, and each name is",
        "imported on first use from the module that defines it. The parts of a",
        "progressive-filling scheduler are imported from `fairsim.schedulers`. Everything is",
        "documented on this page; the modules that implement it are listed under *Internals*,",
        "for reading the code. The layers are described in [Architecture](../architecture.md),",
        "and the scenario keys in the [config reference](../config-reference.md).",
        "",
        "| name | what it is |",
        "|---|---|",
    ]
    for rows in sections.values():
        for public, obj in rows:
            lines.append(f"| [`{public}`][{_identifier(obj)}] | {_summary(obj)} |")
    lines += [
        "",
        "`fairsim.__version__` is the installed version (a string, as in `summary.json`).",
        "",
        "::: fairsim",
        "    options:",
        "      members: false",
        "      show_root_heading: false",
        "",
    ]
    for title, rows in sections.items():
        lines += [f"## {title}", ""]
        for public, obj in rows:
            lines += [
                f"::: {_identifier(obj)}",
                "    options:",
                f'      heading: "{public}"',
                f'      toc_label: "{public}"',
                "      heading_level: 3",
                "",
            ]
    return "\n".join(lines)


def _documented_publicly() -> tuple[dict[str, set[str]], set[str]]:
    """What the Public API page documents, for the module pages to leave out.

    Returns ``(module -> names it defines or exports in __all__ that are on the Public API
    page, public modules)``: a module page filters those names out (each object is documented
    on one page, the one its cross-references resolve to), and a public module has no page of
    its own under Internals.
    """
    import importlib

    objects = {id(obj): obj for rows in public_api().values() for _, obj in rows}
    modules = {obj.__name__ for obj in objects.values() if isinstance(obj, types.ModuleType)}
    names: dict[str, set[str]] = {}
    for obj in objects.values():
        if not isinstance(obj, types.ModuleType):
            names.setdefault(obj.__module__, set()).add(obj.__name__)
    for group in _api_groups().values():
        for module in group:
            if (ROOT.joinpath(*module.split(".")) / "__init__.py").is_file():
                mod = importlib.import_module(module)
                for name in getattr(mod, "__all__", ()):
                    if id(getattr(mod, name)) in objects:
                        names.setdefault(module, set()).add(name)
    return names, modules


def _api_page(module: str, public: set[str]) -> str:
    """A module's page: everything but the names documented on the Public API page."""
    lines = [f"::: {module}", "    options:", "      heading_level: 1"]
    if public:
        pattern = "|".join(sorted(public))
        lines.append(f'      filters: ["!^_", "!^({pattern})$"]')
        links = ", ".join(f"`{n}`" for n in sorted(public))
        lines += [
            "",
            f"Also here, and documented on the [Public API](index.md) page: {links}.",
        ]
    return "\n".join(lines) + "\n"


def _api_groups() -> dict[str, list[str]]:
    """Navigation group -> dotted module names, public modules included."""
    groups: dict[str, list[str]] = {}
    groups["fairsim"] = [
        f"fairsim.{p.stem}"
        for p in sorted((ROOT / "fairsim").glob("*.py"))
        if not p.name.startswith("_")
    ]
    for group, packages in API_GROUPS.items():
        groups[group] = [
            m for p in packages for m in ([p[:-1]] if p.endswith(":") else _modules(p))
        ]
    return groups


def _api_pages() -> dict[str, list[str]]:
    """The Internals of the API reference: navigation group -> dotted module names (the public
    modules, documented on the Public API page, have no page of their own)."""
    _, public_modules = _documented_publicly()
    groups = {
        group: [m for m in modules if m not in public_modules]
        for group, modules in _api_groups().items()
    }
    return {group: modules for group, modules in groups.items() if modules}


def api_nav() -> list[Any]:
    """The "API reference" section of the navigation: the Public API first, then Internals."""
    internals = [
        {group: [{m.removeprefix(f"{group}.") or m: f"api/{m}.md"} for m in modules]}
        for group, modules in _api_pages().items()
    ]
    return [{"Public API": PUBLIC_PAGE}, {"Internals": internals}]


# --------------------------------------------------------------------------- config reference
def _type(annotation: Any) -> str:
    """A field's type in words; nested models link to their section."""
    if annotation is type(None):
        return "null"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(a) for a in args)
    if origin is list:
        return f"list of {_type(args[0])}"
    if origin is dict:
        return f"mapping of {_type(args[0])} to {_type(args[1])}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"[{annotation.__name__}](#{annotation.__name__.lower()})"
    if isinstance(annotation, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}.get(
            annotation.__name__, annotation.__name__
        )
    return str(annotation)


def _bounds(field: FieldInfo) -> str:
    words = []
    for m in field.metadata:
        for attr, sign in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
            if getattr(m, attr, None) is not None:
                words.append(f"{sign} {getattr(m, attr)}")
        if getattr(m, "min_length", None) is not None:
            words.append(f"at least {m.min_length} item(s)")
    return ", ".join(words)


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    value = field.default
    if value is PydanticUndefined:
        return "computed"
    if isinstance(value, BaseModel):
        return "its defaults"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _nested(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _nested(a)]


def _base_model(model: type[BaseModel]) -> type[BaseModel] | None:
    """The model ``model`` extends with keys of its own (a trace format extends
    ``TraceCommon``), or None when its parent has no keys."""
    parent = model.__mro__[1]
    if issubclass(parent, BaseModel) and parent.model_fields:
        return parent
    return None


def _own_fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """The keys ``model`` adds to its base model's (all of them without one); a key the base
    declares and the model narrows (a trace's ``format``) is the model's own."""
    base = _base_model(model)
    inherited = base.model_fields if base is not None else {}
    return {
        k: f
        for k, f in model.model_fields.items()
        if k not in inherited or f.annotation != inherited[k].annotation
    }


def _models(root: type[BaseModel]) -> list[tuple[str, type[BaseModel]]]:
    """``(dotted key, model)`` of ``root`` and every model nested in it, depth first."""
    out: list[tuple[str, type[BaseModel]]] = []
    seen: set[type[BaseModel]] = set()

    def walk(key: str, model: type[BaseModel]) -> None:
        if model in seen:
            return
        base = _base_model(model)
        if base is not None:  # the keys a family of models shares come first (TraceCommon)
            walk(key, base)
        seen.add(model)
        out.append((key, model))
        for name, field in model.model_fields.items():
            list_of = typing.get_origin(field.annotation) is list or any(
                typing.get_origin(a) is list for a in typing.get_args(field.annotation)
            )
            for sub in _nested(field.annotation):
                walk(f"{key}.{name}[]" if list_of else f"{key}.{name}", sub)

    walk("", root)
    return out


def _doc(model: type[BaseModel]) -> str:
    import inspect

    return inspect.cleandoc(model.__doc__ or "")


def config_reference() -> str:
    """The config reference page (Markdown)."""
    from fairsim.scenario import config

    lines = [
        "# Config reference",
        "",
        "A scenario is one YAML file, validated by "
        "[`RunConfig`][fairsim.scenario.config.RunConfig] before anything runs. "
        "This page is generated from the pydantic models when the site is built, so it is "
        "always the code's own description. Unknown keys are errors that suggest the closest "
        "known key; every error is one line naming the dotted key and the value. Relative paths "
        "(`trace.path`, `trace.cache_dir`, `cluster.path`) are relative to the config file's "
        "folder.",
        "",
        "```yaml",
        *(ROOT / "configs" / "google-1h.yaml").read_text().rstrip().splitlines(),
        "```",
        "",
        "The shipped scenarios are in `configs/` (`fairsim.experiments.config_path(name)` finds "
        "them in an installed package). The formats, pools and the rules behind each key are "
        "described at length in the docstring of "
        "[`fairsim.scenario.config`][fairsim.scenario.config].",
        "",
    ]
    for key, model in _models(config.RunConfig):
        title = model.__name__
        where = f" (`{key.lstrip('.')}`)" if key else " (the top level)"
        lines += [f"## {title}", "", f"*Keys of* `{title}`{where}.", "", _doc(model), ""]
        base = _base_model(model)
        if base is not None:
            lines += [
                f"Besides its own keys below, every key of [{base.__name__}]"
                f"(#{base.__name__.lower()}).",
                "",
            ]
        lines += ["| key | type | default | bounds | description |", "|---|---|---|---|---|"]
        for name, field in _own_fields(model).items():
            if not field.description:
                log.warning(
                    "config reference: %s.%s has no description (add a docstring below the "
                    "field in scenario/config.py)",
                    title,
                    name,
                )
            desc = " ".join((field.description or "").split()).replace("|", "\\|")
            lines.append(
                f"| `{name}` | {_type(field.annotation)} | {_default(field)} | "
                f"{_bounds(field)} | {desc} |"
            )
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------- scheduler names
SCHEDULER_TABLE = "<!-- fairsim:scheduler-table -->"


def scheduler_table() -> str:
    """fairsim's built-in scheduler names with their class, YAML parameters and summary
    (Markdown).

    Only the built-in table (:data:`fairsim.schedulers.registry.BUILTIN`) is listed: the page is
    the same whatever is installed or registered in the building process (a plug-in's class
    would be a cross-reference the site cannot resolve). ``slots-<S>`` stands for any S; its
    class is :class:`~fairsim.schedulers.slots.Slots`. The parameters are the scheduler's
    parameter model (:func:`fairsim.schedulers.registry.params_model`), with their defaults.
    """
    from fairsim.schedulers.registry import BUILTIN, params_model

    lines = ["| name | class | parameters (YAML) | what it is |", "|---|---|---|---|"]
    for reg in BUILTIN:
        cls = reg.cls
        assert cls is not None  # built-in rows always carry their class
        path = f"{cls.__module__}.{cls.__qualname__}"
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split()).replace("|", "\\|")
        if not doc:
            log.warning("scheduler table: %s (%s) has no docstring", reg.name, path)
        fields = params_model(cls).model_fields
        params = ", ".join(
            f"`{k}`" + ("" if f.is_required() else f" = `{f.default!r}`") for k, f in fields.items()
        )
        for name in reg.alias.forms if reg.alias is not None else (reg.name,):
            lines.append(f"| `{name}` | [`{cls.__name__}`][{path}] | {params or 'none'} | {doc} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- MkDocs events
def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Append the "API reference" section to the navigation."""
    config["nav"].append({"API reference": api_nav()})
    return config


def on_page_markdown(markdown: str, page: Page, **kwargs: Any) -> str:
    """Fill in the generated table of ``schedulers.md``."""
    if SCHEDULER_TABLE in markdown:
        return markdown.replace(SCHEDULER_TABLE, scheduler_table())
    return markdown


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages."""
    files.append(File.generated(config, "config-reference.md", content=config_reference()))
    files.append(File.generated(config, PUBLIC_PAGE, content=_api_index()))
    public, _ = _documented_publicly()
    for modules in _api_pages().values():
        for module in modules:
            content = _api_page(module, public.get(module, set()))
            files.append(File.generated(config, f"api/{module}.md", content=content))
    return files
