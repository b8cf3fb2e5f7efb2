"""The few quantities the report derives itself from the record and the robot: display units, limit usage,
friction and compensator curves over a grid. Everything measured (fit metrics, band coverage, residual spectra,
series) was computed by identification and is read from the record."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from robid.model.terms import standalone_parameters

DEG = 180.0 / math.pi


@dataclass(frozen=True)
class JointUnits:
    """Display units of one joint: degrees for revolute joints, SI for prismatic ones."""

    scale: float  # SI -> display factor for positions, velocities, accelerations
    position: str
    velocity: str
    acceleration: str
    torque: str

    @staticmethod
    def of(joint) -> JointUnits:
        if joint.revolute:
            return JointUnits(DEG, "deg", "deg/s", "deg/s\u00b2", "N m")
        return JointUnits(1.0, "m", "m/s", "m/s\u00b2", "N")


def joint_units(robot) -> list[JointUnits]:
    return [JointUnits.of(j) for j in robot.model.joints]


# ---- parameter units -------------------------------------------------------------------------------------

#: SI unit of a standard parameter by its prefix (robid.model.terms): (revolute joint, prismatic joint). Inertial
#: parameters are the link's and do not depend on the joint type; the others act along the joint's coordinate.
#: Compensators as in docs/compensator.md: spring stiffness N/m and k*l0 N (forces along the compensator), gas
#: pressure Pa, Fourier coefficients torques.
PARAMETER_UNITS: dict[str, tuple[str, str]] = {
    "m": ("kg", "kg"),
    "mx": ("kg m", "kg m"),
    "my": ("kg m", "kg m"),
    "mz": ("kg m", "kg m"),
    **{f"I{a}": ("kg m\u00b2", "kg m\u00b2") for a in ("xx", "xy", "xz", "yy", "yz", "zz")},
    "Ia": ("kg m\u00b2", "kg"),  # reflected rotor inertia
    "Iam": ("kg m\u00b2", "kg"),
    "fv": ("N m s/rad", "N s/m"),  # viscous friction
    "fvm": ("N m s/rad", "N s/m"),
    "fl": ("N m s/rad", "N s/m"),  # link-side viscous friction of an elastic joint
    "fc": ("N m", "N"),  # Coulomb friction
    "fcm": ("N m", "N"),
    "f0": ("N m", "N"),  # offset
    "k": ("N m/rad", "N/m"),  # joint stiffness
    "d": ("N m s/rad", "N s/m"),  # joint damping
    "comp_k": ("N/m", "N/m"),
    "comp_kl0": ("N", "N"),
    "comp_p0": ("Pa", "Pa"),
}


def parameter_unit(name: str, robot) -> str:
    """SI unit of a (standard or base) parameter from its name ``<prefix>_<joint>``; a base parameter is named
    after its lead standard parameter and takes its unit. An empty string when the name is not a known kind."""
    joints = sorted(robot.model.joints, key=lambda j: -len(j.name))
    joint = next((j for j in joints if name.endswith(f"_{j.name}") and len(name) > len(j.name) + 1), None)
    if joint is None:
        return ""
    prefix = name[: -len(joint.name) - 1]
    if re.fullmatch(r"comp_b\d+", prefix):  # Fourier compensator: torque coefficients
        units = ("N m", "N")
    else:
        units = PARAMETER_UNITS.get(prefix)
    if units is None:
        return ""
    return units[0] if joint.revolute else units[1]


# ---- limits ----------------------------------------------------------------------------------------------


def limits_arrays(robot, trajectory=None) -> dict[str, np.ndarray]:
    """Hard limits per joint, SI, +-inf where none: the trajectory file's if given, else the robot file's."""
    dof = robot.dof
    if trajectory is not None:
        lim = trajectory.limits
        return {
            "position": np.asarray(lim.position, dtype=float),
            "velocity": np.asarray(lim.velocity, dtype=float),
            "acceleration": np.asarray(lim.acceleration, dtype=float),
            "torque": np.asarray(lim.torque, dtype=float),
        }
    pos = np.tile([-np.inf, np.inf], (dof, 1))
    out = {k: np.full(dof, np.inf) for k in ("velocity", "acceleration", "torque")}
    for j, joint in enumerate(robot.model.joints):
        lim = joint.limits
        if lim.position is not None:
            pos[j] = lim.position
        for k in out:
            v = getattr(lim, k)
            if v is not None:
                out[k][j] = float(v)
    out["position"] = pos
    return out


def motion_extremes(q, qd, qdd, tau=None) -> list[dict]:
    """Per joint: position extremes and peak |velocity|, |acceleration| (and |torque| when given), SI."""
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    return [
        {
            "q_min": float(np.min(q[:, j])),
            "q_max": float(np.max(q[:, j])),
            "velocity": float(np.max(np.abs(qd[:, j]))),
            "acceleration": float(np.max(np.abs(qdd[:, j]))),
            "torque": None if tau is None else float(np.max(np.abs(np.asarray(tau)[:, j]))),
        }
        for j in range(q.shape[1])
    ]


def extremes_of_ranges(runs, with_torque: bool) -> list[dict]:
    """motion_extremes over several runs, from the ranges their records store (robid.record.JointRange, one
    tuple per run)."""
    return [
        {
            "q_min": min(r.q_min for r in joint),
            "q_max": max(r.q_max for r in joint),
            "velocity": max(r.qd_peak for r in joint),
            "acceleration": max(r.qdd_peak for r in joint),
            "torque": max(r.tau_peak for r in joint) if with_torque else None,
        }
        for joint in zip(*runs, strict=True)
    ]


def limit_usage(q, qd, qdd, limits: dict[str, np.ndarray], tau=None) -> list[dict]:
    """Per joint, how much of each limit the motion uses (see :func:`usage_of_extremes`)."""
    return usage_of_extremes(motion_extremes(q, qd, qdd, tau), limits)


def usage_of_extremes(extremes: list[dict], limits: dict[str, np.ndarray]) -> list[dict]:
    """Per joint, how much of each limit the motion uses (SI values; percentages):

    * position: ``usage = 100 max(q_max - mid, mid - q_min) / (half range)`` (100 % touches a limit),
      ``margin`` = distance of the motion to the nearer limit;
    * velocity, acceleration (and torque when known): ``100 max|x| / limit``.
    """
    rows = []
    for j, ext in enumerate(extremes):
        lo, hi = limits["position"][j]
        qmin, qmax = ext["q_min"], ext["q_max"]
        row = {"q_min": qmin, "q_max": qmax, "lo": float(lo), "hi": float(hi)}
        if math.isfinite(lo) and math.isfinite(hi) and hi > lo:
            mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
            row["position_pct"] = 100.0 * max(qmax - mid, mid - qmin) / half
            row["margin"] = min(hi - qmax, qmin - lo)
        else:
            row["position_pct"] = None
            row["margin"] = None
        for key in ("velocity", "acceleration", "torque"):
            peak = ext[key]
            if peak is None:
                continue
            limit = float(limits[key][j])
            row[f"{key}_max"] = peak
            row[f"{key}_limit"] = limit if math.isfinite(limit) else None
            row[f"{key}_pct"] = 100.0 * peak / limit if math.isfinite(limit) and limit > 0 else None
        rows.append(row)
    return rows


def level_of_usage(pct: float | None) -> str:
    """Cell class: > 100 % violates, > 95 % is inside the usual design margin, else fine."""
    if pct is None:
        return ""
    return "bad" if pct > 100.0 + 1e-9 else ("warn" if pct > 95.0 else "good")


# ---- friction and compensator ----------------------------------------------------------------------------

def friction_basis(qd: np.ndarray, prefixes) -> np.ndarray:
    """Columns of the friction model ``fv qd + fc sign(qd) + f0`` for the given prefixes, (N, k)."""
    cols = {"fv": qd, "fc": np.sign(qd), "f0": np.ones_like(qd)}
    return np.column_stack([cols[p] for p in prefixes])


@dataclass(frozen=True)
class Curve:
    x: np.ndarray
    identified: np.ndarray
    std: np.ndarray  # of the identified curve (parameter uncertainty)
    nominal: np.ndarray
    references: dict[str, np.ndarray]


def friction_curve(qd_grid, prefixes, joint: str, names, values, covariance, nominal_base, references) -> Curve:
    """Identified (with std from the covariance of its parameters), nominal and reference friction curves."""
    idx = [names.index(f"{p}_{joint}") for p in prefixes]
    B = friction_basis(qd_grid, prefixes)
    C = covariance[np.ix_(idx, idx)]
    std = np.sqrt(np.clip(np.sum((B @ C) * B, axis=1), 0.0, None))
    refs = {label: B @ ref[idx] for label, ref in references.items() if np.all(np.isfinite(ref[idx]))}
    return Curve(qd_grid, B @ values[idx], std, B @ nominal_base[idx], refs)


def compensator_columns(robot, names, expressions, joint_index: int) -> tuple[list[int], list[int]]:
    """(standard column indices, base indices) of the un-grouped comp_* parameters of one joint."""
    base_idx = standalone_parameters(names, expressions, robot.joint_names[joint_index], "compensator")
    return [robot.parameter_names.index(names[k]) for k in base_idx], base_idx


def compensator_curve(robot, j: int, q_grid, q_ref, cols, base_idx, values, covariance, references) -> Curve:
    """Compensator torque of joint j over its angle: the robot regressor's comp_* columns (the other joints at
    ``q_ref``, at rest) times the identified, nominal and reference values."""
    n = len(q_grid)
    q = np.tile(np.asarray(q_ref, dtype=float), (n, 1))
    q[:, j] = q_grid
    zeros = np.zeros_like(q)
    motor = (q, zeros, zeros) if robot.motor_joints else None  # elastic layout: at rest, springs relaxed
    Y = robot.regressor(q, zeros, zeros, motor=motor)[:, j, :][:, cols]  # (n, k): joint j's link row
    C = covariance[np.ix_(base_idx, base_idx)]
    std = np.sqrt(np.clip(np.sum((Y @ C) * Y, axis=1), 0.0, None))
    nominal = robot.parameters[cols]
    refs = {label: Y @ ref[base_idx] for label, ref in references.items() if np.all(np.isfinite(ref[base_idx]))}
    return Curve(np.asarray(q_grid), Y @ values[base_idx], std, Y @ nominal, refs)
