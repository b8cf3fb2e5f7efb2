"""Energy-based (Lagrange) inverse dynamics of small robots with sympy: a test oracle independent of robid.

A robot is a list of rigid bodies, each placed relative to its parent body (or the base) by a homogeneous
transform of the form ``before . Motion(q + offset) . after`` (``Motion`` a rotation about / translation
along a unit axis; fixed joints have no motion). Standard DH, modified DH, URDF joints and robid's
A . M(q) . B all have this form; the builders below write each convention out literally. Serial chains and
trees (fixed side branches) both work, and fixed joints need no merging: a body on a fixed joint simply
adds its energy.

Symbolic representation: exact polynomials (sympy ``ring`` over QQ) in c_i = cos q_i, s_i = sin q_i for
revolute joints and in q_i for prismatic joints; constants are the exact rationals of the given floats.
d/dq_i acts as  -s_i d/dc_i + c_i d/ds_i  (revolute) or d/dq_i (prismatic). Nothing is simplified, so
c^2 + s^2 = 1 is never assumed; the polynomials are exact and are only evaluated at the end.

For every body b with pose (R_b(q), p_b(q)) in the base frame, by differentiating the forward kinematics:

* origin velocity (base frame)           v_b = (dp_b/dq) qd
* angular velocity in the body frame     [w_b]x = R_b^T dR_b/dt = sum_k R_b^T (dR_b/dq_k) qd_k

The Lagrangian is L = 1/2 qd^T K(q) qd - V(q):

* COM form (used for the torque):      T = 1/2 m |v_c|^2 + 1/2 w^T I_c w,   p_c = p_b + R_b c,
                                        V = -m g . p_c
* origin form (used for the regressor): T = 1/2 m |u|^2 + u . (w x h) + 1/2 w^T I_O w,  u = R_b^T v_b,
                                        V = -g . (m p_b + R_b h),  h = m c (first moments),

with I_c the inertia about the centre of mass and I_O = I_c + m (c.c E - c c^T) the inertia about the body
origin, both in body axes with the tensor convention (products are the off-diagonal entries). The origin
form is linear in the ten standard parameters (m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz), so each
regressor column is the Euler-Lagrange operator applied to that parameter's energy coefficient.

Euler-Lagrange: tau_i = d/dt dL/dqd_i - dL/dq_i = (K qdd)_i + sum_k (dK/dq_k qd_k qd)_i
- 1/2 qd^T (dK/dq_i) qd + dV/dq_i, where K, dK/dq_k and dV/dq_k are the symbolic polynomials evaluated
at the state.

Keep it to small robots (<= 4 movable joints): the polynomials grow quickly with the number of joints.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sympy import QQ
from sympy.polys.rings import ring

#: order of the ten standard parameters of one body
PARAMETERS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")


# --------------------------------------------------------------------------------------------------------
# numeric constant transforms (numpy), used to write each convention literally
# --------------------------------------------------------------------------------------------------------
def cos_sin(angle: float) -> tuple[float, float]:
    """cos, sin with exact values at multiples of pi/2 (keeps the polynomials sparse)."""
    quarter = angle / (math.pi / 2)
    if abs(quarter - round(quarter)) < 1e-13:
        return [(1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)][int(round(quarter)) % 4]
    return math.cos(angle), math.sin(angle)


def trans(x, y, z) -> np.ndarray:
    t = np.eye(4)
    t[:3, 3] = (x, y, z)
    return t


def rot_x(angle) -> np.ndarray:
    c, s = cos_sin(angle)
    t = np.eye(4)
    t[1:3, 1:3] = [[c, -s], [s, c]]
    return t


def rot_y(angle) -> np.ndarray:
    c, s = cos_sin(angle)
    t = np.eye(4)
    t[0, 0], t[0, 2], t[2, 0], t[2, 2] = c, s, -s, c
    return t


def rot_z(angle) -> np.ndarray:
    c, s = cos_sin(angle)
    t = np.eye(4)
    t[0:2, 0:2] = [[c, -s], [s, c]]
    return t


def rpy(roll, pitch, yaw) -> np.ndarray:
    """URDF fixed-axis roll-pitch-yaw: Rz(yaw) Ry(pitch) Rx(roll)."""
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def homogeneous(rotation, translation) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = np.asarray(rotation, dtype=float)
    t[:3, 3] = np.asarray(translation, dtype=float)
    return t


# --------------------------------------------------------------------------------------------------------
# joints: before . Motion(q + offset) . after
# --------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JointSpec:
    kind: str  # "revolute" | "prismatic" | "fixed"
    before: np.ndarray
    axis: tuple[float, float, float] = (0.0, 0.0, 1.0)
    after: np.ndarray = field(default_factory=lambda: np.eye(4))
    offset: float = 0.0


def fixed(t: np.ndarray) -> JointSpec:
    return JointSpec("fixed", np.asarray(t, dtype=float))


def dh(kind: str, a, alpha, d, theta) -> JointSpec:
    """Standard DH  Rz(theta) Tz(d) Tx(a) Rx(alpha); q adds to theta (revolute) or to d (prismatic)."""
    if kind == "revolute":  # Rz(q + theta) . [Tz(d) Tx(a) Rx(alpha)]
        return JointSpec(kind, np.eye(4), (0, 0, 1), trans(0, 0, d) @ trans(a, 0, 0) @ rot_x(alpha), theta)
    # [Rz(theta)] . Tz(q + d) . [Tx(a) Rx(alpha)]
    return JointSpec(kind, rot_z(theta), (0, 0, 1), trans(a, 0, 0) @ rot_x(alpha), d)


def mdh(kind: str, a, alpha, d, theta) -> JointSpec:
    """Modified (Craig) DH  Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)."""
    if kind == "revolute":  # [Rx(alpha) Tx(a)] . Rz(q + theta) . [Tz(d)]
        return JointSpec(kind, rot_x(alpha) @ trans(a, 0, 0), (0, 0, 1), trans(0, 0, d), theta)
    # [Rx(alpha) Tx(a) Rz(theta)] . Tz(q + d)
    return JointSpec(kind, rot_x(alpha) @ trans(a, 0, 0) @ rot_z(theta), (0, 0, 1), np.eye(4), d)


def urdf_joint(kind: str, xyz, rpy_angles, axis=(1, 0, 0)) -> JointSpec:
    """URDF joint: origin Trans(xyz) Rz Ry Rx, then the motion about / along <axis> (normalised here)."""
    origin = trans(*xyz) @ rpy(*rpy_angles)
    if kind == "fixed":
        return fixed(origin)
    norm = math.sqrt(sum(float(a) ** 2 for a in axis))
    unit = tuple(float(a) / norm for a in axis)
    return JointSpec("revolute" if kind == "continuous" else kind, origin, unit)


# --------------------------------------------------------------------------------------------------------
# robot description
# --------------------------------------------------------------------------------------------------------
@dataclass
class Body:
    """A rigid body placed by ``joint`` in its parent's frame (parent -1 = base, None = previous body).

    inertia_com is the 3x3 tensor about the COM in body axes; com is in body coordinates.
    """

    name: str
    joint: JointSpec
    mass: float = 0.0
    com: Sequence[float] = (0.0, 0.0, 0.0)
    inertia_com: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    parent: int | None = None

    def standard_parameters(self) -> np.ndarray:
        """(m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz) about the body origin (Steiner's theorem)."""
        m = float(self.mass)
        c = np.asarray(self.com, dtype=float)
        i_o = np.asarray(self.inertia_com, dtype=float) + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
        return np.array(
            [m, m * c[0], m * c[1], m * c[2], i_o[0, 0], i_o[0, 1], i_o[0, 2], i_o[1, 1], i_o[1, 2], i_o[2, 2]]
        )


def inertia_matrix(xx, yy, zz, xy, xz, yz) -> np.ndarray:
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)


# --------------------------------------------------------------------------------------------------------
# small polynomial-matrix helpers (lists of lists of ring elements)
# --------------------------------------------------------------------------------------------------------
def _matmul(a, b):
    return [
        [sum((a[i][k] * b[k][j] for k in range(len(b))), a[0][0].ring.zero) for j in range(len(b[0]))]
        for i in range(len(a))
    ]


def _transpose(a):
    return [list(r) for r in zip(*a, strict=True)]


def _col(a, j):
    return [row[j] for row in a]


class LagrangianDynamics:
    """tau(q, qd, qdd) and the standard-parameter regressor of a small robot, by Lagrange with sympy."""

    def __init__(self, bodies: Sequence[Body], gravity: Sequence[float]):
        self.bodies = list(bodies)
        self.movable = [b for b in self.bodies if b.joint.kind != "fixed"]
        self.joint_names = [b.name for b in self.movable]
        self.dof = n = len(self.movable)
        if n > 5:
            raise ValueError("the sympy Lagrangian oracle is meant for small robots (<= 4-5 joints)")
        self.parameter_names = [f"{p}_{b.name}" for b in self.bodies for p in PARAMETERS]
        names = []
        for k, b in enumerate(self.movable):
            names += [f"c{k}", f"s{k}"] if b.joint.kind == "revolute" else [f"x{k}"]
        self.ring, *gens = ring(",".join(names), QQ)
        self._vars = {}  # joint index -> generators
        g = iter(gens)
        for k, b in enumerate(self.movable):
            self._vars[k] = (next(g), next(g)) if b.joint.kind == "revolute" else (next(g),)
        self.gravity = [self._const(x) for x in gravity]
        self._kinematics()
        self._tau_fn = None
        self._regressor_fn = None

    # ---------------------------------------------------------------- symbolic helpers
    def _const(self, x: float):
        return self.ring(QQ(*float(x).as_integer_ratio()))

    def _const_matrix(self, m: np.ndarray):
        return [[self._const(x) for x in row] for row in np.asarray(m, dtype=float)]

    def _d(self, p, k: int):
        """d p / d q_k."""
        v = self._vars[k]
        if len(v) == 2:
            c, s = v
            return -s * p.diff(c) + c * p.diff(s)
        return p.diff(v[0])

    def _motion(self, joint: JointSpec, k: int):
        """Rotation about / translation along the unit axis by q_k + offset, as a 4x4 polynomial matrix."""
        r = self.ring
        u = np.asarray(joint.axis, dtype=float)
        if joint.kind == "revolute":
            c, s = self._vars[k]
            co, so = cos_sin(joint.offset)
            cq = c * self._const(co) - s * self._const(so)  # cos(q + offset)
            sq = s * self._const(co) + c * self._const(so)  # sin(q + offset)
            uu = np.outer(u, u)
            ux = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
            # axis-angle: R = u u^T + cos (E - u u^T) + sin [u]x
            m = [
                [
                    self._const(uu[i, j]) + cq * self._const((np.eye(3) - uu)[i, j]) + sq * self._const(ux[i, j])
                    for j in range(3)
                ]
                + [r.zero]
                for i in range(3)
            ]
        else:
            (x,) = self._vars[k]
            shift = x + self._const(joint.offset)
            m = [[r(1) if i == j else r.zero for j in range(3)] + [shift * self._const(u[i])] for i in range(3)]
        m.append([r.zero, r.zero, r.zero, r(1)])
        return m

    # ---------------------------------------------------------------- kinematics by differentiation
    def _kinematics(self) -> None:
        poses = []
        k = 0
        for i, body in enumerate(self.bodies):
            parent = i - 1 if body.parent is None else body.parent
            base = self._const_matrix(np.eye(4)) if parent < 0 else poses[parent]
            joint = body.joint
            local = self._const_matrix(joint.before)
            if joint.kind != "fixed":
                local = _matmul(_matmul(local, self._motion(joint, k)), self._const_matrix(joint.after))
                k += 1
            poses.append(_matmul(base, local))
        self.poses = poses
        self._jac = []
        for t in poses:
            r = [row[:3] for row in t[:3]]
            p = [t[i][3] for i in range(3)]
            jp = [[self._d(p[i], kk) for kk in range(self.dof)] for i in range(3)]  # dp/dq, base frame
            jw = [[None] * self.dof for _ in range(3)]  # body-frame angular velocity per unit qd_k
            for kk in range(self.dof):
                dr = [[self._d(x, kk) for x in row] for row in r]
                s = _matmul(_transpose(r), dr)  # [w]x = R^T dR/dq_k
                jw[0][kk], jw[1][kk], jw[2][kk] = s[2][1], s[0][2], s[1][0]
            self._jac.append((r, p, jp, jw))

    # ---------------------------------------------------------------- energies
    def _energies_com(self):
        """COM form: T = 1/2 m |v_c|^2 + 1/2 w^T I_c w = 1/2 qd^T K qd, V = -m g . p_c, summed over bodies."""
        n = self.dof
        zero = self.ring.zero
        kinetic = [[zero] * n for _ in range(n)]
        potential = zero
        for body, (r, p, _jp, jw) in zip(self.bodies, self._jac, strict=True):
            if body.mass == 0 and not np.any(body.inertia_com):
                continue
            m = self._const(body.mass)
            c = [self._const(x) for x in body.com]
            pc = [p[i] + sum((r[i][j] * c[j] for j in range(3)), zero) for i in range(3)]
            jc = [[self._d(pc[i], kk) for kk in range(n)] for i in range(3)]
            ic = self._const_matrix(body.inertia_com)
            jtj = _matmul(_transpose(jc), jc)
            jij = _matmul(_matmul(_transpose(jw), ic), jw)
            for i in range(n):
                for j in range(n):
                    kinetic[i][j] += m * jtj[i][j] + jij[i][j]
            potential -= m * sum((self.gravity[i] * pc[i] for i in range(3)), zero)
        return [(kinetic, potential)]

    def _energies_origin(self):
        """Origin form, one (K_p, V_p) per standard parameter: T = sum_p pi_p 1/2 qd^T K_p qd, V = sum_p pi_p V_p.

        T_b = 1/2 m |u|^2 + u . (w x h) + 1/2 w^T I_O w, u = R^T v the origin velocity in body axes,
        and u . (w x h) = h . (u x w).
        """
        n = self.dof
        zero = self.ring.zero
        out = []
        for r, p, jp, jw in self._jac:
            ju = _matmul(_transpose(r), jp)  # u = ju qd

            def outer(a, b):  # (a.qd)(b.qd) = 1/2 qd^T (a b^T + b a^T) qd
                return [[a[i] * b[j] + b[i] * a[j] for j in range(n)] for i in range(n)]

            def sub(a, b):
                return [[a[i][j] - b[i][j] for j in range(n)] for i in range(n)]

            def half(a):  # 1/2 (a.qd)^2 = 1/2 qd^T (a a^T) qd
                return [[a[i] * a[j] for j in range(n)] for i in range(n)]

            u, w = ju, jw
            g_p = -sum((self.gravity[i] * p[i] for i in range(3)), zero)
            g_r = [-sum((self.gravity[i] * r[i][j] for i in range(3)), zero) for j in range(3)]
            out += [
                (_matmul(_transpose(ju), ju), g_p),  # m: 1/2 |u|^2
                (sub(outer(u[1], w[2]), outer(u[2], w[1])), g_r[0]),  # mx: (u x w)_x
                (sub(outer(u[2], w[0]), outer(u[0], w[2])), g_r[1]),  # my
                (sub(outer(u[0], w[1]), outer(u[1], w[0])), g_r[2]),  # mz
                (half(w[0]), zero),  # Ixx: 1/2 wx^2
                (outer(w[0], w[1]), zero),  # Ixy: wx wy
                (outer(w[0], w[2]), zero),  # Ixz
                (half(w[1]), zero),  # Iyy
                (outer(w[1], w[2]), zero),  # Iyz
                (half(w[2]), zero),  # Izz
            ]
        return out

    # ---------------------------------------------------------------- numeric evaluation
    def _compile(self, energies):
        """Polynomials K, dK/dq_k, dV/dq_k of every energy, compiled to one monomial evaluation."""
        n = self.dof
        polys = []
        for kinetic, potential in energies:
            polys += [kinetic[i][j] for i in range(n) for j in range(n)]
            polys += [self._d(kinetic[i][j], k) for k in range(n) for i in range(n) for j in range(n)]
            polys += [self._d(potential, k) for k in range(n)]
        monomials: dict[tuple, int] = {}
        entries = []
        for row, p in enumerate(polys):
            for monom, coeff in p.terms():
                col = monomials.setdefault(monom, len(monomials))
                entries.append((row, col, float(coeff)))
        exponents = np.array(list(monomials), dtype=float).reshape(len(monomials), self.ring.ngens)
        coeffs = np.zeros((len(polys), max(len(monomials), 1)))
        for row, col, value in entries:
            coeffs[row, col] += value
        block = n * n + n**3 + n
        count = len(energies)

        def evaluate(q: np.ndarray):
            variables = []
            for k, b in enumerate(self.movable):
                if b.joint.kind == "revolute":
                    variables += [np.cos(q[:, k]), np.sin(q[:, k])]
                else:
                    variables += [q[:, k]]
            vals = np.ones((q.shape[0], exponents.shape[0]))
            for v, x in enumerate(variables):
                vals *= x[:, None] ** exponents[:, v][None, :]
            values = (vals @ coeffs[:, : exponents.shape[0]].T).reshape(q.shape[0], count, block)
            kin = values[:, :, : n * n].reshape(-1, count, n, n)
            dkin = values[:, :, n * n : n * n + n**3].reshape(-1, count, n, n, n)
            dpot = values[:, :, n * n + n**3 :]
            return kin, dkin, dpot

        return evaluate

    @staticmethod
    def _euler_lagrange(kin, dkin, dpot, qd, qdd) -> np.ndarray:
        """tau_i = d/dt dL/dqd_i - dL/dq_i for L = 1/2 qd^T K(q) qd - V(q), per sample and energy:
        d/dt (K qd) = K qdd + sum_k (dK/dq_k qd_k) qd,  dL/dq_i = 1/2 qd^T dK/dq_i qd - dV/dq_i."""
        return (
            np.einsum("spij,sj->spi", kin, qdd)
            + np.einsum("spkij,sk,sj->spi", dkin, qd, qd)
            - 0.5 * np.einsum("spkij,si,sj->spk", dkin, qd, qd)
            + dpot
        )

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        """(N, dof) joint torques (COM-form Lagrangian) for states shaped (N, dof)."""
        if self._tau_fn is None:
            self._tau_fn = self._compile(self._energies_com())
        q, qd, qdd = _states(q, qd, qdd)
        return self._euler_lagrange(*self._tau_fn(q), qd, qdd)[:, 0, :]

    def regressor(self, q, qd, qdd) -> np.ndarray:
        """(N, dof, 10*bodies) regressor in the order of ``parameter_names`` (origin-form Lagrangian)."""
        if self._regressor_fn is None:
            self._regressor_fn = self._compile(self._energies_origin())
        q, qd, qdd = _states(q, qd, qdd)
        return np.transpose(self._euler_lagrange(*self._regressor_fn(q), qd, qdd), (0, 2, 1))

    def standard_parameters(self) -> np.ndarray:
        return np.concatenate([b.standard_parameters() for b in self.bodies])

    def forward_kinematics(self, q) -> list[np.ndarray]:
        """Numeric 4x4 body poses at one configuration (evaluates the symbolic poses)."""
        q = np.asarray(q, dtype=float)
        point = []
        for k, b in enumerate(self.movable):
            point += [math.cos(q[k]), math.sin(q[k])] if b.joint.kind == "revolute" else [float(q[k])]
        return [np.array([[float(x(*point)) if point else float(x) for x in row] for row in t]) for t in self.poses]


def _states(q, qd, qdd):
    return tuple(np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))


# --------------------------------------------------------------------------------------------------------
# builders
# --------------------------------------------------------------------------------------------------------
def from_robid_model(model) -> LagrangianDynamics:
    """Oracle from a robid RobotModel, reading only its numeric data (JointGeometry A, axis, B, offsets,
    link mass/com/inertia_com, gravity); no robid function is called."""
    bodies = []
    for joint in model.joints:
        g = joint.geometry
        offset = g.angle_offset if joint.type == "revolute" else g.displacement_offset
        spec = JointSpec(
            joint.type,
            homogeneous(g.a_rotation, g.a_translation),
            tuple(g.axis),
            homogeneous(g.b_rotation, g.b_translation),
            offset,
        )
        xx, yy, zz, xy, xz, yz = joint.link.inertia_com
        bodies.append(
            Body(joint.name, spec, joint.link.mass, tuple(joint.link.com), inertia_matrix(xx, yy, zz, xy, xz, yz))
        )
    return LagrangianDynamics(bodies, model.gravity)


def quantity(value) -> float:
    """Numbers are SI; strings may carry deg, rad, mm or m (own parser, not robid's)."""
    if isinstance(value, int | float):
        return float(value)
    text = str(value).strip()
    for unit, factor in (("deg", math.pi / 180.0), ("rad", 1.0), ("mm", 1e-3), ("m", 1.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)


def from_dh_yaml(path: str | Path) -> LagrangianDynamics:
    """Oracle written from the DH table of a robid YAML robot file, read with PyYAML (not robid's reader)."""
    import yaml

    data = yaml.safe_load(Path(path).read_text())
    convention = dh if data.get("kinematics", "dh") == "dh" else mdh
    bodies = []
    for j in data["joints"]:
        kind = j.get("type", "revolute")
        a, alpha, d = (quantity(j.get(k, 0)) for k in ("a", "alpha", "d"))
        theta = quantity(j.get("offset", 0) if kind == "revolute" else j.get("theta", 0))
        link = j.get("link", {})
        xx, yy, zz, xy, xz, yz = (quantity(v) for v in link.get("inertia", [0] * 6))
        bodies.append(
            Body(
                j["name"],
                convention(kind, a, alpha, d, theta),
                quantity(link.get("mass", 0)),
                [quantity(c) for c in link.get("com", [0, 0, 0])],
                inertia_matrix(xx, yy, zz, xy, xz, yz),
            )
        )
    return LagrangianDynamics(bodies, [quantity(g) for g in data.get("gravity", [0, 0, -9.81])])


def _floats(text: str | None, default: str) -> list[float]:
    return [float(v) for v in (text if text is not None else default).split()]


def bodies_from_urdf(path: str | Path, gravity_world=(0.0, 0.0, -9.81)) -> LagrangianDynamics:
    """Oracle from a URDF tree, parsed here without robid: every link is a body (fixed joints kept as such)."""
    root = ET.parse(str(path)).getroot()
    links = {}
    for el in root.findall("link"):
        mass, com, inertia = 0.0, (0.0, 0.0, 0.0), np.zeros((3, 3))
        inertial = el.find("inertial")
        if inertial is not None:
            mass = float(inertial.find("mass").get("value"))
            origin = inertial.find("origin")
            com = tuple(_floats(origin.get("xyz") if origin is not None else None, "0 0 0"))
            angles = _floats(origin.get("rpy") if origin is not None else None, "0 0 0")
            ie = inertial.find("inertia")
            local = inertia_matrix(*(float(ie.get(k, "0")) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")))
            rot = rpy(*angles)[:3, :3]
            inertia = rot @ local @ rot.T
        links[el.get("name")] = (mass, com, inertia)
    children: dict[str, list] = {}
    child_links = set()
    for el in root.findall("joint"):
        children.setdefault(el.find("parent").get("link"), []).append(el)
        child_links.add(el.find("child").get("link"))
    (root_link,) = [name for name in links if name not in child_links]
    mass, com, inertia = links[root_link]
    bodies = [Body(root_link, fixed(np.eye(4)), mass, com, inertia, parent=-1)]

    def visit(link: str, index: int) -> None:
        for el in children.get(link, []):
            kind = el.get("type")
            origin = el.find("origin")
            xyz = _floats(origin.get("xyz") if origin is not None else None, "0 0 0")
            angles = _floats(origin.get("rpy") if origin is not None else None, "0 0 0")
            axis_el = el.find("axis")
            axis = _floats(axis_el.get("xyz") if axis_el is not None else None, "1 0 0")
            child = el.find("child").get("link")
            mass, com, inertia = links[child]
            name = el.get("name") if kind != "fixed" else child
            bodies.append(Body(name, urdf_joint(kind, xyz, angles, axis), mass, com, inertia, parent=index))
            visit(child, len(bodies) - 1)

    visit(root_link, 0)
    return LagrangianDynamics(bodies, gravity_world)
