"""The payload's parameters from its rows: weighted least squares, what the motion determines, the fallback to
mass and centre of mass, uncertainty, physical consistency.

* **Full model**: the ten standard parameters pi_p by robid's WLS (robid.estimation.estimators.wls: per-joint
  weights from the residuals, sandwich covariance, the filter's row correlation when the rows are low-passed).
* **What the motion determines**: for every parameter the variance inflation of its column-scaled, weighted
  column, VIF_j = [(Ys^T Ys)^-1]_jj (Ys with unit-norm columns; 1 for a column orthogonal to the others, inf for
  one in their span). A parameter with VIF_j < ``VIF_LIMIT`` is determined by the trajectory; the condition number
  of the same ten columns is reported (robid.excitation.criteria.condition_number).
* **Mass and COM** (``mass-com``): when an inertia parameter is not determined, or the full estimate is not a
  physically consistent body, only m and h = m c are estimated and the inertia about the COM is taken as zero
  (a point mass, as controllers do when no inertia is given): the inertia columns then carry
  I_O = (|h|^2 E - h h^T) / m, moved to the torque side and updated from the estimate until it settles (a fixed
  point; five passes change the mass by far less than its standard deviation).
* **COM uncertainty**: c = h / m, its covariance J C J^T with J = [-h / m^2, E / m] (first order).
* **Physical consistency**: robid.estimation.physical_consistency.check_link (pseudo-inertia PSD, m > 0, triangle
  inequalities; Wensing, Kim & Slotine, RA-L 2017).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.estimation.estimators import wls
from robid.estimation.physical_consistency import LinkVerdict, check_link
from robid.payload.body import PAYLOAD_PARAMETERS, PayloadBody
from robid.payload.data import PayloadRows

#: variance inflation above which a payload parameter counts as not determined by the motion
VIF_LIMIT = 1.0e4
MODELS = ("auto", "full", "mass-com")
_FIXED_POINT_PASSES = 5


@dataclass(frozen=True, eq=False)
class PayloadEstimate:
    """The identified payload. ``model`` is ``"full"`` (ten parameters) or ``"mass-com"`` (m, h; point-mass
    inertia); ``values`` the ten standard parameters in the flange frame (PAYLOAD_PARAMETERS order) and ``std``
    their standard deviations (NaN where not estimated); ``body`` mass, COM and inertia about the COM;
    ``com_std`` (m); ``determined`` per parameter whether the motion determines it (VIF below VIF_LIMIT),
    ``vif`` the inflations; ``condition_number`` of the ten column-scaled weighted columns; ``sigma`` the residual
    std per joint (N m); ``rows_used``; ``consistency`` the verdict on ``values``; ``mass_by_joint`` the mass
    from each joint's rows alone (mass-com model; None where one joint's rows do not determine m and h), whose
    scatter measures model and drive-gain error that the residual std does not; ``notes``.

    Two uncertainties, labelled wherever they are written: ``mass_std`` and ``com_std`` are the statistical ones
    (the residual noise through the least squares); ``mass_realistic_std`` and ``com_realistic_std`` are what the
    data support once model and drive-gain error count: when the joints' own estimates (``mass_by_joint``) lie
    further apart than 4 of their standard deviations, half the range of the joints' masses and COMs, else the
    statistical std; ``uncertainty_source`` says which, in words."""

    model: str
    names: tuple[str, ...]
    values: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    body: PayloadBody
    mass_std: float
    com_std: tuple[float, float, float]
    determined: tuple[bool, ...]
    vif: tuple[float, ...]
    condition_number: float
    sigma: tuple[float, ...]
    rows_used: int
    reference: str
    consistency: LinkVerdict
    mass_by_joint: tuple[float | None, ...]
    notes: tuple[str, ...]
    mass_realistic_std: float = math.nan
    com_realistic_std: tuple[float, float, float] = (math.nan,) * 3
    uncertainty_source: str = ""

    def uncertainty_line(self) -> str:
        """The mass and COM with both uncertainties, labelled: ``m = 2.4760 kg +- 0.23 kg (realistic: ...;
        statistical +- 0.0034 kg), COM = (x, y, z) mm +- (..) mm realistic (statistical +- (..) mm)``."""
        b = self.body

        def mm(values) -> str:
            return ", ".join(f"{1000 * v:.1f}" for v in values)

        return (f"m = {b.mass:.4f} kg +- {self.mass_realistic_std:.2g} kg realistic ({self.uncertainty_source}; "
                f"statistical +- {self.mass_std:.2g} kg), COM = ({mm(b.com)}) mm +- ({mm(self.com_realistic_std)}) "
                f"mm realistic (statistical +- ({mm(self.com_std)}) mm)")


def variance_inflation(Y: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, float]:
    """VIF per column and the condition number of the column-scaled weighted regressor (module docstring)."""
    a = (Y * weights[None, :, None]).reshape(-1, Y.shape[2])
    norms = np.linalg.norm(a, axis=0)
    live = norms > 0
    vif = np.full(Y.shape[2], np.inf)
    if not live.any():
        return vif, math.inf
    s = a[:, live] / norms[live]
    sv = np.linalg.svd(s, compute_uv=False)
    cond = math.inf if not live.all() or sv[-1] <= sv[0] * 1e-15 else float(sv[0] / sv[-1])
    try:
        inflation = np.diag(np.linalg.inv(s.T @ s))
    except np.linalg.LinAlgError:
        return vif, math.inf
    vif[live] = np.where(np.isfinite(inflation) & (inflation > 0), inflation, np.inf)
    return vif, cond


def estimate_payload(rows: PayloadRows, model: str = "auto") -> PayloadEstimate:
    """The payload of ``rows`` with the chosen ``model`` (``auto``: full when every parameter is determined and
    the full estimate is physically consistent, else mass-com; module docstring)."""
    if model not in MODELS:
        raise RobidOptionError("model", f"expected one of {', '.join(MODELS)}, got {model!r}")
    names = tuple(PAYLOAD_PARAMETERS)
    full = wls(rows.Y, rows.dtau, names, correlation=rows.correlation)
    vif, cond = variance_inflation(rows.Y, full.weights)
    determined = tuple(bool(v < VIF_LIMIT) for v in vif)
    notes = list(rows.notes)
    if model == "full" or (model == "auto" and all(determined)):
        verdict = check_link("payload", full.values)
        if model == "full" or verdict.consistent:
            if not all(determined):
                notes.append("full model requested although the motion does not determine "
                             + ", ".join(n for n, d in zip(names, determined, strict=True) if not d))
            return _result("full", full.values, full.std, full.covariance, full.sigma, rows, determined, vif,
                           cond, notes)
        notes.append("the full estimate is not a physically consistent body (" + "; ".join(verdict.reasons)
                     + "): mass and COM only, point-mass inertia")
    elif model == "auto":
        notes.append("the motion does not determine " + ", ".join(n for n, d in zip(names, determined, strict=True)
                                                                 if not d)
                     + f" (variance inflation >= {VIF_LIMIT:g}): mass and COM only, point-mass inertia")
    return _mass_com(rows, determined, vif, cond, notes)


def _mass_com(rows: PayloadRows, determined, vif, cond, notes) -> PayloadEstimate:
    """m and h with the inertia of a point mass at the COM moved to the torque side (fixed point); the estimate's
    notes are ``notes`` and its own."""
    inertia = np.zeros(6)
    fit = None
    for _ in range(_FIXED_POINT_PASSES):
        target = rows.dtau - rows.Y[:, :, 4:] @ inertia
        fit = wls(rows.Y[:, :, :4], target, PAYLOAD_PARAMETERS[:4], correlation=rows.correlation)
        m, h = float(fit.values[0]), fit.values[1:4]
        if not m > 0:
            raise RobidInputError(f"{rows.source}: the identified payload mass is {m:.4g} kg: the run carries no "
                                  "load the reference does not, or the reference does not match it")
        io = (h @ h * np.eye(3) - np.outer(h, h)) / m
        inertia = np.array([io[0, 0], io[0, 1], io[0, 2], io[1, 1], io[1, 2], io[2, 2]])
    assert fit is not None
    values = np.concatenate([fit.values, inertia])
    std = np.concatenate([fit.std, np.full(6, np.nan)])
    cov = np.full((10, 10), np.nan)
    cov[:4, :4] = fit.covariance
    point_mass = ("inertia not estimated: the payload is taken as a point mass at its COM (inertia about the COM "
                  "zero); the standard deviations of m and the COM are conditional on that")
    return _result("mass-com", values, std, cov, fit.sigma, rows, determined, vif, cond, (*notes, point_mass))


def _result(model, values, std, cov, sigma, rows, determined, vif, cond, notes) -> PayloadEstimate:
    """The estimate's record; its notes are ``notes`` followed by its own."""
    values = np.asarray(values, float)
    own: list[str] = []
    body = PayloadBody.from_standard(values)
    m, h = values[0], values[1:4]
    if m > 0:
        jac = np.hstack([-h[:, None] / m**2, np.eye(3) / m])
        com_cov = jac @ cov[:4, :4] @ jac.T
        com_std = tuple(float(math.sqrt(max(v, 0.0))) for v in np.diag(com_cov))
    else:
        com_std = (math.nan,) * 3
    verdict = check_link("payload", values)
    if not verdict.consistent and model == "full":
        own.append("physical consistency: " + "; ".join(verdict.reasons))
    fits = mass_by_joint(rows, values[4:])
    by_joint = tuple(None if f is None else f[0] for f in fits)
    realistic = _realistic(fits, float(std[0]), com_std, float(values[0]))
    own += realistic[3]
    return PayloadEstimate(
        model=model, names=tuple(PAYLOAD_PARAMETERS), values=values, std=np.asarray(std, float),
        covariance=np.asarray(cov, float), body=body, mass_std=float(std[0]), com_std=com_std,
        determined=tuple(determined), vif=tuple(float(v) for v in vif), condition_number=float(cond),
        sigma=tuple(float(s) for s in sigma), rows_used=int(rows.keep.sum()), reference=rows.reference,
        consistency=verdict, mass_by_joint=by_joint, notes=(*notes, *own), mass_realistic_std=realistic[0],
        com_realistic_std=realistic[1], uncertainty_source=realistic[2])


def _realistic(fits, mass_std: float, com_std, mass: float):
    """(realistic mass std, realistic COM std, its source in words, notes) from the joints' own estimates ``fits``
    (PayloadEstimate docstring); a note when model error dominates the statistical std."""
    found = [f for f in fits if f is not None]
    worst = max((abs(f[0] - mass) / f[1] for f in found if f[1] > 0), default=0.0)
    if len(found) < 2 or worst <= 4.0:
        why = "the joints' own estimates agree within 4 std" if len(found) >= 2 else "one joint determines m"
        return mass_std, tuple(com_std), f"statistical: {why}", ()
    masses = [f[0] for f in found]
    coms = np.array([f[2] for f in found])
    lo, hi = min(masses), max(masses)
    half = (hi - lo) / 2
    com_half = tuple(float(max(s, (np.max(c) - np.min(c)) / 2)) for s, c in zip(com_std, coms.T, strict=True))
    note = (f"the joints' own mass estimates range over {lo:.4g}..{hi:.4g} kg, up to {worst:.3g} of their "
            f"standard deviations from the joint estimate: model or drive-gain error dominates the "
            f"statistical std {mass_std:.2g} kg; take half that range, {half:.2g} kg, as the mass's "
            "uncertainty")
    source = f"half the range of {len(found)} joints' own estimates, {lo:.4g}..{hi:.4g} kg"
    return max(half, mass_std), com_half, source, (note,)


def mass_by_joint(rows: PayloadRows, inertia: np.ndarray) -> tuple[tuple[float, float, np.ndarray] | None, ...]:
    """Per joint, (m, std of m, COM h / m) from that joint's rows alone (m, h by least squares, the inertia part
    held at ``inertia``, std from the joint's residual); None where the joint has fewer than 20 rows or its rows do
    not determine m and h (variance inflation)."""
    out: list[tuple[float, float, np.ndarray] | None] = []
    for j in range(rows.Y.shape[1]):
        keep = np.zeros_like(rows.keep)
        keep[:, j] = rows.keep[:, j]
        if keep.sum() < 20:
            out.append(None)
            continue
        y = rows.Y[:, :, :4] * keep[:, :, None]
        vif, _ = variance_inflation(y, np.ones(rows.Y.shape[1]))
        if not np.all(vif < VIF_LIMIT):
            out.append(None)
            continue
        target = (rows.dtau - rows.Y[:, :, 4:] @ inertia) * keep
        a, b = y[keep[:, j], j, :], target[keep[:, j], j]
        x = np.linalg.lstsq(a, b, rcond=None)[0]
        s2 = float(np.sum((b - a @ x) ** 2)) / max(len(b) - 4, 1)
        com = x[1:4] / x[0] if x[0] != 0 else np.full(3, np.nan)
        out.append((float(x[0]), float(np.sqrt(s2 * np.linalg.inv(a.T @ a)[0, 0])), com))
    return tuple(out)
