"""From a robot and a SPEC to a designed, verified trajectory file (what ``robid design`` runs)."""

from __future__ import annotations

import dataclasses
import logging
import platform
import time
from typing import Any

import numpy as np

from robid.errors import RobidInputError
from robid.excitation.centre import choose_center
from robid.excitation.collision import collision_limits
from robid.excitation.optimiser import DesignProblem, DesignResult, FloorMissed, design_excitation
from robid.excitation.spec import DesignSpec, cartesian_limits, resolve_center, resolve_limits
from robid.excitation.trajectory_file import TrajectoryFile
from robid.excitation.velocity_floor import rms_velocity

_log = logging.getLogger(__name__)


def design_from_spec(robot: Any, spec: DesignSpec, robot_label: str = "") -> tuple[DesignResult, TrajectoryFile]:
    """``robot`` has ``.model`` (RobotModel) and ``.base_parameters().regressor`` (and ``.inverse_dynamics``
    when torque limits are given), e.g. ``robid.load_robot(...)``."""
    model = robot.model
    limits = resolve_limits(spec, model)
    points = cartesian_limits(spec, model)
    cartesian = points + collision_limits(spec.collision, model, f"{spec.source}: collision")
    torque_fn = None
    if np.any(np.isfinite(limits.torque)):
        # the design checks the torque limits thousands of times: the form for many calls where the robot has one
        torque_fn = getattr(robot, "inverse_dynamics_for_many_calls", None) or getattr(robot, "inverse_dynamics", None)
        if torque_fn is None:
            raise RobidInputError(f"{spec.source}: limits.torque: this robot has no nominal inverse dynamics")
    center, centre_note = resolve_center(spec, limits, model), None
    if spec.center is None and not _closed_chain(model):  # a pose with room to move (robid.excitation.centre)
        center, centre_note = choose_center(limits, spec.margin, model, cartesian, torque_fn, spec.seed,
                                            tuple(model.joint_names))
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
    result, notes = _design_with_a_reachable_floor(problem, base.regressor, spec.source)
    notes = ([centre_note] if centre_note else []) + notes
    design = _design_block(result, spec, robot_label or model.name, list(getattr(base, "names", [])), notes)
    collision = {"collision": spec.collision} if spec.collision else {}
    shown = tuple(c.description for c in points)  # the collision section: as written, rebuilt by the export
    tf = TrajectoryFile(result.trajectory, limits, spec.margin, shown, {**design, **collision},
                        passive_block(model))
    return result, tf



def _design_block(result: DesignResult, spec: DesignSpec, robot_name: str, base_names: list, notes: list) -> dict:
    """The ``design`` block of the trajectory file: what was asked, what the search found, the check, when and where."""
    return {
        "robot": robot_name,
        "base_parameters": base_names,
        "criterion": spec.criterion,
        "criteria": result.criteria.to_dict(),
        "min_rms_velocity": result.problem.min_rms_velocity,
        **({"min_rms_velocity_requested": spec.min_rms_velocity} if result.problem.min_rms_velocity
           != spec.min_rms_velocity else {}),
        **({"notes": notes} if notes else {}),
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

def passive_block(model) -> dict:
    """The trajectory file's ``passive`` block of a chain of parallelograms (robid.excitation.trajectory_file)."""
    from robid.excitation.passive_limits import PassiveJoints

    passive = PassiveJoints.from_model(model)
    if passive is None or passive.relation is None:
        return {}
    return {"names": list(passive.names), "relation": passive.relation.tolist(), "limits": passive.limits.to_dict()}


def _closed_chain(model) -> bool:
    """Whether the robot has loops (its passive joints follow the active ones): its centre stays the one of
    robid.excitation.spec.resolve_center, where the loops are checked to close within the passive limits."""
    from robid.excitation.passive_limits import PassiveJoints

    return PassiveJoints.from_model(model) is not None


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


#: a relaxed excitation floor is this fraction of what the closest start reached (so that starts can meet it)
FLOOR_RELAXATION = 0.9
#: below this fraction of the floor on its slowest joint, the closest start is pinned by a limit, not the floor
FLOOR_PINNED = 0.25
#: designs tried with a relaxed floor before the design gives up
FLOOR_RETRIES = 2


def _design_with_a_reachable_floor(problem: DesignProblem, regressor, source: str) -> tuple[DesignResult, list[str]]:
    """The design, with the excitation floor relaxed when no start reaches it (docs/excitation.md, "Excitation
    floor"): to FLOOR_RELAXATION of the fraction the closest start reached, at most FLOOR_RETRIES times, each
    relaxation said in a note (the design's ``notes``); an error names the limit at fault otherwise."""
    notes: list[str] = []
    for attempt in range(FLOOR_RETRIES + 1):
        try:
            return design_excitation(problem, regressor), notes
        except FloorMissed as exc:
            if attempt == FLOOR_RETRIES or exc.reached < FLOOR_PINNED:  # pinned by a limit: no floor helps
                raise RobidInputError(f"{source}: {exc}") from None
            relaxed = float(f"{problem.min_rms_velocity * exc.reached * FLOOR_RELAXATION:.3g}")
            notes.append(f"min_rms_velocity {problem.min_rms_velocity:g} not reachable within these limits and "
                         f"period (the closest start reached {exc.reached:.2f} of it on its slowest joint): relaxed "
                         f"to {relaxed:g}")
            _log.warning(f"design: {notes[-1]}")
            problem = dataclasses.replace(problem, min_rms_velocity=relaxed)
        except ValueError as exc:
            raise RobidInputError(f"{source}: {exc}") from None
    raise AssertionError("unreachable")


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
