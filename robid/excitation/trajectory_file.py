"""Trajectory files (JSON): everything a later step needs to re-sample the excitation exactly.

Layout (``robid: 1``, ``kind: excitation-trajectory``)::

    {
      "robid": 1, "kind": "excitation-trajectory",
      "model": "fourier-swevers",
      "formula": "q_j(t) = center_j + sum_l a_jl/(l w) sin(l w t) - b_jl/(l w) cos(l w t), w = 2 pi/period",
      "period": 25.0, "harmonics": 7, "joint_names": [...],
      "center": [...], "a": [[...] per joint], "b": [[...] per joint],     # rad, rad/s (SI)
      "rest_to_rest": true, "rest_order": 4, "continuity_order": 4,
      "limits": {"position": [[min, max], ...], "velocity": [...], "acceleration": [...],
                 "jerk": [...], "torque": [...]},                           # hard limits, SI, null = none
      "margin": 0.05,
      "cartesian": [{"name", "body", "point", "box": {"min", "max"}, "planes": [...]}],
      "design": {"robot", "criterion", "criteria": {...}, "seed", "starts", "grid_points", "check", ...}
    }

Floats are written with Python's shortest repr, so reading a file gives back the same coefficients bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.excitation.cartesian import CartesianLimit
from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier import FourierTrajectory
from robid.excitation.fourier_polynomial import FourierPolynomialTrajectory
from robid.io.files import read_json, write_json

FORMULA = "q_j(t) = center_j + sum_l a_jl/(l w) sin(l w t) - b_jl/(l w) cos(l w t), w = 2 pi / period"


@dataclass(frozen=True, eq=False)
class TrajectoryFile:
    """A design with its limits. ``trajectory``: robid's periodic Fourier series (TRAJ.json), or a Fourier
    series plus polynomial executed once (a published design read by robid.io.design_file; not written
    here)."""

    trajectory: FourierTrajectory | FourierPolynomialTrajectory
    limits: JointLimitSet
    margin: float = 0.0
    cartesian: tuple[dict, ...] = ()
    design: dict = field(default_factory=dict)
    #: a closed chain of parallelograms: the passive joints' ``names``, ``relation`` G (q_p = G q_a) and ``limits``
    #: (JointLimitSet.to_dict), so that a program is checked against them at the controller's rate (empty: none)
    passive: dict = field(default_factory=dict)


def _clean(value):
    """JSON-safe: numpy to Python, non-finite floats to None."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if isinstance(value, np.ndarray):
        return _clean(value.tolist())
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def trajectory_to_dict(tf: TrajectoryFile) -> dict:
    traj = tf.trajectory
    return _clean(
        {
            "robid": 1,
            "kind": "excitation-trajectory",
            "model": "fourier-swevers",
            "formula": FORMULA,
            "period": float(traj.period),
            "harmonics": traj.harmonics,
            "joint_names": list(traj.joint_names),
            "center": traj.center,
            "a": traj.a,
            "b": traj.b,
            "rest_to_rest": traj.rest_to_rest,
            "rest_order": traj.rest_order,
            "continuity_order": traj.continuity_order(),
            "limits": tf.limits.to_dict(),
            "margin": tf.margin,
            "cartesian": list(tf.cartesian),
            "design": tf.design,
            **({"passive": tf.passive} if tf.passive else {}),
        }
    )


def save_trajectory(path: str | Path, tf: TrajectoryFile) -> None:
    write_json(path, trajectory_to_dict(tf))


def load_trajectory(path: str | Path) -> TrajectoryFile:
    path = Path(path)
    data = read_json(path)
    return trajectory_from_dict(data, str(path))


def trajectory_from_dict(data: dict, where: str = "trajectory") -> TrajectoryFile:
    if not isinstance(data, dict) or data.get("kind") != "excitation-trajectory":
        raise RobidInputError(f"{where}: kind: not a robid excitation trajectory file")
    if data.get("model") != "fourier-swevers":
        raise RobidInputError(f"{where}: model: unknown trajectory model {data.get('model')!r}")
    try:
        center = np.asarray(data["center"], dtype=float)
        dof = center.shape[0] if center.ndim == 1 else 0
        a = np.asarray(data["a"], dtype=float).reshape(dof, -1) if dof else None
        b = np.asarray(data["b"], dtype=float).reshape(dof, -1) if dof else None
        period = float(data["period"])
    except KeyError as exc:
        raise RobidInputError(f"{where}: {exc.args[0]}: missing") from None
    except (TypeError, ValueError) as exc:
        raise RobidInputError(f"{where}: coefficients: {' '.join(str(exc).split())}") from None
    if not dof or a.shape != b.shape or not a.shape[1]:
        raise RobidInputError(f"{where}: center, a, b: expected a list of joint centres and (joints x harmonics) "
                              "coefficient arrays of one shape")
    if not (np.all(np.isfinite(center)) and np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise RobidInputError(f"{where}: center, a, b: not finite")
    if not (math.isfinite(period) and period > 0):
        raise RobidInputError(f"{where}: period: expected a positive number of seconds, got {period}")
    harmonics = data.get("harmonics", a.shape[1])
    if isinstance(harmonics, bool) or not isinstance(harmonics, int | float) or a.shape[1] != harmonics:
        raise RobidInputError(f"{where}: harmonics: does not match the coefficient arrays")
    rest = data.get("rest_order") if data.get("rest_to_rest") else None
    names = data.get("joint_names") or []
    if not isinstance(names, list) or not all(isinstance(n, str) and 0 < len(n) <= 64 for n in names):
        raise RobidInputError(f"{where}: joint_names: expected a list of names (strings of 1 to 64 characters)")
    if names and len(names) != dof:
        raise RobidInputError(f"{where}: joint_names: {len(names)} names for {dof} joints")
    for key in ("design", "limits"):
        if not isinstance(data.get(key) or {}, dict):
            raise RobidInputError(f"{where}: {key}: expected a mapping")
    if not isinstance((data.get("design") or {}).get("criteria") or {}, dict):
        raise RobidInputError(f"{where}: design.criteria: expected a mapping")
    try:
        traj = FourierTrajectory(period, center, a, b, rest, tuple(names))
        limits = JointLimitSet.from_dict(data.get("limits") or {}, dof)
    except (TypeError, ValueError, IndexError) as exc:
        raise RobidInputError(f"{where}: limits: {' '.join(str(exc).split())}") from None
    margin, cartesian = data.get("margin") or 0.0, data.get("cartesian") or []
    if isinstance(margin, bool) or not isinstance(margin, int | float):
        raise RobidInputError(f"{where}: margin: expected a number")
    if not isinstance(cartesian, list) or not all(isinstance(c, dict) for c in cartesian):
        raise RobidInputError(f"{where}: cartesian: expected a list of mappings")
    return TrajectoryFile(traj, limits, float(margin), tuple(cartesian), dict(data.get("design") or {}),
                          _passive_block(data.get("passive"), dof, where))


def _passive_block(block, dof: int, where: str) -> dict:
    """The ``passive`` block of a trajectory file (a closed chain's passive joints), checked."""
    if not block:
        return {}
    try:
        relation = np.asarray(block["relation"], dtype=float)
        names = [str(n) for n in block["names"]]
        JointLimitSet.from_dict(block.get("limits") or {}, len(names))
    except (KeyError, TypeError, ValueError) as exc:
        raise RobidInputError(f"{where}: passive: {exc}") from None
    if relation.shape != (len(names), dof):
        raise RobidInputError(f"{where}: passive.relation: expected {len(names)} x {dof}, got {relation.shape}")
    return dict(block)


def cartesian_from_dicts(items: tuple[dict, ...] | list[dict]) -> list[CartesianLimit]:
    out = []
    for d in items:
        box = d.get("box") or {}
        lo = box.get("min")
        hi = box.get("max")
        lo = None if lo is None else [(-math.inf if v is None else v) for v in lo]
        hi = None if hi is None else [(math.inf if v is None else v) for v in hi]
        planes = [(np.asarray(p["normal"], dtype=float), float(p["offset"])) for p in d.get("planes") or []]
        out.append(CartesianLimit.from_box_and_planes(d["name"], int(d["body"]), d["point"], lo, hi, planes))
    return out
