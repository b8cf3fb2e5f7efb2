"""The design path: one execution of a known rest-to-rest design, cut where the design says it is.

When the measurement names its design (``ProcessingOptions.design``: its positions over one period, its period
T and its band), the executed period is found by laying the design over the measured positions
(:func:`robid.signals.design_alignment.align_design`, sub-sample start t0), the record is cut to exactly
[t0, t0 + T] (cubic-spline resampling onto t0 + m T/M, m = 0..M, M = round(T/h)) and processed as one period
of length T at the design's harmonics (:func:`robid.signals.single_period.process_single_period`, which
removes the small jump between the ends by its smooth step). Without the design, the single-period path takes
the whole rest-to-rest segment with margins as the period and a band estimated from the data; with it, the
harmonics are the design's own (e.g. 1-12 of 1/30 Hz for the UR10e run 30sec_12harm instead of 399).

A record that does not follow its design (timing slips of the controller, another design) is refused with
the fit per joint rather than cut at the wrong place: the normalised mismatch of the alignment must stay below
:data:`MAX_MISMATCH`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
from scipy.interpolate import CubicSpline

from robid.errors import RobidInputError
from robid.signals.design_alignment import DesignAlignment, DesignSamples, align_design
from robid.signals.path_result import PathResult, format_ranges, format_values
from robid.signals.single_period import process_single_period

if TYPE_CHECKING:
    from robid.signals.processing import ProcessingOptions

#: Largest normalised mismatch J(t0) / sum |q_d - mean q_d|^2 accepted: well-followed UR10e runs give
#: 2e-4..8e-3, runs executed with other timing or another design 0.05 and more.
MAX_MISMATCH = 0.02


def process_design_period(t: np.ndarray, sig: dict, o: ProcessingOptions, where: str) -> tuple[PathResult, list[str]]:
    """Find, cut and process the executed period of ``o.design`` in the uniform-grid record (``t``, ``sig``);
    (the path's result, the account of the alignment and the cut)."""
    design = o.design
    _check_design(design, sig["q"].shape[1], where)
    found = align_design(t, sig["q"], design.times(), design.positions(), where)
    _check_fit(found, design, where)
    h = float(t[1] - t[0])
    m = int(round(design.period / h))
    grid = found.start + np.arange(m + 1) * (design.period / m)
    grid[-1] = min(grid[-1], float(t[-1]))
    splines = {k: CubicSpline(t, v, axis=0) for k, v in sig.items() if v is not None}
    cut = {k: (splines[k](grid) if k in splines else None) for k in sig}
    options = o
    if o.harmonics is None and o.cutoff_hz is None:
        options = dataclasses.replace(o, harmonics=design.harmonics)
    result = process_single_period(grid, cut, (0, m), options, "design", where)
    speeds = np.max(np.abs(splines["q"](grid[[0, -1]], 1)), axis=1)  # fastest joint at either end
    out_of_band = np.sqrt(np.mean((cut["q"][:m] - result.derivs[0]) ** 2, axis=0))
    lines = [
        f"design {design.source}: T = {design.period:g} s, harmonics {format_ranges(design.harmonics)}; executed "
        f"period found at t0 = {found.start:.4f} s ({found.start - t[0]:.4f} s into the record; best whole "
        f"sample {found.coarse_start - t[0]:.3f} s) by least-squares alignment of the measured positions with "
        f"the design; rms of q - q_design per joint {format_values(found.rms)}, mismatch {found.mismatch:.2e}",
        f"cut [t0, t0 + T] = {grid[0]:.4f}-{grid[-1]:.4f} s, resampled onto {m + 1} points (step T/{m}); fastest "
        f"joint at the cut ends {speeds[0]:.3g} and {speeds[1]:.3g}; measured positions outside the kept band "
        f"(rms per joint) {format_values(tuple(out_of_band))}",
    ]
    return dataclasses.replace(
        result, mode="rest-to-rest", period_source="design", onto_grid=lambda x: CubicSpline(t, x, axis=0)(grid[:m])
    ), lines


def _check_design(design: DesignSamples, dof: int, where: str) -> None:
    """A design read back from a file (RESULT.json options) is checked like user input."""
    q = np.asarray(design.q, dtype=float) if design.q and len({len(r) for r in design.q}) == 1 else None
    if q is None or q.shape != (len(design.q), dof) or q.shape[0] < 4 or not np.all(np.isfinite(q)):
        raise RobidInputError(f"{where}: design {design.source}: expected at least 4 samples of {dof} finite positions")
    if not (np.isfinite(design.period) and design.period > 0) or not design.harmonics or min(design.harmonics) < 1:
        raise RobidInputError(f"{where}: design {design.source}: period and harmonics must be positive")


def _check_fit(found: DesignAlignment, design: DesignSamples, where: str) -> None:
    if found.mismatch > MAX_MISMATCH:
        raise RobidInputError(
            f"{where}: the record does not follow the design {design.source}: after the best alignment "
            f"(t0 = {found.start:g} s) the positions differ from it by {format_values(found.rms)} rms per joint "
            f"(mismatch {found.mismatch:.3g}, at most {MAX_MISMATCH:g} accepted); the execution's timing or the "
            "design differs -- process without the design"
        )
