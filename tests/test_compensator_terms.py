"""Compensator columns of the regressor against closed forms (law of cosines) and finite differences."""

import numpy as np
import pytest

import robid

ONE_JOINT = """
robid: 1
name: compensator-rig
gravity: [0, 0, -9.81]
kinematics: dh
joints:
  - name: J1
    link: {{mass: 1, com: [0.1, 0, 0], inertia: [0.01, 0.01, 0.01, 0, 0, 0]}}
    compensator: {comp}
"""
L, R = 0.8, 0.2  # base point (0, L, 0) in frame 0; link point (R, 0, 0) in frame 1


def rig(tmp_path, comp):
    path = tmp_path / "rig.yaml"
    path.write_text(ONE_JOINT.format(comp=comp))
    return robid.load_robot(path, terms=("rigid", "compensator"))


def closed_form_length(q):
    """l^2 = L^2 + R^2 - 2 L R sin q for the points above (law of cosines); dl/dq = -L R cos q / l."""
    length = np.sqrt(L**2 + R**2 - 2 * L * R * np.sin(q))
    return length, -L * R * np.cos(q) / length


def compensator_torque(robot, q):
    names = robot.parameter_names
    cols = [k for k, n in enumerate(names) if n.startswith("comp_")]
    qq = np.asarray(q, dtype=float).reshape(-1, 1)
    y = robot.regressor(qq, np.zeros_like(qq), np.zeros_like(qq))
    return y[:, 0, cols] @ robot.parameters[cols]


def test_gas_cylinder_torque_matches_hand_values_at_three_angles(tmp_path):
    area, p0, l0, v0, n = 1.669e-3, 162.8e5, 0.6, 0.96e-3, 1.1
    robot = rig(
        tmp_path,
        f"{{type: gas, base_point: [0, {L}, 0], link_point: [{R}, 0, 0], area: {area}, p0: {p0}, l0: {l0},"
        f" v0: {v0}, n: {n}}}",
    )
    q = np.radians([0.0, 30.0, 60.0])
    length, dl = closed_form_length(q)
    force = -p0 * area * (v0 / (v0 - area * (length - l0))) ** n  # pulls the points together
    expected = -force * dl
    # by hand at q = 0: l = sqrt(0.68) = 0.824621, dl/dq = -0.194029, ratio = 0.96/(0.96 - 1.669*0.224621)
    assert expected[0] == pytest.approx(-p0 * area * (0.96e-3 / (0.96e-3 - area * (np.sqrt(0.68) - l0))) ** n
                                        * 0.16 / np.sqrt(0.68), rel=1e-12)
    got = compensator_torque(robot, q)
    print("gas-spring compensator torque [N m] at 0/30/60 deg:", got, "closed form:", expected)
    assert np.allclose(got, expected, rtol=1e-10, atol=0)


def test_spring_torque_matches_closed_form_and_is_linear_in_k_and_k_l0(tmp_path):
    k, l0 = 2.0e5, 0.9
    robot = rig(
        tmp_path,
        f"{{type: spring, base_point: [0, {L}, 0], link_point: [{R}, 0, 0], stiffness: {k}, free_length: {l0}}}",
    )
    assert robot.parameter_names[-2:] == ["comp_k_J1", "comp_kl0_J1"]
    assert robot.parameters[-2:] == pytest.approx([k, k * l0])
    q = np.linspace(-2.5, 2.5, 11)
    length, dl = closed_form_length(q)
    expected = -k * (l0 - length) * dl
    assert np.allclose(compensator_torque(robot, q), expected, rtol=1e-10, atol=1e-9)


def test_fourier_basis_has_the_odd_symmetry(tmp_path):
    robot = rig(tmp_path, "{type: fourier, order: 3, symmetry_angle: 90deg, coefficients: [10, 2, 1]}")
    q = np.linspace(-3, 3, 13)
    expected = sum(b * np.sin(k * (q - np.pi / 2)) for k, b in ((1, 10), (2, 2), (3, 1)))
    assert np.allclose(compensator_torque(robot, q), expected, atol=1e-12)
    # odd about 90 deg: tau(90 + x) = -tau(90 - x)
    x = np.linspace(0.1, 1.0, 5)
    assert np.allclose(compensator_torque(robot, np.pi / 2 + x), -compensator_torque(robot, np.pi / 2 - x))


def test_compensator_columns_enter_the_base_parameters(tmp_path):
    robot = rig(
        tmp_path,
        f"{{type: spring, base_point: [0, {L}, 0], link_point: [{R}, 0, 0], stiffness: 1.0e5, free_length: 0.9}}",
    )
    base = robot.base_parameters()
    assert "comp_k_J1" in base.names and "comp_kl0_J1" in base.names
    assert base.classes["comp_k_J1"] == "identifiable"
    q = np.random.default_rng(1).uniform(-3, 3, (20, 1))
    z = np.random.default_rng(2).normal(size=(20, 1))
    tau = robot.inverse_dynamics(q, z, z)
    assert np.allclose(base.regressor(q, z, z) @ base.values(robot.parameters), tau, rtol=1e-10, atol=1e-9)


def test_unknown_compensator_type_names_the_field(tmp_path):
    with pytest.raises(robid.RobidInputError, match=r"joints\[0\]\.compensator\.type"):
        rig(tmp_path, "{type: hydraulic}")


def test_cache_key_follows_compensator_geometry_not_its_values(tmp_path):
    from robid.symbolic.cache import model_key

    def key(comp):
        r = rig(tmp_path, comp)
        return model_key(r.model, r.terms)

    spring = "{{type: spring, base_point: [0, {L}, 0], link_point: [{R}, 0, 0], stiffness: {k}, free_length: 0.9}}"
    a = key(spring.format(L=L, R=R, k=1e5))
    b = key(spring.format(L=L, R=R, k=3e5))
    c = key(spring.format(L=0.7, R=R, k=1e5))
    assert a == b != c
