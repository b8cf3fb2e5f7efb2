"""The automatic cut-off of the non-periodic path (robid.signals.cutoff, docs/signals.md section 7).

References are independent of robid's filtering code: accelerations in closed form (sums of sines) or from the
virtual robot's equations of motion, and the hindsight-best cut-off found by a grid search with scipy's
Butterworth, forward-backward filtering and a 5-point central difference written out here.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from robid.io.measurement_file import read_measurement
from robid.io.screening import ScreeningPolicy
from robid.signals import ProcessingOptions, process
from robid.signals.cutoff import choose_cutoff, zero_phase_response
from robid.signals.noise import residual_variance, robust_white_std


def sines(rate, duration, fmax, noise, seed, dense=False, dof=3):
    """Positions (with white noise) and their exact accelerations: ``dense`` -- 30 incommensurate sines up to
    3 fmax with amplitudes ~ f^-2 (a flat acceleration spectrum up to a sharp edge); else 5 sines up to fmax."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(duration * rate)) / rate
    n = 30 if dense else 5
    f = rng.uniform(0.05, 3 * fmax, (dof, n)) if dense else rng.uniform(0.05 * fmax, fmax, (dof, n))
    a = (0.5 * (0.05 / f) ** 2 * 20 if dense else np.full((dof, n), 0.1)) * rng.uniform(0.3, 1.0, (dof, n))
    arg = 2 * np.pi * f[None] * t[:, None, None] + rng.uniform(0, 2 * np.pi, (dof, n))[None]
    q = (a[None] * np.sin(arg)).sum(axis=2)
    qdd = -(a[None] * (2 * np.pi * f[None]) ** 2 * np.sin(arg)).sum(axis=2)
    return t, q + noise * rng.standard_normal(q.shape), qdd


def five_point(x, h):
    d = np.zeros_like(x)
    d[2:-2] = (x[:-4] - 8 * x[1:-3] + 8 * x[3:-1] - x[4:]) / (12 * h)
    return d


def relative_errors(q, qdd, rate, cutoff, inner):
    """rms error of the processed acceleration on the samples ``inner``, per joint, over the rms acceleration."""
    sos = signal.butter(4, cutoff, fs=rate, output="sos")
    x = signal.sosfiltfilt(sos, q, axis=0)
    a = five_point(five_point(x, 1 / rate), 1 / rate)
    e = (a - qdd)[inner]
    return np.sqrt(np.mean(e**2, axis=0) / np.mean(qdd[inner] ** 2, axis=0))


def hindsight_ratio(t, q, qdd, rate):
    """(chosen cut-off, best cut-off of the grid, ratio of their errors): one cut-off for all joints, error =
    rms over the joints of the relative acceleration errors, on the samples every grid cut-off keeps."""
    span = t[-1] - t[0]
    chosen = choose_cutoff(q, rate, 4, span).cutoff
    grid = np.geomspace(12 / span, 0.4 * rate, 90)
    skip = int(np.ceil(3 * rate / grid[0])) + 4
    inner = slice(skip, t.size - skip)

    def score(fc):
        return float(np.sqrt(np.mean(relative_errors(q, qdd, rate, fc, inner) ** 2)))

    errors = np.array([score(fc) for fc in grid])
    return chosen, float(grid[np.argmin(errors)]), score(chosen) / errors.min()


def test_zero_phase_response_is_the_forward_backward_butterworth():
    rate = 250.0
    for fc, order in ((3.0, 4), (40.0, 2), (100.0, 6)):
        f, h = signal.sosfreqz(signal.butter(order, fc, fs=rate, output="sos"), worN=512, fs=rate)
        assert np.allclose(zero_phase_response(f, fc, rate, order), np.abs(h) ** 2, atol=1e-10)


CASES = [  # rate Hz, duration s, bandwidth Hz, position noise rad, dense spectrum, seed
    (100.0, 60.0, 0.5, 1e-5, False, 0),
    (100.0, 30.0, 2.0, 1e-4, True, 1),
    (250.0, 20.0, 3.0, 1e-4, False, 2),
    (250.0, 20.0, 1.0, 1e-6, True, 3),
    (500.0, 30.0, 1.0, 1e-3, False, 4),
    (1000.0, 10.0, 2.0, 1e-5, False, 5),
    (1000.0, 10.0, 5.0, 1e-6, True, 6),
]


@pytest.mark.parametrize("rate, duration, fmax, noise, dense, seed", CASES)
def test_automatic_cutoff_within_1_3_of_the_best_in_hindsight(rate, duration, fmax, noise, dense, seed):
    t, q, qdd = sines(rate, duration, fmax, noise, seed, dense)
    chosen, best, ratio = hindsight_ratio(t, q, qdd, rate)
    print(
        f"\n{rate:g} Hz, {fmax:g} Hz band, noise {noise:g}: chosen {chosen:.3g} Hz, best {best:.3g} Hz, "
        f"acceleration error ratio {ratio:.3f}"
    )
    assert ratio <= 1.3


def test_positions_interpolated_from_a_slower_cycle():
    """KR300-like record: the controller interpolates an 8 ms cycle to 4 ms, so the spectrum above 62.5 Hz is the
    interpolator's stop band, not the noise floor (the old rule read everything below it as motion)."""
    rng = np.random.default_rng(7)
    t, q, qdd = sines(250.0, 20.0, 1.0, 0.0, 7)
    slow = q[::2] + 2e-5 * rng.standard_normal(q[::2].shape)
    q_meas = np.vstack([np.interp(t, t[::2], slow[:, j]) for j in range(3)]).T + 1e-7 * rng.standard_normal(q.shape)
    chosen, best, ratio = hindsight_ratio(t, q_meas, qdd, 250.0)
    print(f"\ninterpolated 125 -> 250 Hz: chosen {chosen:.3g} Hz, best {best:.3g} Hz, ratio {ratio:.3f}")
    assert ratio <= 1.3 and chosen < 10.0


def test_virtual_robot_record(tmp_path):
    """A closed-loop record of the virtual robot (tracking errors, friction, quantised encoders): accelerations
    from its own equations of motion."""
    import robid
    from robid.simulation import SensorSettings, simulate

    robot = robid.load_robot("tx200_3axis")
    sim = simulate(
        robot.model,
        IncommensurateSines(),
        duration=10.0,
        periods=0.25,
        sensors=SensorSettings.with_noise_level("realistic", rate=500.0),
        seed=3,
    )
    qdd, _ = sim.accelerations()
    chosen, best, ratio = hindsight_ratio(sim.t, sim.measured.q, qdd, 500.0)
    print(f"\nvirtual TX200, 500 Hz: chosen {chosen:.3g} Hz, best {best:.3g} Hz, ratio {ratio:.3f}")
    assert ratio <= 1.3


class IncommensurateSines:
    """q_j(t) = sum_k a_jk sin(2 pi f_jk t + phi_jk): never repeats within the record."""

    period = 40.0
    rest_order = None
    center = np.zeros(3)

    def __init__(self):
        self.f = np.array([[0.13, 0.31 * np.sqrt(2), 0.57], [0.17, 0.23 * np.sqrt(3), 0.61], [0.11, 0.29, 0.53]])
        self.a = np.array([[0.2, 0.1, 0.05], [0.15, 0.1, 0.04], [0.2, 0.08, 0.05]])
        self.phi = np.array([[0.0, 1.0, 2.0], [0.5, 1.5, 2.5], [1.0, 2.0, 3.0]])

    def derivative(self, t, order=0):
        t = np.atleast_1d(np.asarray(t, dtype=float))[:, None, None]
        w = 2 * np.pi * self.f[None]
        return (self.a[None] * w**order * np.sin(w * t + self.phi[None] + order * np.pi / 2)).sum(axis=2)


def test_noise_floor_of_white_noise():
    """The white-equivalent position noise near the cut-off: unbiased, +-25 % per channel from 20 s of data (the
    few spectral bins near a low cut-off are all it can use)."""
    ratios = []
    for seed in (11, 12, 13):
        t, q, _ = sines(250.0, 20.0, 1.0, 3e-5, seed)
        choice = choose_cutoff(q, 250.0, 4, t[-1] - t[0])
        assert choice.moving == (0, 1, 2) and not choice.at_bound
        ratios += [s / 3e-5 for s in choice.noise_std]
    print("\nestimated / injected position noise:", np.round(ratios, 3))
    assert np.all((np.array(ratios) > 0.75) & (np.array(ratios) < 1.3))
    assert abs(np.exp(np.mean(np.log(ratios))) - 1.0) < 0.1


def test_torque_noise_blind_to_coulomb_steps():
    """White noise on a torque with Coulomb steps at velocity reversals: the robust estimate finds the injected
    level; the variance of what a 5 Hz low-pass removes counts the steps as noise."""
    rng = np.random.default_rng(5)
    rate = 250.0
    t = np.arange(5000) / rate
    qd = np.sin(2 * np.pi * 0.4 * t) + 0.5 * np.sin(2 * np.pi * 0.27 * t + 1.0)
    smooth = 30.0 * np.sin(2 * np.pi * 0.3 * t)
    tau = np.column_stack([smooth + 12.0 * np.sign(qd), smooth + 4.0 * np.sign(qd)])
    sigma = np.array([0.5, 0.5])
    noisy = tau + sigma * rng.standard_normal(tau.shape)
    robust = robust_white_std(noisy)
    sos = signal.butter(4, 5.0, fs=rate, output="sos")
    _, h = signal.sosfreqz(sos, worN=4096, fs=rate)
    old = np.sqrt(residual_variance(noisy, signal.sosfiltfilt(sos, noisy, axis=0), np.mean((1 - np.abs(h) ** 4) ** 2)))
    print("\nrobust", robust, "filter residual", old, "injected", sigma)
    assert np.allclose(robust, sigma, rtol=0.1)
    assert old[0] > 1.5 * sigma[0]


def test_the_account_says_what_was_chosen_and_why(tmp_path):
    from robid.signals.records import Measurement

    t, q, _ = sines(250.0, 20.0, 1.0, 1e-5, 12)
    m = Measurement(source="s", t=t, q=q, tau=np.sin(t)[:, None] * np.ones((1, 3)))
    p = process(m, ProcessingOptions(mode="nonperiodic"))
    assert f"cut-off {p.cutoff_hz:.4g} Hz: from the data: the cut-off that minimises the predicted error" in p.method
    assert "predicted rms error of qdd" in p.method
    given = process(m, ProcessingOptions(mode="nonperiodic", cutoff_hz=4.0))
    assert given.cutoff_hz == 4.0 and "cut-off 4 Hz: given; position noise" in given.method


def test_real_records(shared):
    """What the rule picks on the KR300 link positions and the UR10e runs (printed; plausible ranges asserted:
    their motion lies below 1 Hz; the old rule gave 100 Hz on the KR300 and ~10 Hz on the UR10e runs)."""
    from pathlib import Path

    data = shared / "anchors" / "data"
    maps = Path(__file__).resolve().parents[1] / "examples" / "mappings"
    kr = sorted((data / "Robot_Identification" / "data" / "recorded_trajectories").glob("*/data.mat"))
    ur = sorted((data / "dynamic_calibration" / "dataset_ur10e" / "identification_data").glob("ur-20_0*.csv"))
    assert kr and ur
    picks = {}
    for f in kr:
        m = read_measurement(f, mapping=maps / "kuka_kr300.yaml")
        picks["KR300 " + f.parent.name[-6:]] = choose_cutoff(m.q[:, :3], 250.0, 4, m.t[-1] - m.t[0]).cutoff
    for f in ur:
        m = read_measurement(f, mapping=maps / "ur10e_mamedov.yaml", policy=ScreeningPolicy(drop_bad_rows=True))
        p = process(m, ProcessingOptions(mode="nonperiodic"))
        picks["UR10e " + f.stem] = p.cutoff_hz
    for name, fc in picks.items():
        print(f"\n{name}: {fc:.3g} Hz", end="")
    assert all(0.8 < fc < 10.0 for name, fc in picks.items() if name.startswith("KR300"))
    assert all(1.0 < fc < 15.0 for name, fc in picks.items() if name.startswith("UR10e"))


def test_processed_acceleration_noise_and_the_regressor_note():
    """The processed accelerations' noise level (white-equivalent position noise through the filter and the
    differentiator) predicts their actual error; the automatic cut-off keeps it at 2 % of the rms acceleration
    here (no note), a cut-off given too high lets 20 % through and gets the errors-in-variables note."""
    from robid.identification.datasets import _regressor_noise_notes
    from robid.signals.records import Measurement

    t, q, qdd = sines(500.0, 30.0, 1.0, 1e-2, 4)
    m = Measurement(source="s", t=t, q=q, tau=np.ones_like(q))
    p = process(m, ProcessingOptions(mode="nonperiodic"))
    rows = np.searchsorted(t, p.t - 1e-9)  # the kept rows (decimated by default)
    assert np.allclose(t[rows], p.t)
    actual = np.sqrt(np.mean((p.qdd - qdd[rows]) ** 2, axis=0))
    predicted = np.array(p.noise.qdd_std_processed)
    print("\nqdd error actual", np.round(actual, 5), "predicted noise", np.round(predicted, 5))
    assert np.all((predicted > 0.75 * actual) & (predicted < 1.25 * actual))
    assert not _regressor_noise_notes(p)
    notes = _regressor_noise_notes(process(m, ProcessingOptions(mode="nonperiodic", cutoff_hz=12.0)))
    print(notes)
    assert notes and "errors in the regressor" in notes[0]
