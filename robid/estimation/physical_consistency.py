"""Physical consistency of a standard parameter set: per-link and per-joint verdicts with reasons.

Conventions (docs/interfaces.md 1.3, docs/core_api.md): per link ``m_J, mx_J, my_J, mz_J, Ixx_J, Ixy_J, Ixz_J, Iyy_J,
Iyz_J, Izz_J`` with ``h = (mx, my, mz) = m c`` and the inertia tensor ``I`` about the frame origin, products
being the tensor entries (``Ixy = -int x y dm``). Per joint ``Ia_J``, ``fv_J``, ``fc_J``, ``f0_J``, ``k_J``,
``d_J``.

A body is physically consistent iff its pseudo-inertia (Wensing, Kim & Slotine, RA-L 2017)

    J = [[Sigma, h], [h^T, m]],   Sigma = int r r^T dm = 0.5 tr(I) 1 - I

is positive semidefinite (a positive-definite J is the density-realisable interior). This implies ``m >= 0``
and the triangle inequalities of the inertia about the COM, and of the diagonal of the inertia about any point
(``Ixx + Iyy - Izz = 2 int z^2 dm >= 0``). Reflected rotor inertia, viscous and Coulomb friction, stiffness and
damping must be non-negative; offsets are free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import INERTIAL_PARAMETERS

#: Per-joint parameters that must be non-negative, with what they are.
NONNEGATIVE = {
    "Ia": "reflected rotor inertia",
    "fv": "viscous friction",
    "fc": "Coulomb friction",
    "k": "joint stiffness",
    "d": "joint damping",
}


# --- parameter layout ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParameterLayout:
    """Where each link's ten inertial parameters and each signed per-joint parameter sit in a name list."""

    links: tuple[tuple[str, tuple[int, ...]], ...]  # (link, indices in INERTIAL_PARAMETERS order)
    nonnegative: tuple[tuple[int, str, str], ...]  # (index, prefix, joint)
    incomplete_links: tuple[str, ...] = ()


def parameter_layout(names: Sequence[str]) -> ParameterLayout:
    """Parse ``prefix_J`` names (the joint name may itself contain underscores)."""
    rigid: dict[str, dict[str, int]] = {}
    nonneg = []
    for i, name in enumerate(names):
        prefix, sep, joint = name.partition("_")
        if not sep or prefix == "comp":
            continue
        if prefix in INERTIAL_PARAMETERS:
            rigid.setdefault(joint, {})[prefix] = i
        elif prefix in NONNEGATIVE:
            nonneg.append((i, prefix, joint))
    links, incomplete = [], []
    for joint, fields in rigid.items():
        if len(fields) == len(INERTIAL_PARAMETERS):
            links.append((joint, tuple(fields[f] for f in INERTIAL_PARAMETERS)))
        else:
            incomplete.append(joint)
    return ParameterLayout(tuple(links), tuple(nonneg), tuple(incomplete))


def pseudo_inertia(p: Sequence[float]) -> np.ndarray:
    """4x4 pseudo-inertia of ``(m, mx, my, mz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz)`` (inertia about the frame origin)."""
    m, hx, hy, hz, xx, xy, xz, yy, yz, zz = (float(v) for v in p)
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J = np.zeros((4, 4))
    J[:3, :3] = sigma
    J[:3, 3] = J[3, :3] = (hx, hy, hz)
    J[3, 3] = m
    return J


# --- check of a standard set ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinkVerdict:
    link: str
    consistent: bool
    reasons: tuple[str, ...]
    mass: float
    pseudo_inertia_min_eigenvalue: float
    com: tuple[float, float, float] | None  # None when m <= 0
    principal_moments_com: tuple[float, float, float] | None


@dataclass(frozen=True)
class JointVerdict:
    joint: str
    consistent: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ConsistencyReport:
    consistent: bool
    links: tuple[LinkVerdict, ...]
    joints: tuple[JointVerdict, ...]
    notes: tuple[str, ...] = ()

    def reasons(self) -> list[str]:
        out = [f"link {v.link}: {r}" for v in self.links for r in v.reasons]
        return out + [f"joint {v.joint}: {r}" for v in self.joints for r in v.reasons]


def _triangle(moments: np.ndarray, labels: Sequence[str], tol: float) -> list[str]:
    a, b, c = moments
    out = []
    for x, y, z, (lx, ly, lz) in (
        (a, b, c, labels),
        (b, c, a, labels[1:] + labels[:1]),
        (c, a, b, labels[2:] + labels[:2]),
    ):
        if x + y < z - tol:
            out.append(f"{lx} + {ly} = {x + y:.6g} < {lz} = {z:.6g}")
    return out


def check_link(link: str, p: Sequence[float], rel_tol: float = 1e-6) -> LinkVerdict:
    """Verdict on one body's ten standard parameters, with every violated condition stated."""
    p = np.asarray(p, dtype=float)
    J = pseudo_inertia(p)
    scale = max(float(np.max(np.abs(J))), 1e-300)
    tol = rel_tol * scale
    m = float(p[0])
    h = p[1:4]
    inertia = J[:3, :3].trace() * np.eye(3) - J[:3, :3]  # back to I
    reasons = []
    if m < -tol:
        reasons.append(f"negative mass m = {m:.6g}")
    elif abs(m) <= tol and (np.max(np.abs(h)) > tol or np.max(np.abs(inertia)) > tol):
        reasons.append("zero mass with non-zero first moment or inertia")
    lam = np.linalg.eigvalsh(J)
    if lam[0] < -tol:
        reasons.append(f"pseudo-inertia not positive semidefinite (min eigenvalue {lam[0]:.6g})")
    diag = np.diag(inertia)
    for r in _triangle(diag, ("Ixx", "Iyy", "Izz"), tol):
        reasons.append(f"triangle inequality violated by the diagonal about the frame origin: {r}")
    com = principal = None
    if m > tol:
        c = h / m
        inertia_c = inertia - m * (c @ c * np.eye(3) - np.outer(c, c))
        principal = np.linalg.eigvalsh(inertia_c)
        com = tuple(float(v) for v in c)
        if principal[0] < -tol:
            reasons.append(f"inertia about the COM not positive semidefinite (principal moments {principal})")
        for r in _triangle(principal, ("I1", "I2", "I3"), tol):
            reasons.append(f"triangle inequality violated by the principal moments about the COM: {r}")
        principal = tuple(float(v) for v in principal)
    return LinkVerdict(link, not reasons, tuple(reasons), m, float(lam[0]), com, principal)


def check_physical_consistency(
    standard_values: Sequence[float] | np.ndarray, parameter_names: Sequence[str], *, rel_tol: float = 1e-6
) -> ConsistencyReport:
    """Per-link and per-joint verdicts with reasons.

    Checks: negative mass; pseudo-inertia not PSD; triangle inequalities of the diagonal about the frame origin
    and of the principal moments about the COM; negative reflected rotor inertia, viscous or Coulomb friction,
    stiffness or damping. ``rel_tol`` is relative to the largest entry of the link's pseudo-inertia (absolute
    for the per-joint terms), so that solver round-off on a boundary is not reported.
    """
    values = np.asarray(standard_values, dtype=float)
    names = list(parameter_names)
    if values.shape != (len(names),):
        raise RobidInputError(f"standard values: {values.shape} values for {len(names)} names")
    layout = parameter_layout(names)
    links = tuple(check_link(link, values[list(idx)], rel_tol) for link, idx in layout.links)
    per_joint: dict[str, list[str]] = {}
    for i, prefix, joint in layout.nonnegative:
        per_joint.setdefault(joint, [])
        if values[i] < -rel_tol * max(1.0, abs(values[i])):
            per_joint[joint].append(f"negative {NONNEGATIVE[prefix]} {names[i]} = {values[i]:.6g}")
    joints = tuple(JointVerdict(j, not r, tuple(r)) for j, r in per_joint.items())
    notes = []
    if layout.incomplete_links:
        notes.append("links without all ten inertial parameters, not checked: " + ", ".join(layout.incomplete_links))
    ok = all(v.consistent for v in links) and all(v.consistent for v in joints)
    return ConsistencyReport(ok, links, joints, tuple(notes))
