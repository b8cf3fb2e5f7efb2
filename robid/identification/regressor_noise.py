"""The noise the processed signals carry into the base regressor, for the errors-in-variables estimate
(robid.estimation.errors_in_variables, ``--method eiv``).

Rigid layout. The base regressor is linear in the accelerations: ``Y(q, qd, qdd) = Y(q, qd, 0) + sum_k J_k(q)
qdd_k`` with ``J_k(q) = Y(q, 0, e_k) - Y(q, 0, 0)`` (joint k's unit acceleration; the Coulomb and offset columns
cancel). Noise delta_k on the processed acceleration of joint k (standard deviation ``s_k`` =
``NoiseEstimate.qdd_std_processed``, independent between joints) puts ``D_t = sum_k J_k(q_t) delta_k(t)`` into
sample t's rows, so joint row j's noise Gram matrix is ``S_j = sum_t sum_k s_k^2 J_k(q_t)[j]^T J_k(q_t)[j]`` over
its used rows. Only the per-sample variance enters, so the correlation of delta over time (spectral
differentiation in a band) does not matter -- as long as the regressor is not filtered again: the periodic paths
with the torque band ``all`` (period averaging only). Velocity noise is left out (1e3-1e5 times smaller relative
to the motion, docs/estimation.md "Errors in the regressor").

Elastic layout (docs/elastic.md section 2; rows: the link rows, then the drive rows = motor + link row,
robid.identification.datasets.elastic_rows). Here the position and velocity noise cannot be left out: the
spring column is the deflection q_J - theta_J and the damping column its rate qd_J - thetad_J, both small
differences of two encoders, so their noise is not small against them. To first order in the noise (Fuller
1987, sec. 2.2: the corrected estimate needs E[D_t^T D_t] only),

    D_t = sum_{e, k} [ A_ek(t) n_ek + B_ek(t) n'_ek + C_ek(t) n''_ek ]

over the encoders e (link: q, motor: theta) of every joint k, with n_ek the noise on the processed position of
encoder e of joint k and n', n'' that of the velocity and acceleration differentiated from it, A = dY/dx,
B = dY/dx', C = dY/dx'' at sample t (C exact by unit accelerations, Y being linear in them; A and B by central
differences: exact on the deflection columns, which are linear, and on the Coriolis terms, which are quadratic).
The two encoders and the joints are independent. For one encoder, the processed signal and its derivatives are
built from the same noisy harmonics X_h (x^(n) = sum_h W_h (j h omega)^n X_h e^{j h omega t}), so with
V_n = sum_h w_h W_h^2 (h omega)^(2n) var X_h (robid.signals.noise.processed_variance, ``x``, ``xd``, ``xdd``
std squared):

    E[n n] = V_0,  E[n' n'] = V_1,  E[n'' n''] = V_2,  E[n n'] = E[n' n''] = 0,  E[n n''] = -V_1

(the odd powers of j h omega are imaginary and cancel between h and -h). Hence per row r

    S_r = sum_t sum_{e,k} V0 A^T A + V1 B^T B + V2 C^T C - V1 (A^T C + C^T A)      (rows r of A, B, C at t)

with V from ``NoiseEstimate.q*_std_processed`` (link encoders) and ``theta*_std_processed`` (motor encoders,
their own scatter between periods). A rigid joint has no motor coordinate: its theta terms vanish.
"""

from __future__ import annotations

import numpy as np

from robid.defaults import PERIODIC, REPEATING_MODES
from robid.errors import RobidOptionError
from robid.identification.datasets import DataSet

#: central-difference steps of the position (rad or m) and velocity (rad/s or m/s) Jacobians of the elastic
#: layout: far below any kept velocity (no sign change of a Coulomb column inside the step), far above rounding
POSITION_STEP = 1e-6
VELOCITY_STEP = 1e-6


def regressor_noise_gram(robot, dataset: DataSet, torque_band: str) -> np.ndarray:
    """(rows, nb, nb): per row, the Gram matrix of the regressor noise over its used rows (module docstring)."""
    processed = dataset.processed
    if dataset.reconstructed_link:
        raise RobidOptionError("method", "eiv: motor-encoder-only runs are not supported (their link states are "
                               "reconstructed, not measured)")
    if processed.mode not in REPEATING_MODES or torque_band != "all":
        raise RobidOptionError(None,
            f"{dataset.source}: {{method}} eiv needs the periodic path with torque band 'all' (the regressor must not "
            f"be filtered again after differentiation); this run is {processed.mode} with torque band {torque_band}"
        )
    if robot.motor_joints:
        return _elastic_gram(robot, dataset)
    s = np.asarray(processed.noise.qdd_std_processed, dtype=float)
    nb = len(robot.base_parameters().names)
    gram = np.zeros((robot.dof, nb, nb))
    for _encoder, k, derivatives in encoder_derivatives(robot, processed, np.asarray(processed.keep, dtype=bool)):
        if np.isfinite(s[k]) and s[k] > 0:
            J = derivatives()[2]
            gram += s[k] ** 2 * np.einsum("tjp,tjq->jpq", J, J)
    return gram


def _elastic_gram(robot, dataset: DataSet) -> np.ndarray:
    """The elastic layout's noise Gram (module docstring), rows as in ``dataset.W``."""
    processed = dataset.processed
    noise = processed.noise
    if processed.mode != PERIODIC or noise.theta_std_processed is None:
        raise RobidOptionError(None,
            f"{dataset.source}: {{method}} eiv in the elastic layout needs the averaged periodic path (the motor "
            f"encoders' noise comes from the scatter of theta between periods); this run is {processed.mode}"
        )
    rows = dataset.W.shape[1]
    keep = dataset.W.any(axis=2)  # rows left out by the data selection are zero
    link = [np.square(np.asarray(v, dtype=float))
            for v in (noise.q_std_processed, noise.qd_std_processed, noise.qdd_std_processed)]
    motor = [np.square(np.asarray(v, dtype=float))
             for v in (noise.theta_std_processed, noise.thetad_std_processed, noise.thetadd_std_processed)]
    nb = dataset.W.shape[2]
    gram = np.zeros((rows, nb, nb))
    for encoder, k, derivatives in encoder_derivatives(robot, processed, keep):
        variances = link if encoder == LINK_ENCODER else motor
        v0, v1, v2 = (float(v[k]) if np.isfinite(v[k]) else 0.0 for v in variances)
        A, B, C = (derivatives()[order] for order in range(3))
        AC = _gram(A, C)
        gram += v0 * _gram(A, A) + v1 * _gram(B, B) + v2 * _gram(C, C) - v1 * (AC + AC.transpose(0, 2, 1))
    return gram


#: the first state channel of each encoder in :func:`encoder_derivatives` (q, qd, qdd; theta, thetad, thetadd)
LINK_ENCODER, MOTOR_ENCODER = 0, 3


def encoder_derivatives(robot, processed, keep: np.ndarray):
    """(encoder, joint k, () -> {order: dW/dx^(order) (N, rows, nb)}) per encoder of every joint, zero on rows not
    in ``keep``: the elastic layout's link and motor encoders with the position, velocity and acceleration
    derivatives of its rows (:func:`regressor_derivative`); the rigid layout's link encoders with the acceleration
    only (unit accelerations, the regressor being linear in them). The derivatives are computed when asked for.
    Shared by the noise Gram (here) and the noise model's meat (robid.identification.regressor_noise_meat)."""
    if robot.motor_joints:
        evaluate = drive_row_regressor(robot)
        states = [np.asarray(x, dtype=float) for x in (processed.q, processed.qd, processed.qdd, processed.theta,
                                                         processed.thetad, processed.thetadd)]
        for encoder, joints in ((LINK_ENCODER, range(robot.dof)), (MOTOR_ENCODER, robot.motor_joints)):
            for k in joints:
                yield encoder, k, (lambda encoder=encoder, k=k: {
                    order: regressor_derivative(evaluate, states, encoder + order, k, keep) for order in range(3)})
        return
    base = robot.base_parameters()
    q = np.asarray(processed.q, dtype=float)
    zero = np.zeros_like(q)
    at_rest = base.regressor(q, zero, zero)

    def acceleration(k: int) -> dict:
        unit = zero.copy()
        unit[:, k] = 1.0
        return {2: (base.regressor(q, zero, unit) - at_rest) * keep[:, :, None]}

    for k in range(robot.dof):
        yield LINK_ENCODER, k, (lambda k=k: acceleration(k))


def _gram(X: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """sum_t X[t, r]^T Z[t, r] per row r: (rows, nb, nb)."""
    return np.matmul(X.transpose(1, 2, 0), Z.transpose(1, 0, 2))


def drive_row_regressor(robot):
    """(q, qd, qdd, theta, thetad, thetadd) -> the elastic layout's base regressor with its drive rows (motor +
    link row, robid.identification.datasets.elastic_rows), not filtered."""
    base = robot.base_parameters()
    motor_rows = [robot.dof + i for i in range(len(robot.motor_joints))]
    link_rows = list(robot.motor_joints)

    def evaluate(q, qd, qdd, theta, thetad, thetadd):
        W = base.regressor(q, qd, qdd, motor=(theta, thetad, thetadd))
        W[:, motor_rows] += W[:, link_rows]
        return W

    return evaluate


def regressor_derivative(evaluate, states: list[np.ndarray], channel: int, k: int, keep: np.ndarray) -> np.ndarray:
    """d W / d states[channel][:, k] at every sample (N, rows, nb), zero on rows not used: exact by a unit step
    for the accelerations (channels 2 and 5, W linear in them), central differences for positions and
    velocities."""
    step = 1.0 if channel in (2, 5) else (POSITION_STEP if channel in (0, 3) else VELOCITY_STEP)

    def at(offset: float) -> np.ndarray:
        moved = list(states)
        moved[channel] = states[channel].copy()
        moved[channel][:, k] += offset
        return evaluate(*moved)

    if channel in (2, 5):
        J = at(step) - evaluate(*states)
    else:
        J = (at(step) - at(-step)) / (2.0 * step)
    return J * keep[:, :, None]
