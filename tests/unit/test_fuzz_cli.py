"""Fuzz-style boundary test: more than 100 malformed or extreme inputs across ``run``, ``solve``,
``sweep``, ``trace convert``, ``trace synth`` and ``properties``.

For every input the command, called in-process, must exit with 2 (0 for the few extreme but
valid inputs of ``ACCEPTED``), never raise (no traceback) nor warn, print a refusal as exactly
one line ``fairsim: error: ...``, and leave no output behind when it refuses: the ``--out``
folder (and any parent created for it) does not exist afterwards, or, when it existed before, is
unchanged; no temporary sibling is left.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from fairsim.cli import main
from fairsim.traces.synth import SAMPLE_DURATION_S as SAMPLE_WINDOW_S

DELETE = object()

RUN = {
    "name": "fz",
    "trace": {"format": "synthetic", "n_tasks": 30, "duration_s": SAMPLE_WINDOW_S},
    "cluster": {"servers": 3, "source": "table-i"},
    "schedulers": ["bf-drfh"],
    "collect": {"utilization_interval_s": 600},
}
INSTANCE = {
    "resources": ["cpu", "mem"],
    "servers": [{"id": "s1", "capacity": [9, 12]}, {"id": "s2", "capacity": [12, 12]}],
    "users": [{"id": "u1", "demand": [1, 2]}, {"id": "u2", "demand": [2, 1], "weight": 2}],
}
SWEEP = {"name": "fz", "base": {k: v for k, v in RUN.items() if k != "name"}, "seeds": [1]}


@dataclass(frozen=True)
class Case:
    """One input: ``build(tmp) -> argv`` writes the input files under ``tmp``; the output folder
    is ``tmp / "out"`` (``pre`` may create it first, to test an existing one)."""

    id: str
    build: Callable[[Path], list[str]]
    pre: Callable[[Path], None] | None = None


def _patched(base: dict, patch: dict[str, Any]) -> dict:
    data = copy.deepcopy(base)
    for dotted, value in patch.items():
        node = data
        *head, last = dotted.split(".")
        for h in head:
            node = node.setdefault(h, {})
        if value is DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    return data


def _write(tmp: Path, name: str, content: str | bytes | dict | list) -> Path:
    path = tmp / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif isinstance(content, str):
        path.write_text(content)
    else:
        path.write_text(json.dumps(content) if name.endswith(".json") else yaml.safe_dump(content))
    return path


def _gz(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as fh:
        fh.write(text)


# --------------------------------------------------------------------------- run


def _run_config(patch: dict[str, Any] | str | bytes, *extra: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        content = patch if isinstance(patch, str | bytes) else _patched(RUN, patch)
        cfg = _write(tmp, "c.yaml", content)
        return ["run", str(cfg), "--out", str(tmp / "out"), "--no-progress", *extra]

    return build


def _canonical_junk(tmp: Path) -> None:
    (tmp / "canon").mkdir()
    (tmp / "canon" / "tasks.parquet").write_bytes(b"PAR1 not really")


def _google_empty(tmp: Path) -> None:
    (tmp / "g").mkdir()


INLINE = {"name": "a", "demand": [0.1, 0.1], "tasks": 3, "run_s": 1}
RUN_CASES = [
    Case("run-empty-file", _run_config("")),
    Case("run-top-level-list", _run_config("- a\n- b\n")),
    Case("run-invalid-yaml", _run_config("name: [\n")),
    Case("run-not-utf8", _run_config(b"name: \xff\xfe\n")),
    Case("run-tab-indent", _run_config("name: t\ntrace:\n\tformat: synthetic\n")),
    Case("run-deep-nesting", _run_config("a: " + "[" * 3000 + "]" * 3000 + "\n")),
    Case("run-unknown-key", _run_config({"schedulerz": ["bf-drfh"]})),
    Case("run-name-missing", _run_config({"name": DELETE})),
    Case("run-name-empty", _run_config({"name": ""})),
    Case("run-name-slash", _run_config({"name": "a/b"})),
    Case("run-name-dotdot", _run_config({"name": ".."})),
    Case("run-name-escape", _run_config({"name": "../../escape"})),
    Case("run-name-int", _run_config({"name": 5})),
    Case("run-seed-negative", _run_config({"seed": -1})),
    Case("run-seed-string", _run_config({"seed": "abc"})),
    Case("run-seed-float", _run_config({"seed": 1.5})),
    Case("run-seed-huge", _run_config({"seed": 10**40})),
    Case("run-trace-missing", _run_config({"trace": DELETE})),
    Case("run-trace-string", _run_config({"trace": "synthetic"})),
    Case("run-trace-format", _run_config({"trace.format": "bogus"})),
    Case("run-n-tasks-zero", _run_config({"trace.n_tasks": 0})),
    Case("run-n-tasks-negative", _run_config({"trace.n_tasks": -5})),
    Case("run-n-tasks-string", _run_config({"trace.n_tasks": "many"})),
    Case("run-n-tasks-huge", _run_config({"trace.n_tasks": 10**12})),
    Case("run-n-tasks-inf", _run_config({"trace.n_tasks": float("inf")})),
    Case("run-start-negative", _run_config({"trace.start_s": -1})),
    Case("run-start-nan", _run_config({"trace.start_s": float("nan")})),
    Case("run-end-before-start", _run_config({"trace.end_s": 0})),
    Case("run-empty-window", _run_config({"trace.start_s": 1e9})),
    Case("run-canonical-no-path", _run_config({"trace": {"format": "canonical"}})),
    Case(
        "run-canonical-missing",
        _run_config({"trace": {"format": "canonical", "path": "nowhere"}}),
    ),
    Case(
        "run-canonical-not-parquet",
        _run_config({"trace": {"format": "canonical", "path": "canon"}}),
        _canonical_junk,
    ),
    Case(
        "run-google-no-task-events",
        _run_config({"trace": {"format": "google-2011", "path": "g"}}),
        _google_empty,
    ),
    Case(
        "run-google-path-file", _run_config({"trace": {"format": "google-2011", "path": "c.yaml"}})
    ),
    Case(
        "run-google-bad-parts",
        _run_config({"trace": {"format": "google-2011", "path": "g", "parts": "x-y"}}),
        _google_empty,
    ),
    Case("run-inline-no-users", _run_config({"trace": {"format": "inline"}})),
    Case(
        "run-inline-negative-demand",
        _run_config({"trace": {"format": "inline", "users": [{**INLINE, "demand": [-1, 0.1]}]}}),
    ),
    Case(
        "run-inline-nan-demand",
        _run_config(
            {"trace": {"format": "inline", "users": [{**INLINE, "demand": [float("nan"), 0.1]}]}}
        ),
    ),
    Case(
        "run-inline-empty-demand",
        _run_config({"trace": {"format": "inline", "users": [{**INLINE, "demand": []}]}}),
    ),
    Case(
        "run-inline-three-resources",
        _run_config(
            {"trace": {"format": "inline", "users": [{**INLINE, "demand": [0.1, 0.1, 0.1]}]}}
        ),
    ),
    Case(
        "run-inline-zero-tasks",
        _run_config({"trace": {"format": "inline", "users": [{**INLINE, "tasks": 0}]}}),
    ),
    Case(
        "run-inline-zero-run",
        _run_config({"trace": {"format": "inline", "users": [{**INLINE, "run_s": 0}]}}),
    ),
    Case(
        "run-inline-range-without-windows",
        _run_config({"trace": {"format": "inline", "users": [{**INLINE, "run_s": [1, 2]}]}}),
    ),
    Case(
        "run-inline-negative-weight",
        _run_config({"trace": {"format": "inline", "users": [{**INLINE, "weight": -1}]}}),
    ),
    Case(
        "run-inline-duplicate-users",
        _run_config({"trace": {"format": "inline", "users": [INLINE, INLINE]}}),
    ),
    Case("run-weights-zero", _run_config({"trace.weights": {"a": 0}})),
    Case("run-weights-list", _run_config({"trace.weights": [1, 2]})),
    Case("run-weights-unknown-user", _run_config({"trace.weights": {"nobody": 2}})),
    Case("run-default-weight-negative", _run_config({"trace.default_weight": -2})),
    Case("run-bad-row-threshold", _run_config({"trace.bad_row_threshold": 2})),
    Case("run-servers-zero", _run_config({"cluster.servers": 0})),
    Case("run-servers-negative", _run_config({"cluster.servers": -5})),
    Case("run-servers-huge", _run_config({"cluster.servers": 10**12})),
    Case("run-servers-string", _run_config({"cluster.servers": "x"})),
    Case("run-source-bogus", _run_config({"cluster.source": "tableI"})),
    Case("run-cluster-seed-negative", _run_config({"cluster.seed": -3})),
    Case(
        "run-class-zero-capacity",
        _run_config({"cluster": {"classes": [{"name": "A", "count": 2, "capacity": [0, 0]}]}}),
    ),
    Case(
        "run-class-negative-capacity",
        _run_config({"cluster": {"classes": [{"name": "A", "count": 2, "capacity": [-1, 1]}]}}),
    ),
    Case(
        "run-class-count-zero",
        _run_config({"cluster": {"classes": [{"name": "A", "count": 0, "capacity": [1, 1]}]}}),
    ),
    Case(
        "run-class-no-memory",
        _run_config({"cluster": {"classes": [{"name": "A", "count": 2, "capacity": [1, 0]}]}}),
    ),
    Case(
        "run-classes-and-servers",
        _run_config({"cluster.classes": [{"name": "A", "count": 2, "capacity": [1, 1]}]}),
    ),
    Case("run-schedulers-empty", _run_config({"schedulers": []})),
    Case("run-schedulers-unknown", _run_config({"schedulers": ["bf-drfhh"]})),
    Case("run-schedulers-string", _run_config({"schedulers": "bf-drfh"})),
    Case("run-schedulers-duplicate", _run_config({"schedulers": ["bf-drfh", "bf-drfh"]})),
    Case("run-slots-zero", _run_config({"schedulers": ["slots-0"]})),
    Case("run-interval-zero", _run_config({"collect.utilization_interval_s": 0})),
    Case("run-interval-negative", _run_config({"collect.utilization_interval_s": -1})),
    Case(
        "run-interval-tiny",
        _run_config({"collect.utilization_interval_s": 1e-6, "trace.end_s": 3600}),
    ),
    Case("run-interval-huge", _run_config({"collect.utilization_interval_s": 1e300})),
    Case("run-horizon-negative", _run_config({"collect.horizon_s": -5})),
    Case("run-constraint-share", _run_config({"trace.constraints": {"share": 2}})),
    Case("run-constraint-bogus", _run_config({"trace.constraints": "sometimes"})),
    Case("run-repetitions-reversed", _run_config({"trace.repetitions": [3, 1]})),
    Case("run-job-run-short", _run_config({"trace.job_run_s": [5]})),
    Case("run-queue-zero", _run_config({"trace.queue_jobs": 0})),
    Case("run-set-unclosed", _run_config({}, "--set", "schedulers=[bf-drfh")),
    Case("run-set-no-equals", _run_config({}, "--set", "cluster")),
    Case("run-set-empty-key", _run_config({}, "--set", "=5")),
    Case("run-set-double-dot", _run_config({}, "--set", "cluster..servers=4")),
    Case("run-set-bad-index", _run_config({}, "--set", "schedulers.9=drf")),
    Case("run-set-into-string", _run_config({}, "--set", "name.x=1")),
    Case("run-set-bad-mapping", _run_config({}, "--set", "cluster={a: [}")),
    Case("run-set-seed-negative", _run_config({}, "--set", "seed=-1")),
    Case("run-set-nan", _run_config({}, "--set", "collect.utilization_interval_s=.nan")),
    Case(
        "run-config-missing", lambda tmp: ["run", str(tmp / "nope.yaml"), "--out", str(tmp / "out")]
    ),
    Case("run-config-directory", lambda tmp: ["run", str(tmp), "--out", str(tmp / "out")]),
    Case(
        "run-out-is-file",
        _run_config({}),
        lambda tmp: (tmp / "out").write_text("keep"),
    ),
    Case(
        "run-out-below-file",
        lambda tmp: [*_run_config({})(tmp)[:2], "--out", str(tmp / "f" / "out")],
        lambda tmp: (tmp / "f").write_text("keep"),
    ),
    Case(
        "run-out-not-empty",
        _run_config({}),
        lambda tmp: ((tmp / "out").mkdir(), (tmp / "out" / "mine.txt").write_text("keep")),
    ),
    Case("run-out-empty-string", lambda tmp: [*_run_config({})(tmp)[:2], "--out", ""]),
]


# --------------------------------------------------------------------------- solve


def _solve(content: str | bytes | dict | list, *head: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        path = _write(tmp, "i.json", content)
        return ["solve", *(head or ("drfh",)), str(path)]

    return build


def _inst(patch: dict[str, Any]) -> dict:
    return _patched(INSTANCE, patch)


def _user(i: int, **kw: Any) -> dict:
    return _inst({"users": [{**INSTANCE["users"][0], **kw}, INSTANCE["users"][1]]})


def _server(**kw: Any) -> dict:
    return _inst({"servers": [{**INSTANCE["servers"][0], **kw}, INSTANCE["servers"][1]]})


SOLVE_CASES = [
    Case("solve-not-json", _solve("{resources: ")),
    Case("solve-empty", _solve("")),
    Case("solve-list", _solve("[1, 2]")),
    Case("solve-no-servers", _solve(_inst({"servers": DELETE}))),
    Case("solve-no-users", _solve(_inst({"users": DELETE}))),
    Case("solve-resources-string", _solve(_inst({"resources": "cpu"}))),
    Case("solve-capacity-negative", _solve(_server(capacity=[-1, 12]))),
    Case("solve-capacity-short", _solve(_server(capacity=[9]))),
    Case("solve-capacity-string", _solve(_server(capacity=["9", "x"]))),
    Case(
        "solve-capacity-nan",
        _solve(
            '{"resources": ["cpu"], "servers": [{"id": "s", '
            '"capacity": [NaN]}], "users": [{"id": "u", "demand": [1]}]}'
        ),
    ),
    Case(
        "solve-capacity-infinity",
        _solve(
            '{"resources": ["cpu"], "servers": [{"id": "s", '
            '"capacity": [Infinity]}], "users": [{"id": "u", '
            '"demand": [1]}]}'
        ),
    ),
    Case("solve-demand-short", _solve(_user(0, demand=[1]))),
    Case("solve-demand-zero", _solve(_user(0, demand=[0, 0]))),
    Case("solve-demand-negative", _solve(_user(0, demand=[-1, 2]))),
    Case("solve-eligible-unknown", _solve(_user(0, eligible=["s9"]))),
    Case("solve-weight-negative", _solve(_user(0, weight=-1))),
    Case("solve-weight-zero", _solve(_user(0, weight=0))),
    Case("solve-max-tasks-negative", _solve(_user(0, max_tasks=-3))),
    Case("solve-user-unknown-key", _solve(_user(0, colour="red"))),
    Case("solve-duplicate-users", _solve(_inst({"users": [INSTANCE["users"][0]] * 2}))),
    Case("solve-duplicate-servers", _solve(_inst({"servers": [INSTANCE["servers"][0]] * 2}))),
    Case("solve-deep", _solve("[" * 200_000 + "]" * 200_000)),
    Case("solve-not-utf8", _solve(b'{"resources": ["\xff"]}')),
    Case("solve-unknown-mechanism", _solve(INSTANCE, "drfhh")),
    Case("solve-compare-one", _solve(INSTANCE, "--compare", "drfh")),
    Case("solve-udrf-plain-instance", _solve(INSTANCE, "udrf")),
    Case("solve-sharing-bogus", _solve(INSTANCE, "psdsf", "--sharing", "xdm")),
    Case("solve-directory", lambda tmp: ["solve", "drfh", str(tmp)]),
    Case("solve-missing", lambda tmp: ["solve", "drfh", str(tmp / "nope.json")]),
    Case("solve-no-args", lambda tmp: ["solve"]),
]


# --------------------------------------------------------------------------- sweep


def _sweep(
    patch: dict[str, Any] | str, *extra: str, out: str = "out"
) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        content = patch if isinstance(patch, str) else _patched(SWEEP, patch)
        path = _write(tmp, "s.yaml", content)
        return ["sweep", str(path), "--out", str(tmp / out), "--executor", "local:1", *extra]

    return build


SWEEP_CASES = [
    Case("sweep-out-empty", lambda tmp: [*_sweep({})(tmp)[:2], "--out", ""]),
    Case("sweep-list", _sweep("- 1\n")),
    Case("sweep-no-base", _sweep({"base": DELETE})),
    Case("sweep-base-string", _sweep({"base": "x"})),
    Case("sweep-base-name", _sweep({"base.name": "x"})),
    Case("sweep-grid-not-list", _sweep({"grid": {"cluster.servers": 5}})),
    Case("sweep-grid-empty-values", _sweep({"grid": {"cluster.servers": []}})),
    Case("sweep-grid-unknown-path", _sweep({"grid": {"cluster.serverz": [1]}})),
    Case("sweep-grid-bad-value", _sweep({"grid": {"cluster.servers": [-1]}})),
    Case("sweep-grid-seed", _sweep({"grid": {"seed": [1, 2]}})),
    Case("sweep-seeds-empty", _sweep({"seeds": []})),
    Case("sweep-seeds-string", _sweep({"seeds": ["x"]})),
    Case("sweep-seeds-negative", _sweep({"seeds": [-1]})),
    Case("sweep-seeds-duplicate", _sweep({"seeds": [1, 1]})),
    Case("sweep-name-escape", _sweep({"name": "../x"})),
    Case("sweep-unknown-key", _sweep({"gird": {}})),
    Case("sweep-executor-bogus", lambda tmp: [*_sweep({})(tmp)[:-2], "--executor", "lokal:2"]),
    Case("sweep-executor-zero", lambda tmp: [*_sweep({})(tmp)[:-2], "--executor", "local:0"]),
    Case("sweep-out-is-file", _sweep({}), lambda tmp: (tmp / "out").write_text("keep")),
    Case(
        "sweep-out-not-a-sweep",
        _sweep({}),
        lambda tmp: ((tmp / "out").mkdir(), (tmp / "out" / "mine.txt").write_text("keep")),
    ),
]


# --------------------------------------------------------------------------- trace convert


def _convert(fmt: str, *extra: str, src: str = "src") -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        return [
            "trace",
            "convert",
            fmt,
            str(tmp / src),
            "--out",
            str(tmp / "out"),
            "--no-progress",
            *extra,
        ]

    return build


def _te(text: str | bytes) -> Callable[[Path], None]:
    def pre(tmp: Path) -> None:
        part = tmp / "src" / "task_events" / "part-00000-of-00500.csv.gz"
        if isinstance(text, bytes):
            part.parent.mkdir(parents=True)
            part.write_bytes(text)
        else:
            _gz(part, text)

    return pre


def _files(files: dict[str, str]) -> Callable[[Path], None]:
    def pre(tmp: Path) -> None:
        (tmp / "src").mkdir()
        for name, text in files.items():
            (tmp / "src" / name).write_text(text)

    return pre


GOOD_ROW = "700000000,,1,0,,0,u,0,0,0.1,0.2,0,0\n"
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,786432,8,V100\n"
CONVERT_CASES = [
    Case(
        "convert-out-empty",
        lambda tmp: ["trace", "convert", "google-2011", str(tmp / "src"), "--out", ""],
        _te(GOOD_ROW),
    ),
    Case("convert-src-missing", _convert("google-2011")),
    Case("convert-src-file", _convert("google-2011", src="f"), lambda t: (t / "f").write_text("")),
    Case("convert-no-task-events", _convert("google-2011"), lambda t: (t / "src").mkdir()),
    Case("convert-empty-part", _convert("google-2011"), _te(b"")),
    Case("convert-three-columns", _convert("google-2011"), _te("1,2,3\n4,5,6\n")),
    Case("convert-not-gzip", _convert("google-2011"), _te(b"this is not gzip at all\n")),
    Case(
        "convert-latin1-rows",
        _convert("google-2011"),
        _te(gzip.compress("1,caf\xe9\n".encode("latin-1") * 3)),
    ),
    Case(
        "convert-truncated-gzip",
        _convert("google-2011"),
        _te(gzip.compress(GOOD_ROW.encode() * 2000)[:150]),
    ),
    Case(
        "convert-all-unparseable", _convert("google-2011"), _te("a,b,c,d,e,f,g,h,i,j,k,l,m\n" * 3)
    ),
    Case("convert-blank-lines", _convert("google-2011"), _te("\n\n\n")),
    Case("convert-bad-parts", _convert("google-2011", "--parts", "x-y"), _te(GOOD_ROW)),
    Case("convert-missing-part", _convert("google-2011", "--parts", "99"), _te(GOOD_ROW)),
    Case(
        "convert-threshold-big",
        _convert("google-2011", "--bad-row-threshold", "1.5"),
        _te(GOOD_ROW),
    ),
    Case(
        "convert-threshold-text", _convert("google-2011", "--bad-row-threshold", "x"), _te(GOOD_ROW)
    ),
    Case("convert-unknown-format", _convert("google-2099"), _te(GOOD_ROW)),
    Case(
        "convert-out-is-file",
        _convert("google-2011"),
        lambda t: (_te(GOOD_ROW)(t), (t / "out").write_text("keep")),
    ),
    Case("convert-parts-for-alibaba", _convert("alibaba-2017", "--parts", "0-3"), _files({})),
    Case("convert-2017-empty-folder", _convert("alibaba-2017"), lambda t: (t / "src").mkdir()),
    Case(
        "convert-2017-malformed",
        _convert("alibaba-2017"),
        _files({"batch_task.csv": "1,2,3\n" * 4}),
    ),
    Case(
        "convert-2017-header-only",
        _convert("alibaba-2017"),
        _files({"batch_task.csv": "create_time,end,job,task,inst,status,cpu,mem\n"}),
    ),
    Case(
        "convert-2018-bad-job-names",
        _convert("alibaba-2018"),
        _files({"batch_task.csv": "M1,1,job1,1,Terminated,1,2,50,0.5\n" * 4}),
    ),
    Case(
        "convert-gpu-wrong-columns",
        _convert("alibaba-gpu-2023"),
        _files(
            {
                "openb_node_list_all_node.csv": NODES,
                "openb_pod_list_default.csv": "name,cpu\np1,1\n",
            }
        ),
    ),
    Case(
        "convert-gpu-no-nodes",
        _convert("alibaba-gpu-2023"),
        _files(
            {
                "openb_node_list_all_node.csv": "sn,cpu_milli,memory_mib,gpu,model\n",
                "openb_pod_list_default.csv": "name\n",
            }
        ),
    ),
    Case(
        "convert-spar-binary",
        _convert("alibaba-2018-spar"),
        lambda t: (
            (t / "src").mkdir(),
            (t / "src" / "sample_tasks.csv").write_bytes(bytes(range(256)) * 4),
        ),
    ),
]


# --------------------------------------------------------------------------- trace synth


def _synth(*args: str, out: str = "out") -> Callable[[Path], list[str]]:
    return lambda tmp: ["trace", "synth", *args, "--out", str(tmp / out)]


SYNTH_CASES = [
    Case("synth-out-empty", lambda tmp: ["trace", "synth", "--tasks", "5", "--out", ""]),
    Case("synth-tasks-zero", _synth("--tasks", "0")),
    Case("synth-tasks-negative", _synth("--tasks", "-1")),
    Case("synth-tasks-text", _synth("--tasks", "abc")),
    Case("synth-tasks-float", _synth("--tasks", "1e12")),
    Case("synth-tasks-huge", _synth("--tasks", str(10**13))),
    Case("synth-seed-negative", _synth("--tasks", "10", "--seed", "-1")),
    Case("synth-raw-no-src", _synth("--raw", "google-2011", "--tasks", "10")),
    Case("synth-raw-src-missing", _synth("--raw", "google-2011", "--src", "nope", "--tasks", "10")),
    Case("synth-raw-bogus-format", _synth("--raw", "google-2019", "--src", ".", "--tasks", "10")),
    Case("synth-raw-days-zero", _synth("--raw", "google-2011", "--src", ".", "--days", "0")),
    Case("synth-raw-parts-zero", _synth("--raw", "google-2011", "--src", ".", "--parts", "0")),
    Case("synth-src-without-raw", _synth("--src", ".", "--tasks", "10")),
    Case(
        "synth-out-below-file",
        _synth("--tasks", "10", out="f/out"),
        lambda t: (t / "f").write_text("keep"),
    ),
    Case(
        "synth-out-not-empty",
        _synth("--tasks", "10"),
        lambda t: ((t / "out").mkdir(), (t / "out" / "mine.txt").write_text("keep")),
    ),
]


# --------------------------------------------------------------------------- properties


def _props(*args: str, out: str = "out") -> Callable[[Path], list[str]]:
    return lambda tmp: ["properties", *args, "--out", str(tmp / out)]


PROPERTIES_CASES = [
    Case("properties-out-empty", lambda tmp: ["properties", "--instances", "2", "--out", ""]),
    Case("properties-instances-negative", _props("--instances", "-1")),
    Case("properties-instances-zero", _props("--instances", "0")),
    Case("properties-instances-text", _props("--instances", "x")),
    Case("properties-seed-negative", _props("--instances", "2", "--seed", "-1")),
    Case("properties-mechanism-bogus", _props("--mechanism", "drfhh")),
    Case(
        "properties-out-is-file",
        _props("--instances", "2"),
        lambda t: (t / "out").write_text("keep"),
    ),
    Case(
        "properties-out-below-file",
        _props("--instances", "2", out="f/out"),
        lambda t: (t / "f").write_text("keep"),
    ),
]

#: Inputs that are extreme but valid: they run (exit 0). Every other case must be refused.
ACCEPTED = {"run-seed-huge"}
CASES = [*RUN_CASES, *SOLVE_CASES, *SWEEP_CASES, *CONVERT_CASES, *SYNTH_CASES, *PROPERTIES_CASES]


def test_at_least_100_inputs_across_the_six_commands() -> None:
    assert len(CASES) >= 100
    assert len({c.id for c in CASES}) == len(CASES)
    commands = {c.id.split("-")[0] for c in CASES}
    assert commands == {"run", "solve", "sweep", "convert", "synth", "properties"}


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_malformed_input(
    case: Case,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # the default cache and results/ stay in the test's folder
    if case.pre is not None:
        case.pre(tmp_path)
    argv = case.build(tmp_path)
    before = _snapshot(tmp_path)
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: --help or a bad option
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # a traceback for the user
        pytest.fail(f"{case.id}: {type(exc).__name__}: {exc}")
    stdout, stderr = capsys.readouterr()
    assert code == (0 if case.id in ACCEPTED else 2), (case.id, code, stderr)
    assert "Traceback" not in stderr
    if code == 2:
        lines = stderr.strip().splitlines()
        assert len(lines) == 1, stderr
        assert lines[0].startswith("fairsim: error: "), lines[0]
        # nothing written by a refused command: the files are exactly those before it ran
        # (no output folder, no created parent, no temporary sibling, inputs untouched)
        after = _snapshot(tmp_path)
        assert after == before, sorted(set(after) ^ set(before))
    else:
        assert stdout  # an accepted input says what it did
    hidden = [p.name for p in tmp_path.rglob(".*") if p.name.endswith((".tmp", ".old"))]
    assert hidden == []
    assert not (tmp_path.parent / "escape").exists()
    assert os.getcwd() == str(tmp_path)
