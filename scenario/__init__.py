"""fairsim.scenario: what turns a scenario config into runs.

The layer between the mechanisms (:mod:`fairsim.schedulers`, :mod:`fairsim.traces`) and the
command line and paper reproductions (:mod:`fairsim.experiments`).
"""
