"""The ``fairsim`` command line.

::

    fairsim run CONFIG.yaml [--out DIR] [--overwrite] [--set key=value ...]
    fairsim solve MECHANISM INSTANCE.json [--sharing rdm|tdm] [--online] [--format json|table]
    fairsim solve --compare A,B INSTANCE.json [--sharing rdm|tdm] [--online] [--format ...]
    fairsim properties [--mechanism M ...] [--instances N | --instance FILE.json] [--seed S]
                       [--json] [--out DIR]
    fairsim trace convert FORMAT SRC --out DIR [--overwrite] [--bad-row-threshold F]
    fairsim trace fetch google-2011 [--parts 0-13] [--dest DIR] [--sha256sum FILE]
    fairsim trace synth --tasks N --seed S --out DIR [--overwrite]
    fairsim trace synth --raw google-2011 --src PATH --tasks N --days D --seed S --out DIR
    fairsim experiment drfh-google [--seeds N] [--shared ../shared] [--out results/drfh-google]
    fairsim experiment bonald-roberts [--seeds N] [--quick] [--out results/bonald-roberts]
    fairsim experiment lmm-mms [--seeds N] [--quick] [--shared ../shared] [--out results/lmm-mms]
    fairsim experiment psdsf [--seeds N] [--quick] [--out results/psdsf]
    fairsim experiment udrf [--seeds N] [--quick] [--shared ../shared] [--out results/udrf]
    fairsim sweep SWEEP.yaml [--out OUT] [--executor local:N|dask-local:N|dask://host:port]
    fairsim sweep-report OUT
    fairsim --version

Every user error (bad config, bad instance, bad trace, bad option, an output folder that exists
or cannot be written) is printed as one line ``fairsim: error: ...`` and exits with status 2; no
traceback. Output folders are written under a temporary name and renamed into place when complete
(:func:`fairsim.atomic.atomic_dir`); ``experiment`` replaces its folder by design.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import sys
import textwrap
from pathlib import Path
from typing import Any, NoReturn

from fairsim import __version__
from fairsim.atomic import json_text
from fairsim.errors import FairsimError
from fairsim.experiments.argtypes import int_at_least

EXIT_USAGE = 2


def _user_errors() -> tuple[type[BaseException], ...]:
    from fairsim.errors import TraceError

    return (FairsimError, TraceError)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line ``fairsim: error: ...`` (exit status 2)."""

    def error(self, message: str) -> NoReturn:
        where = self.prog.removeprefix("fairsim").strip()
        prefix = f"{where}: " if where else ""
        self.exit(EXIT_USAGE, f"fairsim: error: {prefix}{message} (see {self.prog} --help)\n")


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive, finite number of seconds")
    return value


def _positive_days(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive, finite number of days")
    return value


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a share between 0 and 1")
    return value


def _format_speed(summary: dict[str, Any]) -> str:
    """What ``tasks_per_s`` counts, in words: the tasks that arrived by the horizon per second
    of the engine's wall time (``summary.json``'s ``tasks``, ``wall_s``, ``tasks_per_s``)."""
    rate, wall = summary.get("tasks_per_s"), summary.get("wall_s")
    if not isinstance(rate, int | float) or not isinstance(wall, int | float):
        return "- tasks/s"
    return f"{summary['tasks']:,} tasks simulated in {wall:.1f} s ({rate:,.0f} tasks/s)"


def cmd_run(args: argparse.Namespace) -> int:
    import fairsim
    from fairsim.atomic import check_output_dir
    from fairsim.scenario.config import load_config
    from fairsim.scenario.reporting.run_report import overload_line

    name = load_config(args.config, overrides=args.set).name
    target = args.out if args.out is not None else str(Path("results") / name)
    check_output_dir(target, overwrite=args.overwrite, protect=[args.config])  # before any work
    results = fairsim.simulate(
        args.config,
        out=target,
        progress=not args.no_progress,
        overwrite=args.overwrite,
        overrides=args.set,
    )
    for name, r in results.items():
        s = r.summary
        utils = ", ".join(
            f"{res} {100 * v:.1f} %" if v is not None else f"{res} -"
            for res, v in s["mean_utilization"].items()
        )
        print(
            f"{name:>16}: {s['tasks_completed']:,}/{s['tasks']:,} tasks completed, {utils}; "
            f"{_format_speed(s)}"
        )
    overload = overload_line({name: r.summary for name, r in results.items()})
    if overload is not None:
        print(overload)
    print(f"results in {Path(target)}")
    return 0


def cmd_solve(args: argparse.Namespace) -> int:
    import fairsim
    from fairsim.schedulers.instance import load_instance
    from fairsim.schedulers.solve import compare_table, solve_table

    if args.compare:
        names = args.compare.split(",")
        path = args.instance or args.mechanism
        if len(names) != 2 or not all(names) or path is None or (args.instance and args.mechanism):
            raise FairsimError("solve --compare: expected --compare A,B and one INSTANCE.json")
        if "udrf" in names:
            raise FairsimError("solve --compare: udrf takes a jobs instance and cannot be compared")
        inst = load_instance(path)
        outs = [fairsim.solve(inst, n, sharing=args.sharing, online=args.online) for n in names]
        # each user's total at full precision: whole tasks summed, else the exact sum (fsum)
        tot = [
            [
                sum(row) if all(isinstance(v, int) for v in row) else math.fsum(row)
                for row in o["tasks"]
            ]
            for o in outs
        ]
        gap = {
            "users": list(inst.user_ids),
            "total": {names[0]: tot[0], names[1]: tot[1]},
            "gap": [b - a for a, b in zip(tot[0], tot[1], strict=True)],
        }
        if args.format == "table":
            sys.stdout.write(compare_table(outs, gap))
        else:
            print(json_text({"compare": outs, "gap": gap}, indent=None, sort_keys=False))
        return 0
    if args.mechanism is None or args.instance is None:
        raise FairsimError(
            "solve: expected MECHANISM INSTANCE.json (or --compare A,B INSTANCE.json)"
        )
    out = fairsim.solve(args.instance, args.mechanism, sharing=args.sharing, online=args.online)
    if args.format == "table":
        sys.stdout.write(solve_table(out))
    else:
        print(json_text(out, indent=None, sort_keys=False))
    return 0


def cmd_trace_convert(args: argparse.Namespace) -> int:
    from fairsim.atomic import atomic_dir, check_output_dir

    if args.parts and args.format != "google-2011":
        raise FairsimError(f"trace convert: --parts applies to google-2011, not {args.format}")
    check_output_dir(args.out, overwrite=args.overwrite, protect=[args.src])  # before any work
    src = Path(args.src)
    with atomic_dir(args.out, overwrite=args.overwrite, protect=[args.src]) as tmp:
        if args.format.startswith("alibaba"):
            from fairsim.traces.alibaba import convert_alibaba

            report = convert_alibaba(
                args.format, src, tmp, bad_row_threshold=args.bad_row_threshold
            )
        else:
            from fairsim.traces.fetch import parse_parts
            from fairsim.traces.google2011 import convert_google_2011

            parts = parse_parts(args.parts) if args.parts else None
            report = convert_google_2011(
                src,
                tmp,
                parts=parts,
                progress=not args.no_progress,
                bad_row_threshold=args.bad_row_threshold,
            )
    print(json_text({k: report[k] for k in ("rows_read", "rows_used", "skipped")}, sort_keys=False))
    return 0


def cmd_trace_check(args: argparse.Namespace) -> int:
    from fairsim.traces.check import check_alibaba, check_google_2011, check_text

    if args.parts and args.format != "google-2011":
        raise FairsimError(f"trace check: --parts applies to google-2011, not {args.format}")
    src = Path(args.src)
    if args.format == "google-2011":
        from fairsim.traces.fetch import parse_parts

        parts = parse_parts(args.parts) if args.parts else None
        result = check_google_2011(src, parts=parts, sample_s=args.sample_s)
    else:
        result = check_alibaba(args.format, src)
    if args.json:
        from fairsim.traces.io import write_json_atomic

        write_json_atomic(result, Path(args.json))
    sys.stdout.write(check_text(result))
    return 0


def cmd_trace_fetch(args: argparse.Namespace) -> int:
    from fairsim.errors import TraceError
    from fairsim.traces.fetch import fetch_google_2011, parse_parts
    from fairsim.traces.paths import data_dir

    if args.dataset != "google-2011":
        raise TraceError(f"trace fetch: unknown dataset {args.dataset!r} (available: google-2011)")
    paths = fetch_google_2011(
        parse_parts(args.parts),
        Path(args.dest) if args.dest else data_dir() / "google-2011",
        tables=tuple(args.tables.split(",")),
        sha256sum=Path(args.sha256sum) if args.sha256sum else None,
        progress=not args.no_progress,
    )
    for p in paths:
        print(p)
    return 0


def cmd_trace_synth(args: argparse.Namespace) -> int:
    from fairsim.atomic import atomic_dir, check_output_dir
    from fairsim.errors import ConfigError
    from fairsim.scenario.limits import BYTES_PER_TASK, check_memory
    from fairsim.traces.io import write_tasks
    from fairsim.traces.synth import default_duration_s, synth_complex_jobs, synth_google_like

    if args.days is not None and args.duration_s is not None:
        raise ConfigError("trace synth: give --days or --duration-s, not both")
    duration_s = args.duration_s if args.days is None else args.days * 86_400.0
    if args.raw is None:
        for flag, value in (("--src", args.src), ("--parts", args.parts)):
            if value is not None:
                raise ConfigError(f"trace synth: {flag} needs --raw google-2011")
    if args.raw is not None:
        if args.src is None:
            raise ConfigError(
                "trace synth --raw: --src (the Google 2011 folder to resample) is missing"
            )
        if args.complex:
            raise ConfigError("trace synth: --complex and --raw cannot be combined")
        return _trace_synth_raw(args, duration_s or default_duration_s(args.tasks))
    try:
        check_memory("--tasks", args.tasks, "tasks", args.tasks * BYTES_PER_TASK)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    check_output_dir(args.out, overwrite=args.overwrite)  # before any work
    with atomic_dir(args.out, overwrite=args.overwrite) as tmp:
        if args.complex:
            frame = synth_complex_jobs(args.tasks, seed=args.seed, duration_s=duration_s)
        else:
            frame = synth_google_like(args.tasks, seed=args.seed, duration_s=duration_s)
        write_tasks(frame, tmp / "tasks.parquet")
    print(f"{len(frame)} tasks written to {Path(args.out) / 'tasks.parquet'}")
    return 0


def _trace_synth_raw(args: argparse.Namespace, duration_s: float) -> int:
    """``trace synth --raw google-2011``: a raw-format trace resampled from ``--src``."""
    from fairsim.atomic import atomic_dir, check_output_dir
    from fairsim.errors import TraceError
    from fairsim.traces.synth_raw import resample_google_2011

    src = Path(args.src)
    if not (src / "task_events").is_dir():
        raise TraceError(f"trace synth --src {src}: no task_events folder there")
    check_output_dir(args.out, overwrite=args.overwrite, protect=[src])  # before any work
    with atomic_dir(args.out, overwrite=args.overwrite, protect=[src]) as tmp:
        rep = resample_google_2011(
            src,
            tmp,
            tasks=args.tasks,
            duration_s=duration_s,
            seed=args.seed,
            parts=500 if args.parts is None else args.parts,
            progress=not args.no_progress,
        )
    print(
        f"{rep['tasks']:,} tasks ({rep['jobs']:,} jobs, {rep['rows']:,} task_events rows) over "
        f"{rep['duration_s'] / 86_400:.2f} days in {rep['parts']} parts, "
        f"{rep['bytes'] / 1e6:.1f} MB, {rep['seconds']:.1f} s: {Path(args.out) / 'task_events'} "
        "(report: synth.json)"
    )
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    from fairsim.atomic import atomic_dir
    from fairsim.experiments.reproductions import reproduce

    out = Path(args.out or f"results/{args.which}")
    # A reproduction replaces its folder by design (``make experiment`` twice in a row works),
    # still atomically: an interrupted run keeps the previous results.
    with atomic_dir(out, overwrite=True, protect=[args.shared]) as tmp:
        path = reproduce(
            args.which,
            out=tmp,
            shared=Path(args.shared),
            quick=args.quick,
            progress=not args.no_progress,
            seeds=args.seeds,
            jobs=args.jobs,
        )
    print(f"report: {out / path.relative_to(tmp)}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from fairsim.atomic import check_writable_dir
    from fairsim.scenario.sweep import load_sweep, run_sweep

    sweep = load_sweep(args.sweep)
    if args.out is not None:
        check_writable_dir(args.out)  # also refuses an empty --out
    out = Path(args.out) if args.out is not None else Path("results") / "sweeps" / sweep.name
    frame = run_sweep(
        sweep,
        out,
        executor=args.executor,
        base=Path(args.sweep).resolve().parent,
        progress=not args.no_progress,
    )
    runs = frame.drop_duplicates("run_id")
    failed = runs[runs["status"] != "ok"]
    print(f"{len(runs)} runs: {len(runs) - len(failed)} ok, {len(failed)} failed")
    for row in failed.itertuples():
        print(f"  failed {row.run_id}: {row.error}")
    print(f"results in {out} (runs.parquet)")
    return 1 if len(failed) else 0


def cmd_properties(args: argparse.Namespace) -> int:
    """``fairsim properties``: the fairness-property table of the exact mechanisms
    (:func:`fairsim.schedulers.exact.property_table.property_table`).

    Writes the table (``table.md``, ``table.json``), the counterexamples and the unverifiable
    instances into the output folder atomically and prints the table (or JSON). Without
    ``--out`` the folder is ``results/properties`` and each run replaces it (a rerun never fails
    on the previous output); a folder given with ``--out`` is refused when it exists and is not
    empty, unless ``--overwrite``.

    Returns
    -------
    int
        0 when every instance was verified (the violations found are the table's findings),
        1 when some instance could not be verified (the table is incomplete).
    """
    from fairsim.atomic import atomic_dir, check_output_dir, json_text, write_text
    from fairsim.schedulers.exact import EXACT
    from fairsim.schedulers.exact.property_table import (
        describe_instances,
        format_table,
        property_table,
    )

    mechs = args.mechanism or [*EXACT, "psdsf-tdm"]
    instances = None
    if args.instance is not None:
        import json

        from fairsim.schedulers.instance import load_instance

        load_instance(
            args.instance
        )  # validated as `fairsim solve` reads it (errors name the field)
        instances = [json.loads(Path(args.instance).read_text(encoding="utf-8"))]
    out = args.out if args.out is not None else "results/properties"
    overwrite = args.out is None or bool(args.overwrite)
    check_output_dir(out, overwrite=overwrite)  # before any work
    with atomic_dir(out, overwrite=overwrite) as tmp:
        table = property_table(
            mechs,
            args.instances,
            args.seed,
            tmp,
            constrained=not args.unconstrained,
            positive=args.positive,
            instances=instances,
        )
        write_text(tmp / "table.md", format_table(table))
        write_text(tmp / "table.json", json_text(table) + "\n")
    sys.stdout.write(json_text(table, indent=None) + "\n" if args.json else format_table(table))
    # what was checked and where the evidence is (on stderr with --json: stdout stays JSON)
    found = [
        f"{m}--{p}.json"
        for m, row in table.items()
        for p in row
        if p != "unverifiable" and row[p]["violations"]
    ]
    where = (
        f"Counterexamples: {len(found)} files in {out}, one per violated mechanism and property "
        "(<mechanism>--<property>.json: the instance, replayable with fairsim solve, and under "
        '"violation" who is affected and by how much)'
        if found
        else f"Counterexamples: none found, none written (table in {out})"
    )
    unverifiable = sum(len(row["unverifiable"]) for row in table.values())
    lines = [
        describe_instances(
            args.instances,
            args.seed,
            constrained=not args.unconstrained,
            positive=args.positive,
            instance=args.instance,
        ),
        where + (f"; table in {out}/table.md and table.json." if found else "."),
    ]
    if unverifiable:
        lines.append(
            f"Unverifiable: {unverifiable} (mechanism, instance) pair"
            f"{'s' if unverifiable > 1 else ''}, each instance written to {out} as "
            "<mechanism>--unverifiable-<instance>.json."
        )
    wrap = textwrap.TextWrapper(100, break_long_words=False, break_on_hyphens=False)
    text = "\n".join(wrap.fill(line) for line in lines) + "\n"
    (sys.stderr if args.json else sys.stdout).write(("" if args.json else "\n") + text)
    return 1 if any(row["unverifiable"] for row in table.values()) else 0


def cmd_compare(args: argparse.Namespace) -> int:
    from fairsim.scenario.compare import compare, default_out

    out = Path(args.out) if args.out is not None else default_out(args.dirs)
    c = compare(args.dirs, out=out, overwrite=args.overwrite)
    sys.stdout.write(c.headline())
    print(f"report in {out / 'report.md'}")
    return 0


def cmd_sweep_report(args: argparse.Namespace) -> int:
    from fairsim.scenario.reporting.sweep_report import sweep_report_tables

    paths, headline = sweep_report_tables(Path(args.out))
    print(headline)
    print()
    for p in paths:
        print(p)
    return 0


def _plain(rst: str) -> str:
    """A docstring's reStructuredText as the plain text of ``--help``: back-quoted literals and
    roles (``:func:``) keep their text and lose their markup."""
    return re.sub(r"(?::[a-z]+:)?`+([^`]+)`+", r"\1", rst)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fairsim`` command."""
    from fairsim.experiments.claims import DEFAULT_SEEDS
    from fairsim.experiments.reproductions import REPRODUCTIONS
    from fairsim.schedulers.exact import EXACT, JOB_EXACT
    from fairsim.schedulers.registry import available

    schedulers = ", ".join(available())
    mechanisms = ", ".join([*EXACT, *JOB_EXACT])
    formats = (
        "google-2011",
        "alibaba-2017",
        "alibaba-2018",
        "alibaba-2018-spar",
        "alibaba-gpu-2023",
    )
    raw = argparse.RawDescriptionHelpFormatter
    p = _Parser(prog="fairsim", description=_plain(__doc__.split("\n\n")[0]))
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    p.add_argument("--version", action="version", version=f"fairsim {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser(
        "run",
        help="simulate one YAML scenario",
        description=textwrap.fill(
            "Simulate one YAML scenario: every scheduler it names replays the same workload "
            "on the same server pool; the result files (docs/architecture.md) go into --out, "
            "written under a temporary name and renamed when complete. Relative paths in the "
            "config (trace.path, trace.cache_dir, cluster.path) are relative to the config "
            "file's folder.",
            79,
        ),
        epilog=f"scheduler names: {schedulers} (S: slots per largest server, e.g. slots-14); "
        "with parameters: {name: psdsf, period_s: 2}\n"
        "trace formats: google-2011, canonical, synthetic, inline, alibaba-2017, "
        "alibaba-2018, alibaba-2018-spar, alibaba-gpu-2023\n"
        "example: fairsim run configs/google-1h.yaml --out results/google-1h "
        "--set cluster.servers=200",
        formatter_class=raw,
    )
    r.add_argument("config", help="the scenario, a YAML file (configs/, docs/getting-started.md)")
    r.add_argument(
        "--out",
        metavar="DIR",
        help="output folder (default results/<name>, relative to the working directory); "
        "refused if it exists and is not empty, unless --overwrite",
    )
    r.add_argument(
        "--overwrite", action="store_true", help="replace an existing --out folder whole"
    )
    r.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config value before validation, e.g. --set cluster.servers=500 or "
        "--set 'schedulers=[ff-drfh, bf-drfh]' (value parsed as YAML; repeatable; a relative "
        "path given here is relative to the working directory)",
    )
    r.add_argument("--no-progress", action="store_true", help="no progress bars")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser(
        "solve",
        help="static allocation of an instance (JSON in, JSON out)",
        description=textwrap.fill(
            "Allocate the users of an instance (servers, users' demand vectors, optional "
            "weights, task caps and eligible servers) with one mechanism and print the "
            "allocation as JSON: tasks[i][l] tasks of user i on server l.",
            79,
        ),
        epilog=f"exact mechanisms (fractional tasks): {mechanisms}\n"
        f"online heuristics (integer tasks, static progressive filling): {schedulers}\n"
        f"names that are both ({', '.join(n for n in available() if n in EXACT)}) mean the "
        "exact mechanism unless --online is given",
        formatter_class=raw,
    )
    s.add_argument("mechanism", nargs="?", help="an exact mechanism or an online heuristic (below)")
    s.add_argument(
        "instance",
        nargs="?",
        help='the instance, a JSON file {"resources", "servers", "users"} (docs/mechanisms.md)',
    )
    s.add_argument(
        "--sharing",
        choices=("rdm", "tdm"),
        default=None,
        help="PS-DSF multiplexing (exact psdsf only; default rdm; an error with any other "
        "mechanism)",
    )
    s.add_argument("--compare", metavar="A,B", help="solve with two mechanisms; print both + gap")
    s.add_argument(
        "--online",
        action="store_true",
        help="run the online scheduler of that name as static progressive filling of integer "
        "tasks (for names that are also exact mechanisms: drf, c-drfh, tsf, af, pf, bmf, lmm-mms)",
    )
    s.add_argument(
        "--format",
        choices=("json", "table"),
        default="json",
        help="json (default): the machine contract, every digit; table: a table for people, "
        "counts rounded to 3 decimals and dominant shares to 4",
    )
    s.set_defaults(func=cmd_solve)

    t = sub.add_parser("trace", help="fetch, convert and synthesise traces")
    tsub = t.add_subparsers(dest="trace_command", required=True, metavar="ACTION")
    c = tsub.add_parser(
        "convert",
        help="one trace to the canonical Parquet tables",
        description="Convert one trace folder to the canonical tables (tasks.parquet, "
        "servers.parquet when the trace has machines, conversion.json with the skip report).",
    )
    c.add_argument("format", choices=formats, help="the trace's format: %(choices)s")
    c.add_argument("src", help="the folder of the trace's files (docs/traces*.md)")
    c.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder; refused if it exists and is not empty, unless --overwrite",
    )
    c.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    c.add_argument("--parts", help="task_events parts, e.g. 0-13 (default: every part present)")
    c.add_argument(
        "--bad-row-threshold",
        type=_share,
        default=0.5,
        metavar="F",
        help="largest share of a table's rows that may be malformed or unparseable (default "
        "0.5); more is an error naming the first bad row",
    )
    c.add_argument("--no-progress", action="store_true", help="no progress bars")
    c.set_defaults(func=cmd_trace_convert)
    k = tsub.add_parser(
        "check",
        help="a raw trace's own consistency",
        description="Check a raw trace folder: events out of time order, runs on machines "
        "machine_events never mentions, tasks scheduled twice without an end, requests larger "
        "than every machine, machines over-committed over time (docs/traces.md, 'Checking a "
        "raw trace'). Checks a format cannot support are reported as such.",
    )
    k.add_argument("format", choices=formats, help="the trace's format: %(choices)s")
    k.add_argument("src", help="the folder of the trace's files (docs/traces*.md)")
    k.add_argument("--parts", help="task_events parts, e.g. 0-13 (default: every part present)")
    k.add_argument(
        "--sample-s",
        type=_positive_seconds,
        default=3600.0,
        metavar="S",
        help="seconds between over-commitment samples (default 3600)",
    )
    k.add_argument("--json", metavar="FILE", help="also write the numbers as JSON (atomically)")
    k.set_defaults(func=cmd_trace_check)
    f = tsub.add_parser(
        "fetch",
        help="download official trace files, checksum-verified",
        description="Download Google clusterdata-2011-2 files (from $FAIRSIM_GOOGLE_2011_URL "
        "when set), each kept only if its SHA-256 matches Google's list; files already there "
        "and verified are not downloaded again.",
    )
    f.add_argument("dataset", help="google-2011")
    f.add_argument("--parts", default="0-13", help="part numbers (default 0-13)")
    f.add_argument(
        "--dest",
        help="download folder (default: the download cache the reproductions read, "
        "$FAIRSIM_DATA_DIR/google-2011, else ~/.cache/fairsim/google-2011 on Linux)",
    )
    f.add_argument(
        "--tables",
        default="task_events,machine_events",
        help="tables to fetch (default task_events,machine_events: the reproductions' sample)",
    )
    f.add_argument(
        "--sha256sum",
        help="Google's SHA256SUM file (default: the sample's entries, which fairsim ships)",
    )
    f.add_argument("--no-progress", action="store_true", help="no progress bars")
    f.set_defaults(func=cmd_trace_fetch)
    y = tsub.add_parser(
        "synth",
        help="a seeded Google-like workload",
        description="Write a seeded synthetic workload as a canonical tasks.parquet (run it "
        "with trace.format: canonical), or with --raw google-2011 a raw-format Google trace "
        "(task_events parts, machine_events, synth.json) whose jobs are resampled from --src "
        "(convert it with `fairsim trace convert google-2011`).",
    )
    y.add_argument(
        "--tasks",
        type=int_at_least(1),
        default=100_000,
        metavar="N",
        help="number of tasks (default 100000)",
    )
    y.add_argument(
        "--seed",
        type=int_at_least(0),
        default=1,
        metavar="S",
        help="random seed, an integer >= 0 (default 1)",
    )
    y.add_argument(
        "--duration-s",
        type=_positive_seconds,
        default=None,
        metavar="T",
        help="arrival window in seconds (default: it scales with --tasks at the Google sample's "
        "8.675 tasks/s; a fixed window with more tasks is a denser load)",
    )
    y.add_argument(
        "--days",
        type=_positive_days,
        default=None,
        metavar="D",
        help="arrival window in days (instead of --duration-s; the whole Google trace: 29)",
    )
    y.add_argument(
        "--raw",
        choices=("google-2011",),
        default=None,
        help="write raw task_events parts (Google clusterdata-2011-2 format) resampled from the "
        "jobs of --src instead of a canonical table (fairsim.traces.synth_raw)",
    )
    y.add_argument(
        "--src",
        default=None,
        metavar="PATH",
        help="with --raw: the Google 2011 folder whose jobs are resampled (task_events/, and "
        "machine_events/ which is copied)",
    )
    y.add_argument(
        "--parts",
        type=int_at_least(1),
        default=None,
        metavar="N",
        help="with --raw: number of task_events part files, each an equal slice of the window "
        "(default 500, as Google's)",
    )
    y.add_argument("--no-progress", action="store_true", help="with --raw: no progress bars")
    y.add_argument(
        "--complex",
        action="store_true",
        help="complex jobs: DAG parents and Alibaba-like instance counts (fairsim.traces.synth)",
    )
    y.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="output folder (receives tasks.parquet); refused if it exists and is not empty, "
        "unless --overwrite",
    )
    y.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    y.set_defaults(func=cmd_trace_synth)

    pr = sub.add_parser(
        "properties",
        help="check fairness properties of the exact mechanisms on random instances",
        description="Check the fairness properties of the exact mechanisms on the papers' "
        "instances and random ones; print violations / instances checked and the instances "
        "that could not be verified (with the reason), and save the table, one "
        "counterexample per violated property and each unverifiable instance into --out.",
        epilog=f"mechanisms: {', '.join(sorted([*EXACT, 'psdsf-tdm']))}. Exit status: 0 when "
        "every instance was verified (violations are the table's findings), 1 when some "
        "instance could not be verified, 2 for a usage error.",
    )
    pr.add_argument(
        "--mechanism",
        action="append",
        choices=sorted([*EXACT, "psdsf-tdm"]),
        metavar="M",
        help="a mechanism to check (repeatable; default: all): %(choices)s",
    )
    pr.add_argument(
        "--instances",
        type=int_at_least(1),
        default=150,
        metavar="N",
        help="instances to check, >= 1 (the papers' instances first; default 150)",
    )
    pr.add_argument(
        "--seed", type=int_at_least(0), default=1, metavar="S", help="random seed (>= 0)"
    )
    pr.add_argument(
        "--instance",
        metavar="FILE.json",
        help="check this one instance (the fairsim solve input format, as the checker saves "
        "counterexamples and unverifiable instances) instead of the papers' and random ones; "
        "--instances, --unconstrained and --positive are then not used",
    )
    pr.add_argument("--json", action="store_true", help="print the table as JSON")
    pr.add_argument(
        "--out",
        metavar="DIR",
        help="folder of the table, the counterexamples and the unverifiable instances (default "
        "results/properties, replaced by each run); a DIR given here is refused if it exists "
        "and is not empty, unless --overwrite",
    )
    pr.add_argument("--overwrite", action="store_true", help="replace an existing --out folder")
    pr.add_argument("--unconstrained", action="store_true", help="no placement constraints")
    pr.add_argument("--positive", action="store_true", help="every demand entry positive")
    pr.set_defaults(func=cmd_properties)

    e = sub.add_parser(
        "experiment",
        help="reproduce a paper's evaluation",
        description="Reproduce a paper's evaluation into --out, which is replaced when it "
        "exists (atomically: an interrupted run keeps the previous results).",
    )
    e.add_argument(
        "which",
        choices=tuple(REPRODUCTIONS),
        help="the reproduction: %(choices)s",
    )
    e.add_argument(
        "--shared",
        default="../shared",
        help="the shared data folder (traces); without its traces/google-2011, drfh-google and "
        "udrf fetch the Google sample into the download cache ($FAIRSIM_DATA_DIR)",
    )
    e.add_argument("--out", help="output folder (default results/<which>), replaced")
    e.add_argument("--quick", action="store_true", help="a small slice, for a smoke test")
    e.add_argument(
        "--seeds",
        type=int_at_least(1),
        default=DEFAULT_SEEDS,
        help="run seeds 1..N; every numeric claim gets a 95 %% interval over them "
        "(default %(default)s; 1 is a quick look without intervals)",
    )
    e.add_argument(
        "--jobs",
        type=int_at_least(1),
        default=None,
        help="worker processes for the seeds (default: one per core, at most one per seed)",
    )
    e.add_argument("--no-progress", action="store_true", help="no progress bars")
    e.set_defaults(func=cmd_experiment)

    w = sub.add_parser(
        "sweep",
        help="a scenario over a grid of values x seeds (resumable)",
        description="Run a base config over a grid of config values x seeds; re-running the "
        "same command resumes (finished runs are kept).",
        epilog=f"scheduler names: {schedulers}",
    )
    w.add_argument("sweep", help="the sweep, a YAML file {name, base, grid, seeds}")
    w.add_argument("--out", help="output folder (default results/sweeps/<name>)")
    w.add_argument(
        "--executor",
        help="serial (in this process), local:N (default: local:<cores>), dask-local:N or "
        "dask://host:port",
    )
    w.add_argument("--no-progress", action="store_true", help="no progress bars")
    w.set_defaults(func=cmd_sweep)
    cp = sub.add_parser(
        "compare",
        help="runs side by side on the jobs completed under all of them",
        description=textwrap.fill(
            "Compare fairsim run folders (every scheduler in each) or scheduler folders inside "
            "one: utilisation, completion, JCT mean and percentiles, queueing delay, slowdown "
            "and per-user JCT spread on the common job set (the jobs completed under every "
            "row), with the paired 95 % interval of the mean JCT difference to the first row "
            "when the runs share their seed. Writes report.md and figures into --out.",
            79,
        ),
    )
    cp.add_argument("dirs", nargs="+", metavar="DIR", help="a run folder or a scheduler folder")
    cp.add_argument("--out", help="output folder (default: results/compare/<names>)")
    cp.add_argument("--overwrite", action="store_true", help="replace a non-empty --out")
    cp.set_defaults(func=cmd_compare)
    wr = sub.add_parser("sweep-report", help="means and 95 %% CIs across seeds of a sweep")
    wr.add_argument("out", help="a sweep's output folder")
    wr.set_defaults(func=cmd_sweep_report)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fairsim`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return int(args.func(args))
    except _user_errors() as exc:
        print(f"fairsim: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # stdout closed early (``fairsim ... | head``): the work is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        if args.command == "sweep":
            print("fairsim: interrupted; finished results were kept", file=sys.stderr)
        else:
            print("fairsim: interrupted; no partial output was left", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
