"""Nonlinear joint friction by separable least squares (variable projection): the fit and its prediction on other data.

The problem and result types are in friction_problem.py, the columns in friction_layout.py, the variable projection
in friction_projection.py, the per-joint model selection in friction_model_selection.py; this module re-exports the
types (``from robid.estimation.nonlinear_friction import FrictionProblem`` keeps working).

Model (docs/model.md "Joint friction", docs/estimation.md "Nonlinear friction"). Row J of ``tau = W beta + e``
(the filtered base regressor, rigid layout) carries joint J's friction. With v the friction velocity and s the
sign the Coulomb columns use (robid's expected sign of v given its noise, robid.identification.coulomb):

* ``linear``:   fv v + fc s + f0 -- the base regressor's own columns fv_J, fc_J, f0_J;
* ``stribeck``: fv v + [fc + (fs - fc) exp(-(v/vs)^2)] s + f0 -- linear in (fc, fs) for a given vs: the columns
  s (1 - E) and E = s exp(-(v/vs)^2) take the place of fc_J's s; vs is the nonlinear parameter;
* ``sigmoid``:  fv v + sum_k a_k [l(b_k (v + c_k)) - l(b_k c_k)] + f0, l(x) = 1/(1 + exp(-x)) (Gaz et al. 2019,
  RA-L 4(4), eq. 3; a, b, c are their phi1, phi2, phi3): the amplitudes a_k are linear, slopes b_k and offsets
  c_k nonlinear; the sigmoids replace fc_J;
* ``ripple`` (with any of them): sum_h (frc_h cos(h q) + frs_h sin(h q)) s, linear columns (a position-dependent
  Coulomb level; an additive position term would be the Fourier compensator of docs/compensator.md).

Every new column is a function of the joint states and goes through the same filter as W and tau (parallel
filtering): :class:`FrictionSignals` ``evaluate`` applies it (robid.identification.friction_fit builds it from the
data sets' own ``parallel_filter`` / ``apply_filter``); a row the data selection left out stays zero.

Estimator. For fixed nonlinear parameters theta the problem ``min ||Omega^(1/2) (y - A(theta) beta)||`` is linear;
variable projection (Golub & Pereyra 1973, SIAM J. Numer. Anal. 10(2); review 2003, Inverse Problems 19(2))
minimises the projected residual ``r(theta) = P_perp(A(theta)) y`` over theta alone, with Kaufman's Jacobian
(BIT 15, 1975) ``J = -P_perp (dA/dtheta) beta(theta)``, whose gradient J^T r is exact (A^+ r = 0). The columns of W
that do not depend on theta are factored once. scipy.optimize.least_squares (trust region, bounds) refines the
best point of a grid over each joint's nonlinear parameters (log scale for vs and the slopes). Weights: one per
joint, 1/sigma_j, re-estimated from the residual (as robid's WLS) until they settle.

Uncertainty of all parameters, linear and nonlinear, from the Jacobian at the optimum: the problem linearised
there, ``tau + D theta_hat = A(theta_hat) beta + D theta`` with D = d(A beta)/d(theta), is solved by robid's WLS
(robid.estimation.estimators.wls) with the final weights, whose covariance is ``sigma^2 (J_w^T J_w)^-1`` in the
sandwich form of docs/estimation.md (per-joint residual variances; the filter's known row correlation for
low-passed runs). It assumes the model is right, the noise Gaussian and independent between joints with one level
per joint, and the problem nearly linear over one standard deviation of theta (a nonlinear parameter at its
bound or barely seen by the data has a meaningless std; the result names such parameters).

Per joint J the result gives the residual RMS over the used rows and AIC_J = n_J ln(RSS_J/n_J) + 2 k_J,
BIC_J = n_J ln(RSS_J/n_J) + k_J ln n_J, k_J the number of joint J's friction parameters (the rigid-body parameters
are common to every candidate and left out), n_J its rows times the filter's noise power gain (about the
independent samples in a low-passed run).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.correlated import noise_trace
from robid.estimation.estimators import wls
from robid.estimation.friction_layout import (
    _fixed_columns,
    _joint_parameters,
    _Layout,
    _layout,
    _place,
    _reporting_columns,
    _reporting_values,
    _requests,
    _ripple_function,
    _ripple_rows,
    _sensitivity,
    _varying_columns,
)
from robid.estimation.friction_problem import FRICTION_CANDIDATES as FRICTION_CANDIDATES
from robid.estimation.friction_problem import ColumnFunction as ColumnFunction
from robid.estimation.friction_problem import FrictionProblem, JointFrictionFit, NonlinearFrictionResult
from robid.estimation.friction_problem import FrictionRequest as FrictionRequest
from robid.estimation.friction_problem import FrictionSignals as FrictionSignals
from robid.estimation.friction_projection import _bounds, _weighted_fit, _WeightedFit
from robid.estimation.results import EstimationResult

__all__ = [
    "FRICTION_CANDIDATES",
    "FrictionProblem",
    "FrictionRequest",
    "FrictionSignals",
    "JointFrictionFit",
    "NonlinearFrictionResult",
    "fit_nonlinear_friction",
    "friction_regressor",
    "predict_friction",
]

# ---- the fit -----------------------------------------------------------------------------------------------------


def fit_nonlinear_friction(
    problem: FrictionProblem,
    models: Mapping | Sequence | None = None,
    *,
    noise_std: Sequence[float] | np.ndarray | None = None,
    initial: Mapping[str, float] | None = None,
    max_reweightings: int = 10,
    weight_tol: float = 1e-3,
    max_nfev: int = 200,
    projections: dict | None = None,
    start_weights: np.ndarray | None = None,
) -> NonlinearFrictionResult:
    """Fit the friction ``models`` (joint name or row -> :class:`FrictionRequest` or model name; joints not named
    keep the linear model of W) together with every other base parameter of ``problem`` by variable projection
    (module docstring). ``noise_std`` (per joint): fixed weights 1/noise_std; otherwise 1/sigma_j re-estimated from
    the residual until the relative weights change by less than ``weight_tol`` (at most ``max_reweightings``
    refits). ``initial``: starting values of nonlinear parameters by name (natural units; default: a grid).
    ``max_nfev``: evaluations of the projected residual per least_squares run. ``projections``: a dict shared by
    fits of the same ``problem`` (a model selection), where the factored fixed columns are kept for reuse.
    ``start_weights``: the per-joint weights the re-weighting starts from (default ones), e.g. a similar fit's."""
    requests = _requests(models, problem.joint_names)
    layout = _layout(problem, requests)
    fixed = _fixed_columns(problem, layout)
    notes: list[str] = []
    weights = _initial_weights(noise_std, start_weights, problem.tau.shape[1])
    lo, hi = _bounds(problem, layout) if layout.nonlinear_names else (np.zeros(0), np.zeros(0))
    start = _start_values(initial, layout, lo, hi)
    evaluations, converged, settled, full_rank, message = 0, True, noise_std is not None, True, ""
    x = None
    for _ in range(max_reweightings + 1):
        fit = _weighted_fit(problem, layout, fixed, weights, lo, hi, x, start, max_nfev, projections)
        x, evaluations, full_rank, converged = fit.x, evaluations + fit.evaluations, full_rank and fit.full_rank, fit.ok
        message = fit.message
        if noise_std is not None:
            break
        new = 1.0 / np.maximum(fit.sigma, 1e-12 * max(float(fit.sigma.max()), 1.0))
        ratio = (new / weights) / np.max(new / weights)
        weights = new
        if np.max(np.abs(ratio - 1.0)) < weight_tol:
            settled = True
            break
    if not full_rank:
        notes.append("the fixed columns (W without the replaced Coulomb columns, ripple) are numerically rank "
                     "deficient: least-norm solution")
    if not converged:
        notes.append(f"least_squares did not converge: {message}")
    if not settled:
        notes.append(f"weights still changing after {max_reweightings} re-weightings")
    return _result(problem, layout, fixed, fit, weights, lo, hi, converged and settled, evaluations, notes,
                   noise_std is not None)


def _initial_weights(noise_std, start_weights, dof: int) -> np.ndarray:
    """The per-joint weights of the first fit: 1/noise_std when given (checked), else ``start_weights`` scaled to a
    largest weight of 1, else ones."""
    if noise_std is not None:
        noise = np.asarray(noise_std, dtype=float).reshape(-1)
        if noise.shape != (dof,) or np.any(~np.isfinite(noise)) or np.any(noise <= 0):
            raise RobidInputError(f"friction: noise_std must be {dof} positive finite values, got {noise_std!r}")
        return 1.0 / noise
    if start_weights is not None:
        return np.asarray(start_weights, dtype=float).reshape(dof) / float(np.max(start_weights))
    return np.ones(dof)


def _start_values(initial: Mapping[str, float] | None, layout: _Layout, lo: np.ndarray,
                  hi: np.ndarray) -> np.ndarray | None:
    """The nonlinear parameters' starting values from ``initial`` (by name; the others at the middle of their log
    range), or None (the grid start)."""
    if not initial:
        return None
    unknown = sorted(set(initial) - set(layout.nonlinear_names))
    if unknown:
        raise RobidInputError(f"friction: initial: {', '.join(unknown)} are not nonlinear parameters of this "
                              f"fit ({', '.join(layout.nonlinear_names) or 'none'})")
    mid = np.where(layout.log_scale, np.exp(0.5 * (lo + hi)), 0.0)
    return np.array([initial.get(n, m) for n, m in zip(layout.nonlinear_names, mid, strict=True)], dtype=float)


@dataclass(frozen=True, eq=False)
class _Linearised:
    estimate: EstimationResult
    values: np.ndarray  # the VP optimum in the reporting parameterisation (names of the layout)
    X: np.ndarray  # (N, dof, n_linear + n_nonlinear) sensitivity of the prediction
    prediction: np.ndarray  # (N, dof)

    @property
    def sigma(self) -> np.ndarray:
        return self.estimate.sigma


def _linearised(problem: FrictionProblem, layout: _Layout, fixed, fit: _WeightedFit, weights) -> _Linearised:
    """WLS of the problem linearised at the fit (module docstring) with the given weights, and the fit's values
    (linear part as reported, then the nonlinear values)."""
    p = fit.p
    varying, derivative = _varying_columns(problem, layout, p)
    beta = _reporting_values(layout, fit.beta, fixed.shape[2])
    X = _reporting_columns(layout, fixed, varying)
    prediction = X @ beta
    D = _sensitivity(layout, X, derivative, beta)
    full = np.concatenate([X, D], axis=2)
    target = problem.tau + (D @ p if p.size else 0.0)
    target = np.where(problem.used, target, 0.0)
    est = wls(full, target, layout.names, noise_std=1.0 / weights, correlation=problem.correlation)
    return _Linearised(est, np.concatenate([beta, p]), full, prediction)


def _result(problem, layout, fixed, fit: _WeightedFit, weights, lo, hi, converged, evaluations, notes,
            given) -> NonlinearFrictionResult:
    lin = _linearised(problem, layout, fixed, fit, weights)
    x = fit.x
    est = lin.estimate
    values = lin.values
    std = est.std
    used = problem.used
    residual = np.where(used, problem.tau - lin.prediction, 0.0)
    own: list[str] = []
    at_bound = []
    for i, name in enumerate(layout.nonlinear_names):
        width = hi[i] - lo[i]
        if min(x[i] - lo[i], hi[i] - x[i]) < 1e-3 * max(width, 1e-12):
            at_bound.append(name)
    if at_bound:
        own.append(f"at the bound of the search range (not determined by the data; its std is meaningless): "
                     f"{', '.join(at_bound)}")
    elif x.size:  # an interior optimum is stationary: the linearised problem's Gauss-Newton step is ~0
        gap = np.abs(est.values - values) / np.where(std > 0, std, np.inf)
        if np.any(gap > 0.05):
            worst = int(np.argmax(gap))
            own.append(f"the linearised problem moves {layout.names[worst]} by {gap[worst]:.2g} std from the fit: "
                         "not at a stationary point")
    joints = _joint_figures(problem, layout, residual, used, set(at_bound))
    nonlinear = tuple([False] * len(layout.linear_names) + [True] * len(layout.nonlinear_names))
    weighting = (("per-joint weights 1/noise_std as given" if given else
                  "per-joint weights 1/sigma_j re-estimated from the residual") + "; covariance of all parameters "
                 "from the WLS of the problem linearised at the optimum (sandwich, residual-based noise levels)")
    est_notes = tuple(n for n in est.notes if not n.startswith("WLS: per-joint weights 1/noise_std"))
    return NonlinearFrictionResult(
        names=layout.names, values=_frozen(values), std=_frozen(std), covariance=_frozen(est.covariance),
        nonlinear=nonlinear, joint_names=problem.joint_names, requests=layout.requests, joints=joints,
        residual=_frozen(residual), sigma=_frozen(est.sigma), weights=_frozen(weights), estimate=est,
        converged=bool(converged), evaluations=int(evaluations), notes=(weighting, *notes, *own) + est_notes,
    )


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=float, copy=True)
    a.setflags(write=False)
    return a


def _effective_rows(problem: FrictionProblem, used: np.ndarray) -> np.ndarray:
    if problem.correlation is None or problem.correlation.independent:
        return used.sum(axis=0).astype(float)
    return noise_trace(problem.correlation, used)


def _joint_figures(problem, layout, residual, used, at_bound) -> tuple[JointFrictionFit, ...]:
    rows = used.sum(axis=0)
    eff = _effective_rows(problem, used)
    out = []
    for j, joint in enumerate(problem.joint_names):
        params = _joint_parameters(layout, j)
        rss = float(np.sum(residual[:, j] ** 2))
        n, ne = int(rows[j]), float(eff[j])
        rms = math.sqrt(rss / n) if n else math.nan
        if n and rss > 0 and ne > 1:
            fit = ne * math.log(rss / n)
            aic, bic = fit + 2 * len(params), fit + len(params) * math.log(ne)
        else:
            aic = bic = math.nan
        out.append(JointFrictionFit(joint, layout.requests[j].label, params, n, ne, rms, aic, bic,
                                    tuple(a for a in at_bound if a in params)))
    return tuple(out)


# ---- prediction on other data ------------------------------------------------------------------------------------


def friction_regressor(result: NonlinearFrictionResult, problem: FrictionProblem) -> tuple[np.ndarray, np.ndarray]:
    """(X, S) on another problem of the same robot (a validation run): X (N, dof, n_linear) the regressor of the
    linear parameters at the fitted nonlinear values (prediction = X @ linear values), S (N, dof, n_all) the
    sensitivity of the prediction to every parameter of ``result`` (prediction std = sqrt(s^T C s),
    robid.estimation.prediction_std(S, result.covariance))."""
    layout = _layout(problem, result.requests)
    if layout.names != result.names:
        raise RobidInputError("friction: the problem's base parameters differ from the fit's "
                              f"({len(layout.names)} against {len(result.names)} parameters)")
    fixed = _fixed_columns(problem, layout)
    nl = np.array(result.nonlinear)
    varying, derivative = _varying_columns(problem, layout, result.values[nl])
    X = _reporting_columns(layout, fixed, varying)
    D = _sensitivity(layout, X, derivative, result.values[~nl])
    return X, np.concatenate([X, D], axis=2)


def predict_friction(result: NonlinearFrictionResult, problem: FrictionProblem) -> np.ndarray:
    """(N, dof) torque predicted by ``result`` on ``problem``'s rows (0 on the rows not used): W times the kept
    base values (the dropped Coulomb columns zero) plus the ripple and varying columns times their coefficients in
    the fit's own parameterisation (fs - fc on Stribeck joints) -- the prediction of :func:`friction_regressor`'s
    X without forming it."""
    layout = _layout(problem, result.requests)
    if layout.names != result.names:
        raise RobidInputError("friction: the problem's base parameters differ from the fit's "
                              f"({len(layout.names)} against {len(result.names)} parameters)")
    nl = np.array(result.nonlinear)
    values = np.asarray(result.values, dtype=float)
    linear = values[~nl]
    full = np.zeros(len(problem.names))
    full[list(layout.kept)] = linear[: len(layout.kept)]
    out = problem.W @ full
    nr, nv = len(layout.ripple_names), len(layout.varying_names)
    coefficients = linear[len(layout.kept):].copy()  # ripple, then varying as reported (fs on Stribeck joints)
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            coefficients[nr + c] -= full[j.fc]  # the fit's own parameterisation: fs - fc
        c += len(j.varying_names)
    used = problem.used
    if nr:
        out = out + _place(problem.signals.evaluate(_ripple_function(layout)), _ripple_rows(layout), used) \
            @ coefficients[:nr]
    if nv:
        varying, _ = _varying_columns(problem, layout, values[nl])
        out = out + varying @ coefficients[nr:]
    return np.where(used, out, 0.0)
