"""Immutable description of a serial robot, independent of the file format it came from.

Every joint is placed by the same three-step transform from the previous body frame to its own body frame
(see docs/model.md)::

    T_{i-1,i}(q_i) = A_i . M_i(q_i) . B_i

``A_i`` and ``B_i`` are constant homogeneous transforms and ``M_i`` is a rotation about (revolute) or a
translation along (prismatic) the unit axis ``axis_i``, expressed in the frame reached after ``A_i``.
Standard DH (Rz(theta) Tz(d) Tx(a) Rx(alpha)), modified DH (Rx(alpha) Tx(a) Rz(theta) Tz(d)) and URDF joints
(origin, then motion about <axis>) are all special cases; the readers build ``A_i`` and ``B_i``.

Link inertial data are stored as given (mass, centre of mass and inertia about the centre of mass, in the
body frame) and converted to the standard parameters (first moments and inertia about the frame origin) by
:meth:`Link.standard_parameters`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Order of the ten standard inertial parameters of one body (docs/interfaces.md section 1.3).
INERTIAL_PARAMETERS = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")

#: The rotation of a constant transform that does not rotate (readers' A_i or B_i).
IDENTITY_ROTATION = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


@dataclass(frozen=True)
class Limits:
    """Per-joint motion limits in SI units (rad or m based); ``None`` where not given."""

    position: tuple[float, float] | None = None
    velocity: float | None = None
    acceleration: float | None = None
    jerk: float | None = None
    torque: float | None = None


@dataclass(frozen=True)
class Link:
    """Inertial data of the body moved by a joint, in that joint's body frame.

    ``inertia_com`` is (Ixx, Iyy, Izz, Ixy, Ixz, Iyz) about the centre of mass, tensor convention (products
    are the off-diagonal entries themselves).
    """

    mass: float = 0.0
    com: tuple[float, float, float] = (0.0, 0.0, 0.0)
    inertia_com: tuple[float, float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)

    def inertia_tensor_com(self) -> np.ndarray:
        xx, yy, zz, xy, xz, yz = self.inertia_com
        return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)

    def standard_parameters(self) -> np.ndarray:
        """(m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz) with the inertia about the frame origin.

        Parallel-axis theorem: I_O = I_C + m (c^T c E - c c^T)  (e.g. Khalil & Dombre 2002, eq. 9.40).
        """
        m = float(self.mass)
        c = np.asarray(self.com, dtype=float)
        inertia = self.inertia_tensor_com() + m * (c @ c * np.eye(3) - np.outer(c, c))
        return np.array(
            [
                m,
                m * c[0],
                m * c[1],
                m * c[2],
                inertia[0, 0],
                inertia[0, 1],
                inertia[0, 2],
                inertia[1, 1],
                inertia[1, 2],
                inertia[2, 2],
            ]
        )


@dataclass(frozen=True)
class DriveCoupling:
    """The motor of joint J also turns with another joint K (coupled wrist): theta_m = r_J q_J + ratio q_K.

    ``joint`` is K's name and ``ratio`` the motor turns per radian of K (r_J is the drive's ``gear_ratio``).
    ``viscous`` and ``coulomb`` are the motor's own friction in joint-J units, fvm_J = fv_m r_J^2 and
    fcm_J = |r_J| fc_m (fv_m, fc_m at the motor shaft): by virtual power (tau = N^T tau_m) it acts on both joints
    at the motor velocity (docs/model.md, "Coupled drives").
    """

    joint: str
    ratio: float
    viscous: float = 0.0
    coulomb: float = 0.0


@dataclass(frozen=True)
class Drive:
    """Motor and gear: gear ratio (motor angle / joint angle), rotor inertia (motor side), torque constant, and
    the coupling of the motor to a second joint (``coupling``, :class:`DriveCoupling`) when it has one."""

    gear_ratio: float = 1.0
    rotor_inertia: float = 0.0
    torque_constant: float | None = None
    coupling: DriveCoupling | None = None

    @property
    def reflected_inertia(self) -> float:
        """Rotor inertia seen at the joint: rotor_inertia * gear_ratio**2."""
        return self.rotor_inertia * self.gear_ratio**2


#: the joint friction models of a robot file (docs/model.md, "Joint friction")
FRICTION_MODELS = ("linear", "stribeck", "sigmoid")


@dataclass(frozen=True)
class FrictionSigmoid:
    """One sigmoid of Gaz et al. 2019 (RA-L 4(4), eq. 3): ``amplitude`` phi1 (N m, N), ``slope`` phi2 (s/rad, s/m),
    ``offset`` phi3 (rad/s, m/s); its torque is :func:`sigmoid_friction`, zero at qd = 0."""

    amplitude: float
    slope: float
    offset: float = 0.0


@dataclass(frozen=True)
class FrictionRipple:
    """Position-dependent Coulomb level: r(q) = sum_k cos_k cos(h_k q) + sin_k sin(h_k q) over the ``harmonics``
    h_k of the joint position (N m, N), acting as r(q) sign(qd) (docs/model.md, "Joint friction")."""

    harmonics: tuple[int, ...]
    cos: tuple[float, ...]
    sin: tuple[float, ...]

    def level(self, q: np.ndarray) -> np.ndarray:
        """r(q) at the positions ``q`` (any shape)."""
        q = np.asarray(q, dtype=float)
        out = np.zeros_like(q)
        for h, a, b in zip(self.harmonics, self.cos, self.sin, strict=True):
            out = out + a * np.cos(h * q) + b * np.sin(h * q)
        return out


@dataclass(frozen=True)
class Friction:
    """Joint friction, drive side, joint units (docs/model.md, "Joint friction"). With s = sign(qd):

    * ``linear``:   tau_f = fv qd + fc s + f0;
    * ``stribeck``: tau_f = fv qd + [fc + (fs - fc) exp(-(qd/vs)^2)] s + f0 (the Stribeck curve of
      Armstrong-Helouvry, Dupont & Canudas de Wit 1994, Automatica 30(7), with exponent 2); ``static`` fs,
      ``stribeck_velocity`` vs > 0;
    * ``sigmoid``:  tau_f = fv qd + sum_i phi1_i [1/(1 + exp(-phi2_i (qd + phi3_i))) - 1/(1 + exp(-phi2_i phi3_i))]
      + f0  (Gaz et al. 2019, eq. 3, one term per entry of ``sigmoids``; fv = 0 is their model), no fc;

    plus, with ``ripple``, the position-dependent Coulomb level r(q) s (:class:`FrictionRipple`). ``viscous``
    fv, ``coulomb`` fc, ``offset`` f0 keep their meaning in every model; :meth:`excess` is what a model adds to
    the linear part fv qd + fc s + f0.
    """

    viscous: float = 0.0
    coulomb: float = 0.0
    offset: float = 0.0
    model: str = "linear"
    static: float = 0.0
    stribeck_velocity: float = 0.0
    sigmoids: tuple[FrictionSigmoid, ...] = ()
    ripple: FrictionRipple | None = None

    @property
    def is_linear(self) -> bool:
        """True for fv qd + fc sign(qd) + f0 alone (no Stribeck, sigmoid or ripple term)."""
        return self.model == "linear" and self.ripple is None

    @property
    def coulomb_level(self) -> float:
        """The Coulomb-like level the law reaches at speed, for formats that hold fc sign(qd) only (MJCF's
        frictionloss, URDF's friction): fc for the linear and Stribeck models, half the total rise of the sigmoids
        (sum phi1_i / 2, their torque going from -sum/2 to +sum/2 about the offset) for the sigmoid model."""
        if self.model == "sigmoid":
            return 0.5 * sum(s.amplitude for s in self.sigmoids)
        return self.coulomb

    def torque(self, qd: np.ndarray, q: np.ndarray | None = None, sign: np.ndarray | None = None) -> np.ndarray:
        """tau_f at the velocities ``qd`` (positions ``q`` for the ripple), with ``sign`` in place of sign(qd)
        when given (the virtual robot's tanh(qd/eps), identification's expected sign)."""
        qd = np.asarray(qd, dtype=float)
        s = np.sign(qd) if sign is None else np.asarray(sign, dtype=float)
        return self.viscous * qd + self.coulomb * s + self.offset + self.excess(qd, q, s)

    def excess(self, qd: np.ndarray, q: np.ndarray | None = None, sign: np.ndarray | None = None) -> np.ndarray:
        """The model's torque beyond fv qd + fc sign + f0 (zero for ``linear`` without ripple)."""
        qd = np.asarray(qd, dtype=float)
        s = np.sign(qd) if sign is None else np.asarray(sign, dtype=float)
        out = np.zeros_like(qd)
        if self.model == "stribeck":
            out = out + (self.static - self.coulomb) * np.exp(-((qd / self.stribeck_velocity) ** 2)) * s
        for sig in self.sigmoids:
            out = out + sigmoid_friction(qd, sig.amplitude, sig.slope, sig.offset)
        if self.ripple is not None:
            if q is None:
                raise ValueError("friction ripple: the joint positions are needed")
            out = out + self.ripple.level(q) * s
        return out

    def excess_slope(self, qd: np.ndarray, q: np.ndarray | None = None, sign: np.ndarray | None = None,
                     sign_slope: np.ndarray | None = None) -> np.ndarray:
        """d(excess)/d(qd) at fixed q, with ``sign_slope`` = d(sign)/d(qd) (0 where not given)."""
        qd = np.asarray(qd, dtype=float)
        s = np.sign(qd) if sign is None else np.asarray(sign, dtype=float)
        ds = np.zeros_like(qd) if sign_slope is None else np.asarray(sign_slope, dtype=float)
        out = np.zeros_like(qd)
        if self.model == "stribeck":
            vs = self.stribeck_velocity
            g = np.exp(-((qd / vs) ** 2))
            out = out + (self.static - self.coulomb) * g * (ds - 2.0 * qd / vs**2 * s)
        for sig in self.sigmoids:
            x = 0.5 * sig.slope * (qd + sig.offset)
            out = out + 0.25 * sig.amplitude * sig.slope / np.cosh(np.clip(x, -300.0, 300.0)) ** 2
        if self.ripple is not None and q is not None:
            out = out + self.ripple.level(q) * ds
        return out


def sigmoid_friction(qd, phi1, phi2, phi3) -> np.ndarray:
    """Gaz et al. 2019 (RA-L 4(4)) eq. 3, zero at qd = 0 (broadcasts; (N, dof) with per-joint phi)::

        tau_f = phi1 / (1 + exp(-phi2 (qd + phi3))) - phi1 / (1 + exp(-phi2 phi3))

    evaluated as (phi1 / 2) [tanh(phi2 (qd + phi3) / 2) - tanh(phi2 phi3 / 2)], the same function without the
    overflow of exp for large |phi2 qd|."""
    qd = np.asarray(qd, dtype=float)
    phi1, phi2, phi3 = (np.asarray(p, dtype=float) for p in (phi1, phi2, phi3))
    return 0.5 * phi1 * (np.tanh(0.5 * phi2 * (qd + phi3)) - np.tanh(0.5 * phi2 * phi3))


@dataclass(frozen=True)
class Elasticity:
    """Spong elastic joint: stiffness and damping between motor (joint units) and link, link viscous."""

    stiffness: float
    damping: float = 0.0
    link_viscous: float = 0.0


@dataclass(frozen=True)
class Controller:
    """Motor-side PD gains in joint units (N m/rad, N m s/rad)."""

    position_gain: float
    velocity_gain: float


@dataclass(frozen=True)
class Compensator:
    """Gravity compensator between a point on the previous body and one on this joint's body.

    Force along the line between the points, F > 0 pushing them apart; tau_comp = -F(l) dl/dq
    (docs/interfaces.md section 1.2). Spring: F = stiffness*(free_length - l). Gas cylinder:
    F = -p0*area*(v0/(v0 - area*(l - l0)))**n. Fourier (compensator of unknown construction):
    tau_comp = sum_k b_k sin(k (q - symmetry_angle)), k = 1..order (docs/model.md), nominal b_k = coefficients.
    """

    type: str
    base_point: tuple[float, float, float] | None = None
    link_point: tuple[float, float, float] | None = None
    stiffness: float | None = None
    free_length: float | None = None
    area: float | None = None
    p0: float | None = None
    l0: float | None = None
    v0: float | None = None
    n: float | None = None
    order: int | None = None
    symmetry_angle: float = 0.0
    coefficients: tuple[float, ...] = ()


@dataclass(frozen=True)
class JointGeometry:
    """Constant transforms A (before the motion) and B (after it), and the motion axis (unit, frame after A).

    ``a_rotation``/``b_rotation`` are 3x3 rotation matrices and ``a_translation``/``b_translation`` 3-vectors.
    ``exact`` optionally keeps the original DH numbers so that the symbolic stage can use exact trigonometric
    values (e.g. alpha = pi/2 gives cos(alpha) = 0 exactly): a tuple (convention, a, alpha, d, offset/theta).
    """

    a_rotation: tuple[tuple[float, ...], ...]
    a_translation: tuple[float, float, float]
    axis: tuple[float, float, float]
    b_rotation: tuple[tuple[float, ...], ...]
    b_translation: tuple[float, float, float]
    #: constant angle added to a revolute joint's motion about the axis (DH offset), rad
    angle_offset: float = 0.0
    #: constant translation added to a prismatic joint's motion along the axis, m
    displacement_offset: float = 0.0

    def transform(self, q: float, revolute: bool) -> np.ndarray:
        """Numeric 4x4 transform from the previous body frame to this body frame at joint value q."""
        a = _homogeneous(np.array(self.a_rotation), np.array(self.a_translation))
        b = _homogeneous(np.array(self.b_rotation), np.array(self.b_translation))
        u = np.asarray(self.axis, dtype=float)
        if revolute:
            m = _homogeneous(rotation_about_axis(u, q + self.angle_offset), np.zeros(3))
        else:
            m = _homogeneous(np.eye(3), u * (q + self.displacement_offset))
        return a @ m @ b


@dataclass(frozen=True)
class Joint:
    """One joint and the body it moves."""

    name: str
    type: str  # "revolute" | "prismatic"
    geometry: JointGeometry
    link: Link = field(default_factory=Link)
    limits: Limits = field(default_factory=Limits)
    drive: Drive | None = None
    friction: Friction = field(default_factory=Friction)
    elasticity: Elasticity | None = None
    controller: Controller | None = None
    compensator: Compensator | None = None

    @property
    def revolute(self) -> bool:
        return self.type == "revolute"


@dataclass(frozen=True)
class RobotModel:
    """A robot: joints from base to tip, gravity in the base frame, where it came from.

    A closed-chain robot (parallelogram arm, four-bar linkage) has ``chain`` (robid.model.loops.ClosedChain): then
    ``joints`` are its active (driven) joints and ``chain`` holds the passive joints, the tree and the loops."""

    name: str
    joints: tuple[Joint, ...]
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    kinematics: str = "dh"  # dh | mdh | urdf
    source: str = ""
    chain: object | None = None  # robid.model.loops.ClosedChain

    @property
    def is_closed(self) -> bool:
        """True for a robot with loops (``chain``)."""
        return self.chain is not None

    @property
    def dof(self) -> int:
        return len(self.joints)

    @property
    def joint_names(self) -> list[str]:
        return [j.name for j in self.joints]

    @property
    def has_drives(self) -> bool:
        return any(j.drive is not None for j in self.joints)

    @property
    def is_elastic(self) -> bool:
        return any(j.elasticity is not None for j in self.joints)

    @property
    def drive_couplings(self) -> tuple[tuple[int, int, float], ...]:
        """(J, K, rho) for every drive coupled to a second joint (0-based J, K; rho = coupling ratio / gear
        ratio, so that the motor velocity in joint-J units is qd_J + rho qd_K)."""
        names = self.joint_names
        return tuple(
            (j, names.index(joint.drive.coupling.joint), joint.drive.coupling.ratio / joint.drive.gear_ratio)
            for j, joint in enumerate(self.joints)
            if joint.drive is not None and joint.drive.coupling is not None
        )

    def forward_kinematics(self, q: np.ndarray) -> list[np.ndarray]:
        """Numeric 4x4 pose of every body frame in the base frame for one configuration q (dof,); of a closed
        chain, the active joints' bodies (the loops closed by robid.model.closure)."""
        if self.chain is not None:
            from robid.model.closure import tree_poses

            return tree_poses(self, np.asarray(q, dtype=float))
        poses = []
        t = np.eye(4)
        for joint, qi in zip(self.joints, np.asarray(q, dtype=float), strict=True):
            t = t @ joint.geometry.transform(float(qi), joint.revolute)
            poses.append(t)
        return poses


def rotation_about_axis(u: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' formula R = I + sin(a) K + (1 - cos(a)) K^2, K the cross-product matrix of unit u."""
    k = skew(u)
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def skew(u: np.ndarray) -> np.ndarray:
    x, y, z = u
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def _homogeneous(r: np.ndarray, p: np.ndarray) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = r
    t[:3, 3] = p
    return t
