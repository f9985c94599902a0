"""The version of fairsim: its one source (pyproject.toml reads it without importing, the facade
``fairsim.__version__`` and ``summary.json``'s ``fairsim_version`` import it from here)."""

__version__ = "0.2.0"
