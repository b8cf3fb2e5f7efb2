"""The virtual robot of a closed chain (robid.simulation.closed_dynamics: the tree with Lagrange multipliers) against
robid's projected regressor, the closure it holds, and identification on the virtual palletizer (docs/simulation.md
and docs/model.md, "Closed chains").

Monte Carlo (the acceptance of the closed chains): the virtual KR 180 PA class palletizer follows a designed
excitation (defaults, passive limits kept) for two periods; the noise-free run is recorded 30 times with
independent realistic noise (robid.simulation.sensors, "realistic") and each record is identified with the
defaults. Promise: every base parameter within 3 reported standard deviations of the truth (at most 1 % of the
record-parameter pairs beyond, as for a normal estimate), the median of scatter / reported std in 0.8-1.25, and
on a held-out run (another design) the identified model's torque residual within 1.5x of the true model's.

The virtual controller compensates friction in its feed-forward (``feedforward="full"``). Measured reason: with the
default rigid feed-forward the PD loop alone overcomes the palletizer's 180-450 N m of Coulomb friction, and the
stick at every velocity reversal leaves a deterministic torque error that no sign(qd) model follows: 28 % of the
|z| beyond 3 (periods of 5 and 8 s, min_speed 0.1; up to 13 std on the mean with the default min_speed 0.05),
0.4 % with the Coulomb friction removed from the robot file, 0 % with the friction feed-forward. It is the
friction model's limitation, shared with serial robots of that friction (docs/identification.md, min_speed),
not the loop's; this test is about the closed chain. Rows with |qd| < 0.1 rad/s are left out (``min_speed``), as in
tests/test_estimation_two_periods.py and every identification campaign: with the default 0.05 the rows next to a
reversal still bias the friction and first-moment parameters by 3-6 std (measured here with the friction
feed-forward too).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robid
from robid.excitation.design import design_from_spec
from robid.excitation.spec import spec_from_dict
from robid.identification import IdentificationOptions, run_identification
from robid.model.closure import LoopClosure
from robid.signals import ProcessingOptions
from robid.simulation import ControllerSettings, IntegratorSettings, SensorSettings, simulate
from robid.simulation.closed_dynamics import ClosedChainDynamics
from robid.simulation.sensors import measure

DATA = Path(__file__).parent / "data"
RIGID = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")


def _rigid(robot) -> list[int]:
    return [k for k, n in enumerate(robot.parameter_names) if n.split("_")[0] in RIGID]


@pytest.mark.parametrize("name", ["kr180_pa", str(DATA / "parallelogram_2r.yaml"), str(DATA / "fourbar_planar.yaml")])
def test_lagrange_multipliers_equal_the_projected_regressor(name):
    robot = robid.load_robot(name)
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-0.6, 0.6, (3, 15, robot.dof))
    tau = ClosedChainDynamics(robot.model).inverse_dynamics(q, qd, qdd)
    rigid = _rigid(robot)
    expected = robot.regressor(q, qd, qdd)[:, :, rigid] @ robot.parameters[rigid]
    assert np.abs(tau - expected).max() < 1e-9 * np.abs(expected).max()


def test_a_simulated_run_holds_the_closure_and_its_torques_are_the_models():
    robot = robid.load_robot(DATA / "parallelogram_2r.yaml")
    from robid.excitation.fourier import FourierTrajectory

    traj = FourierTrajectory(2.0, np.zeros(2), [[0.3, 0.1], [0.2, 0.05]], [[0.1, 0.05], [-0.2, 0.0]])
    eps = IntegratorSettings().coulomb_epsilon
    sim = simulate(robot, traj, periods=1, sensors=SensorSettings(rate=100.0), seed=1)
    dyn = sim.plant.dynamics
    q_tree, _ = dyn.tree_states(sim.q, sim.qd)
    closure = LoopClosure(robot.model)  # robid's own closure equations, not the simulator's
    assert np.abs(closure.residual(q_tree)).max() < 1e-9 * closure.loops[0].size
    qdd, _ = sim.accelerations()
    y = robot.regressor(sim.q, sim.qd, qdd)
    for j, joint in enumerate(robot.joint_names):  # the virtual robot smooths sign(qd) as tanh(qd / eps)
        k = robot.parameter_names.index(f"fc_{joint}")
        y[:, j, k] = np.tanh(sim.qd[:, j] / eps)
    model_tau = y @ robot.parameters
    assert np.abs(model_tau - sim.tau).max() < 1e-7 * np.abs(sim.tau).max()


PERIOD, RATE, SEEDS, MIN_SPEED = 5.0, 250.0, 30, 0.1


@pytest.fixture(scope="module")
def palletizer_records(tmp_path_factory):
    folder = tmp_path_factory.mktemp("palletizer")
    robot = robid.load_robot("kr180_pa")
    sensors = SensorSettings.with_noise_level("realistic", rate=RATE)
    runs = {}
    for label, seed, periods in (("design", 1, 2), ("held_out", 7, 1)):
        spec = spec_from_dict({"harmonics": 5, "period": PERIOD, "seed": seed}, label)
        result, trajectory = design_from_spec(robot, spec)
        assert result.check.ok and any("(passive)" in i.name for i in result.check.items)
        runs[label] = simulate(robot.model, trajectory.trajectory, periods=periods, sensors=sensors, seed=0,
                               controller=ControllerSettings(feedforward="full"))
    sim = runs["design"]
    paths = [measure(robot.model, sim.t, sim.q, sim.theta, sim.tau, sensors, np.random.default_rng(100 + s))
             .write_csv(folder / f"run{s}.csv") for s in range(SEEDS)]
    held_out = runs["held_out"].write_csv(folder / "held_out.csv")
    return robot, paths, held_out


def test_palletizer_identification_is_unbiased_with_honest_std(palletizer_records):
    robot, paths, held_out = palletizer_records
    options = IdentificationOptions(processing=ProcessingOptions(min_speed=MIN_SPEED), check_consistency=False)
    base = robot.base_parameters()
    truth = base.values(robot.parameters)
    values, stds = [], []
    for path in paths:
        result = run_identification(robot, [path], options)
        values.append(result.values)
        stds.append(result.estimate.std)
    values, stds = np.array(values), np.array(stds)
    z = (values - truth) / stds
    assert np.mean(np.abs(z) > 3.0) <= 0.01, np.abs(z).max(axis=0)
    ratio = np.std(values, axis=0, ddof=1) / np.sqrt(np.mean(stds**2, axis=0))
    print(f"\npalletizer: |z| max {np.abs(z).max():.2f}; scatter/std median {np.median(ratio):.3f}, "
          f"range {ratio.min():.2f}-{ratio.max():.2f}")
    assert 0.8 <= np.median(ratio) <= 1.25
    bias = np.abs(values.mean(axis=0) - truth) / (np.std(values, axis=0, ddof=1) / np.sqrt(len(paths)))
    assert np.median(bias) < 1.5


def test_palletizer_predicts_a_held_out_run(palletizer_records):
    from robid.identification.predict import predict_file

    robot, paths, held_out = palletizer_records
    options = IdentificationOptions(processing=ProcessingOptions(min_speed=MIN_SPEED), check_consistency=False)
    result = run_identification(robot, paths[:1], options)
    identified = predict_file(robot, result.record, held_out)
    base = robot.base_parameters()
    ideal_record = _with_values(result.record, base.values(robot.parameters))
    ideal = predict_file(robot, ideal_record, held_out)
    used = (identified.mark == 0) & (ideal.mark == 0)  # rows compared (not slow, predicted)
    ratio = np.sqrt(np.mean(identified.residual[used] ** 2)) / np.sqrt(np.mean(ideal.residual[used] ** 2))
    print(f"\nheld-out residual, identified / true model: {ratio:.3f}")
    assert ratio < 1.5


def _with_values(record, values):
    from dataclasses import replace

    params = tuple(replace(p, value=float(v)) for p, v in zip(record.base_parameters, values, strict=True))
    return replace(record, base_parameters=params)
