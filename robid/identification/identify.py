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
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid import progress
from robid.defaults import CONSISTENT, DEFAULT_METHOD, DEFAULT_MIN_SPEED, EIV, FRICTION_MODELS_AUTO, OLS, PERIODIC, WLS
from robid.defaults import METHODS as METHODS
from robid.errors import RobidInputError
from robid.estimation import (
    BaseConsistencyReport,
    ClassificationThresholds,
    ConsistentResult,
    EstimationResult,
    IdentifiabilityReport,
    check_base_consistency,
    classify,
    consistent_from_base,
    estimate,
)
from robid.estimation.correlated import RowCorrelation
from robid.identification.closed_loop_estimation import CLOSED_LOOP_METHODS, ClosedLoopOptions, closed_loop_estimate
from robid.identification.compact_regressor import CompactRegressor
from robid.identification.datasets import DataSet, compressed_problem, load_dataset, row_correlation, stack
from robid.identification.plausibility import torque_sign_warnings
from robid.io.plausibility import check_distinct_runs
from robid.io.screening import ScreeningPolicy
from robid.record import IdentificationRecord
from robid.robot import Robot
from robid.signals import ProcessingOptions

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSource:
    """A measurement file under a name of its own, so that one file can be given twice with different options
    (e.g. two time windows of one record: identification on one, the held-back rest for validation). ``str()``
    is that name: the key of ``file_processing``/``file_mapping`` and the run's ``file`` in the record."""

    path: Path
    key: str

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True)
class IdentificationOptions:
    #: the estimator (robid.defaults.METHODS); "auto": eiv in the elastic layout, wls elsewhere
    #: (robid.identification.defaults.resolved_method)
    method: str = DEFAULT_METHOD
    #: the signal stage's options; by default the commands' data selection (rows slower than
    #: robid.defaults.DEFAULT_MIN_SPEED left out), so that the Python API takes the path the command line takes
    processing: ProcessingOptions = field(default_factory=lambda: ProcessingOptions(min_speed=DEFAULT_MIN_SPEED))
    mapping: str | Path | None = None
    policy: ScreeningPolicy = field(default_factory=ScreeningPolicy)
    thresholds: ClassificationThresholds = field(default_factory=ClassificationThresholds)
    #: Coulomb columns: "noise" (expected sign given the velocity noise, robid.identification.coulomb) or "sign"
    coulomb: str = "noise"
    #: positions are motor-side (theta): correct them to the link by the static deflection K^-1 G
    #: (robid.elastic.static_deflection)
    static_deflection: bool = False
    #: positions are motor-side (motor encoders only) on an elastic model: the link states are reconstructed and
    #: the stiffness identified through them by Gauss-Newton (robid.elastic.motor_encoders_only)
    motor_encoders_only: bool = False
    #: consistent method: weight of the regulariser towards the nominal standard values (0 = none)
    regularization: float = 1e-6
    check_consistency: bool = True
    #: per-file processing options (e.g. the period of each run's trajectory) and mappings, keyed by str(path)
    file_processing: dict = field(default_factory=dict)
    file_mapping: dict = field(default_factory=dict)
    #: reference models (published or nominal parameter sets) scored on every run next to robid's fit
    #: (robid.identification.references)
    references: tuple = ()
    #: other methods estimated on the same runs and scored on the validation runs
    #: (robid.identification.estimator_comparison); empty: none
    compare_methods: tuple = ()
    #: candidate friction models compared per joint after the linear fit, e.g. ("linear", "stribeck", "sigmoid")
    #: (robid.identification.friction_selection); empty: none; "auto": linear, stribeck and sigmoid where the
    #: layout allows it and the problem is small enough (robid.identification.defaults.friction_candidates). With
    #: the wls estimator a nonlinear model chosen on some joint becomes the record's model (adopted).
    friction_models: tuple | str = FRICTION_MODELS_AUTO
    #: fit the held (standstill) friction per joint on the runs' holds (robid.identification.held_friction)
    held_friction: bool = True
    #: methods idim-iv and didim: the trajectory of every run and the controller's feed-forward
    #: (robid.identification.closed_loop_estimation.ClosedLoopOptions)
    closed_loop: object = None

    def processing_for(self, path) -> ProcessingOptions:
        return self.file_processing.get(str(path), self.processing)

    def mapping_for(self, path):
        return self.file_mapping.get(str(path), self.mapping)


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
        raise RobidInputError(f"--method: expected one of {', '.join(METHODS)}, got {o.method!r}")
    for method in o.compare_methods:
        if method not in METHODS or method == "auto":
            raise RobidInputError(f"--compare-methods: {method!r} is not one of {', '.join(METHODS[1:])}")
    if not files:
        raise RobidInputError("identify: at least one measurement file is needed")
    check_distinct_runs(files, lambda f: (o.processing_for(f), o.mapping_for(f)))  # the same run twice: refused
    choices: list[str] = []
    robot, layout = chosen_layout(robot, files, o)
    method, why = resolved_method(robot, o)
    choices += [line for line in (layout, why) if line] + term_lines(robot)
    o = dataclasses.replace(o, method=method)
    base = robot.base_parameters()
    notes: list[str] = []
    validated = f", validated on {len(validation_files)}" if validation_files else ""
    label = (f"identification: {len(base.names)} base parameters from {len(files)} file(s){validated}"
             + (f", {o.method}" if o.method != "auto" else ""))
    with progress.stage(label, _log):
        with progress.bar(len(files) + len(validation_files), "identify: files", "files") as files_bar:
            work = _solve(robot, files, o, validation_files, notes, files_bar, choices)
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


def _solve(robot: Robot, files, o: IdentificationOptions, validation_files, notes: list[str],
           files_bar: progress.Bar, choices: list[str]) -> Solution:
    """The estimate and everything measured about it (:func:`run_identification`); ``files_bar`` counts the
    files read; the friction-model choice is added to ``choices``."""
    base = robot.base_parameters()
    compact = False
    if o.motor_encoders_only:
        sets, W, est = _motor_side_estimate(robot, files, o, notes)
        files_bar.update(len(files))
    else:
        streamed = _streamed(robot, o)
        sets = tuple(_counted(_load(robot, f, o, compact=streamed), files_bar) for f in files)
        compact = any(isinstance(d.W, CompactRegressor) for d in sets)
        if streamed:  # the regressor is never stacked: its compressed problem stands in for it
            problem, model = compressed_problem(list(sets))
            W = problem.W
            _log.debug(f"identification: {o.method} estimate on {problem.samples} samples (compressed)")
            est = _compressed_estimate(sets, problem, model, base.names, o.method)
        else:
            if o.method == "auto":  # the elastic layout: decided on the processed runs
                from robid.identification.choices import resolved_method

                method, why = resolved_method(robot, o, sets)
                choices.append(why)
                o = dataclasses.replace(o, method=method)
            W, tau = stack(list(sets))
            _log.debug(f"identification: {o.method} estimate on {W.shape[0]} samples")
            est = _method_estimate(robot, sets, W, tau, o.method, o, notes)
    if len(sets) > 1:
        samples = sum(d.W.shape[0] for d in sets)
        notes.append(f"{len(sets)} runs stacked into one least-squares problem ({samples} samples)")
    vsets = tuple(_counted(_load(robot, f, o, None, linearise=False, compact=_streamed(robot, o)), files_bar)
                  for f in validation_files) if not o.motor_encoders_only else ()
    friction = _friction_selection(robot, sets, vsets, o, compact, choices, est)
    adopted = friction is not None and _adopts(friction, o, notes)
    if adopted:
        est = _with_friction(est, friction.final, base.names)
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
    physical = _consistency_check(robot, est, notes) if o.check_consistency else None
    consistent, values, values_method = _reported_values(robot, est, o, notes)
    if o.motor_encoders_only:  # the runs as the model predicts them (k and d act through the link states)
        sets = tuple(_load(robot, f, o, values, linearise=False) for f in files)
        vsets = tuple(_counted(_load(robot, f, o, values, linearise=False), files_bar) for f in validation_files)
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
        friction_models=None if friction is None else _friction_record(robot, sets, friction, adopted, o),
        estimator_comparison=_estimator_comparison(robot, sets, vsets, o, (o.method, values)),
        friction=friction.final if adopted else None,
        choices=tuple(choices),
        held_friction=None,
    )


#: methods whose estimate needs the stacked problem only through each joint's Gram matrices
STREAMED_METHODS = (OLS, WLS, CONSISTENT)


def _streamed(robot: Robot, o: IdentificationOptions) -> bool:
    """Whether the runs' regressors are kept compactly and never stacked (non-periodic runs; the rest is as
    before): a method of ``STREAMED_METHODS`` on the rigid layout, nothing that re-fits the stacked regressor
    (compared methods, friction models, motor encoders only)."""
    asked = o.friction_models not in ((), FRICTION_MODELS_AUTO)
    return (o.method in STREAMED_METHODS and not o.compare_methods and not asked
            and not o.motor_encoders_only and not robot.motor_joints)


def _compressed_estimate(sets, problem, model, names, method: str) -> EstimationResult:
    """OLS or WLS (also under ``consistent``) on the compressed problem of ``sets``; the residual of every sample
    from their regressors (compact or not)."""
    from robid.estimation.estimators import ols_compressed, wls_compressed

    def residual(beta):
        return np.concatenate([d.tau - d.W @ beta for d in sets])

    correlation = row_correlation(list(sets))
    if method == "ols":
        return ols_compressed(problem, residual, names, model, correlation)
    return wls_compressed(problem, residual, names, model, correlation)


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


def _closed_loop(robot: Robot, sets, start: EstimationResult, o: IdentificationOptions, notes: list[str]):
    """IDIM-IV or DIDIM from the WLS estimate ``start`` (robid.identification.closed_loop_estimation)."""
    if o.motor_encoders_only or o.static_deflection:
        raise RobidInputError(f"--method {o.method}: not with --motor-encoders-only or --static-deflection")
    settings = o.closed_loop if o.closed_loop is not None else ClosedLoopOptions()
    est, _account = closed_loop_estimate(robot, sets, o.method, start, settings, o.processing_for, o.coulomb)
    notes.append(f"{o.method} started from the WLS estimate")
    return est


def _method_estimate(robot: Robot, sets, W, tau, method: str, o: IdentificationOptions, notes: list[str]):
    """The unconstrained estimate of ``method`` (WLS first for consistent, eiv and the closed-loop methods)."""
    est = _estimate(W, tau, robot.base_parameters().names, method, row_correlation(list(sets)), notes)
    if method in CLOSED_LOOP_METHODS:
        return _closed_loop(robot, sets, est, dataclasses.replace(o, method=method), notes)
    if method == EIV:
        return _errors_in_variables(robot, sets, W, tau, est, o)
    return est


def _estimator_comparison(robot: Robot, sets, vsets, o: IdentificationOptions, reported):
    """The methods of ``o.compare_methods`` on the same runs, scored on the validation runs (None without)."""
    if not o.compare_methods:
        return None
    from robid.identification.estimator_comparison import compare_estimators

    W, tau = stack(list(sets))

    def values_of(method: str):
        if method == reported[0]:
            return reported[1]
        other = dataclasses.replace(o, method=method)
        est = _method_estimate(robot, sets, W, tau, method, other, [])
        return _reported_values(robot, est, other, [])[1]

    methods = tuple(dict.fromkeys((o.method, *o.compare_methods)))
    return compare_estimators(robot.joint_names, methods, values_of, sets, vsets)


def _friction_selection(robot: Robot, sets, vsets, o: IdentificationOptions, compact: bool, choices: list[str],
                        est: EstimationResult):
    """The friction model selection on the identification runs (validated on ``vsets``;
    robid.identification.friction_fit.select_friction), or None when none is run (the reason in ``choices``)."""
    from robid.identification.choices import friction_candidates

    rows = sum(int(d.rows_used) for d in sets)
    candidates, line = friction_candidates(robot, o, o.method, rows, compact)
    if line:
        choices.append(line)
    if not candidates:
        return None
    from robid.identification.friction_selection import select_for_record

    with progress.stage(f"identification: friction models {', '.join(candidates)} compared per joint", _log):
        return select_for_record(robot, sets, vsets, candidates, o.coulomb, start_weights=est.weights)


#: estimators whose values the joint fit of the chosen friction models replaces (it is a weighted fit with per-joint
#: weights re-estimated from the residual, as wls)
ADOPTING_METHODS = (WLS,)


def _adopts(selection, o: IdentificationOptions, notes: list[str]) -> bool:
    """Whether the chosen friction models become the record's model (robid.record.friction_models)."""
    special = [f"{j} {m}" for j, m in zip(selection.joint_names, selection.chosen, strict=True) if m != "linear"]
    if not special:
        return False
    if o.method not in ADOPTING_METHODS:
        notes.append(f"friction models chosen ({', '.join(special)}) but not adopted: --method {o.method} keeps its "
                     "linear-friction values (the joint fit of the chosen models is a wls fit); predict, the report "
                     "and export-model use the linear model")
        return False
    notes.append(f"friction models adopted ({', '.join(special)}): the base values, their std and every torque "
                 "figure are those of the chosen models fitted together with every base parameter (variable "
                 "projection, docs/estimation.md 'Nonlinear friction')")
    return True


def _with_friction(est: EstimationResult, final, names) -> EstimationResult:
    """The base parameters' part of the chosen friction models' joint fit ``final``: its values and covariance
    for every base parameter it kept; a base parameter it replaced (the Coulomb level of a sigmoid joint) is zero
    with zero variance. Residual, noise levels and weights are the joint fit's."""
    index = {n: i for i, n in enumerate(final.names)}
    keep = [index.get(n) for n in names]
    values = np.array([0.0 if k is None else final.values[k] for k in keep])
    cov = np.zeros((len(names), len(names)))
    rows = [i for i, k in enumerate(keep) if k is not None]
    cols = [keep[i] for i in rows]
    cov[np.ix_(rows, rows)] = np.asarray(final.covariance)[np.ix_(cols, cols)]
    fit = final.estimate
    return est.with_estimate(values, cov, method=est.method, residual=fit.residual, sigma=fit.sigma,
                             weights=fit.weights, white_sigma=fit.white_sigma,
                             notes=tuple(est.notes) + tuple(final.notes))


def _friction_record(robot: Robot, sets, selection, adopted: bool, o: IdentificationOptions):
    from robid.identification.friction_selection import friction_models_record

    return friction_models_record(robot, sets, selection, adopted, o.coulomb)


def _errors_in_variables(robot: Robot, sets, W, tau, start: EstimationResult, o: IdentificationOptions):
    """Corrected least squares with the processed signals' noise in the regressor (robid.estimation.
    errors_in_variables, robid.identification.regressor_noise), weighted like the WLS estimate ``start``; on
    averaged periodic runs its covariance counts the residual's correlation within the period."""
    from robid.estimation.errors_in_variables import corrected_least_squares
    from robid.identification.regressor_noise import regressor_noise_gram

    gram = sum(regressor_noise_gram(robot, d, o.processing_for(d.source).torque_band) for d in sets)
    periods = tuple(d.W.shape[0] for d in sets) if all(d.processed.mode == PERIODIC for d in sets) else None
    return corrected_least_squares(W, tau, gram, robot.base_parameters().names, weights=start.weights,
                                   periods=periods)


def _estimate(W, tau, names, method: str, correlation: RowCorrelation, notes: list[str]) -> EstimationResult:
    """The unconstrained estimate; OLS and WLS (also under ``consistent``) account for rows correlated by the
    non-periodic low-pass, IRLS does not (said in ``notes``)."""
    if method == "irls":
        if not correlation.independent:
            notes.append(
                "IRLS: its robust covariance treats the low-passed rows as independent; the standard deviations "
                "are optimistic on non-periodic runs (use wls or ols for honest ones)"
            )
        return estimate(W, tau, names, method="irls")
    least_squares = WLS if method in (CONSISTENT, EIV, *CLOSED_LOOP_METHODS) else method
    return estimate(W, tau, names, method=least_squares, correlation=correlation)


def _load(robot: Robot, source, o: IdentificationOptions, motor_side_values=None, linearise: bool = True,
          compact: bool = False) -> DataSet:
    """The data set of a file or RunSource (then recorded under its name); ``compact``: a non-periodic run's
    regressor kept compactly (robid.identification.compact_regressor)."""
    path = source.path if isinstance(source, RunSource) else source
    dataset = load_dataset(
        robot, path, mapping=o.mapping_for(source), options=o.processing_for(source), policy=o.policy,
        coulomb=o.coulomb, static_deflection=o.static_deflection, motor_side_values=motor_side_values,
        linearise=linearise, compact=compact,
    )
    return dataclasses.replace(dataset, source=str(source)) if isinstance(source, RunSource) else dataset


#: Gauss-Newton of the motor-encoder-only identification: at most this many steps, converged when no parameter
#: moves by more than GAUSS_NEWTON_TOLERANCE of its standard deviation
GAUSS_NEWTON_STEPS = 30
GAUSS_NEWTON_TOLERANCE = 1e-4


def _motor_side_estimate(robot: Robot, files, o: IdentificationOptions, notes: list[str]):
    """Gauss-Newton over the stiffness and damping of a motor-encoder-only identification
    (robid.elastic.motor_encoders_only), from the robot file's values: each step is the chosen linear estimator on
    the drive rows linearised at the previous estimate; the stiffness moves in compliance 1/k, where the link
    states are nearly linear. (data sets of the last step, their stacked regressor, estimate)."""
    from robid.elastic.motor_encoders_only import spring_parameters

    if o.static_deflection:
        raise RobidInputError("--motor-encoders-only and --static-deflection: choose one (the first identifies the "
                              "stiffness, the second takes the robot file's)")
    base = robot.base_parameters()
    stiffness = [k for k, _ in spring_parameters(robot).values()]
    values = base.values(robot.parameters)
    for step in range(1, GAUSS_NEWTON_STEPS + 1):
        sets = tuple(_load(robot, f, o, values) for f in files)
        W, tau = stack(list(sets))
        est = _estimate(W, tau, base.names, o.method, row_correlation(list(sets)), [])
        new = np.array(est.values, dtype=float)
        compliance = 1.0 / values[stiffness] - (new[stiffness] - values[stiffness]) / values[stiffness] ** 2
        if not np.all(compliance > 0):
            raise RobidInputError(
                "--motor-encoders-only: the stiffness is not determined by these motor-side data (a Gauss-Newton "
                f"step crossed zero compliance at step {step}); excite faster motion or measure the link positions"
            )
        new[stiffness] = 1.0 / compliance
        moved = np.abs(new - values) / np.maximum(np.asarray(est.std, dtype=float), 1e-300)
        values = new
        if np.nanmax(moved) < GAUSS_NEWTON_TOLERANCE:
            notes.append(f"motor encoders only: Gauss-Newton over stiffness and damping converged in {step} steps")
            return sets, W, est
    raise RobidInputError(
        f"--motor-encoders-only: Gauss-Newton did not converge in {GAUSS_NEWTON_STEPS} steps (largest move "
        f"{np.nanmax(moved):.3g} std): the stiffness is poorly determined by these data"
    )


def _consistency_check(robot: Robot, est: EstimationResult, notes: list[str]) -> BaseConsistencyReport | None:
    base = robot.base_parameters()
    try:
        return check_base_consistency(
            est.values, base.grouping, robot.parameter_names, base_names=base.names, covariance=est.covariance
        )
    except np.linalg.LinAlgError as exc:  # a covariance that is not positive definite (rank-deficient data)
        notes.append(f"physical-consistency check not done: {exc} (the estimate's covariance is singular)")
        return None


def _reported_values(robot: Robot, est: EstimationResult, o: IdentificationOptions, notes: list[str]):
    """(consistent result or None, reported values, their method): the consistent estimate when asked for and
    solved, else the unconstrained one, labelled as such."""
    if o.method != "consistent":
        return None, est.values, est.method
    base = robot.base_parameters()
    consistent = consistent_from_base(
        est.values,
        est.covariance,
        base.grouping,
        robot.parameter_names,
        base_names=base.names,
        nominal=robot.parameters,
        regularization=o.regularization,
    )
    if consistent.solved:
        return consistent, consistent.base_values, consistent.method
    notes.append(
        f"physically consistent estimate failed ({consistent.status}); the reported values are the "
        f"unconstrained {est.method} estimate, labelled as such"
    )
    return consistent, est.values, est.method
