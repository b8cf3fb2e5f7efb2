"""The compressed problem of a streaming QR (robid.estimation.compressed) against the full stacked problem.

References, independent of the QR path: Gram matrices and residual norms summed sample by sample; the weighted
estimate from numpy's SVD least squares on the full stacked rows; the sandwich covariance written out densely
from its textbook form ``B A^T Omega Sigma Omega A B`` (Sigma diagonal for independent rows).
"""

from __future__ import annotations

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.estimation import ols, wls
from robid.estimation.compressed import StreamingQR, compress

N, DOF, P = 900, 3, 6


def problem(seed=0):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(N, DOF, P)) * np.logspace(-2, 2, P)  # columns of very different sizes
    W[:, 2, :3] = 0.0  # columns a joint never excites
    beta = rng.normal(size=P)
    tau = W @ beta + rng.normal(size=(N, DOF)) * np.array([3.0, 0.1, 1.0])
    W[100:180, 1] = 0.0  # rows a data selection left out
    tau[100:180, 1] = 0.0
    return W, tau


def test_streaming_qr_keeps_every_joints_gram_matrix_and_residual_norm():
    W, tau = problem()
    acc = StreamingQR(DOF, P)
    for start, stop in ((0, 7), (7, 400), (400, 401), (401, N)):  # uneven chunks, one smaller than the width
        acc.add(W[start:stop], tau[start:stop])
    c = acc.problem()
    beta = np.random.default_rng(1).normal(size=P)
    for j in range(DOF):
        gram = sum(np.outer(W[n, j], W[n, j]) for n in range(N))
        assert np.allclose(c.W[:, j].T @ c.W[:, j], gram, rtol=1e-12, atol=1e-9 * np.abs(gram).max())
        assert np.allclose(c.W[:, j].T @ c.tau[:, j], sum(W[n, j] * tau[n, j] for n in range(N)), rtol=1e-10)
        full = np.sum((tau[:, j] - W[:, j] @ beta) ** 2)
        assert np.isclose(np.sum(c.residual(beta)[:, j] ** 2), full, rtol=1e-10)
    assert c.rows.tolist() == [N, N - 80, N]
    assert c.samples == N and c.total_rows == N * DOF


def test_wls_equals_the_dense_weighted_least_squares_and_sandwich():
    W, tau = problem()
    fit = wls(W, tau, noise_std=[3.0, 0.1, 1.0])
    w = 1.0 / np.array([3.0, 0.1, 1.0])
    A = (W * w[None, :, None]).reshape(-1, P)
    y = (tau * w).reshape(-1)
    beta = np.linalg.lstsq(A, y, rcond=None)[0]
    assert np.allclose(fit.values, beta, rtol=1e-10, atol=1e-12)
    # covariance with the residual's per-joint variances (the sigma the fit reports), written out densely
    B = np.linalg.inv(A.T @ A)
    row_var = np.tile(fit.sigma**2 * w**2, N)
    cov = B @ (A.T * row_var) @ A @ B
    assert np.allclose(fit.covariance, cov, rtol=1e-9, atol=1e-12 * np.abs(cov).max())
    residual = tau - W @ fit.values
    assert np.allclose(fit.residual, residual)
    assert fit.dof_residual == N * DOF - 80 - P


def test_iterated_wls_and_ols_are_those_of_the_full_problem():
    W, tau = problem(2)
    for fn in (ols, wls):
        fit = fn(W, tau)
        w = fit.weights
        A = (W * w[None, :, None]).reshape(-1, P)
        beta = np.linalg.lstsq(A, (tau * w).reshape(-1), rcond=None)[0]
        assert np.allclose(fit.values, beta, rtol=1e-10)
    # the re-weighted steps found each joint's noise level (3, 0.1, 1)
    assert np.allclose(wls(W, tau).sigma, [3.0, 0.1, 1.0], rtol=0.1)


def test_compress_refuses_non_finite_values_with_their_index():
    W, tau = problem()
    W[500, 1, 4] = np.nan
    with pytest.raises(RobidInputError, match=r"regressor: non-finite value at index \(500, 1, 4\)"):
        compress(W, tau, chunk=128)
