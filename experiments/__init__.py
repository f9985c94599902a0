"""fairsim.experiments: the papers' reproductions.

One subpackage per paper reproduces its evaluation (:mod:`~fairsim.experiments.drfh`,
:mod:`~fairsim.experiments.psdsf`, :mod:`~fairsim.experiments.udrf`,
:mod:`~fairsim.experiments.lmm_mms`, :mod:`~fairsim.experiments.bonald_roberts`), listed for
``fairsim experiment`` in :mod:`~fairsim.experiments.reproductions`; they share the claim model
(:mod:`~fairsim.experiments.claims`) and the report kit (:mod:`~fairsim.experiments.kit`). What
turns a config into runs (configs, the pipeline, sweeps, run and sweep reports) is the layer
below, :mod:`fairsim.scenario`; the ``fairsim`` command (``fairsim.cli``) is the layer above.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def config_path(name: str) -> Path:
    """Path of a scenario file shipped with fairsim (the repository's ``configs/`` folder).

    Parameters
    ----------
    name : str
        File name under ``configs/``, e.g. ``"drfh-google.yaml"`` or ``"sweeps/tiny.yaml"``.

    Returns
    -------
    pathlib.Path
        The file in the source checkout or in the installed package.
    """
    return Path(str(resources.files("fairsim") / "configs" / name))
