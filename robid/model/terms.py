"""Names of the regressor terms, the default set, and nominal parameter values (no sympy here).

Terms (docs/model.md): ``rigid`` (10 standard inertial parameters per body, about the frame origin), ``rotor``
(reflected rotor inertia Ia_J = rotor_inertia * gear_ratio^2, only joints with a drive), ``rotor_coupled`` (the
same Ia_J with the rotor-link coupling of the complete elastic model), ``viscous`` (fv_J), ``coulomb`` (fc_J),
``offset`` (f0_J), ``drive_coupling`` (Iam_J, fvm_J, fcm_J of a motor that also turns with a second joint, the
coupled wrist; docs/model.md "Coupled drives"), ``compensator`` (comp_k_J and comp_kl0_J for a spring compensator,
comp_p0_J for a gas cylinder; docs/model.md), and for the joints with an elasticity block ``stiffness`` (k_J),
``damping`` (d_J) and ``link_viscous`` (fl_J); ``stiffness`` switches on the elastic layout with motor rows
(docs/elastic.md).
Column order: rigid blocks joint by joint, then Ia_*, fv_*, fc_*, f0_*, Iam_*, fvm_*, fcm_*, comp_*, k_*, d_*, fl_*.
"""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError
from robid.model.loops import tree_joints
from robid.model.robot_model import RobotModel

TERM_ORDER = (
    "rigid", "rotor", "rotor_coupled", "viscous", "coulomb", "offset", "drive_coupling", "compensator",
    "stiffness", "damping", "link_viscous",
)
ELASTIC_TERMS = ("stiffness", "damping", "link_viscous")
_ELASTIC_ATTR = {"stiffness": "stiffness", "damping": "damping", "link_viscous": "link_viscous"}
_FRICTION_ATTR = {"viscous": "viscous", "coulomb": "coulomb", "offset": "offset"}


def default_terms(model: RobotModel) -> tuple[str, ...]:
    """Rigid bodies, reflected rotor inertia where the robot has drives, viscous, Coulomb and offset friction,
    the coupled drives' terms where a drive declares a coupling, compensators where present."""
    terms = ["rigid"]
    if model.has_drives:
        terms.append("rotor")
    terms += ["viscous", "coulomb", "offset"]
    if model.drive_couplings:
        terms.append("drive_coupling")
    if any(j.compensator is not None for j in model.joints):
        terms.append("compensator")
    return tuple(terms)


def normalise_terms(terms, model: RobotModel | None = None) -> tuple[str, ...]:
    """The terms in column order, checked: known names, ``rigid`` present, one rotor model, and elastic terms
    only with ``stiffness`` on a robot that has elastic joints (when ``model`` is given)."""
    terms = tuple(terms)
    unknown = [t for t in terms if t not in TERM_ORDER]
    if unknown:
        raise RobidInputError(f"terms: unknown term {unknown[0]!r} (known: {', '.join(TERM_ORDER)})")
    if "rigid" not in terms:
        raise RobidInputError("terms: 'rigid' is required")
    if "rotor" in terms and "rotor_coupled" in terms:
        raise RobidInputError("terms: 'rotor' (reduced model) and 'rotor_coupled' (complete model) exclude each other")
    if any(t in terms for t in ELASTIC_TERMS[1:]) and "stiffness" not in terms:
        raise RobidInputError("terms: 'damping' and 'link_viscous' need 'stiffness' (the elastic layout)")
    if "stiffness" in terms and model is not None and not model.is_elastic:
        raise RobidInputError(
            f"terms: 'stiffness' needs a joint with an 'elasticity' block; robot {model.name!r} has none"
        )
    if "drive_coupling" in terms and model is not None and not model.drive_couplings:
        raise RobidInputError(
            f"terms: 'drive_coupling' needs a joint whose drive has a 'coupling' block; robot {model.name!r} has none"
        )
    if "drive_coupling" in terms and "stiffness" in terms:
        raise RobidInputError("terms: 'drive_coupling' is not available with the elastic layout ('stiffness')")
    return tuple(t for t in TERM_ORDER if t in terms)


#: parameters of the ``drive_coupling`` term, in column order, and the nominal value of each for one drive
COUPLING_PREFIXES = ("Iam", "fvm", "fcm")


def coupling_nominal(drive, prefix: str) -> float:
    """Nominal value of a coupled drive's parameter: Iam_J = the reflected rotor inertia rotor_inertia r_J^2 (the
    same motor as Ia_J), fvm_J and fcm_J the coupling block's viscous and coulomb."""
    if prefix == "Iam":
        return float(drive.reflected_inertia)
    return float(drive.coupling.viscous if prefix == "fvm" else drive.coupling.coulomb)


def nominal_values(model: RobotModel, terms: tuple[str, ...]) -> np.ndarray:
    """Nominal parameter vector in column order."""
    values: list[float] = []
    for t in terms:
        if t == "rigid":
            for joint in tree_joints(model):  # a closed chain's passive bodies too, in tree order
                values += [float(v) for v in joint.link.standard_parameters()]
        elif t in ("rotor", "rotor_coupled"):
            values += [j.drive.reflected_inertia for j in model.joints if j.drive is not None]
        elif t == "drive_coupling":
            coupled = [model.joints[j].drive for j, _, _ in model.drive_couplings]
            values += [coupling_nominal(d, p) for p in COUPLING_PREFIXES for d in coupled]
        elif t in ELASTIC_TERMS:
            values += [float(getattr(j.elasticity, _ELASTIC_ATTR[t])) for j in model.joints if j.elasticity]
        elif t == "compensator":
            for j in model.joints:
                c = j.compensator
                if c is None:
                    continue
                if c.type == "spring":
                    values += [c.stiffness, c.stiffness * c.free_length]
                elif c.type == "gas":
                    values += [c.p0]
                else:
                    values += list(c.coefficients)
        else:
            values += [float(getattr(j.friction, _FRICTION_ATTR[t])) for j in model.joints]
    return np.array(values, dtype=float)


FRICTION_PREFIXES = ("fv", "fc", "f0")
COMPENSATOR_PREFIX = "comp_"


def standalone_parameters(names, expressions, joint: str, kind: str) -> list[int]:
    """Indices of the base parameters of ``joint``'s own friction (``kind="friction"``: fv_J, fc_J, f0_J in that
    order) or compensator (``kind="compensator"``: comp_*_J) that stand for that standard parameter alone (expression
    equal to the name, docs/interfaces.md 1.3): the terms whose identified values describe that joint's curve."""
    alone = {n for n, e in zip(names, expressions, strict=True) if "".join(e.split()) == n}
    names = list(names)
    if kind == "friction":
        wanted = [f"{p}_{joint}" for p in FRICTION_PREFIXES]
        return [names.index(n) for n in wanted if n in alone]
    if kind == "compensator":
        own = (k for k, n in enumerate(names) if n.startswith(COMPENSATOR_PREFIX) and n.endswith(f"_{joint}"))
        return [k for k in own if names[k] in alone]
    raise ValueError(f"kind: friction or compensator, got {kind!r}")
