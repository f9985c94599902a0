"""The DRFH paper's Section VI on the real Google sample: ``paper`` (its numbers, statements and
our thresholds), ``experiment`` (the runs, one seed at a time, and step 6 once), ``figures`` and
``report`` (the claims, ``claims.json`` and ``report.md``); :func:`fairsim.experiments.kit.
reproduce` runs them."""
