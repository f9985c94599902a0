"""Errors raised by the ``traces`` package."""

from __future__ import annotations


class TraceError(ValueError):
    """A trace file, folder, parameter or checksum is missing or invalid.

    The message is one line and names the offending file, field or value.
    """
