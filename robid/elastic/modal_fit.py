"""Joint stiffness and damping from measured modes: Do 2021 chapter 3, the inverse eigenvalue problem.

Reference notes 000 sections 2.6, 3.2, 4.3-4.5. Known: the robot's masses, geometry, rotor inertias and
controller gains, so at every measured pose the linearised closed loop of :mod:`robid.elastic.modal`
(eq. 2.8-2.12) is M_bar z'' + D_bar(d) z' + K_bar(k) z = 0, with D_bar and K_bar affine in the unknowns.
Unknown: a chosen subset of the elastic joints' fields (``UNKNOWN_KINDS``); Do's set (eq. 3.26, 3.27, 3.41) is
every joint's stiffness k, link-side viscous damping d_f (``link_viscous``) and motor viscous damping d_fm
(``motor_viscous``, the robot file's ``friction.viscous``).

Data (eq. 3.24, 3.25): at pose i, mode k, a measured frequency f and damping ratio zeta give the pole
lambda = -w zeta + j w sqrt(1 - zeta^2), w = 2 pi f. Residual (eq. 3.31, 3.28): with S_i = sqrtm(M_bar(q_i))::

    A_ik = (I lambda^2 + S_i^-1 D_bar S_i^-1 lambda + S_i^-1 K_bar_i S_i^-1) / w        (m x m, complex)
    r_ik = [Re det A_ik, Im det A_ik],         F = sum r_ik^2

zero when lambda is an eigenvalue of the model. The 1/w inside the determinant rescales each mode's residual by
w^-m; the thesis calls this scale factor crucial (L966), and without it Table 3.2 is not reproduced (tested by
mutation). F is minimised within bounds
(eq. 3.29, 3.30, 3.42; defaults ``DEFAULT_BOUNDS``, the thesis's example) by
``scipy.optimize.least_squares(method="trf")`` from many starts drawn uniformly within the bounds by a seeded
generator (the thesis's MultiStart, section 3.4.3). The Jacobian is analytic, by Jacobi's formula
d det A = tr(adj(A) dA) with the adjugate from the SVD (A is singular at an exact fit).

Identifiability (``ModalSensitivity``): the derivatives of the modelled modes (relative frequency, damping
ratio) with respect to the unknowns at the fit, by first-order eigenvalue perturbation of the quadratic
pencil P(lambda) = M_bar lambda^2 + D_bar lambda + K_bar (symmetric, so left and right eigenvectors agree):
d lambda / dp = -v^T (dP/dp) v / v^T (2 lambda M_bar + D_bar) v. Weighted by assumed measurement errors, they give
each unknown's linearised standard deviation and the singular values of the problem. In closed loop the motor
damping sits beside K_D in D_bar and the data hardly see it (notes 000 section 4.5).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robid.elastic.modal import MOTORS, linearise
from robid.errors import RobidInputError

#: unknown kinds: the robot-file field each one is, and the matrix it enters (module docstring)
UNKNOWN_KINDS = {
    "stiffness": "elasticity.stiffness",
    "damping": "elasticity.damping",
    "link_viscous": "elasticity.link_viscous",
    "motor_viscous": "friction.viscous",
}
#: Do's unknowns, in the order of eq. 3.26-3.27: k, d_f, d_fm of every elastic joint
DO_UNKNOWNS = ("stiffness", "link_viscous", "motor_viscous")
#: the thesis's bounds (eq. 3.42): N m/rad for stiffness, N m s/rad for the dampings
DEFAULT_BOUNDS = {"stiffness": (0.0, 5000.0), "damping": (0.0, 100.0), "link_viscous": (0.0, 100.0),
                  "motor_viscous": (0.0, 100.0)}
#: assumed measurement errors behind the sensitivities: frequency (relative) and damping ratio (absolute)
FREQUENCY_SIGMA = 0.001
DAMPING_SIGMA = 0.005
#: an unknown is "determined" if its linearised relative standard deviation is at most this (and off its bounds)
MAX_RELATIVE_STD = 0.1


@dataclass(frozen=True)
class ModalMeasurement:
    """One measured mode: the pose (rad or m), the frequency (Hz), the damping ratio (fraction) and, if known,
    the mode number (1-based, modes sorted by frequency as in :func:`robid.elastic.modal_analysis`)."""

    pose: tuple[float, ...]
    frequency_hz: float
    damping_ratio: float
    mode: int | None = None

    @property
    def pole(self) -> complex:
        """lambda = -w zeta + j w sqrt(1 - zeta^2), w = 2 pi f (eq. 3.24)."""
        w = 2 * np.pi * self.frequency_hz
        return complex(-w * self.damping_ratio, w * np.sqrt(1 - self.damping_ratio**2))


@dataclass(frozen=True)
class Unknown:
    """One fitted field: ``name`` is ``JOINT.kind``, ``field`` the robot-file field, within [lower, upper]."""

    name: str
    joint: str
    kind: str
    lower: float
    upper: float

    @property
    def field(self) -> str:
        return UNKNOWN_KINDS[self.kind]


@dataclass(frozen=True)
class ModalSensitivity:
    """How well the measured modes determine each unknown, linearised at the fit.

    ``jacobian`` (2N, p): rows d ln f of every measurement then d zeta (fraction) of every measurement, columns
    per unit of each unknown. ``std`` = sqrt(diag((J^T W J)^-1)) with W = diag(1/sigma^2) from
    ``frequency_sigma`` (relative) and ``damping_sigma`` (absolute), independent errors; a bias common to all
    N damping ratios moves the unknowns up to sqrt(N) times more. ``relative_std`` = std / |value| (inf at 0);
    ``determined`` = relative_std <= ``max_relative_std`` and the unknown off its bounds. ``singular_values``
    of W^1/2 J diag(|value|) (per relative change of each unknown, in units of sigma; an unknown at 0 per 1e-6
    of its range), largest first; ``weakest_direction`` the right singular vector of the smallest."""

    jacobian: np.ndarray
    frequency_sigma: float
    damping_sigma: float
    max_relative_std: float
    std: tuple[float, ...]
    relative_std: tuple[float, ...]
    determined: tuple[bool, ...]
    singular_values: tuple[float, ...]
    weakest_direction: tuple[float, ...]


@dataclass(frozen=True)
class ModalFitResult:
    """The fit (module docstring). ``values`` in the order of ``unknowns``; ``objective`` F (eq. 3.28) and
    ``residual_norm`` sqrt(F) at the best start; ``starts`` tried, ``converged_to_best`` of them ending at the best
    minimum (F within 1e-6 relative, or every unknown within 1e-6 of its bound range); ``at_bound`` per
    unknown; ``fitted_frequencies_hz`` / ``fitted_damping_ratios`` the model's modes matched to each measurement
    at the fitted values; ``robot_values`` the robot file's values of the unknowns."""

    unknowns: tuple[Unknown, ...]
    values: tuple[float, ...]
    objective: float
    residual_norm: float
    starts: int
    converged_to_best: int
    at_bound: tuple[bool, ...]
    measurements: tuple[ModalMeasurement, ...]
    fitted_frequencies_hz: tuple[float, ...]
    fitted_damping_ratios: tuple[float, ...]
    robot_values: tuple[float, ...]
    motors: str
    seed: int
    sensitivity: ModalSensitivity

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(u.name for u in self.unknowns)

    def value(self, name: str) -> float:
        """The fitted value of unknown ``name`` (``JOINT.kind``)."""
        return self.values[self.names.index(name)]

    def to_json(self) -> dict:
        """The JSON of ``robid modal-fit --json``."""
        s = self.sensitivity
        return {
            "motors": self.motors,
            "objective": self.objective,
            "residual_norm": self.residual_norm,
            "starts": self.starts,
            "converged_to_best": self.converged_to_best,
            "seed": self.seed,
            "unknowns": [
                {"name": u.name, "field": u.field, "value": v, "lower": u.lower, "upper": u.upper, "at_bound": b,
                 "robot_value": r, "std": _finite(sd), "relative_std": _finite(rs), "determined": d}
                for u, v, b, r, sd, rs, d in zip(self.unknowns, self.values, self.at_bound, self.robot_values,
                                                 s.std, s.relative_std, s.determined, strict=True)
            ],
            "singular_values": list(s.singular_values),
            "weakest_direction": list(s.weakest_direction),
            "frequency_sigma": s.frequency_sigma,
            "damping_sigma": s.damping_sigma,
            "measurements": [
                {"pose": list(m.pose), "mode": m.mode, "frequency_hz": m.frequency_hz,
                 "damping_ratio": m.damping_ratio, "fitted_frequency_hz": f, "fitted_damping_ratio": z}
                for m, f, z in zip(self.measurements, self.fitted_frequencies_hz, self.fitted_damping_ratios,
                                   strict=True)
            ],
        }


@dataclass(frozen=True)
class _Problem:
    """The residual's constant parts: per measurement A = C + sum_j p_j B_j (eq. 3.31 written affine in p)."""

    constant: np.ndarray  # (N, m, m) complex
    basis: np.ndarray  # (N, p, m, m) complex

    def residuals(self, p: np.ndarray) -> np.ndarray:
        """[Re det A_1..N, Im det A_1..N] (eq. 3.31)."""
        det = np.linalg.det(self._matrices(p))
        return np.concatenate([det.real, det.imag])

    def jacobian(self, p: np.ndarray) -> np.ndarray:
        """d r / d p by Jacobi's formula, d det A / d p_j = tr(adj(A) B_j); adj(A) from the SVD A = U S V^H:
        adj(A) = det(U) conj(det(V)) V diag(prod_{i != l} s_i) U^H, exact also for a singular A."""
        u, s, vh = np.linalg.svd(self._matrices(p))
        m = s.shape[1]
        others = np.stack([np.prod(np.delete(s, i, axis=1), axis=1) for i in range(m)], axis=1)
        phase = np.linalg.det(u) * np.linalg.det(vh)
        adj = phase[:, None, None] * np.einsum("kab,ka,kca->kbc", vh.conj(), others, u.conj())
        d = np.einsum("kab,kjba->kj", adj, self.basis)
        return np.concatenate([d.real, d.imag])

    def _matrices(self, p: np.ndarray) -> np.ndarray:
        return self.constant + np.einsum("j,kjab->kab", p, self.basis)


@dataclass(frozen=True)
class _Pose:
    """A measured pose's linearised model with the unknowns' contributions removed, and their basis matrices."""

    mass: np.ndarray
    damping: np.ndarray  # D_bar without the unknowns
    stiffness: np.ndarray  # K_bar without the unknowns
    basis: np.ndarray  # (p, m, m): d D_bar / d p_j or d K_bar / d p_j
    in_damping: np.ndarray  # (p,) bool: unknown j enters D_bar (else K_bar)

    def matrices(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """D_bar(p), K_bar(p)."""
        contrib = np.einsum("j,jab->jab", p, self.basis)
        return self.damping + contrib[self.in_damping].sum(axis=0), self.stiffness + contrib[~self.in_damping].sum(0)


def fit_stiffness_damping(
    robot,
    measurements: Sequence[ModalMeasurement],
    unknowns: Sequence[str] | None = None,
    *,
    motors: str = "controlled",
    bounds: dict[str, tuple[float, float]] | None = None,
    starts: int = 60,
    seed: int = 0,
    frequency_sigma: float = FREQUENCY_SIGMA,
    damping_sigma: float = DAMPING_SIGMA,
    max_relative_std: float = MAX_RELATIVE_STD,
) -> ModalFitResult:
    """Stiffness and damping of the elastic joints of ``robot`` from measured modes (module docstring;
    Do 2021 section 3.4, eq. 3.24-3.32).

    ``unknowns``: names ``JOINT.kind`` or bare kinds (``UNKNOWN_KINDS``) applied to every elastic joint, kinds
    first then joints (default ``DO_UNKNOWNS``, eq. 3.26-3.27). ``bounds``: kind or name -> (lower, upper),
    over ``DEFAULT_BOUNDS``. ``starts`` multi-start points drawn uniformly within the bounds by
    ``numpy.random.default_rng(seed)``. The fields that are not unknown keep the robot file's values."""
    from robid.model.robot_model import RobotModel

    model = robot if isinstance(robot, RobotModel) else robot.model
    if motors not in MOTORS:
        raise RobidInputError(f"motors: expected controlled or locked, got {motors!r}")
    data = check_measurements(model, measurements)
    fitted = _resolve_unknowns(model, unknowns, bounds or {}, motors)
    if len(fitted) >= len(data):  # eq. 3.32
        raise RobidInputError(f"{len(data)} measured modes for {len(fitted)} unknowns: the fit needs more modes than "
                              f"unknowns (Do 2021 eq. 3.32); measure more poses or modes, or fit fewer unknowns")
    if starts < 1:
        raise RobidInputError(f"starts: at least 1 start point, got {starts}")
    poses = {m.pose: _pose(robot, m.pose, motors, fitted, model) for m in data}
    lower = np.array([u.lower for u in fitted])
    upper = np.array([u.upper for u in fitted])
    f_best, x_best, converged = _multi_start(_problem(data, poses), lower, upper, starts, seed)
    span = upper - lower
    at_bound = (x_best - lower <= 1e-9 * span) | (upper - x_best <= 1e-9 * span)
    freq, zeta, jac = _modal_sensitivity(data, poses, x_best)
    sensitivity = _identifiability(jac, x_best, span, at_bound, frequency_sigma, damping_sigma, max_relative_std)
    return ModalFitResult(
        unknowns=tuple(fitted),
        values=tuple(float(v) for v in x_best),
        objective=f_best,
        residual_norm=float(np.sqrt(f_best)),
        starts=starts,
        converged_to_best=converged,
        at_bound=tuple(bool(v) for v in at_bound),
        measurements=tuple(data),
        fitted_frequencies_hz=tuple(float(f) for f in freq),
        fitted_damping_ratios=tuple(float(z) for z in zeta),
        robot_values=tuple(_robot_value(model, u) for u in fitted),
        motors=motors,
        seed=seed,
        sensitivity=sensitivity,
    )


def _multi_start(problem: _Problem, lower: np.ndarray, upper: np.ndarray, starts: int,
                 seed: int) -> tuple[float, np.ndarray, int]:
    """Bounded least squares (trf, analytic Jacobian) from ``starts`` points uniform within the bounds
    (``default_rng(seed)``): the best F (eq. 3.28), its point, and how many starts ended there (F within 1e-6
    relative, or every unknown within 1e-6 of its bound range)."""
    from scipy.optimize import least_squares

    points = lower + (upper - lower) * np.random.default_rng(seed).random((starts, lower.size))
    runs = []
    for x0 in points:
        sol = least_squares(problem.residuals, x0, jac=problem.jacobian, bounds=(lower, upper), method="trf",
                            x_scale="jac", ftol=1e-12, xtol=1e-12, gtol=1e-12, max_nfev=400)
        runs.append((2 * float(sol.cost), sol.x))
    f_best, x_best = min(runs, key=lambda run: run[0])
    span = upper - lower
    same = [abs(f - f_best) <= 1e-6 * f_best or bool(np.all(np.abs(x - x_best) <= 1e-6 * span)) for f, x in runs]
    return f_best, np.clip(x_best, lower, upper), int(sum(same))


def check_measurements(model, measurements: Sequence[ModalMeasurement],
                        labels: Sequence[str] | None = None) -> list[ModalMeasurement]:
    """The measurements with their fields checked (errors name ``labels[i]``, else "measurement i")."""
    out = []
    for i, m in enumerate(measurements):
        where = labels[i] if labels is not None else f"measurement {i + 1}"
        pose = tuple(float(x) for x in np.asarray(m.pose, dtype=float).ravel())
        if len(pose) != model.dof or not np.all(np.isfinite(pose)):
            raise RobidInputError(f"{where}: pose: {model.dof} finite joint positions expected for {model.name}, "
                                  f"got {len(pose)}")
        if not (np.isfinite(m.frequency_hz) and m.frequency_hz > 0):
            raise RobidInputError(f"{where}: frequency_hz: a positive frequency expected, got {m.frequency_hz}")
        if not (np.isfinite(m.damping_ratio) and 0 <= m.damping_ratio < 1):
            raise RobidInputError(f"{where}: damping_ratio: a fraction in [0, 1) expected (an oscillating mode; "
                                  f"0.05 for 5 %), got {m.damping_ratio}")
        if m.mode is not None and m.mode < 1:
            raise RobidInputError(f"{where}: mode: a mode number from 1 expected, got {m.mode}")
        out.append(ModalMeasurement(pose, float(m.frequency_hz), float(m.damping_ratio), m.mode))
    return out


def _resolve_unknowns(model, unknowns, bounds, motors: str) -> list[Unknown]:
    """Names ``JOINT.kind`` or bare kinds (every elastic joint) -> Unknowns with their bounds."""
    elastic = [j.name for j in model.joints if j.elasticity is not None]
    if not elastic:
        raise RobidInputError(f"{model.name}: no elastic joint (elasticity in the robot file): nothing to fit")
    if isinstance(unknowns, str):
        unknowns = [unknowns]
    names: list[str] = []
    for item in DO_UNKNOWNS if unknowns is None else unknowns:
        if item in UNKNOWN_KINDS:
            names.extend(f"{j}.{item}" for j in elastic)
        else:
            names.append(item)
    out = []
    for name in names:
        joint, _, kind = name.rpartition(".")
        if kind not in UNKNOWN_KINDS:
            raise RobidInputError(f"unknown {name!r}: expected JOINT.kind or a kind, kinds {', '.join(UNKNOWN_KINDS)}")
        if joint not in elastic:
            raise RobidInputError(f"unknown {name!r}: {joint!r} is not an elastic joint of {model.name} "
                                  f"(elastic: {', '.join(elastic)})")
        if kind == "motor_viscous" and motors == "locked":
            raise RobidInputError(f"unknown {name!r}: the motor damping does not act with locked rotors")
        lo, hi = bounds.get(name, bounds.get(kind, DEFAULT_BOUNDS[kind]))
        if not (np.isfinite(lo) and np.isfinite(hi) and 0 <= lo < hi):
            raise RobidInputError(f"bounds of {name}: expected finite 0 <= lower < upper, got ({lo}, {hi})")
        if name in (u.name for u in out):
            raise RobidInputError(f"unknown {name!r} given twice")
        out.append(Unknown(name, joint, kind, float(lo), float(hi)))
    stray = [key for key in bounds if key not in UNKNOWN_KINDS and key not in (u.name for u in out)]
    if stray:
        raise RobidInputError(f"bounds for {', '.join(stray)}: neither a kind nor a fitted unknown "
                              f"({', '.join(u.name for u in out)})")
    return out


def _robot_value(model, unknown: Unknown) -> float:
    joint = next(j for j in model.joints if j.name == unknown.joint)
    if unknown.kind == "motor_viscous":
        return float(joint.friction.viscous)
    return float(getattr(joint.elasticity, unknown.kind))


def _basis(coords: tuple[str, ...], unknown: Unknown) -> np.ndarray:
    """d K_bar / d k or d D_bar / d d of one unknown (robid.elastic.modal's matrices): the spring and its damping
    couple q_J and theta_J, link_viscous acts on q_J, motor_viscous on theta_J."""
    e = np.zeros((len(coords), len(coords)))
    q = coords.index(f"q_{unknown.joint}")
    t = coords.index(f"theta_{unknown.joint}") if f"theta_{unknown.joint}" in coords else None
    if unknown.kind in ("stiffness", "damping"):
        e[q, q] = 1.0
        if t is not None:
            e[t, t], e[q, t], e[t, q] = 1.0, -1.0, -1.0
    elif unknown.kind == "link_viscous":
        e[q, q] = 1.0
    else:
        e[t, t] = 1.0
    return e


def _pose(robot, pose, motors: str, unknowns: list[Unknown], model) -> _Pose:
    lin = linearise(robot, pose, motors)
    basis = np.array([_basis(lin.coordinates, u) for u in unknowns])
    in_damping = np.array([u.kind != "stiffness" for u in unknowns])
    nominal = np.array([_robot_value(model, u) for u in unknowns])
    part = np.einsum("j,jab->jab", nominal, basis)
    return _Pose(
        mass=lin.mass,
        damping=lin.damping - part[in_damping].sum(axis=0),
        stiffness=lin.stiffness - part[~in_damping].sum(axis=0),
        basis=basis,
        in_damping=in_damping,
    )


def _problem(data: list[ModalMeasurement], poses: dict) -> _Problem:
    """C and B_j of eq. 3.31 per measurement, with S = sqrtm(M_bar) (symmetric square root of an SPD matrix)."""
    constant, basis = [], []
    for m in data:
        pose = poses[m.pose]
        w, v = np.linalg.eigh(pose.mass)
        s_inv = (v / np.sqrt(w)) @ v.T
        lam, omega = m.pole, 2 * np.pi * m.frequency_hz
        size = pose.mass.shape[0]
        constant.append((np.eye(size) * lam**2 + s_inv @ pose.damping @ s_inv * lam
                         + s_inv @ pose.stiffness @ s_inv) / omega)
        factor = np.where(pose.in_damping, lam, 1.0)
        basis.append(factor[:, None, None] * (s_inv @ pose.basis @ s_inv) / omega)
    return _Problem(np.array(constant), np.array(basis))


def _modal_sensitivity(data: list[ModalMeasurement], poses: dict, p: np.ndarray):
    """The model's pole matched to each measurement at ``p`` (the measurement's mode number, else the nearest
    pole), its f and zeta, and J = [d ln f; d zeta] / d p by first-order perturbation of the quadratic pencil."""
    freq, zeta = np.empty(len(data)), np.empty(len(data))
    d_ln_f, d_zeta = np.empty((len(data), p.size)), np.empty((len(data), p.size))
    for k, m in enumerate(data):
        pose = poses[m.pose]
        damping, stiffness = pose.matrices(p)
        lam, vec = _model_pole(pose.mass, damping, stiffness, m)
        slope = vec @ (2 * lam * pose.mass + damping) @ vec
        dp = np.array([vec @ e @ vec for e in pose.basis]) * np.where(pose.in_damping, lam, 1.0)
        dlam = -dp / slope
        r = abs(lam)
        freq[k], zeta[k] = r / (2 * np.pi), -lam.real / r
        d_ln_f[k] = (np.conj(lam) * dlam).real / r**2
        d_zeta[k] = -dlam.real / r + lam.real * d_ln_f[k] / r
    return freq, zeta, np.vstack([d_ln_f, d_zeta])


def _model_pole(mass, damping, stiffness, m: ModalMeasurement) -> tuple[complex, np.ndarray]:
    size = mass.shape[0]
    inv_m = np.linalg.inv(mass)
    a = np.block([[np.zeros((size, size)), np.eye(size)], [-inv_m @ stiffness, -inv_m @ damping]])
    values, vectors = np.linalg.eig(a)
    scale = max(float(np.max(np.abs(values))), 1e-300)
    upper = np.flatnonzero(values.imag > 1e-9 * scale)
    upper = upper[np.argsort(np.abs(values[upper]))]
    if m.mode is not None and m.mode <= upper.size:
        i = upper[m.mode - 1]
    else:
        i = int(np.argmin(np.abs(values - m.pole)))
    return complex(values[i]), vectors[:size, i]


def _identifiability(jac: np.ndarray, p: np.ndarray, span: np.ndarray, at_bound: np.ndarray, frequency_sigma: float,
                     damping_sigma: float, max_relative_std: float) -> ModalSensitivity:
    """Linearised standard deviations and singular values (``ModalSensitivity``)."""
    n = jac.shape[0] // 2
    weights = np.concatenate([np.full(n, 1 / frequency_sigma), np.full(n, 1 / damping_sigma)])
    scale = np.maximum(np.abs(p), 1e-6 * span)  # columns per relative change; an unknown at 0 per 1e-6 of its range
    _, s, vt = np.linalg.svd(weights[:, None] * jac * scale, full_matrices=False)
    with np.errstate(divide="ignore"):
        inv_s2 = np.where(s > 1e-12 * s[0], 1 / s**2, np.inf)
        std = scale * np.sqrt(np.einsum("ij,i->j", vt**2, inv_s2, optimize=False))
        rel = np.where(np.abs(p) > 0, std / np.abs(p), np.inf)
    direction = vt[-1] * np.sign(vt[-1][np.argmax(np.abs(vt[-1]))])
    return ModalSensitivity(
        jacobian=jac,
        frequency_sigma=frequency_sigma,
        damping_sigma=damping_sigma,
        max_relative_std=max_relative_std,
        std=tuple(float(x) for x in std),
        relative_std=tuple(float(x) for x in rel),
        determined=tuple(bool(x <= max_relative_std and not b) for x, b in zip(rel, at_bound, strict=True)),
        singular_values=tuple(float(x) for x in s),
        weakest_direction=tuple(float(x) for x in direction),
    )


def _finite(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None
