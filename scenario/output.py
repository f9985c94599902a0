"""``fairsim run``'s output: every scheduler of a scenario into one folder, atomically.

:func:`run_to_folder` prepares the scenario (:func:`fairsim.scenario.pipeline.prepare_scenario`),
runs its schedulers and writes the contract's result files: ``OUT/config.yaml`` (the resolved
config, its relative paths relative to ``OUT``: :meth:`RunConfig.to_yaml`),
``OUT/servers.parquet`` (the simulated pool), per scheduler ``OUT/<scheduler>/``
(:func:`fairsim.simulator.results.write_run`), ``OUT/summary.json`` and, with ``report``, the
figures and ``report.md`` (:mod:`fairsim.scenario.reporting.run_report`). The whole of ``OUT``
is written under a temporary sibling name and renamed into place when complete
(:func:`fairsim.atomic.atomic_dir`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
from tqdm import tqdm

from fairsim.atomic import atomic_dir, write_text
from fairsim.scenario.config import (
    RunConfig,
)
from fairsim.scenario.limits import check_limits
from fairsim.scenario.pipeline import Hooks, Scenario, SchedulerRun, prepare_scenario
from fairsim.scenario.sharing import check_sharing_incentive, shared_vs_dedicated
from fairsim.simulator.results import write_json, write_run, write_table

log = logging.getLogger(__name__)


def run_to_folder(
    cfg: RunConfig,
    out: Path,
    *,
    base: Path | None = None,
    progress: bool = True,
    report: bool = True,
    overwrite: bool = False,
    protect: tuple[Path, ...] = (),
    hooks: Hooks | None = None,
    what: str = "--out",
) -> dict[str, dict[str, Any]]:
    """Run every scheduler of ``cfg`` and write the result files into ``out``.

    The whole folder is written under a temporary sibling name and renamed to ``out`` only when
    every file is complete (:func:`fairsim.atomic.atomic_dir`): a failed or interrupted run
    leaves nothing behind, and an earlier ``out`` is kept (refused when not empty, unless
    ``overwrite``; then replaced whole).

    Parameters
    ----------
    cfg : RunConfig
        Validated scenario.
    out : Path
        Output folder (``DIR`` of the contract).
    base : Path, optional
        Folder of the config file: relative paths of the config are relative to it (to the
        working directory when None).
    progress : bool
        Show progress bars.
    report : bool
        Also draw ``utilization.png`` and write a short ``report.md`` for the run.
    overwrite : bool
        Replace an existing non-empty ``out``.
    protect : tuple of Path
        Inputs (the config file, its trace, cache and machine folders) that an ``overwrite``
        must not delete.
    hooks : Hooks, optional
        Passed to :func:`prepare_scenario`.
    what : str
        How messages about the output folder name it.

    Returns
    -------
    dict
        Scheduler name → its ``summary.json`` content.

    Raises
    ------
    ConfigError
        If the trace or the pool cannot be resolved, the window holds no task, the
        utilisation interval does not fit the window, or a size does not fit in this machine's
        memory (:func:`fairsim.scenario.limits.check_limits`, before ``out`` is made).
    OutputError
        If ``out`` is refused (an existing file, below a file, not writable, not empty).
    """
    check_limits(cfg)  # sizes this machine cannot hold: refused before the folder is made
    with atomic_dir(out, overwrite=overwrite, protect=protect, what=what) as tmp:
        return _run_into(
            cfg, tmp, base=base, progress=progress, report=report, hooks=hooks, folder=out
        )


def _run_into(
    cfg: RunConfig,
    out: Path,
    *,
    base: Path | None,
    progress: bool,
    report: bool,
    hooks: Hooks | None = None,
    folder: Path | None = None,
) -> dict[str, dict[str, Any]]:
    """:func:`run_to_folder` into an empty folder ``out`` (the temporary one), which becomes
    ``folder`` (the paths of its ``config.yaml`` are relative to that one)."""
    scenario = prepare_scenario(cfg, base=base, progress=progress, hooks=hooks)
    check_sharing_incentive(scenario)  # before any run
    write_text(out / "config.yaml", cfg.to_yaml(base=base, folder=folder or out))
    write_table(pa.Table.from_pandas(scenario.pool, preserve_index=False), out / "servers.parquet")
    summaries: dict[str, dict[str, Any]] = {}
    for run, extra, more in finished_runs(scenario, progress=progress, tasks_dir=out):
        assert run.result is not None
        name = run.name
        with phase(f"{name}: writing the result files", progress):
            summaries[name] = write_run(
                run.result, out / name, extra_summary=extra, extra_tables=more
            )
        del run  # the engine's result is written: free it before the next run
        log.info(
            "%s: %d tasks in %.1f s (%.0f tasks/s)",
            name,
            summaries[name]["tasks"],
            summaries[name]["wall_s"],
            summaries[name]["tasks_per_s"] or 0,
        )
    write_json({k: _headline(v) for k, v in summaries.items()}, out / "summary.json")
    if report:
        from fairsim.scenario.reporting.run_report import write_run_report

        with phase("report: figures and report.md", progress):
            write_run_report(out, cfg, summaries)
    return summaries


def finished_runs(
    scenario: Scenario, *, progress: bool, tasks_dir: Path | None = None
) -> Iterator[tuple[SchedulerRun, dict[str, Any], dict[str, pa.Table]]]:
    """Run every scheduler of ``scenario`` (:meth:`~fairsim.scenario.pipeline.Scenario.runs`)
    and yield each finished run with what its summary and tables add to the engine's.

    The one per-run loop of ``fairsim run`` (:func:`run_to_folder`, which writes each run) and
    ``fairsim.simulate`` without an output folder (which keeps each in memory).

    Parameters
    ----------
    scenario : Scenario
        Prepared (:func:`fairsim.scenario.pipeline.prepare_scenario`) and checked
        (:func:`fairsim.scenario.sharing.check_sharing_incentive`).
    progress : bool
        Show progress bars.
    tasks_dir : Path, optional
        The output folder the runs stream their tasks into (None: in memory).

    Yields
    ------
    run : SchedulerRun
        With ``result`` set; not referenced here once the caller asks for the next one (the
        engine's result can be freed before the next run).
    extra_summary : dict
        The scenario's provenance (:meth:`~fairsim.scenario.pipeline.Scenario.summary_extra`),
        with ``collect.sharing_incentive`` the sharing-incentive summary
        (:func:`fairsim.scenario.sharing.shared_vs_dedicated`) and with ``collect.fairness``
        the fairness summary.
    extra_tables : dict of str to pyarrow.Table
        ``sharing_incentive`` and the fairness tables, when collected; with a queue tree
        ``queues`` and (with ``collect.fairness``) ``fairness_queues``
        (:meth:`~fairsim.scenario.pipeline.Scenario.queue_tables`).
    """
    for run in scenario.runs(progress=progress, tasks_dir=tasks_dir):
        extra, more = scenario.summary_extra(), {}
        if scenario.config.collect.sharing_incentive:
            more["sharing_incentive"], extra["sharing_incentive"] = shared_vs_dedicated(
                scenario, run, progress=progress
            )
        if run.fairness is not None:
            more.update(run.fairness.tables())
            extra["fairness"] = run.fairness.summary()
        more.update(scenario.queue_tables(run))
        yield run, extra, more
        del run  # the caller is done with it: free it before the next run


@contextmanager
def phase(what: str, progress: bool) -> Iterator[None]:
    """A status line naming a phase of ``fairsim run`` that follows the simulations (writing a
    run's result files, the figures and ``report.md``), shown while it runs and cleared after
    (tqdm, on stderr); nothing without ``progress``.

    Parameters
    ----------
    what : str
        The phase, e.g. ``"bf-drfh: writing the result files"``.
    progress : bool
        Show it.
    """
    bar = tqdm(
        total=None, desc=what, bar_format="{desc} [{elapsed}]", disable=not progress, leave=False
    )
    try:
        yield
    finally:
        bar.close()


#: What the run's top-level ``summary.json`` gives of each scheduler's summary.
HEADLINE_KEYS = (
    "tasks",
    "tasks_completed",
    "completion_ratio",
    "mean_utilization",
    "mean_jct_s",
    "config_hash",
    "fairsim_version",
    "git_commit",
)


def _headline(s: dict[str, Any]) -> dict[str, Any]:
    keys = HEADLINE_KEYS
    return {k: s.get(k) for k in keys}
