"""One measurement file turned into a least-squares block: processed signals, filtered base regressor, torque.

Parallel filtering (Gautier 1997): the base regressor is evaluated on the processed (filtered, differentiated)
states and then passed through the same linear filter that the signal stage already applied to the torque
(``ProcessedSignals.apply_filter``): the harmonic mask of the periodic path, or the zero-phase low-pass of the
non-periodic path, so that both sides of tau = W beta carry the same band.

Elastic joints with motor encoders (Spong model, Zollo et al. 2015 eq. 2-6): the motor torque is
tau = Ia thetadd + f(thetad) + [link-side rigid dynamics of q], whereas the rigid regressor carries the rotor at
the link acceleration (Ia qdd). When the measurement has motor positions, the difference Ia_nominal (thetadd -
qdd) -- with Ia_nominal = rotor_inertia * gear_ratio^2 from the robot file -- is moved to the torque side, and
likewise the drive-side friction difference fv_nom (thetad - qd) + fc_nom (sign thetad - sign qd), so the lumped
base parameters stay those of the rigid model; only (true - nominal) times the deflection terms remains,
second order in the deflection.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.measurement_file import read_measurement
from robid.io.screening import ScreeningPolicy
from robid.robot import Robot
from robid.signals import ProcessedSignals, ProcessingOptions, process


@dataclass(frozen=True, eq=False)
class DataSet:
    """A measurement ready for estimation: ``W`` (N, dof, nb) and ``tau`` (N, dof), rows not kept zeroed."""

    source: str
    processed: ProcessedSignals
    W: np.ndarray
    tau: np.ndarray
    rows_used: int
    notes: tuple[str, ...]


def load_dataset(
    robot: Robot,
    path: str | Path,
    *,
    mapping: str | Path | None = None,
    options: ProcessingOptions | None = None,
    policy: ScreeningPolicy | None = None,
    coulomb: str = "noise",
) -> DataSet:
    """The least-squares block of one measurement (module docstring). ``coulomb``: ``"noise"`` (the Coulomb
    columns are the expected sign of the velocity given its noise, robid.identification.coulomb) or ``"sign"``."""
    measurement = read_measurement(path, robot.model, mapping=mapping, policy=policy)
    processed = process(measurement, options or ProcessingOptions())
    W, notes = regressor_of(robot, processed, coulomb)
    tau = np.asarray(processed.tau, dtype=float)
    notes = [*measurement.notes, *notes]
    if processed.thetadd is not None and robot.model.is_elastic:
        tau = tau - rotor_correction(robot, processed)
        notes.append("elastic joints: rotor inertia and drive friction taken at the motor side (nominal "
                     "Ia (thetadd - qdd) + fv (thetad - qd) + fc (sign thetad - sign qd) moved to the torque side)")
    n, dof, nb = W.shape
    W_f = processed.apply_filter(W.reshape(n, dof * nb)).reshape(n, dof, nb)
    if processed.mode == "nonperiodic":
        notes.append("parallel filtering: the torque's zero-phase low-pass applied to the base regressor")
    else:
        notes.append("parallel filtering: the base regressor keeps the same harmonics as the torque")
    keep = np.asarray(processed.keep, dtype=bool)
    if not keep.all():
        W_f = W_f * keep[:, :, None]
        tau = tau * keep
        notes.append(f"data selection: {int((~keep).sum())} (sample, joint) rows not used")
    return DataSet(
        source=str(path),
        processed=processed,
        W=W_f,
        tau=tau,
        rows_used=int(keep.sum()),
        notes=tuple(notes),
    )


def regressor_of(robot: Robot, processed: ProcessedSignals, coulomb: str = "noise") -> tuple[np.ndarray, list[str]]:
    """The base regressor at the processed states (N, dof, nb), not filtered, with the Coulomb treatment
    ``coulomb`` (robid.identification.coulomb); (regressor, notes)."""
    from robid.identification.coulomb import COULOMB_MODELS, smooth_coulomb_columns

    if coulomb not in COULOMB_MODELS:
        raise RobidInputError(f"coulomb: expected one of {', '.join(COULOMB_MODELS)}, got {coulomb!r}")
    base = robot.base_parameters()
    W = base.regressor(processed.q, processed.qd, processed.qdd)
    if coulomb == "sign":
        return W, []
    W, note = smooth_coulomb_columns(W, base, robot.joint_names, processed.qd, processed.noise.qd_std_processed)
    return W, [note] if note else []


def rotor_correction(robot: Robot, processed: ProcessedSignals) -> np.ndarray:
    """Ia_nom (thetadd - qdd) + fv_nom (thetad - qd) + fc_nom (sign thetad - sign qd) on elastic joints."""
    joints = robot.model.joints
    elastic = np.array([j.elasticity is not None for j in joints])
    ia = np.array([j.drive.reflected_inertia if j.drive is not None else 0.0 for j in joints]) * elastic
    fv = np.array([j.friction.viscous for j in joints]) * elastic
    fc = np.array([j.friction.coulomb for j in joints]) * elastic
    qd, thd = np.asarray(processed.qd), np.asarray(processed.thetad)
    return (
        (np.asarray(processed.thetadd) - np.asarray(processed.qdd)) * ia
        + (thd - qd) * fv
        + (np.sign(thd) - np.sign(qd)) * fc
    )


def stack(datasets: list[DataSet]) -> tuple[np.ndarray, np.ndarray]:
    """Several runs combine into one problem: their rows are stacked."""
    return np.concatenate([d.W for d in datasets]), np.concatenate([d.tau for d in datasets])
