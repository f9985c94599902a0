"""The UDRF paper's Section V on the Google sample: ``paper`` (its statements and our
thresholds), ``experiment`` (the runs, one seed at a time), ``numbers`` (the quantities over
seeds), ``claims`` (one claim per statement), ``figures`` and ``report`` (``claims.json`` and
``report.md``); :func:`fairsim.experiments.kit.reproduce` runs them."""
