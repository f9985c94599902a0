"""The ``fairsim`` command line.

::

    fairsim run CONFIG.yaml [--out DIR] [--set key=value ...]
    fairsim solve MECHANISM INSTANCE.json [--sharing rdm|tdm] [--online]
    fairsim solve --compare A,B INSTANCE.json [--sharing rdm|tdm] [--online]
    fairsim properties [--mechanism M ...] [--instances N] [--seed S] [--json]
    fairsim trace convert FORMAT SRC --out DIR
    fairsim trace fetch google-2011 --parts 0-13 --dest DIR [--sha256sum FILE]
    fairsim trace synth --tasks N --seed S --out DIR
    fairsim experiment drfh-google [--shared ../shared] [--out results/drfh-google]
    fairsim experiment bonald-roberts [--quick] [--out results/bonald-roberts]
    fairsim experiment lmm-mms [--quick] [--shared ../shared] [--out results/lmm-mms]
    fairsim experiment psdsf [--quick] [--out results/psdsf]
    fairsim experiment udrf [--quick] [--shared ../shared] [--out results/udrf]
    fairsim sweep SWEEP.yaml [--out OUT] [--executor local:N|dask-local:N|dask://host:port]
    fairsim sweep-report OUT

Every user error (bad config, bad instance, bad trace) is printed as one line
``fairsim: error: ...`` and exits with status 2; no traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from simulator.errors import FairsimError

if TYPE_CHECKING:
    from schedulers.instance import Instance

EXIT_USAGE = 2


def _user_errors() -> tuple[type[BaseException], ...]:
    from traces.errors import TraceError

    return (FairsimError, TraceError)


def cmd_run(args: argparse.Namespace) -> int:
    from experiments.run import run_config
    from simulator.config import load_config

    cfg = load_config(args.config, overrides=args.set)
    out = Path(args.out) if args.out else Path("results") / cfg.name
    summaries = run_config(
        cfg, out, base=Path(args.config).resolve().parent, progress=not args.no_progress
    )
    for name, s in summaries.items():
        utils = ", ".join(f"{r} {100 * v:.1f} %" for r, v in s["mean_utilization"].items())
        print(
            f"{name:>16}: {s['tasks_completed']}/{s['tasks']} tasks completed, {utils}, "
            f"{s['tasks_per_s']:.0f} tasks/s"
        )
    print(f"results in {out}")
    return 0


def _solve_one(name: str, inst: Instance, sharing: str, online: bool = False) -> dict:
    """Exact mechanisms go to ``schedulers.exact``, online heuristics to progressive filling.

    A name that is both an exact mechanism and an online scheduler (``drf``, ``c-drfh``, ``tsf``,
    ``af``, ``pf``, ``bmf``, ``lmm-mms``) means the exact allocation, unless ``online`` is set
    (``--online``): then the online scheduler runs as static progressive filling.
    """
    import difflib

    from schedulers.exact import EXACT, solve_exact_json
    from schedulers.registry import KNOWN, validate_name
    from schedulers.static import solve_heuristic

    if name in EXACT and not online:
        return solve_exact_json(name, inst, sharing)
    try:
        validate_name(name)
    except FairsimError:
        names = [*EXACT, *(k for k in KNOWN if "<" not in k), "slots-14"]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise FairsimError(
            f"unknown scheduler {name!r}{hint} (known: exact {', '.join(EXACT)}; "
            f"heuristic {', '.join(KNOWN)})"
        ) from None
    return solve_heuristic(name, inst)


def cmd_solve(args: argparse.Namespace) -> int:
    from schedulers.instance import load_instance

    if args.compare:
        names = args.compare.split(",")
        path = args.instance or args.mechanism
        if len(names) != 2 or not all(names) or path is None or (args.instance and args.mechanism):
            raise FairsimError("solve --compare: expected --compare A,B and one INSTANCE.json")
        if "udrf" in names:
            raise FairsimError("solve --compare: udrf takes a jobs instance and cannot be compared")
        inst = load_instance(path)
        outs = [_solve_one(n, inst, args.sharing, args.online) for n in names]
        tot = [[float(sum(row)) for row in o["tasks"]] for o in outs]
        gap = {
            "users": list(inst.user_ids),
            "total": {names[0]: tot[0], names[1]: tot[1]},
            "gap": [b - a for a, b in zip(tot[0], tot[1], strict=True)],
        }
        print(json.dumps({"compare": outs, "gap": gap}))
        return 0
    if args.mechanism is None or args.instance is None:
        raise FairsimError(
            "solve: expected MECHANISM INSTANCE.json (or --compare A,B INSTANCE.json)"
        )
    from schedulers.exact import JOB_EXACT

    # input extended with jobs (docs/mechanisms.md, UDRF)
    if args.mechanism in JOB_EXACT:
        from schedulers.exact.udrf import load_job_instance

        jobs_inst = load_job_instance(args.instance)
        if args.online:  # online UDRF (schedulers/udrf.py) filling the empty classes
            from schedulers.static import udrf_online_json

            print(json.dumps(udrf_online_json(jobs_inst)))
        else:
            print(json.dumps(JOB_EXACT[args.mechanism][1](jobs_inst)))
        return 0
    inst = load_instance(args.instance)
    print(json.dumps(_solve_one(args.mechanism, inst, args.sharing, args.online)))
    return 0


def cmd_trace_convert(args: argparse.Namespace) -> int:
    from traces.errors import TraceError

    if args.format.startswith("alibaba"):
        from traces.alibaba import convert_alibaba

        report = convert_alibaba(args.format, Path(args.src), Path(args.out))
        print(json.dumps({k: report[k] for k in ("rows_read", "rows_used", "skipped")}, indent=2))
        return 0
    if args.format != "google-2011":
        raise TraceError(f"trace convert: unknown format {args.format!r}")
    from traces.fetch import parse_parts
    from traces.google2011 import convert_google_2011

    parts = parse_parts(args.parts) if args.parts else None
    report = convert_google_2011(
        Path(args.src), Path(args.out), parts=parts, progress=not args.no_progress
    )
    print(json.dumps({k: report[k] for k in ("rows_read", "rows_used", "skipped")}, indent=2))
    return 0


def cmd_trace_fetch(args: argparse.Namespace) -> int:
    from traces.errors import TraceError
    from traces.fetch import fetch_google_2011, parse_parts

    if args.dataset != "google-2011":
        raise TraceError(f"trace fetch: unknown dataset {args.dataset!r} (available: google-2011)")
    if args.sha256sum is None:
        raise TraceError(
            "trace fetch: --sha256sum is required (Google's SHA256SUM file, e.g. "
            "../shared/traces/google-2011/SHA256SUM)"
        )
    paths = fetch_google_2011(
        parse_parts(args.parts),
        Path(args.dest),
        tables=tuple(args.tables.split(",")),
        sha256sum=Path(args.sha256sum),
    )
    for p in paths:
        print(p)
    return 0


def cmd_trace_synth(args: argparse.Namespace) -> int:
    from traces.io import write_tasks
    from traces.synth import synth_complex_jobs, synth_google_like

    if args.complex:
        frame = synth_complex_jobs(args.tasks, seed=args.seed)
    else:
        frame = synth_google_like(args.tasks, seed=args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_tasks(frame, out / "tasks.parquet")
    print(f"{len(frame)} tasks written to {out / 'tasks.parquet'}")
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    if args.which == "psdsf":
        from experiments.psdsf_repro import run_experiment as run_psdsf

        out = Path(args.out or "results/psdsf")
        print(f"report: {run_psdsf(out=out, quick=args.quick, progress=not args.no_progress)}")
        return 0
    if args.which == "udrf":
        from experiments.udrf_repro import run_experiment as run_udrf

        path = run_udrf(
            Path(args.out or "results/udrf"),
            shared=Path(args.shared),
            quick=args.quick,
            progress=not args.no_progress,
        )
        print(f"report: {path}")
        return 0
    if args.which == "lmm-mms":
        from experiments.lmm_mms_repro import run_from_shared

        path = run_from_shared(
            Path(args.shared), Path(args.out or "results/lmm-mms"), quick=args.quick
        )
        print(f"report: {path}")
        return 0
    if args.which == "bonald-roberts":
        from experiments.bonald_roberts import run_experiment as run_bonald_roberts

        out = Path(args.out or "results/bonald-roberts")
        path = run_bonald_roberts(out=out, quick=args.quick, progress=not args.no_progress)
        print(f"report: {path}")
        return 0
    from experiments.drfh_google import run_experiment

    path = run_experiment(
        shared=Path(args.shared),
        out=Path(args.out or "results/drfh-google"),
        quick=args.quick,
        progress=not args.no_progress,
    )
    print(f"report: {path}")
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from experiments.sweep import load_sweep, run_sweep

    sweep = load_sweep(args.sweep)
    out = Path(args.out) if args.out else Path("results") / "sweeps" / sweep.name
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


def cmd_sweep_report(args: argparse.Namespace) -> int:
    from experiments.sweep_report import sweep_report

    paths = sweep_report(Path(args.out))
    for p in paths:
        print(p)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fairsim`` command."""
    p = argparse.ArgumentParser(prog="fairsim", description=__doc__.split("\n\n")[0])
    p.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="simulate one YAML scenario")
    r.add_argument("config")
    r.add_argument("--out", help="output folder (default results/<name>)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    r.add_argument("--no-progress", action="store_true")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser("solve", help="static allocation of an instance (JSON in, JSON out)")
    s.add_argument("mechanism", nargs="?")
    s.add_argument("instance", nargs="?")
    s.add_argument("--sharing", choices=("rdm", "tdm"), default="rdm", help="PS-DSF multiplexing")
    s.add_argument("--compare", metavar="A,B", help="solve with two mechanisms; print both + gap")
    s.add_argument(
        "--online",
        action="store_true",
        help="run the online scheduler of that name as static progressive filling of integer "
        "tasks (for names that are also exact mechanisms: drf, c-drfh, tsf, af, pf, bmf, lmm-mms)",
    )
    s.set_defaults(func=cmd_solve)

    t = sub.add_parser("trace", help="fetch, convert and synthesise traces")
    tsub = t.add_subparsers(dest="trace_command", required=True)
    c = tsub.add_parser("convert", help="one trace to the canonical Parquet tables")
    c.add_argument(
        "format",
        choices=(
            "google-2011",
            "alibaba-2017",
            "alibaba-2018",
            "alibaba-2018-spar",
            "alibaba-gpu-2023",
        ),
    )
    c.add_argument("src")
    c.add_argument("--out", required=True)
    c.add_argument("--parts", help="task_events parts, e.g. 0-13 (default: every part present)")
    c.add_argument("--no-progress", action="store_true")
    c.set_defaults(func=cmd_trace_convert)
    f = tsub.add_parser("fetch", help="download official trace files, checksum-verified")
    f.add_argument("dataset")
    f.add_argument("--parts", default="0-13")
    f.add_argument("--dest", default="data/google-2011")
    f.add_argument("--tables", default="task_events,job_events")
    f.add_argument("--sha256sum", help="Google's SHA256SUM file")
    f.set_defaults(func=cmd_trace_fetch)
    y = tsub.add_parser("synth", help="a seeded Google-like workload")
    y.add_argument("--tasks", type=int, default=100_000)
    y.add_argument("--seed", type=int, default=1)
    y.add_argument(
        "--complex",
        action="store_true",
        help="complex jobs: DAG parents and Alibaba-like instance counts (traces.synth)",
    )
    y.add_argument("--out", required=True)
    y.set_defaults(func=cmd_trace_synth)

    pr = sub.add_parser(
        "properties", help="check fairness properties of the exact mechanisms on random instances"
    )
    from experiments.properties import add_arguments, run_from_args

    add_arguments(pr)
    pr.set_defaults(func=run_from_args)

    e = sub.add_parser("experiment", help="reproduce a paper's evaluation")
    e.add_argument("which", choices=("drfh-google", "bonald-roberts", "lmm-mms", "psdsf", "udrf"))
    e.add_argument("--shared", default="../shared")
    e.add_argument("--out", help="output folder (default results/<which>)")
    e.add_argument("--quick", action="store_true", help="a small slice, for a smoke test")
    e.add_argument("--no-progress", action="store_true")
    e.set_defaults(func=cmd_experiment)

    w = sub.add_parser("sweep", help="a scenario over a grid of values x seeds (resumable)")
    w.add_argument("sweep")
    w.add_argument("--out", help="output folder (default results/sweeps/<name>)")
    w.add_argument(
        "--executor",
        help="local:N (default: local:<cores>), dask-local:N or dask://host:port",
    )
    w.add_argument("--no-progress", action="store_true")
    w.set_defaults(func=cmd_sweep)
    wr = sub.add_parser("sweep-report", help="means and 95 %% CIs across seeds of a sweep")
    wr.add_argument("out")
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
    except KeyboardInterrupt:
        print("fairsim: interrupted; finished results were kept", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
