"""Reader for MuJoCo MJCF robots (docs/interfaces.md section 1; docs/model.md, "MJCF specifics").

The file is compiled by MuJoCo (:mod:`robid.model.mjcf_compile`), and the robot is read from the compiled
``MjModel``: exactly the model ``mj_inverse`` simulates. The chain runs from the world through the bodies that carry
a hinge or slide joint, one joint per body, each hanging (possibly through bodies without joints) from the
previous one. Bodies without joints are welded to the nearest moving ancestor, and their inertia is merged into it.

Kinematics. MuJoCo places a body by its ``pos`` and ``quat`` in its parent, and a joint with position ``p`` and
axis ``u`` in the body's frame moves it as ``T(p) R(u, q - q0) T(-p)`` (hinge) or ``T(u (q - q0))`` (slide),
``q0`` the joint's ``ref``. With ``T_rel`` the constant transform from the previous moving body (or the base) to
this body, robid's ``A M(q) B`` (docs/model.md) is ``A = T_rel T(p)``, ``M`` about ``u``, ``B = T(-p)``, angle or
displacement offset ``-q0``: robid's body frame is MuJoCo's body frame. The base frame is the frame of the body the
first moving body hangs from (the world body, or a fixed base body); gravity (``<option gravity>``, zero when
disabled) is expressed in it.

Dynamics. ``body_mass``, ``body_ipos``, ``body_iquat``, ``body_inertia`` give the link (inertia about the COM
rotated into the body frame, ``I = R diag(I_p) R^T``); a joint's ``armature`` is the reflected rotor inertia (a
drive with gear ratio 1 and that rotor inertia, so that ``Ia_J`` is identified on every joint), ``damping`` the
viscous friction, ``frictionloss`` the Coulomb friction (MuJoCo applies it as a soft constraint; docs/model.md says
how the two differ), ``range`` the position limits, ``actuatorfrcrange`` and the force range of the actuators on
the joint (times their gear) the torque limit. What robid's rigid model cannot hold is refused with the joint
named: ball and free joints, several joints in one body, joint springs, polynomial damping, gravity compensation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.model.checks import check_link
from robid.model.mjcf_compile import _mujoco, compile_mjcf
from robid.model.robot_model import Drive, Friction, Joint, JointGeometry, Limits, Link, RobotModel

#: rotation entries this close to 0 or +-1 are snapped (quaternions of right angles give 2.2e-16)
SNAP_ROTATION = 1e-9
#: translations below this are exact zeros (m)
SNAP_TRANSLATION = 1e-12


@dataclass(frozen=True)
class MjcfChain:
    """Where robid's joints sit in MuJoCo's compiled model: per robid joint its MuJoCo ``joint`` id, the moving
    ``body`` id and the bodies ``merged`` into it; ``base`` is the body the chain hangs from, ``names`` robid's
    joint names."""

    joints: tuple[int, ...]
    bodies: tuple[int, ...]
    merged: tuple[tuple[int, ...], ...]
    base: int
    names: tuple[str, ...]


def read_robot_mjcf(path: str | Path) -> RobotModel:
    """The serial chain of an MJCF file (module docstring)."""
    path = Path(path)
    where = str(path)
    spec, model = compile_mjcf(path)
    chain = serial_chain(model, where)
    joints = tuple(_joint(model, chain, k, where) for k in range(len(chain.joints)))
    return RobotModel(
        name=spec.modelname or path.stem,
        joints=joints,
        gravity=_gravity(model, chain.base),
        kinematics="mjcf",
        source=where,
    )


def mjcf_identifier(name: str) -> str:
    """robid's name of an MJCF joint: every character other than an ASCII letter, digit or _ replaced by _."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def object_name(model, kind: str, index: int) -> str:
    """The MJCF name of a body or joint of the compiled model ('' when unnamed)."""
    mujoco = _mujoco()
    obj = mujoco.mjtObj.mjOBJ_BODY if kind == "body" else mujoco.mjtObj.mjOBJ_JOINT
    return mujoco.mj_id2name(model, obj, index) or ""


def _label(model, kind: str, index: int) -> str:
    name = object_name(model, kind, index)
    return repr(name) if name else f"#{index} (unnamed)"


def serial_chain(model, where: str) -> MjcfChain:
    """The serial chain of the compiled ``model``, checked (module docstring)."""
    _refuse_other_joints(model, where)
    _refuse_other_forces(model, where)
    moving = [b for b in range(1, model.nbody) if model.body_jntnum[b] > 0]
    if not moving:
        raise RobidInputError(f"{where}: no hinge or slide joint found (robid identifies a chain of moving bodies)")
    for b in moving:
        if model.body_jntnum[b] > 1:
            raise RobidInputError(
                f"{where}: body {_label(model, 'body', b)} has {model.body_jntnum[b]} joints; robid reads one joint "
                "per body (nest the joints in bodies of their own)"
            )
    previous = 0
    for b in moving:
        hangs_from = int(model.body_weldid[model.body_parentid[b]])
        if hangs_from != previous:
            other = "the world" if previous == 0 else f"body {_label(model, 'body', previous)}"
            raise RobidInputError(
                f"{where}: body {_label(model, 'body', b)} does not hang from {other}: the moving bodies branch, "
                "robid reads a serial chain (one moving body after the other)"
            )
        previous = b
    merged = tuple(
        tuple(b for b in range(1, model.nbody) if model.body_jntnum[b] == 0 and model.body_weldid[b] == m)
        for m in moving
    )
    joints = tuple(int(model.body_jntadr[b]) for b in moving)
    return MjcfChain(joints, tuple(moving), merged, int(model.body_parentid[moving[0]]),
                     _joint_names(model, joints, where))


def _refuse_other_joints(model, where: str) -> None:
    mujoco = _mujoco()
    kinds = {int(mujoco.mjtJoint.mjJNT_FREE): "free", int(mujoco.mjtJoint.mjJNT_BALL): "ball"}
    for j in range(model.njnt):
        kind = kinds.get(int(model.jnt_type[j]))
        if kind is not None:
            raise RobidInputError(
                f"{where}: joint {_label(model, 'joint', j)} is a {kind} joint: robid reads serial chains of hinge "
                "and slide joints (no floating base, no ball joint)"
            )


def _refuse_other_forces(model, where: str) -> None:
    """Forces mj_inverse would add that a serial chain's model has no term for: equality constraints, tendon
    springs, dampers and friction, fluid forces."""
    mujoco = _mujoco()
    if model.neq and not int(model.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_EQUALITY):
        raise RobidInputError(f"{where}: {model.neq} equality constraint(s): robid reads a serial chain of independent "
                              "joints; remove them (or disable equality in <option><flag>)")
    for name in ("tendon_stiffness", "tendon_damping", "tendon_frictionloss"):
        values = np.asarray(getattr(model, name, np.zeros(0)))
        if values.size and np.any(values != 0):
            raise RobidInputError(f"{where}: a tendon has {name.split('_')[1]}: tendon forces are not in robid's "
                                  "joint model; remove it")
    if model.opt.density or model.opt.viscosity:
        raise RobidInputError(f"{where}: <option density/viscosity> (fluid forces) are not in robid's model; set "
                              "them to 0")


def _joint_names(model, joints: tuple[int, ...], where: str) -> tuple[str, ...]:
    """robid's names: the joint's MJCF name made an identifier, else its body's, else joint<k>; unique."""
    names = []
    for k, j in enumerate(joints):
        raw = object_name(model, "joint", j) or object_name(model, "body", int(model.jnt_bodyid[j]))
        name = mjcf_identifier(raw) if raw else f"joint{k + 1}"
        if name in names:
            raise RobidInputError(
                f"{where}: two joints are both named {name!r} by robid (characters other than ASCII letters, digits "
                "and _ become _; an unnamed joint takes its body's name); rename one"
            )
        names.append(name)
    return tuple(names)


def _joint(model, chain: MjcfChain, k: int, where: str) -> Joint:
    mujoco = _mujoco()
    j, body = chain.joints[k], chain.bodies[k]
    jw = f"{where}: joint {_label(model, 'joint', j)}"
    _refuse_springs(model, j, chain, k, jw)
    parent = chain.bodies[k - 1] if k else chain.base
    rel = path_transform(model, parent, body)
    q0 = float(model.qpos0[model.jnt_qposadr[j]])
    axis = _snap(np.asarray(model.jnt_axis[j], dtype=float), SNAP_ROTATION)
    revolute = int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_HINGE)
    if revolute:
        p = np.asarray(model.jnt_pos[j], dtype=float)
        a_translation, b_translation = rel[:3, :3] @ p + rel[:3, 3], -p
    else:
        a_translation, b_translation = rel[:3, 3], np.zeros(3)
    geometry = JointGeometry(
        a_rotation=_rows(rel[:3, :3]),
        a_translation=_triple(a_translation),
        axis=_triple(axis),
        b_rotation=_rows(np.eye(3)),
        b_translation=_triple(b_translation),
        angle_offset=-q0 + 0.0 if revolute else 0.0,
        displacement_offset=0.0 if revolute else -q0 + 0.0,
    )
    link = _link(model, body, chain.merged[k])
    check_link(link, f"{jw}: body {_label(model, 'body', body)}")
    dof = int(model.jnt_dofadr[j])
    return Joint(
        name=chain.names[k],
        type="revolute" if revolute else "prismatic",
        geometry=geometry,
        link=link,
        limits=_limits(model, j),
        drive=Drive(gear_ratio=1.0, rotor_inertia=float(model.dof_armature[dof])),
        friction=_friction(model, dof),
    )


def _refuse_springs(model, j: int, chain: MjcfChain, k: int, where: str) -> None:
    """What robid's rigid joint cannot hold: a joint spring, polynomial terms, gravity compensation."""
    mujoco = _mujoco()
    springs = not int(model.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_SPRING)
    if springs and model.jnt_stiffness[j] != 0:
        raise RobidInputError(f"{where}: stiffness {model.jnt_stiffness[j]:g} (a spring towards springref): robid's "
                              "rigid joints have no spring; remove it (or disable springs in <option><flag>)")
    dof = int(model.jnt_dofadr[j])
    for field, index, what in (("jnt_stiffnesspoly", j, "stiffnesspoly"), ("dof_dampingpoly", dof, "dampingpoly")):
        values = getattr(model, field, None)
        if values is not None and np.any(np.asarray(values[index]) != 0):
            raise RobidInputError(f"{where}: {what} (a nonlinear spring or damper) is not in robid's joint model; "
                                  "remove it")
    for b in (chain.bodies[k], *chain.merged[k]):
        if model.body_gravcomp[b] != 0:
            raise RobidInputError(
                f"{where}: body {_label(model, 'body', b)} has gravcomp {model.body_gravcomp[b]:g} (a simulator-only "
                "force): robid identifies the robot's real gravity torque; remove gravcomp"
            )


def _link(model, body: int, merged: tuple[int, ...]) -> Link:
    """The body's inertia in its frame, with the bodies welded to it merged (parallel-axis theorem)."""
    parts = [_inertia_part(model, body, np.eye(4))]
    parts += [_inertia_part(model, b, path_transform(model, body, b)) for b in merged]
    mass = sum(m for m, _, _ in parts)
    com = sum(m * c for m, c, _ in parts) / mass if mass > 0 else np.zeros(3)
    inertia = np.zeros((3, 3))
    for m, c, i_c in parts:
        r = c - com
        inertia += i_c + m * (r @ r * np.eye(3) - np.outer(r, r))
    entries = tuple(float(inertia[a, b]) for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))
    return Link(mass=float(mass), com=_triple(com), inertia_com=entries)


def _inertia_part(model, body: int, t: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, COM, inertia about the COM) of one body in the frame ``t`` maps its frame into."""
    r = t[:3, :3] @ quat_matrix(model.body_iquat[body])
    inertia = r @ np.diag(np.asarray(model.body_inertia[body], dtype=float)) @ r.T
    com = t[:3, :3] @ np.asarray(model.body_ipos[body], dtype=float) + t[:3, 3]
    return float(model.body_mass[body]), com, inertia


def _limits(model, j: int) -> Limits:
    """range; the smallest of actuatorfrcrange and of |gear| x forcerange of the actuators on the joint."""
    mujoco = _mujoco()
    position = None
    if model.jnt_limited[j] and model.jnt_range[j][0] < model.jnt_range[j][1]:
        position = (float(model.jnt_range[j][0]), float(model.jnt_range[j][1]))
    torques = []
    if model.jnt_actfrclimited[j]:
        torques.append(float(np.max(np.abs(model.jnt_actfrcrange[j]))))
    for a in range(model.nu):
        on_joint = int(model.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_JOINT) and model.actuator_trnid[a][0] == j
        if on_joint and model.actuator_forcelimited[a]:
            torques.append(float(np.max(np.abs(model.actuator_forcerange[a])) * abs(model.actuator_gear[a][0])))
    torque = min(torques) if torques else None
    return Limits(position=position, torque=torque if torque and torque > 0 else None)


def _friction(model, dof: int) -> Friction:
    """damping -> viscous, frictionloss -> Coulomb; zero where the model disables them."""
    mujoco = _mujoco()
    flags = int(model.opt.disableflags)
    bits = mujoco.mjtDisableBit
    damping = 0.0 if flags & int(bits.mjDSBL_DAMPER) else float(model.dof_damping[dof])
    no_friction = flags & (int(bits.mjDSBL_FRICTIONLOSS) | int(bits.mjDSBL_CONSTRAINT))
    coulomb = 0.0 if no_friction else float(model.dof_frictionloss[dof])
    return Friction(viscous=damping, coulomb=coulomb)


def _gravity(model, base: int) -> tuple[float, float, float]:
    """``<option gravity>`` in the base frame (zero when gravity is disabled)."""
    mujoco = _mujoco()
    if int(model.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY):
        return (0.0, 0.0, 0.0)
    rotation = path_transform(model, 0, base)[:3, :3]
    return _triple(rotation.T @ np.asarray(model.opt.gravity, dtype=float))


def path_transform(model, ancestor: int, body: int) -> np.ndarray:
    """4x4 transform from ``ancestor``'s frame to ``body``'s: the bodies' ``pos``/``quat`` composed from below the
    ancestor down to the body (rotations snapped, so right angles stay exact)."""
    path = []
    b = body
    while b != ancestor:
        if b == 0:
            raise ValueError(f"body {ancestor} is not an ancestor of body {body}")
        path.append(b)
        b = int(model.body_parentid[b])
    t = np.eye(4)
    for b in reversed(path):
        local = np.eye(4)
        local[:3, :3] = quat_matrix(model.body_quat[b])
        local[:3, 3] = model.body_pos[b]
        t = t @ local
    t[:3, :3] = _snap(t[:3, :3], SNAP_ROTATION)
    t[:3, 3] = np.where(np.abs(t[:3, 3]) < SNAP_TRANSLATION, 0.0, t[:3, 3])
    return t


def quat_matrix(quat) -> np.ndarray:
    """Rotation matrix of a MuJoCo quaternion (w, x, y, z), by MuJoCo's own ``mju_quat2Mat``, snapped."""
    mujoco = _mujoco()
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, np.asarray(quat, dtype=float))
    return _snap(out.reshape(3, 3), SNAP_ROTATION)


def _snap(x: np.ndarray, tol: float) -> np.ndarray:
    out = np.array(x, dtype=float)
    for target in (0.0, 1.0, -1.0):
        out[np.abs(out - target) < tol] = target
    return out


def _rows(r: np.ndarray) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(float(x) for x in row) for row in r)


def _triple(v) -> tuple[float, float, float]:
    a, b, c = (float(x) + 0.0 for x in v)
    return (a, b, c)
