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
Physical pre-sliding or Stribeck behaviour is not modelled here (see docs/estimation.md).
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf

from robid.model.terms import standalone_parameters

COULOMB_MODELS = ("noise", "differentiated", "sign")


def expected_sign(v: np.ndarray, s: float) -> np.ndarray:
    """``erf(v / (sqrt(2) s))``: E[sign(qd) | v] for Gaussian velocity noise of std ``s`` (module docstring)."""
    v = np.asarray(v, dtype=float)
    if not (s is not None and np.isfinite(s) and s > 0):
        return np.sign(v)
    return erf(v / (np.sqrt(2.0) * s))


def smooth_coulomb_columns(
    W: np.ndarray, base, joint_names, qd: np.ndarray, qd_noise, source: str = "the processed velocity"
) -> tuple[np.ndarray, str]:
    """The base regressor ``W`` (N, dof, nb) with the column of every standalone Coulomb parameter ``fc_J``
    replaced, in joint J's row, by the expected sign (:func:`expected_sign`) of the velocity ``qd`` (N, dof) with
    joint J's noise std ``qd_noise[J]``; ``source`` names the velocity for the account; (regressor, one line for
    the processing account)."""
    W = np.array(W, dtype=float, copy=True)
    done, plain = [], []
    for j, joint in enumerate(joint_names):
        idx = [k for k in standalone_parameters(base.names, base.expressions, joint, "friction")
               if base.names[k] == f"fc_{joint}"]
        if not idx:
            continue
        s = qd_noise[j] if j < len(qd_noise) else None
        W[:, j, idx[0]] = expected_sign(qd[:, j], s)
        (done if s is not None and np.isfinite(s) and s > 0 else plain).append(f"{joint} {s:.3g}" if s else joint)
    parts = []
    if done:
        parts.append(f"Coulomb columns erf(v / (sqrt 2 s)), v {source}, s its noise: " + ", ".join(done))
    if plain:
        parts.append(f"plain sign(v) of {source} (no noise estimate): " + ", ".join(plain))
    return W, "; ".join(parts)
