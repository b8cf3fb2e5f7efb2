"""Records of the motions robots make, with their accelerations in closed form, and the plain recipe a peer
would use on them (issue 31; tests/test_signals_families.py, benchmarks/bench_signal_families.py).

Families (each drawn from a seed and a few size parameters):

* ``periodic`` -- a Fourier excitation q = q0 + sum_l a_l/(l w) sin(l w t) - b_l/(l w) cos(l w t) (Swevers et
  al. 1997) of 3-12 harmonics, K = 2..50 periods, possibly stopping mid-period; ``periodic-dense`` the same with
  40-150 harmonics whose amplitudes fall as 1/sqrt(l) (a band that runs into the noise);
* ``rest-to-rest`` -- point-to-point moves between rests, each a minimum-jerk polynomial (Flash & Hogan 1985),
  possibly several with rests between;
* ``single-joint`` -- one joint moves (periodic or point-to-point), the others rest;
* ``static`` -- a hold of 10-15 s (qdd = 0; quantised logs give exactly constant positions);
* any of them with jittered controller time stamps (samples taken at the jittered instants).

Positions carry white encoder noise and, when asked, the rounding of a log written with a fixed number of
decimals. The truth is evaluated in closed form at any time; nothing here calls robid's signal stage except
the uniform grid a jittered record is resampled onto (:func:`robid.signals.resampling.to_uniform_grid`), which
the plain recipe needs as robid does, and robid's automatic cut-off, which defines the plain recipe.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import signal

from robid.signals import Measurement
from robid.signals.cutoff import choose_cutoff
from robid.signals.resampling import to_uniform_grid


@dataclass(frozen=True)
class Fourier:
    """A Fourier series per joint: harmonics ``orders`` of w = 2 pi / period, coefficients a, b (H, dof)."""

    period: float
    orders: np.ndarray
    a: np.ndarray
    b: np.ndarray
    q0: np.ndarray

    def __call__(self, t: np.ndarray, order: int) -> np.ndarray:
        out = np.zeros((t.size, self.a.shape[1])) + (self.q0 if order == 0 else 0.0)
        w = 2.0 * np.pi / self.period
        for i, l in enumerate(self.orders):
            wl = l * w
            phase = wl * t[:, None] + order * np.pi / 2
            out += wl ** (order - 1) * (self.a[i] * np.sin(phase) - self.b[i] * np.cos(phase))
        return out


@dataclass(frozen=True)
class MinimumJerk:
    """Moves from rest to rest: move i goes from ``poses[i]`` to ``poses[i + 1]`` over [starts[i], starts[i] +
    durations[i]] with the minimum-jerk profile s(u) = 10 u^3 - 15 u^4 + 6 u^5; rest elsewhere."""

    poses: np.ndarray
    starts: np.ndarray
    durations: np.ndarray

    def __call__(self, t: np.ndarray, order: int) -> np.ndarray:
        coeffs = [np.array([0, 0, 0, 10, -15, 6], dtype=float)]
        for _ in range(order):
            coeffs.append(np.polynomial.polynomial.polyder(coeffs[-1]))
        out = np.zeros((t.size, self.poses.shape[1])) + (self.poses[0] if order == 0 else 0.0)
        for i, (start, duration) in enumerate(zip(self.starts, self.durations, strict=True)):
            u = np.clip((t - start) / duration, 0.0, 1.0)
            inside = (t > start) & (t < start + duration)
            if order == 0:
                s = np.polynomial.polynomial.polyval(u, coeffs[0])
            else:
                s = np.where(inside, np.polynomial.polynomial.polyval(u, coeffs[order]), 0.0) / duration**order
            out += s[:, None] * (self.poses[i + 1] - self.poses[i])
        return out


@dataclass(frozen=True)
class Record:
    """A drawn record: the measurement, its closed-form motion, its family and what was drawn."""

    family: str
    measurement: Measurement
    motion: object
    rate: float
    noise: float
    step: float
    jitter: bool
    description: str

    def truth(self, t: np.ndarray, order: int = 2) -> np.ndarray:
        return self.motion(np.asarray(t, dtype=float), order)


FAMILIES = ("periodic", "periodic-dense", "rest-to-rest", "single-joint", "static")


def draw(family: str, seed: int, dof: int = 3, max_samples: int = 60_000) -> Record:
    """One record of ``family`` drawn from ``seed``: rate 100 Hz - 5 kHz, encoder noise 1e-6 - 3e-4 rad, a
    third of them logged with 4 or 5 decimals, a quarter with jittered stamps."""
    rng = np.random.default_rng([31, FAMILIES.index(family), seed])
    rate = float(rng.choice([100.0, 250.0, 500.0, 1000.0, 2000.0, 5000.0]))
    noise = float(10.0 ** rng.uniform(-6, -3.5))
    step = float(rng.choice([0.0, 0.0, 1e-4, 1e-5]))
    jitter = bool(rng.random() < 0.25)
    if family in ("periodic", "periodic-dense"):
        motion, span, text = _periodic(rng, dof, rate, max_samples, dense=family == "periodic-dense")
    elif family == "rest-to-rest":
        motion, span, text = _rest_to_rest(rng, dof)
    elif family == "single-joint":
        motion, span, text = _single_joint(rng, dof, rate, max_samples)
    else:
        span = float(rng.uniform(10.0, 15.0))
        motion = MinimumJerk(np.repeat(rng.uniform(-1.5, 1.5, size=(1, dof)), 2, axis=0), np.array([-2.0]),
                             np.array([1.0]))
        text = f"static hold {span:.3g} s"
    rate = min(rate, max_samples / span)
    n = int(np.ceil(span * rate))
    t = np.arange(n) / rate
    if jitter:  # a controller's stamps: steps of 0.6-1.4 h, samples taken at the stamped instants
        t = np.concatenate([[0.0], np.cumsum(rng.uniform(0.6, 1.4, size=n - 1))])
        t *= (n - 1) / rate / t[-1]  # the same span as the uniform stamps: K periods stay K periods
    q = motion(t, 0) + rng.normal(size=(n, dof)) * noise
    if step:
        q = np.round(q / step) * step
    qd, qdd = motion(t, 1), motion(t, 2)
    tau = 2.0 * qdd + 9.81 * np.cos(q) + 0.3 * qd
    tau = tau + rng.normal(size=tau.shape) * 0.02 * (np.std(tau, axis=0) + 0.1)
    m = Measurement(source=f"{family}-{seed}", t=t, q=q, tau=tau)
    text = f"{text}, {rate:g} Hz, noise {noise:.2g} rad" + (f", step {step:g}" if step else "") + (
        ", jittered" if jitter else "")
    return Record(family, m, motion, rate, noise, step, jitter, text)


def _periodic(rng: np.random.Generator, dof: int, rate: float, max_samples: int, dense: bool = False):
    harmonics = int(rng.choice([40, 80, 150] if dense else [3, 5, 6, 8, 12]))
    periods = float(rng.choice([2, 2.6, 3, 4, 4.5, 8, 20, 50]))
    period = float(rng.uniform(1.0, 20.0) if dense else rng.uniform(5.0, 20.0))  # excitation designs: 0.05-0.2 Hz
    # the record within max_samples (draw lowers the rate to fit, not below 100 Hz; fewer periods where it would
    # have to), the band below a tenth of that rate
    rate = max(100.0, min(rate, max_samples / (periods * period)))
    if periods * period * rate > max_samples:
        periods = max(2.0, float(np.floor(max_samples / (period * rate))))
        period = min(period, max_samples / (periods * rate))
    harmonics = max(3, min(harmonics, int(rate * period / 10.0)))
    decay = 1.0 / np.arange(1, harmonics + 1) ** (0.5 if harmonics > 12 else 0.0)
    scale = 0.4 * np.sqrt(6.0 / harmonics)
    a = rng.normal(size=(harmonics, dof)) * scale * decay[:, None]
    b = rng.normal(size=(harmonics, dof)) * scale * decay[:, None]
    motion = Fourier(period, np.arange(1, harmonics + 1), a, b, rng.normal(size=dof))
    return motion, periods * period, f"periodic {harmonics} harmonics of {1 / period:.3g} Hz, {periods:g} periods"


def _rest_to_rest(rng: np.random.Generator, dof: int):
    moves = int(rng.integers(1, 4))
    durations = rng.uniform(1.0, 4.0, size=moves)
    rests = rng.uniform(0.5, 2.0, size=moves + 1)
    starts = rests[0] + np.concatenate([[0.0], np.cumsum(durations[:-1] + rests[1:-1])])
    poses = rng.uniform(-1.5, 1.5, size=(moves + 1, dof))
    span = float(starts[-1] + durations[-1] + rests[-1])
    return MinimumJerk(poses, starts, durations), span, f"rest-to-rest {moves} move(s)"


def _single_joint(rng: np.random.Generator, dof: int, rate: float, max_samples: int):
    joint = int(rng.integers(dof))
    if rng.random() < 0.5:
        motion, span, _ = _periodic(rng, dof, rate, max_samples)
        keep = np.zeros((1, dof))
        keep[0, joint] = 1.0
        motion = Fourier(motion.period, motion.orders, motion.a * keep, motion.b * keep, motion.q0)
        return motion, span, f"single joint {joint + 1} periodic, {span / motion.period:g} periods"
    motion, span, _ = _rest_to_rest(rng, dof)
    poses = np.repeat(motion.poses[:1], motion.poses.shape[0], axis=0)
    poses[:, joint] = motion.poses[:, joint]
    return MinimumJerk(poses, motion.starts, motion.durations), span, f"single joint {joint + 1} rest-to-rest"


def uniform_positions(record: Record) -> tuple[np.ndarray, np.ndarray]:
    """The record's positions on a uniform grid (as robid resamples a jittered log; a uniform log as it is)."""
    m = record.measurement
    grid = to_uniform_grid(m.t - m.t[0], {"q": m.q}, None, resolution=float(np.spacing(np.max(np.abs(m.t)))))
    return grid.t + m.t[0], grid.signals["q"]


def plain_cutoff(t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The automatic cut-off of the plain recipe per joint: robid's rule on the whole record, each joint's own."""
    rate = (t.size - 1) / float(t[-1] - t[0])
    return np.array(choose_cutoff(q, rate, 4, float(t[-1] - t[0])).own_cutoffs)


def butterworth_qdd(t: np.ndarray, q: np.ndarray, cutoff) -> np.ndarray:
    """The plain recipe at ``cutoff`` (one value, or one per column): a zero-phase Butterworth of order 4
    (scipy's sosfiltfilt), then central differences (numpy.gradient) twice."""
    h = float(t[1] - t[0])
    cutoffs = np.broadcast_to(np.asarray(cutoff, dtype=float), (q.shape[1],))
    filtered = np.column_stack(
        [signal.sosfiltfilt(signal.butter(4, fc, fs=1.0 / h, output="sos"), q[:, j]) for j, fc in enumerate(cutoffs)]
    )
    return np.gradient(np.gradient(filtered, h, axis=0), h, axis=0)


def errors(record: Record, p, grid: int = 48) -> dict[str, np.ndarray]:
    """Per joint rms qdd errors of robid's processed signals ``p``, of the plain recipe and of the Butterworth
    of least error in hindsight (a grid of cut-offs from the automatic cut-off's lower bound to 0.45 fs), all on
    the samples that robid's output stands for: its own rows, or every sample of its K periods for an averaged
    period. Joints whose true acceleration is 0 have relative errors against the noise-free plain level."""
    t, q = uniform_positions(record)
    robid = np.sqrt(np.mean((p.qdd - record.truth(p.t)) ** 2, axis=0))
    if p.mode == "periodic" and p.n_periods >= 2:
        a, b = p.segment
        rows = np.flatnonzero((t >= a - 1e-9) & (t <= b + 1e-9))
    else:
        rows = np.searchsorted(t, p.t - 1e-9)
        rows = rows[rows < t.size]
    truth = record.truth(t[rows])
    fc = plain_cutoff(t, q)
    plain = np.sqrt(np.mean((butterworth_qdd(t, q, fc)[rows] - truth) ** 2, axis=0))
    rate = 1.0 / float(t[1] - t[0])
    span = float(t[-1] - t[0])
    lo = max(12.0 / span, 3.0 * rate / max(0.5 * (t.size - 40), 1.0))
    best = np.full(q.shape[1], np.inf)
    for cutoff in np.geomspace(min(lo, fc.min()), 0.45 * rate, grid):
        err = np.sqrt(np.mean((butterworth_qdd(t, q, cutoff)[rows] - truth) ** 2, axis=0))
        best = np.minimum(best, err)
    best = np.minimum(best, plain)
    return {"robid": robid, "plain": plain, "best": best, "cutoff": fc}
