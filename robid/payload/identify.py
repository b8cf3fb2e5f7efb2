"""Payload identification end to end: a loaded run and its reference (an unloaded run of the same trajectory, or
an identified model), to the payload estimate (robid.payload.data, robid.payload.estimate); and the drive-gain
calibration from a known payload (robid.payload.gains), whose scales the estimate can use."""

from __future__ import annotations

from pathlib import Path

from robid.defaults import DEFAULT_MIN_SPEED
from robid.errors import RobidInputError, RobidOptionError
from robid.io.screening import ScreeningPolicy
from robid.payload.data import difference_rows, model_rows, processed_run
from robid.payload.estimate import PayloadEstimate, estimate_payload
from robid.payload.gains import GainCalibration, apply_gains, calibrate_gains
from robid.robot import Robot, load_robot
from robid.signals import ProcessingOptions


def identify_payload(
    robot,
    loaded: str | Path,
    *,
    unloaded: str | Path | None = None,
    result: str | Path | None = None,
    mapping: str | Path | None = None,
    unloaded_mapping: str | Path | None = None,
    options: ProcessingOptions | None = None,
    policy: ScreeningPolicy | None = None,
    model: str = "auto",
    gains=None,
) -> PayloadEstimate:
    """The payload carried in ``loaded`` (a measurement file), against the ``unloaded`` run of the same trajectory
    (preferred when both are given: friction and model error cancel) or the identified model ``result``
    (RESULT.json of ``robid identify`` on this robot). ``robot``: a robot file, built-in name, RobotModel or
    Robot; ``mapping`` the layout of the files (``unloaded_mapping`` of the unloaded one when it differs);
    ``gains`` a drive-gain calibration (GAINS.yaml of :func:`calibrate_drive_gains`, or one scale per joint)
    multiplying the payload's torque (robid.payload.gains.apply_gains)."""
    if unloaded is None and result is None:
        raise RobidOptionError(None, "payload identify: give {unloaded} (a run of the same trajectory without the "
                               "load) or {result} (RESULT.json of the identified robot)")
    model_ = robot.model if isinstance(robot, Robot) else load_robot(robot).model
    rigid = Robot(model_, terms=("rigid",))
    options = options or ProcessingOptions(min_speed=DEFAULT_MIN_SPEED)
    scale = _gain_scale(gains, model_.joint_names, (mapping, unloaded_mapping))
    if unloaded is not None:
        run_l = processed_run(rigid, loaded, mapping=mapping, options=options, policy=policy)
        run_u = processed_run(rigid, unloaded, mapping=unloaded_mapping or mapping, options=options, policy=policy)
        rows = difference_rows(rigid, run_l, run_u, (str(loaded), str(unloaded)))
        if result is not None:
            rows = _with_note(rows, "--result not used: the unloaded run is the better reference (friction and model "
                                    "error cancel in the difference)")
        return estimate_payload(_scaled(rows, scale), model)
    from robid.io.result_file import read_result

    record = read_result(result)
    if list(record.joints) != list(model_.joint_names):
        raise RobidInputError(f"{result}: joints: identified for {list(record.joints)}, the robot has "
                              f"{model_.joint_names}")
    full = Robot(model_, terms=tuple(record.terms))
    names = full.base_parameters().names
    values = {p.name: p.value for p in record.base_parameters}
    missing = [n for n in names if n not in values]
    if missing:
        raise RobidInputError(f"{result}: base_parameters: no value for {missing[0]} of the robot's model: identify "
                              "and payload must use the same robot file and terms")
    from robid.identification.identified_model import IdentifiedModel

    if tuple(names) != tuple(record.names):
        raise RobidInputError(f"{result}: base_parameters: not those of the robot's model in the same order: "
                              "identify and payload must use the same robot file and terms")
    rows = model_rows(full, rigid, loaded, IdentifiedModel.of_record(record), mapping=mapping, options=options,
                      policy=policy, coulomb=record.processing.coulomb)
    return estimate_payload(_scaled(rows, scale), model)


def calibrate_drive_gains(
    robot,
    loaded: str | Path,
    unloaded: str | Path,
    mass: float,
    *,
    com=None,
    mapping: str | Path | None = None,
    unloaded_mapping: str | Path | None = None,
    options: ProcessingOptions | None = None,
    policy: ScreeningPolicy | None = None,
) -> GainCalibration:
    """Drive-gain scales per joint from a ``loaded`` run carrying a payload of known ``mass`` (kg; ``com`` in m in
    the flange frame if known) and the ``unloaded`` run of the same trajectory (robid.payload.gains)."""
    model_ = robot.model if isinstance(robot, Robot) else load_robot(robot).model
    rigid = Robot(model_, terms=("rigid",))
    options = options or ProcessingOptions(min_speed=DEFAULT_MIN_SPEED)
    run_l = processed_run(rigid, loaded, mapping=mapping, options=options, policy=policy)
    run_u = processed_run(rigid, unloaded, mapping=unloaded_mapping or mapping, options=options, policy=policy)
    rows = difference_rows(rigid, run_l, run_u, (str(loaded), str(unloaded)))
    return calibrate_gains(rows, mass, com=com, joint_names=model_.joint_names)


def _gain_scale(gains, joint_names, mappings=()) -> tuple[tuple[float, ...], str] | None:
    """(scale per joint, source) of ``gains``: a GAINS.yaml path, or numbers; None for no gains. Refused when a
    mapping of ``mappings`` scales its current gains already (currents.gain_scale): the scale would count twice."""
    if gains is None:
        return None
    from robid.io.mapping import read_mapping

    for path in (m for m in mappings if m is not None):
        currents = read_mapping(path).groups.get("currents")
        if currents is not None and currents.gain_scale:
            raise RobidOptionError("gains", f"the mapping {path} scales its current gains by "
                                   f"{currents.gain_scale} already (currents.gain_scale): give one of them")
    if isinstance(gains, (str, Path)):
        from robid.io.gains_file import read_gains

        return read_gains(gains, joint_names).scale, str(gains)
    values = tuple(float(x) for x in gains)
    if len(values) != len(joint_names) or not all(x > 0 for x in values):
        raise RobidInputError(f"gains: expected {len(joint_names)} positive scales, got {values}")
    return values, "gains"


def _scaled(rows, scale):
    return rows if scale is None else apply_gains(rows, scale[0], scale[1])


def _with_note(rows, note: str):
    import dataclasses

    return dataclasses.replace(rows, notes=(*rows.notes, note))
