"""The PS-DSF paper's Section V (Tables III-IV, Fig. 6): ``paper`` (its numbers, statements and
our thresholds), ``experiment`` (the runs, one seed at a time, and the exact allocations),
``claims`` (one claim per statement), ``figures`` (Fig. 6) and ``report`` (``claims.json`` and
``report.md``); :func:`fairsim.experiments.kit.reproduce` runs them."""
