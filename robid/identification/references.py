"""Reference models: a published or nominal dynamic model predicted on the very samples robid fits, so that a
record (and its report) can set robid's torque errors next to the reference's on every run.

A reference is a robot file (YAML or URDF, its own frames and parameter names) with standard parameter values:
the file's nominal values, optionally replaced by a parameter file (``{name: value}``, the names of
``robot.parameter_names``) and extended by ``armature`` -- reflected rotor inertia per joint, ``Ia_J qdd_J``, for
a URDF, which has no drives (pinocchio's ``model.armature``), and by ``sigmoid_friction``, the nonlinear joint
friction of Gaz et al. (RA-L 2019, eq. 3, Table I) that a published model may carry:

    tau_f,J = phi1_J / (1 + exp(-phi2_J (qd_J + phi3_J))) - phi1_J / (1 + exp(-phi2_J phi3_J))

(the same function as a robot file's ``friction: {model: sigmoid}``, robid.model.robot_model.sigmoid_friction;
robid.estimation.nonlinear_friction estimates it). Its torque is

    tau_ref(t) = F[ ID_ref(q, qd, qdd) + armature qdd + tau_f(qd) ](t)

with ID_ref the reference robot's inverse dynamics (Coulomb friction as sign(qd)) at the run's processed states,
and F the same filter the run's torque and regressor went through (parallel filtering: on the whole record with
the zero-phase low-pass of the non-periodic path, the kept harmonics otherwise; docs/signals.md). Its fit is
scored over the rows robid's fit uses (robid.estimation.torque_metrics). Errors of the reference then differ
from robid's only by the parameters, never by the processing or the samples -- which is what a comparison with
published parameters needs (docs/validation.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.model.robot_model import sigmoid_friction  # Gaz et al. 2019 eq. 3, shared with robot files' friction


@dataclass(frozen=True, eq=False)
class ReferenceModel:
    """A reference model (module docstring): ``label`` names it in the record and report."""

    label: str
    robot: object  # robid.robot.Robot
    parameters: np.ndarray  # standard parameters of ``robot``, in its column order
    armature: np.ndarray  # (dof,) reflected rotor inertia added as armature * qdd
    source: str = ""
    sigmoid: np.ndarray | None = None  # (3, dof) phi1, phi2, phi3 of the sigmoid friction, or None

    def torque(self, q, qd, qdd) -> np.ndarray:
        """(N, dof) unfiltered reference torque at the given states."""
        tau = self.robot.inverse_dynamics(q, qd, qdd, self.parameters)
        tau = tau[:, : self.robot.dof] + np.asarray(qdd, dtype=float) * self.armature
        if self.sigmoid is not None:
            tau = tau + sigmoid_friction(np.asarray(qd, dtype=float), *self.sigmoid)
        return tau


def load_reference(label: str, robot: str | Path, *, parameters: str | Path | dict | None = None,
                   armature=None, terms=None, sigmoid_friction=None, where: str = "reference") -> ReferenceModel:
    """The reference ``label``: ``robot`` (file or built-in name) with ``terms`` (default: all that apply), its
    nominal values replaced by ``parameters`` (a YAML/JSON file or mapping ``{name: value}``), ``armature`` (one
    value per joint) and ``sigmoid_friction`` (``{phi1: [...], phi2: [...], phi3: [...]}``, one value per joint
    each). Every error names ``where`` and the field."""
    from robid.io.files import read_yaml
    from robid.robot import load_robot

    model = load_robot(str(robot), terms=tuple(terms) if terms else None)
    if model.motor_joints:
        raise RobidInputError(f"{where}.robot: {robot}: a reference is a rigid-layout model (no stiffness term)")
    values = np.asarray(model.parameters, dtype=float).copy()
    names = list(model.parameter_names)
    given = read_yaml(Path(parameters)) if isinstance(parameters, (str, Path)) else (parameters or {})
    if not isinstance(given, dict):
        raise RobidInputError(f"{where}.parameters: expected a mapping name -> value")
    for name, value in given.items():
        if name not in names:
            raise RobidInputError(f"{where}.parameters: {name!r} is not a parameter of {model.model.name} with terms "
                                  f"{', '.join(model.terms)} (e.g. {', '.join(names[:3])}, ...)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
            raise RobidInputError(f"{where}.parameters.{name}: expected a finite number, got {value!r}")
        values[names.index(name)] = float(value)
    arm = np.zeros(model.dof) if armature is None else np.asarray(armature, dtype=float).ravel()
    if arm.shape != (model.dof,) or not np.all(np.isfinite(arm)):
        raise RobidInputError(f"{where}.armature: expected {model.dof} finite numbers (one per joint)")
    sigmoid = None
    if sigmoid_friction is not None:
        if not isinstance(sigmoid_friction, dict) or set(sigmoid_friction) != {"phi1", "phi2", "phi3"}:
            raise RobidInputError(f"{where}.sigmoid_friction: expected phi1, phi2 and phi3, one list each")
        try:
            sigmoid = np.array([[float(v) for v in sigmoid_friction[k]] for k in ("phi1", "phi2", "phi3")])
        except (TypeError, ValueError):
            raise RobidInputError(f"{where}.sigmoid_friction: expected lists of numbers") from None
        if sigmoid.shape != (3, model.dof) or not np.all(np.isfinite(sigmoid)):
            raise RobidInputError(f"{where}.sigmoid_friction: expected {model.dof} finite numbers per phi")
    return ReferenceModel(label, model, values, arm, source=str(robot), sigmoid=sigmoid)


def reference_torque(reference: ReferenceModel, processed) -> np.ndarray:
    """(N, dof) reference torque on the processed grid of ``processed`` (robid.signals.ProcessedSignals), through
    the run's own filter (module docstring)."""
    dof = reference.robot.dof
    if np.shape(processed.q)[1] != dof:
        raise RobidInputError(
            f"reference {reference.label!r}: its robot has {dof} joints, the measurement {np.shape(processed.q)[1]}"
        )
    if processed.parallel_filter is not None:
        return processed.parallel_filter(lambda q, qd, qdd, v: reference.torque(q, qd, qdd))
    tau = reference.torque(processed.q, processed.qd, processed.qdd)
    return processed.apply_filter(tau)
