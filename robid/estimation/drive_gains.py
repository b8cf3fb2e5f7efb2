"""Drive gains (current-to-torque constants) from runs with and without a known payload.

Model (Mamedov et al. 2020, as used for the UR10e data set; shared/anchors/README.md A.1-1). The joint torque
is ``K_j i_j`` with an unknown gain ``K_j`` per joint. Without payload,

    K_j i_j(t) = f_j(t) = [W_b(t) beta]_j + e_j(t)                                   (unloaded run)

and with a payload whose inertial parameters are partly known (``tau_p = Y_p pi_p``, e.g. its mass alone:
``Y_mass * m``) and partly unknown (``pi_u``, e.g. its first moments and inertia),

    K_j i_j(t) = f_j(t) = [W_b(t) beta]_j + [Y_u(t) pi_u]_j + tau_p,j(t) + e_j(t)    (loaded run)

``W_b`` is the robot's base regressor (rotor and friction columns included). Without the known payload torque
the problem is homogeneous and ``(K, beta, pi_u)`` is known only up to a common scale; ``tau_p`` fixes it.

Two estimators:

* ``"output-error"`` (default): the measured quantity is the current, so fit
  ``i_j(t) = c_j f_j(t; beta, pi_u)`` with ``c_j = 1/K_j`` by Gauss-Newton, per-joint WLS at every step (the
  model is bilinear in ``c`` and ``(beta, pi_u)``), started from the equation-error solution. This is the
  maximum-likelihood estimate for independent Gaussian current noise per joint. ``std(K_j) = std(c_j)/c_j^2``
  (first-order).
* ``"equation-error"``: the linear stacked system in ``x = (K, beta, pi_u)`` of Mamedov et al. (their PC-OLS
  without constraints),

      [ diag(i_u(t))   -W_b,u(t)      0      ] x = [ 0        ]
      [ diag(i_l(t))   -W_b,l(t)   -Y_u,l(t) ]     [ tau_p(t) ]

  solved by per-joint WLS. The noisy currents sit in the regressor (errors in variables), which biases ``K``
  towards zero, badly so for joints with small currents (on the UR10e runs the wrist gains come out 2-3x too
  small). Kept as the starting point and for comparison.

A joint on which the known payload part produces no torque (e.g. a payload mass at the flange origin seen by a
wrist axis through that origin) gets its scale only through the shared unknown payload parameters, and a joint
whose torque the payload barely changes gets a poorly determined gain; ``fixed_gains`` moves such a gain out of
the unknowns (Mamedov et al. imposed ``K_1 >= 10``). The standard deviations cover measurement noise under the
model; filtering, unmodelled dynamics and the choice of runs move real-data gains by more (see
docs/estimation.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.estimators import wls
from robid.estimation.results import EstimationResult

METHODS = ("output-error", "equation-error")


@dataclass(frozen=True)
class DriveGainResult:
    method: str
    joint_names: tuple[str, ...]
    gains: np.ndarray  # (dof,) N m / A (fixed ones as given)
    gains_std: np.ndarray  # (dof,) 0 for fixed gains
    fixed: tuple[bool, ...]
    base_values: np.ndarray
    payload_values: np.ndarray  # unknown payload parameters, if any
    estimate: EstimationResult  # all unknowns (free gains, base, payload) with their covariance
    converged: bool
    iterations: int
    notes: tuple[str, ...] = ()


def _current_block(i: np.ndarray) -> np.ndarray:
    n, dof = i.shape
    D = np.zeros((n, dof, dof))
    D[:, np.arange(dof), np.arange(dof)] = i
    return D


@dataclass(frozen=True, eq=False)
class _Runs:
    """The two runs as float arrays (shapes in :func:`identify_drive_gains`); ``Yu`` has 0 columns if unused."""

    Wu: np.ndarray
    iu: np.ndarray
    Wl: np.ndarray
    il: np.ndarray
    tp: np.ndarray
    Yu: np.ndarray

    @staticmethod
    def checked(W_unloaded, current_unloaded, W_loaded, current_loaded, payload_torque, payload_regressor) -> _Runs:
        """The arrays of :func:`identify_drive_gains`, their shapes checked against each other."""
        Wu = np.asarray(W_unloaded, dtype=float)
        Wl = np.asarray(W_loaded, dtype=float)
        iu = np.asarray(current_unloaded, dtype=float)
        il = np.asarray(current_loaded, dtype=float)
        tp = np.asarray(payload_torque, dtype=float)
        if Wu.ndim != 3 or Wl.ndim != 3 or Wu.shape[1:] != Wl.shape[1:]:
            raise RobidInputError(f"drive gains: regressors {Wu.shape} and {Wl.shape} must be (N, dof, nb) alike")
        nu, dof, nb = Wu.shape
        nl = Wl.shape[0]
        if iu.shape != (nu, dof) or il.shape != (nl, dof) or tp.shape != (nl, dof):
            raise RobidInputError(
                f"drive gains: currents {iu.shape}, {il.shape} and payload torque {tp.shape} must match the regressors"
            )
        if payload_regressor is not None:
            Yu = np.asarray(payload_regressor, dtype=float)
            if Yu.ndim != 3 or Yu.shape[:2] != (nl, dof):
                raise RobidInputError(f"drive gains: payload regressor {Yu.shape}, expected ({nl}, {dof}, n)")
        else:
            Yu = np.zeros((nl, dof, 0))
        return _Runs(Wu, iu, Wl, il, tp, Yu)


def identify_drive_gains(
    W_unloaded: np.ndarray,
    current_unloaded: np.ndarray,
    W_loaded: np.ndarray,
    current_loaded: np.ndarray,
    payload_torque: np.ndarray,
    *,
    payload_regressor: np.ndarray | None = None,
    joint_names: Sequence[str] | None = None,
    base_names: Sequence[str] | None = None,
    payload_names: Sequence[str] | None = None,
    fixed_gains: Mapping[int, float] | None = None,
    method: str = "output-error",
    max_iterations: int = 50,
    tol: float = 1e-3,
) -> DriveGainResult:
    """Identify drive gains ``K`` together with the base parameters (equations in the module docstring).

    Output error iterates until every Gauss-Newton step is below ``tol`` standard deviations of its unknown.
    Shapes: ``W_*`` (N_*, dof, nb) base regressors of the two runs; ``current_*`` (N_*, dof) motor currents;
    ``payload_torque`` (N_l, dof) torque of the known payload part on the loaded run; ``payload_regressor``
    (N_l, dof, n_u) for unknown payload parameters; ``fixed_gains`` {joint index: gain}.
    """
    runs = _Runs.checked(W_unloaded, current_unloaded, W_loaded, current_loaded, payload_torque, payload_regressor)
    if method not in METHODS:
        raise RobidInputError(f"drive gains: method must be one of {METHODS}, got {method!r}")
    _, dof, nb = runs.Wu.shape
    npay = runs.Yu.shape[2]
    jn = tuple(joint_names) if joint_names is not None else tuple(str(j + 1) for j in range(dof))
    bn = tuple(base_names) if base_names is not None else tuple(f"beta{i}" for i in range(nb))
    pn = tuple(payload_names) if payload_names is not None else tuple(f"payload{i}" for i in range(npay))
    fixed = {int(j): float(v) for j, v in (fixed_gains or {}).items()}
    for j, v in fixed.items():
        if not 0 <= j < dof or v <= 0:
            raise RobidInputError(f"drive gains: fixed gain {v} for joint index {j} (robot has {dof} joints)")
    free = [j for j in range(dof) if j not in fixed]
    names = tuple(f"K_{jn[j]}" for j in free) + bn + pn
    eq = _equation_error(runs, fixed, free, names)
    notes = []
    if fixed:
        notes.append("gains fixed (not estimated): " + ", ".join(f"K_{jn[j]} = {v:g}" for j, v in fixed.items()))
    if method == "equation-error":
        est, converged, iterations = eq, eq.converged, 1
        notes.insert(
            0,
            "drive gains by equation error (stacked linear WLS in K, beta, pi_u); biased towards 0 "
            "when the currents are noisy",
        )
    else:
        est, converged, iterations, gn_notes = _output_error(runs, fixed, free, eq, names, max_iterations, tol)
        notes.insert(
            0,
            "drive gains by output error (Gauss-Newton on i_j = f_j / K_j, per-joint WLS), "
            "started from the equation-error solution",
        )
        notes.extend(gn_notes)
    return _result(method, jn, est, fixed, free, nb, converged, iterations, notes)


def _equation_error(runs: _Runs, fixed: dict[int, float], free: list[int], names: tuple[str, ...]) -> EstimationResult:
    """The stacked linear system of the module docstring in ``(K_free, beta, pi_u)``, by two-step WLS; fixed
    gains move their current terms to the right-hand side."""
    nu, dof, _ = runs.Wu.shape
    no_payload = np.zeros((nu, dof, runs.Yu.shape[2]))
    X = np.concatenate(
        [
            np.concatenate([_current_block(runs.iu)[:, :, free], -runs.Wu, no_payload], axis=2),
            np.concatenate([_current_block(runs.il)[:, :, free], -runs.Wl, -runs.Yu], axis=2),
        ]
    )
    y = np.concatenate([np.zeros((nu, dof)), runs.tp])
    for j, k in fixed.items():
        y[:nu, j] -= runs.iu[:, j] * k
        y[nu:, j] -= runs.il[:, j] * k
    return wls(X, y, names, steps=2)  # iterating the weights lets a zero-gain joint collapse to zero residual


def _result(method, joint_names, est, fixed, free, nb, converged, iterations, notes) -> DriveGainResult:
    """Gains of all joints (fixed ones as given, std 0) and the split of the unknowns into base and payload;
    ``notes`` so far, followed in the result by the gains' own."""
    dof = len(joint_names)
    nf = len(free)
    gains = np.zeros(dof)
    gstd = np.zeros(dof)
    gains[free] = est.values[:nf]
    gstd[free] = est.std[:nf]
    for j, v in fixed.items():
        gains[j] = v
    if np.any(gains[free] <= 0):
        notes = (*notes, "non-positive gain estimated for: " + ", ".join(joint_names[j] for j in free if gains[j] <= 0))
    return DriveGainResult(
        method=method,
        joint_names=joint_names,
        gains=gains,
        gains_std=gstd,
        fixed=tuple(j in fixed for j in range(dof)),
        base_values=np.asarray(est.values[nf : nf + nb]),
        payload_values=np.asarray(est.values[nf + nb :]),
        estimate=est,
        converged=converged,
        iterations=iterations,
        notes=tuple(notes),
    )


def _output_error(runs: _Runs, fixed, free, eq, names, max_iterations, tol):
    """Gauss-Newton on ``i_j = c_j f_j(beta, pi_u)``, ``c_j = 1/K_j`` (module docstring), per-joint WLS on every
    linearisation, started from the equation-error solution ``eq``; the covariance of the last linearisation is
    mapped to ``K`` by ``dK = -dc / c^2``. Returns (estimate, converged, iterations, notes)."""
    Wu, iu, Wl, il, tp, Yu = runs.Wu, runs.iu, runs.Wl, runs.il, runs.tp, runs.Yu
    nu, dof, nb = Wu.shape
    npay = Yu.shape[2]
    nf = len(free)
    W = np.concatenate([Wu, Wl])
    Y = np.concatenate([np.zeros((nu, dof, npay)), Yu])
    T = np.concatenate([np.zeros((nu, dof)), tp])
    current = np.concatenate([iu, il])
    c = np.empty(dof)
    for j, v in fixed.items():
        c[j] = 1.0 / v
    k0 = np.asarray(eq.values[:nf])
    if np.any(k0 <= 0):
        raise RobidInputError("drive gains: the equation-error start has a non-positive gain; fix that joint's gain")
    c[free] = 1.0 / k0
    theta = np.asarray(eq.values[nf:], dtype=float).copy()  # (beta, pi_u)
    M = np.concatenate([W, Y], axis=2)
    converged, it, notes = False, 0, []

    def linearise():
        f = M @ theta + T
        r = current - c * f
        sigma = np.sqrt(np.mean(r**2, axis=0))
        sigma = np.maximum(sigma, 1e-12 * max(float(sigma.max()), 1e-300))
        J = np.concatenate([_current_block(f)[:, :, free], c[None, :, None] * M], axis=2)
        return wls(J, r, noise_std=sigma), r

    for iteration in range(1, max_iterations + 1):
        it = iteration
        lin, _ = linearise()
        d = np.asarray(lin.values)
        c[free] += d[:nf]
        theta += d[nf:]
        if np.max(np.abs(d) / lin.std) < tol:  # steps far below one standard deviation
            converged = True
            break
    if not converged:
        notes.append(f"Gauss-Newton did not converge in {max_iterations} iterations")
    lin, residual = linearise()  # covariance at the solution
    # covariance of (c_free, theta) from the last linearisation, mapped to (K_free, theta): dK = -dc / c^2
    Tm = np.eye(nf + nb + npay)
    Tm[np.arange(nf), np.arange(nf)] = -1.0 / c[free] ** 2
    est = lin.with_estimate(
        np.concatenate([1.0 / c[free], theta]),
        Tm @ np.asarray(lin.covariance) @ Tm.T,
        method="drive-gains-output-error",
        names=names,
        residual=residual,
        notes=("residual and sigma are in current units (A)", *lin.notes),
        converged=converged and lin.converged,
        iterations=it,
    )
    return est, converged, it, notes
