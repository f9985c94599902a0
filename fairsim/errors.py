"""The exceptions fairsim reports to users. Each message is one line naming the offending value.

Every one derives from :class:`FairsimError`; the command line prints it as
``fairsim: error: <message>`` with exit status 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path


def unknown_key(key: object, known: Iterable[str]) -> str:
    """``unknown key 'x'; did you mean 'y'? (known: a, b)`` — the closest known key, if any."""
    names = sorted(known)
    close = difflib.get_close_matches(str(key), names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"unknown key {key!r}{hint} (known: {', '.join(names)})"


def read_input_text(path: str | Path, what: str, kind: str, error: type[FairsimError]) -> str:
    """The UTF-8 text of an input file (a config, an allocation instance), without a leading
    byte-order mark, or a one-line error.

    Parameters
    ----------
    path : str or Path
    what : str
        What the file is, the message's first word (``config``, ``instance``).
    kind : str
        What a directory at ``path`` should have been (``YAML file``, ``JSON file``).
    error : type of FairsimError
        The exception raised.

    Raises
    ------
    FairsimError
        Of type ``error``, ``<what>: ...``: the path is a directory, does not exist, cannot be
        read, or is not UTF-8 (naming the first bad byte and its offset).
    """
    p = Path(path)
    if p.is_dir():
        raise error(f"{what}: {str(p)!r} is a directory, not a {kind}")
    if not p.is_file():
        raise error(f"{what}: file {str(p)!r} does not exist")
    try:
        # utf-8-sig: a byte-order mark some editors put first (Windows Notepad) is not text
        return p.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise error(f"{what}: cannot read {str(p)!r} ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{what}: {str(p)!r} is {not_utf8(exc)}") from None


def not_utf8(exc: UnicodeDecodeError) -> str:
    """What a decoding error says about a file, for a one-line message: ``not UTF-8 text (byte
    0xff at offset 12)``, naming the first bad byte and its offset."""
    return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"


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
