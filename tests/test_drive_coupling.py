"""The coupled-drive term (docs/model.md, "Coupled drives"): the robot-file field, its checks, the regressor
columns against the motor-side dynamics N^T (Jm N qdd + fv_m N qd + fc_m sign(N qd)) written by hand, and the
smoothed Coulomb column of the coupled motor."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.special import erf

from robid.errors import RobidInputError
from robid.identification.coulomb import smooth_coulomb_columns
from robid.model.terms import default_terms, normalise_terms
from robid.model.yaml_reader import robot_from_dict
from robid.robot import Robot
from robid.symbolic import cache

# Motor 3 turns with q3 and q2: theta_m3 = 30 q3 + 24 q2 (rho = 0.8); motor 2 turns the other way (-40).
RATIOS = np.array([50.0, -40.0, 30.0])
COUPLED = 24.0
N = np.diag(RATIOS)
N[2, 1] = COUPLED
JM = np.array([2.0e-4, 1.0e-4, 5.0e-5])  # motor-side rotor inertias, kg m^2
FVM = np.array([3.0e-4, 2.0e-4, 4.0e-4])  # motor-side viscous, N m s/rad
FCM = np.array([0.02, 0.015, 0.025])  # motor-side Coulomb, N m

ROBOT = {
    "robid": 1,
    "name": "coupled3",
    "kinematics": "mdh",
    "joints": [
        {"name": "J1", "d": 0.3, "link": {"mass": 3.0, "com": [0, 0.02, -0.05], "inertia": [0.02, 0.02, 0.01, 0, 0, 0]},
         "drive": {"gear_ratio": 50, "rotor_inertia": 2.0e-4}},
        {"name": "J2", "alpha": "-90deg", "link": {"mass": 2.0, "com": [0.1, 0, 0.02],
                                                   "inertia": [0.004, 0.01, 0.01, 0, 0, 0]},
         "drive": {"gear_ratio": -40, "rotor_inertia": 1.0e-4}},
        {"name": "J3", "alpha": "90deg", "d": 0.1, "link": {"mass": 1.0, "com": [0, 0, 0.05],
                                                            "inertia": [0.002, 0.002, 0.001, 0, 0, 0]},
         "drive": {"gear_ratio": 30, "rotor_inertia": 5.0e-5,
                   "coupling": {"joint": "J2", "ratio": 24, "viscous": 0.36, "coulomb": 0.75}}},
    ],
}


def _model(data=ROBOT):
    return robot_from_dict(copy.deepcopy(data), "coupled3.yaml")


def _with_coupling(**fields):
    data = copy.deepcopy(ROBOT)
    coupling = data["joints"][2]["drive"]["coupling"]
    coupling.update(fields)
    for k in [k for k, v in coupling.items() if v is None]:
        del coupling[k]
    return data


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"joint": "J9"}, r"coupled3.yaml: joints\[2\].drive.coupling.joint: no joint named 'J9'"),
        ({"joint": "J3"}, r"joints\[2\].drive.coupling.joint: a drive cannot be coupled to its own joint"),
        ({"ratio": 0}, r"joints\[2\].drive.coupling.ratio: must not be 0"),
        ({"ratio": None}, r"joints\[2\].drive.coupling.ratio: required"),
        ({"viscous": -1.0}, r"joints\[2\].drive.coupling.viscous: must be >= 0"),
        ({"gain": 2.0}, r"joints\[2\].drive.coupling: unknown field 'gain'"),
    ],
)
def test_bad_coupling_fields_are_refused_naming_file_and_field(fields, message):
    with pytest.raises(RobidInputError, match=message):
        _model(_with_coupling(**fields))


def test_coupling_is_read_and_its_term_is_a_default_only_where_declared():
    model = _model()
    coupling = model.joints[2].drive.coupling
    assert (coupling.joint, coupling.ratio, coupling.viscous, coupling.coulomb) == ("J2", 24.0, 0.36, 0.75)
    assert model.drive_couplings == ((2, 1, 0.8),)
    assert "drive_coupling" in default_terms(model)
    plain = copy.deepcopy(ROBOT)
    del plain["joints"][2]["drive"]["coupling"]
    uncoupled = _model(plain)
    assert "drive_coupling" not in default_terms(uncoupled)
    with pytest.raises(RobidInputError, match="'drive_coupling' needs a joint whose drive has a 'coupling' block"):
        normalise_terms(["rigid", "drive_coupling"], uncoupled)
    # the generated code depends on the coupling ratio: another ratio is another cache entry
    other = _model(_with_coupling(ratio=20))
    terms = default_terms(model)
    assert cache.model_key(model, terms) != cache.model_key(other, terms)


def _motor_side_torque(qd, qdd):
    """Independent formulation: theta_m = N q; tau_m = Jm theta_m'' + fv_m theta_m' + fc_m sign(theta_m');
    tau = N^T tau_m (virtual work)."""
    thd, thdd = qd @ N.T, qdd @ N.T
    tau_m = JM * thdd + FVM * thd + FCM * np.sign(thd)
    return tau_m @ N


def _motor_parameters(robot: Robot) -> np.ndarray:
    """Standard values that describe the motors alone: Ia_J = Jm r_J^2, fv_J = fv_m r_J^2, fc_J = |r_J| fc_m on the
    uncoupled drives (0 on the coupled one: its Coulomb friction acts at the motor velocity, fcm), and the coupled
    drive's Iam = Jm3 r3^2, fvm = fv_m3 r3^2, fcm = |r3| fc_m3; no rigid bodies, no offsets."""
    values = {f"Ia_J{j + 1}": JM[j] * RATIOS[j] ** 2 for j in range(3)}
    values |= {f"fv_J{j + 1}": FVM[j] * RATIOS[j] ** 2 for j in range(3)}
    values |= {"fc_J1": abs(RATIOS[0]) * FCM[0], "fc_J2": abs(RATIOS[1]) * FCM[1], "fc_J3": 0.0}
    values |= {"Iam_J3": JM[2] * RATIOS[2] ** 2, "fvm_J3": FVM[2] * RATIOS[2] ** 2, "fcm_J3": abs(RATIOS[2]) * FCM[2]}
    return np.array([values.get(n, 0.0) for n in robot.parameter_names])


def test_coupled_columns_reproduce_the_motor_side_dynamics_through_the_transmission():
    robot = Robot(_model())
    names = robot.parameter_names
    assert names[-3:] == ["Iam_J3", "fvm_J3", "fcm_J3"]
    rng = np.random.default_rng(7)
    n = 200
    q, qd, qdd = rng.uniform(-2, 2, (n, 3)), rng.uniform(-2, 2, (n, 3)), rng.uniform(-5, 5, (n, 3))
    p = _motor_parameters(robot)
    expected = _motor_side_torque(qd, qdd)
    assert np.abs(expected).max() > 1.0
    Y = robot.regressor(q, qd, qdd)
    assert np.allclose(Y @ p, expected, rtol=1e-12, atol=1e-12)
    assert np.allclose(robot.inverse_dynamics(q, qd, qdd, p), expected, rtol=1e-12, atol=1e-12)
    base = robot.base_parameters()
    assert np.allclose(base.regressor(q, qd, qdd) @ base.values(p), expected, rtol=1e-10, atol=1e-12)
    # the nominal coupled values come from the robot file: Iam = rotor_inertia r^2, fvm, fcm from the block
    nominal = dict(zip(names, robot.parameters, strict=True))
    assert np.isclose(nominal["Iam_J3"], 5.0e-5 * 900) and nominal["fvm_J3"] == 0.36 and nominal["fcm_J3"] == 0.75
    # three independent columns more than the same robot without the coupling
    plain = Robot(_model(), terms=[t for t in robot.terms if t != "drive_coupling"])
    assert len(base.names) == len(plain.base_parameters().names) + 3
    assert {"Iam_J3", "fvm_J3", "fcm_J3"} <= set(base.names)


def test_coupled_coulomb_column_takes_the_expected_sign_of_the_motor_velocity():
    names = ["fc_J1", "fcm_J3", "Ia_J2"]
    base = SimpleNamespace(names=names, expressions=list(names))
    rng = np.random.default_rng(3)
    qd = rng.normal(scale=0.01, size=(50, 3))
    W = np.zeros((50, 3, 3))
    noise = (0.004, 0.003, 0.005)
    out, note = smooth_coulomb_columns(W, base, ["J1", "J2", "J3"], qd, noise, couplings=((2, 1, 0.8),))
    s = np.hypot(0.005, 0.8 * 0.003)
    expected = erf((qd[:, 2] + 0.8 * qd[:, 1]) / (np.sqrt(2) * s))
    assert np.allclose(out[:, 2, 1], expected) and np.allclose(out[:, 1, 1], 0.8 * expected)
    assert np.all(out[:, 0, 1] == 0) and np.allclose(out[:, 0, 0], erf(qd[:, 0] / (np.sqrt(2) * 0.004)))
    assert "fcm_J3 (v = qd_J3 + 0.8 qd_J2)" in note
