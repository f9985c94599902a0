"""Where a result came from: the fairsim version and, from a git checkout, the commit.

:func:`provenance` gives the two keys every ``summary.json`` records beside ``config_hash``:
``fairsim_version`` (:data:`fairsim.__version__`) and ``git_commit``, the ``HEAD`` hash of the
checkout fairsim runs from, with a ``-dirty`` mark when its tracked files have changes, or None
when fairsim does not run from a git checkout (an installed wheel) or ``git`` is missing. It
never raises: provenance is recorded when it can be found, never a reason for a run to fail.
"""

from __future__ import annotations

import functools
import logging
import subprocess
from pathlib import Path

import fairsim._version as version_module
from fairsim._version import __version__

log = logging.getLogger(__name__)

#: Seconds one ``git`` call may take before provenance gives up (a hung network file system).
GIT_TIMEOUT_S = 10.0


def _git(root: Path, *args: str) -> str | None:
    """Output of ``git -C root ARGS`` (stripped), None when git is missing or fails."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("git %s: %s", " ".join(args), exc)
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit(package_dir: Path | None = None) -> str | None:
    """The commit of the git checkout that holds the fairsim package.

    Parameters
    ----------
    package_dir : Path, optional
        The ``fairsim`` package folder (default: the imported one, symlinks resolved).

    Returns
    -------
    str or None
        The ``HEAD`` hash (40 hex digits), followed by ``-dirty`` when ``git status`` lists a
        changed tracked file; None when the folder is not inside a git work tree whose top
        level holds fairsim's sources, or when ``git`` is missing or fails.
    """
    here = package_dir or Path(version_module.__file__).resolve().parent
    top = _git(here, "rev-parse", "--show-toplevel")
    if not top:
        return None
    # an installed package inside some other repository (a virtualenv in a project folder) is
    # not a fairsim checkout: the top level must be the package folder's parent
    if Path(top).resolve() != here.parent.resolve():
        return None
    head = _git(here, "rev-parse", "HEAD")
    if not head:
        return None
    changes = _git(here, "status", "--porcelain", "--untracked-files=no")
    return f"{head}-dirty" if changes else head


@functools.cache
def provenance() -> dict[str, str | None]:
    """``fairsim_version`` and ``git_commit`` (:func:`git_commit`) of this process, looked up
    once.

    Returns
    -------
    dict
        ``{"fairsim_version": "0.2.0", "git_commit": "<hash>[-dirty]" or None}``.
    """
    return {"fairsim_version": __version__, "git_commit": git_commit()}
