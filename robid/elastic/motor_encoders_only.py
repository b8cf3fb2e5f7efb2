"""Identification of elastic joints from motor encoders only: the link states reconstructed from the motor
positions and the model, and the least-squares block of the drive torques (docs/elastic.md section 3b).

Spong model with spring damping (docs/elastic.md section 2). The link row of elastic joint J,
0 = L_J(q, qd, qdd) beta + k_J (q_J - theta_J) + d_J (qd_J - thetad_J), says that the spring carries the link
torque s_J = L_J beta (beta without k and d). On a periodic run, per harmonic h (omega_h = 2 pi h / T):

    q_J,h = theta_J,h - s_J,h / (k_J + i omega_h d_J)                                                   (1)

and qd, qdd by i omega_h, -omega_h^2: the link acceleration is thetadd - sdd / k, so it carries the second
derivative of the link torque, i.e. up to the fourth derivative of theta -- taken here in the spectral domain of
the band-limited periodic signal, never by differencing data (this is the "higher derivatives" route of Zollo et
al. 2015 section 4 and Lismonde's thesis chapter 2, evaluated exactly rather than truncated at first order).
Since s depends on q, (1) is solved by fixed-point iteration; a change of q at harmonic h changes s by about
M_JJ omega_h^2 times it, so the iteration contracts where omega_h^2 M_JJ / k_J < 1, below the joint's
locked-motor resonance. The reconstruction keeps the harmonics with omega_h <= BAND_RATIO * min_J
sqrt(k_J / max M_JJ) (nominal robot file values), and the drive torques and the regressor are band-limited
to the same harmonics (above them the link's resonant response is not modelled by (1)); the rows are then
correlated, which the covariance accounts for (robid.estimation.correlated, the band projection as F).

The drive rows (motor + link row, where the spring cancels; robid.identification.datasets) at the reconstructed
link states and the measured motor states are linear in every parameter except k_J and d_J, which enter only
through (1). Gauss-Newton: their columns are the derivatives of the drive rows' prediction (central finite
differences of the reconstruction) and the target gains those columns times the linearisation point, so the
linear estimator's solution is one Gauss-Newton step; at convergence it is the linearised problem, whose
covariance is the delta-method one. What the motor data cannot separate shows in that linearisation: the
classification (docs/estimation.md) rates every parameter, e.g. the link-side viscous friction against the
motor-side one, or the damping (its effect is omega d / k of the spring's).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from robid.defaults import PERIODIC, PERIODIC_SAMPLES, REST_TO_REST
from robid.errors import RobidInputError, RobidOptionError
from robid.signals import ProcessedSignals
from robid.signals.records import RowNoise

#: the reconstruction's band: omega <= BAND_RATIO * (lowest locked-motor resonance sqrt(k / M_JJ))
BAND_RATIO = 0.5
#: fixed-point steps of (1) at most: each reduces the error by omega^2 M / k <= BAND_RATIO^2 = 1/4 at the band
#: edge; done when no link position moves by more than FIXED_POINT_TOLERANCE (rad or m)
FIXED_POINT_STEPS = 25
FIXED_POINT_TOLERANCE = 1e-12
#: relative step of the central differences for the k and d columns
DIFFERENCE_STEP = 1e-4


def spring_parameters(robot) -> dict[int, tuple[int, int | None]]:
    """Per elastic joint index, the base-parameter indices of its stiffness and damping (None: not modelled)."""
    names = list(robot.base_parameters().names)
    out = {}
    for j in robot.motor_joints:
        joint = robot.joint_names[j]
        if f"k_{joint}" not in names:
            raise RobidInputError(f"motor encoders only: k_{joint} is not a base parameter of the model")
        out[j] = (names.index(f"k_{joint}"), names.index(f"d_{joint}") if f"d_{joint}" in names else None)
    return out


def check_motor_side_run(robot, processed: ProcessedSignals, source: str) -> None:
    """Refuse what the reconstruction cannot use: a run with link positions, or one that is not periodic."""
    if not robot.motor_joints:
        raise RobidOptionError("motor_encoders_only", "the model has no elastic joints ({terms} need 'stiffness')")
    if processed.theta is not None:
        raise RobidOptionError(None,
            f"{source}: {{motor_encoders_only}} is for files whose positions are the motor encoders', and this one has "
            "motor positions (theta columns) besides link positions: identify it without the option"
        )
    if processed.mode not in (PERIODIC, PERIODIC_SAMPLES, REST_TO_REST) or processed.period is None:
        raise RobidOptionError(None,
            f"{source}: {{motor_encoders_only}} needs a periodic run (the link states come from the spectrum of the "
            f"link torque over whole periods), and this one was processed as {processed.mode}"
        )


def _angular_frequencies(processed: ProcessedSignals) -> np.ndarray:
    """omega of the rfft bins of the processed grid (whole periods, uniform step)."""
    n = processed.q.shape[0]
    step = float(processed.t[1] - processed.t[0])
    return 2.0 * np.pi * np.fft.rfftfreq(n, d=step)


def band_limit(robot, processed: ProcessedSignals) -> tuple[float, str]:
    """The highest angular frequency the reconstruction keeps (module docstring), from the nominal stiffness and
    the largest diagonal mass-matrix entry of each elastic joint's link row over the run; and a note."""
    base = robot.base_parameters()
    beta = base.values(robot.parameters)
    springs = spring_parameters(robot)
    pick = np.linspace(0, processed.q.shape[0] - 1, min(64, processed.q.shape[0])).astype(int)
    q = processed.q[pick]
    zeros = np.zeros_like(q)
    at_rest = base.regressor(q, zeros, zeros, motor=(q, zeros, zeros)) @ beta
    limits = []
    for j, (k_index, _) in springs.items():
        unit = zeros.copy()
        unit[:, j] = 1.0
        m_jj = float(np.max(base.regressor(q, zeros, unit, motor=(q, zeros, zeros))[:, j] @ beta - at_rest[:, j]))
        if not m_jj > 0:
            raise RobidOptionError("motor_encoders_only", f"joint {robot.joint_names[j]} has no link inertia")
        limits.append(BAND_RATIO * np.sqrt(beta[k_index] / m_jj))
    omega = float(min(limits))
    return omega, (
        f"motor encoders only: link states reconstructed from the motor positions by the link equations, "
        f"harmonics up to {omega / (2 * np.pi):.3g} Hz ({BAND_RATIO:g} x the lowest locked-motor resonance of the "
        "nominal springs); drive torques and regressor limited to the same band"
    )


def _band_filter(processed: ProcessedSignals, omega_max: float):
    """x (N, ...) -> its projection on the kept harmonics (DC included) of the processed grid."""
    keep = _angular_frequencies(processed) <= omega_max
    n = processed.q.shape[0]

    def apply(x: np.ndarray) -> np.ndarray:
        spectrum = np.fft.rfft(x, axis=0)
        spectrum[~keep] = 0.0
        return np.fft.irfft(spectrum, n=n, axis=0)

    return apply, int(keep.sum())


def link_states(robot, processed: ProcessedSignals, values: np.ndarray, omega_max: float) -> ProcessedSignals:
    """``processed`` (positions from motor encoders) with the motor states set to its positions and the link
    states reconstructed by (1) at the base values ``values``."""
    base = robot.base_parameters()
    springs = spring_parameters(robot)
    omega = _angular_frequencies(processed)
    keep = omega <= omega_max
    spring_columns = {i for pair in springs.values() for i in pair if i is not None}
    link_columns = [i for i in range(len(values)) if i not in spring_columns]
    theta, thetad, thetadd = processed.q, processed.qd, processed.qdd
    q, qd, qdd = theta.copy(), thetad.copy(), thetadd.copy()
    n = theta.shape[0]
    for _ in range(FIXED_POINT_STEPS):
        previous = q.copy()
        W = base.regressor(q, qd, qdd, motor=(theta, thetad, thetadd))
        for j, (k_index, d_index) in springs.items():
            carried = W[:, j, link_columns] @ values[link_columns]  # s_J: the link torque the spring carries
            damping = values[d_index] if d_index is not None else 0.0
            compliance = np.where(keep, 1.0 / (values[k_index] + 1j * omega * damping), 0.0)
            deflection = np.fft.rfft(carried) * compliance
            q[:, j] = theta[:, j] - np.fft.irfft(deflection, n=n)
            qd[:, j] = thetad[:, j] - np.fft.irfft(1j * omega * deflection, n=n)
            qdd[:, j] = thetadd[:, j] + np.fft.irfft(omega**2 * deflection, n=n)
        if np.max(np.abs(q - previous)) <= FIXED_POINT_TOLERANCE:
            break
    return dataclasses.replace(processed, q=q, qd=qd, qdd=qdd, theta=theta, thetad=thetad, thetadd=thetadd)


def _drive_regressor(robot, processed: ProcessedSignals, evaluate_at: np.ndarray, omega_max: float, source: str):
    """(drive rows of the regressor (N, dof, nb), their keep mask, the reconstructed states) at the link states
    that the base values ``evaluate_at`` reconstruct."""
    from robid.elastic.layout_rows import drive_rows, elastic_rows

    states = link_states(robot, processed, evaluate_at, omega_max)
    W, _, keep = elastic_rows(robot, states, source)
    rows = list(drive_rows(robot))
    return W[:, rows], keep[:, rows], states


def motor_side_block(robot, processed: ProcessedSignals, values: np.ndarray, source: str, linearise: bool = True):
    """(W (N, dof, nb), tau (N, dof), keep (N, dof), processed with the reconstructed link states, the
    band-limited measured torque and the correlation of the band-limited rows, note).

    ``linearise``: the drive rows linearised at ``values`` for a Gauss-Newton step (module docstring). Otherwise
    the model as it predicts: the k and d columns zero (they act through the reconstructed states) and the
    target the measured drive torque, so that W @ values is the predicted drive torque."""
    check_motor_side_run(robot, processed, source)
    omega_max, note = band_limit(robot, processed)
    values = np.asarray(values, dtype=float)
    W, keep, states = _drive_regressor(robot, processed, values, omega_max, source)
    linearised = np.zeros((W.shape[0], robot.dof))  # the k and d columns times the linearisation point
    for k_index, d_index in spring_parameters(robot).values():
        for index in (k_index, d_index):
            if index is None:
                continue
            if not linearise:
                W[:, :, index] = 0.0
                continue
            h = DIFFERENCE_STEP * max(abs(values[index]), 1.0)
            plus, minus = values.copy(), values.copy()
            plus[index] += h
            minus[index] -= h
            column = (_drive_regressor(robot, processed, plus, omega_max, source)[0] @ values
                      - _drive_regressor(robot, processed, minus, omega_max, source)[0] @ values) / (2 * h)
            W[:, :, index] = column
            linearised += column * values[index]
    band, kept = _band_filter(processed, omega_max)
    W = band(processed.apply_filter(W.reshape(W.shape[0], -1))).reshape(W.shape)
    measured = band(np.asarray(processed.tau, dtype=float))
    tau = measured + band(processed.apply_filter(linearised))
    noise = RowNoise(transpose=band, power_gain=(2 * kept - 1) / W.shape[0])
    states = dataclasses.replace(states, row_noise=noise, tau=measured)
    return W, tau, np.asarray(keep, dtype=bool), states, note

