"""Per-joint choice of a friction model (docs/estimation.md "Nonlinear friction", "Model selection"): every
candidate fitted on one joint with the others linear (robid.estimation.nonlinear_friction), chosen by the
held-out error when validation problems are given, else by BIC; then the chosen models fitted together."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.friction_screening import screen_candidate
from robid.estimation.nonlinear_friction import (
    FRICTION_CANDIDATES,
    FrictionProblem,
    FrictionRequest,
    JointFrictionFit,
    NonlinearFrictionResult,
    fit_nonlinear_friction,
    predict_friction,
)

__all__ = ["FrictionCandidate", "FrictionSelection", "select_friction_models"]


@dataclass(frozen=True)
class FrictionCandidate:
    """One joint with one candidate model (the other joints linear): its identification figures
    (:class:`JointFrictionFit`), the held-out residual RMS of that joint over the validation problems (None
    without them), and the joint's friction parameters (name, value, std)."""

    joint: str
    model: str
    fit: JointFrictionFit
    validation_rms: float | None
    parameters: tuple[tuple[str, float, float], ...]
    converged: bool

    @property
    def n_parameters(self) -> int:
        return self.fit.n_parameters


@dataclass(frozen=True, eq=False)
class FrictionSelection:
    """Per joint the chosen model and why: ``criterion`` "validation" (lowest held-out RMS, a more complex model
    only when it beats the simpler one by more than ``tolerance`` relative) or "bic" (lowest BIC, more parameters
    only when lower by more than BIC_MARGIN); every
    candidate's figures in ``candidates`` (joint by joint, in the order compared); ``final`` the fit with the
    chosen models together; ``notes`` the candidates that could not be fitted, and why."""

    joint_names: tuple[str, ...]
    chosen: tuple[str, ...]
    criterion: str
    tolerance: float
    candidates: tuple[FrictionCandidate, ...]
    final: NonlinearFrictionResult
    notes: tuple[str, ...] = ()

    def of(self, joint: str) -> tuple[FrictionCandidate, ...]:
        return tuple(c for c in self.candidates if c.joint == joint)

    def table(self) -> str:
        """A plain-text table of every candidate (one line each)."""
        lines = [f"{'joint':<12} {'model':<22} {'k':>3} {'rms':>10} {'AIC':>12} {'BIC':>12} {'held-out rms':>13}"
                 "  chosen"]
        for c in self.candidates:
            chosen = "*" if self.chosen[self.joint_names.index(c.joint)] == c.model else ""
            val = "-" if c.validation_rms is None else f"{c.validation_rms:.5g}"
            lines.append(f"{c.joint:<12} {c.model:<22} {c.n_parameters:>3} {c.fit.rms:>10.5g} {c.fit.aic:>12.6g} "
                         f"{c.fit.bic:>12.6g} {val:>13}  {chosen}")
        return "\n".join(lines)


def select_friction_models(
    problem: FrictionProblem,
    *,
    validation: Sequence[FrictionProblem] = (),
    candidates: Sequence[str | FrictionRequest] = FRICTION_CANDIDATES,
    joints: Sequence[str] | None = None,
    tolerance: float = 0.005,
    noise_std: Sequence[float] | np.ndarray | None = None,
    max_nfev: int = 200,
    start_weights: np.ndarray | None = None,
) -> FrictionSelection:
    """Per joint (``joints``, default all), fit every candidate model on that joint with the other joints linear
    (:func:`fit_nonlinear_friction`) and choose: with ``validation`` problems (held-out runs of the same robot),
    the candidate with the lowest residual RMS of that joint over their used rows, a candidate with more
    parameters replacing a simpler one only when it is lower by more than ``tolerance`` (relative); without, the
    lowest BIC, a candidate with more parameters only when its BIC is lower by more than :data:`BIC_MARGIN`; a
    candidate with a nonlinear parameter on its search bound never. The candidates are fitted with the linear
    fit's weights from their joint's rows (robid.estimation.friction_screening, exact for those weights); then all
    chosen models are fitted together (``final``; the linear fit itself when every joint stays linear).
    ``start_weights``: the per-joint weights of a linear fit already made (e.g. the WLS estimate's): the linear
    candidate is fitted once with them instead of re-estimating them."""
    requests, chosen_joints = _checked_request(problem, candidates, joints, tolerance)
    names = problem.joint_names
    projections: dict = {}  # the factored fixed columns, shared by candidates with the same columns and weights
    # the linear model: with the weights of a fit of it already made (``start_weights``, e.g. the WLS estimate's)
    # one weighted fit, else weights re-estimated from its residual
    fixed = noise_std if noise_std is not None or start_weights is None else 1.0 / np.asarray(start_weights, float)
    baseline = fit_nonlinear_friction(problem, None, noise_std=fixed, max_nfev=max_nfev, projections=projections)
    # candidates are screened with the linear fit's weights from their joint's rows (robid.estimation.
    # friction_screening); the chosen models are then fitted together with weights re-estimated from their residual
    weights = 1.0 / np.asarray(noise_std, dtype=float) if noise_std is not None else np.asarray(baseline.weights)
    rows: list[FrictionCandidate] = []
    chosen = ["linear"] * len(names)
    final_requests: dict[str, FrictionRequest] = {}
    initial: dict[str, float] = {}
    notes: list[str] = []
    for joint in chosen_joints:
        j = names.index(joint)
        options, joint_notes = _joint_candidates(problem, joint, requests, baseline, weights, projections, validation)
        notes.extend(joint_notes)
        rows.extend(cand for _, cand, _ in options)
        if not options:
            raise RobidInputError(f"friction selection: no candidate could be fitted on joint {joint}: "
                                  + "; ".join(notes[-len(requests):]))
        req, cand, fit = _choose(options, bool(validation), tolerance)
        chosen[j] = cand.model
        final_requests[joint] = req
        initial.update({n: fit.value(n) for n, nl in zip(fit.names, fit.nonlinear, strict=True) if nl})
    if all(r.model == "linear" and not r.ripple for r in final_requests.values()):
        final = baseline
    else:
        final = fit_nonlinear_friction(problem, final_requests, noise_std=noise_std, max_nfev=max_nfev,
                                       projections=projections, start_weights=baseline.weights,
                                       initial=initial or None)
    return FrictionSelection(tuple(names), tuple(chosen), "validation" if validation else "bic", float(tolerance),
                             tuple(rows), final, tuple(notes))




def _checked_request(problem: FrictionProblem, candidates, joints, tolerance: float):
    """(candidate requests, joints compared) of :func:`select_friction_models`' arguments, checked."""
    requests = [c if isinstance(c, FrictionRequest) else FrictionRequest(str(c)) for c in candidates]
    if not requests:
        raise RobidInputError("friction selection: no candidate model")
    names = problem.joint_names
    chosen_joints = list(names) if joints is None else list(joints)
    for j in chosen_joints:
        if j not in names:
            raise RobidInputError(f"friction selection: no joint named {j!r} (joints: {', '.join(names)})")
    if not 0 <= tolerance < 1:
        raise RobidInputError(f"friction selection: tolerance must be in [0, 1), got {tolerance!r}")
    return requests, chosen_joints

def _joint_candidates(problem: FrictionProblem, joint: str, requests, baseline: NonlinearFrictionResult, weights,
                      projections: dict, validation: Sequence[FrictionProblem]) -> tuple[list[tuple], list[str]]:
    """(request, candidate, fit) of every candidate fitted on ``joint``, the others linear: the linear one is the
    baseline's, the others screened with its weights; and one note per candidate that cannot be fitted."""
    j = problem.joint_names.index(joint)
    options = []
    notes: list[str] = []
    for req in requests:
        if req.model == "linear" and not req.ripple:
            fit, figures = baseline, baseline.joints[j]
        else:
            try:
                fit = screen_candidate(problem, joint, req, weights, projections)
            except RobidInputError as exc:  # e.g. a joint that never moves: the linear candidate still counts
                notes.append(f"{joint} {req.label}: not fitted: {exc}")
                continue
            figures = fit.joint
        val = _validation_rms(fit, validation, j) if validation else None
        params = tuple((n, fit.value(n), fit.std_of(n)) for n in figures.parameters)
        options.append((req, FrictionCandidate(joint, req.label, figures, val, params, fit.converged), fit))
    return options, notes

def _validation_rms(fit: NonlinearFrictionResult, validation: Sequence[FrictionProblem], row: int) -> float:
    sq, n = 0.0, 0
    for prob in validation:
        pred = predict_friction(fit, prob)
        used = prob.used[:, row]
        sq += float(np.sum((prob.tau[used, row] - pred[used, row]) ** 2))
        n += int(used.sum())
    return math.sqrt(sq / n) if n else math.nan


#: a candidate with more parameters replaces a simpler one by BIC only when its BIC is lower by more than this: "very
#: strong" evidence (Kass & Raftery 1995, J. Am. Stat. Assoc. 90(430), section 3.2: 2 ln B > 10). Measured on the
#: virtual TX200 with linear friction, two periods, 20 noise draws (tests/test_estimation_two_periods.py): the
#: lowest BIC picked Stribeck on 4 of 20 draws with margins of 0.2 to 5.6, where simulated Stribeck friction wins by
#: hundreds to thousands (tests/test_friction_models_record.py)
BIC_MARGIN = 10.0


def _choose(options, by_validation: bool, tolerance: float):  # options: (request, candidate, fit)
    """The chosen (request, candidate) of one joint (docstring of :func:`select_friction_models`). A candidate
    whose nonlinear parameters ended on their search bound is not eligible: its model degenerated (a sigmoid as
    wide as the velocity range is a straight line, a Stribeck velocity below the noise a step) and what it adds is
    not determined by the data -- measured on a virtual robot with linear friction, such a sigmoid won the
    held-out RMS by 1.6 % with its amplitude at -4.0 +- 84 N m and left fv_J at 4.9 +- 4.8 N m s/rad."""
    determined = [o for o in options if not o[1].fit.at_bound]
    ranked = sorted(determined or options[:1], key=lambda o: o[1].n_parameters)
    if by_validation:
        best = ranked[0]
        for option in ranked[1:]:
            value = option[1].validation_rms
            if value is not None and math.isfinite(value) and value < best[1].validation_rms * (1.0 - tolerance):
                best = option
        return best
    finite = [o for o in ranked if math.isfinite(o[1].fit.bic)]
    if not finite:
        return ranked[0]
    best = finite[0]
    for option in finite[1:]:  # more parameters only on very strong evidence (BIC_MARGIN)
        margin = BIC_MARGIN if option[1].n_parameters > best[1].n_parameters else 0.0
        if option[1].fit.bic < best[1].fit.bic - margin:
            best = option
    return best
