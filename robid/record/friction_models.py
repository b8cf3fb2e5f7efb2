"""The record of a nonlinear-friction model selection (schema 1.4, JSON ``friction_models``): per joint, every
candidate friction model's figures, the chosen one, the parameters of the chosen models fitted together, and
their friction curves against the data (robid.estimation.nonlinear_friction, docs/estimation.md "Nonlinear
friction").

Schema 2.0: ``models`` (the chosen model of every joint, structured), ``adopted`` and ``fit``. When ``adopted``,
the chosen models are the record's model: the base parameters were fitted together with them (``fit``: every
parameter of that fit, base ones first, with its covariance), the record's base values, standard deviations and
every torque figure are that fit's, and ``robid predict``, the report and ``export-model`` evaluate it
(robid.identification.identified_model). Not adopted (every joint linear, or an estimator whose values the
friction fit would replace, e.g. ``consistent``): the section only says whether and where a nonlinear model
does better, and the record's model is the linear one."""

from __future__ import annotations

from dataclasses import dataclass, field


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
class JointFrictionModel:
    """The chosen friction model of one joint (2.0): ``model`` linear, stribeck or sigmoid, the number of
    ``sigmoids`` (sigmoid model) and the position-ripple ``harmonics`` (any model; empty for none), as
    robid.estimation.nonlinear_friction.FrictionRequest describes them."""

    joint: str
    model: str = "linear"
    sigmoids: int = 1
    ripple: tuple[int, ...] = ()


@dataclass(frozen=True)
class FrictionFit:
    """Every parameter of the chosen models' joint fit (2.0), in the fit's order: the base parameters it kept (a
    sigmoid joint's fc_J is replaced by its sigmoids), the new linear parameters (ripple, fs_J, fsa<k>_J), then the
    nonlinear ones (vs_J, fss<k>_J, fso<k>_J); ``nonlinear`` flags the last; ``covariance`` of all of them (the
    problem linearised at the optimum, docs/estimation.md "Nonlinear friction")."""

    names: tuple[str, ...]
    values: tuple[float | None, ...]
    nonlinear: tuple[bool, ...]
    covariance: tuple[tuple[float | None, ...], ...]


@dataclass(frozen=True)
class FrictionModels:
    """The friction model selection: ``criterion`` "validation" (held-out RMS; a model with more parameters only
    when it is lower by more than ``tolerance``, relative) or "bic"; ``chosen`` one model label per joint
    (``models`` the same, structured); ``adopted`` and ``fit``: module docstring."""

    criterion: str
    tolerance: float
    joints: tuple[str, ...]
    chosen: tuple[str, ...]
    candidates: tuple[FrictionCandidateRow, ...]
    parameters: tuple[FrictionValue, ...]
    curves: tuple[FrictionModelCurve, ...]
    notes: tuple[str, ...] = ()
    models: tuple[JointFrictionModel, ...] = ()
    adopted: bool = False
    fit: FrictionFit | None = field(default=None, metadata={"omit_none": True})

    @property
    def nonlinear_joints(self) -> tuple[str, ...]:
        """The joints whose chosen model is not plain linear."""
        return tuple(m.joint for m in self.models if m.model != "linear" or m.ripple)
