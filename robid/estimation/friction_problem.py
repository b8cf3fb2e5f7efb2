"""The nonlinear friction fit's inputs and results (robid.estimation.nonlinear_friction): the model asked for a joint
(:class:`FrictionRequest`), the joint states its columns are built from (:class:`FrictionSignals`), the problem
(:class:`FrictionProblem`), and the per-joint figures and whole result (:class:`JointFrictionFit`,
:class:`NonlinearFrictionResult`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation.correlated import RowCorrelation
from robid.estimation.results import EstimationResult

#: the models :func:`select_friction_models` compares by default, simplest first
FRICTION_CANDIDATES = ("linear", "stribeck", "sigmoid")
_MODELS = ("linear", "stribeck", "sigmoid")

#: g(q, v, s) -> (n, k): columns from positions, friction velocity and sign (each (n, dof), n any sample count)
ColumnFunction = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class FrictionRequest:
    """The friction model asked for one joint: ``model`` (linear, stribeck, sigmoid), the number of ``sigmoids``
    (sigmoid model), the ``ripple`` harmonics of the joint position (any model; () for none)."""

    model: str = "linear"
    sigmoids: int = 1
    ripple: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.model not in _MODELS:
            raise RobidInputError(f"friction model: expected one of {', '.join(_MODELS)}, got {self.model!r}")
        if isinstance(self.sigmoids, bool) or not isinstance(self.sigmoids, int) or not 1 <= self.sigmoids <= 4:
            raise RobidInputError(f"friction model: sigmoids: expected 1 to 4, got {self.sigmoids!r}")
        ripple = tuple(self.ripple)
        positive = all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in ripple)
        if not positive or len(set(ripple)) != len(ripple):
            raise RobidInputError(f"friction model: ripple: expected distinct positive harmonics, got {self.ripple!r}")
        object.__setattr__(self, "ripple", ripple)

    @property
    def label(self) -> str:
        """e.g. ``stribeck``, ``sigmoid x2``, ``linear + ripple 1,2``."""
        text = self.model + (f" x{self.sigmoids}" if self.model == "sigmoid" and self.sigmoids > 1 else "")
        return text + (f" + ripple {','.join(str(h) for h in self.ripple)}" if self.ripple else "")


@dataclass(frozen=True, eq=False)
class FrictionSignals:
    """How columns that are functions of the joint states reach the rows of a stacked problem.

    ``evaluate(g)`` calls g(q, v, s) -- positions, friction velocity and the sign robid uses for sign(v), each
    (n, dof) on whatever samples the filter needs (a low-passed run's whole record) -- and returns its (n, k)
    columns filtered exactly as the problem's W and tau (parallel filtering) on the problem's N samples, (N, k).
    ``velocity`` (N, dof) is v on those samples and ``noise`` (dof,) its noise std when known (both for the search
    ranges of vs and the slopes: a Stribeck velocity or a sigmoid width below the velocity noise is not seen)."""

    evaluate: Callable[[ColumnFunction], np.ndarray]
    velocity: np.ndarray
    noise: np.ndarray | None = None

    @classmethod
    def unfiltered(cls, q: np.ndarray, v: np.ndarray, sign: np.ndarray | None = None,
                   noise: np.ndarray | None = None) -> FrictionSignals:
        """Rows that are the samples themselves (no filter): sign(v) unless ``sign`` is given."""
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        s = np.sign(v) if sign is None else np.asarray(sign, dtype=float)
        if q.shape != v.shape or s.shape != v.shape or v.ndim != 2:
            raise RobidInputError(f"friction signals: q, v and sign must share one (N, dof) shape, got "
                                  f"{q.shape}, {v.shape}, {s.shape}")
        return cls(evaluate=lambda g: np.asarray(g(q, v, s), dtype=float), velocity=v,
                   noise=None if noise is None else np.asarray(noise, dtype=float))

    @classmethod
    def stacked(cls, parts: Sequence[FrictionSignals]) -> FrictionSignals:
        """Several runs stacked along N, in order (as robid.identification.datasets.stack stacks W and tau)."""
        parts = tuple(parts)
        noise = [p.noise for p in parts if p.noise is not None]
        return cls(evaluate=lambda g: np.concatenate([p.evaluate(g) for p in parts]),
                   velocity=np.concatenate([p.velocity for p in parts]),
                   noise=np.fmax.reduce(noise, axis=0) if noise else None)


@dataclass(frozen=True, eq=False)
class FrictionProblem:
    """A stacked least-squares problem as robid builds it: ``W`` (N, dof, nb) filtered base regressor and ``tau``
    (N, dof) (rows the data selection left out are zero in both), the base parameter ``names``, the
    ``joint_names`` of the rows, the :class:`FrictionSignals` on the same rows, and the rows' ``correlation``
    (robid.identification.datasets.row_correlation; None: independent rows)."""

    W: np.ndarray
    tau: np.ndarray
    names: tuple[str, ...]
    joint_names: tuple[str, ...]
    signals: FrictionSignals
    correlation: RowCorrelation | None = None

    def __post_init__(self) -> None:
        W, tau, names = _lsq.check_problem(self.W, self.tau, self.names)
        object.__setattr__(self, "W", W)
        object.__setattr__(self, "tau", tau)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "joint_names", tuple(str(j) for j in self.joint_names))
        if len(self.joint_names) != W.shape[1]:
            raise RobidInputError(f"friction: {len(self.joint_names)} joint names for {W.shape[1]} rows per sample")
        if np.shape(self.signals.velocity) != tau.shape:
            raise RobidInputError(f"friction: the signals' velocity is {np.shape(self.signals.velocity)}, the "
                                  f"problem's rows {tau.shape}")

    @cached_property
    def used(self) -> np.ndarray:
        """(N, dof) bool: the rows that carry an equation."""
        return _lsq.used_rows(self.W, self.tau)


@dataclass(frozen=True)
class JointFrictionFit:
    """One joint's part of a fit: its model, its friction parameters (names in the result), used rows, effective
    rows (times the noise power gain), residual RMS (N m) and the information criteria (module docstring);
    ``at_bound`` the nonlinear parameters that ended on their search bound (not determined by the data)."""

    joint: str
    model: str
    parameters: tuple[str, ...]
    rows: int
    effective_rows: float
    rms: float
    aic: float
    bic: float
    at_bound: tuple[str, ...] = ()

    @property
    def n_parameters(self) -> int:
        return len(self.parameters)


@dataclass(frozen=True, eq=False)
class NonlinearFrictionResult:
    """A variable-projection fit (module docstring). ``names``/``values``/``std``/``covariance`` cover every
    parameter: the base parameters kept (fc_J of a sigmoid joint is dropped), then the new linear ones (``frc<h>_J``,
    ``frs<h>_J`` ripple, ``fs_J`` static level, ``fsa<k>_J`` sigmoid amplitudes), then the nonlinear ones (``vs_J``
    Stribeck velocity, ``fss<k>_J`` slopes, ``fso<k>_J`` offsets); ``nonlinear`` flags the last. ``joints`` the
    per-joint figures; ``estimate`` the WLS of the problem linearised at the optimum (its covariance is this
    result's; usable with robid.estimation.classify / prediction_std on :func:`friction_regressor`'s
    sensitivity). ``residual`` (N, dof) is measured minus predicted torque (0 on unused rows)."""

    names: tuple[str, ...]
    values: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    nonlinear: tuple[bool, ...]
    joint_names: tuple[str, ...]
    requests: tuple[FrictionRequest, ...]
    joints: tuple[JointFrictionFit, ...]
    residual: np.ndarray
    sigma: np.ndarray
    weights: np.ndarray
    estimate: EstimationResult
    converged: bool
    evaluations: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    def value(self, name: str) -> float:
        return float(self.values[self._index(name)])

    def std_of(self, name: str) -> float:
        return float(self.std[self._index(name)])

    def _index(self, name: str) -> int:
        if name not in self.names:
            raise KeyError(f"no parameter {name!r} in this friction fit")
        return self.names.index(name)

    @property
    def models(self) -> tuple[str, ...]:
        return tuple(r.label for r in self.requests)

    @property
    def rms(self) -> np.ndarray:
        return np.array([j.rms for j in self.joints])

    @property
    def aic(self) -> np.ndarray:
        return np.array([j.aic for j in self.joints])

    @property
    def bic(self) -> np.ndarray:
        return np.array([j.bic for j in self.joints])

    @property
    def linear_names(self) -> tuple[str, ...]:
        return tuple(n for n, nl in zip(self.names, self.nonlinear, strict=True) if not nl)

    @property
    def nonlinear_names(self) -> tuple[str, ...]:
        return tuple(n for n, nl in zip(self.names, self.nonlinear, strict=True) if nl)


