"""Torque fit metrics per joint and prediction bands, for identification data and held-out validation runs.

Per joint j with error ``e = tau_meas - tau_pred`` over the N samples (over the used samples only when a mask
of the rows the data selection kept is given):

* ``rms = sqrt(mean(e^2))`` (N m, or N for prismatic joints);
* ``nrmse_percent = 100 rms(e) / rms(tau_meas)`` (percent of the measured RMS; equal to the per-joint relative
  error norm ``100 ||e|| / ||tau_meas||``, Mamedov's RRE);
* ``max_error = max |e|``.

Over all joints: ``relative_error_norm_percent = 100 ||E||_F / ||T||_F`` (dominated by the large joints).
The per-sample relative error used in some theses (``RMS((T - T_pred)/T)``) is deliberately not offered: it is
undefined where the torque crosses zero (Assadi notes §5.3 item 11).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.results import EstimationResult

K95 = 1.959963984540054  # two-sided 95 % quantile of the normal distribution


@dataclass(frozen=True)
class JointMetrics:
    joint: str
    rms: float
    nrmse_percent: float
    max_error: float
    measured_rms: float


@dataclass(frozen=True)
class TorqueMetrics:
    per_joint: tuple[JointMetrics, ...]
    relative_error_norm_percent: float
    samples: int


def torque_metrics(
    measured: np.ndarray,
    predicted: np.ndarray,
    joint_names: Sequence[str] | None = None,
    used: np.ndarray | None = None,
) -> TorqueMetrics:
    """Per-joint RMS, NRMSE, max error and the overall relative error norm (definitions in the module doc).

    ``used`` (N, dof) bool: the rows the data selection kept; the others count in no statistic (without it,
    every row counts)."""
    T = np.asarray(measured, dtype=float)
    P = np.asarray(predicted, dtype=float)
    if T.ndim != 2 or T.shape != P.shape:
        raise RobidInputError(f"metrics: measured {T.shape} and predicted {P.shape} must both be (N, dof)")
    dof = T.shape[1]
    names = list(joint_names) if joint_names is not None else [str(j + 1) for j in range(dof)]
    if len(names) != dof:
        raise RobidInputError(f"metrics: {len(names)} joint names for {dof} columns")
    mask = np.ones(T.shape, dtype=bool) if used is None else np.asarray(used, dtype=bool)
    E = np.where(mask, T - P, 0.0)
    T = np.where(mask, T, 0.0)
    count = np.maximum(mask.sum(axis=0), 1)
    rms = np.sqrt(np.sum(E**2, axis=0) / count)
    mrms = np.sqrt(np.sum(T**2, axis=0) / count)
    with np.errstate(divide="ignore", invalid="ignore"):
        nrmse = np.where(mrms > 0, 100.0 * rms / mrms, np.inf)
    per = tuple(
        JointMetrics(names[j], float(rms[j]), float(nrmse[j]), float(np.max(np.abs(E[:, j]))), float(mrms[j]))
        for j in range(dof)
    )
    tn = np.linalg.norm(T)
    ren = float(100.0 * np.linalg.norm(E) / tn) if tn > 0 else float("inf")
    return TorqueMetrics(per, ren, T.shape[0])


@dataclass(frozen=True)
class PredictionBands:
    """Predicted torque with standard deviations, each (N, dof).

    ``std_model[n, j] = sqrt(w_nj^T Cov w_nj)`` (parameter uncertainty, ``w_nj`` the regressor row);
    ``std_total = sqrt(std_model^2 + sigma_j^2)`` adds the residual noise of joint j: the band a new
    measurement is expected to fall in (about 95 % within ``mean +- 1.96 std_total`` for Gaussian errors).
    """

    mean: np.ndarray
    std_model: np.ndarray
    std_total: np.ndarray

    def interval(self, k: float = K95, total: bool = True) -> tuple[np.ndarray, np.ndarray]:
        s = self.std_total if total else self.std_model
        return self.mean - k * s, self.mean + k * s


def predict(W: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``tau_pred[n] = W[n] @ values``; W (N, dof, nb)."""
    return np.asarray(W, dtype=float) @ np.asarray(values, dtype=float)


def prediction_std(W: np.ndarray, covariance: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """``std_model[n, j] = sqrt(w_nj^T Cov w_nj)`` (N, dof) for regressor W (N, dof, nb), ``chunk`` samples at
    a time so that memory stays at a few times ``chunk * dof * nb`` numbers whatever N is.

    A parameter with an infinite (or undefined) variance -- a column the data never excited -- adds nothing where
    its column is zero and makes the std infinite where it is not."""
    W = np.asarray(W)
    cov = np.asarray(covariance, dtype=float)
    unknown = ~np.isfinite(np.diag(cov))
    cov = np.where(unknown[:, None] | unknown[None, :] | ~np.isfinite(cov), 0.0, cov)
    out = np.empty(W.shape[:2])
    for start in range(0, W.shape[0], chunk):
        block = np.asarray(W[start : start + chunk], dtype=float)
        spread = (block.reshape(-1, block.shape[2]) @ cov).reshape(block.shape)  # one GEMM, not one per sample
        std = np.sqrt(np.clip(np.sum(spread * block, axis=2), 0.0, None))
        if unknown.any():
            std[np.any(block[:, :, unknown] != 0.0, axis=2)] = np.inf
        out[start : start + chunk] = std
    return out


def band_coverage(measured: np.ndarray, lower: np.ndarray, upper: np.ndarray, used: np.ndarray) -> np.ndarray:
    """Per joint, percent of the used samples whose measured torque lies inside [lower, upper]."""
    inside = (measured >= lower) & (measured <= upper) & used
    return 100.0 * inside.sum(axis=0) / np.maximum(used.sum(axis=0), 1)


def prediction_bands(
    W: np.ndarray,
    result: EstimationResult | None = None,
    *,
    values: np.ndarray | None = None,
    covariance: np.ndarray | None = None,
    sigma: np.ndarray | None = None,
) -> PredictionBands:
    """Prediction and its bands for regressor W (N, dof, nb), from a result or explicit values/covariance/sigma."""
    if result is not None:
        values = result.values if values is None else values
        covariance = result.covariance if covariance is None else covariance
        sigma = result.sigma if sigma is None else sigma
    if values is None or covariance is None:
        raise RobidInputError("prediction_bands: need a result or values and covariance")
    W = np.asarray(W, dtype=float)
    mean = predict(W, values)
    std_model = prediction_std(W, covariance)
    noise = np.zeros(W.shape[1]) if sigma is None else np.asarray(sigma, dtype=float)
    std_total = np.sqrt(std_model**2 + noise[None, :] ** 2)
    return PredictionBands(mean, std_model, std_total)
