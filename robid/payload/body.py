"""The payload as a rigid body fixed to the last link: its ten standard parameters and the controller's view of it.

The ten standard parameters of a body (interfaces.md 1.3, robid.model.robot_model.INERTIAL_PARAMETERS) are
``(m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz)`` with ``h = m c`` and the inertia tensor about the frame origin,
products being the tensor entries (``Ixy = -int x y dm``). For a payload the frame is the **flange frame**: the
last body frame of robid's model (the last DH / URDF frame of the robot file). A payload rigidly fixed to that body
simply adds its ten parameters to the body's (the standard regressor is linear in them; Atkeson, An & Hollerbach,
IJRR 5(3), 1986, eq. 12 and section 4 "load identification").

Inertia about the COM from the inertia about the origin: I_C = I_O - m (c^T c E - c c^T) (parallel-axis theorem,
Khalil & Dombre 2002, eq. 9.40).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robid.model.robot_model import INERTIAL_PARAMETERS

#: The payload's standard parameters, in the order of the last body's regressor columns.
PAYLOAD_PARAMETERS = INERTIAL_PARAMETERS


def tensor_of(xx: float, xy: float, xz: float, yy: float, yz: float, zz: float) -> np.ndarray:
    """The symmetric 3 x 3 inertia tensor of its six entries."""
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)


@dataclass(frozen=True)
class PayloadBody:
    """Mass (kg), centre of mass (m) and inertia tensor about the COM (kg m^2), all in the flange frame.

    ``inertia_com`` is (Ixx, Iyy, Izz, Ixy, Ixz, Iyz), tensor entries, as robid's link data
    (robid.model.robot_model.Link)."""

    mass: float
    com: tuple[float, float, float]
    inertia_com: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    @staticmethod
    def from_standard(p) -> PayloadBody:
        """The body of ten standard parameters (m, h, I about the flange origin). A non-positive mass has no
        centre of mass: COM and inertia about it are then NaN."""
        p = np.asarray(p, dtype=float)
        m = float(p[0])
        if not m > 0:
            nan = (math.nan,) * 3
            return PayloadBody(m, nan, (math.nan,) * 6)
        c = p[1:4] / m
        inertia_o = tensor_of(*p[4:10])
        ic = inertia_o - m * (c @ c * np.eye(3) - np.outer(c, c))
        return PayloadBody(m, tuple(float(x) for x in c),
                           (float(ic[0, 0]), float(ic[1, 1]), float(ic[2, 2]),
                            float(ic[0, 1]), float(ic[0, 2]), float(ic[1, 2])))

    def tensor_com(self) -> np.ndarray:
        xx, yy, zz, xy, xz, yz = self.inertia_com
        return tensor_of(xx, xy, xz, yy, yz, zz)

    def standard(self) -> np.ndarray:
        """The ten standard parameters about the flange origin (parallel-axis theorem)."""
        m = float(self.mass)
        c = np.asarray(self.com, dtype=float)
        io = self.tensor_com() + m * (c @ c * np.eye(3) - np.outer(c, c))
        return np.array([m, *(m * c), io[0, 0], io[0, 1], io[0, 2], io[1, 1], io[1, 2], io[2, 2]])

    def principal(self) -> tuple[np.ndarray, np.ndarray]:
        """Principal moments (3,) and the rotation R (3, 3) whose columns are the principal axes in the flange
        frame, I_C = R diag(moments) R^T. Of the 24 proper rotations that diagonalise I_C (axis order and signs),
        the one closest to the flange axes (largest trace) is returned, so a tensor already diagonal in the flange
        frame gives R = identity and the controller's angles 0."""
        moments, vectors = np.linalg.eigh(self.tensor_com())
        best = None
        for perm in ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)):
            for signs in np.array(np.meshgrid([1, -1], [1, -1], [1, -1])).T.reshape(-1, 3):
                r = vectors[:, perm] * signs
                if np.linalg.det(r) < 0:
                    continue
                # the permutation that puts each principal axis nearest a flange axis
                if best is None or np.trace(r) > best[0] + 1e-12:
                    best = (float(np.trace(r)), r, moments[list(perm)])
        assert best is not None
        return best[2], best[1]


def abc_angles_deg(r: np.ndarray) -> tuple[float, float, float]:
    """KUKA A, B, C (degrees) of a rotation: R = Rz(A) Ry(B) Rx(C) (KUKA's ZYX convention for frames and for the
    principal axes of LOAD_DATA)."""
    b = math.atan2(-r[2, 0], math.hypot(r[0, 0], r[1, 0]))
    if math.cos(b) > 1e-9:
        a = math.atan2(r[1, 0], r[0, 0])
        c = math.atan2(r[2, 1], r[2, 2])
    else:  # gimbal lock: put the whole rotation about z into A
        a = math.atan2(-r[0, 1], r[1, 1])
        c = 0.0
    return tuple(math.degrees(x) + 0.0 for x in (a, b, c))


def quaternion(r: np.ndarray) -> tuple[float, float, float, float]:
    """Unit quaternion (q1 = w, q2, q3, q4) of a rotation matrix, w >= 0 (ABB's orient order)."""
    w = math.sqrt(max(0.0, 1.0 + r[0, 0] + r[1, 1] + r[2, 2])) / 2.0
    x = math.copysign(math.sqrt(max(0.0, 1.0 + r[0, 0] - r[1, 1] - r[2, 2])) / 2.0, r[2, 1] - r[1, 2])
    y = math.copysign(math.sqrt(max(0.0, 1.0 - r[0, 0] + r[1, 1] - r[2, 2])) / 2.0, r[0, 2] - r[2, 0])
    z = math.copysign(math.sqrt(max(0.0, 1.0 - r[0, 0] - r[1, 1] + r[2, 2])) / 2.0, r[1, 0] - r[0, 1])
    n = math.sqrt(w * w + x * x + y * y + z * z)
    return (w / n + 0.0, x / n + 0.0, y / n + 0.0, z / n + 0.0)
