"""The record of a nonlinear-friction model selection (schema 1.4, JSON ``friction_models``): per joint, every
candidate friction model's figures, the chosen one, the parameters of the chosen models fitted together, and
their friction curves against the data (robid.estimation.nonlinear_friction, docs/estimation.md "Nonlinear
friction"). The record's base parameters and torque fits stay those of the linear model, which ``robid predict``
uses; this section says whether and where a nonlinear model does better."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FrictionCandidateRow:
    """One joint with one candidate model (the other joints linear): its number of friction parameters, residual
    RMS on the identification rows (N m), AIC and BIC, held-out RMS on the validation runs (None without them),
    whether the fit converged and whether it was chosen."""

    joint: str
    model: str
    parameters: int
    rms: float | None
    aic: float | None
    bic: float | None
    validation_rms: float | None
    converged: bool
    chosen: bool


@dataclass(frozen=True)
class FrictionValue:
    """A friction parameter of the chosen models' joint fit: value and standard deviation (None where not
    determined), and whether it enters nonlinearly (vs, sigmoid slopes and offsets)."""

    name: str
    value: float | None
    std: float | None
    nonlinear: bool


@dataclass(frozen=True)
class FrictionModelCurve:
    """Joint friction torque of the chosen model over a velocity grid (position ripple left out), and the torque
    the data imply there on the identification rows: measured minus every other term of the joint fit (decimated)."""

    joint: str
    model: str
    velocity: tuple[float, ...]
    torque: tuple[float, ...]
    data_velocity: tuple[float, ...]
    data_torque: tuple[float, ...]


@dataclass(frozen=True)
class FrictionModels:
    """The friction model selection: ``criterion`` "validation" (held-out RMS; a model with more parameters only
    when it is lower by more than ``tolerance``, relative) or "bic"; ``chosen`` one model per joint."""

    criterion: str
    tolerance: float
    joints: tuple[str, ...]
    chosen: tuple[str, ...]
    candidates: tuple[FrictionCandidateRow, ...]
    parameters: tuple[FrictionValue, ...]
    curves: tuple[FrictionModelCurve, ...]
    notes: tuple[str, ...] = ()
