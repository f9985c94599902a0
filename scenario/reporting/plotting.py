"""Plotting helpers shared by every report: atomic PNG output and scheduler labels.

Figures are built on :class:`matplotlib.figure.Figure` objects directly (no pyplot global
state) and written atomically: a temporary file in the destination directory, then
:func:`os.replace`.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path

from matplotlib.figure import Figure

from fairsim.atomic import atomic_path

logger = logging.getLogger(__name__)

_SLOTS_RE = re.compile(r"^slots-(\d+)$")
_LABELS = {"ff-drfh": "First-Fit DRFH", "bf-drfh": "Best-Fit DRFH"}


def scheduler_label(name: str) -> str:
    """Return a human-readable label for a scheduler directory name.

    Parameters
    ----------
    name : str
        Scheduler name, e.g. ``"slots-14"`` or ``"bf-drfh"``.

    Returns
    -------
    str
        ``"Slots (14 per max server)"``, ``"Best-Fit DRFH"``, or ``name`` itself.
    """
    m = _SLOTS_RE.match(name)
    if m:
        return f"Slots ({m.group(1)} per max server)"
    return _LABELS.get(name, name)


def save_figure(fig: Figure, path: str | os.PathLike[str], *, dpi: int = 120) -> Path:
    """Save ``fig`` as a PNG atomically (temporary file in the same directory, then rename).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure to write.
    path : path-like
        Destination file; its directory is created if needed.
    dpi : int, optional
        Resolution in dots per inch.

    Returns
    -------
    pathlib.Path
        The destination path.
    """
    dest = Path(path)
    with atomic_path(dest) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, bbox_inches="tight")
    logger.info("wrote %s", dest)
    return dest
