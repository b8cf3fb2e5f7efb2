"""Pinocchio models for the tests: from a URDF (pinocchio's own parser) or from robid's numeric geometry.

``model_from_robid`` reads only the numbers of a robid RobotModel (JointGeometry A, axis, B, offsets; link
mass, COM, inertia about the COM; gravity) and places them in a pinocchio kinematic tree:

    joint i placement (in the joint frame of i-1) = B_{i-1} . A_i . M_i(offset_i)
    body i inertia (in joint frame i)            = the link inertia moved by B_i

so that pinocchio's joint frame i followed by B_i is robid's body frame i. pinocchio then computes the
dynamics with its own recursive algorithms (RNEA, joint-torque regressor).
"""

from __future__ import annotations

import numpy as np

try:  # the tests skip cleanly without pinocchio
    import pinocchio as pin
except ImportError:  # pragma: no cover
    pin = None


def _rodrigues(u: np.ndarray, angle: float) -> np.ndarray:
    u = np.asarray(u, dtype=float)
    uu = np.outer(u, u)
    ux = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    return uu + np.cos(angle) * (np.eye(3) - uu) + np.sin(angle) * ux


def model_from_robid(robot_model) -> pin.Model:
    model = pin.Model()
    parent = 0
    previous_b = pin.SE3.Identity()
    for joint in robot_model.joints:
        g = joint.geometry
        axis = np.asarray(g.axis, dtype=float)
        a = pin.SE3(np.array(g.a_rotation, dtype=float), np.array(g.a_translation, dtype=float))
        b = pin.SE3(np.array(g.b_rotation, dtype=float), np.array(g.b_translation, dtype=float))
        if joint.type == "revolute":
            motion0 = pin.SE3(_rodrigues(axis, g.angle_offset), np.zeros(3))
            jmodel = pin.JointModelRevoluteUnaligned(axis)
        else:
            motion0 = pin.SE3(np.eye(3), axis * g.displacement_offset)
            jmodel = pin.JointModelPrismaticUnaligned(axis)
        placement = previous_b * a * motion0
        jid = model.addJoint(parent, jmodel, placement, joint.name)
        xx, yy, zz, xy, xz, yz = joint.link.inertia_com
        i_com = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)
        body = pin.Inertia(float(joint.link.mass), np.array(joint.link.com, dtype=float), i_com)
        model.appendBodyToJoint(jid, b.act(body), pin.SE3.Identity())
        parent = jid
        previous_b = b
    model.gravity = pin.Motion(np.array([*robot_model.gravity, 0.0, 0.0, 0.0], dtype=float))
    return model


def model_from_urdf(path) -> pin.Model:
    return pin.buildModelFromUrdf(str(path))


def rnea(model, q, qd, qdd) -> np.ndarray:
    data = model.createData()
    return np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]).copy() for k in range(q.shape[0])])


def torque_regressor(model, q, qd, qdd) -> np.ndarray:
    """(N, nv, 10*nbodies) joint-torque regressor, pinocchio's parameter order per body."""
    data = model.createData()
    return np.array(
        [pin.computeJointTorqueRegressor(model, data, q[k], qd[k], qdd[k]).copy() for k in range(q.shape[0])]
    )


def base_parameter_count(model, q, qd, qdd, *, rotor=(), viscous=(), coulomb=(), offset=()) -> int:
    """Numeric rank of the stacked regressor with the drive columns appended (anchors B.1 method).

    rotor/viscous/coulomb/offset list the joint indices that get diag(qdd), diag(qd), diag(sign qd), 1.
    Rank by SVD with tolerance 1e-9 * sigma_max.
    """
    y = torque_regressor(model, q, qd, qdd)
    n, nv, _ = y.shape
    extra = []
    for joints, signal in ((rotor, qdd), (viscous, qd), (coulomb, np.sign(qd)), (offset, np.ones_like(qd))):
        for j in joints:
            col = np.zeros((n, nv, 1))
            col[:, j, 0] = signal[:, j]
            extra.append(col)
    stacked = np.concatenate([y, *extra], axis=2).reshape(n * nv, -1)
    return matrix_rank(stacked)


def matrix_rank(matrix: np.ndarray, rtol: float = 1e-9) -> int:
    s = np.linalg.svd(matrix, compute_uv=False)
    return int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0 else 0


def tree_model_from_robid(robot_model, tree, parents) -> pin.Model:
    """A pinocchio kinematic tree of robid joints ``tree`` (tree order) with ``parents`` (tree index, -1 base): as
    :func:`model_from_robid`, each joint placed in its parent's joint frame by B_parent . A . M(offset)."""
    model = pin.Model()
    ids = []
    for k, joint in enumerate(tree):
        g = joint.geometry
        axis = np.asarray(g.axis, dtype=float)
        a = pin.SE3(np.array(g.a_rotation, dtype=float), np.array(g.a_translation, dtype=float))
        b = pin.SE3(np.array(g.b_rotation, dtype=float), np.array(g.b_translation, dtype=float))
        if joint.type == "revolute":
            motion0 = pin.SE3(_rodrigues(axis, g.angle_offset), np.zeros(3))
            jmodel = pin.JointModelRevoluteUnaligned(axis)
        else:
            motion0 = pin.SE3(np.eye(3), axis * g.displacement_offset)
            jmodel = pin.JointModelPrismaticUnaligned(axis)
        p = parents[k]
        previous_b = _b_of(tree[p]) if p >= 0 else pin.SE3.Identity()
        jid = model.addJoint(ids[p] if p >= 0 else 0, jmodel, previous_b * a * motion0, joint.name)
        ids.append(jid)
        xx, yy, zz, xy, xz, yz = joint.link.inertia_com
        i_com = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)
        body = pin.Inertia(float(joint.link.mass), np.array(joint.link.com, dtype=float), i_com)
        model.appendBodyToJoint(jid, b.act(body), pin.SE3.Identity())
    model.gravity = pin.Motion(np.array([*robot_model.gravity, 0.0, 0.0, 0.0], dtype=float))
    return model


def _b_of(joint) -> pin.SE3:
    g = joint.geometry
    return pin.SE3(np.array(g.b_rotation, dtype=float), np.array(g.b_translation, dtype=float))


def add_point_frame(model, tree, k: int, xyz, name: str) -> int:
    """A frame at the point ``xyz`` of robid body ``k`` (its body frame = joint frame k . B_k)."""
    placement = _b_of(tree[k]) * pin.SE3(np.eye(3), np.asarray(xyz, dtype=float))
    return model.addFrame(pin.Frame(name, k + 1, placement, pin.FrameType.OP_FRAME))
