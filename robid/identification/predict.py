"""Predicted joint torques for a measurement file, at that file's own time stamps (``robid predict``).

1. **Processing.** The file is read and screened as identification screened its files, and processed with the
   options the record stores (robid.identification.stored_options.options_for_file: the file's own when
   identification knew it, else the common ones without the timing that belonged to other files), overridden
   by what the caller gives (``overrides``: a period, a trajectory, a cut-off, ...). Every sample is predicted
   that the processing covers: a periodic record's whole periods sample by sample, not averaged
   (``average_periods=False``, robid.signals.periodic_samples), a non-periodic record through its low-pass.
2. **Prediction** on the processed grid by the identified model (robid.identification.identified_model): the
   base regressor at the processed states times the identified values, plus what an adopted nonlinear friction
   model adds (Stribeck, sigmoid, ripple; same friction velocity and sign as the Coulomb columns), plus, on
   elastic joints with motor encoders, the nominal motor-side rotor and friction terms that identification moved
   to the torque side (robid.identification.datasets); interpolated linearly to the file's own time stamps.
3. **Marks**, one per (sample, joint): 0 predicted and compared; 1 predicted but slower than ``min_speed`` while
   the joint moves (a reversal or start: the Coulomb term is ill-defined there; left out of the metrics as
   identification left it out) -- a joint *held still* (below 0.01 rad/s for 0.5 s or more,
   robid.identification.friction_fit.held_still) is compared: a robot at rest is predicted; 2 not predicted
   (outside the processed span: filter edges, approach moves, rests cut off, rows dropped) -- the prediction is
   NaN there, and the mark says why.
4. **Metrics** per joint over the samples marked 0: ``nrmse_percent`` = 100 RMS(tau_meas - tau_pred) / RMS(tau_meas)
   against the *processed* (filtered) torque on the processed grid, what identification minimised; ``rre_percent``
   = 100 ||tau_meas - tau_pred|| / ||tau_meas|| against the *measured* torque at the file's own samples (noise
   included), the relative error norm of Mamedov et al. and of the UR10e anchors.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.defaults import PERIODIC
from robid.errors import RobidInputError
from robid.estimation import torque_metrics
from robid.estimation.metrics import TorqueMetrics
from robid.record import IdentificationRecord
from robid.robot import Robot

MARK_USED, MARK_SLOW, MARK_NOT_PREDICTED = 0, 1, 2


@dataclass(frozen=True, eq=False)
class FilePrediction:
    """The prediction of one file at its own samples: ``t`` (N,), ``tau_pred``, ``tau_meas``, ``mark`` (N, dof);
    ``processed`` the metrics on the processed grid (NRMSE), ``rre_percent`` (dof,) on the file's samples."""

    source: str
    t: np.ndarray
    tau_pred: np.ndarray
    tau_meas: np.ndarray
    mark: np.ndarray
    processed: TorqueMetrics
    rre_percent: np.ndarray
    method: tuple[str, ...]
    #: the processed grid the model was evaluated on: t (M,), q, qd, qdd and the predicted torque (M, dof)
    grid: tuple[np.ndarray, ...] = ()
    #: the processing chosen, in one line (robid.record.ProcessingSummary.line)
    processing: str = ""

    @property
    def residual(self) -> np.ndarray:
        return self.tau_meas - self.tau_pred

    def counts(self) -> dict[str, int]:
        """How many (sample, joint) rows got each mark."""
        names = {MARK_USED: "compared", MARK_SLOW: "slow", MARK_NOT_PREDICTED: "not predicted"}
        return {name: int(np.sum(self.mark == code)) for code, name in names.items()}


def check_result_matches(robot: Robot, record: IdentificationRecord, where: str = "RESULT.json") -> None:
    """Refuse a robot whose base parameters are not those of the record: other names (another robot, other
    terms) or other expressions (another geometry grouping the same names differently)."""
    base = robot.base_parameters()
    if tuple(base.names) != record.names:
        if len(base.names) != len(record.names):
            what = f"{len(record.names)} base parameters in the result, {len(base.names)} for robot {robot.name}"
        else:
            first = next(k for k, (a, b) in enumerate(zip(record.names, base.names, strict=True)) if a != b)
            what = (f"base parameter {first + 1} is {record.names[first]} in the result but {base.names[first]} for "
                    f"robot {robot.name}")
        raise RobidInputError(
            f"{where}: identified with robot {record.robot!r}, terms {', '.join(record.terms)}; {what} (terms "
            f"{', '.join(robot.terms)}): use the robot it was identified with"
        )
    for p, expression in zip(record.base_parameters, base.expressions, strict=True):
        if "".join(p.expression.split()) != "".join(expression.split()):
            raise RobidInputError(
                f"{where}: base parameter {p.name} is {p.expression} in the result but {expression} for robot "
                f"{robot.name}: another geometry; use the robot it was identified with"
            )


def predict_file(
    robot: Robot,
    record: IdentificationRecord,
    path: str | Path,
    *,
    mapping: str | Path | None = None,
    policy=None,
    overrides: dict | None = None,
) -> FilePrediction:
    """Predict the torques of the measurement ``path`` with the record's values (module docstring).
    ``overrides``: ProcessingOptions fields that replace the stored ones (e.g. ``{"cutoff_hz": 5.0}``)."""
    from robid.identification.datasets import read_positions, with_position_step
    from robid.identification.stored_options import options_for_file, stored_screening_policy
    from robid.signals import process
    from robid.signals.processing_summary import processing_summary

    check_result_matches(robot, record)
    options, mapping_stored, lines = options_for_file(record, str(path))
    overrides = overrides or {}
    # every sample predicted: a periodic file's whole periods differentiated sample by sample, not averaged
    options = dataclasses.replace(options, average_periods=False)
    options, given = _overridden(options, overrides)
    lines += given
    measurement, deflection_notes, step = read_positions(
        robot,
        path,
        mapping if mapping is not None else mapping_stored,
        policy if policy is not None else stored_screening_policy(record.processing),
        record.processing.static_deflection,
    )
    lines += deflection_notes
    processed = process(measurement, with_position_step(options, step))
    grid, notes, processed = _grid_torque(robot, record, processed, str(path))
    from robid.identification.friction_fit import held_still_rows

    # the data selection's slow rows, but a joint held still is compared (module docstring, 3.)
    used = np.asarray(processed.keep, dtype=bool) | held_still_rows(processed, record.processing.coulomb)
    t = np.asarray(measurement.t, dtype=float)
    tau_pred, mark = _at_file_samples(t, processed, grid, used)
    tau_meas = np.asarray(measurement.tau, dtype=float)
    compared = mark == MARK_USED
    rre = _relative_error_percent(tau_meas, tau_pred, compared)
    metrics = torque_metrics(processed.tau, grid, robot.joint_names, used)
    return FilePrediction(
        source=str(path),
        t=t,
        tau_pred=tau_pred,
        tau_meas=tau_meas,
        mark=mark,
        processed=metrics,
        rre_percent=rre,
        method=(*lines, *processed.method.splitlines(), *notes),
        grid=(np.asarray(processed.t, dtype=float), np.asarray(processed.q, dtype=float),
              np.asarray(processed.qd, dtype=float), np.asarray(processed.qdd, dtype=float), grid),
        processing=processing_summary(processed).line(),
    )



def _grid_torque(robot: Robot, record: IdentificationRecord, processed, path: str):
    """(torque the record's model predicts on the processed grid, notes, processed signals): the motor-side block of
    a motor-encoder-only identification (its processed signals with the link states reconstructed), the drive rows
    of the elastic layout, or the identified model (nonlinear and held friction included); the rotors' correction
    of an elastic robot identified rigid."""
    from robid.identification.datasets import elastic_rows, regressor_of, rotor_correction

    if record.processing.motor_encoders_only:  # link states reconstructed with the identified springs
        from robid.elastic.motor_encoders_only import motor_side_block

        W, _, _, processed, note = motor_side_block(robot, processed, record.values, path, linearise=False)
        grid = W @ record.values
        notes = [note]
    elif robot.motor_joints:  # elastic layout: the drive torque is each elastic joint's drive row
        W, _, _ = elastic_rows(robot, processed, path)
        grid = (W @ record.values)[:, record.drive_rows]
        notes = ["elastic layout: drive torques from the motor rows at the processed link and motor states"]
    else:
        from robid.identification.friction_fit import grid_signals
        from robid.identification.identified_model import IdentifiedModel

        model = IdentifiedModel.of_record(record)
        if model.held is None:
            W, notes = regressor_of(robot, processed, record.processing.coulomb)
            grid = model.grid_torque(robot, W, *grid_signals(processed, record.processing.coulomb))
        else:  # joints held still at rest, with the held friction (robid.identification.held_friction)
            from robid.identification.held_friction import rest_grid

            grid, _, notes = rest_grid(model, robot, processed, record.processing.coulomb)
        if not model.is_linear or model.held is not None:
            notes.append(model.describe(robot.joint_names))
    if processed.thetadd is not None and robot.model.is_elastic and not robot.motor_joints:
        grid = grid + rotor_correction(robot, processed)
    return grid, notes, processed


def _relative_error_percent(tau_meas: np.ndarray, tau_pred: np.ndarray, compared: np.ndarray) -> np.ndarray:
    """Per joint, 100 ||tau_meas - tau_pred|| / ||tau_meas|| over the compared samples (NaN without any)."""
    err = np.where(compared, tau_meas - np.nan_to_num(tau_pred), 0.0)
    norm = np.sqrt(np.sum(np.where(compared, tau_meas, 0.0) ** 2, axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(norm > 0, 100.0 * np.sqrt(np.sum(err**2, axis=0)) / norm, np.nan)

def _overridden(options, overrides: dict):
    """(``options`` with the prediction's ``overrides``, the line that says which)."""
    if not overrides:
        return options, ()
    line = "given for this prediction: " + ", ".join(f"{k} = {v}" for k, v in sorted(overrides.items()))
    try:
        return dataclasses.replace(options, **overrides), (line,)
    except TypeError as exc:
        raise RobidInputError(f"predict: {exc}") from None


def _at_file_samples(t: np.ndarray, processed, grid: np.ndarray, used: np.ndarray):
    """(prediction at the file's times, marks): linear interpolation of the processed-grid prediction inside the
    processed span; the mark of the nearest grid sample (slow rows) inside, MARK_NOT_PREDICTED outside."""
    pt = np.asarray(processed.t, dtype=float)
    dof = grid.shape[1]
    tau = np.full((t.size, dof), np.nan)
    mark = np.full((t.size, dof), MARK_NOT_PREDICTED, dtype=int)
    if processed.mode == PERIODIC:  # not produced with average_periods=False
        raise RobidInputError("predict: an averaged period has no samples of its own to predict")
    inside = (t >= pt[0]) & (t <= pt[-1])
    for j in range(dof):
        tau[inside, j] = np.interp(t[inside], pt, grid[:, j])
    nearest = np.clip(np.searchsorted(pt, t[inside]), 0, pt.size - 1)
    mark[inside] = np.where(used[nearest], MARK_USED, MARK_SLOW)
    return tau, mark
