"""The registry of online schedulers: the only list of their names, and the one way to build them.

A scheduler name comes from one of three sources, which must not overlap (except that a
distribution may both decorate its class with :func:`register_scheduler` and ship it as an entry
point of the same name: that is one registration):

1. :data:`BUILTIN`, the table below: fairsim's own schedulers, each under the ``name`` its class
   declares;
2. :func:`register_scheduler`, a class decorator, for schedulers defined in the running process
   (a notebook, a script, a test);
3. the entry-point group ``fairsim.schedulers`` (:data:`ENTRY_POINT_GROUP`) of installed
   distributions, ``name = "module:Class"`` in their ``pyproject.toml``::

       [project.entry-points."fairsim.schedulers"]
       my-fifo = "my_package.fifo:Fifo"

   The names are read from the distributions' metadata; a class is imported only when its name
   is used, and an entry point that fails to load is reported naming the entry point.

A config may also name a class by its import path ``module:Class`` (:func:`resolve`):
a module installed or on ``sys.path``, or a file (or package) in the working directory, which
is imported as ``python -m`` would find it.

Everything else derives from these sources: :func:`available` (the CLI's ``--help``, the docs),
:func:`examples` (the conformance suite, the benchmarks), and the two functions that configs,
``fairsim run``, ``fairsim sweep``, ``fairsim solve``, the conformance suite and the
reproductions call:

* :func:`make_scheduler` builds a scheduler from any entry: a name, an alias, an import path,
  a mapping ``{name, label?, **parameters}``, a class, or a :class:`SchedulerSpec`. It is the
  one way to build one.
* :func:`resolve` validates an entry without building it (its class, parameters and label, as a
  :class:`SchedulerSpec`), for configs that are checked before anything runs.

Parameters and labels
---------------------
A config names a scheduler with a string (``ff-drfh``) or a mapping that also gives parameters
(``{name: psdsf, period_s: 2}``, ``{name: slots, slots: 14}``). The parameters a scheduler takes
are the keyword parameters of its ``__init__`` (:func:`params_model` turns them into a pydantic
model, validated strictly: ``"2"`` is not a number), except ``weights``, ``eligible``,
``bounds``, ``placements`` and ``queues`` (:data:`SCENARIO_INPUTS`), which the scenario
supplies. A
scheduler class without parameters is constructed with none.

Every configured scheduler has a *label*: the name of its result folder and the ``scheduler`` of
its results. It is the registered name followed by ``-<value>`` for every parameter given a value
other than its default, in the order of the ``__init__`` signature (numbers written with ``%g``):
``{name: slots, slots: 14}`` is ``slots-14``, ``{name: slots, slots: 14, model: single}`` is
``slots-14-single``, ``{name: psdsf, period_s: 2}`` is ``psdsf-2``. A mapping may give its own
``label``. Two schedulers of one config may not share a label.

Aliases: ``slots-<S>``, ``slots-<S>-single``, ``slots-<S>-cpu`` (and ``slots-<S>-multi``, the
default model) stand for ``{name: slots, slots: S, model: ...}``
(:class:`fairsim.schedulers.slots.Slots`); ``udrf-backfill`` (and ``udrf-reserve``, the default)
for ``{name: udrf, blocked: ...}`` (:class:`fairsim.schedulers.udrf_online.UDRF`). Their label
follows the rule above, so it is the alias itself (``slots-14-multi``, which names the default
model, is ``slots-14``; ``udrf-reserve`` is ``udrf``).
"""

from __future__ import annotations

import difflib
import functools
import importlib.metadata
import inspect
import os
import re
import sys
import threading
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from fairsim.errors import ConfigError, RegistryError, unknown_key
from fairsim.schedulers.drf_classes import DRFClasses
from fairsim.schedulers.drf_lockstep import DRFLockstep
from fairsim.schedulers.drfh import BestFitDRFH, FirstFitDRFH
from fairsim.schedulers.dynamic_drf import DynamicDRF
from fairsim.schedulers.exact.instance import QueueTree
from fairsim.schedulers.hdrf_online import HDRF
from fairsim.schedulers.kueue_fair import KueueFair
from fairsim.schedulers.online_mechanisms import AF, BMF, CDRFH, DRF, LMMMMS, PF, TSF
from fairsim.schedulers.psdsf_distributed import DistributedPSDSF
from fairsim.schedulers.recorded import Recorded
from fairsim.schedulers.slots import Slots
from fairsim.schedulers.udrf_online import UDRF
from fairsim.schedulers.yarn_fair import YarnFair
from fairsim.simulator.replay import RecordedRuns
from fairsim.simulator.scheduler import Scheduler

#: Entry-point group through which other distributions ship schedulers (``name = "module:Class"``).
ENTRY_POINT_GROUP = "fairsim.schedulers"

#: Keyword parameters that the scenario supplies, never a config entry: user weights
#: (``trace.weights``, ``trace.users[].weight``), eligible servers (``trace.users[].eligible``),
#: per-user task bounds (``fairsim solve``'s ``max_tasks``, for ``lmm-mms``), the trace's
#: recorded placements on the pool (for ``recorded``, :mod:`fairsim.simulator.replay`) and the
#: scenario's queue tree (``queues``, for hierarchical schedulers such as ``hdrf``).
SCENARIO_INPUTS = ("weights", "eligible", "bounds", "placements", "queues")


@dataclass(frozen=True)
class Alias:
    """Short names that stand for a scheduler with parameters (``slots-14`` for
    ``{name: slots, slots: 14}``).

    Attributes
    ----------
    pattern : re.Pattern
        Full-match pattern of the short names.
    params : callable
        ``params(match) -> dict``: the parameters a matching short name stands for.
    forms : tuple of str
        The forms shown in help and error messages (``slots-<S>``, ...).
    """

    pattern: re.Pattern[str]
    params: Callable[[re.Match[str]], dict[str, Any]]
    forms: tuple[str, ...]


@dataclass(frozen=True)
class Registration:
    """One row of the registry.

    Attributes
    ----------
    name : str
        The registered name.
    cls : type of Scheduler or None
        The class; None for an entry point not loaded yet.
    origin : str
        Where the name comes from: ``"fairsim"``, ``"register_scheduler"``, or
        ``"entry point 'NAME = module:Class' of distribution DIST"``.
    examples : tuple of str
        Configurations the conformance suite, the benchmarks and the docs run, for a scheduler
        with required parameters (its bare name cannot run). Default: the name.
    alias : Alias, optional
        Short names that stand for this scheduler with parameters.
    entry_point : importlib.metadata.EntryPoint, optional
        For a plug-in of another distribution.
    requires : str, optional
        What the scheduler needs beyond a workload and a pool, for one that cannot run on
        any workload (``recorded``: a trace's recorded placements). It has no runnable example:
        :func:`examples` leaves it out, so the conformance suite, the engine's property tests
        and the benchmarks of every scheduler do not run it (its own tests do).
    """

    name: str
    cls: type[Scheduler] | None
    origin: str = "fairsim"
    examples: tuple[str, ...] = ()
    alias: Alias | None = None
    entry_point: importlib.metadata.EntryPoint | None = field(default=None, compare=False)
    requires: str | None = None


def _slots_params(m: re.Match[str]) -> dict[str, Any]:
    model = m.group("model")
    return {"slots": int(m.group("slots")), **({"model": model} if model else {})}


#: Why ``recorded`` runs only on some scenarios (:attr:`Registration.requires`).
REQUIRES_PLACEMENTS = (
    "the recorded placements of a google-2011 trace, on the trace's machines "
    "(cluster: {source: machine-events}, no servers draw)"
)

_SLOTS_ALIAS = Alias(
    re.compile(r"slots-(?P<slots>\d+)(?:-(?P<model>multi|single|cpu))?"),
    _slots_params,
    ("slots-<S>", "slots-<S>-single", "slots-<S>-cpu"),
)

_UDRF_ALIAS = Alias(
    re.compile(r"udrf-(?P<blocked>reserve|backfill)"),
    lambda m: {"blocked": m.group("blocked")},
    ("udrf", "udrf-backfill"),
)


def _own(
    cls: type[Scheduler],
    *,
    examples: tuple[str, ...] = (),
    alias: Alias | None = None,
    requires: str | None = None,
) -> Registration:
    """A row of :data:`BUILTIN`: a class of fairsim, registered under its own ``name``."""
    return Registration(cls.name, cls, examples=examples, alias=alias, requires=requires)


#: fairsim's own schedulers, in the order of ``--help``: the DRFH paper's Slots baseline and
#: First-Fit / Best-Fit DRFH (:mod:`fairsim.schedulers.slots`, :mod:`fairsim.schedulers.drfh`),
#: the online mechanisms (:mod:`fairsim.schedulers.online_mechanisms`), dynamic DRF
#: (:mod:`fairsim.schedulers.dynamic_drf`), distributed PS-DSF
#: (:mod:`fairsim.schedulers.psdsf_distributed`), the UDRF paper's task-level DRF over machine
#: classes and its Section V DRF baseline (:mod:`fairsim.schedulers.drf_classes`,
#: :mod:`fairsim.schedulers.drf_lockstep`), online UDRF (:mod:`fairsim.schedulers.udrf_online`),
#: online hierarchical DRF (:mod:`fairsim.schedulers.hdrf_online`), YARN's Fair Scheduler and
#: Kueue's fair sharing (:mod:`fairsim.schedulers.yarn_fair`,
#: :mod:`fairsim.schedulers.kueue_fair`) and the replay of the
#: trace's own placements (:mod:`fairsim.schedulers.recorded`). A built-in name is written once,
#: as the class's ``name``; this table, :func:`register_scheduler` and the
#: ``fairsim.schedulers`` entry points are the only places a scheduler name is defined.
BUILTIN: tuple[Registration, ...] = (
    _own(
        Slots,
        examples=("slots-14", "slots-10", "slots-14-single", "slots-20-cpu"),
        alias=_SLOTS_ALIAS,
    ),
    _own(FirstFitDRFH),
    _own(BestFitDRFH),
    _own(DRF),
    _own(DynamicDRF),
    _own(CDRFH),
    _own(TSF),
    _own(AF),
    _own(PF),
    _own(BMF),
    _own(LMMMMS),
    _own(DistributedPSDSF),
    _own(DRFClasses),
    _own(DRFLockstep),
    _own(UDRF, examples=("udrf", "udrf-backfill"), alias=_UDRF_ALIAS),
    _own(HDRF),
    _own(YarnFair),
    _own(KueueFair),
    _own(Recorded, requires=REQUIRES_PLACEMENTS),
)

_BUILTIN = {r.name: r for r in BUILTIN}
#: Schedulers registered in this process with :func:`register_scheduler` (changed only there).
_REGISTERED: dict[str, Registration] = {}
#: Entry-point classes loaded so far.
_LOADED: dict[str, type[Scheduler]] = {}
#: Parameter models derived so far (:func:`params_model`).
_PARAMS: dict[type, type[BaseModel]] = {}

S = TypeVar("S", bound=type[Scheduler])


# --------------------------------------------------------------------------- registration


def _check_name(name: object, what: str) -> str:
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", name):
        raise RegistryError(
            f"{what}: {name!r} is not a scheduler name (letters, digits and '_.+-', starting "
            "with a letter or digit)"
        )
    return name


def register_scheduler(name: str, *, replace: bool = False) -> Callable[[S], S]:
    """Class decorator: register a :class:`~fairsim.simulator.scheduler.Scheduler` under ``name``.

    The class can then be named in configs (``schedulers: [my-fifo]``), in ``fairsim run`` and
    ``fairsim sweep`` (within this process; for a name that every process sees, ship it as an
    entry point of the ``fairsim.schedulers`` group), and in
    :func:`fairsim.testing.check_scheduler`. The class is returned unchanged.

    Parameters
    ----------
    name : str
        The name (letters, digits and ``_.+-``).
    replace : bool
        Replace an earlier :func:`register_scheduler` of the same name (re-running a notebook
        cell); built-in names, the short names of their aliases and entry-point names can never
        be replaced. The class that an entry point of the same name names (``module:Class``,
        the decorated class itself: a package that both decorates its scheduler and ships it as
        an entry point) is not a conflict: the name stays one registration, the entry point's,
        with this class.

    Returns
    -------
    callable
        The decorator.

    Raises
    ------
    RegistryError
        For a malformed name, a name already registered (built-in, an entry point naming another
        class, or earlier in this process without ``replace``), a name that a built-in's alias
        pattern matches (``slots-14``, ``udrf-backfill``) or that differs from a built-in name
        or alias only by case (``DRF``, ``Slots-3``), a class that is not a Scheduler subclass,
        or an ``__init__`` with a parameter that cannot be given by keyword.

    Examples
    --------
    >>> import fairsim
    >>> @fairsim.register_scheduler("doc-fifo")
    ... class DocFifo(fairsim.Scheduler):
    ...     pass
    """
    _check_name(name, "register_scheduler")

    def decorate(cls: S) -> S:
        if not (isinstance(cls, type) and issubclass(cls, Scheduler)):
            raise RegistryError(
                f"register_scheduler({name!r}): {cls!r} is not a subclass of fairsim.Scheduler"
            )
        clash = _builtin_clash(name)
        if clash is not None:
            raise RegistryError(f"register_scheduler({name!r}): {clash}")
        eps = _entry_points().get(name)
        if eps:
            if len(eps) == 1 and _names_class(eps[0], cls):
                # the class that its own distribution ships as this entry point (the module is
                # being imported, by the entry point or directly): one registration, not two
                params_model(cls)
                _LOADED[name] = cls
                return cls
            raise RegistryError(
                f"register_scheduler({name!r}): the name is taken by the {_origin(eps[0])}"
            )
        old = _REGISTERED.get(name)
        if old is not None and not replace and old.cls is not cls:
            raise RegistryError(
                f"register_scheduler({name!r}): the name is already registered to "
                f"{_qualname(old.cls)} (pass replace=True to replace it)"
            )
        params_model(cls)  # refuse an unusable signature now, not at the first run
        _REGISTERED[name] = Registration(name, cls, origin="register_scheduler")
        return cls

    return decorate


def _builtin_clash(name: str) -> str | None:
    """Why ``name`` cannot be registered next to fairsim's built-ins, or None when it can.

    Taken are the built-in names, the short names of their aliases (``slots-14``,
    ``udrf-backfill``: :func:`resolve` would hand the registered class out for them, not the
    built-in the alias stands for), and any name that differs from one of these only by case
    (``DRF``, ``Slots-3``: result folders named by them clash on a case-insensitive file system).
    """
    folded = name.casefold()
    for r in BUILTIN:
        cls = r.cls.__name__  # type: ignore[union-attr]
        if name == r.name:
            return f"the name is taken by fairsim's built-in {cls}"
        if folded == r.name.casefold():
            return f"the name differs only by case from fairsim's built-in {r.name!r} ({cls})"
        if r.alias is not None and r.alias.pattern.fullmatch(folded):
            case = "" if r.alias.pattern.fullmatch(name) else " (ignoring case)"
            return (
                f"the name is a short name{case} of fairsim's built-in {r.name!r} ({cls}: "
                f"{', '.join(r.alias.forms)})"
            )
    return None


def unregister_scheduler(name: str) -> None:
    """Remove a scheduler registered with :func:`register_scheduler` (for tests).

    Raises
    ------
    RegistryError
        If ``name`` was not registered with :func:`register_scheduler`.
    """
    if _REGISTERED.pop(name, None) is None:
        raise RegistryError(f"unregister_scheduler: {name!r} was not registered in this process")


@functools.cache
def _entry_points() -> dict[str, list[importlib.metadata.EntryPoint]]:
    """Entry points of :data:`ENTRY_POINT_GROUP` by name (read once per process)."""
    out: dict[str, list[importlib.metadata.EntryPoint]] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        out.setdefault(ep.name, []).append(ep)
    return out


def _names_class(ep: importlib.metadata.EntryPoint, cls: type) -> bool:
    """Whether the entry point names ``cls``: its value is the class's own ``module:Class``, or
    the object it names (in a module already imported) is ``cls``. Nothing is imported."""
    if (ep.module, ep.attr) == (cls.__module__, cls.__qualname__):
        return True
    obj: Any = sys.modules.get(ep.module)
    for part in (ep.attr or "").split(".") if obj is not None else ():
        obj = getattr(obj, part, None)
    return obj is cls


def _origin(ep: importlib.metadata.EntryPoint) -> str:
    dist = ep.dist.name if ep.dist is not None else "?"
    return f"entry point '{ep.name} = {ep.value}' of distribution {dist!r}"


def _qualname(cls: type | None) -> str:
    return "?" if cls is None else f"{cls.__module__}.{cls.__qualname__}"


def _load(ep: importlib.metadata.EntryPoint) -> type[Scheduler]:
    cls = _LOADED.get(ep.name)
    if cls is not None:
        return cls
    try:
        obj = ep.load()
    except Exception as exc:
        msg = str(exc).splitlines()[0] if str(exc) else ""
        raise RegistryError(
            f"scheduler {ep.name!r}: the {_origin(ep)} cannot be loaded: "
            f"{type(exc).__name__}: {msg}"
        ) from None
    if not (isinstance(obj, type) and issubclass(obj, Scheduler)):
        raise RegistryError(
            f"scheduler {ep.name!r}: the {_origin(ep)} names {obj!r}, not a subclass of "
            "fairsim.Scheduler"
        )
    try:
        params_model(obj)
    except RegistryError as exc:
        raise RegistryError(f"{exc} (from the {_origin(ep)})") from None
    _LOADED[ep.name] = obj
    return obj


# --------------------------------------------------------------------------- lookup


def registrations(*, plugins: bool = True) -> tuple[Registration, ...]:
    """Every registered scheduler: built-in, then :func:`register_scheduler`, then entry points.

    Entry points are listed from metadata, not imported (their ``cls`` is None until used).

    Parameters
    ----------
    plugins : bool
        Include the schedulers of :func:`register_scheduler` and of entry points (False: the
        built-in table only).
    """
    rows = list(BUILTIN)
    if plugins:
        rows += _REGISTERED.values()
        for name, eps in _entry_points().items():
            if name not in _REGISTERED and _builtin_clash(name) is None:
                rows.append(
                    Registration(
                        name, _LOADED.get(name), origin=_origin(eps[0]), entry_point=eps[0]
                    )
                )
    return tuple(rows)


def available(*, plugins: bool = True) -> tuple[str, ...]:
    """Registered names, as shown in ``--help`` and error messages (a scheduler with an alias
    shows the alias forms, e.g. ``slots-<S>``)."""
    out: list[str] = []
    for r in registrations(plugins=plugins):
        out.extend(r.alias.forms if r.alias is not None else (r.name,))
    return tuple(out)


def examples(*, plugins: bool = True) -> tuple[str, ...]:
    """One or more runnable configurations (names or aliases) per registered scheduler that runs
    on any workload.

    The conformance suite (``tests/unit/test_schedulers_conformance.py``) and the benchmarks run
    these: the name itself, or a row's ``examples`` for a scheduler with required parameters.
    A scheduler with :attr:`Registration.requires` (``recorded``: it needs a trace's recorded
    placements) has none and is left out.
    """
    out: list[str] = []
    for r in registrations(plugins=plugins):
        if r.requires is None:
            out.extend(r.examples or (r.name,))
    return tuple(out)


def _class_of(name: str) -> type[Scheduler]:
    """The class registered under ``name`` (an entry point is imported now); reached through
    :func:`resolve`.

    Raises
    ------
    ConfigError
        For an unknown name (suggesting the closest known one).
    RegistryError
        If the name is defined twice (by two entry points, or by an entry point and fairsim or
        :func:`register_scheduler`), its entry point cannot be loaded, or an entry point's name
        is a short name of a built-in (``slots-14``) or differs from a built-in's only by case
        (``DRF``): the names :func:`register_scheduler` refuses.
    """
    eps = _entry_points().get(name, [])
    sources = [_BUILTIN.get(name), _REGISTERED.get(name)]
    found = [r for r in sources if r is not None]
    if len(found) + len(eps) > 1:
        where = [
            "fairsim" if r.origin == "fairsim" else f"register_scheduler ({_qualname(r.cls)})"
            for r in found
        ] + [f"the {_origin(ep)}" for ep in eps]
        raise RegistryError(f"scheduler {name!r} is defined twice: by {' and by '.join(where)}")
    if found:
        return found[0].cls  # type: ignore[return-value]
    if eps:
        clash = _builtin_clash(name)
        if clash is not None:
            # a built-in alias (slots-14) or a case variant (DRF): the plug-in would shadow it
            raise RegistryError(f"scheduler {name!r}: the {_origin(eps[0])} is refused: {clash}")
        return _load(eps[0])
    raise ConfigError(_unknown(name))


#: How a user names a scheduler of their own, as every unknown-name error says.
OWN = (
    "a class of your own: 'module:Class', from an installed module or a file in the working "
    f"directory, or an entry point of the group {ENTRY_POINT_GROUP!r}"
)


def _unknown(name: str) -> str:
    """The one-line message for an unknown scheduler name, with what the user may have meant.

    A name that is an exact mechanism of ``fairsim solve`` (``drfh``) says so; a name found
    inside registered names (``drfh`` in ``ff-drfh`` and ``bf-drfh``, ``lock`` in
    ``drf-lockstep``) lists them all; otherwise the closest registered name is suggested, or
    for a dotted name ending in a class name (``my_module.MyFifo``) the import path
    ``my_module:MyFifo``. The known names are followed by the two ways to name a scheduler of
    one's own (:data:`OWN`).
    """
    from fairsim.schedulers.exact import EXACT, JOB_EXACT

    within = [
        r.alias.forms[0] if r.alias is not None else r.name
        for r in registrations()
        if len(name) >= 2 and name.lower() in r.name.lower()
    ]
    if within:
        shown = [repr(n) for n in within]
        hint = "; did you mean " + (
            f"{', '.join(shown[:-1])} or {shown[-1]}?" if len(shown) > 1 else f"{shown[0]}?"
        )
    else:
        candidates = [*(r.name for r in registrations() if r.alias is None)]
        candidates += [
            f for r in BUILTIN if r.alias is not None for f in r.alias.forms if "<" not in f
        ]
        candidates += ["slots-14", "slots-14-single", "slots-14-cpu"]
        close = difflib.get_close_matches(name, candidates, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
    module, dot, cls = name.rpartition(".")
    if not hint and dot and module and cls[:1].isupper():  # "my_module.MyFifo"
        hint = f"; did you mean {module + ':' + cls!r}?"
    solve = (
        " (it is an exact mechanism of 'fairsim solve', which allocates a static instance, not "
        "an online scheduler)"
        if name in EXACT or name in JOB_EXACT
        else ""
    )
    return f"unknown scheduler {name!r}{solve}{hint} (known: {', '.join(available())}; {OWN})"


def validate_name(name: str) -> str:
    """Return ``name`` if it names a registered scheduler or an alias (its parameters are
    checked too, e.g. ``slots-0`` is refused).

    Raises
    ------
    ConfigError
        If it does not; the message suggests the closest known name.
    """
    resolve(name)
    return name


# --------------------------------------------------------------------------- parameters


def params_model(cls: type[Scheduler]) -> type[BaseModel]:
    """The pydantic model of a scheduler's configurable parameters.

    Derived from the keyword parameters of ``cls.__init__`` (annotations, defaults; a parameter
    without a default is required), leaving out :data:`SCENARIO_INPUTS`. Validation is strict
    (no string-to-number coercion) and refuses NaN and infinities; annotate with
    ``typing.Annotated[float, pydantic.Field(gt=0)]`` to constrain a value. Unresolvable
    annotations are treated as ``Any``.

    Raises
    ------
    RegistryError
        If ``__init__`` has a parameter without a default that cannot be given by keyword.
    """
    cached = _PARAMS.get(cls)
    if cached is not None:
        return cached
    sig = inspect.signature(cls.__init__)
    try:
        hints = typing.get_type_hints(cls.__init__, include_extras=True)
    except Exception:  # annotations that name things only a type checker sees
        hints = {}
    fields: dict[str, Any] = {}
    for i, (pname, p) in enumerate(sig.parameters.items()):
        if i == 0 or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or pname in SCENARIO_INPUTS:
            continue
        if p.kind is p.POSITIONAL_ONLY:
            if p.default is p.empty:
                raise RegistryError(
                    f"{_qualname(cls)}: __init__ parameter {pname!r} is positional-only and has "
                    "no default (scheduler parameters are given by keyword)"
                )
            continue
        default = ... if p.default is p.empty else p.default
        fields[pname] = (hints.get(pname, Any), default)
    config = ConfigDict(
        extra="forbid", strict=True, allow_inf_nan=False, arbitrary_types_allowed=True
    )
    model: type[BaseModel] = create_model(f"{cls.__name__}Params", __config__=config, **fields)
    _PARAMS[cls] = model
    return model


def _format(value: Any) -> str | None:
    """A parameter value as a label part, or None if it has no short form."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):g}"
    if isinstance(value, str):
        return value
    return None


@dataclass(frozen=True)
class SchedulerSpec:
    """A validated scheduler configuration: name, parameters and label (:func:`resolve`);
    :func:`make_scheduler` builds it.

    Attributes
    ----------
    name : str
        Registered name, or the import path ``module:Class`` of an unregistered class.
    cls : type of Scheduler
    params : dict
        The parameters given (validated values), in signature order; defaults are not repeated.
    label : str
        Result folder and ``scheduler`` of the results (see the module docstring).
    """

    name: str
    cls: type[Scheduler]
    params: dict[str, Any]
    label: str
    entry: str | dict[str, Any] | None = field(default=None, compare=False)
    """The config entry that resolves to this spec, as written back into a resolved config
    (:meth:`config_entry`)."""

    def config_entry(self) -> str | dict[str, Any]:
        """This scheduler as a config entry: the name or alias it was given as
        (``"slots-14"``), else ``{name: ..., **parameters}`` with its label when one was given;
        an unregistered class is named by its import path ``"module:Class"``."""
        if self.entry is not None:
            return self.entry
        return {"name": self.name, **self.params, "label": self.label}


#: What :func:`resolve` and :func:`make_scheduler` take: a name, an alias or an import path
#: ``module:Class``; a mapping ``{name, label?, **parameters}``; a Scheduler subclass; a spec.
Entry = str | Mapping[str, Any] | type[Scheduler] | SchedulerSpec


def resolve(entry: Entry) -> SchedulerSpec:
    """Validate a config entry without building it: the scheduler's class, parameters and label.

    Parameters
    ----------
    entry : str or mapping or Scheduler subclass or SchedulerSpec
        A registered name (``"ff-drfh"``), an alias (``"slots-14"``), the import path of a class
        (``"my_package.fifo:Fifo"``: an installed module, or a file in the working directory),
        a mapping ``{"name": ..., "label": ..., **parameters}`` whose ``name`` is any of those
        but an alias or a class (``{"name": "psdsf", "period_s": 2}``), or a class given
        directly from Python (``fairsim.simulate``, :func:`fairsim.testing.check_scheduler`),
        used as it is. An unregistered class is labelled by the ``name`` it declares (else its
        class name) and written into a resolved config as its import path.

    Returns
    -------
    SchedulerSpec

    Raises
    ------
    ConfigError
        For an unknown name (suggesting the closest known one), an import path that cannot be
        imported, an unknown or invalid parameter (naming the scheduler, the field and the
        value), or a label that is not a single folder name.
    RegistryError
        For a class that is not a Scheduler subclass or whose ``__init__`` is unusable, a name
        defined twice, or an entry point that cannot be loaded.
    """
    if isinstance(entry, SchedulerSpec):
        return entry
    label: str | None = None
    target: str | type
    if isinstance(entry, str | type):
        target, given = entry, {}
    elif isinstance(entry, Mapping):
        if "name" not in entry:
            raise ConfigError(
                f"{dict(entry)!r}: a scheduler given as a mapping needs 'name' (e.g. "
                "{name: psdsf, period_s: 2})"
            )
        target = entry["name"]
        if not isinstance(target, str | type):
            raise ConfigError(f"name: {target!r} (expected a scheduler name)")
        given = {k: v for k, v in entry.items() if k not in ("name", "label")}
        if "label" in entry:
            label = entry["label"]
            if not isinstance(label, str):
                shown = _class_name(target) if isinstance(target, type) else target
                raise ConfigError(f"{shown}: label: {label!r} (expected a folder name)")
        base = _alias_base(target) if isinstance(target, str) else None
        if base is not None:
            raise ConfigError(
                f"name: {target!r} is a short name; in a mapping give {{name: {base}, ...}} with "
                "its parameters"
            )
    else:
        raise ConfigError(
            f"{entry!r}: expected a scheduler name or a mapping {{name: ..., parameter: value}}"
        )
    name, cls, implied = _lookup(target)
    params = _validate_params(entry if isinstance(entry, str) else name, cls, implied | given)
    written: str | dict[str, Any]  # the entry as a resolved config writes it
    if isinstance(entry, str):
        written = entry
    elif isinstance(entry, type):
        written = name
    else:
        written = {"name": name, **params, **({"label": label} if label else {})}
    if label is None:
        label = _label(_label_base(name, cls), cls, params)
    _check_label(name, label)
    return SchedulerSpec(name=name, cls=cls, params=params, label=label, entry=written)


def _lookup(target: str | type) -> tuple[str, type[Scheduler], dict[str, Any]]:
    """The registered name (or import path), the class, and the parameters an alias stands for,
    of a name, an alias, an import path or a class."""
    if isinstance(target, type):
        if not issubclass(target, Scheduler):
            raise RegistryError(f"{target!r} is not a subclass of fairsim.Scheduler")
        return _class_name(target), target, {}
    if ":" in target:
        return target, _import_class(target), {}
    if target not in _BUILTIN and target not in _REGISTERED and target not in _entry_points():
        for r in BUILTIN:
            m = r.alias.pattern.fullmatch(target) if r.alias is not None else None
            if m is not None:
                return r.name, r.cls, r.alias.params(m)  # type: ignore[return-value,union-attr]
    return target, _class_of(target), {}


def _alias_base(name: str) -> str | None:
    """The registered name whose alias ``name`` matches (``slots`` for ``slots-14``), or None."""
    for r in BUILTIN:
        if r.alias is not None and r.alias.pattern.fullmatch(name):
            return r.name
    return None


def _class_name(cls: type) -> str:
    """How a config names a scheduler class given directly: its registered name, else its
    import path ``module:Class``."""
    for r in registrations():
        if r.cls is cls:
            return r.name
    return f"{cls.__module__}:{cls.__qualname__}"


def _label_base(name: str, cls: type[Scheduler]) -> str:
    """The first part of a label: the registered name, or for a class named by its import path
    the ``name`` the class itself declares (else its class name)."""
    if ":" not in name:
        return name
    own = cls.__dict__.get("name")
    return own if isinstance(own, str) and own else cls.__name__


def _one_line(exc: BaseException) -> str:
    """An exception's message on one line (its first), or its type's name."""
    msg = str(exc).strip()
    return msg.splitlines()[0] if msg else type(exc).__name__


def _call(kw: Mapping[str, Any]) -> str:
    """Keyword arguments as a call shows them, long values cut (``period_s=2``)."""
    parts = []
    for k, v in kw.items():
        text = repr(v)
        parts.append(f"{k}={text if len(text) <= 40 else text[:37] + '...'}")
    return ", ".join(parts)


#: Serialises the working directory's short stay on ``sys.path`` (:func:`_import_module`).
_PATH_LOCK = threading.Lock()


def _import_module(module: str) -> types.ModuleType:
    """Import ``module`` as ``python -m`` would: from ``sys.path`` and, when it is not found
    there, from the working directory, which is on ``sys.path`` (at its end, so that installed
    modules keep precedence) for that import only.

    Raises
    ------
    ImportError
        If it is found in neither, or a module it imports is missing.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not (module == missing or module.startswith(f"{missing}.")):
            raise  # the module was found; something it imports is missing
        cwd = os.getcwd()
        if cwd in sys.path or "" in sys.path:
            raise  # the working directory was searched already
    with _PATH_LOCK:
        sys.path.append(cwd)
        try:
            importlib.invalidate_caches()
            return importlib.import_module(module)
        finally:
            for i in range(len(sys.path) - 1, -1, -1):
                if sys.path[i] == cwd:
                    del sys.path[i]
                    break


def _import_class(path: str) -> type[Scheduler]:
    """The scheduler class at an import path ``"module:Class"`` (``module:Outer.Inner`` for a
    nested class), as a config may name an unregistered class (through :func:`resolve`).

    The module is imported from ``sys.path`` (installed modules) or, when it is not found
    there, from the working directory, as ``python -m`` would: ``fz_fifo:Fifo`` finds
    ``fz_fifo.py`` beside the config when ``fairsim run`` runs there. The working directory is
    on ``sys.path`` during that import only; a module it imports later (inside a function) must
    be importable without it.

    Raises
    ------
    ConfigError
        If the module cannot be imported (naming where it was looked for) or raises while it is
        imported, has no such name, or the name is not a subclass of :class:`fairsim.Scheduler`.
    """
    module, _, qualname = path.partition(":")
    if not module or not qualname:
        raise ConfigError(f"scheduler {path!r}: expected an import path 'module:Class'")
    try:
        obj: Any = _import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except ModuleNotFoundError as exc:
        where = (
            "; not installed, and not in the working directory " + os.getcwd()
            if exc.name and (module == exc.name or module.startswith(f"{exc.name}."))
            else ""
        )
        raise ConfigError(
            f"scheduler {path!r}: cannot import {module!r} ({_one_line(exc)}{where})"
        ) from None
    except ImportError as exc:
        raise ConfigError(
            f"scheduler {path!r}: cannot import {module!r} ({_one_line(exc)})"
        ) from None
    except AttributeError:
        raise ConfigError(f"scheduler {path!r}: module {module!r} has no {qualname!r}") from None
    except Exception as exc:  # the module's own code failed while it was imported
        raise ConfigError(
            f"scheduler {path!r}: importing {module!r} raised {type(exc).__name__}: "
            f"{_one_line(exc)}"
        ) from exc
    if not (isinstance(obj, type) and issubclass(obj, Scheduler)):
        raise ConfigError(f"scheduler {path!r}: {obj!r} is not a subclass of fairsim.Scheduler")
    params_model(obj)  # an unusable __init__ is refused now, naming the class
    return obj


def _validate_params(name: str, cls: type[Scheduler], given: Mapping[str, Any]) -> dict[str, Any]:
    model = params_model(cls)
    fields = model.model_fields
    for key in given:
        if key in SCENARIO_INPUTS:
            raise ConfigError(
                f"{name}: {key}: given per user by the scenario (trace.weights, "
                "trace.users[].weight / eligible), not per scheduler"
            )
        if key not in fields:
            if not fields:
                raise ConfigError(f"{name}: unknown parameter {key!r} ({name} takes none)")
            raise ConfigError(f"{name}: {unknown_key(key, fields).replace('key', 'parameter')}")
    try:
        valid = model.model_validate(dict(given))
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(p) for p in e["loc"]) or "parameters"
        if e["type"] == "missing":
            raise ConfigError(f"{name}: {loc}: required parameter is missing") from None
        raise ConfigError(f"{name}: {loc}: {e.get('input')!r} ({e['msg']})") from None
    return {k: getattr(valid, k) for k in fields if k in given}


def _label(name: str, cls: type[Scheduler], params: Mapping[str, Any]) -> str:
    fields = params_model(cls).model_fields
    parts = [name]
    for key, value in params.items():
        f = fields[key]
        if not f.is_required() and _same(value, f.default):
            continue
        text = _format(value)
        if text is None:
            raise ConfigError(
                f"{name}: {key}: {value!r} has no short form for the result folder's name; "
                "give the entry a label"
            )
        parts.append(text)
    return "-".join(parts)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # e.g. arrays
        return False


def _check_label(name: str, label: str) -> None:
    if not label.strip() or label in (".", "..") or any(c in label for c in "/\\\0"):
        raise ConfigError(
            f"{name}: label {label!r} is not a single folder name (no '/', '\\', '.' or '..')"
        )


def make_scheduler(
    entry: Entry,
    *,
    weights: Mapping[int, float] | None = None,
    eligible: Mapping[int, np.ndarray] | None = None,
    bounds: Mapping[int, float] | None = None,
    placements: RecordedRuns | None = None,
    queues: QueueTree | None = None,
) -> Scheduler:
    """Build a new, unbound scheduler from a config entry: the one way to build one.

    Configs, ``fairsim run``, ``fairsim sweep``, ``fairsim solve``, the conformance suite and the
    reproductions all build their schedulers here, as scikit-learn builds every estimator from
    its parameters: the entry is validated by :func:`resolve` (unless it is a
    :class:`SchedulerSpec` already), then the class is constructed with the given parameters
    and the scenario's inputs its ``__init__`` accepts.

    Parameters
    ----------
    entry : str or mapping or Scheduler subclass or SchedulerSpec
        A registered name, an alias (``slots-14``), an import path (``module:Class``), a
        mapping ``{name: ..., label: ..., parameter: value}`` or a class (:func:`resolve`).
    weights : mapping of int to float, optional
        Weight per user code (:class:`fairsim.schedulers.progressive_filling.ProgressiveFilling`).
    eligible : mapping of int to ndarray of bool, optional
        Servers each user may use.
    bounds : mapping of int to float, optional
        Task bound per user, for ``lmm-mms``
        (:class:`fairsim.schedulers.online_mechanisms.LMMMMS`); a hint that schedulers without
        a ``bounds`` parameter do not receive.
    placements : RecordedRuns, optional
        The trace's recorded runs on the pool, for ``recorded``
        (:class:`fairsim.schedulers.recorded.Recorded`); schedulers without a ``placements``
        parameter do not receive them.
    queues : QueueTree, optional
        The scenario's queue tree in the pool's units, for hierarchical schedulers (``hdrf``,
        :class:`fairsim.schedulers.hdrf_online.HDRF`); the others share among the users as
        one flat set and do not receive it.

    Returns
    -------
    Scheduler
        Unbound; its ``name`` is the entry's label.

    Raises
    ------
    ConfigError
        For an unknown name or invalid parameters (:func:`resolve`), weights other than 1
        (eligible servers) for a scheduler whose ``__init__`` takes no ``weights``
        (``eligible``), or a constructor that raises (one line naming the scheduler, the call
        and the error).
    RegistryError
        For a class that is not a Scheduler subclass, a name defined twice, an entry point that
        cannot be loaded, or a read-only ``name`` that differs from the label.

    Examples
    --------
    >>> from fairsim.schedulers import make_scheduler
    >>> make_scheduler("slots-14").name
    'slots-14'
    >>> make_scheduler({"name": "psdsf", "period_s": 2}).name
    'psdsf-2'
    """
    spec = resolve(entry)
    cls, label = spec.cls, spec.label
    accepted = inspect.signature(cls.__init__).parameters
    kw = dict(spec.params)
    inputs: dict[str, Any] = {
        "weights": weights or None,
        "eligible": eligible or None,
        "bounds": bounds or None,
        "placements": placements,
        "queues": queues,
    }
    for key, value in inputs.items():
        if value is None:
            continue
        if key in accepted:
            kw[key] = value
        elif key == "weights" and any(float(w) != 1.0 for w in value.values()):
            raise ConfigError(
                f"scheduler {label!r} takes no user weights (its __init__ has no 'weights' "
                "parameter), but the scenario gives users weights other than 1"
            )
        elif key == "eligible":
            raise ConfigError(
                f"scheduler {label!r} takes no eligible servers per user (its __init__ has no "
                "'eligible' parameter), but the scenario restricts users to servers"
            )
        # bounds: an optional hint (only lmm-mms uses it); weights all 1: nothing to lose;
        # placements: only the replay of recorded placements takes them; queues: a flat
        # scheduler shares among the users as one set (the tree is the hierarchical ones')
    try:
        sched = cls(**kw)
    except ConfigError:
        raise
    except Exception as exc:  # the class's own code: one line naming the scheduler
        raise ConfigError(
            f"scheduler {label!r}: {_qualname(cls)}({_call(kw)}) raised "
            f"{type(exc).__name__}: {_one_line(exc)}"
        ) from exc
    if sched.name != label:
        try:
            sched.name = label
        except AttributeError:
            raise RegistryError(
                f"scheduler {label!r}: {_qualname(cls)}.name is read-only and says "
                f"{sched.name!r}; make it a plain attribute"
            ) from None
    return sched
