"""The mechanisms in flow-level and packet-level models of multi-resource sharing, beside the
task-level engine (:mod:`fairsim.simulator.engine`): demand as flows (transactions) that share
resources at the rates an allocation gives them, rather than tasks placed on servers.

* :mod:`~fairsim.schedulers.flows.markov_chain`: the Markovian demand model of Bonald and
  Roberts, "Multi-resource fairness: Objectives, algorithms and performance" (SIGMETRICS 2015),
  Section 4.1, under DRF, PF or BMF: its stationary distribution (sparse direct solve with a
  truncation-error estimate) and a SimPy simulation of the same model;
* :mod:`~fairsim.schedulers.flows.packet_fq`: their Section 3's packet-level multi-resource fair
  queueing router (DRFQ, PF and BMF by start-time fair queueing), compiled with numba.

The Bonald–Roberts reproduction (:mod:`fairsim.experiments.bonald_roberts`) runs both; they can
be used on their own (the Markov chain's allocations come from :mod:`fairsim.schedulers.exact`).
"""
