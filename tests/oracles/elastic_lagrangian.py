"""Euler-Lagrange equations of an elastic-joint robot with rotor-link coupling: a test oracle independent of robid.

Built on the rigid-body oracle of ``lagrangian.py`` (its polynomial forward kinematics and COM-form energies).
Coordinates are x = [q, theta] (theta the motor angle divided by the gear ratio k). Rotor i, carried by body i-1
and spinning about z_i (joint i's axis in that body's frame) at k_i thetad_i relative to it, adds to the kinetic
energy (Zollo et al. 2015, eq. 1)::

    T_rotor,i = k_i Y_i thetad_i z_i . w_{i-1}(q, qd) + 1/2 k_i^2 Y_i thetad_i^2

(its share 1/2 w^T I_rotor w is part of body i-1's inertia). With w_{i-1} = Jw_{i-1}(q) qd this is
qd^T Bd(q) thetad, Bd[j, i] = k_i Y_i (Jw_{i-1}[:, j] . z_i), and the Lagrangian

    L = 1/2 qd^T K(q) qd + qd^T Bd(q) thetad + 1/2 thetad^T diag(k^2 Y) thetad - V(q) - 1/2 (q - theta)^T S (q - theta)

gives, with the friction and spring damping added as generalised forces::

    link : K qdd + (dK/dq_k qd_k) qd - 1/2 qd^T dK/dq_i qd + dV/dq_i                 (the rigid oracle's torque)
           + Bd thetadd + (dBd/dq_k qd_k) thetad - qd^T dBd/dq_i thetad + S dl + D dld + fl qd
    motor: Bd^T qdd + (dBd/dq_k qd_k)^T qd + k^2 Y thetadd + fv thetad + fc sign(thetad) - S dl - D dld

with dl = q - theta and dld = qd - thetad. Nothing here calls robid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from oracles.lagrangian import LagrangianDynamics


@dataclass(frozen=True)
class Drive:
    """Rotor axial inertia Y (not reflected), gear ratio k (rotor speed / thetad), motor-side friction, and the
    joint's elasticity (stiffness 0 = rigid joint is not supported here: every joint is elastic)."""

    rotor_inertia: float
    gear_ratio: float
    stiffness: float
    damping: float = 0.0
    link_viscous: float = 0.0
    viscous: float = 0.0
    coulomb: float = 0.0


class ElasticLagrangian:
    def __init__(self, rigid: LagrangianDynamics, drives: list[Drive]):
        if any(b.joint.kind == "fixed" for b in rigid.bodies):
            raise ValueError("the elastic oracle expects a serial chain of movable joints")
        self.rigid = rigid
        self.drives = drives
        n = rigid.dof
        zero = rigid.ring.zero
        bd = [[zero] * n for _ in range(n)]
        for i in range(1, n):
            joint = rigid.bodies[i].joint
            z = np.asarray(joint.before, dtype=float)[:3, :3] @ np.asarray(joint.axis, dtype=float)
            jw = rigid._jac[i - 1][3]  # angular velocity of the carrying body (body frame) per unit qd
            ky = drives[i].gear_ratio * drives[i].rotor_inertia
            for j in range(n):
                bd[j][i] = sum((jw[a][j] * rigid._const(ky * z[a]) for a in range(3)), zero)
        self._bd = rigid._compile([(bd, zero)])

    def inverse_dynamics(self, q, qd, qdd, th, thd, thdd) -> np.ndarray:
        """(N, 2n): link rows (the external torque needed: zero in free motion) then motor torques."""
        q, qd, qdd, th, thd, thdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd, th, thd, thdd))
        rigid = self.rigid.inverse_dynamics(q, qd, qdd)
        kin, dkin, _ = self._bd(q)
        bd, dbd = kin[:, 0], dkin[:, 0]  # (N, n, n), (N, k, n, n)
        d = self.drives
        stiff = np.array([x.stiffness for x in d])
        damp = np.array([x.damping for x in d])
        dl, dld = q - th, qd - thd
        link = (
            rigid
            + np.einsum("sij,sj->si", bd, thdd)
            + np.einsum("skij,sk,sj->si", dbd, qd, thd)
            - np.einsum("skaj,sa,sj->sk", dbd, qd, thd)
            + stiff * dl
            + damp * dld
            + np.array([x.link_viscous for x in d]) * qd
        )
        motor = (
            np.einsum("sji,sj->si", bd, qdd)
            + np.einsum("skji,sk,sj->si", dbd, qd, qd)
            + np.array([x.gear_ratio**2 * x.rotor_inertia for x in d]) * thdd
            + np.array([x.viscous for x in d]) * thd
            + np.array([x.coulomb for x in d]) * np.sign(thd)
            - stiff * dl
            - damp * dld
        )
        return np.concatenate([link, motor], axis=1)

    def mass_matrix(self, q) -> np.ndarray:
        """(2n, 2n) inertia matrix of x = [q, theta] at one configuration."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        n = q.shape[1]
        zero = np.zeros_like(q)
        cols = []
        for k in range(2 * n):
            e = np.zeros((1, 2 * n))
            e[0, k] = 1.0
            cols.append(self._inertial(q, zero, e[:, :n], zero, e[:, n:]))
        return np.array(cols).T

    def _inertial(self, q, qd, qdd, thd, thdd) -> np.ndarray:
        """Inertial part only (no gravity, springs or friction) of one sample."""
        rigid_g = self.rigid.inverse_dynamics(q, qd, 0 * qdd)
        rigid = self.rigid.inverse_dynamics(q, qd, qdd) - rigid_g
        kin, _, _ = self._bd(q)
        bd = kin[:, 0]
        link = rigid + np.einsum("sij,sj->si", bd, thdd)
        motor = np.einsum("sji,sj->si", bd, qdd) + np.array([x.gear_ratio**2 * x.rotor_inertia
                                                                for x in self.drives]) * thdd
        return np.concatenate([link, motor], axis=1)[0]
