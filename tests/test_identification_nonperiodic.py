"""Honest uncertainty on the non-periodic path: Monte Carlo over noise seeds on the virtual robot.

The PUMA 560 (6 axes, 52 base parameters: rigid body, rotors, viscous and Coulomb friction) follows a rest-free,
non-periodic motion -- a slow sweep plus incommensurate sines, so no joint ever stops or reverses and no Coulomb
sticking blurs the comparison (its Coulomb column is then a constant, which also carries the friction offset).
The plant is integrated once; every seed draws new sensor noise through the simulator's own sensor model
("realistic": 1e-5 rad on positions, 1 % of each joint's rms torque). Reference: the scatter of the estimates
across seeds, which the reported standard deviations must match.
"""

from __future__ import annotations

import numpy as np
import pytest

import robid
from robid.estimation import ols
from robid.identification import IdentificationOptions, run_identification
from robid.signals import ProcessingOptions
from robid.simulation import SensorSettings, simulate
from robid.simulation.sensors import measure

SEEDS = 20
TERMS = ("rigid", "rotor", "viscous", "coulomb")


class DriftingSines:
    """q_j(t) = (v T / 2 pi) sin(2 pi t / T) + sum_k a_jk sin(2 pi f_jk t + phi_jk): a slow sweep of speed
    v cos(2 pi t / T) >= 0.8 v over the 20 s recorded, plus sines at prime multiples of 1/T (T = 200 s: no two
    commensurate within the record, yet the commanded motion is periodic for the simulator's feed-forward table);
    sum_k 2 pi f_jk a_jk = 0.4 v, so |qd| >= 0.4 v."""

    rest_order = None
    period = 200.0

    def __init__(self, dof, v=0.4, seed=3):
        rng = np.random.default_rng(seed)
        primes = np.array([23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113])
        self.f = np.array([rng.choice(primes, 4, replace=False) for _ in range(dof)]) / self.period
        a = rng.uniform(0.5, 1.0, (dof, 4))
        self.a = a * 0.4 * v / (2 * np.pi * (self.f * a).sum(axis=1, keepdims=True))
        self.phi = rng.uniform(0, 2 * np.pi, (dof, 4))
        self.v = v
        self.center = np.zeros(dof)

    def derivative(self, t, order=0):
        t = np.atleast_1d(np.asarray(t, dtype=float))
        w = 2 * np.pi * np.concatenate([self.f, np.full((len(self.center), 1), 1.0 / self.period)], axis=1)[None]
        a = np.concatenate([self.a, np.full((len(self.center), 1), self.v * self.period / (2 * np.pi))], axis=1)
        phi = np.concatenate([self.phi, np.zeros((len(self.center), 1))], axis=1)
        return (a[None] * w**order * np.sin(w * t[:, None, None] + phi[None] + order * np.pi / 2)).sum(axis=2)


def _without_position_limits(folder):
    """The PUMA 560 with its joints free to turn (position limits +-20 rad): the drifting sweep turns each joint
    about 7.5 rad one way without a reversal, which the measurement reader refuses on the real PUMA's limits as
    implausible (positions more than a whole range beyond them: docs/security.md)."""
    import yaml

    from robid.model.loader import builtin_robot_path

    doc = yaml.safe_load(builtin_robot_path("puma560").read_text())
    for joint in doc["joints"]:
        joint["limits"]["position"] = [-20.0, 20.0]
    path = folder / "puma560_free.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Per seed: the WLS and OLS results of run_identification, and an OLS of the same rows as if independent."""
    folder = tmp_path_factory.mktemp("nonperiodic")
    robot = robid.load_robot(_without_position_limits(folder), terms=TERMS)
    sensors = SensorSettings.with_noise_level("realistic", rate=250.0)
    sim = simulate(robot.model, DriftingSines(robot.dof), duration=20.0, periods=0.1, sensors=sensors, seed=0)
    assert np.abs(sim.qd).min() > 0.1  # rest-free
    # every row (decimate=1): the claim is about the covariance of low-passed, correlated rows; decimated rows
    # (the default) are nearly independent, and their covariance is checked in tests/test_estimation_correlated.py
    processing = ProcessingOptions(mode="nonperiodic", decimate=1)
    out = {"wls": [], "ols": [], "ols, rows as if independent": []}
    wls_fit, white = None, []
    for seed in range(SEEDS):
        recording = measure(robot.model, sim.t, sim.q, sim.theta, sim.tau, sensors, np.random.default_rng(100 + seed))
        path = recording.write_csv(folder / f"run{seed}.csv")
        for method in ("wls", "ols"):
            options = IdentificationOptions(method=method, processing=processing, check_consistency=False)
            fit = run_identification(robot, [path], options)
            out[method].append((fit.estimate.values, fit.estimate.std))
            if method == "wls":
                wls_fit = fit
                white.append(fit.estimate.white_sigma)
        d = fit.datasets[0]
        naive = ols(d.W, d.tau)
        out["ols, rows as if independent"].append((naive.values, naive.std))
    return out, wls_fit, recording.tau_noise_std, np.array(white)


def median_ratio(pairs):
    values = np.array([v for v, _ in pairs])
    std = np.array([s for _, s in pairs])
    return float(np.median(values.std(axis=0, ddof=1) / np.median(std, axis=0)))


def test_reported_std_matches_the_scatter_across_seeds(runs):
    out, fit, _, _ = runs
    ratios = {name: median_ratio(pairs) for name, pairs in out.items()}
    print(
        f"\n{SEEDS} seeds, {len(fit.estimate.names)} base parameters; median over parameters of observed scatter / "
        "reported std:",
        {k: round(v, 3) for k, v in ratios.items()},
    )
    print(fit.datasets[0].processed.method.splitlines()[3])
    assert 0.8 <= ratios["wls"] <= 1.25
    assert 0.8 <= ratios["ols"] <= 1.25
    assert ratios["ols, rows as if independent"] > 1.8  # what the low-passed rows do to a naive covariance


def test_noise_estimates_of_the_run(runs):
    """The signal stage's torque noise (robust, blind to the model's own content) and the WLS estimate of the white
    noise level from the residual both find the injected torque noise: the first on every run (last seed shown),
    the second on average over the seeds (one low-passed run holds only about N g = N 2 fc / fs independent
    samples: its estimate scatters by some 10 %)."""
    _, fit, injected, white = runs
    stage = np.array(fit.datasets[0].processed.noise.tau_std)
    print(
        "\ninjected",
        np.round(injected, 4),
        "signal stage",
        np.round(stage, 4),
        "WLS white noise, mean over seeds",
        np.round(white.mean(axis=0), 4),
    )
    assert np.allclose(stage, injected, rtol=0.1)
    assert np.allclose(white.mean(axis=0), injected, rtol=0.05)
