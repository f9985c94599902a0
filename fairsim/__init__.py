"""fairsim: a trace-driven discrete-event simulator for multi-resource fair scheduling on
clusters of heterogeneous servers.

The subpackages are :mod:`fairsim.simulator` (the engine, its scheduler protocol, cluster state,
workload streams and result files), :mod:`fairsim.schedulers` (online policies, exact
allocators, property checks), :mod:`fairsim.traces` (trace converters, server pools, synthetic
workloads), :mod:`fairsim.scenario` (configs, the pipeline that turns one into runs, sweeps,
run and sweep reports), :mod:`fairsim.experiments` (the papers' reproductions) and
``fairsim.cli`` (the ``fairsim`` command). The names below are the public API; they are imported
on first use, so ``import fairsim`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from fairsim._version import __version__

#: Public name -> module that defines it (a name equal to the module's last part is the
#: submodule itself, e.g. ``fairsim.testing``).
_PUBLIC = {
    "Scheduler": "fairsim.simulator.scheduler",
    "ClusterView": "fairsim.simulator.cluster",
    "RunConfig": "fairsim.scenario.config",
    "RunResult": "fairsim.scenario.api",
    "simulate": "fairsim.scenario.api",
    "load": "fairsim.scenario.api",
    "compare": "fairsim.scenario.compare",
    "sweep": "fairsim.scenario.api",
    "solve": "fairsim.schedulers.solve",
    "register_scheduler": "fairsim.schedulers.registry",
    "testing": "fairsim.testing",
}

__all__ = ["__version__", *sorted(_PUBLIC)]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'fairsim' has no attribute {name!r}")
    if module == f"{__name__}.{name}":
        value = importlib.import_module(module)
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
