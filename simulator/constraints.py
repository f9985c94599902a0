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
:meth:`fairsim.simulator.cluster.ClusterView.task_mask`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from fairsim.errors import ConfigError
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
            mask = self.compile(key)
            mask.flags.writeable = False
            c = self._codes[key] = len(self.rules)
            self.rules.append(key)
            self.masks.append(mask)
        return c

    def add_mask(self, label: str, mask: np.ndarray) -> int:
        """Give a server mask computed elsewhere a code, under the name ``label``.

        For callers that hold masks rather than constraint strings (schedulers driven by hand,
        static fills); the mask is copied and made read-only, like a compiled one.

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
        m.flags.writeable = False
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


class ConstraintModelSource(WrappedTaskSource):
    """Wrap a task stream and give jobs (or tasks) ``class=...`` constraints by a model.

    With probability ``share`` a job (``per="job"``) or task (``per="task"``) is given ``k``
    machine classes, ``k`` uniform in ``[lo, hi]`` (capped at the number of classes), drawn
    without replacement with probability proportional to each class's number of servers. What
    the classes mean depends on ``model``:

    ``pinned`` (default)
        The job *spans* the ``k`` classes and each of its tasks is pinned to exactly one of them
        (``class=A``), as u2's task1 and task2 in the UDRF paper's Section II-A each need their
        own machine class: the job's ``i``-th distinct task (by ``task_index``, in stream order)
        goes to the ``(i mod k)``-th class in draw order, so a job of ``n`` tasks needs
        ``min(k, n)`` classes at once, and every repetition of a task gets the same class. With
        ``per="task"``, ``k`` must be 1.
    ``any-of``
        Every task of the job may use any of the ``k`` classes (``class=A|B``).

    Draws happen in stream order, so a seed gives the same constraints every time.

    Parameters
    ----------
    inner : TaskSource
    classes : ndarray of str, shape (n_servers,)
        Machine class of every server (:func:`machine_classes`).
    share : float
        Probability that a job (task) is constrained, in [0, 1].
    n_classes : (int, int)
        ``(lo, hi)`` number of eligible classes of a constrained job.
    per : {"job", "task"}
    rng : numpy.random.Generator
    model : {"pinned", "any-of"}

    Raises
    ------
    ValueError
        For an unknown ``model``, or ``pinned`` per task with more than one class.
    """

    def __init__(
        self,
        inner: TaskSource,
        classes: np.ndarray,
        *,
        share: float,
        n_classes: tuple[int, int],
        per: str,
        rng: np.random.Generator,
        model: str = "pinned",
    ) -> None:
        super().__init__(inner)
        if model not in MODELS:
            raise ValueError(f"model: {model!r} (expected 'pinned' or 'any-of')")
        if model == "pinned" and per == "task" and n_classes[1] > 1:
            raise ValueError(
                f"classes: {list(n_classes)} with model 'pinned' and per 'task' (a pinned task "
                "uses one class)"
            )
        names, counts = np.unique(np.asarray(classes, dtype=str), return_counts=True)
        self._names = names
        self._p = counts / counts.sum()
        self.share, self.per, self.rng, self.model = share, per, rng, model
        self.lo, self.hi = min(n_classes[0], len(names)), min(n_classes[1], len(names))
        self._of_job: dict[int, list[str] | None] = {}  # job -> its rules (pinned: one per class)
        self._slot: dict[int, dict[int, int]] = {}  # pinned: job -> task_index -> its rule

    def _draw(self, pinned: bool) -> list[str] | None:
        """The rules of one job (task): one per class in draw order if ``pinned``, else the one
        ``class=A|B`` rule; None: unconstrained."""
        rng = self.rng
        if rng.random() >= self.share:
            return None
        k = int(rng.integers(self.lo, self.hi + 1))
        names = self._names[rng.choice(len(self._names), size=k, replace=False, p=self._p)]
        if pinned:
            return ["class=" + c for c in names.tolist()]
        return ["class=" + "|".join(sorted(names.tolist()))]

    def batches(self) -> Iterator[TaskBatch]:
        pinned = self.model == "pinned"
        for batch in self.inner.batches():
            rules: list[str | None] = []
            if self.per == "task":
                for _ in range(len(batch)):
                    r = self._draw(pinned)
                    rules.append(None if r is None else r[0])
            else:
                of_job, slots = self._of_job, self._slot
                for j, i in zip(batch.job_id.tolist(), batch.task_index.tolist(), strict=True):
                    if j not in of_job:
                        of_job[j] = self._draw(pinned)
                    own = of_job[j]
                    if own is None or len(own) == 1:
                        rules.append(None if own is None else own[0])
                        continue
                    slot = slots.setdefault(j, {})
                    c = slot.get(i)
                    if c is None:
                        c = slot[i] = len(slot) % len(own)
                    rules.append(own[c])
            col = np.empty(len(rules), dtype=object)
            col[:] = rules
            yield replace(batch, constraint=col)
