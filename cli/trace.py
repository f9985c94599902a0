"""``fairsim trace``: fetch, check, convert and synthesise traces."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fairsim.atomic import json_text
from fairsim.cli.argtypes import Subparsers, positive, share
from fairsim.cli.options import add_command, add_count, add_no_progress, add_out, add_seed
from fairsim.errors import FairsimError

#: The raw trace formats ``trace convert`` and ``trace check`` read.
FORMATS = (
    "google-2011",
    "alibaba-2017",
    "alibaba-2018",
    "alibaba-2018-spar",
    "alibaba-gpu-2023",
)


def cmd_trace_convert(args: argparse.Namespace) -> int:
    """Convert one trace folder to the canonical tables (tasks.parquet, servers.parquet when the
    trace has machines, conversion.json with the skip report)."""
    from fairsim.atomic import atomic_dir, check_output_dir, check_outside_inputs

    if args.parts and args.format != "google-2011":
        raise FairsimError(f"trace convert: --parts applies to google-2011, not {args.format}")
    check_output_dir(args.out, overwrite=args.overwrite, protect=[args.src])  # before any work
    check_outside_inputs(args.out, [args.src])  # not even a new folder: SRC is read whole
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
    """Check a raw trace folder: events out of time order, runs on machines machine_events never
    mentions, tasks scheduled twice without an end, requests larger than every machine, machines
    over-committed over time (docs/traces.md, 'Checking a raw trace'). Checks a format cannot
    support are reported as such."""
    from fairsim.traces.check import check_alibaba, check_google_2011, check_text

    if args.parts and args.format != "google-2011":
        raise FairsimError(f"trace check: --parts applies to google-2011, not {args.format}")
    if args.json is not None:  # before the check: never the trace's own files
        from fairsim.atomic import check_output_file

        check_output_file(args.json, what="--json", protect=[args.src])
    src = Path(args.src)
    if args.format == "google-2011":
        from fairsim.traces.fetch import parse_parts

        parts = parse_parts(args.parts) if args.parts else None
        result = check_google_2011(src, parts=parts, sample_s=args.sample_s, what="--sample-s")
    else:
        result = check_alibaba(args.format, src)
    if args.json is not None:
        from fairsim.traces.io import write_json_atomic

        write_json_atomic(result, Path(args.json))
    sys.stdout.write(check_text(result))
    return 0


def cmd_trace_fetch(args: argparse.Namespace) -> int:
    """Download Google clusterdata-2011-2 files (from $FAIRSIM_GOOGLE_2011_URL when set), each
    kept only if its SHA-256 matches Google's list; files already there and verified are not
    downloaded again."""
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
    """Write a seeded synthetic workload as a canonical tasks.parquet (run it with trace.format:
    canonical), or with --raw google-2011 a raw-format Google trace (task_events parts,
    machine_events, synth.json) whose jobs are resampled from --src (convert it with `fairsim
    trace convert google-2011`)."""
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
    from fairsim.atomic import atomic_dir, check_output_dir, check_outside_inputs
    from fairsim.errors import TraceError
    from fairsim.traces.synth_raw import resample_google_2011

    src = Path(args.src)
    if not (src / "task_events").is_dir():
        raise TraceError(f"trace synth --src {src}: no task_events folder there")
    check_output_dir(args.out, overwrite=args.overwrite, protect=[src])  # before any work
    check_outside_inputs(args.out, [src])  # not even a new folder: SRC's parts are read
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


def add_parser(sub: Subparsers) -> None:
    """Add ``fairsim trace`` and its actions (``convert``, ``check``, ``fetch``, ``synth``) to
    the subcommands."""
    t = sub.add_parser("trace", help="fetch, convert and synthesise traces")
    tsub = t.add_subparsers(dest="trace_command", required=True, metavar="ACTION")
    _add_convert(tsub)
    _add_check(tsub)
    _add_fetch(tsub)
    _add_synth(tsub)


def _add_convert(tsub: Subparsers) -> None:
    c = add_command(tsub, "convert", cmd_trace_convert, "one trace to the canonical Parquet tables")
    _add_trace_folder(c)
    add_out(
        c,
        "output folder; refused if it exists and is not empty, unless --overwrite",
        required=True,
    )
    _add_parts(c)
    c.add_argument(
        "--bad-row-threshold",
        type=share,
        default=0.5,
        metavar="F",
        help="largest share of a table's rows that may be malformed or unparseable (default "
        "0.5); more is an error naming the first bad row",
    )
    add_no_progress(c)


def _add_check(tsub: Subparsers) -> None:
    k = add_command(tsub, "check", cmd_trace_check, "a raw trace's own consistency")
    _add_trace_folder(k)
    _add_parts(k)
    k.add_argument(
        "--sample-s",
        type=positive("seconds"),
        default=3600.0,
        metavar="S",
        help="seconds between over-commitment samples (default 3600; at least 1e-6, and at "
        "most 100,000 samples over the trace)",
    )
    k.add_argument(
        "--json",
        metavar="FILE",
        help="also write the numbers as JSON (atomically); refused, before the check, when it "
        "is a folder, lies below a file, or is or lies inside SRC",
    )


def _add_fetch(tsub: Subparsers) -> None:
    f = add_command(
        tsub, "fetch", cmd_trace_fetch, "download official trace files, checksum-verified"
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
    add_no_progress(f)


def _add_synth(tsub: Subparsers) -> None:
    y = add_command(tsub, "synth", cmd_trace_synth, "a seeded Google-like workload")
    add_count(y, "--tasks", "number of tasks (default 100000)", 100_000)
    add_seed(y, "random seed, an integer >= 0 (default 1)")
    y.add_argument(
        "--duration-s",
        type=positive("seconds"),
        default=None,
        metavar="T",
        help="arrival window in seconds (default: it scales with --tasks at the Google sample's "
        "8.675 tasks/s; a fixed window with more tasks is a denser load)",
    )
    y.add_argument(
        "--days",
        type=positive("days"),
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
    add_count(
        y,
        "--parts",
        "with --raw: number of task_events part files, each an equal slice of the window "
        "(default 500, as Google's)",
    )
    add_no_progress(y, "with --raw: no progress bars")
    y.add_argument(
        "--complex",
        action="store_true",
        help="complex jobs: DAG parents and Alibaba-like instance counts (fairsim.traces.synth)",
    )
    add_out(
        y,
        "output folder (receives tasks.parquet); refused if it exists and is not empty, "
        "unless --overwrite",
        required=True,
    )


def _add_trace_folder(parser: argparse.ArgumentParser) -> None:
    """Add the positionals ``FORMAT SRC`` of ``trace convert`` and ``trace check``."""
    parser.add_argument("format", choices=FORMATS, help="the trace's format: %(choices)s")
    parser.add_argument("src", help="the folder of the trace's files (docs/traces*.md)")


def _add_parts(parser: argparse.ArgumentParser) -> None:
    """Add ``--parts`` (Google 2011 task_events parts to read) to ``parser``."""
    parser.add_argument(
        "--parts", help="task_events parts, e.g. 0-13 (default: every part present)"
    )
