"""Nonlinear joint friction on robid's data sets: the friction columns through each run's own filter, the fit and
the per-joint model selection of robid.estimation.nonlinear_friction on the stacked identification runs.

The new columns (Stribeck, sigmoid, ripple; docs/estimation.md "Nonlinear friction") are functions of the joint
states, so they take the path of the Coulomb columns in robid.identification.datasets: evaluated on the whole
record and filtered exactly like the torque (``ProcessedSignals.parallel_filter``, non-periodic runs) or on the
processed grid through ``apply_filter`` (periodic runs), and zeroed on the rows the data selection left out. The
friction velocity v and the sign s are the Coulomb columns' own (robid.identification.coulomb): with ``coulomb``
``"noise"`` (default) v is the controller's measured velocity when the file has one, else the processed velocity,
and s = erf(v / (sqrt 2 s_v)) with s_v that velocity's noise; ``"differentiated"`` the processed velocity
always; ``"sign"`` s = sign(qd). It must be the rule the data sets were built with
(``IdentificationOptions.coulomb``), or the fc_J column of W and the new columns disagree.

    ident = run_identification(robot, files, options, validation_files=held_out)
    result = fit_friction(robot, ident.datasets, {"J2": "stribeck"})
    selection = select_friction(robot, ident.datasets, validation_sets=ident.validation_sets)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.friction_model_selection import FrictionSelection, select_friction_models
from robid.estimation.nonlinear_friction import (
    FRICTION_CANDIDATES,
    FrictionProblem,
    FrictionSignals,
    NonlinearFrictionResult,
    fit_nonlinear_friction,
    predict_friction,
)
from robid.identification.coulomb import COULOMB_MODELS, expected_sign
from robid.identification.datasets import DataSet, row_correlation, stack
from robid.robot import Robot
from robid.signals.selection import STANDSTILL_SPEED

__all__ = ["dataset_signals", "fit_friction", "friction_problem", "grid_signals", "held_still", "held_still_rows",
           "predict_dataset", "select_friction"]


def _sign_rule(p, coulomb: str):
    """(whether v is the controller's measured velocity, sign(v, qd) -> s) of the Coulomb rule ``coulomb`` on the
    processed signals ``p`` (module docstring)."""
    if coulomb not in COULOMB_MODELS:
        raise RobidInputError(f"coulomb: expected one of {', '.join(COULOMB_MODELS)}, got {coulomb!r}")
    measured = coulomb == "noise" and p.qd_measured is not None
    noise = p.qd_measured_std if measured else p.noise.qd_std_processed

    def sign(v: np.ndarray, qd: np.ndarray) -> np.ndarray:
        if coulomb == "sign":
            return np.sign(qd)
        return np.column_stack([expected_sign(v[:, j], noise[j] if j < len(noise) else None)
                                for j in range(v.shape[1])])

    return measured, noise, sign


def grid_signals(processed, coulomb: str = "noise") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, v, s) on the processed grid, unfiltered: positions, the friction velocity and its sign as the Coulomb
    columns of robid.identification.datasets.regressor_of take them (what robid predict evaluates)."""
    measured, _, sign = _sign_rule(processed, coulomb)
    v = np.asarray(processed.qd_measured if measured else processed.qd, dtype=float)
    s = sign(v, np.asarray(processed.qd, dtype=float))
    return (np.asarray(processed.q, dtype=float), *_outside_holds(v, s, _hold_span(processed)))


def dataset_signals(dataset: DataSet, coulomb: str = "noise") -> FrictionSignals:
    """The :class:`FrictionSignals` of one data set (module docstring)."""
    if dataset.drive_rows is not None:
        raise RobidInputError(f"{dataset.source}: nonlinear friction is for the rigid layout (one row per joint), "
                              "not the elastic layout's motor rows")
    p = dataset.processed
    measured, noise, sign = _sign_rule(p, coulomb)

    keep = np.asarray(p.keep, dtype=bool)
    v_grid = p.qd_measured if measured else p.qd
    # (v, s) outside the holds of each velocity array met, computed once: a selection evaluates columns often
    signs: dict = {}
    grid_span = _hold_span(p)  # HELD_STILL_S in processed samples, and in the record's (before decimation)
    record_span = grid_span * max(1, int(p.decimation))

    def held_signals(v, qd, span):
        key = (id(v), id(qd))
        if key not in signs:  # the arrays are kept, so that their ids stay theirs
            signs[key] = (v, qd, _outside_holds(np.asarray(v, dtype=float), sign(v, qd), span))
        return signs[key][2]

    def evaluate(g):
        if p.parallel_filter is not None:
            def on_record(q, qd, qdd, v):
                v = v if measured else qd
                return np.asarray(g(q, *held_signals(v, qd, record_span)), dtype=float)

            cols = p.parallel_filter(on_record)
        else:
            cols = p.apply_filter(np.asarray(g(p.q, *held_signals(v_grid, p.qd, grid_span)), dtype=float))
        return np.asarray(cols, dtype=float).reshape(p.q.shape[0], -1)

    noise_std = np.array([np.nan if noise is None or j >= len(noise) or noise[j] is None else float(noise[j])
                          for j in range(p.q.shape[1])])
    return FrictionSignals(evaluate=evaluate, velocity=np.where(keep, np.asarray(v_grid, dtype=float), 0.0),
                           noise=noise_std)


#: a joint slower than this (rad/s, m/s) for at least :data:`HELD_STILL_S` is held by static friction, whose torque
#: is anywhere within +-fs and not a function of the velocity (robid.signals.selection.STANDSTILL_SPEED)
HELD_STILL_SPEED = STANDSTILL_SPEED
HELD_STILL_S = 0.5


def held_still(dataset: DataSet, coulomb: str = "noise") -> np.ndarray:
    """(N, dof) bool: the rows where a joint is held still -- its friction velocity below :data:`HELD_STILL_SPEED`
    for at least :data:`HELD_STILL_S`. A joint at rest carries the torque its static friction holds, anywhere
    within +-fs and set by how it stopped, not by its velocity; so the nonlinear friction columns (Stribeck,
    sigmoid, ripple) are zero there -- their v and sign set to 0 before the filter (:func:`dataset_signals`) and
    in predictions (:func:`grid_signals`) -- while the rows stay for every other parameter (gravity above all).
    Without it, on every row of the UR10e's rest-to-rest runs, a Stribeck fit took the sign of the last motion's
    decaying velocity for the held torque (J6: fs 7.9 N m within vs 0.001 rad/s against fc 2.4, and a held-out
    run predicted worse, 13.4 % against the linear model's 10.8 %). Short passes through zero (reversals, starts)
    are not holds: the friction's rise from rest is there."""
    return held_still_rows(dataset.processed, coulomb)


def held_still_rows(processed, coulomb: str = "noise") -> np.ndarray:
    """:func:`held_still` on processed signals (the friction velocity of the Coulomb rule ``coulomb``)."""
    measured, _, _ = _sign_rule(processed, coulomb)
    v = np.asarray(processed.qd_measured if measured else processed.qd, dtype=float)
    return _holds(v, _hold_span(processed))


def _hold_span(processed) -> int:
    """:data:`HELD_STILL_S` in samples of the processed grid."""
    t = np.asarray(processed.t, dtype=float)
    return max(1, int(np.ceil(HELD_STILL_S / float(np.median(np.diff(t)))))) if t.size > 1 else 1


def _holds(v: np.ndarray, span: int) -> np.ndarray:
    """(n, dof) bool: runs of at least ``span`` samples with |v| below :data:`HELD_STILL_SPEED`, per joint."""
    held = np.zeros(v.shape, dtype=bool)
    for j in range(v.shape[1]):
        slow = np.concatenate([[0], (np.abs(v[:, j]) < HELD_STILL_SPEED).astype(np.int8), [0]])
        edges = np.diff(slow)
        for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
            if b - a >= span:
                held[a:b, j] = True
    return held


def _outside_holds(v: np.ndarray, s: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """(v, s) with both 0 where a joint is held still: there every nonlinear friction column vanishes."""
    held = _holds(v, span)
    if not held.any():
        return v, s
    return np.where(held, 0.0, v), np.where(held, 0.0, s)


def friction_problem(robot: Robot, datasets: Sequence[DataSet], coulomb: str = "noise") -> FrictionProblem:
    """The stacked problem of ``datasets`` (robid.identification.datasets.stack, their row correlation) with the
    friction signals of each, for robid.estimation.nonlinear_friction."""
    sets = list(datasets)
    if not sets:
        raise RobidInputError("friction: at least one data set is needed")
    W, tau = stack(sets)
    signals = FrictionSignals.stacked([dataset_signals(d, coulomb) for d in sets])
    return FrictionProblem(W, tau, tuple(robot.base_parameters().names), tuple(robot.joint_names), signals,
                           row_correlation(sets))


def fit_friction(robot: Robot, datasets: Sequence[DataSet], models: Mapping | Sequence | None, *,
                 coulomb: str = "noise", **options) -> NonlinearFrictionResult:
    """:func:`robid.estimation.nonlinear_friction.fit_nonlinear_friction` on the stacked ``datasets``; ``models``
    maps joint names to a model name or FrictionRequest (the others linear); ``options`` are passed on."""
    return fit_nonlinear_friction(friction_problem(robot, datasets, coulomb), models, **options)


def select_friction(robot: Robot, datasets: Sequence[DataSet], *, validation_sets: Sequence[DataSet] = (),
                    candidates=FRICTION_CANDIDATES, coulomb: str = "noise", **options) -> FrictionSelection:
    """Per-joint model selection (:func:`robid.estimation.friction_model_selection.select_friction_models`) on the
    identification ``datasets``, by the held-out error on ``validation_sets`` (each its own problem) when given,
    else by BIC."""
    validation = [friction_problem(robot, [d], coulomb) for d in validation_sets]
    return select_friction_models(friction_problem(robot, datasets, coulomb), validation=validation,
                                  candidates=candidates, **options)


def predict_dataset(robot: Robot, result: NonlinearFrictionResult, dataset: DataSet,
                    coulomb: str = "noise") -> np.ndarray:
    """(N, dof) torque the fit predicts on one data set's rows (0 on the rows its data selection left out)."""
    return predict_friction(result, friction_problem(robot, [dataset], coulomb))
