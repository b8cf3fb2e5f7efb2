"""Does the estimate say the torques were measured with the wrong sign? (docs/security.md, "plausibility")

Friction dissipates: over a run, the power a joint's torque puts into its motion, mean(tau_j qd_j), is at least
what friction takes out, and the identified viscous and Coulomb coefficients are positive. A measurement whose
torque sign convention is the opposite of robid's (tau > 0 drives q positive) gives the reverse: negative power
and negative friction, with a fit as good as the right one (every parameter changes sign), so nothing else
complains. A joint whose viscous or Coulomb friction is negative by more than :data:`SIGMAS` standard deviations
while its mean power is negative gets a **warning**: a note in the record (the report shows it) and a warning
line on stderr. Not an error: robid cannot tell a flipped sign from a drive that really feeds energy in.
"""

from __future__ import annotations

import logging

import numpy as np

_log = logging.getLogger(__name__)

#: friction is called negative when it is below zero by more than this many standard deviations
SIGMAS = 2.0


def torque_sign_warnings(robot, datasets, names, values, std) -> list[str]:
    """The warning lines of the module docstring, one per joint that shows both signs of a flipped torque
    (``datasets``: the identification's data sets; ``names``, ``values``, ``std``: the base parameters)."""
    table = {str(n): (float(v), float(s)) for n, v, s in zip(names, values, std, strict=True)}
    power = _mean_power(datasets, robot.dof)
    out = []
    for j, joint in enumerate(robot.model.joints):
        negative = []
        for prefix, label in (("fv", "viscous"), ("fc", "Coulomb")):
            value, sigma = table.get(f"{prefix}_{joint.name}", (np.nan, np.nan))
            if np.isfinite(value) and value < -SIGMAS * (sigma if np.isfinite(sigma) else 0.0) and value < 0:
                negative.append(f"{label} {value:.4g}")
        if negative and power is not None and power[j] < 0:
            text = (f"joint {joint.name}: negative friction ({', '.join(negative)}) and negative mean power of the "
                    f"torque (mean tau*qd = {power[j]:.4g} W): the torque sign convention of the measurement looks "
                    "flipped (robid: a positive torque drives q positive); check the sign in the mapping file")
            out.append(text)
            _log.warning(text)
    return out


def _mean_power(datasets, dof: int) -> np.ndarray | None:
    """mean(tau_j qd_j) over every kept sample of the runs (processed signals), per joint."""
    total, count = np.zeros(dof), np.zeros(dof)
    for d in datasets:
        p = getattr(d, "processed", None)
        if p is None or p.tau.shape[1] < dof:
            continue
        keep = np.asarray(p.keep, dtype=bool)[:, :dof] if np.ndim(p.keep) == 2 else np.ones((len(p.t), dof), bool)
        product = np.where(keep, p.tau[:, :dof] * p.qd[:, :dof], 0.0)
        total += np.nansum(product, axis=0)
        count += keep.sum(axis=0)
    return None if not count.any() else total / np.maximum(count, 1)
