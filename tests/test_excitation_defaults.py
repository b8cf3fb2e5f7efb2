"""Excitation defaults that design on the first try (issue 33): a user's UR10e spec with the datasheet limits, a
floor plane and nothing else designs with the defaults (the centre chosen with room to move, robid.excitation.
centre); a URDF with its own limits and only the acceleration added does too; a centre that violates a limit is
refused naming the limit."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import robid
from robid.errors import RobidInputError
from robid.excitation.centre import ROOM_DISTANCE, choose_center
from robid.excitation.design import design_from_spec
from robid.excitation.spec import cartesian_limits, resolve_limits, spec_from_dict

URDF = Path(__file__).resolve().parents[2] / "shared/anchors/data/dynamic_calibration/URe/urdf/ur10e.urdf"

#: the UR10e datasheet: +-360 deg on every joint, 120 deg/s (base, shoulder) and 180 deg/s, the joint torques;
#: the acceleration is no datasheet value (2.5 rad/s^2, as the built-in file assumes); the table 5 cm below the
#: flange's lowest allowed height
DATASHEET = {
    "harmonics": 5, "period": 20,
    "limits": {"position": [["-360deg", "360deg"]] * 6,
               "velocity": ["120deg", "120deg", "180deg", "180deg", "180deg", "180deg"],
               "acceleration": 2.5, "torque": [330, 330, 150, 56, 56, 56]},
    "cartesian": [{"name": "flange", "body": 6, "point": [0, 0, 0], "floor": 0.05}],
}


def test_the_centre_has_room_where_the_middle_of_the_ranges_has_none():
    """The middle of the UR10e's ranges is its arm stretched out, the flange 6 cm above the base plane: 1 cm above
    the 5 cm floor. The chosen centre's flange stands far above it (independent forward kinematics), holding
    torques well inside the limits, and the note says what was taken and why."""
    robot = robid.load_robot("ur10e")
    spec = spec_from_dict(DATASHEET, "ur10e_user.yaml")
    limits = resolve_limits(spec, robot.model)
    centre, note = choose_center(limits, spec.margin, robot.model, cartesian_limits(spec, robot.model),
                                 robot.inverse_dynamics, spec.seed, tuple(robot.joint_names))
    middle_height = robot.model.forward_kinematics(np.zeros(6))[-1][2, 3]
    height = robot.model.forward_kinematics(centre)[-1][2, 3]
    tau = robot.inverse_dynamics(centre[None], np.zeros((1, 6)), np.zeros((1, 6)))[0]
    print(f"flange height: middle {middle_height:.3f} m, chosen {height:.3f} m; holding torque {np.round(tau, 1)}")
    assert middle_height < 0.07 and height > 0.05 + 0.5 * ROOM_DISTANCE
    assert np.all(np.abs(tau) < 0.5 * np.array([330, 330, 150, 56, 56, 56]))
    assert note.startswith("center: the middle of the position ranges leaves room") and "give center:" in note
    no_limits = spec_from_dict({"harmonics": 5, "period": 20}, "plain.yaml")
    plain = resolve_limits(no_limits, robot.model)
    same, none = choose_center(plain, 0.05, robot.model)
    assert none is None and np.array_equal(same, plain.position.mean(axis=1))  # joint limits only: the middle


def test_a_users_ur10e_spec_with_the_datasheet_limits_designs_on_the_first_try():
    """Defaults only (4 starts, cond_both, the 0.2 floor); measured 2026-11-29: cond 12.6, every joint above its
    floor, about 20 s on the 2-core machine."""
    robot = robid.load_robot("ur10e")
    result, tf = design_from_spec(robot, spec_from_dict(DATASHEET, "ur10e_user.yaml"), "ur10e")
    print(result.check.summary(), tf.design["notes"])
    assert result.check.ok and result.criteria.rank == result.criteria.columns
    floor = result.problem.floor_speeds()
    assert tf.design["min_rms_velocity"] == 0.2 and np.all(np.array(tf.design["rms_velocity"]) >= 0.99 * floor)
    assert result.criteria.cond < 50


@pytest.mark.skipif(not URDF.exists(), reason="the UR10e URDF of the anchors is not present")
def test_a_urdf_with_its_own_limits_designs_with_a_floor_plane():
    """The authors' UR10e URDF (position, velocity, effort limits) plus an acceleration and a floor plane: designs
    with the defaults (before issue 33 a zero base column at a start made the scaled condition number NaN and the
    design stopped with 'Eigenvalues did not converge')."""
    robot = robid.load_robot(URDF)
    spec = {"harmonics": 5, "period": 20, "limits": {"acceleration": 2.5},
            "cartesian": [{"name": "flange", "body": 6, "point": [0, 0, 0], "floor": 0.05}]}
    result, _ = design_from_spec(robot, spec_from_dict(spec, "urdf.yaml"), str(URDF))
    assert result.check.ok and result.criteria.rank == result.criteria.columns


def test_a_centre_that_violates_a_limit_is_refused_naming_it():
    robot = robid.load_robot("ur10e")
    spec = dict(DATASHEET, center=[0, 0, 0, 0, 0, 0], cartesian=[{"name": "flange", "body": 6, "point": [0, 0, 0],
                                                                   "floor": 0.2}])
    with pytest.raises(RobidInputError) as err:
        design_from_spec(robot, spec_from_dict(spec, "bad.yaml"), "ur10e")
    message = str(err.value)
    print(message)
    assert message.startswith("bad.yaml: the centre pose itself violates cartesian") and "flange" in message
    assert math.isfinite(float(message.split("at rest ")[1].split(")")[0]))
