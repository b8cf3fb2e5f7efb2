"""Checks of an identification record read from a file, beyond the types of its fields: sizes that must agree
(one entry per joint, per base parameter, per sample of a series) and values from closed vocabularies (classes,
roles). A RESULT.json that passes them can be reported and predicted with; one that does not is refused with
one line naming the file and the key path, never with a traceback later."""

from __future__ import annotations

from robid.errors import RobidInputError

NUMERICAL_CLASSES = ("well-identified", "poorly-identified", "barely-excited")
STRUCTURAL_CLASSES = ("unidentifiable", "grouped", "identifiable")


class _Checker:
    def __init__(self, where: str):
        self.where = where

    def expect(self, ok: bool, path: str, message: str) -> None:
        if not ok:
            raise RobidInputError(f"{self.where}: {path}: {message}")

    def length(self, values, n: int, path: str, what: str) -> None:
        self.expect(values is not None and len(values) == n, path, f"{len(values or ())} entries for {n} {what}")

    def one_of(self, value, allowed, path: str) -> None:
        self.expect(value in allowed, path, f"{value!r} is not one of {', '.join(allowed)}")

    def fit(self, fit, joints, path: str) -> None:
        self.length(fit.per_joint, len(joints), f"{path}.per_joint", "joints")
        for j, m in enumerate(fit.per_joint):
            self.expect(m.joint == joints[j], f"{path}.per_joint[{j}].joint", f"{m.joint!r}, expected {joints[j]!r}")

    def columns(self, columns, dof: int, n: int, path: str) -> None:
        """One column per joint, each of ``n`` samples (a None column, where the type allows it, has none)."""
        self.length(columns, dof, path, "joints")
        for j, column in enumerate(columns):
            if column is not None:
                self.length(column, n, f"{path}[{j}]", "samples")


def check_record(record, where: str) -> None:
    """Refuse (RobidInputError) a record whose parts disagree in size or hold an unknown class or role."""
    c = _Checker(where)
    joints, dof, nb = record.joints, len(record.joints), len(record.base_parameters)
    c.expect(dof > 0, "joints", "no joint")
    c.length(record.covariance, nb, "covariance", "base parameters")
    for i, row in enumerate(record.covariance):
        c.length(row, nb, f"covariance[{i}]", "base parameters")
    c.length(record.estimation.parameters, nb, "estimation.parameters", "base parameters")
    rows = dof + len(record.motor_joints)
    c.expect(set(record.motor_joints) <= set(joints), "motor_joints", "names a joint the record does not have")
    c.length(record.estimation.sigma_per_joint, rows, "estimation.sigma_per_joint", "rows (joints and motor rows)")
    c.length(record.estimation.weights_per_joint, rows, "estimation.weights_per_joint", "rows (joints and motor rows)")
    for i, p in enumerate(record.base_parameters):
        c.one_of(p.identifiability, NUMERICAL_CLASSES, f"base_parameters[{i}].class")
    for i, s in enumerate(record.standard_parameters):
        c.one_of(s.structural_class, STRUCTURAL_CLASSES, f"standard_parameters[{i}].structural_class")
        if s.numerical_class is not None:
            c.one_of(s.numerical_class, NUMERICAL_CLASSES, f"standard_parameters[{i}].numerical_class")
    c.fit(record.metrics, joints, "metrics")
    if record.model_error_std:
        c.length(record.model_error_std, dof, "model_error_std", "joints")
    held = getattr(record, "held_friction", None)
    if held is not None:
        c.expect(tuple(j.joint for j in held.joints) == tuple(joints), "held_friction.joints",
                 "one entry per joint of the record, in its order")
        for k, j in enumerate(held.joints):
            c.one_of(j.model, ("none", "constant", "decay"), f"held_friction.joints[{k}].model")
            c.expect(j.model != "decay" or (j.time_constant is not None and j.time_constant > 0),
                     f"held_friction.joints[{k}].time_constant", "a decay needs a positive time constant")
    for group, role in (("data", "identification"), ("validation_data", "validation")):
        for k, run in enumerate(getattr(record, group)):
            _check_run(c, run, joints, role, f"{group}[{k}]")


def _check_run(c: _Checker, run, joints, role: str, path: str) -> None:
    dof = len(joints)
    c.expect(run.role == role, f"{path}.role", f"{run.role!r} in {path.split('[')[0]}, expected {role!r}")
    c.fit(run.fit, joints, f"{path}.fit")
    c.length(run.ranges, dof, f"{path}.ranges", "joints")
    c.length(run.unused_rows_per_joint, dof, f"{path}.unused_rows_per_joint", "joints")
    for name in ("q_std", "tau_std", "q_std_processed", "qd_std_processed", "qdd_std_processed", "tau_std_processed"):
        c.length(getattr(run.noise, name), dof, f"{path}.noise.{name}", "joints")
    d = run.display
    n = len(d.t)
    c.expect(n > 0 and d.step >= 1, f"{path}.display", "no samples")
    for name in ("q", "qd", "tau_measured", "tau_predicted", "tau_std_model", "tau_friction", "tau_compensator",
                 "used"):
        c.columns(getattr(d, name), dof, n, f"{path}.display.{name}")
    for name in ("deflection_measured", "deflection_predicted"):  # elastic layout only (schema 1.2)
        if getattr(d, name) is not None:
            c.columns(getattr(d, name), dof, n, f"{path}.display.{name}")
    if run.spectrum is not None:
        bins = len(run.spectrum.frequency_hz)
        c.columns(run.spectrum.measured, dof, bins, f"{path}.spectrum.measured")
        c.columns(run.spectrum.residual, dof, bins, f"{path}.spectrum.residual")
