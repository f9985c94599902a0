"""Bonald and Roberts's Section 4: the Markov-chain demand model, its fluid allocations and the
packet-level fair queueing router.

Files: ``paper.py`` (the paper's statements and our thresholds), ``experiment.py`` (the runs: the
Markov chain once, the simulations per seed), ``numbers.py`` (the per-point summary and the
quantities of the claims), ``claims.py``, ``figures.py``, ``report.py`` (``claims.json`` and
``report.md``). The models it runs are :mod:`fairsim.schedulers.flows` (the Markov chain and the
packet router).
:func:`fairsim.experiments.kit.reproduce` runs the experiment and then the report.
"""
