"""Modal analysis of a robot with elastic joints at a pose: the linearised closed loop and its eigenproblem.

Model (Spong's reduced elastic-joint model; Do 2021, eq. 2.1; reference notes 000 section 2.2). Link positions
q (n) and, on every elastic joint e, the motor position theta_e divided by the gear ratio (joint units)::

    M(q) qdd + C qd + G(q) + D_l qd + K (q - theta) + D_s (qd - thetad) = 0            (link side)
    B thetadd + D_m thetad - K (q - theta) - D_s (qd - thetad) = tau_m                  (motor side)

G(q) the gravity and compensator torques, K, D_s the joint stiffness and spring damping
(``elasticity.stiffness``, ``elasticity.damping``), D_l the link-side viscous friction (``link_viscous``), B the
reflected rotor inertia, D_m the motor-side viscous friction (``friction.viscous``). A rigid joint has
theta = q: its rotor inertia joins M's diagonal and its friction acts on qd.

Motors (Do 2021 section 2.3, eq. 2.2-2.4): ``controlled`` closes the motor-side PD loop of the robot file
(``controller``: tau_m = G-compensation + K_P (theta_d - theta) - K_D thetad, acting on theta for an elastic joint and
on q for a rigid one); ``locked`` holds every rotor still (theta fixed: an elastic joint's link hangs on its
spring, a rigid joint does not move and leaves the problem).

Linearisation about the static equilibrium at the pose (eq. 2.7-2.12): M_bar dz'' + D_bar dz' + K_bar dz = 0 with
z = [q; theta_e] and::

    M_bar = [[M(q) + B_rigid, 0], [0, B_e]]
    K_bar = [[K_G + K (+ K_P rigid), -K], [-K, K + K_P]]            K_G = dG/dq at the pose
    D_bar = [[D_l + D_s (+ D_m + K_D rigid), -D_s], [-D_s, D_s + D_m + K_D]]

(the K_P, K_D entries only with ``controlled``; with ``locked`` the motor rows and the rigid joints are removed).
K_G is the Hessian of the potential (gravity and compensators), by central differences of G with a step of
1e-6 rad (m): truncation error ~1e-12 relative. Eigenproblem in state space (eq. 2.13-2.18): A = [[0, I],
[-M_bar^-1 K_bar, -M_bar^-1 D_bar]]; each complex pair lambda = -zeta w +- j w sqrt(1 - zeta^2) is one mode,
frequency w / 2 pi, damping ratio zeta = -Re(lambda) / |lambda|, mode shape the coordinate part of the
eigenvector of the Im > 0 member, scaled so that its largest entry is 1 (real). Modes are sorted by frequency
(reproduces Do's numbering, notes 000 section 2.5). Real eigenvalues (overdamped motion) are listed apart.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError, RobidOptionError

MOTORS = ("controlled", "locked")
#: central-difference step of the gravity stiffness, rad (m)
GRAVITY_STEP = 1e-6


@dataclass(frozen=True)
class LinearisedModel:
    """M_bar, D_bar, K_bar (m, m) of the linearised closed loop at ``pose``; ``coordinates`` names each of the
    m coordinates (``q_J`` link, ``theta_J`` motor); ``motors`` controlled or locked."""

    pose: tuple[float, ...]
    motors: str
    coordinates: tuple[str, ...]
    mass: np.ndarray
    damping: np.ndarray
    stiffness: np.ndarray


@dataclass(frozen=True)
class ModalResult:
    """Modes at a pose, sorted by frequency: ``frequencies_hz``, ``damping_ratios`` (fractions),
    ``mode_shapes`` (modes, coordinates) real parts after scaling the largest entry to 1; ``overdamped_poles``
    the real eigenvalues (1/s); ``stable`` every eigenvalue in the open left half-plane."""

    model: LinearisedModel
    frequencies_hz: tuple[float, ...]
    damping_ratios: tuple[float, ...]
    mode_shapes: np.ndarray
    overdamped_poles: tuple[float, ...]
    stable: bool

    def to_json(self) -> dict:
        """The JSON of ``robid modal --json`` (docs/interfaces.md section 4)."""
        return {
            "pose": list(self.model.pose),
            "motors": self.model.motors,
            "coordinates": list(self.model.coordinates),
            "frequencies_hz": list(self.frequencies_hz),
            "damping_ratios": list(self.damping_ratios),
            "mode_shapes": [list(map(float, row)) for row in self.mode_shapes],
            "overdamped_poles": list(self.overdamped_poles),
            "stable": self.stable,
        }


def linearise(robot, pose, motors: str = "controlled") -> LinearisedModel:
    """The linearised closed loop of ``robot`` (robid.Robot or RobotModel) at ``pose`` (module docstring)."""
    from robid.model.checks import check_pose
    from robid.model.robot_model import RobotModel
    from robid.robot import load_robot

    model = robot if isinstance(robot, RobotModel) else robot.model
    if motors not in MOTORS:
        raise RobidInputError(f"motors: expected controlled or locked, got {motors!r}")
    q = check_pose(model, pose)  # finite, within the limits: refused otherwise (docs/security.md)
    joints = model.joints
    elastic = np.array([j.elasticity is not None for j in joints])
    if not elastic.any():
        raise RobidInputError(f"{model.name}: no elastic joint (elasticity in the robot file): no modes to compute")
    terms = ("rigid", "compensator") if any(j.compensator is not None for j in joints) else ("rigid",)
    rigid_body = load_robot(model, terms=terms)
    mass, gravity_stiffness = _mass_and_gravity_stiffness(rigid_body, q)
    ia = np.array([j.drive.reflected_inertia if j.drive is not None else 0.0 for j in joints])
    fv = np.array([j.friction.viscous for j in joints])
    k = np.array([j.elasticity.stiffness if j.elasticity is not None else 0.0 for j in joints])
    ds = np.array([j.elasticity.damping if j.elasticity is not None else 0.0 for j in joints])
    dl = np.array([j.elasticity.link_viscous if j.elasticity is not None else 0.0 for j in joints])
    kp, kd = _gains(model, motors)
    e = np.flatnonzero(elastic)
    if np.any(ia[e] <= 0):
        bad = joints[int(e[np.argmin(ia[e])])].name
        raise RobidInputError(f"{model.name}: joint {bad}: an elastic joint needs a drive with rotor inertia > 0")
    rigid = ~elastic
    n, ne = model.dof, e.size
    m_bar = np.zeros((n + ne, n + ne))
    d_bar, k_bar = np.zeros_like(m_bar), np.zeros_like(m_bar)
    m_bar[:n, :n] = mass + np.diag(ia * rigid)
    k_bar[:n, :n] = gravity_stiffness + np.diag(k + kp * rigid)
    d_bar[:n, :n] = np.diag(dl + ds + (fv + kd) * rigid)
    m_bar[n:, n:] = np.diag(ia[e])
    k_bar[n:, n:] = np.diag(k[e] + kp[e])
    d_bar[n:, n:] = np.diag(ds[e] + fv[e] + kd[e])
    k_bar[e, n + np.arange(ne)] = k_bar[n + np.arange(ne), e] = -k[e]
    d_bar[e, n + np.arange(ne)] = d_bar[n + np.arange(ne), e] = -ds[e]
    names = [f"q_{j.name}" for j in joints] + [f"theta_{joints[i].name}" for i in e]
    keep = np.arange(n + ne)
    if motors == "locked":  # rotors held: motor coordinates and rigid joints leave the problem
        keep = np.flatnonzero(elastic)
    pick = np.ix_(keep, keep)
    return LinearisedModel(
        pose=tuple(float(x) for x in q),
        motors=motors,
        coordinates=tuple(names[i] for i in keep),
        mass=m_bar[pick],
        damping=d_bar[pick],
        stiffness=k_bar[pick],
    )


def modal_analysis(robot, pose, motors: str = "controlled") -> ModalResult:
    """Frequencies, damping ratios and mode shapes of ``robot`` at ``pose`` (module docstring)."""
    lin = linearise(robot, pose, motors)
    m = lin.mass.shape[0]
    inv_m = np.linalg.inv(lin.mass)
    a = np.block([[np.zeros((m, m)), np.eye(m)], [-inv_m @ lin.stiffness, -inv_m @ lin.damping]])
    values, vectors = np.linalg.eig(a)
    scale = max(float(np.max(np.abs(values))), 1e-300)
    oscillating = values.imag > 1e-9 * scale
    real = np.abs(values.imag) <= 1e-9 * scale
    order = np.argsort(np.abs(values[oscillating]))
    lam = values[oscillating][order]
    shapes = vectors[:m, oscillating][:, order].T
    omega = np.abs(lam)
    zeta = -lam.real / omega
    rows = []
    for s in shapes:
        big = s[np.argmax(np.abs(s))]
        rows.append((s / big).real)
    return ModalResult(
        model=lin,
        frequencies_hz=tuple(float(w / (2 * np.pi)) for w in omega),
        damping_ratios=tuple(float(z) for z in zeta),
        mode_shapes=np.array(rows).reshape(len(rows), m),
        overdamped_poles=tuple(sorted(float(v) for v in values[real].real)),
        stable=bool(np.all(values.real < 0)),
    )


def _mass_and_gravity_stiffness(rigid_body, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M(q) from the generated inverse dynamics (column k: qdd = e_k minus the static torque) and
    K_G = dG/dq by central differences (step ``GRAVITY_STEP``), symmetrised (a Hessian)."""
    n = q.size
    zeros = np.zeros((n, n))
    poses = np.repeat(q[None, :], n, axis=0)
    static = rigid_body.inverse_dynamics(q[None, :], np.zeros((1, n)), np.zeros((1, n)))[0]
    mass = (rigid_body.inverse_dynamics(poses, zeros, np.eye(n)) - static).T
    step = GRAVITY_STEP * np.eye(n)
    plus = rigid_body.inverse_dynamics(poses + step, zeros, zeros)
    minus = rigid_body.inverse_dynamics(poses - step, zeros, zeros)
    stiffness = ((plus - minus) / (2 * GRAVITY_STEP)).T
    return 0.5 * (mass + mass.T), 0.5 * (stiffness + stiffness.T)


def _gains(model, motors: str) -> tuple[np.ndarray, np.ndarray]:
    """K_P, K_D per joint from the robot file (zeros with ``locked``); ``controlled`` needs them on every joint."""
    n = model.dof
    if motors == "locked":
        return np.zeros(n), np.zeros(n)
    missing = [j.name for j in model.joints if j.controller is None]
    if missing:
        raise RobidOptionError(None,
            f"{model.name}: {{motors}} controlled needs controller gains (controller: position_gain, velocity_gain) "
            f"on every joint; missing on {', '.join(missing)} (or use {{motors}} locked)"
        )
    return (
        np.array([j.controller.position_gain for j in model.joints]),
        np.array([j.controller.velocity_gain for j in model.joints]),
    )
