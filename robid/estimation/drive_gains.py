"""Drive gains (current-to-torque constants) from runs with and without a known payload.

Method (Mamedov et al. 2020, as used for the UR10e data set; shared/anchors/README.md A.1-1). The joint torque
is ``K_j i_j`` with an unknown gain ``K_j`` per joint. Without payload,

    K_j i_j(t) = [W_b(t) beta]_j + e_j(t)                                    (unloaded run)

and with a payload of known inertial parameters ``pi_p`` (known part) and possibly unknown ones ``pi_u``

    K_j i_j(t) = [W_b(t) beta]_j + [Y_u(t) pi_u]_j + tau_p,j(t) + e_j(t)      (loaded run)

where ``tau_p = Y_p pi_p`` is the torque of the known payload part (e.g. its mass alone, ``Y_mass * m``) and
``W_b`` the base regressor of the robot (friction columns included). The unknowns ``x = (K, beta, pi_u)`` enter
linearly:

    [ diag(i_u(t))   -W_b,u(t)      0      ] x = [ 0        ]
    [ diag(i_l(t))   -W_b,l(t)   -Y_u,l(t) ]     [ tau_p(t) ]

Without the payload term the system is homogeneous and ``(K, beta)`` is only known up to a common scale; the
known payload torque fixes that scale. It is solved by per-joint WLS (:func:`robid.estimation.estimators.wls`),
so the gains come with standard deviations. A joint whose torque the payload barely changes (e.g. a vertical
first axis, which feels the payload only through inertia) gets a poorly determined gain; ``fixed_gains`` moves
such a gain to the right-hand side (Mamedov et al. imposed ``K_1 >= 10``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.estimation.estimators import ols, wls
from robid.estimation.results import EstimationResult


@dataclass(frozen=True)
class DriveGainResult:
    joint_names: tuple[str, ...]
    gains: np.ndarray  # (dof,) N m / A (fixed ones as given)
    gains_std: np.ndarray  # (dof,) 0 for fixed gains
    fixed: tuple[bool, ...]
    base_values: np.ndarray
    payload_values: np.ndarray  # unknown payload parameters, if any
    estimate: EstimationResult  # the stacked problem, all unknowns
    notes: tuple[str, ...] = ()


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
    method: str = "wls",
) -> DriveGainResult:
    """Identify drive gains ``K`` together with the base parameters (equations in the module docstring).

    Shapes: ``W_*`` (N_*, dof, nb) base regressors of the two runs; ``current_*`` (N_*, dof) motor currents;
    ``payload_torque`` (N_l, dof) torque of the known payload part on the loaded run; ``payload_regressor``
    (N_l, dof, n_u) for unknown payload parameters; ``fixed_gains`` {joint index: gain}.
    """
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
    npay = Yu.shape[2]
    jn = tuple(joint_names) if joint_names is not None else tuple(str(j + 1) for j in range(dof))
    bn = tuple(base_names) if base_names is not None else tuple(f"beta{i}" for i in range(nb))
    pn = tuple(payload_names) if payload_names is not None else tuple(f"payload{i}" for i in range(npay))
    fixed = dict(fixed_gains or {})
    for j in fixed:
        if not 0 <= j < dof:
            raise RobidInputError(f"drive gains: fixed gain for joint index {j}, robot has {dof} joints")
    free = [j for j in range(dof) if j not in fixed]

    def current_block(i: np.ndarray) -> np.ndarray:
        n = i.shape[0]
        D = np.zeros((n, dof, dof))
        D[:, np.arange(dof), np.arange(dof)] = i
        return D

    Du, Dl = current_block(iu), current_block(il)
    X_u = np.concatenate([Du[:, :, free], -Wu, np.zeros((nu, dof, npay))], axis=2)
    X_l = np.concatenate([Dl[:, :, free], -Wl, -Yu], axis=2)
    y_u = np.zeros((nu, dof))
    y_l = tp.copy()
    for j, k in fixed.items():
        y_u[:, j] -= iu[:, j] * k
        y_l[:, j] -= il[:, j] * k
    X = np.concatenate([X_u, X_l], axis=0)
    y = np.concatenate([y_u, y_l], axis=0)
    names = tuple(f"K_{jn[j]}" for j in free) + bn + pn
    if method == "wls":
        est = wls(X, y, names)
    elif method == "ols":
        est = ols(X, y, names)
    else:
        raise RobidInputError(f"drive gains: method must be 'wls' or 'ols', got {method!r}")
    gains = np.zeros(dof)
    gstd = np.zeros(dof)
    for k, j in enumerate(free):
        gains[j] = est.values[k]
        gstd[j] = est.std[k]
    for j, v in fixed.items():
        gains[j] = v
    nf = len(free)
    notes = [
        "drive gains from loaded/unloaded runs: K i = W_b beta (+ Y_u pi_u + tau_payload on the loaded run), "
        f"stacked {method.upper()}"
    ]
    if fixed:
        notes.append("gains fixed (not estimated): " + ", ".join(f"K_{jn[j]} = {v:g}" for j, v in fixed.items()))
    if np.any(gains[free] <= 0):
        notes.append("non-positive gain estimated for: " + ", ".join(jn[j] for j in free if gains[j] <= 0))
    return DriveGainResult(
        joint_names=jn,
        gains=gains,
        gains_std=gstd,
        fixed=tuple(j in fixed for j in range(dof)),
        base_values=np.asarray(est.values[nf : nf + nb]),
        payload_values=np.asarray(est.values[nf + nb :]),
        estimate=est,
        notes=tuple(notes),
    )
