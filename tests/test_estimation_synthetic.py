"""Synthetic linear problems for the estimation tests (no dependency on the symbolic core).

Imported by the other ``test_estimation_*`` files; its own test checks the generator itself.
"""

from __future__ import annotations

import numpy as np


def smooth_regressor(n: int, dof: int, nb: int, seed: int = 0, period: float = 10.0) -> np.ndarray:
    """(n, dof, nb) regressor of smooth periodic signals (like Fourier-excited joint states), full rank.

    Each joint row uses its own random combination of a few harmonics per column, so columns are correlated
    but independent, and every joint sees a different subset strongly.
    """
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, period, n, endpoint=False)
    w0 = 2 * np.pi / period
    harmonics = np.arange(1, 6)
    basis = np.concatenate([np.sin(np.outer(t, harmonics * w0)), np.cos(np.outer(t, harmonics * w0))], axis=1)
    basis = np.concatenate([basis, np.ones((n, 1))], axis=1)  # (n, 11)
    W = np.einsum("tk,jpk->tjp", basis, rng.normal(size=(dof, nb, basis.shape[1])))
    # columns of very different magnitudes, as in a real regressor (kg vs kg m^2 vs N m s)
    W *= 10.0 ** rng.uniform(-1, 1, size=nb)
    return W


def linear_problem(n=400, dof=3, nb=8, noise=(0.05, 0.5, 2.0), seed=0, W_seed=1):
    """Regressor, true parameters, noisy torque and the per-joint noise std."""
    W = smooth_regressor(n, dof, nb, seed=W_seed)
    rng_b = np.random.default_rng(W_seed + 100)
    beta = rng_b.uniform(0.5, 3.0, nb) * rng_b.choice([-1.0, 1.0], nb)
    rng = np.random.default_rng(seed)
    noise = np.asarray(noise, dtype=float)
    tau = W @ beta + rng.normal(size=(n, dof)) * noise
    return W, beta, tau, noise


def test_generator_is_full_rank_and_deterministic():
    W, beta, tau, noise = linear_problem()
    A = W.reshape(-1, W.shape[2])
    assert np.linalg.matrix_rank(A) == W.shape[2]
    W2, beta2, tau2, _ = linear_problem()
    assert np.array_equal(tau, tau2) and np.array_equal(beta, beta2)


def random_body(rng: np.random.Generator, mass=(1.0, 10.0), com_box=0.2) -> np.ndarray:
    """Standard parameters (m, mx, ..., Izz about the frame origin) of a random physically consistent body."""
    from robid.model.robot_model import Link

    m = rng.uniform(*mass)
    c = rng.uniform(-com_box, com_box, 3)
    a, b = rng.uniform(0.05, 1.0, 2)
    cc = rng.uniform(abs(a - b) + 0.01, a + b)  # principal moments satisfying the triangle inequalities
    R, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    I = R @ np.diag([a, b, cc]) @ R.T * m * 0.05
    link = Link(mass=m, com=tuple(c), inertia_com=(I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]))
    return link.standard_parameters()


def robot_like_problem(seed=3, n=600, noise_fraction=(0.004, 0.04, 0.1), joints=("A1", "A2", "A3"), nb=24):
    """A standard-parameter problem with a base structure: tau = W_b (G theta) + noise.

    ``theta`` is physically consistent (three random bodies, positive rotor inertia and friction); ``G`` groups
    the standard parameters into ``nb`` base parameters (some standard parameters are unidentifiable).
    """
    from robid.model.robot_model import INERTIAL_PARAMETERS

    rng = np.random.default_rng(seed)
    names = (
        [f"{p}_{j}" for j in joints for p in INERTIAL_PARAMETERS]
        + [f"Ia_{j}" for j in joints]
        + [f"{f}_{j}" for j in joints for f in ("fv", "fc")]
    )
    P = len(names)
    theta = np.concatenate(
        [random_body(rng) for _ in joints] + [rng.uniform(0.1, 1, len(joints)), rng.uniform(0.5, 2, 2 * len(joints))]
    )
    G = np.zeros((nb, P))
    perm = rng.permutation(P)
    for i in range(nb):
        G[i, perm[i]] = 1.0
    for k in perm[nb:]:
        G[rng.choice(nb, 2, replace=False), k] = rng.uniform(-1, 1, 2)
    G[:, perm[-3:]] = 0.0  # three unidentifiable standard parameters
    Wb = smooth_regressor(n, len(joints), nb, seed=seed + 2)
    beta = G @ theta
    clean = Wb @ beta
    noise = np.asarray(noise_fraction) * clean.std(axis=0)
    tau = clean + np.random.default_rng(seed + 1).normal(size=clean.shape) * noise
    return names, theta, G, Wb, tau, noise
