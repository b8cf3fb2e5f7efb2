"""A robot model carrying an identified standard set: link inertial data, rotor inertia, friction, compensator and
elasticity values replaced by the exported ones (the inverse of :func:`robid.model.terms.nominal_values`).

Link data go back from the standard parameters (inertia about the frame origin, first moments ``h = m c``) to
the robot file's form: ``c = h / m`` and ``I_C = I_O - m (c^T c E - c c^T)`` (parallel-axis theorem, Khalil &
Dombre 2002 eq. 9.40, the inverse of :meth:`robid.model.robot_model.Link.standard_parameters`). A massless body
keeps ``c = 0`` and ``I_C = I_O``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from robid.model.robot_model import (
    INERTIAL_PARAMETERS,
    Compensator,
    Drive,
    Elasticity,
    Friction,
    FrictionRipple,
    FrictionSigmoid,
    Joint,
    Link,
    RobotModel,
)


def link_from_standard(p) -> Link:
    """The :class:`Link` (mass, COM, inertia about the COM) of ten standard parameters (m, mx, ..., Izz)."""
    m, hx, hy, hz, xx, xy, xz, yy, yz, zz = (float(v) for v in p)
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    if m > 0:
        c = np.array([hx, hy, hz]) / m
        inertia = inertia - m * (c @ c * np.eye(3) - np.outer(c, c))
    else:
        c = np.zeros(3)
    com = tuple(float(v) for v in c)
    inertia_com = tuple(float(inertia[i, j]) for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)))
    return Link(mass=m, com=com, inertia_com=inertia_com)


def identified_model(model: RobotModel, names, values) -> RobotModel:
    """``model`` with every parameter named in ``names`` set to its value in ``values`` (module docstring).

    Names follow robid's columns (docs/model.md): ``m_J``...``Izz_J``, ``Ia_J`` (reflected rotor inertia: the
    rotor inertia becomes Ia_J / gear_ratio^2), ``fv_J``, ``fc_J``, ``f0_J``, ``fvm_J``/``fcm_J`` (coupled drive),
    ``comp_k_J``/``comp_kl0_J`` (spring: free length = kl0 / k), ``comp_p0_J`` (gas), ``comp_bK_J`` (Fourier
    compensator), ``k_J``, ``d_J``, ``fl_J`` (elasticity). ``Iam_J`` is the same motor's inertia as ``Ia_J`` and
    is not written twice.
    """
    table = {str(n): float(v) for n, v in zip(names, values, strict=True)}
    out = dataclasses.replace(model, joints=tuple(_joint(j, table) for j in model.joints))
    if model.chain is not None:  # a closed chain's passive bodies (robid.model.loops)
        passive = tuple(_joint(j, table) for j in model.chain.passive)
        out = dataclasses.replace(out, chain=dataclasses.replace(model.chain, passive=passive))
    return out


def _joint(joint: Joint, table: dict[str, float]) -> Joint:
    name = joint.name
    changes: dict = {}
    keys = [f"{p}_{name}" for p in INERTIAL_PARAMETERS]
    if all(k in table for k in keys):
        changes["link"] = link_from_standard([table[k] for k in keys])
    if joint.drive is not None and f"Ia_{name}" in table:
        drive: Drive = joint.drive
        changes["drive"] = dataclasses.replace(drive, rotor_inertia=table[f"Ia_{name}"] / drive.gear_ratio**2)
    friction: Friction = joint.friction
    fields = {a: table[f"{p}_{name}"] for p, a in (("fv", "viscous"), ("fc", "coulomb"), ("f0", "offset"))
              if f"{p}_{name}" in table}
    if fields:
        changes["friction"] = dataclasses.replace(friction, **fields)
    coupling = joint.drive.coupling if joint.drive is not None else None
    if coupling is not None:
        cfields = {a: table[f"{p}_{name}"] for p, a in (("fvm", "viscous"), ("fcm", "coulomb"))
                   if f"{p}_{name}" in table}
        if cfields:
            drive = changes.get("drive", joint.drive)
            changes["drive"] = dataclasses.replace(drive, coupling=dataclasses.replace(coupling, **cfields))
    if joint.compensator is not None:
        changes["compensator"] = _compensator(joint.compensator, name, table)
    if joint.elasticity is not None:
        efields = {a: table[f"{p}_{name}"] for p, a in (("k", "stiffness"), ("d", "damping"), ("fl", "link_viscous"))
                   if f"{p}_{name}" in table}
        if efields:
            elasticity: Elasticity = joint.elasticity
            changes["elasticity"] = dataclasses.replace(elasticity, **efields)
    return dataclasses.replace(joint, **changes) if changes else joint


def _compensator(comp: Compensator, name: str, table: dict[str, float]) -> Compensator:
    if comp.type == "spring" and f"comp_k_{name}" in table:
        k = table[f"comp_k_{name}"]
        kl0 = table.get(f"comp_kl0_{name}", k * (comp.free_length or 0.0))
        return dataclasses.replace(comp, stiffness=k, free_length=kl0 / k if k != 0 else comp.free_length)
    if comp.type == "gas" and f"comp_p0_{name}" in table:
        return dataclasses.replace(comp, p0=table[f"comp_p0_{name}"])
    coefficients = [table.get(f"comp_b{k + 1}_{name}") for k in range(len(comp.coefficients))]
    if comp.type == "fourier" and all(c is not None for c in coefficients):
        return dataclasses.replace(comp, coefficients=tuple(coefficients))
    return comp


def with_friction_models(model: RobotModel, friction_models) -> RobotModel:
    """``model`` with the adopted nonlinear friction of a record (robid.record.FrictionModels, ``adopted``): per
    joint its model (stribeck: ``static`` fs_J and ``stribeck_velocity`` vs_J; sigmoid: the sigmoids'
    amplitude fsa<k>_J, slope fss<k>_J and offset fso<k>_J, no Coulomb level; ripple: frc<h>_J, frs<h>_J), the
    linear part (viscous, coulomb, offset) kept as ``model`` has it (the exported standard set). The robot file's
    friction models are those of robid.model.robot_model.Friction, whose torque is what identification fitted
    (robid.identification.identified_model)."""
    if friction_models is None or not friction_models.adopted or friction_models.fit is None:
        return model
    value = dict(zip(friction_models.fit.names, friction_models.fit.values, strict=True))
    chosen = {m.joint: m for m in friction_models.models}
    joints = []
    for joint in model.joints:
        m = chosen.get(joint.name)
        joints.append(joint if m is None else dataclasses.replace(joint, friction=_friction(joint, m, value)))
    return dataclasses.replace(model, joints=tuple(joints))


def _friction(joint: Joint, chosen, value: dict) -> Friction:
    name = joint.name
    f = dataclasses.replace(joint.friction, model="linear", static=0.0, stribeck_velocity=0.0, sigmoids=(),
                            ripple=None)
    if chosen.ripple:
        f = dataclasses.replace(f, ripple=FrictionRipple(
            tuple(chosen.ripple), tuple(float(value[f"frc{h}_{name}"]) for h in chosen.ripple),
            tuple(float(value[f"frs{h}_{name}"]) for h in chosen.ripple)))
    if chosen.model == "stribeck":
        return dataclasses.replace(f, model="stribeck", static=float(value[f"fs_{name}"]),
                                   stribeck_velocity=float(value[f"vs_{name}"]))
    if chosen.model == "sigmoid":
        sigmoids = tuple(FrictionSigmoid(float(value[f"fsa{k}_{name}"]), float(value[f"fss{k}_{name}"]),
                                         float(value[f"fso{k}_{name}"])) for k in range(1, chosen.sigmoids + 1))
        return dataclasses.replace(f, model="sigmoid", coulomb=0.0, sigmoids=sigmoids)
    return f
