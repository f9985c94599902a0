"""Where the shared trace samples live (``FAIRSIM_SHARED``) and where downloads are cached
(``FAIRSIM_DATA_DIR``)."""

from __future__ import annotations

import os
from pathlib import Path

from fairsim.errors import TraceError

ENV_VAR = "FAIRSIM_SHARED"
#: Overrides the download cache (pooch's convention: ``<PROJECT>_DATA_DIR``).
DATA_ENV_VAR = "FAIRSIM_DATA_DIR"


def shared_dir() -> Path:
    """Return the shared folder that holds papers and real trace samples.

    Uses the environment variable ``FAIRSIM_SHARED`` when set; otherwise walks up from the current
    working directory and returns the first ``shared`` folder found next to a repository root
    (a folder holding ``pyproject.toml``), i.e. ``<repo>/../shared``.

    Returns
    -------
    pathlib.Path
        Absolute path of the shared folder.

    Raises
    ------
    TraceError
        If ``FAIRSIM_SHARED`` names a missing folder, or no ``shared`` folder is found.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env).expanduser().resolve()
        if not path.is_dir():
            raise TraceError(f"{ENV_VAR}={env!r}: not a directory")
        return path
    cwd = Path.cwd().resolve()
    for folder in (cwd, *cwd.parents):
        if (folder / "pyproject.toml").is_file():
            candidate = folder.parent / "shared"
            if candidate.is_dir():
                return candidate
            raise TraceError(
                f"shared folder not found at {candidate}; set {ENV_VAR} to the folder that holds "
                "traces/ and papers/"
            )
    raise TraceError(
        f"no repository root (pyproject.toml) above {cwd}; set {ENV_VAR} to the shared folder"
    )


def google_2011_dir() -> Path:
    """Return ``<shared>/traces/google-2011`` (the real Google 2011 samples).

    Raises
    ------
    TraceError
        If the shared folder or its ``traces/google-2011`` sub-folder is missing.
    """
    path = shared_dir() / "traces" / "google-2011"
    if not path.is_dir():
        raise TraceError(f"Google 2011 samples not found: {path} is not a directory")
    return path


def data_dir() -> Path:
    """Return the folder that caches downloaded trace files.

    ``FAIRSIM_DATA_DIR`` when set, else the user cache folder of the platform (pooch's
    ``os_cache("fairsim")``: ``$XDG_CACHE_HOME/fairsim``, by default ``~/.cache/fairsim``, on
    Linux; ``~/Library/Caches/fairsim`` on macOS). It need not exist yet.

    Returns
    -------
    pathlib.Path
        Absolute path of the cache folder.
    """
    env = os.environ.get(DATA_ENV_VAR)
    if env:
        return Path(env).expanduser().resolve()
    import pooch  # imported lazily: only downloads need it

    return Path(pooch.os_cache("fairsim")).expanduser().resolve()
