"""Held friction on robid's runs: the prediction of a run with its joints held still at rest, the held-friction
fit and selection per joint on the identification runs (validated on the held-out runs), and its record.

A joint held still (robid.identification.friction_fit.held_still_rows) carries no Coulomb torque: its Coulomb
column and sign are zero there, so is the velocity of its nonlinear friction (Stribeck, sigmoid, ripple add
nothing), and the held torque of robid.estimation.held_friction (none, constant or decaying, per joint) takes their
place; the viscous term stays (a joint "held" below 0.01 rad/s may still be creeping into its rest):

    tau_J = W_J^0(q, qd, qdd) beta + phi_J(q, 0, 0) + tau_held,J(d, t - t0)      on J's held rows

with W^0 the base regressor with joint J's Coulomb column zero on those rows (docs/estimation.md "Held friction").
The fit uses the residual of that prediction without tau_held on every held row whose last motion is known (a record
that starts at rest has no history: its first hold is predicted without held torque).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robid.estimation.held_friction import (
    HELD_MODELS,
    HoldRows,
    held_torque,
    hold_features,
    select_held,
)
from robid.identification.friction_fit import grid_signals, held_still_rows
from robid.record.held_friction import HeldFriction, HeldFrictionCandidate, HeldFrictionJoint

__all__ = ["fit_held_friction", "held_rows", "held_torques", "rest_grid"]


def held_torques(held_friction: HeldFriction | None, t, v, held) -> np.ndarray:
    """(N, dof) held torque of the record's model on a run's grid: ``t`` times, ``v`` friction velocity, ``held``
    the rows each joint is held still (zero elsewhere and without a model)."""
    held = np.asarray(held, dtype=bool)
    out = np.zeros(held.shape)
    if held_friction is None or not held.any():
        return out
    direction, elapsed, _ = hold_features(t, v, held)
    for k, j in enumerate(held_friction.joints):
        tau = held_torque(j.model, j.amplitude, j.time_constant, direction[:, k], elapsed[:, k])
        out[:, k] = np.where(held[:, k], tau, 0.0)
    return out


def rest_grid(model, robot, processed, coulomb: str = "noise", rows=None) -> tuple[np.ndarray, np.ndarray, list]:
    """(torque (M, dof), held (N, dof), notes): the model's prediction on the processed grid (its rows ``rows``, a
    bool mask, else all) with the joints held still at rest and the model's held torque (module docstring)."""
    from robid.identification.datasets import regressor_function

    held = held_still_rows(processed, coulomb)
    q, v, s = grid_signals(processed, coulomb)
    rows = np.ones(q.shape[0], dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    v_rest, s_rest = np.where(held, 0.0, v), np.where(held, 0.0, s)
    evaluate, notes = regressor_function(robot, processed, coulomb)
    W = evaluate(q[rows], np.asarray(processed.qd, dtype=float)[rows], np.asarray(processed.qdd, dtype=float)[rows],
                 v[rows])
    names = list(model.names)
    for j, name in enumerate(robot.joint_names):  # no Coulomb torque on a joint held still: the held one instead
        if f"fc_{name}" in names:
            W[held[rows, j], :, names.index(f"fc_{name}")] = 0.0
    grid = model.grid_torque(robot, W, q[rows], v_rest[rows], s_rest[rows])
    grid = grid + held_torques(model.held, processed.t, v, held)[rows]
    return grid, held, notes


def held_rows(model, robot, processed, coulomb: str = "noise") -> list[HoldRows]:
    """Per joint, the held rows of one run whose last motion is known, with the residual of ``model`` (without
    held friction) at rest there."""
    import dataclasses

    model = dataclasses.replace(model, held=None)
    held = held_still_rows(processed, coulomb)
    any_held = held.any(axis=1)
    empty = HoldRows(np.zeros(0), np.zeros(0), np.zeros(0), 0)
    if not any_held.any():
        return [empty] * held.shape[1]
    grid, _, _ = rest_grid(model, robot, processed, coulomb, any_held)
    residual = np.asarray(processed.tau, dtype=float)[any_held] - grid
    _, v, _ = grid_signals(processed, coulomb)
    direction, elapsed, index = hold_features(processed.t, v, held)
    direction, elapsed, index, held = direction[any_held], elapsed[any_held], index[any_held], held[any_held]
    out = []
    for j in range(held.shape[1]):
        m = held[:, j] & (direction[:, j] != 0)
        out.append(HoldRows(residual[m, j], direction[m, j], elapsed[m, j], int(np.unique(index[m, j]).size)))
    return out


def fit_held_friction(work, candidates: Sequence[str] = HELD_MODELS) -> HeldFriction | None:
    """The held friction of an identification (robid.identification.identify.Solution) on its runs' holds,
    chosen per joint on its held-out runs' holds when they have any, else by BIC; None for the elastic layout
    or when no joint is ever held still after a motion."""
    robot, o = work.robot, work.options
    if o.motor_encoders_only or robot.motor_joints:
        return None
    model = work.model
    per_run = [held_rows(model, robot, d.processed, o.coulomb) for d in work.datasets]
    per_valid = [held_rows(model, robot, d.processed, o.coulomb) for d in work.validation_sets]
    if not any(r.residual.size for rows in per_run for r in rows):
        return None
    base = dict(zip(model.names, np.asarray(model.values, dtype=float), strict=True))
    joints, rows_out, criteria = [], [], set()
    for j, name in enumerate(robot.joint_names):
        rows = HoldRows.stacked([r[j] for r in per_run])
        valid = HoldRows.stacked([r[j] for r in per_valid]) if per_valid else None
        chosen, fits, criterion = select_held(rows, valid, candidates)
        criteria.add(criterion if rows.residual.size else "bic")
        fc = float(base.get(f"fc_{name}", 0.0))
        joints.append(HeldFrictionJoint(name, chosen.model, chosen.amplitude, chosen.amplitude_std,
                                        chosen.time_constant, chosen.time_constant_std,
                                        float(chosen.amplitude / fc) if fc else None, rows.holds,
                                        int(rows.residual.size)))
        rows_out += [HeldFrictionCandidate(name, f.model, f.parameters, _rms(f), f.bic, f.validation_rms,
                                           f is chosen) for f in fits]
    criterion = "validation" if criteria == {"validation"} else ("bic" if criteria == {"bic"} else "mixed")
    return HeldFriction(criterion, tuple(joints), tuple(rows_out))


def _rms(fit) -> float | None:
    return float(np.sqrt(fit.rss / fit.rows)) if fit.rows else None
