"""Motor-side references of an elastic-joint robot: the motor trajectory and the feed-forward motor torque under
which the links follow a desired trajectory q(t) exactly.

Model: Spong's reduced elastic-joint model (M. W. Spong, "Modeling and control of elastic joint robots", ASME J.
Dyn. Syst. Meas. Control 109(4), 1987), with the fields and conventions of :mod:`robid.elastic.modal`: link
positions q, and on every elastic joint the motor position theta divided by the gear ratio (joint units)::

    M(q) qdd + C qd + G(q) + D_l qd + K (q - theta) + D_s (qd - thetad) = 0                      (link side)
    B thetadd + D_m thetad + f_c(thetad) + f_0 - K (q - theta) - D_s (qd - thetad) = tau_m        (motor side)

G includes the gravity compensators; B = rotor_inertia * gear_ratio^2; D_m, f_c, f_0 the drive friction of the
robot file (``friction``), f_c(v) = fc tanh(v / ``coulomb_velocity``), the smoothing the virtual robot uses
(Lismonde 2020 section 6.1.1 drops Coulomb friction from the feed-forward; reference notes 004 section 5.1 item 4).

Inversion: Lismonde, *Geometric modeling and inverse dynamics of flexible manipulators*, PhD thesis, Liege 2020,
section 2.2 (reference notes 004 sections 2.2 and 5.1): the two-mass examples (eq. 2.13-2.25) generalised to n
joints. Along q(t):

1. the link torque tau_L = M qdd + C qd + G + D_l qd (generated rigid-body inverse dynamics, with compensators);
2. the deflection delta = q - theta solves ``D_s delta' + K delta = -tau_L`` per elastic joint:

   * D_s = 0 (eq. 2.17, flat output): delta = -K^-1 tau_L, so thetadd = qdd + K^-1 tau_L'' needs q'''' (relative
     degree 4);
   * D_s > 0 (eq. 2.22): a stable first-order system (zero at -K/D_s, minimum phase, relative degree 3). For a
     Fourier series it is solved per harmonic, exactly: delta_h = -tau_h / (K + j h w D_s) (``harmonic``); started
     from standstill (rest-to-rest series) the homogeneous solution c e^{-K t / D_s} is added so that delta starts
     at the standstill deflection -K^-1 G(q0) (``harmonic-from-rest``). Otherwise it is integrated forward in time
     from the standstill deflection at the start of the motion (``time-domain``, ``samples``): exact exponential
     integration over each step of a quintic Hermite interpolant of tau_L (its value, rate and second rate at the
     nodes, error <= h^6 max|tau_L^(6)| / 46080 per step). Any other initial deflection gives another exact
     reference (the zero dynamics have one free constant); the standstill one keeps theta continuous with rest;

3. theta = q - delta, thetad = qd - delta', thetadd = qdd - delta'' (delta' = -(K delta + tau_L) / D_s and
   delta'' = -(K delta' + tau_L') / D_s when damped), and tau_m = B thetadd + D_m thetad + f_c + f_0 - K delta -
   D_s delta'. A rigid joint has theta = q and tau_m = tau_L + B qdd + friction(qd).

The rates tau_L' and tau_L'' come from the path's Taylor polynomial: g(s) = ID(q(t + s) to fourth order) has
g'(0) = tau_L'(t) and g''(0) = tau_L''(t) exactly; both are taken by 8th-order central differences in s with a
step of ``FD_STEP`` over the path's fastest rate (relative error ~1e-12). They are local, so a derivative jump at the
start or end of a motion does not leak into its neighbours.

Smoothness (Lismonde section 5.1 item 1): the reference needs a C^4 link path (C^3 if every elastic joint is
damped). One order less gives a motor torque that steps at the junctions with standstill (reported in
``warnings``, with the size of the step: the 7th-order rest-to-rest polynomial of AT1 steps by
(m1 m2 / k) 840 / T^4); two orders less would make the motor velocity jump, and is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.elastic.motor_deflection import (  # noqa: F401 -- hermite_basis and the spectrum's bounds re-exported
    MAX_SAMPLES,
    MIN_SAMPLES,
    SPECTRUM_TAIL,
    harmonic_deflection,
    hermite_basis,
    time_domain_deflection,
)
from robid.errors import RobidInputError
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.fourier_polynomial import FourierPolynomialTrajectory

#: Coulomb friction smoothing, rad/s (m/s): sign(v) ~ tanh(v / COULOMB_VELOCITY), as the virtual robot's default
COULOMB_VELOCITY = 1e-4
#: default output rate, Hz, when no times are given
DEFAULT_RATE = 1000.0
#: largest step of the time-domain deflection integration, s
MAX_STEP = 1e-3
#: Taylor-path difference step over the path's fastest rate (module docstring, :func:`_path_rate`)
FD_STEP = 0.05
#: default grids extend past the motion by this many of the slowest time constant D_s / K (motor settling)
SETTLING_TIME_CONSTANTS = 20.0
#: a sampled derivative is inconsistent when its step misses the integral of the next by this fraction of the largest
#: step a smooth path can make (h max|q^(k+1)|)
SAMPLE_CONSISTENCY = 0.1

# 8th-order central differences: f'(0) ~ sum_k D1[k] (f(kh) - f(-kh)) / h, f''(0) ~ (D2_0 f(0) + sum_k D2[k]
# (f(kh) + f(-kh))) / h^2, k = 1..4
_D1 = np.array([4 / 5, -1 / 5, 4 / 105, -1 / 280])
_D2 = np.array([8 / 5, -1 / 5, 8 / 315, -1 / 560])
_D2_0 = -205 / 72
_ORDER_NAMES = ("q", "q'", "q''", "q'''", "q''''")


@dataclass(frozen=True, eq=False)
class SampledPath:
    """A link trajectory given by samples: ``t`` (N,) strictly increasing, ``derivatives`` (q, q', q'', q''',
    q'''') each (N, dof), SI joint units. All five are needed (the motor torque needs q''''); their consistency
    and continuity are checked by :func:`motor_reference`."""

    t: np.ndarray
    derivatives: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        t = np.array(self.t, dtype=float).reshape(-1)
        arrays = []
        for k, x in enumerate(self.derivatives):
            a = np.array(x, dtype=float)
            a = a[:, None] if a.ndim == 1 else a
            if a.ndim != 2 or a.shape[0] != t.size:
                raise RobidInputError(
                    f"samples: {_ORDER_NAMES[min(k, 4)]}: shape {np.shape(x)}, expected ({t.size}, dof)"
                )
            a.setflags(write=False)
            arrays.append(a)
        t.setflags(write=False)
        object.__setattr__(self, "t", t)
        object.__setattr__(self, "derivatives", tuple(arrays))


@dataclass(frozen=True, eq=False)
class MotorReference:
    """Motor-side reference at times ``t`` (N,); arrays (N, dof), joint units (motor angle / gear ratio, motor torque
    times gear ratio). ``deflection`` = q - theta, ``link_torque`` tau_L; on a rigid joint theta = q.
    ``method``: harmonic, harmonic-from-rest, time-domain or samples (module docstring). ``continuity_order``: the
    link path's C^m order at its junctions with standstill (math.inf for a periodic series). ``time_constants``
    D_s / K per joint (0: undamped or rigid): the motor settles that fast after the links stop. ``warnings``: what
    the caller must know (torque steps, a start in motion)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    theta: np.ndarray
    thetad: np.ndarray
    thetadd: np.ndarray
    deflection: np.ndarray
    link_torque: np.ndarray
    tau_motor: np.ndarray
    joint_names: tuple[str, ...]
    elastic: tuple[bool, ...]
    method: str
    continuity_order: float
    time_constants: tuple[float, ...]
    warnings: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        for name in ("t", "q", "qd", "theta", "thetad", "thetadd", "deflection", "link_torque", "tau_motor"):
            getattr(self, name).setflags(write=False)


@dataclass(frozen=True, eq=False)
class _Drives:
    """Per-joint arrays (dof,) of the model: K, D_s, D_l (0 on rigid joints), B, friction, the elastic mask."""

    stiffness: np.ndarray
    damping: np.ndarray
    link_viscous: np.ndarray
    inertia: np.ndarray
    viscous: np.ndarray
    coulomb: np.ndarray
    offset: np.ndarray
    elastic: np.ndarray

    @property
    def damped(self) -> np.ndarray:
        return self.elastic & (self.damping > 0)

    @property
    def undamped(self) -> np.ndarray:
        return self.elastic & (self.damping == 0)

    def friction(self, v: np.ndarray, coulomb_velocity: float) -> np.ndarray:
        return self.viscous * v + self.coulomb * np.tanh(v / coulomb_velocity) + self.offset


def motor_reference(
    robot,
    trajectory,
    t=None,
    *,
    periods: int = 1,
    rate: float = DEFAULT_RATE,
    friction: bool = True,
    coulomb_velocity: float = COULOMB_VELOCITY,
    max_step: float = MAX_STEP,
) -> MotorReference:
    """Motor positions, rates and feed-forward torque that make the links of ``robot`` follow ``trajectory``.

    ``robot``: a RobotModel, a robid.Robot, or a robot file / built-in name. ``trajectory``: a FourierTrajectory
    (periodic: the steady state at every t; rest-to-rest: ``periods`` periods from and into standstill at its
    centre), a FourierPolynomialTrajectory (one execution on [0, period] between rests) or a :class:`SampledPath`.
    ``t``: output times, s (any order); default the motion at ``rate`` Hz plus the motor's settling
    (SETTLING_TIME_CONSTANTS D_s / K), or the sample times. ``friction=False`` leaves the drive friction out of the
    torque. Implements the module docstring (Lismonde 2020 section 2.2, Spong 1987)."""
    model = _robot_model(robot)
    drives = _drives(model)
    if not (coulomb_velocity > 0 and math.isfinite(coulomb_velocity)):
        raise RobidInputError(f"coulomb_velocity: must be positive, got {coulomb_velocity!r}")
    if not (max_step > 0 and math.isfinite(max_step)):
        raise RobidInputError(f"max_step: must be positive, got {max_step!r}")
    motion = _motion(trajectory, model, periods)
    warnings = list(motion.warnings)
    link = _LinkTorque(model, drives)
    warnings += _smoothness_warnings(motion, link, drives)
    times = _output_times(motion, t, rate, drives)
    derivs = motion.derivatives(times)
    tau = link(*derivs[:3])
    if motion.periodic_series is not None:
        delta = harmonic_deflection(motion, link, drives, times)
    else:
        delta = time_domain_deflection(motion, link, drives, times, derivs, tau, max_step)
    return _assemble(model, drives, motion, times, derivs, tau, delta, friction, coulomb_velocity, warnings)


# ---- inputs ------------------------------------------------------------------------------------------------------
def _robot_model(robot):
    from robid.model.loader import read_robot
    from robid.model.robot_model import RobotModel

    if isinstance(robot, RobotModel):
        return robot
    if isinstance(robot, str | Path):
        return read_robot(robot)
    model = getattr(robot, "model", None)
    if isinstance(model, RobotModel):
        return model
    raise RobidInputError(f"robot: expected a robot file, a built-in name, a RobotModel or a Robot, got {robot!r}")


def _drives(model) -> _Drives:
    joints = model.joints
    where = model.source or model.name
    elastic = np.array([j.elasticity is not None for j in joints])
    if not elastic.any():
        raise RobidInputError(
            f"{where}: no elastic joint (elasticity in the robot file): a motor-side reference differs from the "
            "link trajectory only on elastic joints"
        )
    inertia = np.array([j.drive.reflected_inertia if j.drive is not None else 0.0 for j in joints])
    for j, e, b in zip(joints, elastic, inertia, strict=True):
        if e and not b > 0:
            raise RobidInputError(f"{where}: joint {j.name}: an elastic joint needs a drive with rotor inertia > 0")
        if e and not (j.elasticity.stiffness > 0 and j.elasticity.damping >= 0):
            raise RobidInputError(f"{where}: joint {j.name}: elasticity: stiffness must be > 0 and damping >= 0")

    def field_of(name: str) -> np.ndarray:
        return np.array([getattr(j.elasticity, name) if j.elasticity is not None else 0.0 for j in joints])

    return _Drives(
        stiffness=field_of("stiffness"),
        damping=field_of("damping"),
        link_viscous=field_of("link_viscous"),
        inertia=inertia,
        viscous=np.array([j.friction.viscous for j in joints]),
        coulomb=np.array([j.friction.coulomb for j in joints]),
        offset=np.array([j.friction.offset for j in joints]),
        elastic=elastic,
    )


class _LinkTorque:
    """tau_L(q, qd, qdd) = generated rigid-body inverse dynamics (with compensators) + D_l qd, (N, dof)."""

    def __init__(self, model, drives: _Drives):
        from robid.robot import load_robot

        terms = ("rigid", "compensator") if any(j.compensator is not None for j in model.joints) else ("rigid",)
        self.robot = load_robot(model, terms=terms)
        self.link_viscous = drives.link_viscous
        self.dof = model.dof

    def __call__(self, q, qd, qdd) -> np.ndarray:
        return self.robot.inverse_dynamics(q, qd, qdd) + self.link_viscous * qd

    def rates(self, derivs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(tau_L', tau_L'') along the path from (q, q', q'', q''', q''''), each (N, dof): differences in s of
        tau_L at the path's Taylor polynomial q(t + s) (module docstring)."""
        q = derivs[0]
        n = q.shape[0]
        h = FD_STEP / _path_rate(derivs)
        s = h * np.arange(-4, 5, dtype=float)[:, None, None]
        taylor = [sum(s**i / math.factorial(i) * derivs[k + i] for i in range(5 - k)) for k in range(3)]
        g = self(*(x.reshape(-1, self.dof) for x in taylor)).reshape(9, n, self.dof)
        first = sum(_D1[k - 1] * (g[4 + k] - g[4 - k]) for k in range(1, 5)) / h
        second = (_D2_0 * g[4] + sum(_D2[k - 1] * (g[4 + k] + g[4 - k]) for k in range(1, 5))) / h**2
        return first, second


def _path_rate(derivs: list[np.ndarray]) -> float:
    """1/s: the path's fastest rate, max(max|q'|, max|q^(k)| / max|q^(k-1)| for k = 2..4) -- its highest frequency
    for a band-limited path. The difference step is FD_STEP over it (relative error ~1e-13 in tau_L', ~1e-12 in
    tau_L'' on a 5-harmonic Fourier path of the Do 2R, against the exact spectral rates)."""
    peak = [float(np.max(np.abs(x), initial=0.0)) for x in derivs]
    ratios = [peak[k] / peak[k - 1] for k in range(2, 5) if peak[k - 1] > 0]
    return max([peak[1], 1e-6, *ratios])


@dataclass(frozen=True, eq=False)
class _Motion:
    """The link path, held at rest outside ``span`` (None: a periodic series, never at rest)."""

    evaluate: object  # (t, order) -> (N, dof), with the hold
    span: tuple[float, float] | None
    continuity_order: float
    method: str
    periodic_series: FourierTrajectory | None = None
    samples: SampledPath | None = None
    warnings: tuple[str, ...] = ()

    def derivatives(self, t: np.ndarray) -> list[np.ndarray]:
        return [self.evaluate(t, k) for k in range(5)]


def _motion(trajectory, model, periods: int) -> _Motion:
    dof = getattr(trajectory, "dof", None)
    if isinstance(trajectory, SampledPath):
        dof = trajectory.derivatives[0].shape[1] if trajectory.derivatives else None
    if not isinstance(trajectory, FourierTrajectory | FourierPolynomialTrajectory | SampledPath):
        raise RobidInputError(
            "trajectory: expected a FourierTrajectory, a FourierPolynomialTrajectory or a SampledPath (t and q, q', "
            f"q'', q''', q''''), got {type(trajectory).__name__}"
        )
    if dof != model.dof:
        raise RobidInputError(f"trajectory: {dof} joints, the robot {model.name!r} has {model.dof}")
    if isinstance(trajectory, SampledPath):
        return _sampled_motion(trajectory)
    if isinstance(trajectory, FourierPolynomialTrajectory):
        if periods != 1:
            raise RobidInputError(f"periods: a Fourier-plus-polynomial design is executed once, got {periods}")
        order = float(trajectory.continuity_order())
        return _Motion(trajectory.derivative, (0.0, float(trajectory.period)), order, "time-domain")
    if trajectory.rest_order is None:
        return _Motion(trajectory.derivative, None, math.inf, "harmonic", trajectory)
    if not (isinstance(periods, int) and periods >= 1):
        raise RobidInputError(f"periods: expected an integer >= 1, got {periods!r}")
    end = periods * float(trajectory.period)

    def held(t, order):
        t = np.asarray(t, dtype=float).reshape(-1)
        out = trajectory.derivative(t, order)
        outside = (t < 0.0) | (t > end)
        out[outside] = trajectory.center if order == 0 else 0.0
        return out

    return _Motion(held, (0.0, end), float(trajectory.continuity_order()), "harmonic-from-rest", trajectory)


def _sampled_motion(path: SampledPath) -> _Motion:
    t, derivs = path.t, path.derivatives
    if len(derivs) < 5:
        given = ", ".join(_ORDER_NAMES[: len(derivs)]) or "nothing"
        raise RobidInputError(
            f"samples: {given} given; the motor reference needs q, q', q'', q''' and q'''' (thetadd = qdd + "
            "K^-1 tau_L'' involves q'''', Lismonde 2020 eq. 2.17): give the higher derivatives, or the trajectory "
            "itself (FourierTrajectory) rather than its samples"
        )
    if t.size < 2 or not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise RobidInputError("samples: t must be finite and strictly increasing, with at least 2 samples")
    for k, x in enumerate(derivs[:5]):
        if not np.all(np.isfinite(x)):
            row = int(np.argwhere(~np.isfinite(x))[0, 0])
            raise RobidInputError(f"samples: {_ORDER_NAMES[k]}: non-finite value at sample {row + 1}")
    _check_sample_continuity(t, derivs)
    moving = max(float(np.max(np.abs(derivs[k][0]))) / max(float(np.max(np.abs(derivs[k]))), 1e-300) for k in (1, 2))
    warnings = ()
    if moving > 1e-9:
        warnings = (
            f"samples: the path starts in motion at t = {t[0]:g} s; a damped joint's deflection starts at the "
            "standstill value -K^-1 tau_L(t0) (an exact reference, but the robot must start on theta(t0), "
            "thetad(t0))",
        )
    index = {float(x): i for i, x in enumerate(t)}

    def at_samples(times, order):
        rows = [index.get(float(x)) for x in np.asarray(times, dtype=float).reshape(-1)]
        if any(r is None for r in rows):
            raise RobidInputError("t: a sampled path gives its reference at its own sample times only (t=None)")
        return np.array(derivs[order][rows])

    return _Motion(at_samples, (float(t[0]), float(t[-1])), 4.0, "samples", samples=path, warnings=warnings)


def _check_sample_continuity(t: np.ndarray, derivs: tuple[np.ndarray, ...]) -> None:
    """Each sampled derivative must be the integral of the next: Hermite trapezoid for q..q'' (uses q^(k+2)), plain
    trapezoid for q'''. A jump of q^(k) (or q'''' for k = 3) between two samples leaves a residual of its size."""
    h = np.diff(t)[:, None]
    for k in range(4):
        f = derivs[k + 1]
        integral = 0.5 * h * (f[1:] + f[:-1])
        if k < 3:
            integral += h**2 / 12.0 * (derivs[k + 2][:-1] - derivs[k + 2][1:])
        residual = np.abs(np.diff(derivs[k], axis=0) - integral)
        scale = float(np.max(np.abs(f)))
        allowed = SAMPLE_CONSISTENCY * h * scale + 1e-12 * max(float(np.max(np.abs(derivs[k]))), 1e-300)
        bad = np.argwhere(residual > allowed)
        if bad.size:
            i, j = (int(x) for x in bad[np.argmax(residual[tuple(bad.T)] / allowed[tuple(bad.T)])])
            raise RobidInputError(
                f"samples: joint {j + 1}, samples {i + 1}-{i + 2} (t = {t[i]:.6g}..{t[i + 1]:.6g} s): "
                f"{_ORDER_NAMES[k]} does not change as the integral of {_ORDER_NAMES[k + 1]} (residual "
                f"{residual[i, j]:.3g}, {residual[i, j] / (h[i, 0] * max(scale, 1e-300)):.2g} of the largest "
                f"step): a jump of {_ORDER_NAMES[k]} or {_ORDER_NAMES[k + 1]} there, or samples too coarse. The "
                "motor reference needs a C4 link path (Lismonde 2020 section 2.2); resample a smooth trajectory"
            )


def _smoothness_warnings(motion: _Motion, link: _LinkTorque, drives: _Drives) -> list[str]:
    """C^needed (4, or 3 with every elastic joint damped) passes; one order less: the motor torque steps at the
    junctions with standstill (warned, with the steps); less: the motor velocity would jump (refused)."""
    needed = 4 if drives.undamped.any() else 3
    order = motion.continuity_order
    if order >= needed or motion.span is None:
        return []
    why = "undamped elastic joints need C4" if needed == 4 else "damped elastic joints need C3"
    if order < needed - 1:
        raise RobidInputError(
            f"trajectory: the link path is C{order:.0f} at its start/end with standstill; {why} (Spong model, "
            f"Lismonde 2020 section 2.2: relative degree {needed}): the motor velocity would jump there. Use a "
            f"rest-to-rest design with rest_order >= {needed}"
        )
    mask, divisor = (drives.undamped, drives.stiffness) if needed == 4 else (drives.damped, drives.damping)
    steps = []
    for t0 in motion.span:  # B times the jump of thetadd = qdd + K^-1 tau_L'' (undamped) or ... - D^-1 tau_L'
        inside = motion.derivatives(np.array([t0]))
        rest = [inside[0]] + [np.zeros_like(x) for x in inside[1:]]
        jump = (link.rates(inside)[needed - 3] - link.rates(rest)[needed - 3])[0]
        steps.append(np.where(mask, np.abs(drives.inertia * jump / np.where(mask, divisor, 1.0)), 0.0))
    worst = np.max(steps, axis=0)
    return [
        f"trajectory: the link path is C{order:.0f} at its start/end with standstill ({why} for a continuous motor "
        f"torque): the feed-forward motor torque steps there by up to "
        + ", ".join(f"{w:.4g}" for w in worst)
        + " (joint units, per joint; Lismonde 2020 section 5.1 item 1)"
    ]


def _output_times(motion: _Motion, t, rate: float, drives: _Drives) -> np.ndarray:
    if motion.samples is not None:
        if t is not None:
            raise RobidInputError("t: a sampled path gives its reference at its own sample times only (t=None)")
        return np.array(motion.samples.t)
    if t is not None:
        times = np.asarray(t, dtype=float).reshape(-1)
        if times.size == 0 or not np.all(np.isfinite(times)):
            raise RobidInputError("t: expected finite output times")
        return times
    if not (rate > 0 and math.isfinite(rate)):
        raise RobidInputError(f"rate: must be positive, got {rate!r}")
    if motion.span is None:
        period = float(motion.periodic_series.period)
        n = max(2, math.ceil(period * rate))
        return np.arange(n) * (period / n)
    start, end = motion.span
    end += SETTLING_TIME_CONSTANTS * max(_time_constants(drives))
    n = max(1, math.ceil(round((end - start) * rate, 6)))
    return start + np.arange(n + 1) / rate  # multiples of the cycle: the end of a motion of whole cycles is on it


def _time_constants(drives: _Drives) -> tuple[float, ...]:
    return tuple(
        float(d / k) if e else 0.0 for d, k, e in zip(drives.damping, drives.stiffness, drives.elastic, strict=True)
    )


# ---- result -------------------------------------------------------------------------------------------------------
def _assemble(model, drives, motion, t, derivs, tau, delta, friction, coulomb_velocity, warnings) -> MotorReference:
    q, qd, qdd = derivs[:3]
    e = drives.elastic
    theta = np.where(e, q - delta[0], q)
    thetad = np.where(e, qd - delta[1], qd)
    thetadd = np.where(e, qdd - delta[2], qdd)
    spring = -drives.stiffness * delta[0] - drives.damping * delta[1]
    tau_motor = drives.inertia * thetadd + np.where(e, spring, tau)
    if friction:
        tau_motor = tau_motor + drives.friction(thetad, coulomb_velocity)
    return MotorReference(
        t=np.array(t),
        q=np.array(q),
        qd=np.array(qd),
        theta=theta,
        thetad=thetad,
        thetadd=thetadd,
        deflection=np.where(e, delta[0], 0.0),
        link_torque=np.array(tau),
        tau_motor=tau_motor,
        joint_names=tuple(model.joint_names),
        elastic=tuple(bool(x) for x in e),
        method=motion.method,
        continuity_order=float(motion.continuity_order),
        time_constants=_time_constants(drives),
        warnings=tuple(warnings),
    )
