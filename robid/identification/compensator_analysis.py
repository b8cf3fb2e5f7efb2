"""Gravity compensator identifiability on an identification (robid.identification.Identification):
collinearity report (recorded in RESULT.json's ``compensator``), re-estimation with datasheet values held fixed,
gas-cylinder nonlinear refinement.

The numerics are in :mod:`robid.estimation.compensator` (arrays only) and the physics in
:mod:`robid.model.compensator`; this module supplies what needs the robot and the processed data sets:

* the partners of every compensator parameter: the base parameters that act at standstill in the compensator's joint
  row. They are found numerically from the static base regressor ``W(q, 0, 0)`` at random poses inside the
  joint limits: a column that is non-zero in that row is a partner, of kind ``offset`` when constant over the
  poses, ``compensator`` for another compensator parameter, ``gravity`` otherwise (Coulomb columns vanish at
  qd = 0). ``static_correlation`` is the (uncentred) multiple correlation of the compensator column with its
  gravity and offset partners' columns over those poses: how much of the compensator torque, as a function of the
  pose alone, gravity terms can imitate (1.000 for a spring's stiffness column on an axis-2 compensator anchored on
  a body that does not tilt: there only the dynamics separate the two);
* the compensator column of a gas cylinder for any geometry, evaluated on every data set's processed joint angle
  and passed through the same filter as the regressor (parallel filtering), for the nonlinear refinement, and
  the physical region of that geometry (positive gas volume over the recorded stroke).

Values and covariance are those of the unconstrained estimate (``result.estimate``), whatever method produced
the reported values. See docs/compensator.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from robid.defaults import IRLS, OLS, WLS
from robid.errors import RobidInputError
from robid.estimation.compensator import (
    CollinearityReport,
    FixedEstimate,
    NonlinearRefinement,
    collinearity_report,
    fix_parameters,
    gas_cylinder_column,
    gas_volume_positive,
    refine_nonlinear_compensator,
)
from robid.model import compensator as physics
from robid.model.terms import COMPENSATOR_PREFIX


def compensator_parameters(names: Sequence[str]) -> list[str]:
    return [n for n in names if n.startswith(COMPENSATOR_PREFIX)]


def static_partners(
    robot, samples: int = 64, seed: int = 0
) -> tuple[dict[str, dict[str, str]], dict[str, str], dict[str, float]]:
    """({compensator parameter: {partner: kind}}, {compensator parameter: joint name}, {compensator parameter:
    static R}) for the base parameters of ``robot`` (module docstring)."""
    base = robot.base_parameters()
    names = list(base.names)
    comps = compensator_parameters(names)
    if not comps:
        return {}, {}, {}
    rng = np.random.default_rng(seed)
    lo, hi = [], []
    for joint in robot.model.joints:
        pos = joint.limits.position
        if pos is not None and np.all(np.isfinite(pos)):
            lo.append(pos[0])
            hi.append(pos[1])
        else:
            lo.append(-np.pi if joint.revolute else -0.5)
            hi.append(np.pi if joint.revolute else 0.5)
    q = rng.uniform(lo, hi, size=(samples, robot.dof))
    zero = np.zeros_like(q)
    motor = (q, zero, zero) if robot.motor_joints else None  # at rest, springs relaxed: the gravity rows alone
    W = base.regressor(q, zero, zero, motor=motor)[:, : robot.dof]  # (S, dof, nb): the link rows
    partners, joints, static = {}, {}, {}
    for comp in comps:
        c = names.index(comp)
        row = int(np.argmax(np.linalg.norm(W[:, :, c], axis=0)))
        cols = W[:, row, :]
        norms = np.linalg.norm(cols, axis=0)
        tol = 1e-9 * max(float(norms.max()), 1e-300)
        kinds: dict[str, str] = {}
        for k, name in enumerate(names):
            if k == c or norms[k] <= tol:
                continue
            if name.startswith(COMPENSATOR_PREFIX):
                kinds[name] = "compensator"
            elif np.ptp(cols[:, k]) <= 1e-12 * norms[k]:
                kinds[name] = "offset"
            else:
                kinds[name] = "gravity"
        partners[comp] = kinds
        joints[comp] = robot.joint_names[row]
        grav = [names.index(p) for p, kind in kinds.items() if kind in ("gravity", "offset")]
        if grav and norms[c] > 0:
            coef = np.linalg.lstsq(cols[:, grav], cols[:, c], rcond=None)[0]
            res = cols[:, c] - cols[:, grav] @ coef
            static[comp] = float(np.sqrt(max(0.0, 1.0 - (res @ res) / (cols[:, c] @ cols[:, c]))))
    return partners, joints, static


def compensator_report(
    result, threshold: float | None = None, partners: Mapping[str, Mapping[str, str]] | None = None
) -> CollinearityReport | None:
    """Collinearity report of every compensator parameter of an Identification (None without a compensator).

    ``threshold`` defaults to the identification's correlation threshold (0.95); ``partners`` overrides the
    static partners (e.g. to test a compensator parameter against inertia parameters too).
    """
    names = list(result.estimate.names)
    if not compensator_parameters(names):
        return None
    found, joints, static = static_partners(result.robot)
    th = result.identifiability.thresholds.correlation_threshold if threshold is None else float(threshold)
    est = result.estimate
    notes = [
        f"values and covariance of the unconstrained {est.method} estimate",
        "static_correlation: multiple correlation of the compensator column with the gravity and offset columns of "
        "its joint over random poses inside the limits (1 = gravity terms can imitate it at standstill; only the "
        "dynamics separate them)",
    ]
    return collinearity_report(
        est.covariance,
        names,
        est.values,
        found if partners is None else partners,
        threshold=th,
        joints=joints,
        static_correlation=static,
        notes=notes,
    )


# ------------------------------------------------------------------------------- fixing one side, refinement


def _stacked(result) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.concatenate([d.W for d in result.datasets]),
        np.concatenate([d.tau for d in result.datasets]),
    )


def _estimator(method: str) -> str:
    return IRLS if method.startswith(IRLS) else method if method in (OLS, WLS) else WLS


def fix_result_parameters(
    result, fixed: Mapping[str, float], fixed_std: Mapping[str, float] | None = None
) -> FixedEstimate:
    """Re-estimate an identification result's data with ``fixed`` base parameters held at the given (datasheet)
    values, with the estimator of the result (``consistent`` -> its WLS step)."""
    W, tau = _stacked(result)
    return fix_parameters(
        W,
        tau,
        result.estimate.names,
        fixed,
        method=_estimator(result.estimate.method),
        fixed_std=fixed_std,
        free=result.estimate,
    )


def gas_joint(model, joint: str | None = None):
    """(index, Joint) of the gas-cylinder compensator (the only one, or the named joint)."""
    found = [(i, j) for i, j in enumerate(model.joints) if j.compensator is not None and j.compensator.type == "gas"]
    if joint is not None:
        found = [(i, j) for i, j in found if j.name == joint]
    if len(found) != 1:
        what = f"joint {joint}" if joint else "the robot"
        raise RobidInputError(f"{what}: expected exactly one gas-cylinder compensator, found {len(found)}")
    return found[0]


def gas_geometry(compensator) -> dict[str, float]:
    return {k: float(getattr(compensator, k)) for k in ("area", "l0", "v0", "n")}


def gas_pressure(joint, q: np.ndarray, p0: float | None = None, geometry: Mapping[str, float] | None = None):
    """Gas pressure p(q) = p0 (v0 / (v0 - A (l(q) - l0)))^n [Pa] of a joint's gas cylinder at joint angles q
    (robid.model.compensator.gas_pressure at the anchor length l(q))."""
    comp = joint.compensator
    g = gas_geometry(comp) if geometry is None else dict(geometry)
    length, _ = physics.anchor_length(joint, np.asarray(q, dtype=float).reshape(-1))
    p0 = comp.p0 if p0 is None else p0
    return physics.gas_pressure(length, p0, g["area"], g["l0"], g["v0"], g["n"])


def gas_column_function(joint, index: int, dof: int, blocks: Sequence[tuple[np.ndarray, object, np.ndarray | None]]):
    """column(geometry) -> (N, dof) p0 column, stacked over ``blocks`` = [(processed joint angle (N_k,),
    apply_filter, keep mask (N_k, dof) or None), ...], filtered like the regressor of each block."""
    lengths = [physics.anchor_length(joint, np.asarray(q, dtype=float)) for q, _, _ in blocks]

    def column(geometry: Mapping[str, float]) -> np.ndarray:
        out = []
        for (length, dl), (_, apply_filter, keep) in zip(lengths, blocks, strict=True):
            col = np.zeros((length.size, dof))
            col[:, index] = gas_cylinder_column(
                length, dl, area=geometry["area"], l0=geometry["l0"], v0=geometry["v0"], n=geometry["n"]
            )
            col = apply_filter(col) if apply_filter is not None else col
            out.append(col * keep if keep is not None else col)
        return np.concatenate(out)

    return column


def default_gas_bounds(geometry: Mapping[str, float], l_max: float) -> dict[str, tuple[float, float]]:
    """Physical search ranges: n in [0.8, 1.8] (isothermal 1, adiabatic N2 1.4); l0 and v0 keep the gas volume
    v0 - A (l - l0) above 2 % of v0 at the longest recorded length; up to +50 % (l0) or x3 (v0)."""
    a, l0, v0 = geometry["area"], geometry["l0"], geometry["v0"]
    return {
        "n": (0.8, 1.8),
        "l0": (l_max - 0.98 * v0 / a, l0 + 0.5 * abs(l0)),
        "v0": (1.02 * a * (l_max - l0) if l_max > l0 else 0.02 * v0, 3.0 * v0),
    }


def refine_gas(
    result,
    joint: str | None = None,
    free: Sequence[str] = ("n",),
    bounds: Mapping[str, tuple[float, float]] | None = None,
    **options,
) -> NonlinearRefinement:
    """Nonlinear refinement of a gas cylinder's ``free`` geometry parameters (``n``, ``l0``, ``v0``) around the
    linear p0 solution of an identification result, with the separability check
    (:func:`robid.estimation.compensator.refine_nonlinear_compensator`); geometries whose gas volume is not
    positive over the recorded stroke are outside the search
    (:func:`robid.estimation.compensator.gas_volume_positive`)."""
    index, jm = gas_joint(result.robot.model, joint)
    name = f"{COMPENSATOR_PREFIX}p0_{jm.name}"
    if name not in result.estimate.names:
        raise RobidInputError(f"{name}: not a base parameter of this result (terms without 'compensator'?)")
    blocks = [(d.processed.q[:, index], d.processed.apply_filter, np.asarray(d.processed.keep, float))
              for d in result.datasets]
    column = gas_column_function(jm, index, result.robot.dof, blocks)
    geometry = gas_geometry(jm.compensator)
    stroke = np.concatenate([physics.anchor_length(jm, b[0])[0] for b in blocks])
    bnds = default_gas_bounds(geometry, float(stroke.max()))
    bnds.update(bounds or {})
    W, tau = _stacked(result)
    options.setdefault("feasible", gas_volume_positive(stroke))
    return refine_nonlinear_compensator(
        W, tau, result.estimate.names, name, column, geometry, free, bounds=bnds, **options
    )
