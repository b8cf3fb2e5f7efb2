"""Energy-based (Lagrange) inverse dynamics of small robots with sympy: a test oracle independent of robid.

A robot is a list of rigid bodies, each placed relative to its parent body (or the base) by a homogeneous
transform that depends on at most one joint variable. Serial chains and trees (fixed side branches) both
work, and fixed joints need no merging: a body on a fixed joint simply adds its energy.

For every body b with pose (R_b(q), p_b(q)) in the base frame the oracle differentiates the forward
kinematics symbolically:

* linear velocity of the body origin      v_b = (dp_b/dq) qd                       (base frame)
* angular velocity in the body frame      [w_b]x = R_b^T dR_b/dt = sum_k R_b^T (dR_b/dq_k) qd_k

and builds the Lagrangian L = T - V with

* COM form (used for the torque):      T = 1/2 m |v_c|^2 + 1/2 w^T I_c w,   p_c = p_b + R_b c,
                                        V = -m g . p_c
* origin form (used for the regressor): T = 1/2 m |u|^2 + u . (w x h) + 1/2 w^T I_O w,  u = R_b^T v_b,
                                        V = -g . (m p_b + R_b h),  h = m c (first moments),

where I_c is the inertia about the centre of mass and I_O = I_c + m (c.c E - c c^T) the inertia about the
body origin, both in body axes with the tensor convention (products are the off-diagonal entries).
The origin form is linear in the ten standard parameters (m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz), so
each regressor column is the Euler-Lagrange operator applied to that parameter's energy coefficient.
Joint torques follow literally from tau_i = d/dt (dL/dqd_i) - dL/dq_i with
d/dt f(q, qd) = sum_j (df/dq_j qd_j + df/dqd_j qdd_j).

Keep it to small robots (<= 4 movable joints): the symbolic expressions grow quickly.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import sympy as sp

#: order of the ten standard parameters of one body
PARAMETERS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")

Transform = Callable[[sp.Expr | None], sp.Matrix]


# --------------------------------------------------------------------------------------------------------
# elementary symbolic transforms
# --------------------------------------------------------------------------------------------------------
def num(x) -> sp.Expr:
    """Exact integers stay integers (keeps structural zeros), other numbers become sympy Floats."""
    if isinstance(x, sp.Basic):
        return x
    xf = float(x)
    if xf == round(xf) and abs(xf) < 1e15:
        return sp.Integer(int(round(xf)))
    return sp.Float(xf)


def homogeneous(rotation, translation) -> sp.Matrix:
    t = sp.eye(4)
    for i in range(3):
        for j in range(3):
            t[i, j] = num(rotation[i][j]) if not isinstance(rotation, sp.Matrix) else rotation[i, j]
        t[i, 3] = num(translation[i])
    return t


def trans(x, y, z) -> sp.Matrix:
    return homogeneous(sp.eye(3), (x, y, z))


def rot_x(angle) -> sp.Matrix:
    c, s = sp.cos(angle), sp.sin(angle)
    return homogeneous(sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]]), (0, 0, 0))


def rot_y(angle) -> sp.Matrix:
    c, s = sp.cos(angle), sp.sin(angle)
    return homogeneous(sp.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]]), (0, 0, 0))


def rot_z(angle) -> sp.Matrix:
    c, s = sp.cos(angle), sp.sin(angle)
    return homogeneous(sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]]), (0, 0, 0))


def rot_axis(axis, angle) -> sp.Matrix:
    """Rotation about a unit axis: R = u u^T + cos(a) (E - u u^T) + sin(a) [u]x (axis-angle form)."""
    u = sp.Matrix([num(a) for a in axis])
    ux = sp.Matrix([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    uu = u * u.T
    r = uu + sp.cos(angle) * (sp.eye(3) - uu) + sp.sin(angle) * ux
    return homogeneous(r, (0, 0, 0))


def rpy(roll, pitch, yaw) -> sp.Matrix:
    """URDF fixed-axis roll-pitch-yaw: Rz(yaw) Ry(pitch) Rx(roll)."""
    return rot_z(num(yaw)) * rot_y(num(pitch)) * rot_x(num(roll))


# --------------------------------------------------------------------------------------------------------
# joint transforms (each returns a callable q -> T_parent,body)
# --------------------------------------------------------------------------------------------------------
def fixed(t: sp.Matrix) -> Transform:
    return lambda q: t


def dh(kind: str, a, alpha, d, theta) -> Transform:
    """Standard DH: Rz(theta) Tz(d) Tx(a) Rx(alpha); the joint variable adds to theta (R) or d (P)."""
    a, alpha, d, theta = (num(v) for v in (a, alpha, d, theta))
    if kind == "revolute":
        return lambda q: rot_z(q + theta) * trans(0, 0, d) * trans(a, 0, 0) * rot_x(alpha)
    return lambda q: rot_z(theta) * trans(0, 0, q + d) * trans(a, 0, 0) * rot_x(alpha)


def mdh(kind: str, a, alpha, d, theta) -> Transform:
    """Modified (Craig) DH: Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)."""
    a, alpha, d, theta = (num(v) for v in (a, alpha, d, theta))
    if kind == "revolute":
        return lambda q: rot_x(alpha) * trans(a, 0, 0) * rot_z(q + theta) * trans(0, 0, d)
    return lambda q: rot_x(alpha) * trans(a, 0, 0) * rot_z(theta) * trans(0, 0, q + d)


def screw(kind: str, before: sp.Matrix, axis, after: sp.Matrix, offset=0.0) -> Transform:
    """before . (rotation about / translation along the unit axis by q + offset) . after."""
    off = num(offset)
    if kind == "revolute":
        return lambda q: before * rot_axis(axis, q + off) * after
    u = [num(a) for a in axis]
    return lambda q: before * trans(*(ui * (q + off) for ui in u)) * after


def urdf_joint(kind: str, xyz, rpy_angles, axis=(1, 0, 0)) -> Transform:
    """URDF joint: origin Trans(xyz) Rz Ry Rx, then the motion about / along <axis> (unit)."""
    origin = trans(*(num(v) for v in xyz)) * rpy(*rpy_angles)
    if kind == "fixed":
        return fixed(origin)
    norm = math.sqrt(sum(float(a) ** 2 for a in axis))
    unit = [float(a) / norm for a in axis]
    return screw("revolute" if kind == "continuous" else kind, origin, unit, sp.eye(4))


# --------------------------------------------------------------------------------------------------------
# robot description
# --------------------------------------------------------------------------------------------------------
@dataclass
class Body:
    """A rigid body placed by ``transform`` in its parent's frame (parent -1 = base).

    ``kind`` is "revolute", "prismatic" or "fixed"; inertia_com is the 3x3 tensor about the COM, body axes.
    """

    name: str
    kind: str
    transform: Transform
    mass: float = 0.0
    com: Sequence[float] = (0.0, 0.0, 0.0)
    inertia_com: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))
    parent: int | None = None  # None = previous body in the list (serial chain)

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


class LagrangianDynamics:
    """tau(q, qd, qdd) and the standard-parameter regressor of a small robot, by Lagrange with sympy."""

    def __init__(self, bodies: Sequence[Body], gravity: Sequence[float]):
        self.bodies = list(bodies)
        self.gravity = sp.Matrix([num(g) for g in gravity])
        self.joint_names = [b.name for b in self.bodies if b.kind != "fixed"]
        n = len(self.joint_names)
        if n > 5:
            raise ValueError("the sympy Lagrangian oracle is meant for small robots (<= 4-5 joints)")
        self.dof = n
        self.q = sp.symbols(f"q0:{n}", real=True)
        self.qd = sp.symbols(f"qd0:{n}", real=True)
        self.qdd = sp.symbols(f"qdd0:{n}", real=True)
        self.parameter_names = [f"{p}_{b.name}" for b in self.bodies for p in PARAMETERS]
        self._kinematics()
        self._tau_fn = None
        self._regressor_fn = None

    # ---------------------------------------------------------------- kinematics by differentiation
    def _kinematics(self) -> None:
        # Entries are kept expanded as polynomials in cos/sin of the joint angles (and prismatic q), which
        # keeps the derivatives small; nothing is simplified, so no identity is assumed.
        poses: list[sp.Matrix] = []
        k = 0
        self.body_joint_index = []
        for i, body in enumerate(self.bodies):
            parent = i - 1 if body.parent is None else body.parent
            base = sp.eye(4) if parent < 0 else poses[parent]
            if body.kind == "fixed":
                local = body.transform(None)
                self.body_joint_index.append(None)
            else:
                local = body.transform(self.q[k])
                self.body_joint_index.append(k)
                k += 1
            poses.append(_expand(base * local))
        self.poses = poses
        q = sp.Matrix(self.q)
        self._jac = []
        for t in poses:
            r = t[:3, :3]
            p = t[:3, 3]
            jp = _expand(p.jacobian(q)) if self.dof else sp.zeros(3, 0)  # d p / d q, base frame
            jw = sp.zeros(3, self.dof)  # body-frame angular velocity per unit qd_k: [w]x = R^T dR/dq_k
            for kk in range(self.dof):
                s = r.T * r.diff(self.q[kk])
                jw[:, kk] = _expand(sp.Matrix([s[2, 1], s[0, 2], s[1, 0]]))
            self._jac.append((r, p, jp, jw))

    # ---------------------------------------------------------------- Euler-Lagrange operator
    def _euler_lagrange(self, kinetic: sp.Matrix, potential: sp.Expr) -> list[sp.Expr]:
        """tau_i = d/dt dL/dqd_i - dL/dq_i for L = 1/2 qd^T K(q) qd - V(q) (K symmetric, n x n)."""
        qd = sp.Matrix(self.qd)
        lagrangian = sp.expand((qd.T * kinetic * qd)[0, 0] / 2 - potential)
        tau = []
        for i in range(self.dof):
            dl_dqd = sp.diff(lagrangian, self.qd[i])
            ddt = sum(
                (sp.diff(dl_dqd, self.q[j]) * self.qd[j] + sp.diff(dl_dqd, self.qd[j]) * self.qdd[j])
                for j in range(self.dof)
            )
            tau.append(sp.expand(ddt - sp.diff(lagrangian, self.q[i])))
        return tau

    # ---------------------------------------------------------------- COM form: torque
    def _tau_expressions(self) -> list[sp.Expr]:
        n = self.dof
        kinetic = sp.zeros(n, n)
        potential = sp.Integer(0)
        q = sp.Matrix(self.q)
        for body, (r, p, _jp, jw) in zip(self.bodies, self._jac, strict=True):
            m = num(body.mass)
            if m == 0 and not np.any(body.inertia_com):
                continue
            c = sp.Matrix([num(x) for x in body.com])
            pc = _expand(p + r * c)
            jc = _expand(pc.jacobian(q))  # COM velocity = jc qd
            ic = sp.Matrix(3, 3, [num(x) for x in np.asarray(body.inertia_com, dtype=float).ravel()])
            # T = 1/2 m |v_c|^2 + 1/2 w^T I_c w = 1/2 qd^T (m jc^T jc + jw^T I_c jw) qd
            kinetic += m * jc.T * jc + jw.T * ic * jw
            potential += -m * (self.gravity.T * pc)[0, 0]
        return self._euler_lagrange(_expand(kinetic), potential)

    # ---------------------------------------------------------------- origin form: regressor
    def _regressor_expressions(self) -> sp.Matrix:
        columns = []
        for r, p, jp, jw in self._jac:
            ju = _expand(r.T * jp)  # origin velocity in body axes = ju qd
            rows_u = [ju[a, :] for a in range(3)]
            rows_w = [jw[a, :] for a in range(3)]

            def sym(a, b):  # quadratic form of (a qd)(b qd) as 1/2 qd^T K qd
                return a.T * b + b.T * a

            # u . (w x h) = h . (u x w): (u x w)_x = u_y w_z - u_z w_y, ...
            cross = [
                sym(rows_u[1], rows_w[2]) - sym(rows_u[2], rows_w[1]),
                sym(rows_u[2], rows_w[0]) - sym(rows_u[0], rows_w[2]),
                sym(rows_u[0], rows_w[1]) - sym(rows_u[1], rows_w[0]),
            ]
            g_p = (self.gravity.T * p)[0, 0]
            g_r = self.gravity.T * r
            zero = sp.Integer(0)
            energies = [
                (ju.T * ju, -g_p),  # m: 1/2 |u|^2
                (cross[0], -g_r[0]),  # mx
                (cross[1], -g_r[1]),  # my
                (cross[2], -g_r[2]),  # mz
                (rows_w[0].T * rows_w[0], zero),  # Ixx: 1/2 wx^2
                (sym(rows_w[0], rows_w[1]), zero),  # Ixy: wx wy
                (sym(rows_w[0], rows_w[2]), zero),  # Ixz: wx wz
                (rows_w[1].T * rows_w[1], zero),  # Iyy
                (sym(rows_w[1], rows_w[2]), zero),  # Iyz
                (rows_w[2].T * rows_w[2], zero),  # Izz
            ]
            for kinetic, potential in energies:
                columns.append(self._euler_lagrange(_expand(kinetic), potential))
        return sp.Matrix(self.dof, len(columns), lambda i, j: columns[j][i])

    # ---------------------------------------------------------------- numeric evaluation
    def _lambdify(self, expressions):
        return sp.lambdify((self.q, self.qd, self.qdd), expressions, modules="numpy", cse=True)

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        """(N, dof) joint torques (COM-form Lagrangian) for states shaped (N, dof)."""
        if self._tau_fn is None:
            self._tau_fn = self._lambdify(self._tau_expressions())
        return _evaluate(self._tau_fn, q, qd, qdd, (self.dof,))

    def regressor(self, q, qd, qdd) -> np.ndarray:
        """(N, dof, 10*bodies) regressor in the order of ``parameter_names`` (origin-form Lagrangian)."""
        if self._regressor_fn is None:
            self._regressor_fn = self._lambdify(self._regressor_expressions())
        return _evaluate(self._regressor_fn, q, qd, qdd, (self.dof, len(self.parameter_names)))

    def standard_parameters(self) -> np.ndarray:
        return np.concatenate([b.standard_parameters() for b in self.bodies])

    def forward_kinematics(self, q) -> list[np.ndarray]:
        subs = dict(zip(self.q, np.asarray(q, dtype=float), strict=True))
        return [np.array(t.subs(subs).evalf(), dtype=float) for t in self.poses]


def _expand(m: sp.Matrix) -> sp.Matrix:
    return m.applyfunc(sp.expand)


def _evaluate(fn, q, qd, qdd, shape) -> np.ndarray:
    q, qd, qdd = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd))
    out = np.empty((q.shape[0], *shape))
    for k in range(q.shape[0]):
        out[k] = np.asarray(fn(q[k], qd[k], qdd[k]), dtype=float).reshape(shape)
    return out


# --------------------------------------------------------------------------------------------------------
# builders
# --------------------------------------------------------------------------------------------------------
def from_robid_model(model) -> LagrangianDynamics:
    """Oracle from a robid RobotModel, reading only its numeric data (JointGeometry A, axis, B, offsets,
    link mass/com/inertia_com, gravity); no robid function is called."""
    bodies = []
    for joint in model.joints:
        g = joint.geometry
        before = homogeneous(g.a_rotation, g.a_translation)
        after = homogeneous(g.b_rotation, g.b_translation)
        offset = g.angle_offset if joint.type == "revolute" else g.displacement_offset
        xx, yy, zz, xy, xz, yz = joint.link.inertia_com
        bodies.append(
            Body(
                name=joint.name,
                kind=joint.type,
                transform=screw(joint.type, before, g.axis, after, offset),
                mass=joint.link.mass,
                com=tuple(joint.link.com),
                inertia_com=inertia_matrix(xx, yy, zz, xy, xz, yz),
            )
        )
    return LagrangianDynamics(bodies, model.gravity)


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
            rot = np.array(rpy(*angles)[:3, :3].evalf(), dtype=float)
            inertia = rot @ local @ rot.T
        links[el.get("name")] = (mass, com, inertia)
    joints = root.findall("joint")
    children: dict[str, list] = {}
    child_links = set()
    for el in joints:
        children.setdefault(el.find("parent").get("link"), []).append(el)
        child_links.add(el.find("child").get("link"))
    (root_link,) = [name for name in links if name not in child_links]
    mass, com, inertia = links[root_link]
    bodies = [Body(root_link, "fixed", fixed(sp.eye(4)), mass, com, inertia, parent=-1)]

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
            bodies.append(
                Body(name, "fixed" if kind == "fixed" else ("revolute" if kind == "continuous" else kind),
                     urdf_joint(kind, xyz, angles, axis), mass, com, inertia, parent=index)
            )
            visit(child, len(bodies) - 1)

    visit(root_link, 0)
    return LagrangianDynamics(bodies, gravity_world)
