"""Placement constraints: which servers a task may run on.

A task's constraint is a string in the canonical tasks table's ``constraint`` column (null: any
server). Two forms:

``class=A|B``
    The task may run on servers of machine class ``A`` or ``B`` (UDRF paper, Section III: users
    depend on machine classes; PS-DSF paper, Section V: users 3 and 4 only on classes C and D).
``attr:<name> <op> <value>[;<name> <op> <value>...]``
    Attribute predicates of the Google 2011 ``task_constraints`` table, all of which must hold
    (``traces/google_constraints.py``); name, operator and value are separated by single spaces
    (Google's hashed names and values are base64 text, which has neither spaces nor ``;``).
    ``op`` is ``==``, ``!=``, ``<`` or ``>``; ``<`` and ``>`` compare integer values; a server
    without the attribute satisfies only ``!=``.

A server's machine class is the ``class`` column of the pool when it has one, else its capacity
vector written as ``"cpu/mem[/...]"`` (``%g``), so servers with the same capacities share a class
(the UDRF paper's "machine class": machines with the same capacities and attributes).

:class:`ConstraintIndex` compiles each distinct constraint string once into a boolean mask over the
servers and gives it a small integer code (0 = unconstrained); the engine stores one code per task
and validates every placement against the mask, and schedulers read the mask of a task through
:meth:`fairsim.simulator.cluster.ClusterView.task_mask`. :func:`job_facts` lists the classes each
job of a task stream needs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from fairsim.errors import ConfigError
from fairsim.simulator.readonly import read_only
from fairsim.simulator.workload import TaskBatch, TaskSource, WrappedTaskSource

OPS = ("==", "!=", "<", ">")


def machine_classes(pool: pd.DataFrame, resources: Sequence[str]) -> np.ndarray:
    """Machine class label of every server of a pool frame.

    Parameters
    ----------
    pool : pandas.DataFrame
        One row per server; a ``class`` column if the classes are given, else the resource columns.
    resources : sequence of str
        Resource columns.

    Returns
    -------
    ndarray of object (str), shape (n_servers,)
    """
    if "class" in pool:
        return pool["class"].astype(str).to_numpy(dtype=object)
    caps = pool[list(resources)].to_numpy(dtype=np.float64)
    return np.array(["/".join(f"{v:g}" for v in row) for row in caps.tolist()], dtype=object)


class ConstraintIndex:
    """Compile constraint strings into server masks, one integer code per distinct string.

    Parameters
    ----------
    classes : ndarray of str, shape (n_servers,)
        Machine class of every server (:func:`machine_classes`).
    attributes : mapping of str to ndarray, optional
        Machine attributes: name → values per server (object array, None where a server lacks the
        attribute).

    Raises
    ------
    ConfigError
        From :meth:`code`, for a malformed constraint or one that names an unknown class or
        attribute.
    """

    def __init__(
        self, classes: np.ndarray, attributes: Mapping[str, np.ndarray] | None = None
    ) -> None:
        self.classes = np.asarray(classes, dtype=object)
        self.n_servers = len(self.classes)
        self.attributes = dict(attributes or {})
        self.rules: list[str | None] = [None]
        self.masks: list[np.ndarray | None] = [None]
        self._codes: dict[str, int] = {}

    def code(self, rule: object) -> int:
        """The code of a constraint string (0 for none), compiling it on first use."""
        if rule is None or (isinstance(rule, float) and rule != rule) or rule == "":
            return 0
        key = str(rule)
        c = self._codes.get(key)
        if c is None:
            mask = read_only(self.compile(key))  # shared with schedulers: never writable
            c = self._codes[key] = len(self.rules)
            self.rules.append(key)
            self.masks.append(mask)
        return c

    def add_mask(self, label: str, mask: np.ndarray) -> int:
        """Give a server mask computed elsewhere a code, under the name ``label``.

        For callers that hold masks rather than constraint strings (schedulers driven by hand,
        static fills); the mask is copied and made read-only for good, like a compiled one
        (:func:`~fairsim.simulator.readonly.read_only`).

        Parameters
        ----------
        label : str
            Name of the constraint in :attr:`rules` (and in placement errors); not yet used.
        mask : array_like of bool, shape (n_servers,)
            The servers a task with this constraint may run on.

        Returns
        -------
        int
            The new code.

        Raises
        ------
        ValueError
            If ``label`` already has a code or ``mask`` has another shape.
        """
        m = np.array(mask, dtype=bool)
        if m.shape != (self.n_servers,):
            raise ValueError(f"mask {label!r}: shape {m.shape}, expected ({self.n_servers},)")
        if label in self._codes:
            raise ValueError(f"mask {label!r}: the label already has code {self._codes[label]}")
        m = read_only(m)
        c = self._codes[label] = len(self.rules)
        self.rules.append(label)
        self.masks.append(m)
        return c

    def codes(self, rules: np.ndarray) -> np.ndarray:
        """Codes of an array of constraint strings, shape (n,) int32."""
        return np.fromiter((self.code(r) for r in rules.tolist()), dtype=np.int32, count=len(rules))

    def compile(self, rule: str) -> np.ndarray:
        """Boolean mask (n_servers,) of the servers that satisfy ``rule``.

        Raises
        ------
        ConfigError
            ``constraint: ...`` naming the rule and the problem.
        """
        if rule.startswith("class="):
            wanted = [c for c in rule[len("class=") :].split("|") if c]
            if not wanted:
                raise ConfigError(f"constraint: {rule!r} names no machine class")
            known = set(self.classes.tolist())
            unknown = [c for c in wanted if c not in known]
            if len(unknown) == len(wanted):
                raise ConfigError(
                    f"constraint: {rule!r}: no server has class {unknown[0]!r} "
                    f"(classes: {', '.join(sorted(known)[:8])}{', ...' if len(known) > 8 else ''})"
                )
            return np.isin(self.classes, wanted)
        if rule.startswith("attr:"):
            mask = np.ones(self.n_servers, dtype=bool)
            for pred in rule[len("attr:") :].split(";"):
                mask &= self._predicate(rule, pred)
            return mask
        raise ConfigError(
            f"constraint: {rule!r} (expected 'class=A|B' or 'attr:<name> <op> <value>')"
        )

    def _predicate(self, rule: str, pred: str) -> np.ndarray:
        parts = pred.split(" ")
        if len(parts) != 3 or parts[1] not in OPS or not parts[0]:
            raise ConfigError(
                f"constraint: {rule!r}: predicate {pred!r} is not '<name> <op> <value>' "
                f"with op in {OPS}"
            )
        name, op, value = parts
        values = self.attributes.get(name)
        if values is None:  # no server has the attribute
            return np.full(self.n_servers, op == "!=")
        present = np.array([v is not None for v in values.tolist()], dtype=bool)
        if op in ("==", "!="):
            eq = present & (values.astype(str) == value)
            return eq if op == "==" else ~eq
        try:
            bound = int(value)
        except ValueError:
            raise ConfigError(
                f"constraint: {rule!r}: {op} needs an integer value, got {value!r}"
            ) from None
        out = np.zeros(self.n_servers, dtype=bool)
        for i, v in enumerate(values.tolist()):
            if v is None:
                continue
            try:
                x = int(v)
            except (TypeError, ValueError):
                continue
            out[i] = x < bound if op == "<" else x > bound
        return out


MODELS = ("pinned", "any-of")
#: How much a demand may exceed a capacity and still be held, relative to the largest server
#: capacity of the resource: the engine's tolerance,
#: :data:`fairsim.simulator.cluster.CAPACITY_TOLERANCE` (not imported: cluster imports this
#: module; :func:`fairsim.simulator.cluster.capacity_tolerance`).
HOLD_TOLERANCE = 1e-9


def _show(n_classes: object) -> str:
    """``n_classes`` as a config writes it: ``[lo, hi]`` or ``{k: share}``."""
    return repr(list(n_classes) if isinstance(n_classes, tuple) else n_classes)


def needed_classes_distribution(
    target: Mapping[int, float], caps: Mapping[int, int]
) -> dict[int, dict[int, float]]:
    """How many classes each job needs, so that the share of jobs needing ``k`` classes follows
    ``target`` as closely as the jobs' sizes allow.

    A job of ``n`` distinct tasks, each pinned to one class, needs at most ``n`` classes (its
    *cap*: ``min(n, number of classes)``). The target's mass is given out from the largest ``k``
    down: the jobs whose cap reaches ``k`` and that have no count yet get ``k`` with the
    probability that makes the expected number needing ``k`` equal to ``target[k]`` times the
    number of jobs (or all of them, when too few can); what no job can take moves down, and
    ``k = 1`` takes the rest.

    Parameters
    ----------
    target : mapping of int to float
        Share of jobs per number of classes ``k >= 1`` (normalised here).
    caps : mapping of int to int
        Number of jobs per cap (``cap >= 1``).

    Returns
    -------
    dict of int to dict of int to float
        Per cap, the probability of every ``k <= cap`` (summing to 1).

    Raises
    ------
    ValueError
        For an empty target, a negative share or a ``k`` or cap below 1.

    Examples
    --------
    UDRF paper, Fig. 8: 65 % of the jobs need one or two classes. With 60 single-task jobs, 10
    of two tasks and 30 larger ones, at most 30 % can need three or more:

    >>> d = needed_classes_distribution({1: 0.325, 2: 0.325, 3: 0.35}, {1: 60, 2: 10, 3: 30})
    >>> d[3], d[2], d[1]
    ({3: 1.0}, {2: 1.0}, {1: 1.0})
    """
    if not target or any(k < 1 or w < 0 for k, w in target.items()) or sum(target.values()) <= 0:
        raise ValueError(f"classes: {dict(target)!r} (expected shares >= 0 of counts >= 1)")
    if any(c < 1 for c in caps):
        raise ValueError(f"caps: {dict(caps)!r} (every cap is at least 1)")
    total_w = float(sum(target.values()))
    n_jobs = float(sum(caps.values()))
    left = {c: float(n) for c, n in caps.items() if n > 0}
    out: dict[int, dict[int, float]] = {c: {} for c in left}
    for k in sorted((k for k in target if k > 1), reverse=True):
        eligible = sum(v for c, v in left.items() if c >= k)
        if eligible <= 0 or target[k] <= 0:
            continue
        q = min(1.0, target[k] / total_w * n_jobs / eligible)
        for c in left:
            if c >= k:
                take = left[c] * q
                out[c][k] = take / caps[c]
                left[c] -= take
    for c in out:
        out[c][1] = left[c] / caps[c]
        out[c] = {k: p for k, p in sorted(out[c].items()) if p > 0}
    return out


def job_facts(open_source: Callable[[], TaskSource]) -> pd.DataFrame:
    """Per job of a task stream: user, repetitions, distinct tasks and the machine classes it
    needs (UDRF paper, Fig. 8: the machine classes the jobs require).

    The classes a job needs are the union of the classes its tasks may use (``class=A|B``
    rules): with the ``pinned`` model the distinct classes its tasks are pinned to, with
    ``any-of`` the classes it may use. ``classes`` is their number (0 for an unconstrained job,
    which may use every class), ``class_set`` their names joined by ``|`` ("" if unconstrained);
    ``tasks`` the tasks of its first repetition.
    """
    reps: dict[int, int] = {}
    users: dict[int, object] = {}
    tasks: dict[int, int] = {}
    classes: dict[int, set[str] | None] = {}
    for batch in open_source().batches():
        rep = batch.rep if batch.rep is not None else np.zeros(len(batch), dtype=np.int32)
        cons = batch.constraint
        for j, u, r, c in zip(
            batch.job_id.tolist(),
            batch.user.tolist(),
            rep.tolist(),
            cons.tolist() if cons is not None else [None] * len(batch),
            strict=True,
        ):
            reps[j] = max(reps.get(j, 0), r + 1)
            users.setdefault(j, u)
            if r == 0:
                tasks[j] = tasks.get(j, 0) + 1
            if not isinstance(c, str):
                classes[j] = None
            elif classes.setdefault(j, set()) is not None:
                classes[j].update(c[len("class=") :].split("|"))  # type: ignore[union-attr]
    return pd.DataFrame(
        {
            "job_id": list(reps),
            "user": [users[j] for j in reps],
            "repetitions": list(reps.values()),
            "tasks": [tasks.get(j, 0) for j in reps],
            "classes": [len(classes[j] or ()) for j in reps],
            "class_set": ["|".join(sorted(classes[j] or ())) for j in reps],
        }
    )


class ConstraintModelSource(WrappedTaskSource):
    """Wrap a task stream and give jobs (or tasks) ``class=...`` constraints by a model.

    With probability ``share`` a job (``per="job"``) or task (``per="task"``) is given ``k``
    machine classes. ``k`` is uniform in ``n_classes = (lo, hi)``, or drawn per job from a
    distribution ``{k: share}`` of the number of classes the jobs need, matched as closely as
    the jobs' sizes allow (:func:`needed_classes_distribution`; needs ``job_tasks``). The
    classes are drawn without replacement with probability proportional to each class's number
    of servers, among the classes that can hold the job's first task (a class holds a task when
    one of its servers has at least the task's demand in every resource); ``k`` is capped at
    their number. What the classes mean depends on ``model``:

    ``pinned`` (default)
        The job *spans* the ``k`` classes and each of its tasks is pinned to exactly one of them
        (``class=A``), as u2's task1 and task2 in the UDRF paper's Section II-A each need their
        own machine class. The job's distinct tasks (by ``task_index``, in stream order) go to
        the job's classes that can hold them: each to a class none of the job's tasks uses yet
        (in draw order) while there is one, else to the class with the fewest of the job's
        tasks per server (ties: draw order), so a job of ``n`` tasks needs ``min(k, n)`` classes
        at once and loads them in proportion to their size, and every repetition of a task gets
        the same class. With ``per="task"``, ``k`` must be 1.
    ``any-of``
        Every task of the job may use any of the job's classes that can hold it (``class=A|B``).

    A task none of whose job's classes can hold it gets one more class, drawn the same way among
    the classes that can (the job then spans it too); a task no class can hold keeps its job's
    class and is reported unplaceable by the engine. Draws happen in stream order, so a seed
    gives the same constraints every time.

    Parameters
    ----------
    inner : TaskSource
    classes : ndarray of str, shape (n_servers,)
        Machine class of every server (:func:`machine_classes`).
    share : float
        Probability that a job (task) is constrained, in [0, 1].
    n_classes : (int, int) or mapping of int to float
        ``(lo, hi)``: number of classes of a constrained job, uniform; a mapping: the target
        share of jobs per number of classes needed.
    per : {"job", "task"}
    rng : numpy.random.Generator
    model : {"pinned", "any-of"}
    capacity : ndarray, shape (n_servers, n_resources), optional
        Server capacities; without them every class is taken to hold every task.
    job_tasks : mapping of int to int, optional
        Distinct tasks of every job (one repetition), for a distribution ``n_classes``; a job
        not in it may need up to every class.

    Raises
    ------
    ValueError
        For an unknown ``model``, ``pinned`` per task with more than one class, a distribution
        without ``job_tasks`` or per task, or a ``capacity`` of another length than ``classes``.

    Attributes
    ----------
    needed_ : dict of int to dict of int to float or None
        With a distribution: per cap (a job's distinct tasks, at most the number of classes),
        the probability of each number of classes (:func:`needed_classes_distribution`).
    """

    def __init__(
        self,
        inner: TaskSource,
        classes: np.ndarray,
        *,
        share: float,
        n_classes: tuple[int, int] | Mapping[int, float],
        per: str,
        rng: np.random.Generator,
        model: str = "pinned",
        capacity: np.ndarray | None = None,
        job_tasks: Mapping[int, int] | None = None,
    ) -> None:
        super().__init__(inner)
        if model not in MODELS:
            raise ValueError(f"model: {model!r} (expected 'pinned' or 'any-of')")
        dist = isinstance(n_classes, Mapping)
        top = max(n_classes) if dist else n_classes[1]
        if model == "pinned" and per == "task" and top > 1:
            raise ValueError(
                f"classes: {_show(n_classes)} with model 'pinned' and per 'task' (a pinned task "
                "uses one class)"
            )
        if dist and (per != "job" or job_tasks is None):
            raise ValueError(
                "classes: a distribution of classes per job needs per 'job' and the jobs' sizes"
            )
        cls = np.asarray(classes, dtype=str)
        names, inverse, counts = np.unique(cls, return_inverse=True, return_counts=True)
        self._names = names
        self._w = counts.astype(np.float64)
        self.share, self.per, self.rng, self.model = share, per, rng, model
        self.needed_: dict[int, dict[int, float]] | None = None
        self._job_tasks: dict[int, int] = dict(job_tasks or {})
        self.lo = self.hi = 1
        if isinstance(n_classes, Mapping):
            caps: dict[int, int] = {}
            for n in self._job_tasks.values():
                c = max(1, min(int(n), len(names)))
                caps[c] = caps.get(c, 0) + 1
            self.needed_ = needed_classes_distribution(n_classes, caps)
        else:
            lo, hi = n_classes
            self.lo, self.hi = min(lo, len(names)), min(hi, len(names))
        # every class's distinct server capacities, to tell which classes can hold a task
        self._caps: list[np.ndarray] | None = None
        if capacity is not None:
            cap = np.asarray(capacity, dtype=np.float64)
            if cap.shape[0] != len(cls):
                raise ValueError(f"capacity: {cap.shape[0]} servers, but classes has {len(cls)}")
            self._caps = [np.unique(cap[inverse.ravel() == i], axis=0) for i in range(len(names))]
            self._hold_tol = HOLD_TOLERANCE * cap.max(axis=0) if cap.size else 0.0
        self._holds: dict[tuple[float, ...], np.ndarray] = {}
        self._of_job: dict[int, list[int] | None] = {}  # job -> its classes (indices), draw order
        self._slot: dict[int, dict[int, int]] = {}  # pinned: job -> task_index -> its class

    def _holders(self, demand: tuple[float, ...]) -> np.ndarray:
        """Whether each class can hold a task of ``demand``, shape (n_classes,) bool."""
        got = self._holds.get(demand)
        if got is None:
            if self._caps is None:
                got = np.ones(len(self._names), dtype=bool)
            else:
                d = np.asarray(demand) - self._hold_tol
                got = np.array([bool((c >= d).all(axis=1).any()) for c in self._caps])
            self._holds[demand] = got
        return got

    def _pick(self, k: int, allowed: np.ndarray) -> list[int]:
        """``k`` classes among ``allowed`` (bool, (n_classes,)), without replacement, with
        probability proportional to their servers (``k`` capped at their number)."""
        idx = np.flatnonzero(allowed)
        if len(idx) == len(self._names):  # every class: the draw as without the capacities
            p = self._w / self._w.sum()
            return self.rng.choice(len(idx), size=min(k, len(idx)), replace=False, p=p).tolist()
        if len(idx) == 0:
            return []
        w = self._w[idx]
        got = self.rng.choice(len(idx), size=min(k, len(idx)), replace=False, p=w / w.sum())
        return idx[got].tolist()

    def _count(self, job: int) -> int:
        """The number of classes of a constrained job (or task)."""
        if self.needed_ is None:
            return int(self.rng.integers(self.lo, self.hi + 1))
        cap = max(1, min(int(self._job_tasks.get(job, len(self._names))), len(self._names)))
        dist = self.needed_[cap] if cap in self.needed_ else {cap: 1.0}
        ks = list(dist)
        return ks[int(self.rng.choice(len(ks), p=np.array(list(dist.values()))))]

    def _draw(self, job: int, demand: tuple[float, ...]) -> list[int] | None:
        """The classes of one job (task), in draw order, among those that can hold ``demand``;
        None: unconstrained."""
        if self.rng.random() >= self.share:
            return None
        k = self._count(job)
        holders = self._holders(demand)
        return self._pick(k, holders) if holders.any() else self._pick(k, ~holders)

    def _rule(self, own: list[int], slot: dict[int, int] | None, i: int, demand: tuple) -> str:
        """The rule of task ``i`` of a job with classes ``own`` (extended in place when none of
        them can hold the task); ``slot``: the job's pinned tasks so far (pinned model)."""
        holders = self._holders(demand)
        fit = [c for c in own if holders[c]]
        if not fit and holders.any():  # one more class for this task
            extra = self._pick(1, holders & ~np.isin(np.arange(len(holders)), own))
            own.extend(extra)
            fit = extra
        names = self._names
        if slot is None:  # any-of
            return "class=" + "|".join(sorted(names[c] for c in (fit or own)))
        c = slot.get(i)
        if c is None:
            # a class none of the job's tasks uses yet (draw order), else the one with the
            # fewest of them per server: the job spans all its classes and loads them in
            # proportion to their size, as the draw does
            used = Counter(slot.values())
            pool = fit or own
            c = min(pool, key=lambda m: (used[m] > 0, used[m] / self._w[m], pool.index(m)))
            slot[i] = c
        return "class=" + str(names[c])

    def batches(self) -> Iterator[TaskBatch]:
        pinned = self.model == "pinned"
        for batch in self.inner.batches():
            rules: list[str | None] = []
            demands = [tuple(row) for row in batch.demand.tolist()]
            if self.per == "task":
                for j, d in zip(batch.job_id.tolist(), demands, strict=True):
                    own = self._draw(j, d)
                    rules.append(None if own is None else self._rule(own, None, 0, d))
            else:
                of_job, slots = self._of_job, self._slot
                for j, i, d in zip(
                    batch.job_id.tolist(), batch.task_index.tolist(), demands, strict=True
                ):
                    if j not in of_job:
                        of_job[j] = self._draw(j, d)
                    own = of_job[j]
                    if own is None:
                        rules.append(None)
                        continue
                    rules.append(self._rule(own, slots.setdefault(j, {}) if pinned else None, i, d))
            col = np.empty(len(rules), dtype=object)
            col[:] = rules
            yield replace(batch, constraint=col)
