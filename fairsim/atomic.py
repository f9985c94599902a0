"""Atomic output: files and whole folders are written under a temporary name and renamed into
place when complete; JSON is strict (no NaN or Infinity).

A reader never sees a half-written file or result folder, and a write that fails (or is
interrupted, Ctrl-C included) leaves the previous file or folder, if any, untouched and nothing
new behind. Every writer of results, traces, figures and reports uses these:

* :func:`atomic_path` / :func:`write_text`: one file;
* :func:`atomic_paths`: several files that belong together, all written before any is renamed;
* :func:`atomic_dir`: one output folder (``fairsim run --out``, ``trace convert``, ``trace synth``,
  ``properties --out``, each run of a sweep), refused when it already exists and is not empty
  unless ``overwrite`` is set (then it is replaced whole);
* :func:`check_output_file`: an output file path refused before any work (a folder, below a
  file, an input or inside an input folder);
* :func:`json_text`: the only JSON encoder of files fairsim writes; a non-finite float becomes
  ``null`` (strict JSON parsers reject ``NaN``).

Results get the permissions of any file the user writes: ``0o666 & ~umask`` for a file and
``0o777 & ~umask`` for a folder (:func:`file_mode`, :func:`dir_mode`), although the temporary
names are created private (``mkstemp``/``mkdtemp`` use ``0o600``/``0o700``). The umask is read
from ``/proc/self/status`` where the kernel reports it (Linux 4.7 and later); elsewhere it is read
by setting and restoring it under a lock, which another thread that changes the umask itself at
that very moment could race (:func:`current_umask`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from fairsim.errors import OutputError

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's file mode creation mask, read without changing it where possible.

    Returns
    -------
    int
        The umask (e.g. ``0o022``).

    Notes
    -----
    ``os.umask`` can only read the mask by setting it, which is process-wide: a file another
    thread creates between the two calls would get the temporary mask. So the mask is read from
    the ``Umask:`` line of ``/proc/self/status`` when the kernel provides it (Linux 4.7 and
    later), and only otherwise by ``os.umask`` twice under a module lock (fairsim itself creates
    no files from other threads meanwhile).
    """
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file of the user gets: ``0o666 & ~umask`` (``0o644`` under ``0o022``)."""
    return 0o666 & ~current_umask()


def dir_mode() -> int:
    """The mode a new folder of the user gets: ``0o777 & ~umask`` (``0o755`` under ``0o022``)."""
    return 0o777 & ~current_umask()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; move it into place on success, delete on error.

    Parameters
    ----------
    path : path-like
        Final destination; its folder is created if needed.

    Yields
    ------
    pathlib.Path
        Where to write (a hidden file in the same folder, so the rename is atomic). It is
        given :func:`file_mode` before the rename (``mkstemp`` creates it ``0o600``).
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, file_mode())
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_paths(paths: Iterable[str | os.PathLike[str]]) -> Iterator[list[Path]]:
    """Yield a temporary path beside each of ``paths``; move them all into place when the block
    succeeds, delete them all on error.

    For several files that belong together (``sweep-report``'s tables, figures and report
    written into an existing folder): they are all written before any is renamed, so a write
    that fails leaves every earlier file as it was and none of the new ones. The renames come
    last, one after the other.

    Parameters
    ----------
    paths : iterable of path-like
        Final destinations; their folders are created if needed.

    Yields
    ------
    list of pathlib.Path
        Where to write, in the order of ``paths`` (hidden files in the same folders), given
        :func:`file_mode` before the renames.
    """
    dests = [Path(p) for p in paths]
    tmps: list[Path] = []
    try:
        for dest in dests:
            dest.parent.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
            os.close(fd)
            tmps.append(Path(name))
        yield list(tmps)
        mode = file_mode()
        for tmp in tmps:
            os.chmod(tmp, mode)
        for tmp, dest in zip(tmps, dests, strict=True):
            os.replace(tmp, dest)
    except BaseException:
        for tmp in tmps:
            tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


# --------------------------------------------------------------------------- JSON


def finite(obj: Any) -> Any:
    """``obj`` as plain JSON data: numpy scalars and arrays converted, NaN and ±inf as ``None``.

    Parameters
    ----------
    obj : object
        Nested dicts, lists, tuples, numbers, strings, booleans, None, numpy scalars or arrays.

    Returns
    -------
    object
        The same structure with every non-finite float replaced by ``None``.

    Raises
    ------
    TypeError
        For an object JSON cannot represent.
    """
    if obj is None or isinstance(obj, str | bool):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k if isinstance(k, str) else str(k): finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    import numpy as np

    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return finite(float(obj))
    if isinstance(obj, np.ndarray):
        return finite(obj.tolist())
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def json_text(obj: Any, *, indent: int | None = 2, sort_keys: bool = True) -> str:
    """Strict JSON text of ``obj``: never ``NaN`` or ``Infinity`` (they become ``null``).

    Parameters
    ----------
    obj : object
        As for :func:`finite`.
    indent : int or None
        Indentation (None: one line).
    sort_keys : bool
        Sort mapping keys.

    Returns
    -------
    str

    Raises
    ------
    TypeError
        For an object JSON cannot represent.
    """
    return json.dumps(finite(obj), indent=indent, sort_keys=sort_keys, allow_nan=False)


# --------------------------------------------------------------------------- folders


def _protected(dest: Path, protect: Iterable[str | os.PathLike[str]]) -> str | None:
    """What replacing the existing folder ``dest`` would delete: the working directory or one of
    ``protect`` when it is ``dest`` or lies inside it, or part of a folder of ``protect`` that
    holds ``dest`` (``--out`` a trace's own ``task_events`` folder, or a folder of a run being
    compared); None when nothing."""
    inputs = [Path(os.path.abspath(x)) for x in protect]
    for q, name in [(Path.cwd(), "the working directory"), *((i, "an input") for i in inputs)]:
        if q == dest:
            return f"it is {name}"
        if dest in q.parents:
            return f"it holds {str(q)!r}"
    for q in inputs:
        if q in dest.parents and q.is_dir():
            return f"it lies inside the input folder {str(q)!r}"
    return None


def check_output_dir(
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    what: str = "--out",
    protect: Iterable[str | os.PathLike[str]] = (),
) -> Path:
    """Refuse an output folder that cannot be (re)written, before any work is done.

    Parameters
    ----------
    path : path-like
        The output folder.
    overwrite : bool
        Whether an existing non-empty folder may be replaced.
    what : str
        How the messages name the folder (``--out``, ``trace.cache_dir``, ...).
    protect : iterable of path-like
        Inputs that must not lie inside a folder that is replaced (the config file, a trace,
        the runs compared), nor, for a folder input, hold it.

    Returns
    -------
    pathlib.Path
        The folder as an absolute path.

    Raises
    ------
    OutputError
        One line naming the path: it is an existing file, lies below a file, already exists and
        is not empty (without ``overwrite``), would delete the working directory, an input or part
        of an input folder, or cannot be written.
    """
    shown = os.fspath(path)
    dest = check_writable_dir(path, what=what)
    if dest.is_dir():
        try:
            empty = not any(dest.iterdir())
        except OSError as exc:
            raise OutputError(f"{what}: {shown!r} cannot be read ({exc.strerror})") from None
        if not empty and not overwrite:
            raise OutputError(
                f"{what}: {shown!r} already exists and is not empty "
                "(--overwrite replaces it, or choose another folder)"
            )
        why = _protected(dest, protect)
        if why is not None:
            raise OutputError(f"{what}: refusing to replace {shown!r}: {why}")
    return dest


def check_writable_dir(path: str | os.PathLike[str], *, what: str = "--out") -> Path:
    """Refuse a folder path that is a file, lies below a file, or cannot be written.

    Returns
    -------
    pathlib.Path
        ``path``, absolute.

    Raises
    ------
    OutputError
        One line naming the path and the problem.
    """
    shown = os.fspath(path)
    if not shown or "\0" in shown:
        raise OutputError(f"{what}: {shown!r} is not a folder path")
    dest = Path(os.path.abspath(path))
    if dest.exists() and not dest.is_dir():
        raise OutputError(f"{what}: {shown!r} is an existing file, not a folder")
    _check_writable_ancestor(dest if dest.exists() else dest.parent, shown, what)
    return dest


def _check_writable_ancestor(anc: Path, shown: str, what: str) -> None:
    """Refuse ``shown`` when the nearest existing folder at or above ``anc`` is a file or
    cannot be written into (:class:`OutputError`, one line)."""
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir():
        raise OutputError(f"{what}: {shown!r} is below {str(anc)!r}, which is a file")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise OutputError(f"{what}: cannot write into {str(anc)!r} (permission denied)")


def check_output_file(
    path: str | os.PathLike[str],
    *,
    what: str = "--out",
    protect: Iterable[str | os.PathLike[str]] = (),
) -> Path:
    """Refuse an output file path that cannot be written, before any work is done.

    An existing file (not an input) may be replaced: it is written atomically
    (:func:`atomic_path`).

    Parameters
    ----------
    path : path-like
        The output file.
    what : str
        How the messages name the file (``--json``, ...).
    protect : iterable of path-like
        Inputs the file must not be, nor, for a folder input, lie inside (the trace checked).

    Returns
    -------
    pathlib.Path
        The file as an absolute path.

    Raises
    ------
    OutputError
        One line naming the path: it is empty, an existing folder, lies below a file, is in a
        folder that cannot be written, is an input or lies inside an input folder.
    """
    shown = os.fspath(path)
    if not shown or "\0" in shown:
        raise OutputError(f"{what}: {shown!r} is not a file path")
    dest = Path(os.path.abspath(path))
    if dest.is_dir():
        raise OutputError(f"{what}: {shown!r} is an existing folder, not a file")
    _check_writable_ancestor(dest.parent, shown, what)
    for q in (Path(os.path.abspath(x)) for x in protect):
        if q == dest:
            raise OutputError(f"{what}: refusing to replace {shown!r}: it is an input")
    check_outside_inputs(path, protect, what=what)
    return dest


def check_outside_inputs(
    path: str | os.PathLike[str],
    inputs: Iterable[str | os.PathLike[str]],
    *,
    what: str = "--out",
) -> None:
    """Refuse an output (file or folder, existing or not) that lies inside an input folder.

    :func:`check_output_dir` refuses to *replace* a folder inside an input; a command that reads
    a whole folder (``trace convert SRC``) also refuses to *create* its output there.

    Raises
    ------
    OutputError
        ``<what>: refusing to write '<path>': it lies inside the input folder '<input>'``.
    """
    shown = os.fspath(path)
    dest = Path(os.path.abspath(path))
    for q in (Path(os.path.abspath(x)) for x in inputs):
        if q in dest.parents and q.is_dir():
            raise OutputError(
                f"{what}: refusing to write {shown!r}: it lies inside the input folder {str(q)!r}"
            )


def _created_parents(dest: Path) -> list[Path]:
    """The missing ancestors of ``dest``, outermost first."""
    missing = []
    p = dest.parent
    while not p.exists():
        missing.append(p)
        p = p.parent
    return missing[::-1]


@contextlib.contextmanager
def atomic_dir(
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    what: str = "--out",
    protect: Iterable[str | os.PathLike[str]] = (),
) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``path``; rename it to ``path`` on success.

    The destination is checked first (:func:`check_output_dir`). On success the temporary
    folder replaces ``path`` whole (an earlier folder is moved aside and deleted only after the
    rename); on any exception, ``KeyboardInterrupt`` included, the temporary folder and any parent
    folders created for it are removed and ``path`` is left as it was.

    Parameters
    ----------
    path : path-like
        Final folder.
    overwrite : bool
        Replace an existing non-empty folder (default: refuse it).
    what, protect
        As for :func:`check_output_dir`.

    Yields
    ------
    pathlib.Path
        The temporary folder (``.<name>.XXXXXXXX.tmp`` in the same parent, so the rename is
        atomic), with :func:`dir_mode` (``mkdtemp`` alone would make it ``0o700``).

    Raises
    ------
    OutputError
        If the destination is refused or cannot be created.
    """
    shown = os.fspath(path)
    dest = check_output_dir(path, overwrite=overwrite, what=what, protect=protect)
    created = _created_parents(dest)
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent))
        os.chmod(tmp, dir_mode())
    except OSError as exc:
        _remove_empty(created)
        raise OutputError(f"{what}: cannot create {shown!r} ({exc.strerror or exc})") from None
    try:
        yield tmp
        try:
            if not overwrite and dest.is_dir() and any(dest.iterdir()):
                raise FileExistsError(17, "it exists now and is not empty")
            _move_into_place(tmp, dest)
        except OSError as exc:
            raise OutputError(
                f"{what}: cannot rename the finished output to {shown!r} ({exc.strerror or exc}; "
                "did another command write there meanwhile?)"
            ) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        _remove_empty(created)
        raise


def _move_into_place(tmp: Path, dest: Path) -> None:
    """Rename ``tmp`` to ``dest``; an existing ``dest`` is moved aside first, deleted after."""
    if not dest.exists():
        os.rename(tmp, dest)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", suffix=".old", dir=dest.parent))
    os.rename(dest, old / dest.name)
    try:
        os.rename(tmp, dest)
    except BaseException:
        os.rename(old / dest.name, dest)
        shutil.rmtree(old, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _remove_empty(folders: list[Path]) -> None:
    for p in reversed(folders):
        try:
            p.rmdir()
        except OSError:
            return
