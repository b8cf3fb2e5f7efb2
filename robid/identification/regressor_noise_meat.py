"""The errors-in-variables covariance from the noise the signal stage measured: the meat of the sandwich computed
from the noise model instead of the residuals (robid.estimation.errors_in_variables, ``--method eiv``).

The corrected estimate solves ``psi(beta) = sum_r w_r^2 W_r^T (tau_r - W_r beta) + S_w beta = 0``. With the
regressor observed as ``W = W0 + D`` and ``tau = W0 beta + eps``, to first order in the noise (Fuller 1987,
sec. 2.2; the second-order term D^T D beta - S beta was measured at 2-11 % of the std on the demo run)

    psi = sum_r w_r^2 W_r^T (eps_r - D_r beta)

with D linear in the processed noise of every encoder (robid.identification.regressor_noise:
``D_t = sum_{e,k} A n + B n' + C n''``, ``G_0, G_1, G_2 = A, B, C`` the regressor's derivatives by the position,
velocity and acceleration of encoder e of joint k). The processed noise of one encoder is rebuilt from averaged
DFT coefficients that are independent between harmonics, ``n^(a)(t) = sum_h (j h omega)^a X_h e^{j h omega t}``
with ``E|X_h|^2 = P_h = W_h^2 var X_h`` (``NoiseEstimate.spectrum_q_processed``/``spectrum_theta_processed``), so

    sum_t sum_a Z_a(t) n^(a)(t) = sum_h X_h F_h,   F_h = sum_a (j h omega)^a sum_t Z_a(t) e^{j h omega t},
    Z_a(t) = sum_r w_r^2 W_r(t) (G_a(t)_r . beta)

and its covariance is ``sum_h P_h Re(F_h F_h^H)`` over every bin h of the period (both signs). Encoders are
independent of each other and of the torque noise, which after the torque band ``all`` that eiv requires is white
with the standard deviation ``tau_std_processed``: ``sum_r w_r^4 sigma_r^2 W_r^T W_r`` over the rows whose target
is a measured torque (not the link rows of elastic joints, whose target is zero).

Why the residuals alone are not enough: the residual's smoothed periodogram is depleted where the regressor lives
-- the fitted parameters absorb the noise at the motion's harmonics, where ``|F W_h|`` is large -- so the
residual-based meat understated the stiffness and damping std 1.2-1.8 times on the demo's elastic run, while this
meat matched a simulation of the same noise through the estimator (docs/estimation.md "Errors in the regressor").
The residuals still see what the noise model does not (model errors), so the estimate keeps the larger of the two
in every direction (robid.estimation.errors_in_variables).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robid.defaults import PERIODIC
from robid.identification.datasets import DataSet
from robid.identification.regressor_noise import LINK_ENCODER, MOTOR_ENCODER, encoder_derivatives


def noise_model_meat(robot, sets: Sequence[DataSet], W: np.ndarray, beta: np.ndarray,
                     weights: np.ndarray) -> np.ndarray | None:
    """(nb, nb): the first-order covariance of the estimating equation from the noise model (module docstring),
    summed over the data sets, whose blocks of rows ``W`` stacks in order; None where a set has no noise spectrum
    (not the averaged periodic path), since then the model cannot be evaluated."""
    W = np.asarray(W, dtype=float)
    w2 = np.asarray(weights, dtype=float) ** 2
    meat = np.zeros((W.shape[2], W.shape[2]))
    start = 0
    for dataset in sets:
        n = dataset.processed.q.shape[0]
        block = W[start:start + n]
        start += n
        processed = dataset.processed
        if (processed.mode != PERIODIC or processed.period is None
                or processed.noise.spectrum_q_processed is None):
            return None
        meat += _torque_meat(robot, block, w2, processed.noise.tau_std_processed)
        meat += _encoder_meat(robot, dataset, block, w2, np.asarray(beta, dtype=float))
    return 0.5 * (meat + meat.T)


def _torque_meat(robot, W: np.ndarray, w2: np.ndarray, tau_std: Sequence[float]) -> np.ndarray:
    """sum_r w_r^4 sigma_r^2 W_r^T W_r over the rows with a measured torque (white after the band 'all')."""
    joint_of_row = list(range(robot.dof)) + list(robot.motor_joints)
    link_rows_of_springs = set(robot.motor_joints) if W.shape[1] > robot.dof else set()
    meat = np.zeros((W.shape[2], W.shape[2]))
    for r in range(W.shape[1]):
        if r in link_rows_of_springs:
            continue
        sigma = float(tau_std[joint_of_row[r]])
        meat += w2[r] ** 2 * sigma**2 * (W[:, r].T @ W[:, r])
    return meat


def _encoder_meat(robot, dataset: DataSet, W: np.ndarray, w2: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """sum over encoders of sum_h P_h Re(F_h F_h^H) (module docstring)."""
    processed = dataset.processed
    m, nb = W.shape[0], W.shape[2]
    keep = W.any(axis=2)
    signed = np.fft.fftfreq(m, 1.0 / m)
    omega = 2.0 * np.pi / processed.period
    meat = np.zeros((nb, nb))
    noise = processed.noise
    spectra = {LINK_ENCODER: noise.spectrum_q_processed, MOTOR_ENCODER: noise.spectrum_theta_processed}
    for encoder, k, derivatives in encoder_derivatives(robot, processed, keep):
        if spectra[encoder] is None:
            continue
        bins = np.asarray(spectra[encoder], dtype=float)[:, k][np.abs(signed).astype(int)]
        if not np.any(bins > 0):
            continue
        F = np.zeros((m, nb), dtype=complex)
        for order, G in derivatives().items():
            Z = np.einsum("r,trp,tr->tp", w2, W, G @ beta)
            F += ((1j * signed * omega) ** order)[:, None] * (m * np.fft.ifft(Z, axis=0))
        meat += np.real((F.conj().T * bins) @ F)
    return meat

