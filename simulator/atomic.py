"""Atomic file writes: a temporary file in the destination's folder, renamed into place.

A reader never sees a half-written file, and a write that fails (or is interrupted) leaves the
previous file, if any, untouched. Every writer of results, traces, figures and reports uses these.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


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
        Where to write (a hidden file in the same folder, so the rename is atomic).
    """
    dest = Path(path)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and return the path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)
