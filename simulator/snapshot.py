"""The users' state at one instant of a run: what fairness over time is computed from.

With ``Engine(fairness_interval_s=S, on_fairness=callback)`` the engine keeps, per user, the
number of its tasks *present* (handed to the scheduler by ``on_arrival`` and not ended) and
*running* (started and not ended), and the sums of their demand vectors, and at every multiple
of ``S`` from the run's start calls ``callback(time_s, snapshot)`` with a :class:`UserSnapshot`
of the *active* users (at least one task present). docs/fairness.md describes what the scenario
layer (:mod:`fairsim.scenario.fairness`) derives from it.

A task a job gate holds back (DAG parents not finished, a later repetition, a job outside the
bounded job queue; :mod:`fairsim.simulator.jobs`) has not reached the scheduler: it is neither
running nor waiting. A task that fits no server is never handed to the scheduler either.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class UserSnapshot:
    """The active users of a run at one instant (the state after every event at or before it).

    Attributes
    ----------
    time_s : float
        The instant, seconds.
    users : ndarray of int64, shape (n,)
        Engine user codes of the active users (a user with at least one task running or
        waiting), ascending.
    names : tuple of str
        Their names (the ``user`` of the result files), in the order of ``users``.
    tasks_running : ndarray of int64, shape (n,)
        Tasks started and not ended (a right-censored task held to the horizon runs).
    tasks_waiting : ndarray of int64, shape (n,)
        Tasks handed to the scheduler (``on_arrival``) and not started; gate-held tasks are not
        waiting.
    demand : ndarray, shape (n, n_resources)
        Sum of the demand vectors of the user's present tasks (running and waiting).
    allocation : ndarray, shape (n, n_resources)
        Sum of the demand vectors of the user's running tasks: what it holds of the pool.
    eligible : ndarray of bool, shape (n, n_servers), or None
        With placement constraints: the servers some present task of the user may use (the
        union of its tasks' allowed servers); None without placement constraints.
    queues : ndarray of int64, shape (n,), or None
        With ``Engine(fairness_by_queue=True)`` (a scenario with a queue tree): each row is a
        (user, queue) pair, the leaf of the tree its tasks reach, and this is its queue (an
        index into the tree, -1 for the root); ``users`` then holds each pair's user (a user
        may appear once per queue) and the rows are in order of the pairs' first arrival.
        None: one row per user.
    """

    time_s: float
    users: np.ndarray
    names: tuple[str, ...]
    tasks_running: np.ndarray
    tasks_waiting: np.ndarray
    demand: np.ndarray
    allocation: np.ndarray
    eligible: np.ndarray | None = None
    queues: np.ndarray | None = None

    @property
    def tasks_present(self) -> np.ndarray:
        """Tasks running or waiting, shape (n,)."""
        return self.tasks_running + self.tasks_waiting
