"""Nonlinear joint friction: the robot file's models (robid.model.Friction), the virtual robot's friction, the
variable-projection estimator and per-joint model selection (robid.estimation.nonlinear_friction,
robid.identification.friction_fit).

Independent checks: the friction laws against their closed forms written out here (Gaz et al.'s sigmoid in its
original exp form); the plant's torque against pinocchio's inverse dynamics plus those laws; the variable
projection against a direct nonlinear least squares over all parameters with a finite-difference Jacobian; and the
recovery of known parameters from the virtual robot with sensor noise: a 3-axis arm (J1 vertical, J2 and J3
horizontal) with Stribeck friction on J2 and J3 and linear friction on J1, three periods of an 8 s Fourier motion
at 250 Hz with realistic noise (fixed seeds); and a sigmoid joint (Gaz et al. 2019 eq. 3) on the same arm.
Measured (2026-11-26): fs, fc, vs, fv of J2/J3 within 1.5 % of the truth (|z| <= 1.7 std); the sigmoid's
amplitude, slope, offset within 1.2 %; 20 noise seeds: scatter / reported std median 0.76 over all parameters,
0.89 over the friction parameters (not asserted here). About 24 s.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.optimize import least_squares

import robid
from robid.errors import RobidInputError
from robid.estimation import prediction_std
from robid.estimation.friction_model_selection import select_friction_models
from robid.estimation.nonlinear_friction import (
    FrictionProblem,
    FrictionRequest,
    FrictionSignals,
    fit_nonlinear_friction,
    friction_regressor,
    predict_friction,
)
from robid.excitation.fourier import FourierTrajectory
from robid.identification import IdentificationOptions, run_identification
from robid.identification.datasets import load_dataset
from robid.identification.friction_fit import dataset_signals, fit_friction, friction_problem, select_friction
from robid.model.loader import read_robot
from robid.model.robot_model import Drive, Friction, FrictionRipple, FrictionSigmoid, sigmoid_friction
from robid.signals import ProcessingOptions
from robid.simulation import ControllerSettings, IntegratorSettings, Plant, ReferenceMotion, SensorSettings, simulate
from robid.simulation.plant import friction_slope, friction_torque
from robid.simulation.truth import true_parameters

DATA = Path(__file__).resolve().parent / "data"
PERIOD, RATE, PERIODS = 8.0, 250.0, 3

LINEAR = {"viscous": 2.0, "coulomb": 3.0, "offset": 0.2}
STRIBECK2 = {"model": "stribeck", "viscous": 3.0, "coulomb": 4.0, "static": 7.0, "stribeck_velocity": 0.15,
             "offset": -0.3}
STRIBECK3 = {"model": "stribeck", "viscous": 1.5, "coulomb": 2.0, "static": 3.5, "stribeck_velocity": 0.1,
             "offset": 0.1}
SIGMOID1 = {"model": "sigmoid", "viscous": 2.0, "offset": 0.2,
            "sigmoids": [{"amplitude": 6.0, "slope": 25.0, "offset": 0.02}]}


def arm(friction=(LINEAR, STRIBECK2, STRIBECK3)) -> dict:
    """A 3-axis arm: J1 about the vertical, J2 and J3 horizontal (standard DH), geared drives."""
    links = [
        {"mass": 8.0, "com": [0.0, -0.1, 0.0], "inertia": [0.12, 0.10, 0.12, 0, 0, 0]},
        {"mass": 6.0, "com": [-0.25, 0.0, 0.02], "inertia": [0.02, 0.15, 0.15, 0, 0, 0]},
        {"mass": 3.0, "com": [-0.2, 0.01, 0.0], "inertia": [0.01, 0.05, 0.05, 0, 0, 0]},
    ]
    geometry = [{"alpha": "90deg", "a": 0.1, "d": 0.4}, {"a": 0.5}, {"a": 0.4}]
    drives = [{"gear_ratio": 100, "rotor_inertia": 2.0e-5}, {"gear_ratio": 100, "rotor_inertia": 2.0e-5},
              {"gear_ratio": 80, "rotor_inertia": 1.5e-5}]
    joints = [{"name": f"J{k + 1}", **geometry[k], "link": links[k], "drive": drives[k], "friction": dict(friction[k])}
              for k in range(3)]
    return {"robid": 1, "name": "friction-arm", "gravity": [0, 0, -9.81], "kinematics": "dh", "joints": joints}


def write_robot(path: Path, doc: dict) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def fourier(seed: int) -> FourierTrajectory:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(scale=0.35, size=(2, 3, 4))
    return FourierTrajectory(PERIOD, np.array([0.0, 0.3, -0.5]), a, b)


def simulated_runs(tmp: Path, doc: dict, seeds, sensor_seed: int):
    """The robot and its run_identification on run 0 (the other runs held out), feed-forward with friction so
    that the arm follows its reference through the velocity reversals."""
    path = write_robot(tmp / "arm.yaml", doc)
    robot = robid.load_robot(path)
    sensors = SensorSettings.with_noise_level("realistic", rate=RATE)
    files = []
    for k, seed in enumerate(seeds):
        sim = simulate(robot.model, fourier(seed), periods=PERIODS, sensors=sensors, seed=sensor_seed + k,
                       controller=ControllerSettings(feedforward="full"))
        files.append(sim.write_csv(tmp / f"run{k}.csv"))
    options = IdentificationOptions(processing=ProcessingOptions(min_speed=0.02, period=PERIOD),
                                    check_consistency=False)
    return robot, run_identification(robot, files[:1], options, validation_files=files[1:]), files


@pytest.fixture(scope="module")
def stribeck_runs(tmp_path_factory):
    return simulated_runs(tmp_path_factory.mktemp("stribeck"), arm(), seeds=(3, 4), sensor_seed=10)


@pytest.fixture(scope="module")
def sigmoid_runs(tmp_path_factory):
    linear = ({"viscous": 3.0, "coulomb": 4.0, "offset": -0.3}, {"viscous": 1.5, "coulomb": 2.0, "offset": 0.1})
    return simulated_runs(tmp_path_factory.mktemp("sigmoid"), arm((SIGMOID1, *linear)), seeds=(3,), sensor_seed=20)


# ---- the friction laws ---------------------------------------------------------------------------------------------


def test_friction_laws_are_their_closed_forms():
    v = np.linspace(-1.0, 1.0, 401)
    q = np.linspace(-2.0, 3.0, 401)
    stribeck = Friction(viscous=3.0, coulomb=4.0, static=7.0, stribeck_velocity=0.15, offset=-0.3, model="stribeck")
    expected = 3.0 * v + (4.0 + 3.0 * np.exp(-((v / 0.15) ** 2))) * np.sign(v) - 0.3
    np.testing.assert_allclose(stribeck.torque(v), expected, rtol=1e-14, atol=1e-14)
    sig = (FrictionSigmoid(0.54615, 5.1181, 0.039533), FrictionSigmoid(0.2, 40.0, -0.01))
    sigmoid = Friction(viscous=0.5, offset=0.1, model="sigmoid", sigmoids=sig)
    gaz = sum(s.amplitude / (1 + np.exp(-s.slope * (v + s.offset))) - s.amplitude / (1 + np.exp(-s.slope * s.offset))
              for s in sig)  # Gaz et al. 2019 eq. 3 as printed
    np.testing.assert_allclose(sigmoid.torque(v), 0.5 * v + gaz + 0.1, rtol=1e-12, atol=1e-14)
    assert sigmoid_friction(0.0, 1.0, 5.0, 0.04) == 0.0
    ripple = Friction(coulomb=1.0, ripple=FrictionRipple((1, 3), (0.2, -0.1), (0.05, 0.3)))
    level = 1.0 + 0.2 * np.cos(q) + 0.05 * np.sin(q) - 0.1 * np.cos(3 * q) + 0.3 * np.sin(3 * q)
    np.testing.assert_allclose(ripple.torque(v, q), level * np.sign(v), rtol=1e-14, atol=1e-14)
    with pytest.raises(ValueError, match="positions"):
        ripple.torque(v)
    # the slopes the integrator's Jacobian uses, against central differences (smooth sign tanh(v/eps))
    eps, h = 0.05, 1e-6
    for law in (stribeck, sigmoid, ripple):
        def excess(x, law=law):
            return law.excess(x, q, np.tanh(x / eps))
        slope = law.excess_slope(v, q, np.tanh(v / eps), 1.0 / eps / np.cosh(v / eps) ** 2)
        np.testing.assert_allclose(slope, (excess(v + h) - excess(v - h)) / (2 * h), rtol=1e-5, atol=1e-5)


def test_references_score_published_models_with_the_same_sigmoid():
    from robid.identification import references

    assert references.sigmoid_friction is sigmoid_friction
    qd = np.linspace(-1.5, 1.5, 31)[:, None] * np.ones((1, 2))
    phi = np.array([[0.54615, 0.87224], [5.1181, 9.0657], [0.039533, 0.025882]])
    gaz = phi[0] / (1 + np.exp(-phi[1] * (qd + phi[2]))) - phi[0] / (1 + np.exp(-phi[1] * phi[2]))
    np.testing.assert_allclose(sigmoid_friction(qd, *phi), gaz, rtol=1e-12, atol=1e-15)


def test_robot_file_friction_models(tmp_path):
    doc = arm((SIGMOID1, STRIBECK2 | {"stribeck_velocity": "9deg/s"},
               LINEAR | {"ripple": {"harmonics": [1, 2], "cos": [0.3, 0.1]}}))
    model = read_robot(write_robot(tmp_path / "arm.yaml", doc))
    f1, f2, f3 = (j.friction for j in model.joints)
    assert f1.model == "sigmoid" and f1.sigmoids == (FrictionSigmoid(6.0, 25.0, 0.02),) and f1.coulomb == 0.0
    assert f2.model == "stribeck" and f2.static == 7.0 and f2.stribeck_velocity == pytest.approx(np.radians(9.0))
    assert f3.model == "linear" and not f3.is_linear
    assert f3.ripple == FrictionRipple((1, 2), (0.3, 0.1), (0.0, 0.0))
    assert read_robot(write_robot(tmp_path / "lin.yaml", arm((LINEAR,) * 3))).joints[0].friction == Friction(
        2.0, 3.0, 0.2)  # the linear file reads as before
    truth = true_parameters(model)
    assert truth["fsa1_J1"] == 6.0 and truth["fss1_J1"] == 25.0 and truth["fso1_J1"] == 0.02
    assert truth["fs_J2"] == 7.0 and truth["vs_J2"] == pytest.approx(np.radians(9.0)) and truth["fc_J2"] == 4.0
    assert truth["frc1_J3"] == 0.3 and truth["frs2_J3"] == 0.0 and "fs_J3" not in truth


@pytest.mark.parametrize(
    ("friction", "message"),
    [
        ({"model": "coulomb"}, r"joints\[1\]\.friction\.model: unknown friction model 'coulomb'"),
        ({"model": "stribeck", "coulomb": 1.0, "static": 2.0}, r"joints\[1\]\.friction\.stribeck_velocity: required"),
        ({"model": "stribeck", "static": 2.0, "stribeck_velocity": 0.0},
         r"joints\[1\]\.friction\.stribeck_velocity: must be > 0"),
        ({"model": "stribeck", "static": -1.0, "stribeck_velocity": 0.1}, r"joints\[1\]\.friction\.static: must be"),
        ({"static": 2.0}, r"joints\[1\]\.friction\.static: not a field of the linear friction model"),
        ({"model": "sigmoid", "coulomb": 1.0, "sigmoids": [{"amplitude": 1.0, "slope": 5.0}]},
         r"joints\[1\]\.friction\.coulomb: not a field of the sigmoid friction model"),
        ({"model": "sigmoid"}, r"joints\[1\]\.friction\.sigmoids: required"),
        ({"model": "sigmoid", "sigmoids": [{"amplitude": 1.0, "slope": -5.0}]},
         r"joints\[1\]\.friction\.sigmoids\[0\]\.slope: must be > 0"),
        ({"model": "sigmoid", "sigmoids": [{"amplitude": 1.0}]},
         r"joints\[1\]\.friction\.sigmoids\[0\]\.slope: required"),
        ({"model": "sigmoid", "sigmoids": [{"amplitude": 1.0, "slope": 5.0, "width": 1}]},
         r"joints\[1\]\.friction\.sigmoids\[0\]: unknown field 'width'"),
        ({"ripple": {"harmonics": [1, 1]}}, r"joints\[1\]\.friction\.ripple\.harmonics: each harmonic once"),
        ({"ripple": {"harmonics": [1, 2], "sin": [0.1]}}, r"joints\[1\]\.friction\.ripple\.sin: expected 2 numbers"),
        ({"viscous": 1.0, "stiction": 2.0}, r"joints\[1\]\.friction: unknown field 'stiction'"),
    ],
)
def test_bad_friction_fields_are_refused_by_name(tmp_path, friction, message):
    path = write_robot(tmp_path / "bad.yaml", arm((LINEAR, friction, LINEAR)))
    with pytest.raises(RobidInputError, match=f"bad.yaml: {message}"):
        read_robot(path)


# ---- the virtual robot -------------------------------------------------------------------------------------------


def _plant(model, eps=1e-3):
    rng = np.random.default_rng(3)
    traj = FourierTrajectory(4.0, np.zeros(model.dof), rng.normal(scale=0.4, size=(model.dof, 4)),
                             rng.normal(scale=0.4, size=(model.dof, 4))).project_rest()
    return Plant(model, ReferenceMotion(traj, 1), None, IntegratorSettings(coulomb_epsilon=eps), 0.0, 1.0)


def test_plant_friction_of_linear_joints_is_unchanged():
    """Bit for bit the expression the plant used before the nonlinear models (rhs and Jacobian)."""
    model = read_robot(DATA / "ur10e_like.urdf")
    model = dataclasses.replace(model, joints=tuple(dataclasses.replace(
        j, friction=Friction(2.0 + k, 3.0 - 0.2 * k, 0.5 * k)) for k, j in enumerate(model.joints)))
    d, eps = _plant(model).data, 1e-3
    v = np.random.default_rng(0).normal(scale=2e-3, size=(50, model.dof))
    q = np.zeros_like(v)
    assert np.array_equal(friction_torque(d, v, eps, q=q), d.fv * v + d.fc * np.tanh(v / eps) + d.f0)
    assert np.array_equal(friction_slope(d, v, eps, q), d.fv + d.fc / eps / np.cosh(np.clip(v / eps, -300, 300)) ** 2)


def test_closed_loop_with_nonlinear_friction_satisfies_pinocchio_inverse_dynamics():
    """Recorded drive torque = M qdd + c + g (pinocchio) + Ia qdd + each joint's friction law written out here, with
    tanh(qd/eps) for sign(qd): Stribeck, sigmoid, ripple and linear joints."""
    pin = pytest.importorskip("pinocchio")
    path = DATA / "ur10e_like.urdf"
    laws = [
        Friction(viscous=2.0, coulomb=3.0, offset=0.5),
        Friction(viscous=3.0, coulomb=4.0, static=7.0, stribeck_velocity=0.15, offset=-0.3, model="stribeck"),
        Friction(viscous=1.0, offset=0.1, model="sigmoid", sigmoids=(FrictionSigmoid(4.0, 20.0, 0.03),)),
        Friction(viscous=1.0, coulomb=2.0, ripple=FrictionRipple((1, 2), (0.3, -0.2), (0.1, 0.4))),
        Friction(viscous=1.0, coulomb=1.5, static=2.5, stribeck_velocity=0.08, model="stribeck",
                 ripple=FrictionRipple((3,), (0.2,), (0.0,))),
        Friction(viscous=0.5, coulomb=1.0),
    ]
    model = read_robot(path)
    model = dataclasses.replace(model, joints=tuple(dataclasses.replace(
        j, drive=Drive(gear_ratio=100.0, rotor_inertia=1e-4), friction=law) for j, law in zip(model.joints, laws,
                                                                                              strict=True)))
    eps = 1e-3
    plant = _plant(model, eps)
    sol, _ = plant.integrate()
    t = np.linspace(0.0, 1.0, 21)
    x = sol.sol(t).T
    q, qd, theta, thetad = plant.split(x)
    tau = plant.motor_torque(t, q, qd, theta, thetad)
    qdd = np.array([plant.rhs(tk, xk) for tk, xk in zip(t, x, strict=True)])[:, 6:12]
    pm = pin.buildModelFromUrdf(str(path))
    data = pm.createData()
    rigid = np.array([pin.rnea(pm, data, q[k], qd[k], qdd[k]) for k in range(t.size)])
    s = np.tanh(qd / eps)
    friction = np.column_stack([
        2.0 * qd[:, 0] + 3.0 * s[:, 0] + 0.5,
        3.0 * qd[:, 1] + (4.0 + 3.0 * np.exp(-((qd[:, 1] / 0.15) ** 2))) * s[:, 1] - 0.3,
        1.0 * qd[:, 2] + 4.0 / (1 + np.exp(-20.0 * (qd[:, 2] + 0.03))) - 4.0 / (1 + np.exp(-20.0 * 0.03)) + 0.1,
        1.0 * qd[:, 3] + (2.0 + 0.3 * np.cos(q[:, 3]) + 0.1 * np.sin(q[:, 3]) - 0.2 * np.cos(2 * q[:, 3])
                          + 0.4 * np.sin(2 * q[:, 3])) * s[:, 3],
        1.0 * qd[:, 4] + (1.5 + np.exp(-((qd[:, 4] / 0.08) ** 2)) + 0.2 * np.cos(3 * q[:, 4])) * s[:, 4],
        0.5 * qd[:, 5] + 1.0 * s[:, 5],
    ])
    expected = rigid + 1.0 * qdd + friction
    assert np.abs(tau - expected).max() < 1e-9 * np.abs(expected).max()
    # the Jacobian's friction slopes: nonlinear minus linear model, against the laws' central differences
    slope = friction_slope(plant.data, qd, eps, q)
    h = 1e-7
    diff = (friction_torque(plant.data, qd + h, eps, q=q) - friction_torque(plant.data, qd - h, eps, q=q)) / (2 * h)
    np.testing.assert_allclose(slope, diff, rtol=1e-5, atol=1e-3)


# ---- the estimator on arrays: variable projection against a direct nonlinear least squares ------------------------


def _synthetic(seed=0, n=1500):
    """Three joints, 6 'rigid' columns shared by all rows, fv/fc/f0 per joint; truth: joint A linear with a ripple,
    B Stribeck, C sigmoid; the sign smoothed as identification does (erf of the noise is a tanh here). The
    parameters are the same for every ``seed``; the motion's phases and the noise are not."""
    rng = np.random.default_rng(100)
    t = np.linspace(0.0, 30.0, n) + 7.0 * seed
    q = np.column_stack([np.sin(0.7 * t + k) + 0.3 * np.sin(2.1 * t + 2 * k) for k in range(3)])
    v = np.gradient(q, t, axis=0)
    s = np.tanh(v / 0.005)
    rigid = np.stack([np.column_stack([np.sin((i + 1) * 0.3 * t + j) * rng.normal() + np.cos((i % 3 + 1) * q[:, j])
                                       for j in range(3)]) for i in range(6)], axis=2)
    joints = ("A", "B", "C")
    fr = np.zeros((n, 3, 9))
    names = [f"p{i}" for i in range(6)]
    for j, jn in enumerate(joints):
        fr[:, j, 3 * j], fr[:, j, 3 * j + 1], fr[:, j, 3 * j + 2] = v[:, j], s[:, j], 1.0
        names += [f"fv_{jn}", f"fc_{jn}", f"f0_{jn}"]
    W = np.concatenate([rigid, fr], axis=2)
    beta = rng.uniform(0.5, 2.0, W.shape[2])
    tau = W @ beta
    tau[:, 0] += (0.4 * np.cos(q[:, 0]) - 0.25 * np.sin(2 * q[:, 0])) * s[:, 0]  # ripple on A
    tau[:, 1] += 2.5 * np.exp(-((v[:, 1] / 0.2) ** 2)) * s[:, 1]  # Stribeck on B: fs = fc + 2.5
    fc_c = names.index("fc_C")
    tau[:, 2] += -beta[fc_c] * s[:, 2] + sigmoid_friction(v[:, 2], 3.0, 15.0, 0.05)  # sigmoid on C, no fc
    noise = np.array([0.02, 0.05, 0.03])
    tau = tau + np.random.default_rng(seed).normal(size=tau.shape) * noise
    truth = dict(zip(names, beta, strict=True))
    truth |= {"frc1_A": 0.4, "frs1_A": 0.0, "frc2_A": 0.0, "frs2_A": -0.25, "fs_B": truth["fc_B"] + 2.5, "vs_B": 0.2,
              "fsa1_C": 3.0, "fss1_C": 15.0, "fso1_C": 0.05}
    problem = FrictionProblem(W, tau, tuple(names), joints, FrictionSignals.unfiltered(q, v, s))
    return problem, truth, noise


MODELS = {"A": FrictionRequest("linear", ripple=(1, 2)), "B": "stribeck", "C": "sigmoid"}


def test_variable_projection_matches_a_direct_nonlinear_least_squares():
    problem, truth, noise = _synthetic()
    res = fit_nonlinear_friction(problem, MODELS, noise_std=noise)
    assert res.converged, res.notes
    assert "fc_C" not in res.names and res.nonlinear_names == ("vs_B", "fss1_C", "fso1_C")
    # direct weighted least squares over all parameters together, finite-difference Jacobian, started off the truth
    names = res.names
    W, tau = problem.W, problem.tau
    q, v = problem.signals.evaluate(lambda q, v, s: q), problem.signals.velocity
    s = np.tanh(v / 0.005)

    def model(theta):
        p = dict(zip(names, theta, strict=True))
        out = W[:, :, [problem.names.index(n) for n in names if n in problem.names]] @ np.array(
            [p[n] for n in names if n in problem.names])
        out[:, 0] += sum((p[f"frc{h}_A"] * np.cos(h * q[:, 0]) + p[f"frs{h}_A"] * np.sin(h * q[:, 0])) * s[:, 0]
                         for h in (1, 2))
        out[:, 1] += (p["fs_B"] - p["fc_B"]) * np.exp(-((v[:, 1] / p["vs_B"]) ** 2)) * s[:, 1]
        out[:, 2] += sigmoid_friction(v[:, 2], p["fsa1_C"], p["fss1_C"], p["fso1_C"])
        return out

    def residual(theta):
        return ((tau - model(theta)) / noise).ravel()

    start = np.array([truth[n] * 1.1 for n in names])
    direct = least_squares(residual, start, x_scale="jac", xtol=1e-14, ftol=1e-14, gtol=1e-14)
    assert np.all(np.abs(res.values - direct.x) < 1e-3 * res.std), np.abs(res.values - direct.x) / res.std
    # covariance (J_w^T J_w)^-1 with the known noise: the fit's residual-based sandwich agrees within 10 %
    J = direct.jac
    std = np.sqrt(np.diag(np.linalg.inv(J.T @ J)))
    np.testing.assert_allclose(res.std, std, rtol=0.1)
    for name in ("fs_B", "vs_B", "fsa1_C", "fss1_C", "fso1_C", "frc1_A", "frs2_A", "fc_B", "fv_C"):
        assert abs(res.value(name) - truth[name]) < 4 * res.std_of(name), (name, res.value(name), truth[name])
    # residual-based weights (the default) land on the same estimate within a fraction of a std
    free = fit_nonlinear_friction(problem, MODELS)
    assert np.all(np.abs(free.values - res.values) < 0.2 * res.std)
    assert np.allclose(predict_friction(res, problem), tau - res.residual)
    X, S = friction_regressor(res, problem)
    assert X.shape[2] == len(res.linear_names) and S.shape[2] == len(res.names)
    band = prediction_std(S, res.covariance)
    assert band.shape == tau.shape and np.all(band > 0) and np.all(band < noise)  # the model's, below the noise


@pytest.mark.parametrize(("joint", "request_"), [("B", FrictionRequest("stribeck")), ("C", FrictionRequest("sigmoid")),
                                               ("A", FrictionRequest("linear", ripple=(1, 2)))])
def test_screening_from_one_joints_rows_is_the_full_fit_with_those_weights(joint, request_):
    """robid.estimation.friction_screening: the candidate fitted from its joint's rows (the fixed columns factored
    once, a dropped Coulomb column as a rank-one update) is the variable-projection fit of the whole problem with
    the same fixed weights: same values and the same joint figures."""
    from robid.estimation.friction_screening import screen_candidate

    problem, _, noise = _synthetic()
    full = fit_nonlinear_friction(problem, {joint: request_}, noise_std=noise)
    screened = screen_candidate(problem, joint, request_, 1.0 / noise, {})
    assert screened.names == full.names
    np.testing.assert_allclose(screened.values, full.values, rtol=1e-6, atol=1e-6 * np.abs(full.values).max())
    j = problem.joint_names.index(joint)
    assert screened.joint.rms == pytest.approx(full.joints[j].rms, rel=1e-8)
    assert screened.joint.bic == pytest.approx(full.joints[j].bic, rel=1e-8)
    np.testing.assert_allclose(predict_friction(screened, problem), predict_friction(full, problem), rtol=0,
                               atol=1e-6 * np.abs(problem.tau).max())


def test_selection_by_bic_and_by_held_out_error_on_arrays():
    problem, _, _ = _synthetic(seed=1)
    held_out, _, _ = _synthetic(seed=2)
    by_bic = select_friction_models(problem)
    assert by_bic.chosen == ("linear", "stribeck", "sigmoid"), by_bic.table()
    by_val = select_friction_models(problem, validation=[held_out])
    assert by_val.chosen == ("linear", "stribeck", "sigmoid"), by_val.table()
    assert by_val.criterion == "validation" and len(by_val.candidates) == 9
    assert all(c.validation_rms is not None for c in by_val.candidates)
    assert by_val.final.models == ("linear", "stribeck", "sigmoid")
    assert "held-out rms" in by_val.table()


def test_estimator_errors_name_what_is_wrong():
    problem, _, _ = _synthetic(n=300)
    with pytest.raises(RobidInputError, match="no joint named 'D'"):
        fit_nonlinear_friction(problem, {"D": "stribeck"})
    with pytest.raises(RobidInputError, match="expected one of linear, stribeck, sigmoid, got 'dahl'"):
        fit_nonlinear_friction(problem, {"A": "dahl"})
    with pytest.raises(RobidInputError, match="ripple: expected distinct positive harmonics"):
        FrictionRequest("linear", ripple=(0,))
    with pytest.raises(RobidInputError, match="initial: vs_A are not nonlinear parameters"):
        fit_nonlinear_friction(problem, {"B": "stribeck"}, initial={"vs_A": 0.1})
    with pytest.raises(RobidInputError, match="noise_std must be 3 positive"):
        fit_nonlinear_friction(problem, {"B": "stribeck"}, noise_std=[1.0, 0.0, 1.0])
    names = tuple(n.replace("fc_B", "fcx_B") for n in problem.names)
    renamed = dataclasses.replace(problem, names=names)
    with pytest.raises(RobidInputError, match="stribeck model of joint B needs the base parameter fc_B"):
        fit_nonlinear_friction(renamed, {"B": "stribeck"})
    W = problem.W.copy()
    W[:, 0, problem.names.index("fc_B")] = 1.0
    with pytest.raises(RobidInputError, match="fc_B enters other joints' rows"):
        fit_nonlinear_friction(dataclasses.replace(problem, W=W), {"B": "stribeck"})
    with pytest.raises(RobidInputError, match="signals' velocity"):
        FrictionProblem(problem.W, problem.tau, problem.names, problem.joint_names,
                        FrictionSignals.unfiltered(np.zeros((5, 3)), np.zeros((5, 3))))


# ---- the virtual robot, through the whole pipeline ---------------------------------------------------------------


STRIBECK_NAMES = ("fs_J2", "fc_J2", "vs_J2", "fv_J2", "fs_J3", "fc_J3", "vs_J3", "fv_J3")


def test_stribeck_friction_recovered_from_the_virtual_robot(stribeck_runs):
    robot, ident, _ = stribeck_runs
    res = fit_friction(robot, ident.datasets, {"J2": "stribeck", "J3": "stribeck"})
    assert res.converged, res.notes
    truth = true_parameters(robot.model)
    for name in STRIBECK_NAMES:
        value, std, true = res.value(name), res.std_of(name), truth[name]
        # measured: errors -1.5 .. +0.5 %, |z| <= 1.7
        assert abs(value / true - 1.0) < 0.05, (name, value, true)
        assert abs(value - true) < 4.0 * std, (name, value, std, true)
    assert res.joints[0].model == "linear" and res.joints[1].model == "stribeck"


def test_selection_picks_stribeck_where_it_was_simulated(stribeck_runs):
    robot, ident, _ = stribeck_runs
    by_bic = select_friction(robot, ident.datasets)
    assert by_bic.chosen == ("linear", "stribeck", "stribeck"), by_bic.table()
    by_val = select_friction(robot, ident.datasets, validation_sets=ident.validation_sets)
    assert by_val.chosen == ("linear", "stribeck", "stribeck"), by_val.table()
    # on the held-out run the Stribeck model removes most of the linear model's error on J2 and J3
    for joint in ("J2", "J3"):
        linear, stribeck = (c.validation_rms for c in by_val.of(joint)[:2])
        assert stribeck < 0.5 * linear, (joint, linear, stribeck)


def test_friction_columns_take_the_coulomb_columns_path(stribeck_runs):
    """The sign the new columns use, filtered by dataset_signals, is W's own fc column: periodic (harmonic mask)
    and non-periodic (whole record through the zero-phase low-pass, then trimmed)."""
    robot, ident, files = stribeck_runs
    nonperiodic = load_dataset(robot, files[0], options=ProcessingOptions(mode="nonperiodic", cutoff_hz=8.0,
                                                                          min_speed=0.02))
    assert nonperiodic.processed.parallel_filter is not None
    names = robot.base_parameters().names
    for dataset in (ident.datasets[0], nonperiodic):
        signals = dataset_signals(dataset)
        sign = signals.evaluate(lambda q, v, s: s)
        keep = np.asarray(dataset.processed.keep)
        for j, joint in enumerate(robot.joint_names):
            column = dataset.W[:, j, names.index(f"fc_{joint}")]
            np.testing.assert_allclose(sign[:, j] * keep[:, j], column, rtol=0, atol=1e-12)
    # the fit runs on the non-periodic run too (its rows correlated by the filter)
    res = fit_friction(robot, [nonperiodic], {"J3": "stribeck"})
    assert friction_problem(robot, [nonperiodic]).correlation is not None
    assert abs(res.value("vs_J3") / 0.1 - 1.0) < 0.1, res.value("vs_J3")


def test_sigmoid_friction_recovered_and_selected(sigmoid_runs):
    robot, ident, _ = sigmoid_runs
    res = fit_friction(robot, ident.datasets, {"J1": "sigmoid"})
    truth = true_parameters(robot.model)
    for name in ("fsa1_J1", "fss1_J1", "fso1_J1", "fv_J1"):
        value, true = res.value(name), truth[name]
        # measured: errors 0.02 / 0.3 / 1.1 / 0.05 %
        assert abs(value / true - 1.0) < 0.05, (name, value, true)
        assert abs(value - true) < 4.0 * res.std_of(name), (name, value, res.std_of(name), true)
    selection = select_friction(robot, ident.datasets)
    assert selection.chosen == ("sigmoid", "linear", "linear"), selection.table()
