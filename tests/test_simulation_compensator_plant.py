"""Compensator torques tau_comp = -F(l) dl/dq against hand geometry (law of cosines) at three angles."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robid.errors import RobidInputError
from robid.model.loader import read_robot
from robid.simulation.compensator_plant import CompensatorTorques


def test_kr_heavy_gas_compensator_by_hand():
    """Source model (robot file comment): l^2 = D^2 + k^2 - 2 D k cos(delta), delta = q2 + 95 deg, lever
    h = D k sin(delta) / l, gas pressure p = p0 v0 / (v0 - A (l - l0)) (n = 1), torque supplied = p A h."""
    model = read_robot("kr_heavy")
    comp = model.joints[1].compensator
    torques = CompensatorTorques(model)
    big_d, small_k = 0.8, 0.2
    angles = np.radians([-120.0, -90.0, -40.0])
    q = np.zeros((3, 6))
    q[:, 1] = angles
    got = torques.torque(q)
    for k, q2 in enumerate(angles):
        delta = q2 + math.radians(95.0)
        length = math.sqrt(big_d**2 + small_k**2 - 2 * big_d * small_k * math.cos(delta))
        lever = big_d * small_k * math.sin(delta) / length
        pressure = comp.p0 * comp.v0 / (comp.v0 - comp.area * (length - comp.l0))
        expected = pressure * comp.area * lever
        assert got[k, 1] == pytest.approx(expected, rel=1e-8)
        assert np.all(got[k, [0, 2, 3, 4, 5]] == 0.0)
        scalar = dict(torques.torque_single(q[k].tolist()))
        assert scalar[1] == pytest.approx(expected, rel=1e-8)
    # the robot file's own check: +632 N m at q2 = -90 deg; 170 and 199 bar at -120 and -40 deg
    assert got[1, 1] == pytest.approx(631.73, abs=0.01)


SPRING_1R = """
robid: 1
name: spring-1r
gravity: [0, -9.81, 0]
kinematics: dh
joints:
  - name: J1
    a: 1.0
    link: {mass: 5, com: [-0.5, 0, 0], inertia: [0.01, 0.4, 0.4, 0, 0, 0]}
    compensator:
      type: spring
      base_point: [0, 0.3, 0]      # frame 0, 0.3 m above the axis
      link_point: [-0.6, 0, 0]     # frame 1 (at the distal end): 0.4 m from the axis along the link
      stiffness: 2000
      free_length: 0.6
"""


def test_spring_compensator_by_hand(tmp_path):
    """Link point (0.4 cos q, 0.4 sin q), base point (0, 0.3): l^2 = 0.25 - 0.24 sin q, dl/dq = -0.12 cos q / l,
    F = k (L0 - l) pushing apart, tau_comp = -F dl/dq."""
    path = tmp_path / "spring.yaml"
    path.write_text(SPRING_1R)
    torques = CompensatorTorques(read_robot(path))
    for q in (-0.7, 0.3, 2.0):
        length = math.sqrt(0.25 - 0.24 * math.sin(q))
        dl = -0.12 * math.cos(q) / length
        expected = -2000 * (0.6 - length) * dl
        assert torques.torque(np.array([[q]]))[0, 0] == pytest.approx(expected, rel=1e-12)
        assert torques.torque_single([q])[0][1] == pytest.approx(expected, rel=1e-12)


def test_gas_volume_exhausted_is_an_input_error(tmp_path):
    text = SPRING_1R.replace("type: spring", "type: gas").replace(
        "stiffness: 2000\n      free_length: 0.6",
        "area: 0.01\n      p0: 1.0e6\n      l0: 0.1\n      v0: 0.001\n      n: 1.0",
    )
    path = tmp_path / "gas.yaml"
    path.write_text(text)
    torques = CompensatorTorques(read_robot(path))
    with pytest.raises(RobidInputError, match="gas volume"):
        torques.torque(np.array([[0.0]]))  # l = 0.5 > l0 + v0/area = 0.2
