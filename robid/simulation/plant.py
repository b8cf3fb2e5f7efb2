"""Closed-loop forward dynamics of the virtual robot: rigid or elastic joints under a motor-side PD controller.

Plant (all torques in joint units: a motor torque is counted times the gear ratio; theta is the motor position
divided by the gear ratio; Ia = rotor_inertia * gear_ratio^2 the reflected rotor inertia)::

    rigid joints r:    (M(q) + diag(Ia_r)) qdd = tau_m - c(q, qd) - g(q) - tau_comp(q) - f(qd)       [rows r]
    elastic joints e:  M(q) qdd + c + g + tau_comp = K (theta - q) + D (thetad - qd) - fl qd             [rows e]
                       Ia theta_dd + f(thetad) + K (theta - q) + D (thetad - qd) = tau_m                 (Spong 1987)

with the drive-side friction ``f(v) = fv v + fc tanh(v / eps) + f0`` (Coulomb smoothed for the integrator,
``eps`` = :attr:`IntegratorSettings.coulomb_epsilon`, 1e-4 rad/s by default; |tanh - sign| < 1e-3 for
|v| > 3.8 eps; a joint with a Stribeck, sigmoid or ripple friction model adds that model's excess,
robid.model.Friction.excess, with the same tanh(v / eps) for sign(v) and the drive position theta for the ripple),
``fl`` the link-side viscous friction of an elastic joint, ``tau_comp = -F(l) dl/dq`` the
balancer (robid.simulation.balancer_plant) acting on the link side of its joint. M, c, g are the rigid-body terms
of the robot's own recursive Newton-Euler (robid.simulation.rnea). The rotors' gyroscopic coupling is neglected
(Spong's simplification, the same one the identification model makes).

Controller (continuous time, per joint, motor side)::

    tau_m = tau_ff(t) + Kp (theta_ref - theta) + Kd (thetad_ref - thetad)      (theta = q for a rigid joint)

Feed-forward ``tau_ff`` from the *nominal* model (the robot file) on the reference q_r(t):

* ``"rigid"`` (default): rigid bodies + balancer + rotor inertia, no friction -- the PD loop must overcome
  the friction, so the robot lags its reference as a real one does;
* ``"full"``: also the smoothed friction on the reference velocity (near-perfect tracking);
* ``"none"``: tau_ff = 0 and theta_ref = q_r (a pure PD; used to check static deflection).

For an elastic joint the motor reference makes the link follow exactly: with the link torque of the reference
``tau_L = [M qdd + c + g + tau_comp](q_r) + fl qd_r``, the deflection delta = q_r - theta_ref solves
``D delta' + K delta = -tau_L`` (the link row on the reference), and::

    theta_ref = q_r - delta,   thetad_ref = qd_r - delta',
    tau_ff    = Ia theta_dd_ref - K delta - D delta'  (= Ia theta_dd_ref + tau_L) (+ f(thetad_ref) for "full")

* D = 0: delta = -tau_L / K; its rates come from the periodic cubic spline of tau_L on the table's knots;
* D > 0: the exact periodic solution per harmonic, delta_h = -tau_h / (K + j h w D), with spectral rates; a
  rest-to-rest run adds the transient from and into standstill (robid.simulation.deflection).

The feed-forward is tabulated once over one period (step :attr:`ControllerSettings.table_step`, 1 ms by
default) from the analytic reference and interpolated with a periodic cubic spline -- as a real controller
computes it on its interpolation cycle; the standstill transient of damped joints is added analytically.

Gains: ``controller: {position_gain, velocity_gain}`` of the robot file; joints without them get
``Kp = J w^2``, ``Kd = 2 zeta J w`` with ``J = Ia + M_jj(q_r(0))``, ``w = 2 pi * 5 Hz``, ``zeta = 0.7``
(:class:`ControllerSettings`).

Integrator: :func:`scipy.integrate.solve_ivp`, by default ``LSODA`` (switches automatically between Adams and
BDF when the smoothed Coulomb friction makes the system stiff) with ``rtol = 1e-7`` and absolute tolerances
1e-9 rad (m) on positions and 1e-7 rad/s (m/s) on velocities (:class:`IntegratorSettings`), dense output; the
implicit phases use the approximate analytic Jacobian of :meth:`Plant.jacobian`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline

from robid import progress
from robid.errors import RobidInputError
from robid.model.robot_model import RobotModel
from robid.simulation.balancer_plant import CompensatorTorques
from robid.simulation.deflection import StandstillTransient, periodic_deflection
from robid.simulation.reference import ReferenceMotion
from robid.simulation.rnea import RigidBodyDynamics

FEEDFORWARD_MODES = ("rigid", "full", "none")


@dataclass(frozen=True)
class ControllerSettings:
    """Joint controller of the virtual robot; ``enabled=False`` leaves the motors unpowered (tau_m = 0)."""

    enabled: bool = True
    feedforward: str = "rigid"
    default_bandwidth_hz: float = 5.0
    default_damping_ratio: float = 0.7
    table_step: float = 1e-3

    def __post_init__(self) -> None:
        if self.feedforward not in FEEDFORWARD_MODES:
            raise RobidInputError(f"controller: feedforward: {self.feedforward!r} is not one of {FEEDFORWARD_MODES}")
        for name in ("default_bandwidth_hz", "default_damping_ratio", "table_step"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise RobidInputError(f"controller: {name}: must be positive, got {value!r}")


@dataclass(frozen=True)
class IntegratorSettings:
    """solve_ivp method and tolerances; ``coulomb_epsilon`` (rad/s or m/s) smooths sign(v) as tanh(v/eps)."""

    method: str = "LSODA"
    rtol: float = 1e-7
    atol_position: float = 1e-9
    atol_velocity: float = 1e-7
    coulomb_epsilon: float = 1e-4
    max_step: float = math.inf

    def __post_init__(self) -> None:
        if self.method not in ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA"):
            raise RobidInputError(f"integrator: method: unknown solve_ivp method {self.method!r}")
        for name in ("rtol", "atol_position", "atol_velocity", "coulomb_epsilon", "max_step"):
            value = getattr(self, name)
            if not value > 0:
                raise RobidInputError(f"integrator: {name}: must be positive, got {value!r}")


@dataclass(frozen=True)
class IntegratorStats:
    method: str
    rtol: float
    atol_position: float
    atol_velocity: float
    coulomb_epsilon: float
    nfev: int
    njev: int
    nlu: int
    wall_time_s: float
    success: bool
    message: str


@dataclass(frozen=True, eq=False)
class JointData:
    """Per-joint drive, friction, elasticity and gain arrays (dof,), joint units; NaN-free."""

    gear_ratio: np.ndarray
    reflected_inertia: np.ndarray
    fv: np.ndarray
    fc: np.ndarray
    f0: np.ndarray
    stiffness: np.ndarray  # 0 for rigid joints
    damping: np.ndarray
    link_viscous: np.ndarray
    elastic: np.ndarray  # bool
    kp: np.ndarray
    kd: np.ndarray
    gains_from_file: np.ndarray  # bool
    #: each joint's friction law (robid.model.Friction); fv, fc, f0 above are its linear part
    friction: tuple = ()


def joint_data(model: RobotModel, dynamics: RigidBodyDynamics, q0: np.ndarray, ctrl: ControllerSettings) -> JointData:
    where = model.source or model.name
    n = model.dof
    gear = np.ones(n)
    ia = np.zeros(n)
    fv, fc, f0 = np.zeros(n), np.zeros(n), np.zeros(n)
    k, d, fl = np.zeros(n), np.zeros(n), np.zeros(n)
    elastic = np.zeros(n, dtype=bool)
    kp, kd = np.full(n, np.nan), np.full(n, np.nan)
    for i, joint in enumerate(model.joints):
        jw = f"{where}: joint {joint.name}"
        if joint.drive is not None:
            gear[i] = joint.drive.gear_ratio
            ia[i] = joint.drive.reflected_inertia
        fv[i], fc[i], f0[i] = joint.friction.viscous, joint.friction.coulomb, joint.friction.offset
        if joint.elasticity is not None:
            if ia[i] <= 0.0:
                raise RobidInputError(
                    f"{jw}: drive: rotor_inertia: an elastic joint needs a drive with rotor inertia > 0"
                )
            if not joint.elasticity.stiffness > 0:
                raise RobidInputError(f"{jw}: elasticity: stiffness: must be positive")
            elastic[i] = True
            k[i] = joint.elasticity.stiffness
            d[i] = joint.elasticity.damping
            fl[i] = joint.elasticity.link_viscous
        if joint.controller is not None:
            kp[i], kd[i] = joint.controller.position_gain, joint.controller.velocity_gain
            if not (kp[i] > 0 and kd[i] >= 0):
                raise RobidInputError(f"{jw}: controller: position_gain must be > 0 and velocity_gain >= 0")
    from_file = ~np.isnan(kp)
    if not from_file.all():
        inertia = ia + np.diag(dynamics.mass_matrix(q0)[0])
        w = 2.0 * math.pi * ctrl.default_bandwidth_hz
        kp = np.where(from_file, kp, inertia * w**2)
        kd = np.where(from_file, kd, 2.0 * ctrl.default_damping_ratio * inertia * w)
    laws = tuple(j.friction for j in model.joints)
    return JointData(gear, ia, fv, fc, f0, k, d, fl, elastic, kp, kd, from_file, laws)


def friction_torque(data: JointData, v: np.ndarray, eps: float, index=slice(None), q: np.ndarray | None = None
                    ) -> np.ndarray:
    """The drive-side friction f(v) of the joints ``index`` at drive velocities v and positions q (..., len(index)):
    fv v + fc tanh(v/eps) + f0, plus on a joint with a nonlinear model its excess (Stribeck, sigmoid, ripple;
    robid.model.Friction.excess) with tanh(v/eps) for sign(v). ``q`` is needed only for a ripple."""
    tau = data.fv[index] * v + data.fc[index] * np.tanh(v / eps) + data.f0[index]
    for k, law in _nonlinear_friction(data, index):
        vk = v[..., k]
        tau[..., k] += law.excess(vk, None if q is None else q[..., k], np.tanh(vk / eps))
    return tau


def friction_slope(data: JointData, v: np.ndarray, eps: float, q: np.ndarray | None = None) -> np.ndarray:
    """df/dv of :func:`friction_torque` for all joints at fixed q: fv + fc/eps sech^2(v/eps) (+ the nonlinear
    models' slopes)."""
    slope = data.fv + data.fc / eps / np.cosh(np.clip(v / eps, -300.0, 300.0)) ** 2
    for k, law in _nonlinear_friction(data, slice(None)):
        vk = v[..., k]
        sign_slope = 1.0 / eps / np.cosh(np.clip(vk / eps, -300.0, 300.0)) ** 2
        slope[..., k] += law.excess_slope(vk, None if q is None else q[..., k], np.tanh(vk / eps), sign_slope)
    return slope


def _nonlinear_friction(data: JointData, index) -> list:
    """(position within ``index``, friction law) of the joints in ``index`` whose friction is not linear."""
    if not data.friction or all(law.is_linear for law in data.friction):
        return []
    joints = np.arange(len(data.friction))[index]
    return [(k, data.friction[j]) for k, j in enumerate(np.atleast_1d(joints)) if not data.friction[j].is_linear]


class FeedForwardTable:
    """Reference and feed-forward over one period, interpolated by one periodic cubic spline.

    Columns: q_ref (dof), qd_ref (dof), theta_ref (dof), thetad_ref (dof), tau_ff (dof); for a rigid joint
    theta_ref = q_ref. The reference is T-periodic inside the motion, so time maps to t mod T there; a rest-to-rest
    trajectory is at rest at t = 0 and holds that state outside [0, periods * T], where the table's value at
    phase 0 applies; on damped elastic joints ``transient`` (robid.simulation.deflection.StandstillTransient) then
    adds the motors' exact start from and return to standstill. The memory used does not grow with the length of
    the run.
    """

    def __init__(
        self,
        reference: ReferenceMotion,
        dynamics: RigidBodyDynamics,
        compensator: CompensatorTorques,
        data: JointData,
        ctrl: ControllerSettings,
        eps: float,
    ):
        n = dynamics.dof
        period = reference.period
        steps = max(16, int(math.ceil(period / ctrl.table_step)))
        t = np.linspace(0.0, period, steps + 1)
        q, qd, qdd = reference.trajectory_derivatives(t, 2)
        self.dof = n
        self.period = period
        self.motion = (0.0, reference.duration) if reference.rest_to_rest else None
        self.data = data
        self.eps = eps
        self.friction_in_feedforward = ctrl.feedforward == "full"
        self.damped = np.flatnonzero(data.elastic & (data.damping > 0))
        self.transient: StandstillTransient | None = None

        def link_torque(q, qd, qdd):
            return dynamics.inverse_dynamics(q, qd, qdd) + compensator.torque(q) + data.link_viscous * qd

        if ctrl.feedforward == "none":
            theta, thetad = q, qd
            tau_ff = np.zeros_like(q)
        else:
            tau_link = link_torque(q, qd, qdd)
            e = data.elastic & (data.damping == 0)
            stiff = data.stiffness[e]
            theta, thetad, thetadd = q.copy(), qd.copy(), qdd.copy()
            tau_ff = tau_link + data.reflected_inertia * qdd
            if e.any():  # undamped: delta = -tau_L / K, rates from the spline of tau_L
                spline = CubicSpline(t, _periodic_ends(tau_link[:, e]), bc_type="periodic")
                dtau, ddtau = spline(t, 1), spline(t, 2)
                theta[:, e] += tau_link[:, e] / stiff
                thetad[:, e] += dtau / stiff
                thetadd[:, e] += ddtau / stiff
                tau_ff[:, e] = data.reflected_inertia[e] * thetadd[:, e] + tau_link[:, e]
            if self.damped.size:
                self._damped_reference(reference, link_torque, steps, q, qd, qdd, theta, thetad, tau_ff)
            if ctrl.feedforward == "full":
                tau_ff = tau_ff + friction_torque(data, thetad, eps, q=theta)
        table = _periodic_ends(np.hstack([q, qd, theta, thetad, tau_ff]))
        self._spline = CubicSpline(t, table, bc_type="periodic")
        self._breaks = self._spline.x
        self._coefficients = self._spline.c  # (4, pieces, columns), highest power first
        self._pieces = len(t) - 1
        self._step = period / self._pieces

    def _damped_reference(self, reference, link_torque, steps, q, qd, qdd, theta, thetad, tau_ff) -> None:
        """Damped elastic joints (columns filled in place): the exact per-harmonic deflection
        (robid.simulation.deflection eq. 2), theta = q - delta, and tau_ff = Ia thetadd - K delta - D delta' (= tau_L
        on the reference); for a rest-to-rest run also the transient from and into standstill."""
        d, j = self.data, self.damped
        stiffness, damping = d.stiffness[j], d.damping[j]

        def torque(tk):
            return link_torque(*reference.trajectory_derivatives(tk, 2))[:, j]

        delta = periodic_deflection(torque, self.period, steps, stiffness, damping)
        theta[:, j] = q[:, j] - delta[0]
        thetad[:, j] = qd[:, j] - delta[1]
        thetadd = qdd[:, j] - delta[2]
        tau_ff[:, j] = d.reflected_inertia[j] * thetadd - stiffness * delta[0] - damping * delta[1]
        if self.motion is not None:
            pose = q[:1]
            rest = -link_torque(pose, np.zeros_like(pose), np.zeros_like(pose))[0, j] / stiffness
            start = (delta[0][0], delta[1][0], delta[2][0])
            self.transient = StandstillTransient(stiffness / damping, rest, start, self.motion[1])
            self._settled = (self.transient.settled_after, self.motion[1])

    def _add_transient(self, t, v: np.ndarray) -> np.ndarray:
        """The table's values v (..., 5 dof) with the standstill transient of the damped joints (in place)."""
        corrections = self.transient.corrections(t)
        if corrections is None:
            return v
        d0, d1, d2 = corrections
        n, j, d = self.dof, self.damped, self.data
        thetad_table = v[..., 3 * n + j]  # a copy (fancy indexing)
        theta_table = v[..., 2 * n + j]
        v[..., 2 * n + j] -= d0
        v[..., 3 * n + j] -= d1
        v[..., 4 * n + j] -= d.reflected_inertia[j] * d2 + d.stiffness[j] * d0 + d.damping[j] * d1
        if self.friction_in_feedforward:
            now = friction_torque(d, v[..., 3 * n + j], self.eps, j, v[..., 2 * n + j])
            v[..., 4 * n + j] += now - friction_torque(d, thetad_table, self.eps, j, theta_table)
        return v

    def phase_time(self, t):
        """Time within the tabulated period for time(s) t."""
        if np.ndim(t) == 0:
            if self.motion is not None and (t < self.motion[0] or t > self.motion[1]):
                return 0.0
            return t % self.period
        tau = np.mod(t, self.period)
        if self.motion is not None:
            tau = np.where((t < self.motion[0]) | (t > self.motion[1]), 0.0, tau)
        return tau

    def __call__(self, t) -> tuple[np.ndarray, ...]:
        """(q_ref, qd_ref, theta_ref, thetad_ref, tau_ff) at t; each (dof,) for scalar t or (N, dof)."""
        if np.ndim(t) == 0:  # the integrator's path: evaluate the cubic piece directly (PPoly's overhead dominates)
            tau = float(self.phase_time(float(t)))
            k = min(int(tau / self._step), self._pieces - 1)
            dx = tau - self._breaks[k]
            c = self._coefficients[:, k]
            v = ((c[0] * dx + c[1]) * dx + c[2]) * dx + c[3]
            if self.transient is not None and not self._settled[0] < t <= self._settled[1]:
                v = self._add_transient(t, v)
        else:
            v = self._spline(self.phase_time(t))
            if self.transient is not None:
                v = self._add_transient(t, v)
        n = self.dof
        return v[..., :n], v[..., n : 2 * n], v[..., 2 * n : 3 * n], v[..., 3 * n : 4 * n], v[..., 4 * n :]


def _periodic_ends(y: np.ndarray) -> np.ndarray:
    """Make the last row equal the first (the series is periodic; rounding may differ in the last bits)."""
    y = np.array(y, dtype=float)
    y[-1] = y[0]
    return y


def rigid_body_dynamics(model: RobotModel):
    """The rigid bodies' dynamics in the joints the controller drives: the serial recursion, or for a closed chain
    the constrained tree in its active coordinates (robid.simulation.closed_dynamics)."""
    if model.chain is not None:
        from robid.simulation.closed_dynamics import ClosedChainDynamics

        return ClosedChainDynamics(model)
    return RigidBodyDynamics(model)


class Plant:
    """The virtual robot's closed loop. State x = [q (dof), qd (dof), theta_e (ne), thetad_e (ne)], e the elastic
    joints in joint order. The robot starts on the reference state at ``t_start``; :meth:`integrate` runs it to
    ``t_end``."""

    def __init__(
        self,
        model: RobotModel,
        reference: ReferenceMotion,
        controller: ControllerSettings | None = None,
        integrator: IntegratorSettings | None = None,
        t_start: float = 0.0,
        t_end: float | None = None,
    ):
        if reference.dof != model.dof:
            raise RobidInputError(
                f"trajectory: center: has {reference.dof} joints, the robot {model.name!r} has {model.dof}"
            )
        self.model = model
        self.reference = reference
        self.controller = controller = ControllerSettings() if controller is None else controller
        self.integrator = integrator = IntegratorSettings() if integrator is None else integrator
        self.dynamics = rigid_body_dynamics(model)
        self.compensator = CompensatorTorques(model)
        self.t_start = float(t_start)
        self.t_end = float(reference.duration if t_end is None else t_end)
        q0 = reference.derivatives(np.array([self.t_start]), 0)[0]
        self.data = joint_data(model, self.dynamics, q0, controller)
        self.elastic_index = np.flatnonzero(self.data.elastic)
        self.rigid_index = np.flatnonzero(~self.data.elastic)
        self._rigid_rotor = np.where(self.data.elastic, 0.0, self.data.reflected_inertia)  # on the diagonal of M
        self.table = FeedForwardTable(
            reference,
            self.dynamics,
            self.compensator,
            self.data,
            controller,
            integrator.coulomb_epsilon,
        )

    # ---- state layout ------------------------------------------------------------------------------------
    @property
    def state_size(self) -> int:
        return 2 * self.model.dof + 2 * len(self.elastic_index)

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """q, qd, theta, thetad (all dof-wide: theta = q and thetad = qd on rigid joints) from states (..., n)."""
        n, ne = self.model.dof, len(self.elastic_index)
        q, qd = x[..., :n], x[..., n : 2 * n]
        theta, thetad = q.copy(), qd.copy()
        theta[..., self.elastic_index] = x[..., 2 * n : 2 * n + ne]
        thetad[..., self.elastic_index] = x[..., 2 * n + ne :]
        return q, qd, theta, thetad

    def initial_state(self) -> np.ndarray:
        """The reference state at t_start (motor on its elastic-joint reference): the robot starts on track."""
        q, qd, theta, thetad, _ = self.table(self.t_start)
        e = self.elastic_index
        return np.concatenate([q, qd, theta[e], thetad[e]])

    def absolute_tolerance(self) -> np.ndarray:
        n, ne = self.model.dof, len(self.elastic_index)
        s = self.integrator
        return np.concatenate(
            [
                np.full(n, s.atol_position),
                np.full(n, s.atol_velocity),
                np.full(ne, s.atol_position),
                np.full(ne, s.atol_velocity),
            ]
        )

    # ---- controller --------------------------------------------------------------------------------------
    def motor_torque(self, t, q, qd, theta, thetad) -> np.ndarray:
        """tau_m (joint units) commanded at time(s) t for the given state(s): the drive torque a controller reports."""
        if not self.controller.enabled:
            return np.zeros(np.shape(q))
        _, _, theta_r, thetad_r, tau_ff = self.table(t)
        d = self.data
        return tau_ff + d.kp * (theta_r - theta) + d.kd * (thetad_r - thetad)

    # ---- dynamics ----------------------------------------------------------------------------------------
    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """dx/dt of the closed loop (module docstring). Rigid and elastic joints share one vector form: on a rigid
        joint theta = q, K = D = 0, so its drive-side quantities are the link-side ones."""
        d = self.data
        e = self.elastic_index
        q, qd, theta, thetad = self.split(x)
        tau_m = self.motor_torque(t, q, qd, theta, thetad)
        mass, bias = self.dynamics.mass_matrix_and_bias(q, qd)
        friction = friction_torque(d, thetad, self.integrator.coulomb_epsilon, q=theta)
        spring = d.stiffness * (theta - q) + d.damping * (thetad - qd)
        force = np.where(d.elastic, spring - d.link_viscous * qd, tau_m - friction) - bias
        for i, tau_comp in self.compensator.torque_single(x.tolist()):
            force[i] -= tau_comp
        mass.flat[:: self.model.dof + 1] += self._rigid_rotor
        qdd = np.linalg.solve(mass, force)
        if len(e):
            thetadd = (tau_m[e] - friction[e] - spring[e]) / d.reflected_inertia[e]
            return np.concatenate([qd, qdd, thetad[e], thetadd])
        return np.concatenate([qd, qdd])

    def jacobian(self, t: float, x: np.ndarray) -> np.ndarray:
        """Approximate d(rhs)/dx for the implicit methods: the stiff terms only -- PD gains, joint springs and
        dampers, friction slopes fv + fc/eps sech^2(v/eps) (+ the nonlinear models' d/dv, :func:`friction_slope`)
        -- through M(q)^-1; the configuration dependence of M, c, g, the balancer and a friction ripple is left
        out (it is slow compared with those). An inexact Jacobian only slows
        the Newton iterations of Radau/BDF/LSODA; the solution's accuracy is set by the residual and the
        tolerances."""
        d = self.data
        eps = self.integrator.coulomb_epsilon
        n, e, r = self.model.dof, self.elastic_index, self.rigid_index
        ne = len(e)
        q, qd, theta, thetad = self.split(x)
        mass = self.dynamics.mass_matrix_and_bias(q, qd)[0]
        mass[r, r] += d.reflected_inertia[r]
        on = 1.0 if self.controller.enabled else 0.0
        dfq, dfqd = np.zeros(n), np.zeros(n)
        slope = friction_slope(d, thetad, eps, theta)
        dfq[r] = -on * d.kp[r]
        dfqd[r] = -on * d.kd[r] - slope[r]
        dfq[e] = -d.stiffness[e]
        dfqd[e] = -d.damping[e] - d.link_viscous[e]
        minv = np.linalg.inv(mass)
        jac = np.zeros((self.state_size, self.state_size))
        jac[:n, n : 2 * n] = np.eye(n)
        jac[n : 2 * n, :n] = minv * dfq
        jac[n : 2 * n, n : 2 * n] = minv * dfqd
        if ne:
            ia = d.reflected_inertia[e]
            jac[n : 2 * n, 2 * n : 2 * n + ne] = minv[:, e] * d.stiffness[e]
            jac[n : 2 * n, 2 * n + ne :] = minv[:, e] * d.damping[e]
            jac[2 * n : 2 * n + ne, 2 * n + ne :] = np.eye(ne)
            rows = np.arange(2 * n + ne, 2 * n + 2 * ne)
            jac[rows, e] = d.stiffness[e] / ia
            jac[rows, n + e] = d.damping[e] / ia
            jac[rows, 2 * n + np.arange(ne)] = -(on * d.kp[e] + d.stiffness[e]) / ia
            jac[rows, 2 * n + ne + np.arange(ne)] = -(on * d.kd[e] + slope[e] + d.damping[e]) / ia
        return jac

    def integrate(self, t_end: float | None = None):
        """Run solve_ivp from t_start to t_end with dense output; returns (OdeSolution, IntegratorStats)."""
        s = self.integrator
        t_end = self.t_end if t_end is None else t_end
        start = time.perf_counter()
        with progress.bar(float(t_end - self.t_start), "simulate", "s") as bar:
            sol = solve_ivp(
                _showing_time(self.rhs, bar, self.t_start) if bar.enabled else self.rhs,
                (self.t_start, t_end),
                self.initial_state(),
                method=s.method,
                rtol=s.rtol,
                atol=self.absolute_tolerance(),
                dense_output=True,
                max_step=s.max_step,
                **({} if s.method in ("RK45", "RK23", "DOP853") else {"jac": self.jacobian}),
            )
            if sol.success:
                bar.advance_to(bar.total)
        wall = time.perf_counter() - start
        stats = IntegratorStats(
            s.method,
            s.rtol,
            s.atol_position,
            s.atol_velocity,
            s.coulomb_epsilon,
            int(sol.nfev),
            int(sol.njev),
            int(sol.nlu),
            wall,
            bool(sol.success),
            str(sol.message),
        )
        if not sol.success:
            raise RuntimeError(f"virtual robot: the integrator failed at t = {sol.t[-1]:.6g} s: {sol.message}")
        return sol, stats


def _showing_time(rhs, bar: progress.Bar, t_start: float):
    """``rhs`` moving ``bar`` to the simulated time it is evaluated at (every 0.5 % of the span: the integrator
    calls it thousands of times, also a little ahead of the accepted step)."""
    step = 0.005 * bar.total
    shown = [t_start]

    def timed(t, x):
        if t - shown[0] >= step:
            shown[0] = t
            bar.advance_to(t - t_start)
        return rhs(t, x)

    return timed
