"""MkDocs hook: pages generated at build time (``mkdocs.yml``, ``hooks:``).

* ``config-reference.md`` from the pydantic models of the scenario config
  (:class:`fairsim.scenario.config.RunConfig` and every model nested in it): one table
  per model with each key's type, default, bounds and description. A key without a description
  is a warning, so ``mkdocs build --strict`` fails until it has one.
* The table of registered scheduler names in ``schedulers.md`` (in place of the comment
  ``<!-- fairsim:scheduler-table -->``), from the scheduler registry.
* ``api/<module>.md``, one page per module of the packages listed in :data:`API_GROUPS` (found
  on disk, never listed by hand), rendered by mkdocstrings from the numpydoc docstrings, and
  ``api/index.md`` for the public names of ``fairsim`` (its ``_PUBLIC`` table). The "API
  reference" section of the navigation is appended here.

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


def _identifier(obj: Any) -> str:
    """Dotted path of the object where it is defined (where its API page documents it)."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return f"{obj.__module__}.{obj.__qualname__}"


def _summary(obj: Any) -> str:
    """First paragraph of an object's docstring, on one line."""
    doc = " ".join((obj.__doc__ or "").strip().split("\n\n")[0].split())
    return doc.replace("|", "\\|")


def _api_index() -> str:
    lines = [
        "# fairsim: the public API",
        "",
        "`import fairsim` is cheap: the names below are imported on first use from the modules",
        "that define them, where they are documented. The layers are described in",
        "[Architecture](../architecture.md).",
        "",
        "| name | what it is |",
        "|---|---|",
    ]
    paged = {m for modules in _api_pages().values() for m in modules}
    here = []  # defined in a module without a page of its own: documented on this page
    for name, obj in _public_objects().items():
        ident = _identifier(obj)
        lines.append(f"| [`fairsim.{name}`][{ident}] | {_summary(obj)} |")
        if ident.rsplit(".", 1)[0] not in paged and ident not in paged:
            here.append(ident)
    lines += [
        "",
        "::: fairsim",
        "    options:",
        "      members: false",
        "      heading_level: 2",
        "",
    ]
    for ident in here:
        lines += [f"::: {ident}", "    options:", "      heading_level: 2", ""]
    return "\n".join(lines)


def _api_page(module: str) -> str:
    return f"::: {module}\n    options:\n      heading_level: 1\n"


def _api_pages() -> dict[str, list[str]]:
    """Navigation group -> dotted module names."""
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
    section: list[Any] = [{"fairsim (public API)": "api/index.md"}]
    for group, modules in _api_pages().items():
        pages = [{m.removeprefix(f"{group}.") or m: f"api/{m}.md"} for m in modules]
        section.append({group: pages})
    config["nav"].append({"API reference": section})
    return config


def on_page_markdown(markdown: str, page: Page, **kwargs: Any) -> str:
    """Fill in the generated table of ``schedulers.md``."""
    if SCHEDULER_TABLE in markdown:
        return markdown.replace(SCHEDULER_TABLE, scheduler_table())
    return markdown


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages."""
    files.append(File.generated(config, "config-reference.md", content=config_reference()))
    files.append(File.generated(config, "api/index.md", content=_api_index()))
    for modules in _api_pages().values():
        for module in modules:
            files.append(File.generated(config, f"api/{module}.md", content=_api_page(module)))
    return files
