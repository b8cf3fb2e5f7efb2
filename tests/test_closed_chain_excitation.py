"""Excitation of a closed chain (docs/excitation.md, "Closed chains"): designs keep the passive joints within their
limits, the check certifies them, and a controller program is refused when its executed motion, re-sampled at the
controller's interpolation rate, takes a passive joint out of its limits."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

import robid
from robid.errors import RobidInputError
from robid.excitation.design import design_from_spec
from robid.excitation.programs import ProgramOptions, export_program
from robid.excitation.programs.parse_back import PARSERS, read_program_texts
from robid.excitation.spec import spec_from_dict
from robid.model.closure import LoopClosure

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def palletizer_design():
    robot = robid.load_robot("kr180_pa")
    result, tf = design_from_spec(robot, spec_from_dict({"harmonics": 5, "period": 8.0, "seed": 3}, "spec"))
    return robot, result, tf


def test_the_design_keeps_the_parallelogram_within_its_limits(palletizer_design):
    robot, result, tf = palletizer_design
    passive = [i for i in result.check.items if i.name == "E3 (passive)"]
    assert passive and all(i.certified and i.ok for i in passive) and result.check.ok
    t = np.linspace(0.0, tf.trajectory.period, 20001)
    q = tf.trajectory.derivative(t, 0)
    elbow = LoopClosure(robot.model).solve(q)[0][:, [j.name for j in LoopClosure(robot.model).tree].index("E3")]
    lo, hi = next(j for j in robot.model.chain.passive if j.name == "E3").limits.position
    assert lo <= elbow.min() and elbow.max() <= hi
    assert tf.passive["names"] == ["E3", "R3"] and tf.passive["relation"][0] == [0.0, -1.0, 1.0, 0.0]


@pytest.mark.parametrize("fmt", ["krl", "rapid"])
def test_programs_are_checked_on_the_passive_joints_at_the_controller_rate(palletizer_design, tmp_path, fmt):
    robot, _, tf = palletizer_design
    suffix = {"krl": ".src", "rapid": ".mod"}[fmt]
    out = export_program(tf, fmt, tmp_path / f"ident{suffix}", ProgramOptions(periods=1))
    names = {(i.quantity, i.joint) for i in out.check.items}
    assert ("position", "E3 (passive)") in names and out.check.ok
    motion = PARSERS[fmt](read_program_texts(out.paths[0], fmt))  # the executed motion, independently
    q_tree = LoopClosure(robot.model).solve(motion.q)[0]
    elbow = q_tree[:, [j.name for j in LoopClosure(robot.model).tree].index("E3")]
    lo, hi = tf.passive["limits"]["position"][0]
    assert lo <= elbow.min() and elbow.max() <= hi
    narrow = dataclasses.replace(tf, passive={**tf.passive, "limits": {"position": [[-0.01, 0.01], [None, None]]}})
    with pytest.raises(RobidInputError, match=r"would violate limits.*E3 \(passive\)"):
        export_program(narrow, fmt, tmp_path / f"narrow{suffix}", ProgramOptions(periods=1))


def test_a_general_loop_design_keeps_its_passive_limits():
    robot = robid.load_robot(DATA / "fourbar_planar.yaml")
    spec = spec_from_dict({"harmonics": 4, "period": 4.0, "seed": 2, "starts": 1, "max_iterations": 40}, "spec")
    result, _ = design_from_spec(robot, spec)
    items = [i for i in result.check.items if i.name.endswith("(passive)")]
    assert {i.name for i in items} == {"P2 (passive)", "P3 (passive)"} and all(i.ok for i in items)


def test_a_centre_outside_the_passive_limits_is_refused():
    robot = robid.load_robot("kr180_pa")
    spec = spec_from_dict({"harmonics": 4, "period": 8.0, "center": [0.0, 1.0, -0.7, 0.0]}, "spec.yaml")
    with pytest.raises(RobidInputError, match=r"spec.yaml: center: the passive joint E3 is at -1.7"):
        design_from_spec(robot, spec)
