"""The friction models of an identification (robid.identification.identify): the per-joint comparison on the
identification runs, whether the chosen models become the record's model, the base estimate that joint fit
implies, and the record of the comparison (robid.record.friction_models)."""

from __future__ import annotations

import logging

import numpy as np

from robid import progress
from robid.defaults import WLS
from robid.estimation import EstimationResult
from robid.identification.options import IdentificationOptions
from robid.robot import Robot

_log = logging.getLogger(__name__)


def compared_friction_models(robot: Robot, sets, vsets, o: IdentificationOptions, compact: bool,
                             est: EstimationResult):
    """(the friction model selection on the identification runs, validated on ``vsets``
    (robid.identification.friction_fit.select_friction), or None when none is run; the record's choice line that
    says which models were compared or why none was)."""
    from robid.identification.choices import friction_candidates

    rows = sum(int(d.rows_used) for d in sets)
    candidates, line = friction_candidates(robot, o, o.method, rows, compact)
    said = (line,) if line else ()
    if not candidates:
        return None, said
    from robid.identification.friction_selection import select_for_record

    with progress.stage(f"identification: friction models {', '.join(candidates)} compared per joint", _log):
        return select_for_record(robot, sets, vsets, candidates, o.coulomb, start_weights=est.weights), said


#: estimators whose values the joint fit of the chosen friction models replaces (it is a weighted fit with per-joint
#: weights re-estimated from the residual, as wls)
ADOPTING_METHODS = (WLS,)


def adopts(selection, o: IdentificationOptions) -> tuple[bool, tuple[str, ...]]:
    """Whether the chosen friction models become the record's model (robid.record.friction_models), and the note
    that says so."""
    special = [f"{j} {m}" for j, m in zip(selection.joint_names, selection.chosen, strict=True) if m != "linear"]
    if not special:
        return False, ()
    if o.method not in ADOPTING_METHODS:
        return False, (f"friction models chosen ({', '.join(special)}) but not adopted: --method {o.method} keeps "
                       "its linear-friction values (the joint fit of the chosen models is a wls fit); predict, the "
                       "report and export-model use the linear model",)
    return True, (f"friction models adopted ({', '.join(special)}): the base values, their std and every torque "
                  "figure are those of the chosen models fitted together with every base parameter (variable "
                  "projection, docs/estimation.md 'Nonlinear friction')",)


def with_friction(est: EstimationResult, final, names) -> EstimationResult:
    """The base parameters' part of the chosen friction models' joint fit ``final``: its values and covariance
    for every base parameter it kept; a base parameter it replaced (the Coulomb level of a sigmoid joint) is zero
    with zero variance. Residual, noise levels and weights are the joint fit's."""
    index = {n: i for i, n in enumerate(final.names)}
    keep = [index.get(n) for n in names]
    values = np.array([0.0 if k is None else final.values[k] for k in keep])
    cov = np.zeros((len(names), len(names)))
    rows = [i for i, k in enumerate(keep) if k is not None]
    cols = [keep[i] for i in rows]
    cov[np.ix_(rows, rows)] = np.asarray(final.covariance)[np.ix_(cols, cols)]
    fit = final.estimate
    return est.with_estimate(values, cov, method=est.method, residual=fit.residual, sigma=fit.sigma,
                             weights=fit.weights, white_sigma=fit.white_sigma,
                             notes=tuple(est.notes) + tuple(final.notes))


def friction_record(robot: Robot, sets, selection, adopted: bool, o: IdentificationOptions):
    from robid.identification.friction_selection import friction_models_record

    return friction_models_record(robot, sets, selection, adopted, o.coulomb)


