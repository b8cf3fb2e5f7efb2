"""Read a measurement into the canonical form: files -> raw tables -> validation -> SI, joint side.

``read_measurement(path, robot)`` reads the canonical CSV of interfaces.md section 3;
``read_measurement(path, robot, mapping=...)`` reads any layout a mapping describes (docs/signals.md).
The user's files are only ever opened for reading.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.io.files import read_json
from robid.model.robot_model import RobotModel
from robid.signals.mapping import (
    GROUP_PREFIX,
    UNITS,
    Group,
    Mapping,
    Part,
    ReadOptions,
    canonical_mapping,
    read_mapping,
)
from robid.signals.records import Measurement
from robid.signals.tables import RawTable, file_format, load_mat, mat_variable, read_text_table
from robid.signals.validation import ChannelRef, ValidationPolicy, validate


def read_measurement(
    path: str | Path,
    robot: RobotModel | None = None,
    mapping: str | Path | Mapping | None = None,
    policy: ValidationPolicy | None = None,
    dof: int | None = None,
) -> Measurement:
    """Read, validate and convert one measurement.

    ``robot`` gives the number of joints and, where the mapping asks for them (``robot``), gear ratios and
    torque constants; without a robot, ``dof`` (or the mapping's ``dof``) gives the joint count.
    ``policy`` decides what validation tolerates (default: refuse every bad row).
    """
    path = Path(path)
    policy = policy or ValidationPolicy()
    if not path.exists():
        raise RobidInputError(f"{path}: no such measurement file")
    loaded = read_mapping(mapping) if isinstance(mapping, str | Path) else mapping
    n_joints = _joint_count(robot, dof, loaded, path)
    reader = _Reader(path)
    notes: list[str] = []
    if loaded is None:
        if path.is_dir() or file_format(path, ReadOptions()) != "csv":
            raise RobidInputError(
                f"{path}: not a canonical measurement CSV (header t, q1.., tau1..); describe its layout in a "
                "mapping file and pass it with --mapping (docs/signals.md)"
            )
        table = reader.table(None, None, ReadOptions(format="csv", header=True), "canonical CSV")
        loaded, extra = canonical_mapping(table.names or [], n_joints, str(path))
        notes.extend(extra)
    if loaded.allow_constant or loaded.allow_saturated:
        policy = ValidationPolicy(
            **{
                **policy.__dict__,
                "allow_constant": tuple(policy.allow_constant) + loaded.allow_constant,
                "allow_saturated": tuple(policy.allow_saturated) + loaded.allow_saturated,
            }
        )

    channels: list[ChannelRef] = []
    factors: dict[str, np.ndarray] = {}
    time_ref = None
    time_factor = 1.0
    if loaded.time is not None:
        refs, f = reader.channels(loaded.time, "time", "t", 1, f"{loaded.source}: time", n_joints)
        time_ref, time_factor = refs[0], float(f[0])
    for name, group in loaded.groups.items():
        refs, f = _group_channels(reader, group, n_joints, loaded.source)
        channels.extend(refs)
        factors[name] = f
    n = reader.common_length(loaded.source)
    result = validate(reader.tables, channels, time_ref, policy)
    notes.extend(result.notes)
    keep = result.keep

    if time_ref is not None:
        t = reader.tables[time_ref.table].values[keep, time_ref.column] * time_factor
        uniform = False
    else:
        t = (loaded.start + np.arange(n) / loaded.rate)[keep]
        uniform = not np.any(~keep)
        notes.append(f"{path}: no time column: t = {loaded.start:g} s + k / {loaded.rate:g} Hz")

    raw: dict[str, np.ndarray] = {}
    for name in loaded.groups:
        refs = [c for c in channels if c.kind == name]
        raw[name] = np.column_stack([reader.tables[c.table].values[keep, c.column] for c in refs]) * factors[name]

    transmission = _Transmission(loaded, robot, n_joints)
    out: dict[str, np.ndarray | None] = {"qd": None, "qdd": None, "theta": None}
    for name, group in loaded.groups.items():
        x = raw[name]
        if name == "currents":
            out["tau"] = _currents_to_torque(x, group, transmission, robot, notes, loaded.source)
            continue
        if group.side == "motor":
            if name == "torques":
                x = x @ transmission.matrix(f"{loaded.source}: torques")  # rows: tau_j^T = tau_m^T N
                notes.append(f"{loaded.source}: torques: motor side, tau = N^T tau_motor, {transmission.describe()}")
            else:
                x = np.linalg.solve(transmission.matrix(f"{loaded.source}: {name}"), x.T).T
                notes.append(
                    f"{loaded.source}: {name}: motor side, divided by the transmission N, {transmission.describe()}"
                )
        if group.offset is not None:
            if len(group.offset) != n_joints:
                raise RobidInputError(
                    f"{loaded.source}: {name}.offset: {len(group.offset)} values for {n_joints} joints"
                )
            x = x + np.asarray(group.offset)
        key = {
            "positions": "q",
            "velocities": "qd",
            "accelerations": "qdd",
            "torques": "tau",
            "motor_positions": "theta",
        }[name]
        out[key] = x
    if loaded.time is None and result.dropped.count:
        notes.append(f"{path}: time stamps of dropped samples are missing from t (the gaps are resampled)")
    return Measurement(
        source=str(path),
        t=t,
        q=out["q"],
        tau=out["tau"],
        qd=out["qd"],
        qdd=out["qdd"],
        theta=out["theta"],
        dropped=result.dropped,
        notes=tuple(notes),
        uniform_time=uniform,
    )


def _joint_count(robot: RobotModel | None, dof: int | None, mapping: Mapping | None, path: Path) -> int:
    counts = {
        "the robot": robot.dof if robot is not None else None,
        "the dof argument": dof,
        "the mapping": mapping.dof if mapping is not None else None,
    }
    given = {k: v for k, v in counts.items() if v is not None}
    if not given:
        raise RobidInputError(f"{path}: the number of joints is unknown: give a robot (or dof: in the mapping)")
    values = set(given.values())
    if len(values) > 1:
        detail = ", ".join(f"{k} has {v}" for k, v in given.items())
        raise RobidInputError(f"{path}: joint counts disagree: {detail}")
    return values.pop()


def _group_channels(reader: _Reader, group: Group, n: int, where: str) -> tuple[list[ChannelRef], np.ndarray]:
    refs: list[ChannelRef] = []
    factors: list[np.ndarray] = []
    index = 1
    for k, part in enumerate(group.parts):
        label = f"{where}: {group.name}" + (f".parts[{k}]" if len(group.parts) > 1 else "")
        r, f = reader.channels(part, group.name, GROUP_PREFIX[group.name], index, label, n)
        refs.extend(r)
        factors.append(f)
        index += len(r)
    if len(refs) != n:
        raise RobidInputError(f"{where}: {group.name}: {len(refs)} columns, the robot has {n} joints")
    return refs, np.concatenate(factors)


class _Reader:
    """Loads each file (or .mat variable) once and hands out column references into it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tables: list[RawTable] = []
        self._index: dict[tuple, int] = {}
        self._mats: dict[Path, dict] = {}

    def file_for(self, part_file: str | None, where: str) -> Path:
        if part_file is None:
            if self.path.is_dir():
                raise RobidInputError(f"{where}: {self.path} is a directory: give file: for this signal")
            return self.path
        base = self.path if self.path.is_dir() else self.path.parent
        target = base / part_file
        if not target.exists():
            raise RobidInputError(f"{where}: file {part_file!r}: no such file in {base}")
        return target

    def table(self, part_file: str | None, variable: str | None, options: ReadOptions, where: str) -> RawTable:
        path = self.file_for(part_file, where)
        fmt = file_format(path, options)
        key = (path, variable, options, fmt)
        if key in self._index:
            return self.tables[self._index[key]]
        if fmt == "mat":
            if variable is None:
                raise RobidInputError(f"{where}: {path.name} is a .mat file: give variable: (e.g. rec.time_cont)")
            if path not in self._mats:
                self._mats[path] = load_mat(path)
            reference = self.tables[0].n_samples if self.tables else None
            table = mat_variable(self._mats[path], path, variable, reference)
        else:
            if variable is not None:
                raise RobidInputError(f"{where}: variable: only .mat files have variables ({path.name} is {fmt})")
            table = read_text_table(path, options, fmt)
        self._index[key] = len(self.tables)
        self.tables.append(table)
        return table

    def channels(
        self, part: Part, kind: str, prefix: str, first: int, where: str, n_joints: int
    ) -> tuple[list[ChannelRef], np.ndarray]:
        table = self.table(part.file, part.variable, part.read, where)
        ti = self._index_of(table)
        if part.columns is None:
            cols = list(range(table.values.shape[1]))
        else:
            cols = [table.resolve(c, where) for c in part.columns]
        units = part.units if isinstance(part.units, tuple) else (part.units,) * len(cols)
        if len(units) != len(cols):
            raise RobidInputError(f"{where}: unit: {len(units)} units for {len(cols)} columns")
        factor = np.array([UNITS[kind][u] for u in units])
        if part.scale is not None:
            if len(part.scale) != len(cols):
                raise RobidInputError(f"{where}: scale: {len(part.scale)} values for {len(cols)} columns")
            factor = factor * np.asarray(part.scale)
        names = ["t"] if kind == "time" else [f"{prefix}{first + k}" for k in range(len(cols))]
        refs = [ChannelRef(name=nm, table=ti, column=c, kind=kind) for nm, c in zip(names, cols, strict=True)]
        return refs, factor

    def _index_of(self, table: RawTable) -> int:
        return next(i for i, t in enumerate(self.tables) if t is table)

    def common_length(self, where: str) -> int:
        lengths = {t.n_samples for t in self.tables}
        if len(lengths) > 1:
            detail = ", ".join(
                f"{Path(t.file).name}{'/' + t.variable if t.variable else ''}: {t.n_samples}" for t in self.tables
            )
            raise RobidInputError(f"{where}: the signals have different numbers of samples ({detail})")
        return lengths.pop()


class _Transmission:
    """The motor-to-joint matrix N of the mapping (theta_motor = N q, tau = N^T tau_motor)."""

    def __init__(self, mapping: Mapping, robot: RobotModel | None, n: int) -> None:
        self.spec = mapping.transmission
        self.robot = robot
        self.n = n
        self.where = mapping.source
        self._matrix: np.ndarray | None = None

    def matrix(self, where: str) -> np.ndarray:
        if self._matrix is not None:
            return self._matrix
        spec = self.spec
        if spec.matrix is not None:
            m = np.array(spec.matrix, dtype=float)
            if m.shape != (self.n, self.n):
                raise RobidInputError(f"{self.where}: transmission.matrix: shape {m.shape}, expected {self.n}x{self.n}")
        else:
            if spec.gear_ratios == "robot":
                ratios = self._robot_values("gear_ratio", where)
            else:
                ratios = np.asarray(spec.gear_ratios, dtype=float)
                if ratios.size != self.n:
                    raise RobidInputError(
                        f"{self.where}: transmission.gear_ratios: {ratios.size} values for {self.n} joints"
                    )
            m = np.diag(ratios)
            for motor, joint, ratio in spec.coupling:
                if motor > self.n or joint > self.n:
                    raise RobidInputError(
                        f"{self.where}: transmission.coupling: [{motor}, {joint}, ...] beyond {self.n} joints"
                    )
                m[motor - 1, joint - 1] = ratio
        if not np.all(np.isfinite(m)) or np.linalg.cond(m) > 1e12:
            raise RobidInputError(f"{self.where}: transmission: the matrix N is singular")
        self._matrix = m
        return m

    def _robot_values(self, attribute: str, where: str) -> np.ndarray:
        if self.robot is None:
            raise RobidInputError(f"{where}: needs the robot's drive {attribute}s, but no robot was given")
        out = []
        for joint in self.robot.joints:
            value = getattr(joint.drive, attribute, None) if joint.drive is not None else None
            if value is None:
                raise RobidInputError(
                    f"{where}: joint {joint.name} of robot {self.robot.name} has no drive {attribute}; give it in "
                    "the robot file or in the mapping"
                )
            out.append(float(value))
        return np.asarray(out)

    def describe(self) -> str:
        m = self._matrix
        if m is None:
            return "N unset"
        off = [(i + 1, j + 1, m[i, j]) for i in range(self.n) for j in range(self.n) if i != j and m[i, j] != 0]
        text = "N = diag(" + ", ".join(f"{v:g}" for v in np.diag(m)) + ")"
        if off:
            text += " with " + ", ".join(f"N[{i},{j}] = {v:g}" for i, j, v in off)
        return text


def _currents_to_torque(
    i: np.ndarray, group: Group, transmission: _Transmission, robot: RobotModel | None, notes: list[str], where: str
) -> np.ndarray:
    n = i.shape[1]
    if group.gains is not None:
        gains = np.asarray(group.gains)
        if gains.size != n:
            raise RobidInputError(f"{where}: currents.gains: {gains.size} values for {n} joints")
        notes.append(f"{where}: tau = K * i with drive gains K = [{', '.join(f'{g:g}' for g in gains)}] N m/A")
        return i * gains
    if group.torque_constants == "robot":
        kt = transmission._robot_values("torque_constant", f"{where}: currents")
    else:
        kt = np.asarray(group.torque_constants, dtype=float)
        if kt.size != n:
            raise RobidInputError(f"{where}: currents.torque_constants: {kt.size} values for {n} joints")
    m = transmission.matrix(f"{where}: currents")
    notes.append(
        f"{where}: tau = N^T (k_T * i) with k_T = [{', '.join(f'{k:g}' for k in kt)}] N m/A, {transmission.describe()}"
    )
    return (i * kt) @ m


def read_trajectory_timing(path: str | Path) -> tuple[float, tuple[int, ...] | None]:
    """Period (s) and excited harmonics of a trajectory file written by ``robid design`` (JSON with
    ``period`` and ``harmonics``: a count H meaning 1..H, or a list)."""
    path = Path(path)
    data = read_json(path, "trajectory")
    if not isinstance(data, dict):
        raise RobidInputError(f"{path}: expected a JSON object with period and harmonics")
    period = data.get("period")
    if isinstance(period, bool) or not isinstance(period, int | float) or not period > 0:
        raise RobidInputError(f"{path}: period: expected a positive number of seconds, got {period!r}")
    raw = data.get("harmonics")
    harmonics: tuple[int, ...] | None
    if raw is None:
        harmonics = None
    elif isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1:
        harmonics = tuple(range(1, raw + 1))
    elif isinstance(raw, list) and raw and all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in raw):
        harmonics = tuple(sorted(set(raw)))
    else:
        raise RobidInputError(f"{path}: harmonics: expected a count or a list of positive integers, got {raw!r}")
    return float(period), harmonics
