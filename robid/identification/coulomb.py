"""Coulomb friction near zero velocity: the sign of a noisy velocity, smoothed by its noise.

The regressor column of a Coulomb parameter is ``sign(qd)``. With the processed velocity ``v = qd + n``, n the
noise left after filtering and differentiation (standard deviation ``s``, estimated by the signal stage:
``NoiseEstimate.qd_std_processed``), the sign of the true velocity is unknown where |v| is a few ``s``: near a
reversal or at rest ``sign(v)`` jumps between -1 and +1 from sample to sample, and so do the regressor row and
the predicted torque (chatter). The expected sign of the true velocity given the measured one, for Gaussian noise
and a flat prior on the velocity, is

    E[sign(qd) | v] = erf(v / (sqrt(2) s)),

equal to sign(v) within 1e-4 beyond 4 s, linear through zero with slope sqrt(2/pi) / s inside. robid uses it in
place of ``sign(qd)`` for every Coulomb base parameter that stands alone (``fc_J``), at identification and at
prediction (``ProcessingSettings.coulomb = "noise"``; ``"sign"`` keeps the plain sign). The width is the noise
of the run at hand, not a tuned constant; where the noise estimate is zero or missing, the plain sign is used.

When the measurement carries the controller's own velocity (a mapping's ``velocities:``), ``v`` is that velocity
and ``s`` its noise (robid.signals.measured_velocity): computed from the motor encoder, it is exactly zero at rest,
where the differentiated positions carry the quantisation noise of the log. ``"differentiated"`` keeps the
processed velocity even then (the choice robid made before it read the measured velocity; for comparisons).
A coupled drive (docs/model.md, "Coupled drives": motor J also turns with joint K, velocity v = qd_J + rho qd_K
in joint-J units) has its Coulomb parameter ``fcm_J`` on the column sign(v) in row J and rho sign(v) in row K; it
gets the same treatment with the velocity v and s_v = sqrt(s_J^2 + rho^2 s_K^2), the noise of v for independent
velocity noises of the two joints (an upper bound when the joint velocities come from the motor encoders
through the coupling, where v is one motor's velocity).
Physical pre-sliding or Stribeck behaviour is not modelled here (see docs/estimation.md).
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf

from robid.defaults import COULOMB_MODELS  # noqa: F401 -- re-exported (robid.defaults: one definition)
from robid.model.terms import standalone_parameters


def expected_sign(v: np.ndarray, s: float) -> np.ndarray:
    """``erf(v / (sqrt(2) s))``: E[sign(qd) | v] for Gaussian velocity noise of std ``s`` (module docstring)."""
    v = np.asarray(v, dtype=float)
    if not (s is not None and np.isfinite(s) and s > 0):
        return np.sign(v)
    return erf(v / (np.sqrt(2.0) * s))


def smooth_coulomb_columns(
    W: np.ndarray, base, joint_names, qd: np.ndarray, qd_noise, source: str = "the processed velocity",
    couplings=(), copy: bool = True,
) -> tuple[np.ndarray, str]:
    """The base regressor ``W`` (N, dof, nb) with the column of every standalone Coulomb parameter ``fc_J``
    replaced, in joint J's row, by the expected sign (:func:`expected_sign`) of the velocity ``qd`` (N, dof) with
    joint J's noise std ``qd_noise[J]``, and that of every standalone ``fcm_J`` of a coupled drive
    (``couplings``: (J, K, rho), ``RobotModel.drive_couplings``) by the expected sign of qd_J + rho qd_K in row J
    and rho times it in row K (module docstring); ``source`` names the velocity for the account; (regressor, one
    line for the processing account); ``copy=False``: ``W`` (a float array nobody else holds) is changed in
    place."""
    W = np.array(W, dtype=float, copy=True) if copy else np.asarray(W, dtype=float)
    done, plain = [], []
    for j, k, rho, col in coulomb_entries(base, joint_names, couplings):
        if k is None:
            s = qd_noise[j] if j < len(qd_noise) else None
            W[:, j, col] = expected_sign(qd[:, j], s)
            label = joint_names[j]
        else:
            s = _coupled_noise(qd_noise, j, k, rho)
            sign = expected_sign(qd[:, j] + rho * qd[:, k], s)
            W[:, j, col] = sign
            W[:, k, col] = rho * sign
            label = f"{base.names[col]} (v = qd_{joint_names[j]} + {rho:g} qd_{joint_names[k]})"
        (done if s is not None and np.isfinite(s) and s > 0 else plain).append(f"{label} {s:.3g}" if s else label)
    parts = []
    if done:
        parts.append(f"Coulomb columns erf(v / (sqrt 2 s)), v {source}, s its noise: " + ", ".join(done))
    if plain:
        parts.append(f"plain sign(v) of {source} (no noise estimate): " + ", ".join(plain))
    return W, "; ".join(parts)


def coulomb_entries(base, joint_names, couplings=()) -> list[tuple[int, int | None, float, int]]:
    """The Coulomb columns that stand alone, as (J, K or None, rho, column): ``fc_J`` on qd_J in row J, and a
    coupled drive's ``fcm_J`` on qd_J + rho qd_K in rows J and K (module docstring)."""
    entries: list[tuple[int, int | None, float, int]] = []
    for j, joint in enumerate(joint_names):
        idx = [k for k in standalone_parameters(base.names, base.expressions, joint, "friction")
               if base.names[k] == f"fc_{joint}"]
        if idx:
            entries.append((j, None, 1.0, idx[0]))
    alone = {n for n, e in zip(base.names, base.expressions, strict=True) if "".join(e.split()) == n}
    for j, k, rho in couplings:
        name = f"fcm_{joint_names[j]}"
        if name in alone:
            entries.append((j, k, float(rho), base.names.index(name)))
    return entries


def _coupled_noise(qd_noise, j: int, k: int, rho: float) -> float | None:
    """sqrt(s_J^2 + rho^2 s_K^2), the noise std of qd_J + rho qd_K (module docstring); None without both."""
    if max(j, k) >= len(qd_noise):
        return None
    sj, sk = qd_noise[j], qd_noise[k]
    if not all(s is not None and np.isfinite(s) and s > 0 for s in (sj, sk)):
        return None
    return float(np.hypot(sj, rho * sk))
