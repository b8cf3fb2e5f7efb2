"""``robid export-model``: an identification result as a URDF, a robot file, a JSON document or feed-forward
source (docs/export.md).

:func:`export_model` picks the standard set (:mod:`robid.export.standard_set`), puts it into the robot model
(:mod:`robid.export.identified_model`) and writes it in the asked format with a header that says what was
identified, from which result and how well (the torque fit on the identification and validation runs, whether
the identified base values had a physically consistent standard set, which parameters the data left at their
nominal values). The header holds no clock time: the same result exports to the same bytes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.export.identified_model import identified_model, with_friction_models
from robid.export.standard_set import ExportedStandardSet, exported_standard_set
from robid.io.plausibility import check_covariance
from robid.record import IdentificationRecord
from robid.robot import Robot

FORMATS = ("urdf", "yaml", "json", "python", "c", "mjcf")


@dataclass(frozen=True)
class ModelExport:
    """The text of one export, the standard set behind it and the header lines."""

    format: str
    text: str
    standard: ExportedStandardSet
    header: tuple[str, ...]


def _pinned(record: IdentificationRecord) -> np.ndarray:
    """The record's covariance with a base parameter an adopted friction model replaced (a sigmoid joint's fc_J:
    value 0, no variance) given a variance a millionth of its joint's friction scale: the export keeps it at 0
    and the covariance stays positive definite."""
    cov = np.array(record.covariance_matrix, dtype=float)
    values = np.abs(record.values)
    scale = max(float(np.max(values)), 1e-300)
    for k, p in enumerate(record.base_parameters):
        if p.std is None and cov[k, k] == 0.0:
            cov[k, :] = cov[:, k] = 0.0
            cov[k, k] = (1e-6 * scale) ** 2
    return cov


def _fit_lines(record: IdentificationRecord) -> list[str]:
    out = []
    for label, fit in [("identification", record.metrics)] + [(run.label, run.fit) for run in record.validation_data]:
        per = ", ".join(
            f"{j.joint} {j.nrmse_percent:.1f}" for j in fit.per_joint if j.nrmse_percent is not None
        )
        total = fit.relative_error_norm_percent
        head = f"{label}: torque NRMSE % per joint {per}" if per else f"{label}: no torque fit"
        out.append(head + (f"; relative error norm {total:.1f} %" if total is not None else ""))
    return out


def _friction_line(record: IdentificationRecord) -> str:
    """Which joint friction models the export carries (robid.record.friction_models)."""
    fm = record.friction_models
    if fm is None or not fm.adopted:
        return "Joint friction: linear (viscous fv, Coulomb fc, offset f0) on every joint."
    special = ", ".join(f"{j} {m}" for j, m in zip(fm.joints, fm.chosen, strict=True) if m != "linear")
    return (f"Joint friction: {special} (chosen by {fm.criterion} and fitted with every base parameter); linear on "
            "the other joints.")


def _held_lines(record: IdentificationRecord) -> list[str]:
    """The held (standstill) friction the record identified, which the exported model does not evaluate: it needs
    the motion's history (docs/estimation.md "Held friction")."""
    held = getattr(record, "held_friction", None)
    if held is None or all(j.model == "none" for j in held.joints):
        return []
    return [f"Held friction at standstill (not in this model: it depends on the last motion; tau_held = h d "
            f"exp(-t / T) while a joint is held still, d the last motion's direction): {held.line()}."]


def header_lines(record: IdentificationRecord, standard: ExportedStandardSet, source: str) -> list[str]:
    """What was identified, when (the result file) and how well; what the export had to choose."""
    from robid.version import __version__

    classes = {p.name: p.identifiability for p in record.base_parameters}
    well = sum(1 for c in classes.values() if c == "well-identified")
    lines = [
        f"Identified dynamic model of robot {record.robot!r}, exported by robid {__version__} export-model.",
        f"Result: {source} (method {record.method}; terms {', '.join(record.terms)}; "
        f"{len(record.base_parameters)} base parameters, {well} well-identified).",
        f"Runs: {', '.join(Path(r.file).name for r in record.data)} (identification)"
        + (f"; {', '.join(Path(r.file).name for r in record.validation_data)} (validation)"
           if record.validation_data else ""),
        *_fit_lines(record),
        _friction_line(record),
        *_held_lines(record),
    ]
    if standard.identified_consistent:
        lines.append(
            "The identified base values have a physically consistent standard set. Standard parameters: the "
            "consistent set that reproduces them (largest relative deviation of a base value "
            f"{standard.base_mismatch:.1e}) and, where the data do not determine them (unidentifiable or grouped "
            "parameters), is nearest to the robot file's nominal values."
        )
    else:
        distance = (f" at a Mahalanobis distance of {standard.mahalanobis:.3g} in the estimate's covariance"
                    if standard.mahalanobis is not None else "")
        moved = (
            f"; {len(standard.moved)} moved by more than their standard deviation: "
            + ", ".join(f"{n} {a:.6g} -> {b:.6g}" for n, a, b in standard.moved[:6])
            + (", ..." if len(standard.moved) > 6 else "")
            if standard.moved else "; none moved by more than its standard deviation"
        )
        lines.append(
            "The identified base values have NO physically consistent standard set. Exported: the nearest "
            f"consistent base values{distance}{moved}. Standard parameters: a consistent set with those base values "
            "and, where the data do not determine them, nearest to the robot file's nominal values."
        )
    return lines


def export_model(
    record: IdentificationRecord, robot: Robot, fmt: str, *, source: str = "RESULT.json", prefix: str = "robid"
) -> ModelExport:
    """The export of ``record`` (identified with ``robot``) in format ``fmt`` (one of :data:`FORMATS`)."""
    from robid.identification.predict import check_result_matches

    if fmt not in FORMATS:
        raise RobidInputError(f"export-model: unknown format {fmt!r} (expected one of {', '.join(FORMATS)})")
    check_result_matches(robot, record, source)
    check_covariance(record.covariance_matrix, record.names, source)  # an edited RESULT.json: refused
    base = robot.base_parameters()
    names = robot.parameter_names
    standard = exported_standard_set(
        record.values, base.grouping, names, robot.parameters, base_names=record.names,
        covariance=_pinned(record), consistent_by_construction=record.method.startswith("consistent"),
    )
    model = with_friction_models(identified_model(robot.model, names, standard.values), record.friction_models)
    lines = header_lines(record, standard, source)
    text = _render(fmt, record, robot, model, standard, lines, base.indices, prefix)
    return ModelExport(fmt, text, standard, tuple(lines))


def _not_in_urdf(model, standard: ExportedStandardSet) -> list[str]:
    """Identified values URDF has no field for: friction offsets and compensators."""
    out = []
    for n, v in zip(standard.names, standard.values, strict=True):
        if n.startswith(("f0_", "comp_", "k_", "d_", "fl_", "fvm_", "fcm_", "Iam_")):
            out.append(f"{n} = {float(v)!r}")
    lines = ["Not expressible in URDF (listed here): " + ", ".join(out)] if out else []
    from robid.export.robot_file_writer import friction_block

    for joint in model.joints:
        if not joint.friction.is_linear:  # URDF's <dynamics> holds viscous and Coulomb friction only
            lines.append(f"Friction model of joint {joint.name} (robot-file friction block, SI units): "
                         f"{friction_block(joint.friction)}")
        c = joint.compensator
        if c is not None:  # the whole compensator, so that it can be rebuilt from this header
            fields = {k: v for k, v in dataclasses.asdict(c).items() if v not in (None, (), 0.0) or k == "type"}
            lines.append(f"Compensator of joint {joint.name} (robot-file compensator block, SI units): {fields}")
    return lines


def source_urdf(robot: Robot) -> Path | None:
    """The URDF a robot was read from: the file itself, or the ``urdf:`` of a robot file that starts from one
    (docs/robot-file.md); None for DH robots."""
    if robot.model.kinematics != "urdf" or not robot.model.source:
        return None
    source = Path(robot.model.source)
    if source.suffix.lower() in (".yaml", ".yml") and source.is_file():
        from robid.io.files import read_yaml

        data = read_yaml(source)
        if isinstance(data, dict) and isinstance(data.get("urdf"), str):
            urdf = Path(data["urdf"])
            return urdf if urdf.is_absolute() else source.parent / urdf
        return None
    return source if source.is_file() else None


def _render(fmt, record, robot, model, standard, lines, base_indices, prefix) -> str:
    header = "\n".join(lines)
    if fmt == "mjcf":
        if model.chain is not None:  # a closed chain: its tree, the loops as equality constraints
            from robid.export.mjcf_tree_writer import mjcf_from_model as mjcf_tree

            return mjcf_tree(model, "\n".join(lines + _not_in_urdf(model, standard)))
        from robid.export.mjcf_copy import mjcf_text

        return mjcf_text(robot.model, model, lines, standard.names, standard.values)
    if fmt == "urdf":
        from robid.export.urdf_writer import urdf_copy_with_model, urdf_from_model

        extra = _not_in_urdf(model, standard)
        text_header = "\n".join(lines + extra + [
            "Friction: <dynamics damping = viscous fv, friction = Coulomb fc (a sigmoid model: its half rise)>; "
            "reflected rotor inertia Ia = rotor_inertia * gear_ratio^2 in each <transmission> (drake:rotor_inertia, "
            "drake:gear_ratio)."
        ])
        if model.chain is not None:  # a closed chain: its tree, the loops in the header
            from robid.export.urdf_tree import urdf_from_tree

            return urdf_from_tree(model, text_header)
        urdf = source_urdf(robot)
        if urdf is not None:
            from robid.io.files import read_text

            return urdf_copy_with_model(read_text(urdf), model, text_header, str(urdf))
        return urdf_from_model(model, text_header)
    if fmt == "yaml":
        from robid.export.robot_file_writer import robot_file_with_model
        from robid.io.files import read_yaml

        source = Path(robot.model.source) if robot.model.source else None
        if source is None or source.suffix.lower() not in (".yaml", ".yml") or not source.is_file():
            raise RobidOptionError(None,
                f"export-model {{format}} yaml: robot {robot.name!r} does not come from a robot file (YAML); "
                "use {format} urdf (a copy of its URDF) or json"
            )
        return robot_file_with_model(read_yaml(source), model, header, str(source))
    if fmt == "json":
        import json

        from robid.export.robot_file_writer import model_document

        doc = model_document(model, standard, {
            "header": lines, "terms": list(record.terms), "method": record.method,
            "identified_consistent": standard.identified_consistent,
            "base_mismatch": standard.base_mismatch,
        })
        return json.dumps(doc, indent=1) + "\n"
    from robid.export.code import c_source, check_values, python_source

    values = check_values(standard.values)
    base_values = np.asarray(standard.base_target, dtype=float)
    if fmt == "python":
        return python_source(model, robot.terms, values, base_indices, record.names, base_values, header)
    return c_source(model, robot.terms, values, base_indices, record.names, base_values, header, prefix)
