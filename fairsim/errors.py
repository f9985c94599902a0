"""The exceptions fairsim reports to users. Each message is one line naming the offending value.

Every one derives from :class:`FairsimError`; the command line prints it as
``fairsim: error: <message>`` with exit status 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def unknown_key(key: object, known: Iterable[str]) -> str:
    """``unknown key 'x'; did you mean 'y'? (known: a, b)`` — the closest known key, if any."""
    names = sorted(known)
    close = difflib.get_close_matches(str(key), names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown key {key!r}{hint} (known: {', '.join(names)})"


class FairsimError(Exception):
    """Base class of the errors fairsim reports to users as a one-line message."""


class ConfigError(FairsimError, ValueError):
    """A scenario configuration is invalid (unknown key, bad value, unknown scheduler)."""


class RegistryError(FairsimError, ValueError):
    """A scheduler cannot be registered or loaded: a name taken twice, a class that is not a
    :class:`fairsim.Scheduler`, an entry point that fails to import."""


class PlacementError(FairsimError, RuntimeError):
    """A scheduler proposed a placement that the engine cannot commit."""


class OutputError(FairsimError):
    """An output folder or file cannot be written (exists, lies below a file, not writable)."""


class ResultError(FairsimError, ValueError):
    """A result file that fairsim reads back (``summary.json``, ``config.yaml``, a Parquet table
    of a run folder) is missing or damaged: the message names the file and what is wrong."""


class TraceError(FairsimError, ValueError):
    """A trace file, folder, parameter or checksum is missing or invalid.

    The message is one line and names the offending file, field or value.
    """
