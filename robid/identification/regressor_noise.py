"""The noise the processed accelerations carry into the base regressor, for the errors-in-variables estimate
(robid.estimation.errors_in_variables, ``--method eiv``).

The base regressor is linear in the accelerations: ``Y(q, qd, qdd) = Y(q, qd, 0) + sum_k J_k(q) qdd_k`` with
``J_k(q) = Y(q, 0, e_k) - Y(q, 0, 0)`` (joint k's unit acceleration; the Coulomb and offset columns cancel).
Noise delta_k on the processed acceleration of joint k (standard deviation ``s_k`` =
``NoiseEstimate.qdd_std_processed``, independent between joints) puts ``D_t = sum_k J_k(q_t) delta_k(t)`` into
sample t's rows, so joint row j's noise Gram matrix is ``S_j = sum_t sum_k s_k^2 J_k(q_t)[j]^T J_k(q_t)[j]`` over
its used rows. Only the per-sample variance enters, so the correlation of delta over time (spectral
differentiation in a band) does not matter -- as long as the regressor is not filtered again: the periodic paths
with the torque band ``all`` (period averaging only). Velocity noise is left out (1e3-1e5 times smaller relative
to the motion, docs/estimation.md "Errors in the regressor").
"""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.identification.datasets import DataSet


def regressor_noise_gram(robot, dataset: DataSet, torque_band: str) -> np.ndarray:
    """(dof, nb, nb): per joint row, the Gram matrix of the regressor noise over its used rows (module
    docstring)."""
    processed = dataset.processed
    if robot.motor_joints or dataset.reconstructed_link:
        raise RobidInputError("--method eiv: the elastic layout and motor-encoder-only runs are not supported")
    if processed.mode not in ("periodic", "periodic-samples") or torque_band != "all":
        raise RobidInputError(
            f"{dataset.source}: --method eiv needs the periodic path with torque band 'all' (the regressor must not "
            f"be filtered again after differentiation); this run is {processed.mode} with torque band {torque_band}"
        )
    q = np.asarray(processed.q, dtype=float)
    n, dof = q.shape
    s = np.asarray(processed.noise.qdd_std_processed, dtype=float)
    base = robot.base_parameters()
    zero = np.zeros_like(q)
    Y0 = base.regressor(q, zero, zero)
    keep = np.asarray(processed.keep, dtype=bool)
    nb = Y0.shape[2]
    gram = np.zeros((dof, nb, nb))
    for k in range(dof):
        if not (np.isfinite(s[k]) and s[k] > 0):
            continue
        unit = zero.copy()
        unit[:, k] = 1.0
        J = (base.regressor(q, zero, unit) - Y0) * keep[:, :, None]
        gram += s[k] ** 2 * np.einsum("tjp,tjq->jpq", J, J)
    return gram
