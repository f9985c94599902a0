"""The scenario pipeline: configuration, ``fairsim run`` and sweeps."""
