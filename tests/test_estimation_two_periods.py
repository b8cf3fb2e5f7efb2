"""Honest uncertainty from a record of exactly two periods (Monte Carlo on the virtual robot).

The virtual TX200 (3 axes, rigid joints, spring compensator; its own Newton-Euler, friction and PD control, never
robid's regressor) follows a designed Fourier excitation for exactly two periods; the noise-free run is
recorded 40 times by its sensor model with independent realistic noise (1e-5 rad on the positions, 1 % of each
joint's RMS torque). Each record is identified through the whole pipeline (period detected, K = 2 whole
periods averaged, WLS or OLS). Promise: for each estimator the median over the base parameters of
(scatter of the estimates across the 40 records) / (reported standard deviation) lies within 0.8 - 1.25, and
nine parameters in ten below 1.5.

Rows with |qd| < 0.1 rad/s are left out (``min_speed``), as in every identification campaign: near a velocity
reversal the virtual robot sticks for a moment (the PD loop has to overcome Coulomb friction), a motion no
sign(qd) model and no band-limited derivative follows; with those rows the first moment and friction parameters
of joint 3 come out biased by ~20 standard deviations with a scatter 3-5 times the reported one (deterministic
model error that changes with the data-chosen band), although the median ratio still looks fine (1.1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import robid
from robid.excitation.design import design_from_spec
from robid.excitation.spec import spec_from_dict
from robid.identification import IdentificationOptions, run_identification
from robid.signals import ProcessingOptions
from robid.simulation import SensorSettings, simulate
from robid.simulation.sensors import measure

ROBOTS = Path(robid.__file__).resolve().parent / "model" / "robots"
PERIOD, RATE, SEEDS, MIN_SPEED = 4.0, 250.0, 40, 0.1


@pytest.fixture(scope="module")
def two_period_records(tmp_path_factory):
    """The robot and 40 records of the same two-period run with independent sensor noise."""
    d = tmp_path_factory.mktemp("two_periods")
    doc = yaml.safe_load((ROBOTS / "tx200_3axis.yaml").read_text())
    for joint in doc["joints"]:
        joint.pop("elasticity", None)  # rigid joints: the identification model is the plant's
    (d / "tx200_rigid.yaml").write_text(yaml.safe_dump(doc))
    robot = robid.load_robot(d / "tx200_rigid.yaml")
    spec = {"harmonics": 5, "period": PERIOD, "seed": 1, "starts": 1, "max_iterations": 30}
    _, trajectory = design_from_spec(robot, spec_from_dict(spec, "two-periods"))
    sensors = SensorSettings.with_noise_level("realistic", rate=RATE)
    sim = simulate(robot.model, trajectory.trajectory, periods=2, sensors=sensors, seed=0)
    assert sim.t.size == 2 * int(PERIOD * RATE)  # exactly two periods
    paths = []
    for seed in range(SEEDS):
        rec = measure(robot.model, sim.t, sim.q, sim.theta, sim.tau, sensors, np.random.default_rng(1000 + seed))
        paths.append(rec.write_csv(d / f"run{seed}.csv"))
    return robot, paths


@pytest.mark.parametrize("method", ["wls", "ols"])
def test_reported_std_matches_the_scatter_with_two_periods(two_period_records, method):
    robot, paths = two_period_records
    options = IdentificationOptions(
        method=method, processing=ProcessingOptions(min_speed=MIN_SPEED), check_consistency=False
    )
    values, stds = [], []
    for path in paths:
        result = run_identification(robot, [path], options)
        p = result.datasets[0].processed
        assert p.mode == "periodic" and p.n_periods == 2 and p.period_source == "detected", p.method
        values.append(result.values)
        stds.append(result.estimate.std)
    scatter = np.std(values, axis=0, ddof=1)
    reported = np.sqrt(np.mean(np.square(stds), axis=0))
    ratio = scatter / reported
    print(
        f"\n{method}: scatter / reported std over {len(paths)} records, {ratio.size} base parameters: median "
        f"{np.median(ratio):.3f}, quartiles {np.percentile(ratio, 25):.3f}-{np.percentile(ratio, 75):.3f}, "
        f"range {ratio.min():.2f}-{ratio.max():.2f}"
    )
    assert 0.8 <= np.median(ratio) <= 1.25
    # and no parameter far off: a spurious noise harmonic in the band of one record (K = 2, a floor pooled
    # over too few degrees of freedom) gave a 90th percentile of 1.7-2.0
    assert np.percentile(ratio, 90) < 1.5
