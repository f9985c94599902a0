"""fairsim.experiments: the command line, the scenario pipeline, reports and the papers'
reproductions.

Subpackages: :mod:`~fairsim.experiments.scenario` (configuration, ``fairsim run``, sweeps,
property tables), :mod:`~fairsim.scenario.reporting` (run and sweep reports, plotting
helpers), one subpackage per paper reproduction (:mod:`~fairsim.experiments.drfh`,
:mod:`~fairsim.experiments.psdsf`, :mod:`~fairsim.experiments.udrf`,
:mod:`~fairsim.experiments.lmm_mms`, :mod:`~fairsim.experiments.bonald_roberts`) and
:mod:`~fairsim.experiments.benchmarks`.
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
