"""The trace cache: a raw trace is converted once to the canonical tables and reused.

A ``google-2011`` or Alibaba folder is converted with :mod:`fairsim.traces` into
``<cache_dir>/<format>-<key>/`` (``tasks.parquet``, ``servers.parquet`` when the trace describes
machines, ``placements.parquet`` for Google 2011, ``conversion.json``), where the key hashes the
source folder, the parts read, the
canonical schema's version, the converter's version and (Google 2011) the placements table's
version (:data:`fairsim.traces.schema.PLACEMENTS_SCHEMA_VERSION`): a changed input or converter
gives a new folder, never a stale one, and checkouts of different versions sharing one cache
never rewrite each other's folders. A Google 2011 folder missing one of its files (an
interrupted copy by hand) is converted again. A synthetic complex-job workload is written there
once too. Each folder
is written under a temporary name and renamed into place when complete
(:func:`fairsim.atomic.atomic_dir`), so concurrent runs never read half a conversion.

Relative paths of a config are relative to its file's folder (``base``,
:func:`resolve_path`); ``trace.cache_dir`` defaults to the user's cache folder
(:func:`default_cache_dir`: ``$FAIRSIM_CACHE_DIR``, else ``$XDG_CACHE_HOME/fairsim/traces``,
``~/.cache/fairsim/traces`` by default), never the working directory.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from fairsim.atomic import atomic_dir
from fairsim.errors import ConfigError
from fairsim.scenario.config import (
    AlibabaTrace,
    GoogleTrace,
    RunConfig,
    SyntheticTrace,
    component_rng,
)

log = logging.getLogger(__name__)


def resolve_path(raw: str, base: Path | None = None) -> Path:
    """A config path: a relative one is relative to ``base``, the config file's folder (to the
    working directory when the config did not come from a file, ``base=None``)."""
    p = Path(raw).expanduser()
    if p.is_absolute() or base is None:
        return p
    return base / p


#: Environment variable naming the trace cache folder (overrides the user cache folder).
CACHE_ENV_VAR = "FAIRSIM_CACHE_DIR"


def default_cache_dir() -> Path:
    """Where converted traces are cached when ``trace.cache_dir`` is not given.

    ``$FAIRSIM_CACHE_DIR`` when set, else the user's cache folder: ``$XDG_CACHE_HOME/fairsim/
    traces``, ``~/.cache/fairsim/traces`` when ``XDG_CACHE_HOME`` is unset (beside the numba
    cache, ``fairsim/numba``; the download cache, :func:`fairsim.traces.paths.data_dir`, holds
    raw files, this one converted tables). Never the working directory: a Python session that
    passes ``out=`` elsewhere leaves its working directory untouched. The folders inside it and
    their keys are the same wherever it is.

    Returns
    -------
    pathlib.Path
        Absolute; it need not exist yet.
    """
    env = os.environ.get(CACHE_ENV_VAR)
    if env:
        return Path(env).expanduser().resolve()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser().resolve() / "fairsim" / "traces"


def cache_root(
    trace: GoogleTrace | AlibabaTrace | SyntheticTrace, base: Path | None = None
) -> Path:
    """The cache folder of converted traces.

    Parameters
    ----------
    trace : GoogleTrace, AlibabaTrace or SyntheticTrace
        A trace format that writes to the cache.
    base : Path, optional
        The config file's folder.

    Returns
    -------
    Path
        ``trace.cache_dir`` (a relative one is relative to ``base``), or
        :func:`default_cache_dir` when it is not given.
    """
    if trace.cache_dir is None:
        return default_cache_dir()
    return resolve_path(trace.cache_dir, base)


#: Bump when the converter's rules change, so cached conversions are redone.
CONVERTER_VERSION = "5"
ALIBABA_CONVERTER_VERSION = "4"
#: The files of a complete Google 2011 cache folder.
GOOGLE_CACHE_FILES = ("tasks.parquet", "conversion.json", "placements.parquet")


def _cache_key(src: Path, parts: str | None) -> str:
    from fairsim.traces.schema import PLACEMENTS_SCHEMA_VERSION, SCHEMA_VERSION

    files = sorted(src.glob("task_events/*.csv.gz")) + sorted(src.glob("machine_events/*.csv.gz"))
    spec = parts if parts is not None else "all"
    versions = f"{SCHEMA_VERSION}|{CONVERTER_VERSION}|p{PLACEMENTS_SCHEMA_VERSION}"
    h = hashlib.sha256(f"{src.resolve()}|{spec}|{versions}".encode())
    for f in files:
        st = f.stat()
        h.update(f"{f.name}:{st.st_size}".encode())
    return h.hexdigest()[:16]


def converted_google(trace: GoogleTrace, base: Path | None, progress: bool) -> Path:
    """Convert a Google 2011 folder once and return the cached canonical folder."""
    from fairsim.traces.fetch import parse_parts
    from fairsim.traces.google2011 import convert_google_2011

    src = resolve_path(trace.path, base)
    if not src.is_dir():
        raise ConfigError(f"trace.path: {str(src)!r} is not a directory")
    if not (src / "task_events").is_dir():
        raise ConfigError(f"trace.path: {str(src)!r} has no task_events folder")
    cache = cache_root(trace, base) / f"google-2011-{_cache_key(src, trace.parts)}"
    if all((cache / f).is_file() for f in GOOGLE_CACHE_FILES):
        return cache
    parts = parse_parts(trace.parts) if trace.parts is not None else None
    log.info("converting %s (parts %s) into %s", src, trace.parts or "all", cache)
    with atomic_dir(cache, overwrite=True, what="trace.cache_dir") as tmp:
        convert_google_2011(
            src,
            tmp,
            parts=parts,
            progress=progress,
            bad_row_threshold=trace.bad_row_threshold,
        )
    return cache


def converted_alibaba(trace: AlibabaTrace, base: Path | None) -> Path:
    """Convert an Alibaba trace folder once and return the cached canonical folder."""
    from fairsim.traces.alibaba import convert_alibaba
    from fairsim.traces.schema import SCHEMA_VERSION

    src = resolve_path(trace.path, base)
    if not src.is_dir():
        raise ConfigError(f"trace.path: {str(src)!r} is not a directory")
    h = hashlib.sha256(
        f"{src.resolve()}|{trace.format}|{SCHEMA_VERSION}|{ALIBABA_CONVERTER_VERSION}".encode()
    )
    for f in sorted(p for p in src.rglob("*") if p.is_file()):
        h.update(f"{f.relative_to(src)}:{f.stat().st_size}".encode())
    cache = cache_root(trace, base) / f"{trace.format}-{h.hexdigest()[:16]}"
    if (cache / "tasks.parquet").is_file() and (cache / "conversion.json").is_file():
        return cache
    log.info("converting %s (%s) into %s", src, trace.format, cache)
    with atomic_dir(cache, overwrite=True, what="trace.cache_dir") as tmp:
        convert_alibaba(trace.format, src, tmp, bad_row_threshold=trace.bad_row_threshold)
    return cache


def synthetic_complex(cfg: RunConfig, base: Path | None = None) -> Path:
    """Write the complex-job synthetic workload of the config once (cached) and return it."""
    from fairsim.traces.io import write_tasks
    from fairsim.traces.synth import default_duration_s, synth_complex_jobs

    trace = cfg.trace
    assert isinstance(trace, SyntheticTrace)
    rng_seed = int(component_rng(cfg.seed, "workload").integers(2**31))
    window = trace.duration_s or default_duration_s(trace.n_tasks)
    name = f"synthetic-complex-{trace.n_tasks}-{rng_seed}-w{window:.6g}"
    folder = cache_root(trace, base) / name
    if not (folder / "tasks.parquet").is_file():
        with atomic_dir(folder, overwrite=True, what="trace.cache_dir") as tmp:
            frame = synth_complex_jobs(trace.n_tasks, seed=rng_seed, duration_s=window)
            write_tasks(frame, tmp / "tasks.parquet")
    return folder / "tasks.parquet"
