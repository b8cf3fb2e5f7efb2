"""The standard parameter set an identified model is exported with.

Identification determines base parameters ``beta = G theta`` only; a URDF, a robot file or a feed-forward program
needs a full standard set ``theta``. The exported set is the physically consistent one (the LMIs of Wensing, Kim
& Slotine, RA-L 2017, :mod:`robid.estimation._sdp`) that minimises

    (G theta - beta)^T Cov^-1 (G theta - beta) + lambda ||diag(w) (theta - theta_nom)||^2

(:func:`robid.estimation.consistent.consistent_from_base`): the fit to the identified base values in the metric
of the estimate's covariance, and a weak prior (``lambda`` = :data:`NOMINAL_PRIOR`) on the robot file's nominal
(CAD) values with ``w_k = 1 / max(|theta_nom,k|, s_k)``, ``s_k`` a floor per kind of parameter (mass, first
moment, inertia, friction, ...). The fit term depends on ``G theta`` only, so among the sets with the same base
values the prior picks the one nearest to the nominal values: the parameters the data do not determine keep their
nominal values as far as the identified combinations allow.

When the identified base values have a consistent standard set (the feasibility check of
:func:`robid.estimation.base_consistency.check_base_consistency`), the optimum is then projected exactly onto
``G theta = beta`` (weighted least-norm correction), if that keeps it consistent, so that the exported model
predicts the identified model's torques to round-off rather than to the prior's pull and the solver's tolerance.
When they have none, the export is the nearest consistent set and its distance from the identified values
(Mahalanobis, in the estimate's covariance) is reported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.base_consistency import check_base_consistency
from robid.estimation.physical_consistency import check_physical_consistency

#: kinds of standard parameters that share one floor of the weights (prefix of the parameter name)
_KINDS = {
    "m": "mass",
    "mx": "first moment",
    "my": "first moment",
    "mz": "first moment",
    "Ixx": "inertia",
    "Ixy": "inertia",
    "Ixz": "inertia",
    "Iyy": "inertia",
    "Iyz": "inertia",
    "Izz": "inertia",
}


@dataclass(frozen=True)
class ExportedStandardSet:
    """The standard set of an export (module docstring).

    ``names``/``values``/``nominal``: the standard parameters in column order. ``base_target``: the base values
    the set reproduces (``beta*``), ``base_mismatch``: ``max_i |G theta - beta|_i / max(|beta_i|, 1e-6 max|beta|)``
    against the identified ``beta`` (round-off when they have a consistent set).
    ``identified_consistent``: whether the identified base values themselves have a consistent standard set
    (``None`` when the check could not be solved); when not, ``mahalanobis`` is the distance of ``beta*`` from
    them in the estimate's covariance and ``moved`` lists (name, identified, exported) of the base values that
    moved by more than their standard deviation (relative 1e-4 without a covariance).
    """

    names: tuple[str, ...]
    values: np.ndarray
    nominal: np.ndarray
    base_names: tuple[str, ...]
    base_identified: np.ndarray
    base_target: np.ndarray
    base_mismatch: float
    identified_consistent: bool | None
    mahalanobis: float | None
    moved: tuple[tuple[str, float, float], ...]
    exported_consistent: bool
    notes: tuple[str, ...] = ()

    def value(self, name: str) -> float:
        return float(self.values[self.names.index(name)])


def nominal_weights(names, nominal) -> np.ndarray:
    """``w_k = 1 / max(|theta_nom,k|, s_k)``: ``s_k`` is 1e-2 of the largest nominal magnitude of the parameter's
    kind (mass, first moment, inertia, or its own prefix: fv, fc, Ia, ...), or 1 when all of that kind are 0."""
    nominal = np.asarray(nominal, dtype=float)
    kinds = [_KINDS.get(n.partition("_")[0], n.partition("_")[0]) for n in names]
    floors = {}
    for kind in set(kinds):
        peak = max((abs(v) for v, k in zip(nominal, kinds, strict=True) if k == kind), default=0.0)
        floors[kind] = 1e-2 * peak if peak > 0 else 1.0
    return np.array([1.0 / max(abs(v), floors[k]) for v, k in zip(nominal, kinds, strict=True)])


def exported_standard_set(
    base_values, grouping, names, nominal, *, base_names=None, covariance=None, solver: str = "CLARABEL",
    consistent_by_construction: bool = False,
) -> ExportedStandardSet:
    """The standard set to export for the identified ``base_values`` (module docstring).

    ``grouping`` (nb, P), ``names`` (P) and ``nominal`` (P) describe the robot's standard set; ``covariance``
    (nb, nb) the estimate's, used for the nearest consistent base values when the identified ones have no
    consistent standard set (without it, a relative scaling is used). ``consistent_by_construction``: the values
    come from the physically consistent estimator (method ``consistent``), so the feasibility check is skipped:
    it is solved to a tolerance, and a consistent estimate sits on the boundary it tests."""
    beta = np.asarray(base_values, dtype=float)
    G = np.asarray(grouping, dtype=float)
    names = tuple(names)
    nominal = np.asarray(nominal, dtype=float)
    nb = beta.shape[0]
    bnames = tuple(base_names) if base_names is not None else tuple(f"beta{i}" for i in range(nb))
    if G.shape != (nb, len(names)) or nominal.shape != (len(names),):
        raise RobidInputError(
            f"export: grouping {G.shape}, {len(names)} names and nominal {nominal.shape} do not match {nb} base values"
        )
    if not np.all(np.isfinite(beta)):
        bad = [n for n, v in zip(bnames, beta, strict=True) if not np.isfinite(v)]
        raise RobidInputError(f"export: base parameter {bad[0]} has no value: nothing to export")
    cov = _usable_covariance(covariance, nb)
    w = nominal_weights(names, nominal)
    identified_consistent, check_notes = consistent_by_construction, ()
    if not consistent_by_construction:
        identified_consistent, check_notes = _identified_consistent(beta, G, names, bnames, solver)
    if identified_consistent:  # the identified values themselves, to the check's tolerance
        values, step_notes = _nearest_to_nominal(beta, G, names, nominal, w, solver)
    else:
        values, step_notes = _nearest_consistent(beta, G, names, nominal, w, cov, solver)
    target = G @ values
    scale = np.maximum(np.abs(beta), 1e-6 * max(float(np.max(np.abs(beta))), 1e-300))
    mismatch = float(np.max(np.abs(G @ values - beta) / scale))
    return ExportedStandardSet(
        names=names,
        values=values,
        nominal=nominal,
        base_names=bnames,
        base_identified=beta,
        base_target=target,
        base_mismatch=mismatch,
        identified_consistent=identified_consistent,
        mahalanobis=_mahalanobis(target - beta, cov) if not identified_consistent else None,
        moved=_moved(bnames, beta, target, cov) if not identified_consistent else (),
        exported_consistent=check_physical_consistency(values, names).consistent,
        notes=(*check_notes, *step_notes),
    )



def _usable_covariance(covariance, nb: int) -> np.ndarray | None:
    """The estimate's covariance when it is (nb, nb) and finite, else None (relative scaling)."""
    if covariance is None:
        return None
    c = np.asarray(covariance, dtype=float)
    if c.shape == (nb, nb) and np.all(np.isfinite(np.diag(c))) and np.all(np.isfinite(c)):
        return c
    return None


def _identified_consistent(beta, G, names, bnames, solver: str) -> tuple[bool, tuple[str, ...]]:
    """Whether the identified base values have a physically consistent standard set, and the check's notes. The
    verdict in relative scaling: in the covariance's metric, moves along badly determined directions cost so little
    that the solver's tolerance leaves them far above the relative tolerance of the verdict."""
    check = check_base_consistency(beta, G, names, base_names=bnames, solver=solver)
    if check.consistent is None:
        raise RobidInputError(f"export: the physical-consistency check could not be solved ({check.status})")
    return check.consistent, tuple(check.notes)

#: weight of the nominal prior against the Mahalanobis fit when the identified base values are not consistent:
#: a 100 % deviation of one parameter from its nominal value costs 1e-3 in chi-square units
NOMINAL_PRIOR = 1e-3


#: weight of the nominal prior against the relative fit when the identified base values have a consistent set:
#: small enough that the fit reaches the feasibility check's tolerance, large enough to fix the free directions
EXACT_FIT_PRIOR = 1e-10


def _nearest_to_nominal(beta, G, names, nominal, w, solver) -> tuple[np.ndarray, tuple[str, ...]]:
    """``min sum_i ((G theta - beta)_i / s_i)^2 + lambda ||diag(w) (theta - theta_nom)||^2`` over the consistent
    sets (``s_i = max(|beta_i|, 1e-6 max|beta|)``, ``lambda`` = :data:`EXACT_FIT_PRIOR`), then the exact
    projection onto ``G theta = beta`` (:func:`_projected`) when it keeps the set consistent.

    A consistent estimate sits on the boundary of the cone, and the feasibility check accepts base values that a
    consistent set reproduces to a relative 1e-4: the equality ``G theta = beta`` itself is often infeasible by
    that much, so it is a heavily weighted fit rather than a constraint. Returns (values, the solve's notes)."""
    import cvxpy as cp

    from robid.estimation._sdp import lmi_constraints, solve
    from robid.estimation.physical_consistency import parameter_layout

    s = np.maximum(np.abs(beta), 1e-6 * max(float(np.max(np.abs(beta))), 1e-300))
    theta = cp.Variable(len(names))
    cons = lmi_constraints(theta, parameter_layout(names), None, None, 0.0)
    objective = cp.sum_squares(cp.multiply(1.0 / s, G @ theta - beta))
    objective = objective + EXACT_FIT_PRIOR * cp.sum_squares(cp.multiply(w, theta - nominal))
    out = solve(objective, cons, theta, solver, "SCS")
    notes = tuple(f"nearest-to-nominal step: {n}" for n in out.notes)
    if not out.solved:
        raise RobidInputError(f"export: no physically consistent set reproduces the base values ({out.status})")
    projected = _projected(out.value, G, beta, w)
    if check_physical_consistency(projected, names).consistent:
        return projected, notes
    return np.asarray(out.value, dtype=float), notes


#: weight of the nominal prior against the Mahalanobis fit when the identified base values are not consistent:
#: a 100 % deviation of one parameter from its nominal value costs 1e-3 in chi-square units
NOMINAL_PRIOR = 1e-3


def _nearest_consistent(beta, G, names, nominal, w, cov, solver) -> tuple[np.ndarray, tuple[str, ...]]:
    """The consistent ``theta1`` nearest to the identified ``beta`` in the covariance's metric
    (relative scaling without one), with a weak prior on the nominal values (:data:`NOMINAL_PRIOR`) that fixes
    the directions the fit leaves free: :func:`robid.estimation.consistent.consistent_from_base`. Returns
    (values, notes)."""
    from robid.estimation.consistent import consistent_from_base

    notes: tuple[str, ...] = ()
    if cov is None:
        s = np.maximum(np.abs(beta), 1e-6 * max(float(np.max(np.abs(beta))), 1e-300))
        cov = np.diag(s**2)
        notes = ("no usable covariance: nearest consistent base values in relative scaling",)
    fit = consistent_from_base(
        beta, cov, G, names, nominal=nominal, regularization=NOMINAL_PRIOR, regularization_weights=w, solver=solver
    )
    if not fit.solved:
        raise RobidInputError(f"export: the nearest physically consistent set could not be solved ({fit.status})")
    return np.asarray(fit.values, dtype=float), notes


def _moved(names, beta, target, cov, rel_tol: float = 1e-4) -> tuple[tuple[str, float, float], ...]:
    """(name, identified, exported) of the base values that moved by more than their standard deviation (with a
    covariance), else by more than ``rel_tol`` relative; largest first."""
    if cov is not None:
        std = np.sqrt(np.maximum(np.diag(cov), 1e-300))
        score, limit = np.abs(target - beta) / std, 1.0
    else:
        s = np.maximum(np.abs(beta), 1e-6 * max(float(np.max(np.abs(beta))), 1e-300))
        score, limit = np.abs(target - beta) / s, rel_tol
    return tuple((names[i], float(beta[i]), float(target[i])) for i in np.argsort(-score) if score[i] > limit)


def _mahalanobis(d: np.ndarray, cov: np.ndarray | None) -> float | None:
    """``sqrt(d^T Cov^-1 d)`` over the base parameters with a finite variance (None without a covariance)."""
    if cov is None:
        return None
    keep = np.isfinite(np.diag(cov))
    c = cov[np.ix_(keep, keep)]
    return float(np.sqrt(max(d[keep] @ np.linalg.solve(0.5 * (c + c.T), d[keep]), 0.0)))


def _projected(theta: np.ndarray, G: np.ndarray, target: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``theta + W^-2 G^T (G W^-2 G^T)^-1 (beta* - G theta)``: the smallest change in the weights' metric that
    makes ``G theta = beta*`` hold to round-off (G has full row rank: base parameters are independent)."""
    winv2 = 1.0 / w**2
    gw = G * winv2
    correction = gw.T @ np.linalg.solve(gw @ G.T, target - G @ theta)
    return theta + correction
