"""Nonlinear-friction model selection on an identification, as a record section (robid.record.friction_models).

``IdentificationOptions.friction_models`` names the candidate models (e.g. linear, stribeck, sigmoid): for every
joint each candidate is fitted with the other joints linear, on the stacked identification runs, by variable
projection (robid.estimation.nonlinear_friction via robid.identification.friction_fit); the validation runs
choose when there are any (held-out RMS of that joint), else BIC. The chosen models are then fitted together;
their parameters, the table of candidates and per joint the chosen friction curve against what the data imply
go into the record. When the record adopts the chosen models (robid.identification.identify: a nonlinear model
on some joint, estimator wls), the joint fit is the record's model: its every parameter and covariance are kept
(``FrictionModels.fit``) for robid.identification.identified_model.
"""

from __future__ import annotations

import numpy as np

from robid.estimation.nonlinear_friction import FrictionProblem, FrictionSignals, predict_friction
from robid.identification.friction_fit import friction_problem, select_friction
from robid.record.codec import finite, finite_tuple
from robid.record.friction_models import (
    FrictionCandidateRow,
    FrictionFit,
    FrictionModelCurve,
    FrictionModels,
    FrictionValue,
    JointFrictionModel,
)

#: velocity grid of a friction curve and the most data points shown per joint
CURVE_POINTS = 201
MAX_DATA_POINTS = 1500


def select_for_record(robot, datasets, validation_sets, candidates, coulomb: str, start_weights=None):
    """The per-joint selection (robid.identification.friction_fit.select_friction) of ``candidates`` on the
    identification ``datasets``, by the held-out error on ``validation_sets`` when given, else BIC."""
    names = robot.base_parameters().names
    if not any(f"{p}_{j}" in names for j in robot.joint_names for p in ("fv", "fc")):
        from robid.errors import RobidOptionError

        raise RobidOptionError("friction_models", "the model has no friction terms to compare (add viscous and "
                               f"coulomb to {{terms}}; now {', '.join(robot.terms)})")
    return select_friction(robot, datasets, validation_sets=validation_sets, candidates=tuple(candidates),
                           coulomb=coulomb, start_weights=start_weights)


def friction_models_record(robot, datasets, selection, adopted: bool, coulomb: str) -> FrictionModels:
    """The record section of a selection (module docstring); ``adopted``: the chosen models are the record's."""
    final = selection.final
    problem = friction_problem(robot, datasets, coulomb)
    rows = tuple(
        FrictionCandidateRow(c.joint, c.model, c.n_parameters, finite(c.fit.rms), finite(c.fit.aic),
                             finite(c.fit.bic), finite(c.validation_rms) if c.validation_rms is not None else None,
                             bool(c.converged), selection.chosen[selection.joint_names.index(c.joint)] == c.model)
        for c in selection.candidates
    )
    own = {name for fit in final.joints for name in fit.parameters}
    values = tuple(
        FrictionValue(name, finite(float(v)), finite(float(s)), bool(nl))
        for name, v, s, nl in zip(final.names, final.values, final.std, final.nonlinear, strict=True) if name in own
    )
    curves = tuple(_curve(robot, final, problem, j, model) for j, model in enumerate(selection.chosen))
    models = tuple(JointFrictionModel(j, r.model, int(r.sigmoids), tuple(int(h) for h in r.ripple))
                   for j, r in zip(selection.joint_names, final.requests, strict=True))
    fit = FrictionFit(tuple(final.names), finite_tuple(final.values), tuple(bool(b) for b in final.nonlinear),
                      tuple(finite_tuple(row) for row in np.asarray(final.covariance))) if adopted else None
    return FrictionModels(selection.criterion, float(selection.tolerance), tuple(selection.joint_names),
                          tuple(selection.chosen), rows, values, curves, tuple(selection.notes) + tuple(final.notes),
                          models=models, adopted=bool(adopted), fit=fit)


def friction_only(robot, result, joint: int, velocity: np.ndarray) -> np.ndarray:
    """Joint ``joint``'s friction torque of ``result`` at the velocities ``velocity`` (sign(v) for the Coulomb
    level, position ripple at q = 0 left out of the grid's meaning): the fit evaluated on rows that hold only this
    joint's own fv, fc and f0 columns."""
    names = tuple(robot.base_parameters().names)
    v = np.asarray(velocity, dtype=float)
    n, dof = v.size, robot.dof
    W = np.zeros((n, dof, len(names)))
    name = robot.joint_names[joint]
    for prefix, column in (("fv", v), ("fc", np.sign(v)), ("f0", np.ones(n))):
        if f"{prefix}_{name}" in names:
            W[:, joint, names.index(f"{prefix}_{name}")] = column
    V = np.zeros((n, dof))
    V[:, joint] = v
    signals = FrictionSignals.unfiltered(np.zeros((n, dof)), V)
    problem = FrictionProblem(W, np.zeros((n, dof)), names, tuple(robot.joint_names), signals)
    return predict_friction(result, problem)[:, joint]


def _curve(robot, final, problem: FrictionProblem, j: int, model: str) -> FrictionModelCurve:
    used = problem.used[:, j]
    v_rows = np.asarray(problem.signals.velocity, dtype=float)[:, j][used]
    peak = float(np.max(np.abs(v_rows))) if v_rows.size else 1.0
    grid = np.linspace(-peak, peak, CURVE_POINTS)
    torque = friction_only(robot, final, j, grid)
    implied = np.zeros(0)
    if v_rows.size:
        full = predict_friction(final, problem)[:, j][used]
        implied = problem.tau[used, j] - full + friction_only(robot, final, j, v_rows)
    step = max(1, -(-v_rows.size // MAX_DATA_POINTS))
    return FrictionModelCurve(robot.joint_names[j], model, _floats(grid), _floats(torque), _floats(v_rows[::step]),
                              _floats(implied[::step]))


def _floats(x) -> tuple[float, ...]:
    return tuple(float(v) for v in np.asarray(x, dtype=float))
