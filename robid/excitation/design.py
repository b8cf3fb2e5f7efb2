"""From a robot and a SPEC to a designed, verified trajectory file (what ``robid design`` runs)."""

from __future__ import annotations

import platform
import time
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.excitation.optimiser import DesignProblem, DesignResult, design_excitation
from robid.excitation.spec import DesignSpec, cartesian_limits, resolve_center, resolve_limits
from robid.excitation.trajectory_file import TrajectoryFile
from robid.excitation.velocity_floor import rms_velocity


def design_from_spec(robot: Any, spec: DesignSpec, robot_label: str = "") -> tuple[DesignResult, TrajectoryFile]:
    """``robot`` has ``.model`` (RobotModel) and ``.base_parameters().regressor`` (and ``.inverse_dynamics``
    when torque limits are given), e.g. ``robid.load_robot(...)``."""
    model = robot.model
    limits = resolve_limits(spec, model)
    center = resolve_center(spec, limits, model)
    cartesian = cartesian_limits(spec, model)
    torque_fn = None
    if np.any(np.isfinite(limits.torque)):
        torque_fn = getattr(robot, "inverse_dynamics", None)
        if torque_fn is None:
            raise RobidInputError(f"{spec.source}: limits.torque: this robot has no nominal inverse dynamics")
    _check_center_closes(model, center, spec.source)
    base = robot.base_parameters()
    problem = DesignProblem(
        period=spec.period,
        harmonics=spec.harmonics,
        center=center,
        limits=limits,
        margin=spec.margin,
        rest_order=spec.rest_order if spec.rest_to_rest else None,
        criterion=spec.criterion,
        raw_weight=spec.raw_weight,
        min_rms_velocity=spec.min_rms_velocity,
        grid_points=spec.grid_points,
        seed=spec.seed,
        starts=spec.starts,
        max_iterations=spec.max_iterations,
        cartesian=tuple(cartesian),
        model=model,
        torque_fn=torque_fn,
        joint_names=tuple(model.joint_names),
    )
    try:
        result = design_excitation(problem, base.regressor)
    except ValueError as exc:
        raise RobidInputError(f"{spec.source}: {exc}") from None
    design = {
        "robot": robot_label or model.name,
        "base_parameters": list(getattr(base, "names", [])),
        "criterion": spec.criterion,
        "criteria": result.criteria.to_dict(),
        "min_rms_velocity": spec.min_rms_velocity,
        "rms_velocity": [float(v) for v in rms_velocity(result.trajectory.coefficients())],
        "seed": spec.seed,
        "starts": spec.starts,
        "best_start": result.best_start,
        "grid_points": spec.grid_points,
        "max_iterations": spec.max_iterations,
        "seconds": round(result.seconds, 3),
        "start_results": [
            {"objective": s.objective, "iterations": s.iterations, "success": s.success, "shrink": s.shrink}
            for s in result.starts
        ],
        "check": {
            "ok": result.check.ok,
            "grid_points": result.check.grid_points,
            "summary": result.check.summary(),
            "min_slack_fraction": _min_slack_fraction(result),
        },
        "spec": spec.raw,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": platform.platform(),
    }
    tf = TrajectoryFile(result.trajectory, limits, spec.margin, tuple(c.description for c in cartesian), design,
                        passive_block(model))
    return result, tf


def passive_block(model) -> dict:
    """The trajectory file's ``passive`` block of a chain of parallelograms (robid.excitation.trajectory_file)."""
    from robid.excitation.passive_limits import PassiveJoints

    passive = PassiveJoints.from_model(model)
    if passive is None or passive.relation is None:
        return {}
    return {"names": list(passive.names), "relation": passive.relation.tolist(), "limits": passive.limits.to_dict()}


def _check_center_closes(model, center: np.ndarray, source: str) -> None:
    """A closed chain's centre must assemble the loops with every passive joint within its limits."""
    from robid.excitation.passive_limits import PassiveJoints

    passive = PassiveJoints.from_model(model)
    if passive is None:
        return
    zero = np.zeros((1, len(center)))
    position = passive.motion(center[None, :], zero, zero)[0][0]
    for name, value, (lo, hi) in zip(passive.names, position, passive.limits.position, strict=True):
        if not lo <= value <= hi:
            raise RobidInputError(
                f"{source}: center: the passive joint {name} is at {value:.6g} there, outside its limits [{lo:.6g}, "
                f"{hi:.6g}] (robot file); choose a centre where the loops close within them"
            )


def _min_slack_fraction(result: DesignResult) -> float:
    """Smallest certified slack relative to its limit over all joint limits (>= margin by construction)."""
    fractions = []
    for item in result.check.items:
        if isinstance(item.limit, tuple):
            span = (item.limit[1] - item.limit[0]) / 2.0
            fractions.append(item.slack / span if span > 0 else 0.0)
        elif item.quantity in ("velocity", "acceleration", "jerk", "torque"):
            fractions.append(item.slack / item.limit)
    return float(min(fractions)) if fractions else 1.0
