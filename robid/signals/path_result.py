"""What each processing path (periodic, single period, non-periodic) hands back to :func:`robid.signals.process`,
and the wording its account (``ProcessedSignals.method``) shares: per-joint values and harmonic sets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from robid.signals.records import NoiseEstimate, RowNoise

#: Fewest samples any path works on (after the time window, resampling, or in the motion segment).
MIN_SAMPLES = 32


@dataclass(frozen=True)
class PathResult:
    """The processed signals of one path on its grid ``t``.

    ``derivs`` holds q and its derivatives up to the requested order, ``theta`` the motor positions and their
    first two derivatives. ``lines`` are the path's own lines of the account, which ``process`` puts after
    the data-selection lines (the periodic path writes its lines straight into the shared account instead).
    """

    t: np.ndarray
    derivs: list[np.ndarray]
    tau: np.ndarray
    theta: list[np.ndarray] | None
    noise: NoiseEstimate
    apply_filter: Callable[[np.ndarray], np.ndarray]
    mode: str
    rate: float
    lines: list[str] = field(default_factory=list)
    period: float | None = None
    period_source: str | None = None
    n_periods: int = 0
    harmonics: tuple[int, ...] | None = None
    cutoff: float | None = None
    segment: tuple[float, float] | None = None
    trimmed: tuple[int, int] = (0, 0)
    rejected: tuple[int, ...] = ()
    row_noise: RowNoise | None = None
    parallel_filter: Callable[[Callable[..., np.ndarray]], np.ndarray] | None = None
    #: the processed rows are every ``decimation``-th sample of the filtered record (non-periodic path)
    decimation: int = 1
    #: per joint, the path's predicted rms error of qdd (its band's risk where it chose the band, else the noise
    #: it lets through), for the guard (robid.signals.guard)
    predicted_qdd_error: tuple[float, ...] | None = None
    #: a signal on the whole uniform grid (N, C) carried onto this path's grid as the path carries the positions
    #: (its samples, window, decimation; the K periods cut and averaged), for the guard
    onto_grid: Callable[[np.ndarray], np.ndarray] | None = None
    #: the whole record's q, qd, qdd that ``parallel_filter`` evaluates functions of the states on (non-periodic
    #: path); the guard writes the plain recipe's into the joints it takes it for, so the regressor follows
    whole_states: list[np.ndarray] | None = None


def format_values(values: tuple[float, ...]) -> str:
    """``[0.012, 0.0034]``: per-joint values to three significant digits."""
    return "[" + ", ".join(f"{v:.3g}" for v in values) + "]"


def format_ranges(h: tuple[int, ...]) -> str:
    """``1-5, 7, 9-10``: a sorted set of harmonics as runs."""
    if not h:
        return "none"
    out, start, prev = [], h[0], h[0]
    for x in h[1:]:
        if x == prev + 1:
            prev = x
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = x
    out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)


def kept_harmonics(mask: np.ndarray) -> tuple[int, ...]:
    """The harmonics h >= 1 set in a DFT mask (DC left out)."""
    return tuple(int(x) for x in np.flatnonzero(mask[1:]) + 1)
