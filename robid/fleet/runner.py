"""Run a fleet: every (robot, date) campaign, serially or as Dask tasks (docs/fleet.md).

A unit of work is one campaign, run by the serial campaign runner (:func:`robid.campaign.runner.run_campaign`)
under ``<out>/<serial>/<date>/``: its per-step fingerprints make a second run recompute nothing, and the same
seeds give the same files whether a campaign runs here or on a worker. With a Dask client each campaign is one
task whose key is the campaign's fingerprint; without one the same function runs here, one campaign after the
other (the same code path minus Dask). A campaign that fails is reported with its step and reason
(:attr:`FleetResult.error`) and does not stop the others.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robid import progress
from robid.errors import RobidInputError
from robid.fleet.results import FleetResult
from robid.fleet.spec import FleetJob, FleetSpec
from robid.io.files import ensure_folder

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FleetRun:
    """What :func:`run_fleet` produced: one result per (robot, date) in the fleet file's order, and the fleet
    artefacts written (None when the module that writes them is not available, ``notes`` says so)."""

    spec: FleetSpec
    out: Path
    results: tuple[FleetResult, ...]
    seconds: float
    drift: Any = None
    report_path: Path | None = None
    table_path: Path | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def failed(self) -> tuple[FleetResult, ...]:
        return tuple(r for r in self.results if not r.ok)


def job_root(out: Path, job: FleetJob) -> Path:
    """Where a campaign's artefacts go: ``<out>/<serial>/<date>/``."""
    return out / job.serial / job.date


def job_key(job: FleetJob, force: bool = False) -> str:
    """The Dask key of a campaign: serial, date and the fingerprint of the campaign (its settings, robot file and
    measurement files, robid's code); the same campaign twice is one task."""
    from robid.campaign.runner import _file_hash, code_fingerprint

    spec = job.campaign
    parts: list[Any] = [job.serial, job.date, job.error, force]
    if spec is not None:
        robot = Path(spec.robot)
        files = [m.file for m in spec.measurements if m.file is not None]
        files += [t.file for t in spec.trajectories if t.file is not None]
        parts += [spec.raw, spec.robot, _file_hash(robot) if robot.is_file() else None,
                  [(str(f), _file_hash(f)) for f in files if f.exists()], code_fingerprint()]
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"robid-campaign-{job.serial}-{job.date}-{digest}"


def run_job(job: FleetJob, root: str | Path, force: bool = False) -> FleetResult:
    """Run one campaign under ``root`` (on a worker, or here); never raises: a failure is the result's error."""
    base = dict(robot_type=job.robot_type, serial=job.serial, date=job.date, campaign=job.campaign_name,
                installation=job.installation)
    if job.campaign is None:
        return FleetResult(record=None, error=job.error or "campaign not read", recomputed=False, **base)
    from robid.campaign.runner import run_campaign

    log = logging.getLogger(__name__).info
    try:
        run = run_campaign(job.campaign, root, force=force, log=lambda m: log(f"{job.serial} {job.date}: {m}"))
    except RobidInputError as exc:
        return FleetResult(record=None, error=str(exc), **base)
    except Exception as exc:  # a fleet outlives one robot's failure; the reason and where it arose are kept
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return FleetResult(record=None, error=f"{type(exc).__name__}: {exc} ({Path(where.filename).name}:"
                           f"{where.lineno})", **base)
    return FleetResult(record=run.record, result_path=str(run.result_path), recomputed=bool(run.recomputed), **base)


def run_fleet(spec: FleetSpec, out: str | Path, client=None, *, force: bool = False,
              log: Callable[[str], None] | None = None, analyse: bool = True) -> FleetRun:
    """Run every campaign of ``spec`` under ``out`` (``<out>/<serial>/<date>/``): as Dask tasks on ``client``
    (a ``distributed.Client``), or here one after the other without one. ``force``: recompute every step.
    ``analyse``: then the drift analysis, the fleet report and the results table (when their modules exist).
    Lines go to ``log`` (default: the logger ``robid.fleet.runner``)."""
    log = log or _log.info
    out = ensure_folder(Path(out).resolve(), "fleet's output folder")  # absolute: what workers elsewhere see
    jobs = spec.jobs
    t0 = time.perf_counter()
    where = "serially" if client is None else f"on Dask ({_describe(client)})"
    log(f"fleet {spec.name}: {len(jobs)} campaigns of {len(spec.serials)} robots, {where}")
    results: list[FleetResult | None] = [None] * len(jobs)
    started, losses = time.time(), ()
    with progress.bar(len(jobs), f"fleet {spec.name}", "campaigns") as bar:
        if client is None:
            for k, job in enumerate(jobs):
                results[k] = run_job(job, job_root(out, job), force)
                _done(log, results[k], k, results, bar)
        else:
            import uuid

            from distributed import as_completed

            token = uuid.uuid4().hex[:8]  # a key held from an earlier run must not stand for this run's result
            futures = {}
            for k, job in enumerate(jobs):
                future = client.submit(run_job, job, str(job_root(out, job)), force,
                                       key=f"{job_key(job, force)}-{token}", pure=False, retries=0)
                futures[future] = k
            for future in as_completed(list(futures)):
                k = futures[future]
                results[k] = _collect(future, jobs[k])
                _done(log, results[k], k, results, bar)
            losses = worker_losses(client, {f.key: jobs[k] for f, k in futures.items()}, started)
    run = FleetRun(spec, out, tuple(results), time.perf_counter() - t0, notes=losses)  # type: ignore[arg-type]
    for note in losses:
        log(note)
    ok = sum(r.ok for r in run.results)
    log(f"fleet {spec.name}: {ok} of {len(jobs)} campaigns identified, {len(run.failed)} failed, "
        f"{sum(r.recomputed for r in run.results)} recomputed, in {run.seconds:.1f} s")
    return analyse_fleet(run, log) if analyse else run


def _collect(future, job: FleetJob) -> FleetResult:
    """A task's result; a task that died (a worker lost, a result that could not travel) is that job's error."""
    try:
        return future.result()
    except Exception as exc:
        return FleetResult(job.robot_type, job.serial, job.date, job.campaign_name, None,
                           installation=job.installation, error=f"Dask task failed: {type(exc).__name__}: {exc}")


def worker_losses(client, jobs: dict, since: float) -> tuple[str, ...]:
    """Lines naming the Dask workers that died after ``since`` (epoch seconds) and the campaigns they were running,
    which the scheduler then ran again elsewhere (``jobs``: task key -> FleetJob); from the scheduler's
    ``remove-worker`` events (topic "all"). Nothing when there were none or the scheduler does not say."""
    try:
        events = client.get_events("all")
    except Exception:  # an old or remote scheduler without events: nothing to report
        return ()
    lines = []
    for when, msg in events:
        if when < since or not isinstance(msg, dict) or msg.get("action") != "remove-worker" or msg.get("expected"):
            continue
        keys = [str(k) for k in msg.get("processing-tasks", ()) or ()] + [
            str(k) for k in msg.get("lost-computed-tasks", ()) or ()]
        retried = sorted({f"{jobs[k].serial} {jobs[k].date}" for k in keys if k in jobs})
        what = f"; campaigns run again on another worker: {', '.join(retried)}" if retried else ""
        lines.append(f"Dask worker {msg.get('worker', '?')} was lost during the fleet run{what}")
    return tuple(lines)


def _done(log, result: FleetResult, k: int, results, bar) -> None:
    n = sum(r is not None for r in results)
    state = "failed: " + (result.error or "") if not result.ok else (
        "identified" if result.recomputed else "up to date")
    log(f"[{n}/{len(results)}] {result.serial} {result.date}: {state}")
    bar.update()


def _describe(client) -> str:
    try:
        workers = len(client.scheduler_info().get("workers", {}))
        return f"{client.scheduler.address}, {workers} workers"
    except Exception:  # only a label
        return "client"


def analyse_fleet(run: FleetRun, log: Callable[[str], None] | None = None) -> FleetRun:
    """Drift flags (robid.fleet.drift), the fleet report (robid.fleet.report, ``<out>/fleet-report.html``) and
    the results table (robid.fleet.table, ``<out>/fleet-results.csv``), each when its module exists."""
    import dataclasses

    log = log or _log.info
    notes: list[str] = []
    drift = report = table = None
    results = list(run.results)
    drift_mod, missing = _optional("robid.fleet.drift")
    notes += missing
    if drift_mod is not None:
        drift = drift_mod.analyse_drift(results)
    table_mod, missing = _optional("robid.fleet.table")
    notes += missing
    if table_mod is not None:
        table = run.out / "fleet-results.csv"
        table_mod.write_results_table(table, results)
    report_mod, missing = _optional("robid.fleet.report")
    notes += missing
    if report_mod is not None and drift is not None:
        report = run.out / "fleet-report.html"
        report_mod.write_fleet_report(report, results, drift, title=f"robid fleet {run.spec.name}")
    for note in notes:
        log(note)
    return dataclasses.replace(run, drift=drift, report_path=report, table_path=table, notes=run.notes + tuple(notes))


def _optional(module: str):
    """(the module, no note), or (None, a note saying it is skipped) when it is not installed."""
    import importlib

    try:
        return importlib.import_module(module), ()
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise
        return None, (f"{module} is not available: skipped ({module.rsplit('.', 1)[-1]})",)
