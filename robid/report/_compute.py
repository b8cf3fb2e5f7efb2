"""The few derived quantities a report shows that no other package provides: display units, limit usage,
residual spectra, band coverage, friction and compensator curves. Everything else (predictions, bands,
metrics) comes from robid.estimation."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

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


def limit_usage(q, qd, qdd, limits: dict[str, np.ndarray], tau=None) -> list[dict]:
    """Per joint, how much of each limit the motion uses (SI values; percentages):

    * position: ``usage = 100 max(q_max - mid, mid - q_min) / (half range)`` (100 % touches a limit),
      ``margin`` = distance of the motion to the nearer limit;
    * velocity, acceleration (and torque when given): ``100 max|x| / limit``.
    """
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    rows = []
    for j in range(q.shape[1]):
        lo, hi = limits["position"][j]
        qmin, qmax = float(np.min(q[:, j])), float(np.max(q[:, j]))
        row = {"q_min": qmin, "q_max": qmax, "lo": float(lo), "hi": float(hi)}
        if math.isfinite(lo) and math.isfinite(hi) and hi > lo:
            mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
            row["position_pct"] = 100.0 * max(qmax - mid, mid - qmin) / half
            row["margin"] = min(hi - qmax, qmin - lo)
        else:
            row["position_pct"] = None
            row["margin"] = None
        for key, x in (("velocity", qd), ("acceleration", qdd), ("torque", tau)):
            if x is None:
                continue
            peak = float(np.max(np.abs(x[:, j])))
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


# ---- spectra and bands -----------------------------------------------------------------------------------


def amplitude_spectrum(x: np.ndarray, sample_rate: float, periodic: bool) -> tuple[np.ndarray, np.ndarray]:
    """Single-sided amplitude spectrum of the columns of ``x`` (N, k): ``2 |X_h| / N`` (DC: ``|X_0| / N``).

    A periodic record holding whole periods has no leakage and is transformed as it is; any other record is
    multiplied by a Hann window (amplitudes corrected by its coherent gain 0.5)."""
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    if periodic:
        spec = np.abs(np.fft.rfft(x, axis=0)) / n
    else:
        w = np.hanning(n)
        spec = np.abs(np.fft.rfft((x - x.mean(axis=0)) * w[:, None], axis=0)) / (0.5 * n)
    spec[1:] *= 2.0
    freq = np.fft.rfftfreq(n, d=1.0 / sample_rate)
    return freq, spec


def band_coverage(measured: np.ndarray, lower: np.ndarray, upper: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per joint, percent of the used samples whose measured torque lies inside [lower, upper]."""
    inside = (measured >= lower) & (measured <= upper) & mask
    used = np.maximum(mask.sum(axis=0), 1)
    return 100.0 * inside.sum(axis=0) / used


# ---- friction and compensator ----------------------------------------------------------------------------

FRICTION_PREFIXES = ("fv", "fc", "f0")


def ungrouped(names, expressions) -> set[str]:
    """Base parameters that stand for one standard parameter alone (expression == name)."""
    return {n for n, e in zip(names, expressions, strict=True) if re.sub(r"\s+", "", e) == n}


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
    joint = robot.joint_names[joint_index]
    free = ungrouped(names, expressions)
    std_names = robot.parameter_names
    cols, base_idx = [], []
    for k, n in enumerate(names):
        if n.startswith("comp_") and n.endswith(f"_{joint}") and n in free:
            cols.append(std_names.index(n))
            base_idx.append(k)
    return cols, base_idx


def compensator_curve(robot, j: int, q_grid, q_ref, cols, base_idx, values, covariance, references) -> Curve:
    """Compensator torque of joint j over its angle: the robot regressor's comp_* columns (the other joints at
    ``q_ref``, at rest) times the identified, nominal and reference values."""
    n = len(q_grid)
    q = np.tile(np.asarray(q_ref, dtype=float), (n, 1))
    q[:, j] = q_grid
    zeros = np.zeros_like(q)
    Y = robot.regressor(q, zeros, zeros)[:, j, :][:, cols]  # (n, k)
    C = covariance[np.ix_(base_idx, base_idx)]
    std = np.sqrt(np.clip(np.sum((Y @ C) * Y, axis=1), 0.0, None))
    nominal = robot.parameters[cols]
    refs = {label: Y @ ref[base_idx] for label, ref in references.items() if np.all(np.isfinite(ref[base_idx]))}
    return Curve(np.asarray(q_grid), Y @ values[base_idx], std, Y @ nominal, refs)
