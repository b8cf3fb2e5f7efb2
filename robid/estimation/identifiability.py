"""Identifiability classification of every parameter, and essential parameters (Pham & Gautier 1991).

Numerical classes of a base parameter (thresholds are arguments, defaults in
:class:`ClassificationThresholds`):

* ``barely-excited``: even with its column orthogonal to all others, its relative std would be at least
  ``poor_relative_std_percent`` (:func:`statistics.isolated_relative_std_percent`): the data hardly move it.
* ``poorly-identified``: relative std ``>= poor_relative_std_percent`` (default 10 %).
* ``well-identified``: relative std below it.

Pairs with ``|corr| > correlation_threshold`` (default 0.95) are flagged by name. A standard parameter gets its
structural class from the base-parameter derivation (``unidentifiable`` / ``grouped`` / ``identifiable``) and,
unless unidentifiable, the numerical class of the base parameter(s) it enters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import statistics
from robid.estimation.estimators import wls
from robid.estimation.results import EstimationResult


@dataclass(frozen=True)
class ClassificationThresholds:
    """Classification thresholds (stated in every report)."""

    poor_relative_std_percent: float = 10.0
    correlation_threshold: float = 0.95


@dataclass(frozen=True)
class ParameterClass:
    """Numerical class of one estimated (base) parameter."""

    name: str
    value: float
    std: float
    relative_std_percent: float
    isolated_relative_std_percent: float  # relative std if its column were orthogonal to all others
    numerical_class: str  # "well-identified" | "poorly-identified" | "barely-excited"
    correlated_with: tuple[str, ...] = ()


@dataclass(frozen=True)
class StandardClass:
    """Class of one standard parameter: structural, and numerical through the base parameters it enters."""

    name: str
    structural_class: str  # "unidentifiable" | "grouped" | "identifiable"
    base_parameters: tuple[str, ...]  # base parameters whose expression contains it
    numerical_class: str | None  # worst numerical class among those base parameters; None if unidentifiable


@dataclass(frozen=True)
class IdentifiabilityReport:
    thresholds: ClassificationThresholds
    parameters: tuple[ParameterClass, ...]
    correlated_pairs: tuple[statistics.CorrelatedPair, ...]
    standard: tuple[StandardClass, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def by_name(self, name: str) -> ParameterClass:
        for p in self.parameters:
            if p.name == name:
                return p
        raise KeyError(name)

    def classes(self) -> dict[str, str]:
        return {p.name: p.numerical_class for p in self.parameters}


_ORDER = {"well-identified": 0, "poorly-identified": 1, "barely-excited": 2}


def classify(
    result: EstimationResult,
    W: np.ndarray,
    *,
    thresholds: ClassificationThresholds | None = None,
    structural_classes: Mapping[str, str] | None = None,
    grouping: np.ndarray | None = None,
    standard_names: Sequence[str] | None = None,
    reference_values: np.ndarray | None = None,
) -> IdentifiabilityReport:
    """Classify every parameter of ``result`` (estimated from regressor ``W``, shape (N, dof, nb)).

    ``structural_classes`` (``{standard name: class}``), ``grouping`` (nb x P, base = grouping @ standard) and
    ``standard_names`` come from the base-parameter derivation (``robot.base_parameters()``); when given,
    every standard parameter is classified too. ``reference_values`` (e.g. nominal CAD base values) is the
    magnitude against which "barely excited" is judged; default: the estimate itself (then a parameter whose
    true value is zero is reported barely excited: nothing of it is visible in the data).
    """
    th = thresholds or ClassificationThresholds()
    W = np.asarray(W, dtype=float)
    if W.shape[2] != len(result.names):
        raise RobidInputError(
            f"classify: regressor has {W.shape[2]} columns, result has {len(result.names)} parameters"
        )
    ref = result.values if reference_values is None else np.asarray(reference_values, dtype=float)
    # filtered (correlated) rows: a column in the pass band sees the white noise level, not the filtered one
    level = result.sigma if result.white_sigma is None else result.white_sigma
    level = np.asarray(level, dtype=float)
    # a joint without any used row (one that never moved, left out by the speed threshold) has no noise level and
    # no rows: weight 0, rather than 1/0 turning every column into NaN
    ok = np.isfinite(level) & (level > 0)
    iso = statistics.isolated_relative_std_percent(W, np.where(ok, 1.0 / np.where(ok, level, 1.0), 0.0), ref)
    pairs = statistics.correlated_pairs(result.covariance, result.names, th.correlation_threshold)
    params = _parameter_classes(result, iso, pairs, th)
    notes = [
        f"well-identified: relative std < {th.poor_relative_std_percent:g} %; poorly-identified otherwise; "
        f"barely-excited: relative std >= {th.poor_relative_std_percent:g} % even for an orthogonal column; "
        f"correlated: |corr| > {th.correlation_threshold:g}"
    ]
    standard = ()
    if structural_classes is not None or grouping is not None:
        standard = _standard_classes(params, result.names, structural_classes, grouping, standard_names)
    return IdentifiabilityReport(th, tuple(params), pairs, standard, tuple(notes))



def _parameter_classes(result: EstimationResult, iso: np.ndarray, pairs, th: ClassificationThresholds) -> list:
    """Each base parameter's class from its relative std and its isolated one (an orthogonal column's), with the
    parameters it is correlated with."""
    partners: dict[str, list[str]] = {n: [] for n in result.names}
    for p in pairs:
        partners[p.first].append(p.second)
        partners[p.second].append(p.first)
    params = []
    for i, name in enumerate(result.names):
        rel = float(result.relative_std_percent[i])
        if iso[i] >= th.poor_relative_std_percent:
            cls = "barely-excited"
        elif rel >= th.poor_relative_std_percent or not np.isfinite(rel):
            cls = "poorly-identified"
        else:
            cls = "well-identified"
        params.append(
            ParameterClass(
                name=name,
                value=float(result.values[i]),
                std=float(result.std[i]),
                relative_std_percent=rel,
                isolated_relative_std_percent=float(iso[i]),
                numerical_class=cls,
                correlated_with=tuple(partners[name]),
            )
        )
    return params

def _standard_classes(params, base_names, structural, grouping, standard_names) -> tuple[StandardClass, ...]:
    if grouping is None or standard_names is None:
        raise RobidInputError("classify: standard-parameter classes need grouping and standard_names")
    G = np.asarray(grouping, dtype=float)
    if G.shape != (len(base_names), len(standard_names)):
        raise RobidInputError(f"classify: grouping shape {G.shape} != ({len(base_names)}, {len(standard_names)})")
    num = {p.name: p.numerical_class for p in params}
    out = []
    scale = np.max(np.abs(G)) if G.size else 1.0
    for k, sname in enumerate(standard_names):
        rows = np.flatnonzero(np.abs(G[:, k]) > 1e-12 * scale)
        bases = tuple(base_names[i] for i in rows)
        if structural is not None and sname in structural:
            scls = structural[sname]
        elif not bases:
            scls = "unidentifiable"
        elif len(rows) == 1 and np.count_nonzero(np.abs(G[rows[0]]) > 1e-12 * scale) == 1:
            scls = "identifiable"
        else:
            scls = "grouped"
        ncls = None
        if scls != "unidentifiable" and bases:
            ncls = max((num[b] for b in bases), key=_ORDER.__getitem__)
        out.append(StandardClass(sname, scls, bases, ncls))
    return tuple(out)


# --- essential parameters --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EssentialStep:
    removed: str
    relative_std_percent: float  # of the removed parameter just before removal
    residual_increase_percent: float  # weighted residual norm after removal vs the full model, in percent


@dataclass(frozen=True)
class EssentialResult:
    """Pham-Gautier essential parameters: the reduced estimate and the removal history."""

    names: tuple[str, ...]
    estimate: EstimationResult
    steps: tuple[EssentialStep, ...]
    threshold_percent: float
    max_residual_increase_percent: float
    stopped_by: str  # "threshold" | "residual" | "exhausted"
    notes: tuple[str, ...] = ()


def essential_parameters(
    W: np.ndarray,
    tau: np.ndarray,
    names: Sequence[str],
    *,
    noise_std: Sequence[float] | np.ndarray | None = None,
    threshold_percent: float = 10.0,
    max_residual_increase_percent: float = 5.0,
) -> EssentialResult:
    """Iteratively drop the parameter with the largest relative std (Pham & Gautier 1991).

    All fits are WLS with the same per-joint weights (``noise_std``, or ``sigma_j`` of a two-step WLS of the full
    model) so that residual norms are comparable. Stop when every remaining relative std is below
    ``threshold_percent`` ("threshold"), or when removing the next parameter would raise the weighted residual norm
    by more than ``max_residual_increase_percent`` over the full model ("residual"; that parameter is kept).
    """
    names = list(names)
    if noise_std is None:
        full = wls(W, tau, names)
        noise = full.sigma
    else:
        noise = np.asarray(noise_std, dtype=float)
    W = np.asarray(W, dtype=float)
    tau = np.asarray(tau, dtype=float)
    current = wls(W, tau, names, noise_std=noise)
    ref = _weighted_norm(current, noise)
    keep = list(range(len(names)))
    steps: list[EssentialStep] = []
    stopped = "exhausted"
    while len(keep) > 1:
        rel = np.asarray(current.relative_std_percent)
        worst = int(np.argmax(np.where(np.isfinite(rel), rel, np.inf)))
        if rel[worst] < threshold_percent:
            stopped = "threshold"
            break
        trial_keep = keep[:worst] + keep[worst + 1 :]
        trial = wls(W[:, :, trial_keep], tau, [names[k] for k in trial_keep], noise_std=noise)
        increase = 100.0 * (_weighted_norm(trial, noise) / ref - 1.0)
        if increase > max_residual_increase_percent:
            stopped = "residual"
            break
        steps.append(EssentialStep(names[keep[worst]], float(rel[worst]), float(increase)))
        keep, current = trial_keep, trial
    notes = (
        f"essential parameters: threshold {threshold_percent:g} % relative std, "
        f"max residual increase {max_residual_increase_percent:g} %, stopped by {stopped}",
    )
    return EssentialResult(
        names=tuple(names[k] for k in keep),
        estimate=current,
        steps=tuple(steps),
        threshold_percent=threshold_percent,
        max_residual_increase_percent=max_residual_increase_percent,
        stopped_by=stopped,
        notes=notes,
    )


def _weighted_norm(result: EstimationResult, noise: np.ndarray) -> float:
    return float(np.linalg.norm(result.residual / noise))
