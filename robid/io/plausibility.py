"""Checks that a measurement is what it says, made where it meets the robot (docs/security.md, "plausibility").

* Positions far beyond the joint limits (:func:`check_positions`): a joint's positions more than one whole limit
  range outside its limits cannot have been measured on that robot -- most often degrees read as radians, or
  millimetres as metres -- and are refused (an **error**, exit 2). Positions outside the limits by more than
  :data:`OUTSIDE_FRACTION` of the range, but less than that, get a **warning** (a note of the measurement and a
  warning line on stderr): a zero offset of the encoders, or limits of the robot file that are too tight.
* The same run given twice (:func:`check_distinct_runs`): two identification runs with the same content hash
  and the same options are refused (an **error**): stacked, one run would count twice, every standard deviation
  would shrink by 1/sqrt(2) and parameters would be promoted to well-identified on no new data. The same file
  under two names with different options (two time windows of one record) is allowed.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.files import content_hash

_log = logging.getLogger(__name__)

#: positions outside the limits by more than this fraction of the joint's range give a warning
OUTSIDE_FRACTION = 0.02


def check_positions(q: np.ndarray, robot, where: str) -> tuple[str, ...]:
    """Refuse positions more than one limit range beyond a joint's limits, warn (a returned note and a log warning)
    about positions outside them by more than :data:`OUTSIDE_FRACTION` of the range (module docstring). ``robot``:
    a RobotModel (None: no check); joints without finite limits are not checked."""
    if robot is None or q is None or not np.size(q):
        return ()
    q = np.asarray(q, dtype=float)
    warnings = []
    for j, joint in enumerate(robot.joints[: q.shape[1]]):
        limits = getattr(joint.limits, "position", None)
        if limits is None or not all(np.isfinite(limits)):
            continue
        lo, hi = (float(v) for v in limits)
        span = hi - lo
        column = q[:, j][np.isfinite(q[:, j])]
        if span <= 0 or not column.size:
            continue
        low, high = float(column.min()), float(column.max())
        beyond = max(high - hi, lo - low, 0.0)
        unit = "rad" if joint.revolute else "m"
        if beyond > span:
            hint = ("in degrees? Declare the unit (unit: deg) in a mapping file" if joint.revolute else
                    "in mm? Declare the unit (unit: mm) in a mapping file")
            raise RobidInputError(
                f"{where}: joint {joint.name}: positions reach [{low:.4g}, {high:.4g}] {unit}, more than a whole range "
                f"beyond its limits [{lo:.4g}, {hi:.4g}] {unit}: are they {hint} (docs/mapping-file.md)"
            )
        if beyond > OUTSIDE_FRACTION * span:
            text = (f"{where}: joint {joint.name}: positions reach [{low:.4g}, {high:.4g}] {unit}, outside its "
                    f"limits [{lo:.4g}, {hi:.4g}] {unit} by {beyond:.3g} {unit} (an encoder offset, or limits of "
                    "the robot file that are too tight?)")
            warnings.append(text)
    for text in warnings:  # only when no joint was refused
        _log.warning(text)
    return tuple(warnings)


def check_distinct_runs(sources, options_of) -> None:
    """Refuse two runs of ``sources`` (paths, or objects with ``.path``) whose files have the same content and whose
    options (``options_of(source)``: anything with a stable repr) are the same (module docstring)."""
    seen: dict[tuple[str, str], str] = {}
    for source in sources:
        path = Path(getattr(source, "path", source))
        if not path.exists():
            continue  # the reader says so, naming the file
        key = (content_hash(path), repr(options_of(source)))
        if key in seen:
            raise RobidInputError(
                f"{source}: the same run as {seen[key]} (identical content, sha256 {key[0][:12]}..., and options): "
                "stacked twice it would count its samples twice and shrink every standard deviation by 1/sqrt(2); "
                "give each run once"
            )
        seen[key] = str(source)


#: relative tolerance of the covariance checks (rounding of a RESULT.json's decimal numbers)
COVARIANCE_TOLERANCE = 1e-6


def check_covariance(covariance, names, where: str) -> None:
    """Refuse (an **error**) a covariance of the base parameters ``names`` that is not square of their size,
    not symmetric, has a negative variance or is not positive semi-definite (negative eigenvalue of its
    correlation matrix), each to :data:`COVARIANCE_TOLERANCE`; entries that are not available (NaN) are left
    out. A RESULT.json that fails was edited or corrupted: what robid would export from it is meaningless."""
    c = np.asarray(covariance, dtype=float)
    n = len(names)
    if c.shape != (n, n):
        raise RobidInputError(f"{where}: covariance: expected {n} x {n} (one row per base parameter), got {c.shape}")
    diag = np.diag(c)
    bad = np.flatnonzero(np.isfinite(diag) & (diag < 0))
    if bad.size:
        raise RobidInputError(f"{where}: covariance: negative variance of {names[bad[0]]} ({diag[bad[0]]:.6g})")
    scale = np.sqrt(np.abs(np.outer(diag, diag)))
    both = np.isfinite(c) & np.isfinite(c.T) & (scale > 0)
    asym = np.where(both, np.abs(c - c.T) / np.where(scale > 0, scale, 1.0), 0.0)
    if asym.size and asym.max() > COVARIANCE_TOLERANCE:
        i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
        raise RobidInputError(f"{where}: covariance: not symmetric: entry ({names[i]}, {names[j]}) = {c[i, j]:.6g} "
                              f"but ({names[j]}, {names[i]}) = {c[j, i]:.6g}")
    keep = np.flatnonzero(np.all(np.isfinite(c), axis=1) & (diag > 0))
    if keep.size:
        sub = c[np.ix_(keep, keep)]
        d = np.sqrt(np.diag(sub))
        correlation = 0.5 * (sub + sub.T) / np.outer(d, d)
        smallest = float(np.linalg.eigvalsh(correlation)[0])
        if smallest < -COVARIANCE_TOLERANCE:
            raise RobidInputError(f"{where}: covariance: not positive semi-definite (its correlation matrix has the "
                                  f"eigenvalue {smallest:.3g})")
