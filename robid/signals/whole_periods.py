"""Where the whole periods of a periodic record lie: the part of the record that repeats with the period T, how
many whole periods fit in it, where they start, and what is left out before and after them (an approach move, a
lead-in, a trailing rest) -- docs/signals.md section 6.

Repeat mismatch of sample n (positions x centred, spline-interpolated at t_n + T):
    e(n) = |x(t_n + T) - x(t_n)|^2 / (2 sum_c var(x_c)),   for every n with t_n + T <= t_last + h/2.
1. Coarse part: the longest run where e, averaged over T/20, stays below 2 % of the variance (robust to noise,
   but at a sharp edge the averaging shrinks the run by up to T/40: a period lost).
2. Edges: the run is widened on each side, by at most T/40 + 5 samples (what the averaging took), over the
   samples where e averaged over 5 samples stays below 2 %.
3. The part: samples a .. b + T/h, where [a, b] is that run (before the run the earlier sample of a pair does
   not repeat: an approach move; after it the later one: a lead-out or trailing rest), or up to the last
   sample when the run reaches the last sample whose partner is in the record. Its length is
   L = (number of samples) x h.
4. K = floor((L + h/2) / T) whole periods: the K-th period may end up to half a step past the part, so a period
   that rounds to a fraction of a step more than the samples hold (a detected 10.0000005 s in a record of
   exactly three 10-s periods) loses nothing.
5. Start: the sample in the slack [a, a + L - K T] that minimises e summed over the block's first K - 1 periods
   (the block that repeats best), so a block of K periods is not pushed into an approach move.
What is left out before and after the periods is accounted for with its time spans (:func:`left_out_account`):
rest (every joint slower than 0.01 rad/s for at least 0.25 s) and motion -- an approach move or lead-in before,
a lead-out after, or repeating motion shorter than a whole period.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from robid.signals import selection

#: The part repeats where the mismatch, averaged over T/20, stays below this fraction of the variance.
COARSE_LEVEL = 0.02
#: Its edges are then widened over samples where the mismatch averaged over this many samples stays below it.
EDGE_SAMPLES = 5
#: Shortest standstill reported as rest in the account of what is left out (s).
REST_DURATION = 0.25


@dataclass(frozen=True)
class PeriodPlacement:
    """K whole periods of ``period`` from sample ``first`` (time ``start``) of the grid.

    ``part`` = (first, last) sample indices of the periodic part; ``fit`` = whole periods that fit in it
    (``n_periods`` <= ``fit``).
    """

    start: float
    first: int
    n_periods: int
    fit: int
    part: tuple[int, int]
    period: float


def repeat_mismatch(t: np.ndarray, x: np.ndarray, period: float) -> np.ndarray:
    """e(n) (module docstring, step 0) for n = 0 .. the last sample whose partner t_n + T lies at most half a
    step past the last sample (the spline extrapolates that far)."""
    z = np.asarray(x, dtype=float) - np.mean(x, axis=0)
    total = 2.0 * float(np.sum(np.var(z, axis=0)))
    h = float(t[1] - t[0])
    count = int(np.count_nonzero(t + period <= t[-1] + 0.5 * h))
    if count == 0 or total <= 0:
        return np.zeros(count)
    shifted = CubicSpline(t, z, axis=0)(t[:count] + period)
    return np.sum((shifted - z[:count]) ** 2, axis=1) / total


def _longest_run(ok: np.ndarray) -> tuple[int, int] | None:
    """(first, last) indices of the longest run of True, or None."""
    if not ok.any():
        return None
    padded = np.concatenate([[False], ok, [False]]).astype(np.int8)
    edges = np.diff(padded)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    k = int(np.argmax(ends - starts))
    return int(starts[k]), int(ends[k] - 1)


def _widened(ok: np.ndarray, a: int, b: int, limit: int) -> tuple[int, int]:
    """Step 2: the run [a, b] widened by at most ``limit`` samples on each side over samples that are ``ok``."""
    for _ in range(limit):
        if a == 0 or not ok[a - 1]:
            break
        a -= 1
    for _ in range(limit):
        if b == ok.size - 1 or not ok[b + 1]:
            break
        b += 1
    return a, b


def periodic_part(t: np.ndarray, x: np.ndarray, period: float, e: np.ndarray | None = None) -> tuple[int, int] | None:
    """(first, last) sample indices of the part of the record that repeats with ``period`` (steps 1-3 of the
    module docstring), or None when nothing repeats. ``e``: the repeat mismatch, when already computed."""
    e = repeat_mismatch(t, x, period) if e is None else e
    if e.size < 2:
        return None
    h = float(t[1] - t[0])
    window = max(1, int(round(period / 20.0 / h)))
    smooth = np.convolve(e, np.ones(window) / window, mode="same")
    run = _longest_run(smooth < COARSE_LEVEL)
    if run is None:
        return None
    fine = np.convolve(e, np.ones(EDGE_SAMPLES) / EDGE_SAMPLES, mode="same") < COARSE_LEVEL
    a, b = _widened(fine, *run, window // 2 + EDGE_SAMPLES)
    last = t.size - 1 if b == e.size - 1 else min(b + int(round(period / h)), t.size - 1)
    return a, last


def place_periods(
    t: np.ndarray, x: np.ndarray, period: float, n_periods: int | None = None, whole_record: bool = False
) -> PeriodPlacement | None:
    """K whole periods of ``period`` in the record (steps 1-5 of the module docstring): all that fit in the
    periodic part, or ``n_periods`` of them (then ``fit`` may be smaller: the caller refuses). With
    ``whole_record`` (a time window chosen by the user) the part is the whole record and the periods start at
    its first sample. None when nothing repeats."""
    h = float(t[1] - t[0])
    e = repeat_mismatch(t, x, period)
    part = (0, t.size - 1) if whole_record else periodic_part(t, x, period, e)
    if part is None:
        return None
    a, last = part
    length = (last - a + 1) * h
    fit = int(np.floor((length + 0.5 * h) / period + 1e-9))
    k = fit if n_periods is None else n_periods
    first = a
    slack = int(np.floor((length - k * period) / h + 1e-9))
    if not whole_record and slack > 0 and k >= 1 and e.size:
        span = max(1, int(round(max(k - 1, 1) * period / h)))
        cum = np.concatenate([[0.0], np.cumsum(e)])
        starts = np.arange(a, a + slack + 1)
        ends = np.minimum(starts + span, e.size)
        inside = starts < e.size
        if inside.any():
            cost = (cum[ends[inside]] - cum[starts[inside]]) / np.maximum(ends[inside] - starts[inside], 1)
            first = int(starts[inside][int(np.argmin(cost))])
    return PeriodPlacement(
        start=float(t[first]), first=first, n_periods=k, fit=fit, part=(a, last), period=float(period)
    )


def left_out_account(t: np.ndarray, q: np.ndarray, place: PeriodPlacement, period: float) -> list[str]:
    """One line per side (before, after the K periods of ``place``) with something left out: its time span and
    samples, split into rest and motion; motion is an approach move or lead-in (before) or a lead-out (after)
    when it does not repeat with the period, else repeating motion shorter than a whole period."""
    h = float(t[1] - t[0])
    end = min(place.first + int(round(place.n_periods * period / h)), t.size)  # one past the last sample used
    spans = (("before", 0, place.first), ("after", end, t.size))
    if all(hi <= lo for _, lo, hi in spans):
        return []
    speed = selection.smoothed_speed(t, q).max(axis=1)
    a, b = place.part
    out = []
    for side, lo, hi in spans:
        if hi <= lo:
            continue
        words = []
        for i0, i1, still in _rest_and_motion(speed[lo:hi], int(round(REST_DURATION / h))):
            i0, i1 = lo + i0, lo + i1
            if still:
                kind = "rest"
            elif a <= i0 and i1 <= b + 1:
                kind = "repeating motion shorter than a whole period"
            else:
                kind = "approach move or lead-in" if side == "before" else "lead-out"
            words.append(f"{kind} {t[i0]:g}-{t[i1 - 1]:g} s")
        out.append(f"left out {side} the periods: {t[lo]:g}-{t[hi - 1]:g} s ({hi - lo} samples): " + ", ".join(words))
    return out


def _rest_and_motion(speed: np.ndarray, min_rest: int) -> list[tuple[int, int, bool]]:
    """[i0, i1) runs of rest (every joint slower than the standstill speed for at least ``min_rest`` samples)
    and of motion (the rest) covering ``speed``."""
    still = speed < selection.STANDSTILL_SPEED
    edges = np.flatnonzero(np.diff(still.astype(np.int8))) + 1
    bounds = np.concatenate([[0], edges, [speed.size]])
    runs: list[tuple[int, int, bool]] = []
    for i0, i1 in zip(bounds[:-1], bounds[1:], strict=True):
        rest = bool(still[i0]) and i1 - i0 >= min(min_rest, speed.size)
        if runs and runs[-1][2] == rest:
            runs[-1] = (runs[-1][0], int(i1), rest)
        else:
            runs.append((int(i0), int(i1), rest))
    return runs
