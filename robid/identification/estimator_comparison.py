"""Several estimators on the same identification runs, scored on the validation runs (robid.record.
estimator_comparison; docs/estimation.md "Choosing an estimator").

Every method gets the same data sets; its values predict the drive torque of every validation run through that
run's own filtered regressor (``DataSet.drive_view``), and the NRMSE per joint is 100 RMS(error) / RMS(measured)
over the used rows of all validation runs together. The method with the lowest mean NRMSE over the joints is
chosen. Without validation runs the identification runs are scored and nothing is chosen.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from robid.errors import RobidInputError
from robid.record.codec import finite
from robid.record.estimator_comparison import EstimatorComparison, EstimatorScore


def compare_estimators(joints, methods, values_of: Callable[[str], np.ndarray], datasets, validation_sets
                       ) -> EstimatorComparison:
    """Score ``methods`` (``values_of(method)`` -> base values) on ``validation_sets`` (else ``datasets``)."""
    scored = [d.drive_view() for d in (validation_sets or datasets)]
    rows, means = [], []
    for method in methods:
        try:
            values = np.asarray(values_of(method), dtype=float)
        except RobidInputError as exc:
            rows.append(EstimatorScore(method, tuple(None for _ in joints), None, False, str(exc)))
            means.append(np.inf)
            continue
        nrmse = _nrmse(scored, values)
        mean = float(np.mean(nrmse)) if np.all(np.isfinite(nrmse)) else np.inf
        rows.append(EstimatorScore(method, tuple(finite(x) for x in nrmse), finite(mean), False))
        means.append(mean)
    chosen = None
    if validation_sets and np.isfinite(min(means)):
        best = int(np.argmin(means))
        chosen = methods[best]
        rows[best] = EstimatorScore(rows[best].method, rows[best].nrmse_percent, rows[best].mean_nrmse_percent, True)
    return EstimatorComparison("validation" if validation_sets else "identification", tuple(joints), tuple(rows),
                               chosen)


def _nrmse(datasets, values: np.ndarray) -> np.ndarray:
    err, meas = 0.0, 0.0
    for d in datasets:
        used = np.any(d.W != 0, axis=2) | (d.tau != 0)
        err = err + np.sum(((d.tau - d.W @ values) * used) ** 2, axis=0)
        meas = meas + np.sum((d.tau * used) ** 2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(meas > 0, 100.0 * np.sqrt(err / meas), np.nan)
