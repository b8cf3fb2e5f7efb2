"""The parameters the virtual robot really used, named as in docs/interfaces.md section 1.3 (for truth comparisons).

Written from the model file alone (no regressor involved):

* ``m_J mx_J my_J mz_J Ixx_J Ixy_J Ixz_J Iyy_J Iyz_J Izz_J``: first moments and inertia about the origin of
  body frame J (:meth:`robid.model.Link.standard_parameters`);
* ``Ia_J`` = rotor_inertia * gear_ratio^2 (joints with a drive);
* ``fv_J fc_J f0_J``: drive-side friction (the plant uses fc * tanh(v / eps), eps in the settings);
* joints with a nonlinear friction model (robid.model.Friction; the names of
  robid.estimation.nonlinear_friction): ``fs_J vs_J`` (Stribeck: static level, Stribeck velocity),
  ``fsa<k>_J fss<k>_J fso<k>_J`` (sigmoid k = 1, 2, ...: amplitude, slope, offset), ``frc<h>_J frs<h>_J``
  (ripple: the cos and sin coefficients of harmonic h);
* ``k_J d_J fl_J``: stiffness, damping and link-side viscous friction of an elastic joint;
* ``comp_<field>_J``: every numeric field of a compensator (``comp_stiffness_J``, ``comp_free_length_J`` for a
  spring; ``comp_p0_J``, ``comp_area_J``, ``comp_l0_J``, ``comp_v0_J``, ``comp_n_J`` for a gas cylinder).
"""

from __future__ import annotations

from robid.model.loops import tree_joints
from robid.model.robot_model import INERTIAL_PARAMETERS, RobotModel

_COMPENSATOR_FIELDS = ("stiffness", "free_length", "area", "p0", "l0", "v0", "n")


def true_parameters(model: RobotModel) -> dict[str, float]:
    out: dict[str, float] = {}
    for joint in tree_joints(model):  # a closed chain's passive bodies too
        for name, value in zip(INERTIAL_PARAMETERS, joint.link.standard_parameters(), strict=True):
            out[f"{name}_{joint.name}"] = float(value)
    for joint in model.joints:
        if joint.drive is not None:
            out[f"Ia_{joint.name}"] = float(joint.drive.reflected_inertia)
    for prefix, attr in (("fv", "viscous"), ("fc", "coulomb"), ("f0", "offset")):
        for joint in model.joints:
            out[f"{prefix}_{joint.name}"] = float(getattr(joint.friction, attr))
    for joint in model.joints:
        out.update(nonlinear_friction_parameters(joint.friction, joint.name))
    for joint in model.joints:
        if joint.elasticity is not None:
            out[f"k_{joint.name}"] = float(joint.elasticity.stiffness)
            out[f"d_{joint.name}"] = float(joint.elasticity.damping)
            out[f"fl_{joint.name}"] = float(joint.elasticity.link_viscous)
    for joint in model.joints:
        comp = joint.compensator
        if comp is not None:
            for name in _COMPENSATOR_FIELDS:
                value = getattr(comp, name)
                if value is not None:
                    out[f"comp_{name}_{joint.name}"] = float(value)
    return out


def nonlinear_friction_parameters(friction, joint: str) -> dict[str, float]:
    """The parameters of a joint's friction beyond fv, fc, f0 (module docstring), by name; empty for a linear one."""
    out: dict[str, float] = {}
    if friction.model == "stribeck":
        out[f"fs_{joint}"] = float(friction.static)
        out[f"vs_{joint}"] = float(friction.stribeck_velocity)
    for k, sig in enumerate(friction.sigmoids, start=1):
        out[f"fsa{k}_{joint}"] = float(sig.amplitude)
        out[f"fss{k}_{joint}"] = float(sig.slope)
        out[f"fso{k}_{joint}"] = float(sig.offset)
    if friction.ripple is not None:
        r = friction.ripple
        for h, a, b in zip(r.harmonics, r.cos, r.sin, strict=True):
            out[f"frc{h}_{joint}"] = float(a)
            out[f"frs{h}_{joint}"] = float(b)
    return out


def parameters_for(names, truth: dict[str, float]):
    """The true values in the column order ``names`` of a robid.Robot (docs/interfaces.md 1.3 names).

    Rigid identification sees drive-side and link-side viscous friction together (fv + fl; apart when the terms
    have ``link_viscous``, the elastic layout); a spring
    compensator's columns are (k, k*l0).
    """
    import numpy as np

    out = []
    for name in names:
        prefix, _, joint = name.partition("_")
        if prefix == "fv" and f"fl_{joint}" not in names:  # rigid view: drive and link viscous together
            out.append(truth.get(name, 0.0) + truth.get(f"fl_{joint}", 0.0))
        elif name.startswith("comp_k_"):
            out.append(truth[f"comp_stiffness_{name[7:]}"])
        elif name.startswith("comp_kl0_"):
            j = name[9:]
            out.append(truth[f"comp_stiffness_{j}"] * truth[f"comp_free_length_{j}"])
        else:
            if name not in truth:
                raise KeyError(f"no true value for {name}")
            out.append(truth[name])
    return np.asarray(out, dtype=float)
