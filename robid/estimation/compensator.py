"""Identifiability of gravity compensators (balancers): collinearity, fixing one side, nonlinear refinement.

Arrays only (no files, no robot objects): the caller passes the stacked regressor ``W`` (N, dof, nb), the torque
``tau`` (N, dof), the parameter names, an estimate's covariance, and -- for the nonlinear refinement -- a function
that evaluates one regressor column for given geometry. robid.identification.compensator wires these to an
identification result. Equations: docs/compensator.md.

(a) Collinearity (:func:`collinearity_report`)
    A balancer torque is a function of the joint angle only, like the gravity torque and a constant offset. With
    a known geometry, the spring's stiffness column ``l dl/dq`` is even *exactly* a first harmonic of the joint
    angle: on a robot whose axis-2 balancer is anchored on a body that does not tilt (axis 1 vertical), it is a
    multiple of the gravity column of the first moment ``mx`` of the same joint's row, and only the *dynamic*
    appearances of ``mx`` (coupling and centrifugal terms) separate the two. For every compensator parameter
    ``c`` and its "partners" p (the base parameters of the same joint row that also act at standstill: gravity,
    offset, other balancer parameters) the report gives

    * the pairwise correlation of the estimates ``rho_cp = S_cp / sqrt(S_cc S_pp)``, flagged by name when
      ``|rho_cp| > threshold``;
    * the multiple correlation of ``c`` with all its gravity-related partners P (gravity and offset kinds),
      ``R^2 = 1 - 1 / (S_cc [S_BB^-1]_cc)`` with ``B = {c} u P`` (the squared correlation between the estimate of
      c and its best linear prediction from the estimates of P), flagged when ``R > threshold``. This is the
      k x k generalisation of the pair test: ``c`` can be confounded with a *combination* of gravity terms
      (e.g. ``mx`` and ``my`` of the same link: any first harmonic of the angle) while no single pair exceeds the
      threshold;
    * the well-identified combined quantity: the direction of smallest variance of the covariance block ``S_BB``
      of ``c`` and its collinear partners, normalised so that the balancer parameter has coefficient 1::

          minimise  w^T S_BB w   subject to  w_c = 1    =>   w = S_BB^-1 e_c / [S_BB^-1]_cc,
          var(w^T theta) = 1 / [S_BB^-1]_cc = S_cc (1 - R_B^2)

      i.e. ``c + sum_p b_p p`` with ``b = -S_PP^-1 S_Pc`` (the regression of c on its partners). It is written
      as ``'comp_k_A2 - 9.11*mx_A2 + ...'`` with its value and standard deviation; ``std_ratio =
      sqrt(S_cc) / std(w^T theta) = 1 / sqrt(1 - R_B^2)`` says how much better it is determined than ``c`` alone.
      The partners in B are chosen greedily (largest gain in R first) until ``1 - R_B^2`` is within 25 % of the
      value with every partner, so the expression names the few terms that matter.

(b) Fixing one side (:func:`fix_parameters`)
    A parameter ``theta_i`` held at a datasheet value ``v_i`` moves its column to the torque side:
    ``tau - W_i v_i = W_r theta_r + e``, estimated with the same estimator as the full problem. The report gives,
    for every remaining parameter, the value and standard deviation before and after, and the shift in units of
    its free standard deviation; the sensitivity ``d theta_r / d v_i = -(A_r^T A_r)^-1 A_r^T a_i`` (rows weighted
    by the final per-joint weights) says how the others follow the datasheet value, and a datasheet uncertainty
    ``s_i`` adds ``s_i^2 (d theta_r/d v_i)(d theta_r/d v_i)^T`` to the covariance. The free estimate's distance
    from the datasheet value, in its own standard deviations, says whether data and datasheet agree.

(c) Nonlinear refinement (:func:`refine_nonlinear_compensator`)
    A gas cylinder's column ``A (v0 / (v0 - A (l - l0)))^n dl/dq`` (:func:`gas_cylinder_column`) is linear in the
    pressure p0 but not in the exponent n or the lengths/volumes. Around the linear solution the free geometry
    parameters phi are refined by variable projection: for a given phi the linear parameters (p0 and all
    others) are the weighted least-squares solution ``beta(phi)``, and ``scipy.optimize.least_squares``
    minimises ``|| diag(w) (W(phi) beta(phi) - tau) ||^2`` over phi (bounded). Whether the data separate phi from
    p0 and the rest is checked at the optimum from the full Jacobian ``J = [A(phi), beta_c dA_c/dphi]`` of the
    weighted residual: its numerical rank and scaled condition number, and the standard deviations
    ``Cov = s^2 (J^T J)^-1`` with ``s^2 = ||r||^2 / (M - p)``. Each free parameter is "separable" when J has full
    rank, its condition number is below ``condition_threshold``, the relative standard deviation is below
    ``relative_std_threshold`` and the optimum is not on a bound; otherwise "not separable". The refined
    geometry is adopted only when every free parameter is separable; else the linear solution with the start
    geometry is kept, and the notes say so -- never silently. Note the structural redundancy of the gas law:
    ``p(l) = p0 v0^n / (V - A l)^n`` with ``V = v0 + A l0``, so p0, l0 and v0 enter only through ``p0 v0^n`` and
    ``V``: l0 and v0 can never both be freed (rank deficient, reported not separable).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation.estimators import estimate
from robid.estimation.results import EstimationResult
from robid.estimation.statistics import correlation_matrix, weighted_regressor

#: partner kinds that count as gravity-related (the multiple correlation is taken over these)
GRAVITY_KINDS = ("gravity", "offset")


def _num(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


# ----------------------------------------------------------------------------------------------------- (a)


@dataclass(frozen=True)
class PartnerCorrelation:
    """Correlation of a balancer parameter's estimate with one partner's."""

    name: str
    kind: str  # "gravity" | "offset" | "compensator" | any label the caller gives
    correlation: float
    flagged: bool


@dataclass(frozen=True)
class CombinedQuantity:
    """``sum_i coefficients[i] * theta[names[i]]``, the balancer parameter (first) with coefficient 1."""

    names: tuple[str, ...]
    coefficients: tuple[float, ...]
    value: float
    std: float
    std_alone: float  # standard deviation of the balancer parameter by itself
    multiple_correlation: float  # R of the balancer parameter with the other members

    @property
    def relative_std_percent(self) -> float:
        return 100.0 * self.std / abs(self.value) if self.value != 0 else float("inf")

    @property
    def std_ratio(self) -> float:
        """How many times better the combination is determined than the balancer parameter alone."""
        return self.std_alone / self.std if self.std > 0 else float("inf")

    def expression(self, digits: int = 4) -> str:
        parts = []
        for k, (c, n) in enumerate(zip(self.coefficients, self.names, strict=True)):
            mag = f"{abs(c):.{digits}g}"
            term = n if mag == "1" else f"{mag}*{n}"
            if k == 0:
                parts.append(term if c >= 0 else f"-{term}")
            else:
                parts.append(("+ " if c >= 0 else "- ") + term)
        return " ".join(parts)

    def to_dict(self) -> dict:
        return {
            "expression": self.expression(),
            "names": list(self.names),
            "coefficients": [_num(c) for c in self.coefficients],
            "value": _num(self.value),
            "std": _num(self.std),
            "relative_std_percent": _num(self.relative_std_percent),
            "std_alone": _num(self.std_alone),
            "std_ratio": _num(self.std_ratio),
            "multiple_correlation": _num(self.multiple_correlation),
        }


@dataclass(frozen=True)
class CompensatorCollinearity:
    """Collinearity of one balancer parameter with the gravity-related parameters of its joint."""

    name: str
    joint: str | None
    value: float
    std: float
    partners: tuple[PartnerCorrelation, ...]  # strongest first
    multiple_correlation: float  # with every gravity-related partner (NaN: none)
    static_correlation: float | None  # R of the columns themselves at standstill (caller's, optional)
    flagged_pairs: tuple[str, ...]
    flagged: bool
    group: tuple[str, ...]  # partners in the combined quantity
    combined: CombinedQuantity | None
    threshold: float

    @property
    def relative_std_percent(self) -> float:
        return 100.0 * self.std / abs(self.value) if self.value != 0 else float("inf")

    def summary(self) -> str:
        """One line: what is collinear with what, and the quantity that is well identified."""
        rel = self.relative_std_percent
        head = f"{self.name} = {self.value:.6g} +- {self.std:.3g} ({rel:.3g} %)"
        if not self.flagged:
            best = self.partners[0] if self.partners else None
            tail = f"; strongest partner {best.name} (corr {best.correlation:+.3f})" if best else ""
            return (
                f"{head}: not collinear with the gravity terms of its joint (multiple corr "
                f"{self.multiple_correlation:.3f} <= {self.threshold:g}){tail}"
            )
        why = []
        if self.flagged_pairs:
            why.append(
                ", ".join(
                    f"{p.name} (corr {p.correlation:+.4f})" for p in self.partners if p.name in self.flagged_pairs
                )
            )
        if self.multiple_correlation > self.threshold:
            why.append(f"gravity terms of {self.joint or 'its joint'} together (multiple corr "
                       f"{self.multiple_correlation:.4f})")
        line = f"COLLINEAR {head} with " + "; ".join(why)
        if self.combined is not None:
            c = self.combined
            line += (
                f"; well identified: {c.expression()} = {c.value:.6g} +- {c.std:.3g} "
                f"({c.std_ratio:.3g}x better than {self.name} alone)"
            )
        return line

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "joint": self.joint,
            "value": _num(self.value),
            "std": _num(self.std),
            "relative_std_percent": _num(self.relative_std_percent),
            "flagged": self.flagged,
            "flagged_pairs": list(self.flagged_pairs),
            "multiple_correlation": _num(self.multiple_correlation),
            "static_correlation": None if self.static_correlation is None else _num(self.static_correlation),
            "partners": [
                {"name": p.name, "kind": p.kind, "correlation": _num(p.correlation), "flagged": p.flagged}
                for p in self.partners
            ],
            "group": list(self.group),
            "combined": None if self.combined is None else self.combined.to_dict(),
            "summary": self.summary(),
        }


@dataclass(frozen=True)
class CollinearityReport:
    threshold: float
    entries: tuple[CompensatorCollinearity, ...]
    notes: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return any(e.flagged for e in self.entries)

    def by_name(self, name: str) -> CompensatorCollinearity:
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(name)

    def lines(self) -> list[str]:
        return [e.summary() for e in self.entries]

    def to_dict(self) -> dict:
        return {
            "threshold": self.threshold,
            "flagged": self.flagged,
            "entries": [e.to_dict() for e in self.entries],
            "notes": list(self.notes),
        }


def multiple_correlation(covariance: np.ndarray, target: int, others: Sequence[int]) -> float:
    """R of estimate ``target`` with estimates ``others``: ``R^2 = 1 - 1/(S_cc [S_BB^-1]_cc)``, B = target + others.

    Computed on the correlation block (unit free). 1.0 when the block is singular (exact collinearity), NaN when
    the target's variance is not finite or there are no others.
    """
    others = [int(o) for o in others if int(o) != int(target)]
    if not others:
        return float("nan")
    idx = [int(target)] + others
    block = np.asarray(covariance, dtype=float)[np.ix_(idx, idx)]
    if not np.all(np.isfinite(block)):
        return float("nan")
    rho = correlation_matrix(block)
    if not np.all(np.isfinite(rho)):
        return float("nan")
    try:
        inv00 = np.linalg.solve(rho, np.eye(len(idx))[:, 0])[0]
    except np.linalg.LinAlgError:
        return 1.0
    if not np.isfinite(inv00) or inv00 <= 0:
        return 1.0
    return float(np.sqrt(np.clip(1.0 - 1.0 / inv00, 0.0, 1.0)))


def combined_quantity(
    covariance: np.ndarray, values: np.ndarray, names: Sequence[str], target: int, others: Sequence[int]
) -> CombinedQuantity:
    """Smallest-variance combination of ``target`` and ``others`` with coefficient 1 on ``target``:
    ``w = S^-1 e_c / [S^-1]_cc``, ``var = 1/[S^-1]_cc`` (S = covariance block; solved on the correlation block
    for conditioning and scaled back)."""
    idx = [int(target)] + [int(o) for o in others if int(o) != int(target)]
    cov = np.asarray(covariance, dtype=float)
    block = cov[np.ix_(idx, idx)]
    d = np.sqrt(np.diag(block))
    rho = block / np.outer(d, d)
    u = np.linalg.lstsq(rho, np.eye(len(idx))[:, 0], rcond=1e-14)[0]  # rho^-1 e_0
    w = (u / d) / (u[0] / d[0])  # back to parameter units, coefficient 1 on the target
    var = float(w @ block @ w)
    r = multiple_correlation(cov, idx[0], idx[1:])
    return CombinedQuantity(
        names=tuple(names[i] for i in idx),
        coefficients=tuple(float(x) for x in w),
        value=float(w @ np.asarray(values, dtype=float)[idx]),
        std=float(np.sqrt(max(var, 0.0))),
        std_alone=float(d[0]),
        multiple_correlation=r,
    )


def _greedy_group(covariance: np.ndarray, target: int, candidates: list[int], full_r: float) -> list[int]:
    """Partners in order of the largest gain in multiple correlation, until 1 - R^2 is within 25 % of the full
    group's (at least one partner)."""
    chosen: list[int] = []
    remaining = list(candidates)
    goal = 1.25 * (1.0 - full_r**2)
    while remaining:
        gains = [multiple_correlation(covariance, target, chosen + [c]) for c in remaining]
        best = int(np.nanargmax(np.nan_to_num(gains, nan=-1.0)))
        chosen.append(remaining.pop(best))
        if 1.0 - gains[best] ** 2 <= goal + 1e-15:
            break
    return chosen


def collinearity_report(
    covariance: np.ndarray,
    names: Sequence[str],
    values: np.ndarray,
    partners: Mapping[str, Mapping[str, str]],
    *,
    threshold: float = 0.95,
    joints: Mapping[str, str] | None = None,
    static_correlation: Mapping[str, float] | None = None,
    notes: Sequence[str] = (),
) -> CollinearityReport:
    """Collinearity of every balancer parameter with the gravity-related parameters of its joint.

    ``partners`` maps each balancer parameter name to ``{partner name: kind}``; kinds ``"gravity"`` and
    ``"offset"`` enter the multiple correlation, any other kind (``"compensator"``: the other parameters of the
    same balancer) only the pairwise test. ``joints`` ({balancer parameter: joint name}) and
    ``static_correlation`` ({balancer parameter: R of the columns at standstill}) are carried into the report.
    See the module docstring for the equations; ``threshold`` applies to |pairwise correlation| and to R.
    """
    names = [str(n) for n in names]
    cov = np.asarray(covariance, dtype=float)
    values = np.asarray(values, dtype=float)
    if cov.shape != (len(names), len(names)) or values.shape != (len(names),):
        raise RobidInputError(
            f"collinearity_report: covariance {cov.shape} and values {values.shape} must match {len(names)} names"
        )
    if not 0.0 < threshold < 1.0:
        raise RobidInputError(f"collinearity_report: threshold must lie in (0, 1), got {threshold!r}")
    index = {n: k for k, n in enumerate(names)}
    rho = correlation_matrix(cov)
    entries = []
    for comp, kinds in partners.items():
        if comp not in index:
            raise RobidInputError(f"collinearity_report: {comp!r} is not one of the parameters")
        c = index[comp]
        missing = [p for p in kinds if p not in index]
        if missing:
            raise RobidInputError(f"collinearity_report: partner {missing[0]!r} of {comp} is not a parameter")
        plist = []
        for p, kind in kinds.items():
            r = float(rho[c, index[p]])
            plist.append(PartnerCorrelation(p, str(kind), r, bool(np.isfinite(r) and abs(r) > threshold)))
        plist.sort(key=lambda x: -abs(np.nan_to_num(x.correlation)))
        gravity = [index[p.name] for p in plist if p.kind in GRAVITY_KINDS]
        full_r = multiple_correlation(cov, c, gravity) if gravity else float("nan")
        flagged_pairs = tuple(p.name for p in plist if p.flagged)
        group_flag = bool(np.isfinite(full_r) and full_r > threshold)
        flagged = bool(flagged_pairs) or group_flag
        group: list[int] = []
        if group_flag:
            group = _greedy_group(cov, c, gravity, full_r)
            group += [index[p] for p in flagged_pairs if index[p] not in group]
        elif flagged_pairs:
            group = [index[p] for p in flagged_pairs]
        combined = None
        finite = np.isfinite(cov[c, c]) and cov[c, c] > 0
        if group and finite and all(np.isfinite(cov[g, g]) and cov[g, g] > 0 for g in group):
            combined = combined_quantity(cov, values, names, c, group)
        entries.append(
            CompensatorCollinearity(
                name=comp,
                joint=None if joints is None else joints.get(comp),
                value=float(values[c]),
                std=float(np.sqrt(cov[c, c])) if cov[c, c] >= 0 else float("nan"),
                partners=tuple(plist),
                multiple_correlation=full_r,
                static_correlation=None if static_correlation is None else static_correlation.get(comp),
                flagged_pairs=flagged_pairs,
                flagged=flagged,
                group=tuple(names[g] for g in group),
                combined=combined,
                threshold=threshold,
            )
        )
    all_notes = [
        f"balancer collinearity: flagged when |corr| with a partner > {threshold:g} or the multiple correlation "
        f"with the gravity-related partners (gravity, offset) > {threshold:g}; the combined quantity is the "
        "smallest-variance combination with coefficient 1 on the balancer parameter"
    ] + list(notes)
    return CollinearityReport(threshold, tuple(entries), tuple(all_notes))


# ----------------------------------------------------------------------------------------------------- (b)


@dataclass(frozen=True)
class ParameterChange:
    name: str
    free_value: float
    free_std: float
    value: float  # with the fixed parameters held
    std: float  # with the fixed parameters held (plus the datasheet uncertainty, if given)

    @property
    def shift_in_free_std(self) -> float:
        return (self.value - self.free_value) / self.free_std if self.free_std > 0 else float("inf")

    @property
    def relative_change_percent(self) -> float:
        return 100.0 * (self.value - self.free_value) / abs(self.free_value) if self.free_value else float("inf")


@dataclass(frozen=True, eq=False)
class FixedEstimate:
    """Re-estimate with some parameters held at given (datasheet) values."""

    fixed: dict[str, float]
    fixed_std: dict[str, float]
    free: EstimationResult  # every parameter estimated
    estimate: EstimationResult  # the remaining parameters, fixed columns moved to the torque side
    names: tuple[str, ...]  # remaining parameters
    covariance: np.ndarray  # of the remaining parameters, with the propagated datasheet uncertainty
    sensitivity: dict[str, np.ndarray]  # d theta_r / d v_i
    changes: tuple[ParameterChange, ...]
    notes: tuple[str, ...]

    @property
    def values(self) -> np.ndarray:
        return self.estimate.values

    @property
    def std(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))

    def value(self, name: str) -> float:
        return float(self.estimate.values[self.names.index(name)])

    def change(self, name: str) -> ParameterChange:
        for c in self.changes:
            if c.name == name:
                return c
        raise KeyError(name)

    def full_values(self, names: Sequence[str]) -> np.ndarray:
        """All parameters in the order ``names``: the fixed ones at their values, the others estimated."""
        out = []
        for n in names:
            out.append(self.fixed[n] if n in self.fixed else self.value(n))
        return np.array(out, dtype=float)

    def to_dict(self) -> dict:
        return {
            "fixed": {k: _num(v) for k, v in self.fixed.items()},
            "fixed_std": {k: _num(v) for k, v in self.fixed_std.items()},
            "method": self.estimate.method,
            "changes": [
                {
                    "name": c.name,
                    "free_value": _num(c.free_value),
                    "free_std": _num(c.free_std),
                    "value": _num(c.value),
                    "std": _num(c.std),
                    "shift_in_free_std": _num(c.shift_in_free_std),
                }
                for c in self.changes
            ],
            "notes": list(self.notes),
        }


def fix_parameters(
    W: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str],
    fixed: Mapping[str, float],
    *,
    method: str = "wls",
    fixed_std: Mapping[str, float] | None = None,
    free: EstimationResult | None = None,
    **options,
) -> FixedEstimate:
    """Hold ``fixed`` parameters at the given values and re-estimate the others (module docstring, (b)).

    ``method`` and ``options`` go to :func:`robid.estimation.estimate` for both the free and the fixed problem
    (``free`` may pass an existing full estimate). ``fixed_std`` (datasheet tolerances, one standard deviation)
    is propagated into the covariance of the others.
    """
    W, tau, names = _lsq.check_problem(W, tau, names)
    fixed = {str(k): float(v) for k, v in fixed.items()}
    fixed_std = {str(k): float(v) for k, v in (fixed_std or {}).items()}
    unknown = [k for k in list(fixed) + list(fixed_std) if k not in names]
    if unknown:
        raise RobidInputError(f"fix_parameters: {unknown[0]!r} is not one of the parameters")
    extra = [k for k in fixed_std if k not in fixed]
    if extra:
        raise RobidInputError(f"fix_parameters: a tolerance is given for {extra[0]!r}, which is not held fixed")
    if not fixed:
        raise RobidInputError("fix_parameters: nothing to fix")
    if free is None:
        free = estimate(W, tau, names, method=method, **options)
    idx_fixed = [names.index(k) for k in fixed]
    keep = [k for k in range(len(names)) if k not in idx_fixed]
    v = np.array([fixed[names[i]] for i in idx_fixed])
    tau_r = tau - W[:, :, idx_fixed] @ v
    rest_names = tuple(names[k] for k in keep)
    est = estimate(W[:, :, keep], tau_r, rest_names, method=method, **options)
    # sensitivity of the remaining estimates to each fixed value, with the estimator's final joint weights
    A = weighted_regressor(W[:, :, keep], est.weights)
    sens: dict[str, np.ndarray] = {}
    cov = np.array(est.covariance, dtype=float)
    for i in idx_fixed:
        a = weighted_regressor(W[:, :, [i]], est.weights)[:, 0]
        s = -np.linalg.lstsq(A, a, rcond=None)[0]
        sens[names[i]] = s
        if names[i] in fixed_std:
            cov = cov + fixed_std[names[i]] ** 2 * np.outer(s, s)
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    changes = tuple(
        ParameterChange(
            name=names[k],
            free_value=float(free.values[k]),
            free_std=float(free.std[k]),
            value=float(est.values[m]),
            std=float(std[m]),
        )
        for m, k in enumerate(keep)
    )
    notes = [
        f"held fixed: {', '.join(f'{k} = {val:.6g}' for k, val in fixed.items())}; their columns times the values "
        f"moved to the torque side, the others re-estimated by {est.method}"
    ]
    for i in idx_fixed:
        n = names[i]
        if free.std[i] > 0 and np.isfinite(free.std[i]):
            d = (fixed[n] - free.values[i]) / free.std[i]
            notes.append(
                f"{n}: the free estimate {free.values[i]:.6g} +- {free.std[i]:.3g} is {abs(d):.2g} of its standard "
                f"deviations from the held value {fixed[n]:.6g}"
                + (" (data and datasheet disagree, or the free estimate is confounded)" if abs(d) > 3 else "")
            )
    if fixed_std:
        notes.append("covariance includes the datasheet tolerances: " + ", ".join(
            f"{k} +- {s:.3g}" for k, s in fixed_std.items()))
    return FixedEstimate(
        fixed=fixed,
        fixed_std=fixed_std,
        free=free,
        estimate=est,
        names=rest_names,
        covariance=cov,
        sensitivity=sens,
        changes=changes,
        notes=tuple(notes),
    )


# ----------------------------------------------------------------------------------------------------- (c)


def gas_cylinder_column(
    length: np.ndarray, dlength: np.ndarray, *, area: float, l0: float, v0: float, n: float
) -> np.ndarray:
    """Regressor column of p0 for a gas cylinder: ``A (v0 / (v0 - A (l - l0)))^n dl/dq``.

    With ``F = -p0 A (v0/(v0 - A (l - l0)))^n`` (pulling the anchors together) the motor supplies
    ``tau = -F dl/dq`` (interfaces.md 1.2), which is p0 times this column. ``length`` and ``dlength`` are l(q)
    and dl/dq at the samples (any shape).
    """
    length = np.asarray(length, dtype=float)
    volume = v0 - area * (length - l0)
    if np.any(volume <= 0):
        raise RobidInputError(
            f"gas cylinder: gas volume v0 - A (l - l0) <= 0 at l = {float(np.max(length)):.4g} m "
            f"(v0 = {v0:.4g} m^3, l0 = {l0:.4g} m, A = {area:.4g} m^2)"
        )
    return area * (v0 / volume) ** n * np.asarray(dlength, dtype=float)


@dataclass(frozen=True)
class NonlinearParameter:
    name: str
    start: float
    value: float
    std: float
    bounds: tuple[float, float]
    at_bound: bool
    separable: bool
    reason: str  # why not separable ("" when separable)

    @property
    def relative_std_percent(self) -> float:
        return 100.0 * self.std / abs(self.value) if self.value != 0 else float("inf")

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "start": _num(self.start),
            "value": _num(self.value),
            "std": _num(self.std),
            "relative_std_percent": _num(self.relative_std_percent),
            "bounds": [_num(self.bounds[0]), _num(self.bounds[1])],
            "at_bound": self.at_bound,
            "class": "separable" if self.separable else "not separable",
            "reason": self.reason,
        }


@dataclass(frozen=True, eq=False)
class NonlinearRefinement:
    """Outcome of :func:`refine_nonlinear_compensator`."""

    compensator: str
    parameters: tuple[NonlinearParameter, ...]
    classification: str  # "separable" | "not separable"
    adopted: bool
    names: tuple[str, ...]
    linear: EstimationResult  # linear estimate with the start geometry
    values: np.ndarray  # adopted linear parameters (refined when adopted, else linear.values)
    refined_values: np.ndarray  # linear parameters at the optimum of phi, whatever the class
    geometry: dict[str, float]  # adopted geometry (refined when adopted, else start)
    optimum: dict[str, float]  # phi at the optimum, whatever the class
    cost_start: float  # weighted residual sum of squares at the start geometry
    cost_refined: float
    jacobian_rank: int
    jacobian_columns: int
    jacobian_condition: float  # of the column-scaled Jacobian
    correlations: dict[str, tuple[str, float]]  # strongest correlation of each free parameter with another
    notes: tuple[str, ...]

    def parameter(self, name: str) -> NonlinearParameter:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def to_dict(self) -> dict:
        return {
            "compensator": self.compensator,
            "class": self.classification,
            "adopted": self.adopted,
            "parameters": [p.to_dict() for p in self.parameters],
            "geometry": {k: _num(v) for k, v in self.geometry.items()},
            "optimum": {k: _num(v) for k, v in self.optimum.items()},
            "linear_value": _num(self.linear.values[self.names.index(self.compensator)]),
            "refined_value": _num(self.refined_values[self.names.index(self.compensator)]),
            "cost_start": _num(self.cost_start),
            "cost_refined": _num(self.cost_refined),
            "jacobian_rank": self.jacobian_rank,
            "jacobian_columns": self.jacobian_columns,
            "jacobian_condition": _num(self.jacobian_condition),
            "correlations": {k: {"with": n, "correlation": _num(r)} for k, (n, r) in self.correlations.items()},
            "notes": list(self.notes),
        }


def refine_nonlinear_compensator(
    W: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str],
    compensator: str,
    column: Callable[[Mapping[str, float]], np.ndarray],
    start: Mapping[str, float],
    free: Sequence[str],
    *,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    joint_weights: np.ndarray | None = None,
    relative_std_threshold: float = 10.0,
    condition_threshold: float = 1e6,
    serial_correlation: bool = True,
    max_nfev: int = 200,
) -> NonlinearRefinement:
    """Refine geometry/exponent parameters of a balancer whose column is nonlinear in them (module doc, (c)).

    ``column(geometry)`` returns the (N, dof) regressor column of the linear parameter ``compensator`` (e.g.
    ``comp_p0_A2``) for a full geometry dict (``start`` with the free entries replaced), filtered exactly like
    ``W``. ``W`` holds that column at the start geometry (only its other columns are used). ``joint_weights``
    (1/sigma_j) default to those of a WLS fit at the start geometry. ``bounds`` ({name: (lo, hi)}) default to
    +-50 % around the start value; keep them physical (positive gas volume). ``serial_correlation``: inflate each
    joint's residual variance by :func:`serial_inflation` (needed for low-passed, non-periodic data, whose samples
    are not independent; about 1 for white residuals).
    """
    from scipy.optimize import least_squares

    W, tau, names = _lsq.check_problem(W, tau, names)
    if compensator not in names:
        raise RobidInputError(f"refine: {compensator!r} is not one of the parameters")
    free = tuple(str(f) for f in free)
    if not free:
        raise RobidInputError("refine: no free geometry parameter given")
    for f in free:
        if f not in start:
            raise RobidInputError(f"refine: free parameter {f!r} has no start value")
    start = {k: float(v) for k, v in start.items()}
    n, dof, nb = W.shape
    c = names.index(compensator)
    W0 = np.array(W)
    W0[:, :, c] = _checked_column(column, start, (n, dof))
    linear = estimate(W0, tau, names, method="wls")
    weights = linear.weights if joint_weights is None else np.asarray(joint_weights, dtype=float)
    row_w = np.tile(weights, n)
    y = tau.reshape(-1) * row_w
    A_rest = (W0.reshape(n * dof, nb) * row_w[:, None]).copy()

    x_scale = np.array([abs(start[f]) if start[f] != 0 else 1.0 for f in free])
    lo, hi = [], []
    for k, f in enumerate(free):
        b = (bounds or {}).get(f, (start[f] - 0.5 * x_scale[k], start[f] + 0.5 * x_scale[k]))
        if not b[0] < start[f] < b[1]:
            raise RobidInputError(f"refine: start value of {f} ({start[f]:.6g}) is not inside its bounds {b}")
        lo.append(b[0])
        hi.append(b[1])
    lo, hi = np.array(lo), np.array(hi)

    def geometry(x: np.ndarray) -> dict[str, float]:
        g = dict(start)
        g.update({f: float(v) for f, v in zip(free, x * x_scale, strict=True)})
        return g

    def design(x: np.ndarray) -> np.ndarray:
        A = A_rest.copy()
        A[:, c] = _checked_column(column, geometry(x), (n, dof)).reshape(-1) * row_w
        return A

    def solve(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        A = design(x)
        beta = _scaled_lstsq(A, y)
        return beta, A @ beta - y

    def residual(x: np.ndarray) -> np.ndarray:
        try:
            return solve(x)[1]
        except RobidInputError:  # outside the physical region: a large, smooth-enough penalty
            return np.full(y.shape, 1e6 * (np.linalg.norm(y) + 1.0) / np.sqrt(y.size))

    x0 = np.array([start[f] for f in free]) / x_scale
    cost_start = float(np.sum(solve(x0)[1] ** 2))
    sol = least_squares(residual, x0, bounds=(lo / x_scale, hi / x_scale), method="trf", x_scale=1.0,
                        diff_step=1e-6, max_nfev=max_nfev)
    x = sol.x
    beta, r = solve(x)
    cost = float(np.sum(r**2))
    # full Jacobian of the weighted residual in (beta, phi) at the optimum; phi columns by central differences
    A = design(x)
    Jphi = np.empty((A.shape[0], len(free)))
    for k in range(len(free)):
        h = 1e-6 * max(abs(x[k]), 1.0)
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        Jphi[:, k] = beta[c] * (design(xp)[:, c] - design(xm)[:, c]) / (2 * h * x_scale[k])
    J = np.hstack([A, Jphi])
    norms = np.linalg.norm(J, axis=0)
    norms = np.where(norms == 0, 1.0, norms)
    Js = J / norms
    sv = np.linalg.svd(Js, compute_uv=False)
    tol = sv[0] * max(Js.shape) * np.finfo(float).eps * 1e3
    rank = int(np.sum(sv > tol))
    cond = float(sv[0] / sv[-1]) if sv[-1] > 0 else float("inf")
    m, p = J.shape
    # per-joint variance of the weighted residual, inflated for serial correlation (low-passed data)
    rj = r.reshape(n, dof)
    kappa = serial_inflation(rj) if serial_correlation else np.ones(dof)
    s2 = np.sum(rj**2, axis=0) / max(n - p / dof, 1.0) * kappa
    bread = np.linalg.pinv(Js.T @ Js, rcond=1e-15)
    meat = Js.T @ (Js * np.tile(s2, n)[:, None])
    cov = (bread @ meat @ bread) / np.outer(norms, norms)
    std_all = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    rho = correlation_matrix(cov)
    all_names = list(names) + list(free)
    phi = x * x_scale
    params, corr = [], {}
    for k, f in enumerate(free):
        j = nb + k
        std = float(std_all[j]) if rank == p else float("inf")
        rel = 100.0 * std / abs(phi[k]) if phi[k] != 0 else float("inf")
        span = hi[k] - lo[k]
        at_bound = bool(min(phi[k] - lo[k], hi[k] - phi[k]) < 1e-6 * span)
        others = [i for i in range(p) if i != j]
        best = max(others, key=lambda i: abs(np.nan_to_num(rho[j, i])))
        corr[f] = (all_names[best], float(rho[j, best]))
        reasons = []
        if rank < p:
            reasons.append(f"Jacobian rank {rank} of {p} (structurally not separable)")
        elif cond > condition_threshold:
            reasons.append(f"scaled Jacobian condition number {cond:.3g} > {condition_threshold:g}")
        if rank == p and rel >= relative_std_threshold:
            reasons.append(f"relative std {rel:.3g} % >= {relative_std_threshold:g} %")
        if at_bound:
            reasons.append(f"optimum on the bound [{lo[k]:.6g}, {hi[k]:.6g}]")
        params.append(
            NonlinearParameter(
                name=f,
                start=float(start[f]),
                value=float(phi[k]),
                std=std,
                bounds=(float(lo[k]), float(hi[k])),
                at_bound=at_bound,
                separable=not reasons,
                reason="; ".join(reasons),
            )
        )
    separable = all(pp.separable for pp in params)
    optimum = {f: float(v) for f, v in zip(free, phi, strict=True)}
    notes = [
        f"nonlinear refinement of {', '.join(free)} for {compensator}: variable projection (scipy least_squares, "
        f"{sol.nfev} evaluations, status {sol.status}); weighted residual sum of squares {cost_start:.6g} at the "
        f"start geometry, {cost:.6g} at the optimum"
    ]
    if serial_correlation:
        notes.append(
            "residual variance inflated for serial correlation by "
            + ", ".join(f"{k:.3g}" for k in kappa)
            + " (per joint)"
        )
    if separable:
        notes.append(
            "separable: " + ", ".join(f"{q.name} = {q.value:.6g} +- {q.std:.3g} ({q.relative_std_percent:.3g} %)"
                                      for q in params) + "; the refined geometry is adopted"
        )
        values, geom = beta, geometry(x)
    else:
        notes.append(
            "NOT SEPARABLE: "
            + "; ".join(f"{q.name}: {q.reason}" for q in params if not q.separable)
            + f". The linear solution with the start geometry ({', '.join(f'{f} = {start[f]:.6g}' for f in free)})"
            " is kept; the optimum is reported for information only"
        )
        values, geom = np.array(linear.values), dict(start)
    return NonlinearRefinement(
        compensator=compensator,
        parameters=tuple(params),
        classification="separable" if separable else "not separable",
        adopted=separable,
        names=tuple(names),
        linear=linear,
        values=np.asarray(values, dtype=float),
        refined_values=np.asarray(beta, dtype=float),
        geometry=geom,
        optimum=optimum,
        cost_start=cost_start,
        cost_refined=cost,
        jacobian_rank=rank,
        jacobian_columns=p,
        jacobian_condition=cond,
        correlations=corr,
        notes=tuple(notes),
    )


def serial_inflation(residual: np.ndarray) -> np.ndarray:
    """Per-joint variance inflation for serially correlated residuals, ``kappa_j = 1 + 2 sum_k rho_j(k)``.

    ``rho_j(k)`` is the sample autocorrelation of joint j's residual (N, dof) at lag k, summed up to the first lag
    where it is no longer positive (at most N/4). The variance of a mean (and, to first order, of a least-squares
    estimate) of N correlated samples is kappa times that of N independent ones: a residual low-passed at f_c
    and sampled at f_s has kappa of the order f_s / (2 f_c). At least 1.
    """
    r = np.asarray(residual, dtype=float)
    r = r - r.mean(axis=0)
    n = r.shape[0]
    size = 1 << int(np.ceil(np.log2(2 * n)))
    spec = np.fft.rfft(r, n=size, axis=0)
    acov = np.fft.irfft(np.abs(spec) ** 2, n=size, axis=0)[:n]
    out = np.ones(r.shape[1])
    for j in range(r.shape[1]):
        if acov[0, j] <= 0:
            continue
        rho = acov[1 : n // 4 + 1, j] / acov[0, j]
        stop = np.flatnonzero(rho <= 0)
        k = int(stop[0]) if stop.size else rho.size
        out[j] = max(1.0, 1.0 + 2.0 * float(rho[:k].sum()))
    return out


def _checked_column(column: Callable, geometry: Mapping[str, float], shape: tuple[int, int]) -> np.ndarray:
    col = np.asarray(column(geometry), dtype=float)
    if col.shape != shape:
        raise RobidInputError(f"refine: the column function returned shape {col.shape}, expected {shape}")
    if not np.all(np.isfinite(col)):
        raise RobidInputError("refine: the column function returned non-finite values")
    return col


def _scaled_lstsq(A: np.ndarray, y: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(A, axis=0)
    norms = np.where(norms == 0, 1.0, norms)
    return np.linalg.lstsq(A / norms, y, rcond=None)[0] / norms
