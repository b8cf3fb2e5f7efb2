"""Data selection: standstill segments, the motion segment of a rest-to-rest record, near-zero velocity.

Nothing here deletes data silently: functions return masks and segments, and the processing stage records
what it removed (``ProcessedSignals.keep``, ``standstill``, ``segment``, ``method``).
"""

from __future__ import annotations

import numpy as np

#: Default speed (rad/s or m/s) under which a joint counts as standing still.
STANDSTILL_SPEED = 0.01


def smoothed_speed(t: np.ndarray, q: np.ndarray, window_s: float = 0.05) -> np.ndarray:
    """|qd| per joint (N, dof) from central differences of q, averaged over ``window_s`` (robust to
    encoder quantisation; only used to find segments, never for identification)."""
    qd = np.gradient(q, t, axis=0)
    h = float(np.median(np.diff(t)))
    w = max(1, int(round(window_s / h)))
    if w > 1:
        kernel = np.ones(w) / w
        qd = np.column_stack([np.convolve(qd[:, j], kernel, mode="same") for j in range(q.shape[1])])
    return np.abs(qd)


def standstill_segments(
    t: np.ndarray, qd: np.ndarray, speed: float = STANDSTILL_SPEED, min_duration: float = 0.5
) -> tuple[tuple[float, float], ...]:
    """Time spans of at least ``min_duration`` in which every joint moves slower than ``speed``."""
    still = np.all(np.abs(qd) < speed, axis=1)
    padded = np.concatenate([[False], still, [False]]).astype(np.int8)
    edges = np.diff(padded)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return tuple((float(t[a]), float(t[b])) for a, b in zip(starts, ends, strict=True) if t[b] - t[a] >= min_duration)


def samples_in(t: np.ndarray, segments: tuple[tuple[float, float], ...]) -> np.ndarray:
    mask = np.zeros(t.size, dtype=bool)
    for a, b in segments:
        mask |= (t >= a) & (t <= b)
    return mask


def motion_span(t: np.ndarray, q: np.ndarray, relative: float = 0.02, speed: float = STANDSTILL_SPEED):
    """First and last sample index at which any joint moves: faster than ``relative`` times its own peak
    speed and than ``speed``. None if nothing moves."""
    v = smoothed_speed(t, q)
    peak = np.max(v, axis=0)
    moving_joint = peak > speed
    if not moving_joint.any():
        return None
    threshold = np.maximum(relative * peak, speed)
    moving = np.any((v > threshold)[:, moving_joint], axis=1)
    idx = np.flatnonzero(moving)
    return int(idx[0]), int(idx[-1])


def rest_to_rest_window(t: np.ndarray, q: np.ndarray, margin_fraction: float = 0.25, margin_s: float = 1.0):
    """(first, last) sample indices of a rest-to-rest motion with rest margins on both sides, or None when
    the record does not start and end at rest. The margins are generous -- ``margin_fraction`` of the
    motion's duration and at least ``margin_s`` -- as far as the recorded rest allows, because the slow start
    and end of a smooth motion fall below any speed threshold."""
    span = motion_span(t, q)
    if span is None:
        return None
    a, b = span
    n = t.size
    need = 5
    if a < need or b > n - 1 - need:
        return None
    h = float(np.median(np.diff(t)))
    margin = max(need, int(round(margin_fraction * (b - a))), int(round(margin_s / h)))
    return max(0, a - margin), min(n - 1, b + margin)


def near_zero_velocity(qd: np.ndarray, min_speed: float) -> np.ndarray:
    """(N, dof) True where |qd| >= min_speed: the (sample, joint) rows where Coulomb friction is defined."""
    return np.abs(qd) >= min_speed
