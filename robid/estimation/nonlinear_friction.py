"""Nonlinear joint friction by separable least squares (variable projection), and per-joint model selection.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.optimize import least_squares

from robid.errors import RobidInputError
from robid.estimation import _lsq
from robid.estimation.correlated import RowCorrelation, noise_trace
from robid.estimation.estimators import wls
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


# ---- layout: which columns a request adds, drops and varies ----------------------------------------------------


@dataclass(frozen=True)
class _Joint:
    """One joint with a request that is not plain linear: its row, the W column of fc_J (kept for Stribeck,
    dropped for sigmoid), and the names of its new linear and nonlinear parameters."""

    row: int
    name: str
    request: FrictionRequest
    fc: int | None
    ripple_names: tuple[str, ...]
    varying_names: tuple[str, ...]  # fs_J (Stribeck, reported; the fit uses fs - fc) or fsa<k>_J
    nonlinear_names: tuple[str, ...]  # vs_J or fss<k>_J, fso<k>_J (alternating per sigmoid)
    log_scale: tuple[bool, ...]


@dataclass(frozen=True)
class _Layout:
    problem_names: tuple[str, ...]
    joint_names: tuple[str, ...]
    requests: tuple[FrictionRequest, ...]
    joints: tuple[_Joint, ...]
    kept: tuple[int, ...]  # W columns kept

    @property
    def ripple_names(self) -> tuple[str, ...]:
        return tuple(n for j in self.joints for n in j.ripple_names)

    @property
    def varying_names(self) -> tuple[str, ...]:
        return tuple(n for j in self.joints for n in j.varying_names)

    @property
    def nonlinear_names(self) -> tuple[str, ...]:
        return tuple(n for j in self.joints for n in j.nonlinear_names)

    @property
    def log_scale(self) -> np.ndarray:
        return np.array([b for j in self.joints for b in j.log_scale], dtype=bool)

    @property
    def linear_names(self) -> tuple[str, ...]:
        return tuple(self.problem_names[i] for i in self.kept) + self.ripple_names + self.varying_names

    @property
    def names(self) -> tuple[str, ...]:
        return self.linear_names + self.nonlinear_names


def _requests(models, joint_names: Sequence[str]) -> tuple[FrictionRequest, ...]:
    """Per joint the :class:`FrictionRequest` of ``models`` (joint name or 0-based row -> request or model name;
    a sequence of one entry per joint); joints not named are linear."""
    if models is None:
        return tuple(FrictionRequest() for _ in joint_names)
    if not isinstance(models, Mapping):
        models = list(models)
        if len(models) != len(joint_names):
            raise RobidInputError(f"friction models: {len(models)} entries for {len(joint_names)} joints")
        models = dict(enumerate(models))
    out = [FrictionRequest() for _ in joint_names]
    for key, value in models.items():
        if isinstance(key, str):
            if key not in joint_names:
                raise RobidInputError(f"friction models: no joint named {key!r} (joints: {', '.join(joint_names)})")
            row = list(joint_names).index(key)
        elif isinstance(key, int) and not isinstance(key, bool) and 0 <= key < len(joint_names):
            row = key
        else:
            raise RobidInputError(f"friction models: {key!r} is neither a joint name nor a row 0.."
                                  f"{len(joint_names) - 1}")
        out[row] = value if isinstance(value, FrictionRequest) else FrictionRequest(str(value))
    return tuple(out)


def _layout(problem: FrictionProblem, requests: tuple[FrictionRequest, ...]) -> _Layout:
    names, W = problem.names, problem.W
    joints, dropped = [], set()
    for row, (joint, req) in enumerate(zip(problem.joint_names, requests, strict=True)):
        if req.model == "linear" and not req.ripple:
            continue
        fc_name = f"fc_{joint}"
        fc = names.index(fc_name) if fc_name in names else None
        if fc is not None:
            others = np.delete(W[:, :, fc], row, axis=1)
            if np.any(others != 0):
                raise RobidInputError(f"friction: {fc_name} enters other joints' rows (a coupled drive?): a "
                                      f"{req.model} model needs the Coulomb column of joint {joint} alone")
        if req.model == "stribeck" and fc is None:
            raise RobidInputError(f"friction: the stribeck model of joint {joint} needs the base parameter "
                                  f"{fc_name} (terms with coulomb)")
        if req.model == "sigmoid" and fc is not None:
            dropped.add(fc)
        ripple = tuple(f"{p}{h}_{joint}" for h in req.ripple for p in ("frc", "frs"))
        if req.model == "stribeck":
            varying, nonlinear, logs = (f"fs_{joint}",), (f"vs_{joint}",), (True,)
        elif req.model == "sigmoid":
            k = range(1, req.sigmoids + 1)
            varying = tuple(f"fsa{i}_{joint}" for i in k)
            nonlinear = tuple(n for i in k for n in (f"fss{i}_{joint}", f"fso{i}_{joint}"))
            logs = tuple(b for _ in k for b in (True, False))
        else:
            varying, nonlinear, logs = (), (), ()
        clash = [n for n in ripple + varying + nonlinear if n in names]
        if clash:
            raise RobidInputError(f"friction: the base parameters already have {', '.join(clash)}")
        joints.append(_Joint(row, joint, req, fc, ripple, varying, nonlinear, logs))
    kept = tuple(i for i in range(len(names)) if i not in dropped)
    return _Layout(names, problem.joint_names, requests, tuple(joints), kept)


# ---- columns -----------------------------------------------------------------------------------------------------


def _stribeck(v, s, vs):
    """E = s exp(-(v/vs)^2) and dE/dvs."""
    e = s * np.exp(-((v / vs) ** 2))
    return e, e * 2.0 * v**2 / vs**3


def _sigmoid(v, b, c):
    """S = l(b (v + c)) - l(b c) (Gaz eq. 3 per unit amplitude, tanh form) and dS/db, dS/dc."""
    x, x0 = 0.5 * b * (v + c), 0.5 * b * c
    s2, s20 = 1.0 / np.cosh(np.clip(x, -300, 300)) ** 2, 1.0 / np.cosh(np.clip(x0, -300, 300)) ** 2
    value = 0.5 * (np.tanh(x) - np.tanh(x0))
    return value, 0.25 * ((v + c) * s2 - c * s20), 0.25 * b * (s2 - s20)


def _varying_function(layout: _Layout, p: np.ndarray) -> ColumnFunction:
    """g(q, v, s) -> [varying columns (one per varying name) | d(column)/d(p_i) (one per nonlinear parameter)]."""

    def g(q, v, s):
        values, derivatives = [], []
        k = 0
        for j in layout.joints:
            vj, sj = v[:, j.row], s[:, j.row]
            if j.request.model == "stribeck":
                e, de = _stribeck(vj, sj, p[k])
                values.append(e)
                derivatives.append(de)
                k += 1
            elif j.request.model == "sigmoid":
                for _ in range(j.request.sigmoids):
                    value, db, dc = _sigmoid(vj, p[k], p[k + 1])
                    values.append(value)
                    derivatives += [db, dc]
                    k += 2
        n = v.shape[0]
        return np.column_stack(values + derivatives) if values else np.zeros((n, 0))

    return g


def _ripple_function(layout: _Layout) -> ColumnFunction:
    def g(q, v, s):
        cols = []
        for j in layout.joints:
            for h in j.request.ripple:
                cols += [s[:, j.row] * np.cos(h * q[:, j.row]), s[:, j.row] * np.sin(h * q[:, j.row])]
        return np.column_stack(cols) if cols else np.zeros((v.shape[0], 0))

    return g


def _nonlinear_owner(layout: _Layout) -> tuple[list[int], list[int]]:
    """Per nonlinear parameter: the varying column it moves and that column's row."""
    column, rows = [], []
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            column.append(c)
            rows.append(j.row)
            c += 1
        elif j.request.model == "sigmoid":
            for _ in range(j.request.sigmoids):
                column += [c, c]
                rows += [j.row, j.row]
                c += 1
    return column, rows


def _varying_rows(layout: _Layout) -> list[int]:
    rows = []
    for j in layout.joints:
        rows += [j.row] * len(j.varying_names)
    return rows


def _ripple_rows(layout: _Layout) -> list[int]:
    rows = []
    for j in layout.joints:
        rows += [j.row] * len(j.ripple_names)
    return rows


def _place(columns: np.ndarray, rows: list[int], used: np.ndarray) -> np.ndarray:
    """(N, k) columns -> (N, dof, k), column i in row rows[i], zero on the rows not used."""
    n, dof = used.shape
    out = np.zeros((n, dof, columns.shape[1]))
    for i, r in enumerate(rows):
        out[:, r, i] = columns[:, i] * used[:, r]
    return out


def _fixed_columns(problem: FrictionProblem, layout: _Layout) -> np.ndarray:
    used = problem.used
    ripple = _place(problem.signals.evaluate(_ripple_function(layout)), _ripple_rows(layout), used) \
        if layout.ripple_names else np.zeros(problem.W.shape[:2] + (0,))
    return np.concatenate([problem.W[:, :, list(layout.kept)], ripple], axis=2)


def _varying_columns(problem: FrictionProblem, layout: _Layout, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    used = problem.used
    nv = len(layout.varying_names)
    if nv == 0:
        empty = np.zeros(problem.W.shape[:2] + (0,))
        return empty, empty
    cols = problem.signals.evaluate(_varying_function(layout, p))
    column, rows = _nonlinear_owner(layout)
    return _place(cols[:, :nv], _varying_rows(layout), used), _place(cols[:, nv:], rows, used)


# ---- variable projection -----------------------------------------------------------------------------------------


class _Projection:
    """Weighted fixed columns factored once per set of weights: A_s = A_w D^-1 = Q R, R = U S V^T (rank-revealing);
    the orthonormal basis Q1 = Q U_r of their span, and least-norm coefficients through V_r S_r^-1 U_r^T Q^T."""

    def __init__(self, fixed: np.ndarray, y: np.ndarray, row_w: np.ndarray):
        A = fixed * row_w[:, None]
        scale = np.linalg.norm(A, axis=0)
        self.live = scale > _lsq.ZERO_COLUMN * max(float(scale.max(initial=0.0)), 1e-300)
        self.scale = np.where(self.live, scale, 1.0)
        As = A[:, self.live] / self.scale[self.live]
        self.width = A.shape[1]
        if As.shape[1]:
            q, r = np.linalg.qr(As, mode="reduced")
            u, sv, vt = np.linalg.svd(r)
            rank = int(np.sum(sv > sv[0] * max(As.shape) * np.finfo(float).eps))
            self.basis = q @ u[:, :rank]
            self._back = vt[:rank].T / sv[:rank]  # V_r S_r^-1: coefficients = back @ (basis^T target)
        else:
            self.basis = np.zeros((A.shape[0], 0))
            self._back = np.zeros((0, 0))
        self.full_rank = self.basis.shape[1] == int(self.live.sum())
        self.yw = y * row_w
        self.yt = self.perp(self.yw)

    def perp(self, x: np.ndarray) -> np.ndarray:
        return x - self.basis @ (self.basis.T @ x)

    def coefficients(self, target: np.ndarray) -> np.ndarray:
        """Least-norm coefficients of the fixed columns for the weighted ``target`` (0 on dead columns)."""
        out = np.zeros(self.width)
        if self.basis.shape[1]:
            out[self.live] = (self._back @ (self.basis.T @ target)) / self.scale[self.live]
        return out

    def solve(self, C: np.ndarray):
        """(residual, coefficients b of C, basis Qc of the projected C) for min ||yt - P C b||."""
        Ct = self.perp(C)
        if Ct.shape[1] == 0:
            return self.yt, np.zeros(0), Ct
        scale = np.linalg.norm(Ct, axis=0)
        live = scale > 1e-12 * max(float(np.linalg.norm(self.yt)), 1e-300)
        b = np.zeros(C.shape[1])
        qc = np.zeros((C.shape[0], 0))
        if live.any():
            qc, rc = np.linalg.qr(Ct[:, live] / scale[live], mode="reduced")
            b[live] = np.linalg.lstsq(rc, qc.T @ self.yt, rcond=None)[0] / scale[live]
        r = self.yt - qc @ (qc.T @ self.yt)
        return r, b, qc


class _Objective:
    """The variable-projection residual r(x) and Kaufman's Jacobian for least_squares, on the used rows."""

    def __init__(self, problem: FrictionProblem, layout: _Layout, fixed: np.ndarray, weights: np.ndarray,
                 projections: dict | None = None):
        self.problem, self.layout = problem, layout
        self.mask = problem.used.reshape(-1)
        n, dof = problem.tau.shape
        self.row_w = _lsq.rows_of_joint(weights, n)[self.mask]
        self.row_joint = np.tile(np.arange(dof), n)[self.mask]
        # the factored fixed columns depend on the kept columns, the ripple and the weights only: candidates of a
        # selection that share them share one factorisation (select_friction_models passes ``projections``)
        key = (layout.kept, layout.ripple_names, np.asarray(weights, dtype=float).tobytes())
        proj = None if projections is None else projections.get(key)
        if proj is None:
            proj = _Projection(fixed.reshape(n * dof, -1)[self.mask], problem.tau.reshape(-1)[self.mask], self.row_w)
            if projections is not None:
                projections[key] = proj
        self.proj = proj
        self.log = layout.log_scale
        self.column, _ = _nonlinear_owner(layout)
        self.evaluations = 0
        self._cache: tuple | None = None

    def linear_coefficients(self, x: np.ndarray) -> np.ndarray:
        """[fixed columns' coefficients | varying columns' b] at x (the fit's own parameterisation)."""
        r, b, qc, D, C, p = self._evaluate(x)
        return np.concatenate([self.proj.coefficients(self.proj.yw - C @ b), b])

    def joint_sigma(self, x: np.ndarray) -> np.ndarray:
        """Per-joint residual std at x, ||r_j||^2 / (N_j - h_j) with h_j the joint's share of the leverages of
        [fixed | varying] (the estimate's weights come from it; the reported covariance does not)."""
        r, b, qc, D, C, p = self._evaluate(x)
        e = r / self.row_w
        h = np.sum(self.proj.basis**2, axis=1) + np.sum(qc**2, axis=1)
        dof = self.problem.tau.shape[1]
        rss = np.bincount(self.row_joint, e**2, minlength=dof)
        rows = np.bincount(self.row_joint, np.ones_like(e), minlength=dof) - np.bincount(self.row_joint, h,
                                                                                         minlength=dof)
        return np.sqrt(rss / np.maximum(rows, 1.0))

    def natural(self, x: np.ndarray) -> np.ndarray:
        return np.where(self.log, np.exp(x), x)

    def _evaluate(self, x: np.ndarray):
        if self._cache is not None and np.array_equal(self._cache[0], x):
            return self._cache[1]
        self.evaluations += 1
        p = self.natural(x)
        varying, derivative = _varying_columns(self.problem, self.layout, p)
        n, dof = self.problem.tau.shape
        C = varying.reshape(n * dof, -1)[self.mask] * self.row_w[:, None]
        D = derivative.reshape(n * dof, -1)[self.mask] * self.row_w[:, None]
        r, b, qc = self.proj.solve(C)
        out = (r, b, qc, D, C, p)
        self._cache = (np.array(x, copy=True), out)
        return out

    def residual(self, x: np.ndarray) -> np.ndarray:
        return self._evaluate(x)[0]

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        r, b, qc, D, C, p = self._evaluate(x)
        chain = np.where(self.log, p, 1.0)  # d p / d x
        M = D * (b[self.column] * chain)[None, :]
        Mt = self.proj.perp(M)
        return -(Mt - qc @ (qc.T @ Mt))

    def cost(self, x: np.ndarray) -> float:
        r = self.residual(x)
        return float(r @ r)


def _bounds(problem: FrictionProblem, layout: _Layout) -> tuple[np.ndarray, np.ndarray]:
    """Search bounds in the optimiser's coordinates: a velocity scale (vs; 1/slope) from 1/20 of the 1st percentile
    of |v| on the joint's used rows (a sigmoid that steep is a step on those rows), but at least the velocity noise
    std (narrower features are not seen through the smoothed sign) and 1e-4, to the largest |v| there; offsets
    within half the largest |v|."""
    used = problem.used
    lo, hi = [], []
    for j in layout.joints:
        speed = np.abs(problem.signals.velocity[used[:, j.row], j.row])
        if speed.size == 0 or not np.any(speed > 0):
            raise RobidInputError(f"friction: joint {j.name} has no used rows with motion: its {j.request.model} "
                                  "model cannot be fitted")
        vmax = float(speed.max())
        noise = problem.signals.noise
        floor = float(noise[j.row]) if noise is not None and np.isfinite(noise[j.row]) else 0.0
        vmin = min(max(float(np.percentile(speed, 1.0)) / 20.0, 1e-4, 1e-6 * vmax, floor), 0.5 * vmax)
        if j.request.model == "stribeck":
            lo.append(math.log(vmin))
            hi.append(math.log(vmax))
        elif j.request.model == "sigmoid":
            for _ in range(j.request.sigmoids):
                lo += [math.log(1.0 / vmax), -0.5 * vmax]
                hi += [math.log(1.0 / vmin), 0.5 * vmax]
    return np.array(lo), np.array(hi)


def _start(objective: _Objective, lo: np.ndarray, hi: np.ndarray, initial: np.ndarray | None) -> np.ndarray:
    """A starting point: ``initial`` (natural units) or, joint by joint, the best of a grid over its velocity scale
    (16 points, log-spaced within the bounds; sigmoid offsets 0, further sigmoids 10x and 100x wider)."""
    layout = objective.layout
    if initial is not None:
        x0 = np.where(objective.log, np.log(np.maximum(initial, 1e-300)), initial)
        return np.clip(x0, lo, hi)
    x0 = np.where(objective.log, 0.5 * (lo + hi), 0.0)
    k = 0
    for j in layout.joints:
        n = len(j.nonlinear_names)
        if n == 0:
            continue
        best, best_cost = None, math.inf
        for scale in np.linspace(lo[k], hi[k], 16):
            x = x0.copy()
            if j.request.model == "stribeck":
                x[k] = scale
            else:
                for i in range(j.request.sigmoids):
                    x[k + 2 * i] = np.clip(scale - math.log(10.0) * i, lo[k + 2 * i], hi[k + 2 * i])
                    x[k + 2 * i + 1] = 0.0
            cost = objective.cost(x)
            if cost < best_cost:
                best, best_cost = x, cost
        x0 = best
        k += n
    return x0


def _vp_fit(objective: _Objective, lo, hi, x0, max_nfev: int):
    if x0.size == 0:
        return x0, True, "no nonlinear parameter"
    sol = least_squares(objective.residual, x0, jac=objective.jacobian, bounds=(lo, hi), method="trf",
                        x_scale="jac", xtol=1e-9, ftol=1e-10, gtol=1e-10, max_nfev=max_nfev)
    return sol.x, bool(sol.status > 0), str(sol.message)


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
    dof = problem.tau.shape[1]
    notes: list[str] = []
    if noise_std is not None:
        noise = np.asarray(noise_std, dtype=float).reshape(-1)
        if noise.shape != (dof,) or np.any(~np.isfinite(noise)) or np.any(noise <= 0):
            raise RobidInputError(f"friction: noise_std must be {dof} positive finite values, got {noise_std!r}")
        weights = 1.0 / noise
    elif start_weights is not None:
        weights = np.asarray(start_weights, dtype=float).reshape(dof) / float(np.max(start_weights))
    else:
        weights = np.ones(dof)
    lo, hi = _bounds(problem, layout) if layout.nonlinear_names else (np.zeros(0), np.zeros(0))
    start = None
    if initial:
        unknown = sorted(set(initial) - set(layout.nonlinear_names))
        if unknown:
            raise RobidInputError(f"friction: initial: {', '.join(unknown)} are not nonlinear parameters of this "
                                  f"fit ({', '.join(layout.nonlinear_names) or 'none'})")
        mid = np.where(layout.log_scale, np.exp(0.5 * (lo + hi)), 0.0)
        start = np.array([initial.get(n, m) for n, m in zip(layout.nonlinear_names, mid, strict=True)], dtype=float)
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


@dataclass(frozen=True, eq=False)
class _WeightedFit:
    x: np.ndarray  # optimiser coordinates
    p: np.ndarray  # natural values of the nonlinear parameters
    beta: np.ndarray  # linear coefficients, the fit's own parameterisation ([fixed | varying], fs - fc)
    sigma: np.ndarray  # per-joint residual std
    ok: bool
    message: str
    evaluations: int
    full_rank: bool


def _weighted_fit(problem, layout, fixed, weights, lo, hi, x, start, max_nfev, projections=None) -> _WeightedFit:
    """One variable-projection fit with fixed weights, from ``x`` (or the grid / ``start`` when None)."""
    objective = _Objective(problem, layout, fixed, weights, projections)
    if x is None:
        x = _start(objective, lo, hi, start)
    x, ok, message = _vp_fit(objective, lo, hi, x, max_nfev)
    return _WeightedFit(x, objective.natural(x), objective.linear_coefficients(x), objective.joint_sigma(x), ok,
                        message, objective.evaluations, objective.proj.full_rank)


@dataclass(frozen=True, eq=False)
class _Linearised:
    estimate: EstimationResult
    values: np.ndarray  # the VP optimum in the reporting parameterisation (names of the layout)
    X: np.ndarray  # (N, dof, n_linear + n_nonlinear) sensitivity of the prediction
    prediction: np.ndarray  # (N, dof)

    @property
    def sigma(self) -> np.ndarray:
        return self.estimate.sigma


def _reporting_columns(layout: _Layout, fixed: np.ndarray, varying: np.ndarray) -> np.ndarray:
    """[fixed | varying] with fc_J's column s replaced by s (1 - E) on Stribeck joints: the columns of (fc, fs)
    instead of (fc, fs - fc)."""
    fixed = fixed.copy()
    kept = list(layout.kept)
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            fixed[:, :, kept.index(j.fc)] -= varying[:, :, c]
        c += len(j.varying_names)
    return np.concatenate([fixed, varying], axis=2)


def _reporting_values(layout: _Layout, beta: np.ndarray, nf: int) -> np.ndarray:
    """The fit's linear coefficients ([fixed | varying], fs - fc on Stribeck joints) as reported (fs)."""
    beta = np.array(beta, dtype=float, copy=True)
    kept = list(layout.kept)
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            beta[nf + c] += beta[kept.index(j.fc)]  # fs = fc + (fs - fc)
        c += len(j.varying_names)
    return beta


def _sensitivity(layout: _Layout, X: np.ndarray, derivative: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """d(prediction)/d(p) (N, dof, nn): each nonlinear parameter's varying column derivative times the column's
    coefficient in the fit's own parameterisation (fs - fc for Stribeck)."""
    column, _ = _nonlinear_owner(layout)
    nf = X.shape[2] - len(layout.varying_names)
    kept = list(layout.kept)
    coefficient = beta[nf:].copy()
    c = 0
    for j in layout.joints:
        if j.request.model == "stribeck":
            coefficient[c] -= beta[kept.index(j.fc)]
        c += len(j.varying_names)
    return derivative * coefficient[column][None, None, :]


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
    at_bound = []
    for i, name in enumerate(layout.nonlinear_names):
        width = hi[i] - lo[i]
        if min(x[i] - lo[i], hi[i] - x[i]) < 1e-3 * max(width, 1e-12):
            at_bound.append(name)
    if at_bound:
        notes.append(f"at the bound of the search range (not determined by the data; its std is meaningless): "
                     f"{', '.join(at_bound)}")
    elif x.size:  # an interior optimum is stationary: the linearised problem's Gauss-Newton step is ~0
        gap = np.abs(est.values - values) / np.where(std > 0, std, np.inf)
        if np.any(gap > 0.05):
            worst = int(np.argmax(gap))
            notes.append(f"the linearised problem moves {layout.names[worst]} by {gap[worst]:.2g} std from the fit: "
                         "not at a stationary point")
    joints = _joint_figures(problem, layout, residual, used, set(at_bound))
    nonlinear = tuple([False] * len(layout.linear_names) + [True] * len(layout.nonlinear_names))
    notes.insert(0, ("per-joint weights 1/noise_std as given" if given else
                     "per-joint weights 1/sigma_j re-estimated from the residual") + "; covariance of all parameters "
                 "from the WLS of the problem linearised at the optimum (sandwich, residual-based noise levels)")
    est_notes = tuple(n for n in est.notes if not n.startswith("WLS: per-joint weights 1/noise_std"))
    return NonlinearFrictionResult(
        names=layout.names, values=_frozen(values), std=_frozen(std), covariance=_frozen(est.covariance),
        nonlinear=nonlinear, joint_names=problem.joint_names, requests=layout.requests, joints=joints,
        residual=_frozen(residual), sigma=_frozen(est.sigma), weights=_frozen(weights), estimate=est,
        converged=bool(converged), evaluations=int(evaluations), notes=tuple(notes) + est_notes,
    )


def _frozen(a) -> np.ndarray:
    a = np.array(a, dtype=float, copy=True)
    a.setflags(write=False)
    return a


_FRICTION_PREFIXES = ("fv", "fc", "f0")


def _joint_parameters(layout: _Layout, row: int) -> tuple[str, ...]:
    joint = layout.joint_names[row]
    base = [n for n in layout.linear_names if n in {f"{p}_{joint}" for p in _FRICTION_PREFIXES}]
    extra = [n for j in layout.joints if j.row == row for n in j.ripple_names + j.varying_names + j.nonlinear_names]
    return tuple(base + extra)


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
