"""The closed loop of the robot being identified, simulated with a base-parameter estimate (IDIM-IV, DIDIM).

Both closed-loop estimators (Gautier, Janot & Vandanjon, IEEE TCST 21(2) 2013 "DIDIM"; Janot, Vandanjon & Gautier,
IEEE TCST 22(1) 2014 "IDIM-IV") need the joint states the robot *would* have had with the current estimate:
the measured reference drives a model of the robot's controller, which drives the inverse dynamic model with
the estimated base parameters. Nothing here uses the virtual robot (the simulation package, the independent
oracle of the tests): the dynamics are robid's generated base regressor, so the model that is simulated is the
model that is identified.

Dynamics (rigid layout; ``Y`` the base regressor, ``beta`` the base values)::

    M(q) qdd + h(q, qd) = tau_m,   h = Y(q, qd, 0) beta,   M e_i = Y(q, 0, e_i) beta - Y(q, 0, 0) beta

(all n + 2 evaluations in one vectorised call of the generated code). Everything the base model holds acts:
rigid bodies, rotor inertia, friction, compensator, coupled drives. The Coulomb columns take the smooth sign
erf(qd / (sqrt 2 eps)) (robid.identification.coulomb) so that the integrator sees a continuous right-hand side.

Controller: what must be known of the real one, and robid refuses to guess (:class:`ControllerModel`):

* the **reference** q_r(t): the excitation trajectory the robot ran (robid's trajectory file), with the log's
  time 0 at the trajectory's time 0 (plus ``time_offset``);
* the **gains**: ``controller: {position_gain, velocity_gain}`` of every joint in the robot file -- a joint PD
  tau_m = tau_ff + Kp (q_r - q) + Kd (qd_r - qd) in joint units;
* the **feed-forward** ``tau_ff``: ``"rigid"`` (the robot file's nominal inverse dynamics on the reference,
  without friction), ``"full"`` (with the nominal friction) or ``"none"``.

The feed-forward is tabulated over one period at ``TABLE_STEP`` and interpolated by a periodic cubic spline, as
a controller computes it on its cycle. A rest-to-rest trajectory holds its centre outside the motion.
Integration: scipy's LSODA, rtol 1e-7, absolute 1e-9 rad and 1e-7 rad/s, with the Jacobian of the stiff terms
(PD gains, Coulomb slope) for its implicit phases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.interpolate import CubicSpline
from scipy.special import erf

from robid.defaults import FEEDFORWARD_KINDS
from robid.errors import RobidInputError, RobidOptionError
from robid.identification.coulomb import coulomb_entries
from robid.robot import Robot

FEEDFORWARD = FEEDFORWARD_KINDS  # robid.defaults: one definition
#: feed-forward table step, s (a 1 ms controller cycle)
TABLE_STEP = 1e-3
#: width of the smooth Coulomb sign in the simulated closed loop, rad/s (m/s)
COULOMB_EPSILON = 1e-4
#: the integration is given up after this many right-hand-side evaluations per second of simulated time (a loop
#: that diverges or a reference that does not match the run makes the implicit steps collapse)
MAX_EVALUATIONS_PER_SECOND = 20000
_FRICTION_PREFIXES = ("fv_", "fc_", "f0_", "fvm_", "fcm_")


@dataclass(frozen=True, eq=False)
class Reference:
    """q_r(t) of a trajectory object (robid.excitation.fourier.FourierTrajectory) run for ``periods`` periods;
    a rest-to-rest trajectory holds its centre outside [0, periods T]. ``time_offset``: the log's time of the
    trajectory's time 0."""

    trajectory: object
    periods: float
    time_offset: float = 0.0

    @property
    def period(self) -> float:
        return float(self.trajectory.period)

    @property
    def rest_to_rest(self) -> bool:
        return getattr(self.trajectory, "rest_order", None) is not None

    def phase(self, t: np.ndarray) -> np.ndarray:
        """Time within the trajectory's period for log times t (phase 0 outside a rest-to-rest motion)."""
        s = np.asarray(t, dtype=float) - self.time_offset
        phase = np.mod(s, self.period)
        if self.rest_to_rest:
            phase = np.where((s < 0.0) | (s > self.periods * self.period), 0.0, phase)
        return phase


class ControllerModel:
    """The robot's joint controller as robid models it (module docstring): gains from the robot file, the
    feed-forward from the nominal model on the reference, tabulated over one period."""

    def __init__(self, robot: Robot, reference: Reference, feedforward: str = "rigid", where: str = "closed loop"):
        if feedforward not in FEEDFORWARD:
            raise RobidInputError(f"{where}: feedforward: expected one of {', '.join(FEEDFORWARD)}, "
                                  f"got {feedforward!r}")
        missing = [j.name for j in robot.model.joints if j.controller is None]
        if missing:
            raise RobidInputError(
                f"{where}: IDIM-IV and DIDIM simulate the robot's closed loop and need its joint gains: the robot "
                f"file {robot.model.source or robot.name} gives no controller: {{position_gain, velocity_gain}} "
                f"for {', '.join(missing)}"
            )
        self.kp = np.array([j.controller.position_gain for j in robot.model.joints], dtype=float)
        self.kd = np.array([j.controller.velocity_gain for j in robot.model.joints], dtype=float)
        self.reference = reference
        self.feedforward = feedforward
        period = reference.period
        steps = max(16, int(math.ceil(period / TABLE_STEP)))
        t = np.linspace(0.0, period, steps + 1)
        q, qd, qdd = (np.asarray(reference.trajectory.derivative(t, k), dtype=float) for k in range(3))
        if q.shape[1] != robot.dof:
            raise RobidInputError(f"{where}: the reference has {q.shape[1]} joints, the robot {robot.dof}")
        if feedforward == "none":
            tau_ff = np.zeros_like(q)
        else:
            values = np.asarray(robot.parameters, dtype=float).copy()
            if feedforward == "rigid":
                values[[i for i, n in enumerate(robot.parameter_names) if n.startswith(_FRICTION_PREFIXES)]] = 0.0
            tau_ff = robot.inverse_dynamics(q, qd, qdd, values)[:, : robot.dof]
        table = np.hstack([q, qd, tau_ff])
        table[-1] = table[0]  # periodic (rounding may differ in the last bits)
        self._spline = CubicSpline(t, table, bc_type="periodic")
        self.dof = robot.dof

    def __call__(self, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q_r, qd_r, tau_ff) at time(s) t."""
        v = self._spline(self.reference.phase(t))
        n = self.dof
        return v[..., :n], v[..., n : 2 * n], v[..., 2 * n :]

    def torque(self, t, q, qd) -> np.ndarray:
        q_r, qd_r, tau_ff = self(t)
        return tau_ff + self.kp * (q_r - q) + self.kd * (qd_r - qd)


class _GivenUp(Exception):
    """The integration used its evaluation budget (at the time in args[0])."""


class EstimatedClosedLoop:
    """The controller closed around the base model with values ``values`` (module docstring)."""

    def __init__(self, robot: Robot, values: np.ndarray, controller: ControllerModel):
        if robot.motor_joints:
            raise RobidInputError("IDIM-IV and DIDIM: the elastic layout (stiffness term) is not simulated; "
                                  "identify the rigid model")
        self.base = robot.base_parameters().for_many_calls()  # the integrator's calls: the C library
        self.values = np.asarray(values, dtype=float)
        self.controller = controller
        self.dof = robot.dof
        self._evaluations, self._budget = 0, np.inf
        couplings = robot.model.drive_couplings if "drive_coupling" in robot.terms else ()
        self._coulomb = coulomb_entries(self.base, robot.joint_names, couplings)
        n = self.dof
        self._qd_pattern = np.zeros((n + 2, n))
        self._qdd_pattern = np.vstack([np.zeros((2, n)), np.eye(n)])
        names = self.base.names
        self._fc = np.array([self.values[names.index(f"fc_{j}")] if f"fc_{j}" in names else 0.0
                             for j in robot.joint_names])
        self._fv = np.array([self.values[names.index(f"fv_{j}")] if f"fv_{j}" in names else 0.0
                             for j in robot.joint_names])

    def _smooth_coulomb(self, Y: np.ndarray, qd: np.ndarray) -> None:
        """Y's Coulomb columns (in place, Y a view of rows at velocities qd) as erf(v / (sqrt 2 eps)): the
        smooth sign of robid.identification.coulomb with the width COULOMB_EPSILON."""
        for j, k, rho, col in self._coulomb:
            v = qd[:, j] if k is None else qd[:, j] + rho * qd[:, k]
            sign = erf(v / (math.sqrt(2.0) * COULOMB_EPSILON))
            Y[:, j, col] = sign
            if k is not None:
                Y[:, k, col] = rho * sign

    def mass_and_bias(self, q: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """M(q) (count, dof, dof) and h(q, qd) (count, dof) of the base model at states (count, dof) (module
        docstring): the n + 2 regressor evaluations of every state in one call."""
        n, count = self.dof, q.shape[0]
        Q = np.repeat(q, n + 2, axis=0)
        if count == 1:  # the integrator's call: the patterns themselves (np.tile's copies cost as much as the rest)
            QD, QDD = self._qd_pattern.copy(), self._qdd_pattern
        else:
            QD, QDD = np.tile(self._qd_pattern, (count, 1)), np.tile(self._qdd_pattern, (count, 1))
        QD[:: n + 2] = qd
        Y = self.base.regressor(Q, QD, QDD)
        self._smooth_coulomb(Y[:: n + 2], qd)
        tau = (Y @ self.values).reshape(count, n + 2, n)
        return np.transpose(tau[:, 2:] - tau[:, 1:2], (0, 2, 1)), tau[:, 0]

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        self._evaluations += 1
        if self._evaluations > self._budget:
            raise _GivenUp(t)
        n = self.dof
        q, qd = x[:n], x[n:]
        mass, bias = self.mass_and_bias(q[None], qd[None])
        qdd = np.linalg.solve(mass[0], self.controller.torque(t, q, qd) - bias[0])
        return np.concatenate([qd, qdd])

    def jacobian(self, t: float, x: np.ndarray) -> np.ndarray:
        """The stiff terms only (PD gains, viscous and smoothed Coulomb slopes) through M^-1: an inexact Jacobian
        only slows the implicit steps, the tolerances set the accuracy."""
        n = self.dof
        q, qd = x[:n], x[n:]
        mass = self.mass_and_bias(q[None], np.zeros((1, n)))[0][0]
        slope = self._fv + self._fc * math.sqrt(2.0 / math.pi) / COULOMB_EPSILON * np.exp(
            -0.5 * np.minimum((qd / COULOMB_EPSILON) ** 2, 1400.0))
        minv = np.linalg.inv(mass)
        jac = np.zeros((2 * n, 2 * n))
        jac[:n, n:] = np.eye(n)
        jac[n:, :n] = -minv * self.controller.kp
        jac[n:, n:] = -minv * (self.controller.kd + slope)
        return jac

    def simulate(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, qd, qdd) at ``times`` (any order), the loop started on the reference state before the first of them
        (at the trajectory's time 0 when that is earlier)."""
        times = np.asarray(times, dtype=float)
        t0 = min(float(times.min()), self.controller.reference.time_offset)
        t1 = float(times.max())
        q0, qd0, _ = self.controller(np.array([t0]))
        n = self.dof
        atol = np.concatenate([np.full(n, 1e-9), np.full(n, 1e-7)])
        self._evaluations, self._budget = 0, MAX_EVALUATIONS_PER_SECOND * max(t1 - t0, 1.0)
        try:
            sol = solve_ivp(self.rhs, (t0, max(t1, t0 + 1e-9)), np.concatenate([q0[0], qd0[0]]), method="LSODA",
                            rtol=1e-7, atol=atol, dense_output=True, jac=self.jacobian)
        except _GivenUp as stop:
            raise RobidOptionError(None,
                f"closed loop: the simulation with the current estimate stalled at t = {stop.args[0]:.6g} s (more "
                f"than {MAX_EVALUATIONS_PER_SECOND} evaluations per simulated second): check that {{trajectory}} is "
                "the excitation this run followed, with its time 0 at the log's, and the controller gains"
            ) from None
        if not sol.success:
            raise RobidOptionError(None,
                f"closed loop: the simulation with the current estimate failed at t = {sol.t[-1]:.6g} s "
                f"({sol.message}); the estimate's mass matrix may not be positive definite -- start from a better "
                "estimate (e.g. {method} consistent first) or check the controller gains"
            )
        x = sol.sol(times).T
        q, qd = x[:, :n], x[:, n:]
        qdd = self.accelerations(times, q, qd)
        return q, qd, qdd

    def accelerations(self, times, q, qd) -> np.ndarray:
        """qdd = M^-1 (tau_m - h) at each state (count, dof)."""
        mass, bias = self.mass_and_bias(q, qd)
        force = self.controller.torque(times, q, qd) - bias
        return np.linalg.solve(mass, force[..., None])[..., 0]
