"""Drive-gain calibration from a known payload: a per-joint scale of the measured torque.

The measured joint torque of a current-controlled robot is ``K_j i_j`` with drive gains ``K_j`` that are known only
up to errors (on the UR10e the authors fixed ``K_1 = 10 N m/A`` by a constraint, so their common scale is not
known). A payload of known mass ``m`` (and, if known, COM ``c``) calibrates them (Gautier & Briot, "Global
identification of joint drive gains and dynamic parameters of robots", J. Dyn. Sys. Meas. Control 136(5), 2014:
the known payload parameters fix the scale that current measurements alone leave free). With an unloaded run of
the same trajectory as reference (robid.payload.data), every error of the robot's model cancels and joint j's
row of the loaded-minus-unloaded torque is

    g_j dtau_j(t) = Y_j(t) pi_p(m, h)  +  dFc_j sign(qd_j) + dFv_j qd_j                             (1)

``g_j`` the true-over-measured gain ratio of joint j, ``Y_j`` the payload columns (robid.payload.regressor),
``pi_p`` the payload's standard parameters with the known mass ``m``, first moments ``h = m c`` (known, or
unknown and shared by all joints) and the inertia about the flange origin of a point mass at the COM,
(|h|^2 E - h h^T) / m, plus the inertia about the COM ``I_C`` (unknown and shared when the motion determines the
inertia columns -- variance inflation below robid.payload.estimate.VIF_LIMIT --, else zero), and a change of
Coulomb and viscous friction between the runs (a harmonic drive's friction grows with the torque it transmits; on
the UR10e pair 01_31 these columns lower the residual of joints 1-3 from 1.66 / 1.84 / 1.10 to 0.98 / 1.14 /
0.62 N m). The measured quantity is ``dtau``, so (1) is fitted in output-error form,
``dtau_j = c_j f_j(h, I_C) + F_j phi_j`` with ``c_j = 1 / g_j``, by Gauss-Newton with robid's per-joint WLS on
every linearisation (robid.estimation.wls; the filter's row correlation in weights and covariance), started from
the fit with ``c = 1``. ``std(g_j) = std(c_j) / c_j^2`` (first order) is the statistical std: the residual noise
through the least squares (on the UR10e the scales of two pairs differ by far more: docs/payload.md).

A joint whose payload torque is too small against its residual (rms of ``f_j`` below :data:`GAIN_SNR_MIN` times
the residual std of the starting fit, or fewer than 20 rows) is not calibrated: its scale stays 1 and a note says
so in one line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.estimation.estimators import wls
from robid.payload.data import PayloadRows
from robid.payload.estimate import VIF_LIMIT, variance_inflation

#: payload torque rms over residual std below which a joint's gain is not calibrated
GAIN_SNR_MIN = 3.0
#: fewest (sample) rows of a joint for its gain
MIN_ROWS = 20
_MAX_PASSES = 40
_STEP_TOL = 1e-4  # Gauss-Newton stops when every step is below this many standard deviations


@dataclass(frozen=True, eq=False)
class GainCalibration:
    """Per joint: ``scale`` g_j (true torque = g_j * measured torque; 1 where not calibrated), ``std`` its
    statistical standard deviation (NaN where not calibrated), ``calibrated``; ``payload_rms`` the rms of the
    payload's torque f_j (N m; against the starting fit's residual it decided ``calibrated``) and ``sigma`` the
    residual std per joint of the final fit (N m, over the joint's rows); the payload's ``mass`` (given),
    ``com`` (given, or estimated with ``com_std``), ``friction_change`` (dof, 2) dFc, dFv; ``rows_used``."""

    joint_names: tuple[str, ...]
    scale: np.ndarray
    std: np.ndarray
    calibrated: tuple[bool, ...]
    payload_rms: tuple[float, ...]
    sigma: tuple[float, ...]
    mass: float
    com: tuple[float, float, float]
    com_std: tuple[float, float, float]
    com_given: bool
    friction_change: np.ndarray
    rows_used: int
    converged: bool
    iterations: int
    notes: tuple[str, ...]


def point_mass_inertia(mass: float, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inertia about the flange origin of a point mass with first moments ``h``, as (Ixx, Ixy, Ixz, Iyy, Iyz,
    Izz) = entries of (|h|^2 E - h h^T) / m, and its (6, 3) derivative with respect to h."""
    x, y, z = (float(v) for v in h)
    inertia = np.array([y * y + z * z, -x * y, -x * z, x * x + z * z, -y * z, x * x + y * y]) / mass
    jac = np.array([[0, 2 * y, 2 * z], [-y, -x, 0], [-z, 0, -x], [2 * x, 0, 2 * z], [0, -z, -y],
                    [2 * x, 2 * y, 0]], dtype=float) / mass
    return inertia, jac


def _friction_block(rows: PayloadRows) -> np.ndarray:
    """(N, dof, 2 dof): joint j's sign(qd) and qd columns in joint j's rows only (0 columns without them)."""
    n, dof = rows.dtau.shape
    if rows.friction is None:
        return np.zeros((n, dof, 0))
    block = np.zeros((n, dof, 2 * dof))
    for j in range(dof):
        block[:, j, 2 * j:2 * j + 2] = rows.friction[:, j, :]
    return block


@dataclass(frozen=True, eq=False)
class _Problem:
    """Equation (1) on ``rows``: unknowns x = (c (dof), h (3), i_c (6), phi (2 dof or 0)), ``i_c`` the payload's
    inertia about its COM (Ixx, Ixy, Ixz, Iyy, Iyz, Izz) added to the point mass's."""

    rows: PayloadRows
    mass: float
    fric: np.ndarray

    def split(self, x: np.ndarray):
        dof = self.rows.dtau.shape[1]
        return x[:dof], x[dof:dof + 3], x[dof + 3:dof + 9], x[dof + 9:]

    def payload_torque(self, x: np.ndarray) -> np.ndarray:
        """f (N, dof): the payload's torque of equation (1)."""
        _, h, ic, _ = self.split(x)
        inertia, _ = point_mass_inertia(self.mass, h)
        Y = self.rows.Y
        return Y[:, :, 0] * self.mass + Y[:, :, 1:4] @ h + Y[:, :, 4:] @ (inertia + ic)

    def linearised(self, x: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The Jacobian (N, dof, free unknowns) and the residual (N, dof), rows not kept zeroed."""
        c, h, _, phi = self.split(x)
        Y, keep = self.rows.Y, self.rows.keep
        f = self.payload_torque(x)
        _, jac = point_mass_inertia(self.mass, h)
        residual = (self.rows.dtau - c * f - (self.fric @ phi if phi.size else 0.0)) * keep
        cols_c = np.zeros((*f.shape, f.shape[1]))
        for j in range(f.shape[1]):
            cols_c[:, j, j] = f[:, j]
        cs = c[None, :, None]
        J = np.concatenate([cols_c, cs * (Y[:, :, 1:4] + Y[:, :, 4:] @ jac), cs * Y[:, :, 4:], self.fric], axis=2)
        return J[:, :, free] * keep[:, :, None], residual


def _gauss_newton(problem: _Problem, x: np.ndarray, free: np.ndarray):
    """Gauss-Newton on equation (1) in the unknowns ``free`` (a mask of x), the others held; per-joint WLS (the
    rows' correlation) on every linearisation. Returns (x, the WLS at the solution -- its covariance --,
    converged, passes)."""
    x = np.asarray(x, float).copy()
    converged, passes = False, 0
    while passes < _MAX_PASSES and not converged:
        passes += 1
        J, r = problem.linearised(x, free)
        lin = wls(J, r, correlation=problem.rows.correlation)
        step = np.asarray(lin.values, float)
        x[free] += step
        converged = bool(np.max(np.abs(step) / np.maximum(lin.std, 1e-300)) < _STEP_TOL)
    J, r = problem.linearised(x, free)
    return x, wls(J, r, correlation=problem.rows.correlation), converged, passes


def _per_joint_rms(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum((values * keep) ** 2, axis=0) / np.maximum(keep.sum(axis=0), 1))


def calibrate_gains(rows: PayloadRows, mass: float, com=None, joint_names=None) -> GainCalibration:
    """The drive-gain scales g_j of equation (1) from ``rows`` of a payload of known ``mass`` (kg) and, if
    known, ``com`` (m, flange frame); ``joint_names`` for the notes. The payload's inertia about its COM is a
    nuisance unknown when the motion determines the inertia columns (variance inflation below VIF_LIMIT), else
    zero (a point mass)."""
    if not (math.isfinite(mass) and mass > 0):
        raise RobidOptionError("mass", f"expected a payload mass > 0 kg, got {mass:g}")
    if com is not None and (np.shape(com) != (3,) or not np.all(np.isfinite(np.asarray(com, dtype=float)))):
        raise RobidOptionError("com", f"expected three finite numbers x, y, z in m, got {com!r}")
    dof = rows.dtau.shape[1]
    names = tuple(joint_names) if joint_names is not None else tuple(f"q{j + 1}" for j in range(dof))
    problem = _Problem(rows, float(mass), _friction_block(rows))
    enough = rows.keep.sum(axis=0) >= MIN_ROWS
    x = np.zeros(dof + 9 + problem.fric.shape[2])
    x[:dof] = 1.0
    estimate_h = com is None
    if not estimate_h:
        x[dof:dof + 3] = mass * np.asarray(com, dtype=float)
    vif, _ = variance_inflation(rows.Y, np.ones(dof))
    inertia_free = bool(np.all(vif[4:] < VIF_LIMIT))
    free = np.zeros(x.size, bool)
    free[dof:dof + 3] = estimate_h
    free[dof + 3:dof + 9] = inertia_free
    free[dof + 9:] = np.repeat(enough, 2)[:problem.fric.shape[2]]  # a joint without rows has no friction change
    if free.any():  # the starting fit: c = 1
        x = _gauss_newton(problem, x, free)[0]
    sigma0 = _per_joint_rms(problem.linearised(x, free)[1], rows.keep)
    rms = _per_joint_rms(problem.payload_torque(x), rows.keep)
    weak = ~enough | ~(rms >= GAIN_SNR_MIN * sigma0)
    if weak.all():
        raise RobidInputError(f"{rows.source}: the payload's torque is below {GAIN_SNR_MIN:g} times the residual on "
                              "every joint: these runs cannot calibrate the drive gains")
    free[:dof] = ~weak
    x, lin, converged, passes = _gauss_newton(problem, x, free)
    return _calibration(problem, names, x, free, lin, rms, sigma0, converged, passes, inertia_free)


def _calibration(problem: _Problem, names, x, free, lin, rms, sigma0, converged, passes, inertia_free):
    """GainCalibration of the Gauss-Newton solution ``x`` (unknowns ``free``, covariance of ``lin``); notes for the
    joints not calibrated."""
    rows, mass, dof = problem.rows, problem.mass, len(names)
    c, h, ic, phi = problem.split(x)
    index = np.cumsum(free) - 1  # position of each free unknown in lin's vector
    cov = np.asarray(lin.covariance, float)
    calibrated = free[:dof]
    if np.any(c[calibrated] <= 0):
        raise RobidOptionError(None, f"{rows.source}: a drive-gain scale came out non-positive: do the runs carry "
                               "the payload given by {mass}?")
    scale, std = np.ones(dof), np.full(dof, np.nan)
    for j in np.flatnonzero(calibrated):
        scale[j] = 1.0 / c[j]
        std[j] = math.sqrt(max(cov[index[j], index[j]], 0.0)) / c[j] ** 2
    com_std = (math.nan,) * 3
    if free[dof]:
        k = index[dof]
        com_std = tuple(math.sqrt(max(v, 0.0)) / mass for v in np.diag(cov[k:k + 3, k:k + 3]))
    notes = [f"{names[j]}: not calibrated (scale 1): its payload torque, rms {rms[j]:.3g} N m, is below "
             f"{GAIN_SNR_MIN:g} times its residual std {sigma0[j]:.3g} N m" for j in range(dof) if not calibrated[j]]
    notes.append("the payload's inertia about its COM " + (
        "estimated with the gains (nuisance unknowns): " + ", ".join(f"{v:.3g}" for v in ic) + " kg m^2"
        if inertia_free else "taken as zero (the motion does not determine it): a point mass"))
    if not converged:
        notes.append(f"drive-gain calibration: Gauss-Newton did not converge in {passes} passes")
    return GainCalibration(
        joint_names=tuple(names), scale=scale, std=std, calibrated=tuple(bool(b) for b in calibrated),
        payload_rms=tuple(float(v) for v in rms), sigma=tuple(float(v) for v in _per_joint_rms(lin.residual,
                                                                                            rows.keep)),
        mass=float(mass), com=tuple(float(v) for v in h / mass), com_std=com_std, com_given=not free[dof],
        friction_change=phi.reshape(dof, 2) if phi.size else np.zeros((dof, 2)), rows_used=int(rows.keep.sum()),
        converged=converged, iterations=passes, notes=(*rows.notes, *notes))


def apply_gains(rows: PayloadRows, scale, source: str = "--gains") -> PayloadRows:
    """``rows`` with every joint's payload torque multiplied by its scale g_j (a drive-gain calibration; the
    difference of two runs and a model fitted to the same uncorrected torques scale alike)."""
    import dataclasses

    g = np.asarray(scale, dtype=float)
    if g.shape != (rows.dtau.shape[1],):
        raise RobidInputError(f"{source}: scale: {g.size} values for a robot with {rows.dtau.shape[1]} joints")
    note = (f"drive-gain scales from {source} applied to the payload's torque: "
            + ", ".join(f"{x:.4g}" for x in g))
    return dataclasses.replace(rows, dtau=rows.dtau * g, notes=(*rows.notes, note))
