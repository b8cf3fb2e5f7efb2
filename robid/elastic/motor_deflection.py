"""The deflection delta = q_motor / N - q_link of the elastic joints along a motion (robid.elastic.motor_reference,
Spong's reduced model, Lismonde 2020 section 2.2): K delta + D_s delta' = -tau_L(t), solved per harmonic for a
periodic Fourier motion and by exact integration of the piecewise-Hermite torque otherwise; held at the rest
deflection outside the motion's span."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import scipy.special

from robid.errors import RobidInputError
from robid.excitation.fourier import FourierTrajectory, phases

if TYPE_CHECKING:  # the motion, link torque and drives of robid.elastic.motor_reference (attributes only)
    from robid.elastic.motor_reference import _Drives, _LinkTorque, _Motion

#: harmonics of the link torque kept: those above SPECTRUM_TAIL times the largest of the joint
SPECTRUM_TAIL = 1e-14
#: samples per period of the link torque: the first power of 2 >= max(MIN_SAMPLES, 64 H), doubled up to MAX_SAMPLES
MIN_SAMPLES = 256
MAX_SAMPLES = 2**20


def harmonic_deflection(motion: _Motion, link: _LinkTorque, drives: _Drives, t: np.ndarray) -> list[np.ndarray]:
    """[delta, delta', delta''] (N, dof) from the exact per-harmonic solution delta_h = -tau_h / (K + j h w D_s),
    plus, for a start from standstill, the homogeneous solution c e^{-K t / D_s} that starts delta at the
    standstill deflection."""
    traj = motion.periodic_series
    period = float(traj.period)
    coefficients = _link_torque_spectrum(traj, link)
    jhw = 2j * math.pi / period * np.arange(coefficients.shape[0])[:, None]
    e, damped = drives.elastic, drives.damped
    spectrum = -coefficients[:, e] / (drives.stiffness[e] + jhw * drives.damping[e])
    a = drives.stiffness[damped] / drives.damping[damped]
    c = np.zeros(int(damped.sum()))
    if motion.span is not None:
        rest = _rest_deflection(link, drives, motion.evaluate(np.array([motion.span[0]]), 0))
        c = rest[damped] - _series(spectrum[:, damped[e]], period, np.array([motion.span[0]]))[0]

    def values(times: np.ndarray) -> list[np.ndarray]:
        out = [np.zeros((times.size, link.dof)) for _ in range(3)]
        start = 0.0 if motion.span is None else motion.span[0]
        decay = c * np.exp(-a * (times[:, None] - start))
        for k in range(3):
            out[k][:, e] = _series(spectrum * jhw**k, period, times)
            out[k][:, damped] += (-a) ** k * decay
        return out

    if motion.span is None:
        return values(t)
    start, end = motion.span
    inside = (t >= start) & (t <= end)
    out = [np.zeros((t.size, link.dof)) for _ in range(3)]
    for k, x in enumerate(values(t[inside])):
        out[k][inside] = x
    _hold(out, t, motion, link, drives, values(np.array([end]))[0][0])
    return out


def _link_torque_spectrum(traj: FourierTrajectory, link: _LinkTorque) -> np.ndarray:
    """Complex amplitudes c_h, h = 0..H_kept, of the T-periodic tau_L(t) = Re sum_h c_h e^{j h w t}, (H_kept + 1,
    dof): DFT of one period, samples doubled until every harmonic above SPECTRUM_TAIL of its joint's largest lies
    in the lowest eighth of the spectrum; the rest (rounding) is dropped."""
    n = 1 << (max(MIN_SAMPLES, 64 * traj.harmonics) - 1).bit_length()
    while n <= MAX_SAMPLES:
        tk = np.arange(n) * (float(traj.period) / n)
        tau = link(*(traj.derivative(tk, k) for k in range(3)))
        c = np.fft.rfft(tau, axis=0) / n
        c[1:] *= 2.0
        magnitude = np.abs(c)
        significant = np.flatnonzero(np.any(magnitude > SPECTRUM_TAIL * magnitude.max(axis=0), axis=1))
        top = int(significant[-1]) if significant.size else 0
        if top <= n // 8:
            return c[: top + 1]
        n *= 2
    raise RobidInputError(
        f"trajectory: the link torque keeps harmonics beyond {MAX_SAMPLES // 8} of the period; the per-harmonic "
        "deflection needs a band-limited torque (a smoother or slower trajectory)"
    )


def _series(coefficients: np.ndarray, period: float, t: np.ndarray) -> np.ndarray:
    """Re sum_h c_h e^{j h w t}, (N, m) for c (H + 1, m); phases reduced modulo the period."""
    out = np.empty((t.size, coefficients.shape[1]))
    top = coefficients.shape[0] - 1
    for s in range(0, t.size, 4096):
        chunk = t[s : s + 4096]
        ph = np.hstack([np.zeros((chunk.size, 1)), phases(chunk, period, top)]) if top else np.zeros((chunk.size, 1))
        out[s : s + 4096] = np.cos(ph) @ coefficients.real - np.sin(ph) @ coefficients.imag
    return out


def _rest_deflection(link: _LinkTorque, drives: _Drives, pose: np.ndarray) -> np.ndarray:
    """-K^-1 tau_L(pose, 0, 0) on elastic joints (dof,), 0 elsewhere: the standstill deflection."""
    zeros = np.zeros_like(pose)
    tau = link(pose, zeros, zeros)[0]
    return np.where(drives.elastic, -tau / drives.stiffness.clip(min=1e-300), 0.0)


def _hold(out: list[np.ndarray], t: np.ndarray, motion: _Motion, link, drives: _Drives, at_end: np.ndarray) -> None:
    """Outside the motion (elastic joints): before it the standstill deflection; after it the final standstill
    deflection, to which a damped joint relaxes as e^{-K (t - end) / D_s} from ``at_end`` (delta at the end of the
    motion, (dof,)): the links hold still while the motors settle."""
    start, end = motion.span
    e, damped = drives.elastic, drives.damped
    for when, pose_time in ((t < start, start), (t > end, end)):
        if when.any():
            rest = _rest_deflection(link, drives, motion.evaluate(np.array([pose_time]), 0))
            out[0][np.ix_(when, e)] = rest[e]
            out[1][when] = 0.0
            out[2][when] = 0.0
    after = t > end
    if after.any() and damped.any():
        final = _rest_deflection(link, drives, motion.evaluate(np.array([end]), 0))
        a = drives.stiffness[damped] / drives.damping[damped]
        decay = np.exp(-a * (t[after, None] - end)) * (at_end[damped] - final[damped])
        for k in range(3):
            out[k][np.ix_(after, damped)] += (-a) ** k * decay


def time_domain_deflection(motion, link, drives, t, derivs, tau, max_step) -> list[np.ndarray]:
    """[delta, delta', delta''] (N, dof): undamped joints algebraic (-K^-1 tau_L and its rates), damped joints by
    exact exponential integration from the standstill deflection at the start (module docstring). The rates are
    taken on the integration grid, which holds the output times inside the motion; outside it the path is at rest."""
    undamped, damped = drives.undamped, drives.damped
    start, end = motion.span
    inside = (t >= start) & (t <= end)
    if motion.samples is not None:
        grid = np.array(motion.samples.t)
    elif damped.any():
        uniform = np.linspace(start, end, max(1, math.ceil((end - start) / max_step)) + 1)
        grid = np.union1d(uniform, t[inside])
    else:
        grid = np.unique(t[inside])
    rate1, rate2 = np.zeros_like(tau), np.zeros_like(tau)
    if grid.size:
        grid_derivs = motion.derivatives(grid)
        grid_rates = link.rates(grid_derivs)
        rows = np.searchsorted(grid, t[inside])
        rate1[inside], rate2[inside] = grid_rates[0][rows], grid_rates[1][rows]
    k = np.where(drives.elastic, drives.stiffness, 1.0)
    out = [np.where(undamped, -x / k, 0.0) for x in (tau, rate1, rate2)]
    if not damped.any():
        return out
    kd, dd = drives.stiffness[damped], drives.damping[damped]
    rest = _rest_deflection(link, drives, motion.evaluate(np.array([start]), 0))
    grid_tau = link(*grid_derivs[:3])
    delta = _integrate_deflection(grid, grid_tau[:, damped], *(r[:, damped] for r in grid_rates), kd, dd, rest[damped])
    d0 = delta[rows]
    d1 = -(kd * d0 + tau[inside][:, damped]) / dd
    d2 = -(kd * d1 + rate1[inside][:, damped]) / dd
    for order, value in enumerate((d0, d1, d2)):
        out[order][np.ix_(inside, damped)] = value
    at_end = np.zeros(link.dof)
    at_end[damped] = delta[-1]
    _hold(out, t, motion, link, drives, at_end)
    return out


def _integrate_deflection(grid, tau, rate1, rate2, stiffness, damping, delta0) -> np.ndarray:
    """delta (M, m) at the grid nodes of D delta' + K delta = -tau from delta0: per step h, delta_{i+1} = e^{-a h}
    delta_i - (h / D) int_0^1 e^{-a h v} p(v) dv, p the quintic Hermite interpolant of tau(t_{i+1} - h v); the
    integral is sum_k m_k(a h) times p's monomial coefficients (exact for any a h)."""
    h = np.diff(grid)[:, None]
    z = stiffness / damping * h
    weights = _exponential_moments(z) @ _HERMITE  # (M - 1, m, 6): weights of the six Hermite data
    data = np.stack([tau[1:], -h * rate1[1:], h**2 * rate2[1:], tau[:-1], -h * rate1[:-1], h**2 * rate2[:-1]], axis=-1)
    forced = h * np.sum(weights * data, axis=-1) / damping
    decay = np.exp(-z)
    delta = np.empty((grid.size, stiffness.size))
    delta[0] = delta0
    for i in range(grid.size - 1):
        delta[i + 1] = decay[i] * delta[i] - forced[i]
    return delta


def _hermite_monomials() -> np.ndarray:
    """(6 monomials, 6 data): column d holds the coefficients of v^0..v^5 of the quintic Hermite basis function of
    datum d = p(0), p'(0), p''(0), p(1), p'(1), p''(1)."""
    k = np.arange(6)
    functionals = np.array([k == 0, k == 1, 2.0 * (k == 2), np.ones(6), k, k * (k - 1)], dtype=float)
    return np.linalg.inv(functionals)


_HERMITE = _hermite_monomials()


def hermite_basis(u: np.ndarray) -> np.ndarray:
    """The six quintic Hermite basis functions at ``u`` in [0, 1], shape u.shape + (6,), in the data order of
    :func:`_hermite_monomials` (derivatives taken in u)."""
    u = np.asarray(u, dtype=float)
    return (u[..., None] ** np.arange(6)) @ _HERMITE


def _exponential_moments(z: np.ndarray) -> np.ndarray:
    """m_k(z) = int_0^1 e^{-z v} v^k dv, k = 0..5, shape z.shape + (6,): series for z <= 1, else k! z^-(k+1)
    P(k+1, z) with the regularised incomplete gamma function (both to rounding). Computed once per distinct z
    (the grid is mostly uniform)."""
    values, inverse = np.unique(np.asarray(z, dtype=float), return_inverse=True)
    out = np.empty(values.shape + (6,))
    small = values <= 1.0
    zs, zl = values[small], values[~small]
    for k in range(6):
        term, total = np.ones_like(zs), np.zeros_like(zs)
        for n in range(30):  # sum_n (-z)^n / (n! (n + k + 1))
            total += term / (n + k + 1)
            term = term * -zs / (n + 1)
        out[small, k] = total
        out[~small, k] = math.factorial(k) / zl ** (k + 1) * scipy.special.gammainc(k + 1, zl)
    return out[inverse.reshape(np.shape(z))]
