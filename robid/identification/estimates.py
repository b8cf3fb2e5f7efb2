"""The estimate of the chosen method on an identification's runs (robid.identification.identify, docs/estimation.md):
the unconstrained least squares (stacked, or on the compressed problem of long non-periodic runs), the closed-loop
and errors-in-variables estimators started from it, the physical-consistency check, the reported values (the
consistent estimate when asked for) and the comparison of further methods on the validation runs."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from robid.defaults import CONSISTENT, EIV, FRICTION_MODELS_AUTO, IRLS, OLS, PERIODIC, WLS
from robid.errors import RobidOptionError
from robid.estimation import (
    BaseConsistencyReport,
    EstimationResult,
    check_base_consistency,
    consistent_from_base,
    estimate,
)
from robid.estimation.correlated import RowCorrelation
from robid.identification.closed_loop_estimation import CLOSED_LOOP_METHODS, ClosedLoopOptions, closed_loop_estimate
from robid.identification.datasets import row_correlation, stack
from robid.identification.options import IdentificationOptions
from robid.robot import Robot

#: methods whose estimate needs the stacked problem only through each joint's Gram matrices
STREAMED_METHODS = (OLS, WLS, CONSISTENT)


def streamed_runs(robot: Robot, o: IdentificationOptions) -> bool:
    """Whether the runs' regressors are kept compactly and never stacked (non-periodic runs; the rest is as
    before): a method of ``STREAMED_METHODS`` on the rigid layout, nothing that re-fits the stacked regressor
    (compared methods, friction models, motor encoders only)."""
    asked = o.friction_models not in ((), FRICTION_MODELS_AUTO)
    return (o.method in STREAMED_METHODS and not o.compare_methods and not asked
            and not o.motor_encoders_only and not robot.motor_joints)


def compressed_estimate(sets, problem, model, names, method: str) -> EstimationResult:
    """OLS or WLS (also under ``consistent``) on the compressed problem of ``sets``; the residual of every sample
    from their regressors (compact or not)."""
    from robid.estimation.estimators import ols_compressed, wls_compressed

    def residual(beta):
        return np.concatenate([d.tau - d.W @ beta for d in sets])

    correlation = row_correlation(list(sets))
    if method == OLS:
        return ols_compressed(problem, residual, names, model, correlation)
    return wls_compressed(problem, residual, names, model, correlation)


def _closed_loop(robot: Robot, sets, start: EstimationResult, o: IdentificationOptions):
    """IDIM-IV or DIDIM from the WLS estimate ``start`` (robid.identification.closed_loop_estimation), and its
    note."""
    if o.motor_encoders_only or o.static_deflection:
        raise RobidOptionError("method", f"{o.method}: not with {{motor_encoders_only}} or {{static_deflection}}")
    settings = o.closed_loop if o.closed_loop is not None else ClosedLoopOptions()
    est, _account = closed_loop_estimate(robot, sets, o.method, start, settings, o.processing_for, o.coulomb)
    return est, f"{o.method} started from the WLS estimate"


def method_estimate(robot: Robot, sets, W, tau, method: str, o: IdentificationOptions):
    """(the unconstrained estimate of ``method`` (WLS first for consistent, eiv and the closed-loop methods), its
    notes)."""
    est, notes = unconstrained_estimate(W, tau, robot.base_parameters().names, method, row_correlation(list(sets)))
    if method in CLOSED_LOOP_METHODS:
        est, note = _closed_loop(robot, sets, est, dataclasses.replace(o, method=method))
        return est, (*notes, note)
    if method == EIV:
        return _errors_in_variables(robot, sets, W, tau, est, o), notes
    return est, notes


def estimator_comparison(robot: Robot, sets, vsets, o: IdentificationOptions, reported):
    """The methods of ``o.compare_methods`` on the same runs, scored on the validation runs (None without)."""
    if not o.compare_methods:
        return None
    from robid.identification.estimator_comparison import compare_estimators

    W, tau = stack(list(sets))

    def values_of(method: str):
        if method == reported[0]:
            return reported[1]
        other = dataclasses.replace(o, method=method)
        est, _ = method_estimate(robot, sets, W, tau, method, other)
        return reported_values(robot, est, other)[1]

    methods = tuple(dict.fromkeys((o.method, *o.compare_methods)))
    return compare_estimators(robot.joint_names, methods, values_of, sets, vsets)


def _errors_in_variables(robot: Robot, sets, W, tau, start: EstimationResult, o: IdentificationOptions):
    """Corrected least squares with the processed signals' noise in the regressor (robid.estimation.
    errors_in_variables, robid.identification.regressor_noise), weighted like the WLS estimate ``start``; on
    averaged periodic runs its covariance counts the residual's correlation within the period."""
    from robid.estimation.errors_in_variables import corrected_least_squares
    from robid.identification.regressor_noise import regressor_noise_gram
    from robid.identification.regressor_noise_meat import noise_model_meat

    gram = sum(regressor_noise_gram(robot, d, o.processing_for(d.source).torque_band) for d in sets)
    periods = tuple(d.W.shape[0] for d in sets) if all(d.processed.mode == PERIODIC for d in sets) else None
    return corrected_least_squares(W, tau, gram, robot.base_parameters().names, weights=start.weights,
                                   periods=periods, model_meat=functools.partial(noise_model_meat, robot, sets))


def unconstrained_estimate(W, tau, names, method: str,
                           correlation: RowCorrelation) -> tuple[EstimationResult, tuple[str, ...]]:
    """(the unconstrained estimate, notes); OLS and WLS (also under ``consistent``) account for rows correlated by
    the non-periodic low-pass, IRLS does not (said in the notes)."""
    if method == IRLS:
        notes = () if correlation.independent else (
            "IRLS: its robust covariance treats the low-passed rows as independent; the standard deviations "
            "are optimistic on non-periodic runs (use wls or ols for honest ones)",
        )
        return estimate(W, tau, names, method=IRLS), notes
    least_squares = WLS if method in (CONSISTENT, EIV, *CLOSED_LOOP_METHODS) else method
    return estimate(W, tau, names, method=least_squares, correlation=correlation), ()


def consistency_check(robot: Robot, est: EstimationResult) -> tuple[BaseConsistencyReport | None, tuple[str, ...]]:
    """(the physical-consistency check of the base values, or None when it cannot be done, with a note saying
    why)."""
    base = robot.base_parameters()
    try:
        return check_base_consistency(
            est.values, base.grouping, robot.parameter_names, base_names=base.names, covariance=est.covariance
        ), ()
    except np.linalg.LinAlgError as exc:  # a covariance that is not positive definite (rank-deficient data)
        return None, (f"physical-consistency check not done: {exc} (the estimate's covariance is singular)",)


def reported_values(robot: Robot, est: EstimationResult, o: IdentificationOptions):
    """(consistent result or None, reported values, their method, notes): the consistent estimate when asked for
    and solved, else the unconstrained one, labelled as such."""
    if o.method != CONSISTENT:
        return None, est.values, est.method, ()
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
        return consistent, consistent.base_values, consistent.method, ()
    note = (f"physically consistent estimate failed ({consistent.status}); the reported values are the "
            f"unconstrained {est.method} estimate, labelled as such")
    return consistent, est.values, est.method, (note,)
