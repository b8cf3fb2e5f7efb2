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
compensator (robid.simulation.compensator_plant) acting on the link side of its joint. M, c, g are the rigid-body terms
of the robot's own recursive Newton-Euler (robid.simulation.rnea). The rotors' gyroscopic coupling is neglected
(Spong's simplification, the same one the identification model makes).

Controller (continuous time, per joint, motor side)::

    tau_m = tau_ff(t) + Kp (theta_ref - theta) + Kd (thetad_ref - thetad)      (theta = q for a rigid joint)

Feed-forward ``tau_ff`` from the *nominal* model (the robot file) on the reference q_r(t):

* ``"rigid"`` (default): rigid bodies + compensator + rotor inertia, no friction -- the PD loop must overcome
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

The settings are in plant_settings.py, the per-joint data and friction law in joint_data.py, the feed-forward
table in feedforward.py (their old import paths from this module still work); this module integrates the loop.
"""

from __future__ import annotations

import time

import numpy as np
from scipy.integrate import solve_ivp

from robid import progress
from robid.errors import RobidInputError
from robid.model.robot_model import RobotModel
from robid.simulation.compensator_plant import CompensatorTorques
from robid.simulation.feedforward import FeedForwardTable
from robid.simulation.joint_data import JointData as JointData
from robid.simulation.joint_data import friction_slope, friction_torque, joint_data
from robid.simulation.plant_settings import FEEDFORWARD_MODES as FEEDFORWARD_MODES
from robid.simulation.plant_settings import ControllerSettings, IntegratorSettings, IntegratorStats
from robid.simulation.reference import ReferenceMotion
from robid.simulation.rnea import RigidBodyDynamics


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
        if ne:
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
        -- through M(q)^-1; the configuration dependence of M, c, g, the compensator and a friction ripple is left
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
