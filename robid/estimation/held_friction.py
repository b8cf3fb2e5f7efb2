"""Held friction: the torque a joint's drive holds while the joint stands still (arrays only).

A joint held still (robid.identification.friction_fit.held_still_rows: slower than 0.01 rad/s for 0.5 s or more)
is stuck by static friction, which takes whatever the drive applies beyond the rigid-body torque, within +-fs.
What the drive applies is set by how the joint stopped: a drive with an integrating velocity or position loop keeps
the torque that pushed the joint through its friction during the last motion, and its integrator winds that torque
down while the position error stays inside the friction band. The held torque is therefore a function of the
motion's history, not of the velocity (Armstrong-Helouvry, Dupont and Canudas de Wit, "A survey of models, analysis
tools and compensation methods for the control of machines with friction", Automatica 30(7), 1994, section 2.2
(presliding displacement, stiction) and section 4 (integral control: hunting and the torque left at rest)).

Per joint J, during a hold that began at t0 after a motion in direction d = sign of the displacement over the last
:data:`DIRECTION_WINDOW_S` before it (d = 0 when the record starts at rest: its history is unknown), with the
velocity friction off (the joint at rest: v = 0, Coulomb sign 0):

    none      tau_held = 0
    constant  tau_held = h_J d                                  (the held part of the last motion's friction)
    decay     tau_held = h_J d exp(-(t - t0) / T_J)             (and that part wound down by the integrator)

h_J = a_J fc_J is a fraction a_J of the joint's Coulomb torque. The parameters are fitted to the residual of the
model without held friction on the held rows (h linear, T by a bounded scalar search on log T: variable
projection, Golub and Pereyra 2003); their std from the Gauss-Newton covariance s^2 (J^T J)^-1 (rows correlated by
the filter: a lower bound). Selection per joint as the friction selection does (robid.estimation.
friction_model_selection): on held-out holds the lowest RMS, a model with more parameters only when lower by more
than :data:`HELD_OUT_TOLERANCE`; else the lowest BIC, more parameters only when lower by more than
:data:`BIC_MARGIN` (Kass and Raftery 1995).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

HELD_MODELS = ("none", "constant", "decay")
PARAMETER_COUNT = {"none": 0, "constant": 1, "decay": 2}
#: the displacement over this span before a hold gives the direction of the last motion (s)
DIRECTION_WINDOW_S = 0.3
#: bounds of the decay time constant searched (s)
TIME_CONSTANT_BOUNDS = (0.02, 1000.0)
HELD_OUT_TOLERANCE = 0.005
BIC_MARGIN = 10.0


@dataclass(frozen=True, eq=False)
class HoldRows:
    """One joint's held rows stacked over runs: ``residual`` (measured minus the model at rest, N m), the direction
    ``d`` of the last motion (+-1; rows with an unknown direction left out) and the time ``elapsed`` since the hold
    began (s); ``holds`` how many holds they come from."""

    residual: np.ndarray
    direction: np.ndarray
    elapsed: np.ndarray
    holds: int

    @classmethod
    def stacked(cls, parts: Sequence[HoldRows]) -> HoldRows:
        parts = list(parts)
        if not parts:
            return cls(np.zeros(0), np.zeros(0), np.zeros(0), 0)
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("residual", "direction", "elapsed")),
                   sum(p.holds for p in parts))


@dataclass(frozen=True)
class HeldFit:
    """One candidate on one joint: amplitude h (N m) and time constant T (s; None unless decay) with their std,
    residual sum of squares, rows, parameter count, BIC, held-out RMS (None without held-out holds)."""

    model: str
    amplitude: float
    amplitude_std: float | None
    time_constant: float | None
    time_constant_std: float | None
    rss: float
    rows: int
    parameters: int
    bic: float | None
    validation_rms: float | None = None


def hold_features(t: np.ndarray, v: np.ndarray, held: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(direction, elapsed, hold index) (N, dof) on one run: for every held row, the direction of the last motion
    before its hold (0 when the hold starts the record or no displacement precedes it), the time since the hold
    began, and the hold's number (-1 off holds)."""
    t = np.asarray(t, dtype=float)
    v = np.asarray(v, dtype=float)
    held = np.asarray(held, dtype=bool)
    direction = np.zeros(v.shape)
    elapsed = np.zeros(v.shape)
    index = np.full(v.shape, -1, dtype=int)
    dt = np.diff(t, prepend=t[0]) if t.size else t
    count = 0
    for j in range(v.shape[1]):
        edges = np.diff(np.concatenate([[0], held[:, j].astype(np.int8), [0]]))
        for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
            before = (t >= t[a] - DIRECTION_WINDOW_S) & (np.arange(t.size) < a)
            direction[a:b, j] = np.sign(np.sum(v[before, j] * dt[before]))
            elapsed[a:b, j] = t[a:b] - t[a]
            index[a:b, j] = count
            count += 1
    return direction, elapsed, index


def held_torque(model: str, amplitude: float, time_constant: float | None, direction, elapsed) -> np.ndarray:
    """tau_held of the module docstring."""
    d = np.asarray(direction, dtype=float)
    if model == "none":
        return np.zeros_like(d)
    if model == "constant":
        return amplitude * d
    if model == "decay":
        if time_constant is None:  # not fitted (no rows): no held torque
            return np.zeros_like(d)
        return amplitude * d * np.exp(-np.asarray(elapsed, dtype=float) / time_constant)
    raise ValueError(f"held friction model: expected one of {', '.join(HELD_MODELS)}, got {model!r}")


def fit_held(rows: HoldRows, model: str) -> HeldFit:
    """Least-squares fit of ``model`` to one joint's held rows (module docstring)."""
    r, d, e = rows.residual, rows.direction, rows.elapsed
    n = r.size
    k = PARAMETER_COUNT[model]
    if model == "none" or n <= k:
        rss = float(np.sum(r**2))
        return HeldFit("none" if model == "none" else model, 0.0, None, None, None, rss, n, k, _bic(rss, n, k))

    def amplitude_rss(log_t: float) -> tuple[float, float]:
        g = d * (np.exp(-e / np.exp(log_t)) if model == "decay" else 1.0)
        gg = float(np.sum(g * g))
        h = float(np.sum(g * r)) / gg if gg > 0 else 0.0
        return h, float(np.sum((r - h * g) ** 2))

    log_t = None
    if model == "decay":
        lo, hi = np.log(TIME_CONSTANT_BOUNDS)
        grid = np.linspace(lo, hi, 41)
        best = int(np.argmin([amplitude_rss(x)[1] for x in grid]))
        a, b = grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)]
        log_t = float(minimize_scalar(lambda x: amplitude_rss(x)[1], bounds=(a, b), method="bounded",
                                      options={"xatol": 1e-6}).x)
    h, rss = amplitude_rss(0.0 if log_t is None else log_t)
    T = None if log_t is None else float(np.exp(log_t))
    h_std, T_std = _stds(model, h, T, d, e, rss, n)
    return HeldFit(model, h, h_std, T, T_std, rss, n, k, _bic(rss, n, k))


def _stds(model: str, h: float, T: float | None, d, e, rss: float, n: int):
    """Gauss-Newton std of h and T: s^2 (J^T J)^-1 with s^2 = rss / (n - k)."""
    k = PARAMETER_COUNT[model]
    if n <= k:
        return None, None
    s2 = rss / (n - k)
    if model == "constant":
        J = d[:, None].astype(float)
    else:
        g = d * np.exp(-e / T)
        J = np.column_stack([g, h * g * e / T**2])
    try:
        C = s2 * np.linalg.inv(J.T @ J)
    except np.linalg.LinAlgError:
        return None, None
    std = np.sqrt(np.clip(np.diag(C), 0.0, None))
    return float(std[0]), (float(std[1]) if model == "decay" else None)


def _bic(rss: float, n: int, k: int) -> float | None:
    if n == 0 or rss <= 0:
        return None
    return float(n * np.log(rss / n) + k * np.log(n))


def validation_rms(fit: HeldFit, rows: HoldRows) -> float | None:
    """RMS of the held-out rows' residual after ``fit``'s held torque (None without rows)."""
    if rows.residual.size == 0:
        return None
    pred = held_torque(fit.model, fit.amplitude, fit.time_constant, rows.direction, rows.elapsed)
    return float(np.sqrt(np.mean((rows.residual - pred) ** 2)))


def select_held(rows: HoldRows, validation: HoldRows | None = None,
                candidates: Sequence[str] = HELD_MODELS) -> tuple[HeldFit, tuple[HeldFit, ...], str]:
    """(chosen fit, every candidate's fit, criterion) on one joint: by the held-out RMS when ``validation`` has
    rows, else by BIC (module docstring); candidates in order of parameter count."""
    order = sorted(candidates, key=PARAMETER_COUNT.__getitem__)
    # a candidate with no more rows than parameters is not fitted and never chosen (no held torque)
    order = [m for m in order if m == order[0] or rows.residual.size > PARAMETER_COUNT[m]]
    fits = [fit_held(rows, m) for m in order]
    if validation is not None and validation.residual.size:
        fits = [HeldFit(**{**f.__dict__, "validation_rms": validation_rms(f, validation)}) for f in fits]
        chosen = fits[0]
        for f in fits[1:]:
            if f.validation_rms < chosen.validation_rms * (1.0 - HELD_OUT_TOLERANCE):
                chosen = f
        return chosen, tuple(fits), "validation"
    chosen = fits[0]
    for f in fits[1:]:
        if f.bic is not None and (chosen.bic is None or f.bic < chosen.bic - BIC_MARGIN):
            chosen = f
    return chosen, tuple(fits), "bic"
