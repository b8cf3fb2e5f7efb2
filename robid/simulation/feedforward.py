"""The virtual robot's feed-forward (robid.simulation.plant, "Controller"): the nominal model's torque, and the
elastic joints' motor reference, tabulated on the reference motion and interpolated by periodic cubic splines."""

from __future__ import annotations

import math

import numpy as np
from scipy.interpolate import CubicSpline

from robid.simulation.compensator_plant import CompensatorTorques
from robid.simulation.deflection import StandstillTransient, periodic_deflection
from robid.simulation.joint_data import JointData, friction_torque
from robid.simulation.plant_settings import ControllerSettings
from robid.simulation.reference import ReferenceMotion
from robid.simulation.rnea import RigidBodyDynamics


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
        if isinstance(t, float) or np.ndim(t) == 0:
            if self.motion is not None and (t < self.motion[0] or t > self.motion[1]):
                return 0.0
            return t % self.period
        tau = np.mod(t, self.period)
        if self.motion is not None:
            tau = np.where((t < self.motion[0]) | (t > self.motion[1]), 0.0, tau)
        return tau

    def __call__(self, t) -> tuple[np.ndarray, ...]:
        """(q_ref, qd_ref, theta_ref, thetad_ref, tau_ff) at t; each (dof,) for scalar t or (N, dof)."""
        # the integrator's path (a float t): evaluate the cubic piece directly (PPoly's overhead dominates)
        if isinstance(t, float) or np.ndim(t) == 0:
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


