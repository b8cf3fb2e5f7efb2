"""identify(): measurement files -> the identification record (estimate with uncertainty, classes, consistency
check, torque fit on every identification and validation run).

Steps (docs/identification.md): every identification file is read, screened and processed by the signal stage;
the filtered base regressor and torque of all files are stacked; the chosen estimator runs (``ols``, ``wls``
two-step per-joint weights, ``irls`` robust, or ``consistent``: WLS followed by the semidefinite programme that
finds the physically consistent standard set nearest to it in the metric of its covariance); every base
parameter is classified; the unconstrained estimate is checked for physical consistency; the validation files
are processed the same way. :func:`run_identification` returns all of it with the working arrays
(:class:`Identification`); :func:`identify` returns only the record that travels
(:class:`robid.record.IdentificationRecord`).

The options and the loading of a run are in options.py, the estimator's estimate and the reported values in
estimates.py, the friction models' comparison and adoption in friction_adoption.py, the motor-encoder-only
Gauss-Newton in motor_side.py (``IdentificationOptions`` and ``RunSource`` still import from here); this module
runs the steps in order.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid import progress
from robid.defaults import METHODS as METHODS
from robid.errors import RobidInputError, RobidOptionError
from robid.estimation import (
    BaseConsistencyReport,
    ConsistentResult,
    EstimationResult,
    IdentifiabilityReport,
    classify,
)
from robid.identification.compact_regressor import CompactRegressor
from robid.identification.datasets import DataSet, compressed_problem, stack
from robid.identification.estimates import STREAMED_METHODS as STREAMED_METHODS
from robid.identification.estimates import (
    compressed_estimate,
    consistency_check,
    estimator_comparison,
    method_estimate,
    reported_values,
    streamed_runs,
)
from robid.identification.friction_adoption import ADOPTING_METHODS as ADOPTING_METHODS
from robid.identification.friction_adoption import adopts, compared_friction_models, friction_record, with_friction
from robid.identification.motor_side import GAUSS_NEWTON_STEPS as GAUSS_NEWTON_STEPS
from robid.identification.motor_side import GAUSS_NEWTON_TOLERANCE as GAUSS_NEWTON_TOLERANCE
from robid.identification.motor_side import motor_side_estimate
from robid.identification.options import IdentificationOptions, load_run
from robid.identification.options import RunSource as RunSource
from robid.identification.plausibility import torque_sign_warnings
from robid.io.plausibility import check_distinct_runs
from robid.record import IdentificationRecord
from robid.robot import Robot

_log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class Solution:
    """What an identification computed: the data sets (filtered regressor and torque of every run), the
    estimator's result, the classes, the consistency results and the reported values."""

    robot: Robot
    options: IdentificationOptions
    datasets: tuple[DataSet, ...]
    validation_sets: tuple[DataSet, ...]
    estimate: EstimationResult
    identifiability: IdentifiabilityReport
    values: np.ndarray  # the reported base values (the consistent ones for method "consistent" when solved)
    values_method: str
    consistent: ConsistentResult | None
    physical: BaseConsistencyReport | None
    notes: tuple[str, ...]
    friction_models: object  # robid.record.FrictionModels of the friction model selection, or None
    estimator_comparison: object  # robid.record.EstimatorComparison of IdentificationOptions.compare_methods, or None
    #: the adopted nonlinear friction (the chosen models' joint fit, robid.estimation.nonlinear_friction), or None
    friction: object
    #: what identification chose where the caller left it open (robid.identification.choices), one line each
    choices: tuple[str, ...]
    #: the held friction per joint (robid.identification.held_friction, robid.record.held_friction), or None
    held_friction: object

    @property
    def base(self):
        return self.robot.base_parameters()

    @property
    def model(self):
        """The identified model every consumer evaluates (robid.identification.identified_model)."""
        from robid.identification.identified_model import AdoptedFriction, IdentifiedModel

        friction = None if self.friction is None else AdoptedFriction.of_result(self.friction)
        return IdentifiedModel(tuple(self.base.names), np.asarray(self.values, dtype=float),
                               np.asarray(self.estimate.covariance, dtype=float), friction, self.options.coulomb,
                               self.held_friction)


@dataclass(frozen=True, eq=False)
class Identification(Solution):
    """An identification with its working data (:class:`Solution`) and ``record``, what RESULT.json holds."""

    record: IdentificationRecord


def run_identification(
    robot: Robot,
    files: list[str | Path],
    options: IdentificationOptions | None = None,
    validation_files: list[str | Path] = (),
) -> Identification:
    """Identify ``robot`` from ``files`` (stacked), validate on ``validation_files`` (module docstring). What the
    caller left open -- the layout of a robot with springs, the estimator, the friction models -- is chosen from
    the robot file and the data (robid.identification.choices) and said in the record's ``choices``."""
    from robid.identification.choices import chosen_layout, resolved_method, term_lines
    from robid.identification.recording import identification_record

    o = options or IdentificationOptions()
    if o.method not in METHODS:
        raise RobidOptionError("method", f"expected one of {', '.join(METHODS)}, got {o.method!r}")
    for method in o.compare_methods:
        if method not in METHODS or method == "auto":
            raise RobidOptionError("compare_methods", f"{method!r} is not one of {', '.join(METHODS[1:])}")
    if not files:
        raise RobidInputError("identify: at least one measurement file is needed")
    check_distinct_runs(files, lambda f: (o.processing_for(f), o.mapping_for(f)))  # the same run twice: refused
    robot, layout = chosen_layout(robot, files, o)
    method, why = resolved_method(robot, o)
    choices = (*(line for line in (layout, why) if line), *term_lines(robot))
    o = dataclasses.replace(o, method=method)
    base = robot.base_parameters()
    validated = f", validated on {len(validation_files)}" if validation_files else ""
    label = (f"identification: {len(base.names)} base parameters from {len(files)} file(s){validated}"
             + (f", {o.method}" if o.method != "auto" else ""))
    with progress.stage(label, _log):
        with progress.bar(len(files) + len(validation_files), "identify: files", "files") as files_bar:
            work = _solve(robot, files, o, validation_files, files_bar, choices)
        flipped = torque_sign_warnings(robot, work.datasets, base.names, work.values, work.estimate.std)
        work = dataclasses.replace(work, notes=work.notes + tuple(flipped)) if flipped else work
        work = _with_held_friction(work)
        with progress.stage("identification: the record (fit, bands, spectra of every run)", _log, logging.DEBUG):
            record = identification_record(work)
    fields = {f.name: getattr(work, f.name) for f in dataclasses.fields(Solution)}
    return Identification(**fields, record=record)


def _with_held_friction(work: Solution) -> Solution:
    """``work`` with its held friction fitted and said (robid.identification.held_friction) when asked."""
    if not work.options.held_friction:
        return work
    from robid.identification.held_friction import fit_held_friction

    held = fit_held_friction(work)
    if held is None:
        return work
    line = f"held friction (chosen by {held.criterion}): {held.line()}"
    return dataclasses.replace(work, held_friction=held, choices=work.choices + (line,))


def _solve(robot: Robot, files, o: IdentificationOptions, validation_files, files_bar: progress.Bar,
           choices: tuple[str, ...]) -> Solution:
    """The estimate and everything measured about it (:func:`run_identification`), with every step's notes in
    order; ``files_bar`` counts the files read; the record's choices are ``choices`` followed by this step's (the
    elastic layout's method, the friction models compared)."""
    base = robot.base_parameters()
    sets, W, est, o, compact, first_notes, method_choice = _first_estimate(robot, files, o, files_bar)
    notes = list(first_notes)
    if len(sets) > 1:
        samples = sum(d.W.shape[0] for d in sets)
        notes.append(f"{len(sets)} runs stacked into one least-squares problem ({samples} samples)")
    vsets = tuple(_counted(load_run(robot, f, o, None, linearise=False, compact=streamed_runs(robot, o)), files_bar)
                  for f in validation_files) if not o.motor_encoders_only else ()
    friction, friction_choice = compared_friction_models(robot, sets, vsets, o, compact, est)
    adopted, adoption_notes = adopts(friction, o) if friction is not None else (False, ())
    notes += adoption_notes
    if adopted:
        est = with_friction(est, friction.final, base.names)
    if robot.motor_joints and not o.motor_encoders_only and not compact:  # the springs run by run
        from robid.identification.spring_spread import spring_spreads, widened

        est, spring_notes = widened(est, spring_spreads(robot, (*sets, *vsets), est.values, list(base.names)))
        notes += spring_notes
    nominal_base = base.values(robot.parameters)
    ident = classify(  # the compressed problem has the weighted column norms of the stacked one
        est,
        W,
        thresholds=o.thresholds,
        structural_classes=base.classes,
        grouping=base.grouping,
        standard_names=robot.parameter_names,
        reference_values=np.where(np.abs(nominal_base) > 0, nominal_base, est.values),
    )
    physical, check_notes = consistency_check(robot, est) if o.check_consistency else (None, ())
    consistent, values, values_method, reported_notes = reported_values(robot, est, o)
    notes += [*check_notes, *reported_notes]
    if o.motor_encoders_only:  # the runs as the model predicts them (k and d act through the link states)
        sets = tuple(load_run(robot, f, o, values, linearise=False) for f in files)
        vsets = tuple(_counted(load_run(robot, f, o, values, linearise=False), files_bar) for f in validation_files)
    return Solution(
        robot=robot,
        options=o,
        datasets=sets,
        validation_sets=vsets,
        estimate=est,
        identifiability=ident,
        values=np.asarray(values, dtype=float),
        values_method=values_method,
        consistent=consistent,
        physical=physical,
        notes=tuple(notes),
        friction_models=None if friction is None else friction_record(robot, sets, friction, adopted, o),
        estimator_comparison=estimator_comparison(robot, sets, vsets, o, (o.method, values)),
        friction=friction.final if adopted else None,
        choices=(*choices, *method_choice, *friction_choice),
        held_friction=None,
    )



def _first_estimate(robot: Robot, files, o: IdentificationOptions, files_bar: progress.Bar):
    """(data sets, regressor, unconstrained estimate, options with the method resolved, whether a regressor is kept
    compactly, notes, choices) of the identification runs: motor-side Gauss-Newton, the compressed problem of
    streamed runs, or the chosen method on the stacked runs (the elastic layout's method chosen on them: the line
    that says so is the choices')."""
    if o.motor_encoders_only:
        sets, W, est, notes = motor_side_estimate(robot, files, o)
        files_bar.update(len(files))
        return sets, W, est, o, False, notes, ()
    streamed = streamed_runs(robot, o)
    sets = tuple(_counted(load_run(robot, f, o, compact=streamed), files_bar) for f in files)
    compact = any(isinstance(d.W, CompactRegressor) for d in sets)
    if streamed:  # the regressor is never stacked: its compressed problem stands in for it
        problem, model = compressed_problem(list(sets))
        _log.debug(f"identification: {o.method} estimate on {problem.samples} samples (compressed)")
        est = compressed_estimate(sets, problem, model, robot.base_parameters().names, o.method)
        return sets, problem.W, est, o, compact, (), ()
    chosen: tuple[str, ...] = ()
    if o.method == "auto":  # the elastic layout: decided on the processed runs
        from robid.identification.choices import resolved_method

        method, why = resolved_method(robot, o, sets)
        chosen = (why,)
        o = dataclasses.replace(o, method=method)
    W, tau = stack(list(sets))
    _log.debug(f"identification: {o.method} estimate on {W.shape[0]} samples")
    est, notes = method_estimate(robot, sets, W, tau, o.method, o)
    return sets, W, est, o, compact, notes, chosen

def _counted(dataset: DataSet, files_bar: progress.Bar) -> DataSet:
    _log.debug(f"identification: {dataset.source}: {dataset.W.shape[0]} samples, {dataset.rows_used} rows used")
    files_bar.update()
    return dataset


def identify(
    robot: Robot,
    files: list[str | Path],
    options: IdentificationOptions | None = None,
    validation_files: list[str | Path] = (),
) -> IdentificationRecord:
    """The identification record of ``robot`` from ``files``, validated on ``validation_files``."""
    return run_identification(robot, files, options, validation_files).record


