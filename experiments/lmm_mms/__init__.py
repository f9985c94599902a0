"""The LMM-MMS paper's Section 5 on the Alibaba batch tasks: ``paper`` (its numbers, settings
and statements), ``experiment`` (the samples, one seed at a time), ``claims`` (one claim per
statement), ``figures`` and ``report`` (``claims.json`` and ``report.md``);
:func:`fairsim.experiments.kit.reproduce` runs them."""
