"""Read a measurement into the canonical form: files -> raw tables -> screening -> SI, joint side.

``read_measurement(path, robot)`` reads the canonical CSV of docs/interfaces.md section 3;
``read_measurement(path, robot, mapping=...)`` reads any layout a mapping describes (docs/signals.md); a ROS 2 bag
(folder, ``.mcap`` or ``.db3``) is read through :mod:`robid.io.ros_bag` into a table of its JointState messages.
``read_trajectory_timing`` reads the period and excited harmonics of a ``robid design`` trajectory or of a
published ``.mat`` design (robid.io.design_file).
The user's files are only ever opened for reading.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.io.mapping import (
    DEFAULT_UNIT,
    GROUP_PREFIX,
    ChannelMapping,
    Group,
    Part,
    ReadOptions,
    canonical_mapping,
    read_mapping,
)
from robid.io.motor_side import TransmissionMatrix, currents_to_torque, motor_to_joint
from robid.io.plausibility import check_positions
from robid.io.ros_bag import is_ros_bag
from robid.io.screening import ChannelRef, ScreeningPolicy, screen
from robid.io.table_set import TableSet
from robid.io.tables import file_format
from robid.model.robot_model import RobotModel
from robid.signals.records import Measurement

#: The canonical signal (Measurement field) of each mapping group; currents become ``tau`` (motor_side.py).
_FIELD = {
    "positions": "q",
    "velocities": "qd",
    "accelerations": "qdd",
    "torques": "tau",
    "motor_positions": "theta",
}


def read_measurement(
    path: str | Path,
    robot: RobotModel | None = None,
    mapping: str | Path | ChannelMapping | None = None,
    policy: ScreeningPolicy | None = None,
    dof: int | None = None,
) -> Measurement:
    """Read, screen and convert one measurement.

    ``robot`` gives the number of joints and, where the mapping asks for them (``robot``), gear ratios and
    torque constants; without a robot, ``dof`` (or the mapping's ``dof``) gives the joint count.
    ``policy`` decides what screening tolerates (default: refuse every bad row).
    """
    path = Path(path)
    policy = policy or ScreeningPolicy()
    if not path.exists():
        raise RobidInputError(f"{path}: no such measurement file")
    loaded = read_mapping(mapping) if isinstance(mapping, str | Path) else mapping
    n_joints = _joint_count(robot, dof, loaded, path)
    tables, loaded, layout_notes = _layout(path, robot, n_joints, loaded)
    notes = list(layout_notes)
    columns = _Columns.locate(tables, loaded, n_joints)
    n = tables.common_length(loaded.source)
    result = screen(tables.tables, columns.channels, columns.time, _with_allowances(policy, loaded))
    notes.extend(result.notes)
    keep = result.keep

    if columns.time is not None:
        t = tables.values(columns.time, keep) * columns.time_factor
        uniform = False
    else:
        t = (loaded.start + np.arange(n) / loaded.rate)[keep]
        uniform = not np.any(~keep)
        notes.append(f"{path}: no time column: t = {loaded.start:g} s + k / {loaded.rate:g} Hz")
    raw, delay_notes = _undo_delays(columns.raw(tables, keep), t, loaded, n_joints)
    signals, side_notes = _joint_side(raw, loaded, robot, n_joints)
    notes += [*delay_notes, *side_notes]
    notes += check_positions(signals["q"], robot, str(path))  # degrees read as radians: refused (docs/security.md)
    if loaded.time is None and result.dropped.count:
        notes.append(f"{path}: time stamps of dropped samples are missing from t (the gaps are resampled)")
    return Measurement(
        source=str(path),
        t=t,
        q=signals["q"],
        tau=signals["tau"],
        qd=signals.get("qd"),
        qdd=signals.get("qdd"),
        theta=signals.get("theta"),
        dropped=result.dropped,
        notes=tuple(notes),
        uniform_time=uniform,
        design=_mapped_design(loaded),
    )


def _mapped_design(mapping: ChannelMapping):
    """The sampled design a mapping names (``design:``), for the design path of the signal stage."""
    if mapping.design is None:
        return None
    from robid.io.design_file import design_processing

    return design_processing(mapping.design)[2]


def _joint_count(robot: RobotModel | None, dof: int | None, mapping: ChannelMapping | None, path: Path) -> int:
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


def _canonical_layout(path: Path, tables: TableSet, n_joints: int) -> tuple[ChannelMapping, tuple[str, ...]]:
    """The mapping implied by the header of a canonical CSV (docs/interfaces.md section 3), and notes naming the
    unused columns."""
    if path.is_dir() or file_format(path, ReadOptions()) != "csv":
        raise RobidOptionError(None,
            f"{path}: not a canonical measurement CSV (header t, q1.., tau1..); describe its layout in a "
            "mapping file and pass it with {mapping} (docs/signals.md)"
        )
    table = tables.table(None, None, ReadOptions(format="csv", header=True), "canonical CSV")
    mapping, extra = canonical_mapping(table.names or [], n_joints, str(path))
    return mapping, tuple(extra)


def _layout(
    path: Path, robot: RobotModel | None, n_joints: int, mapping: ChannelMapping | None
) -> tuple[TableSet, ChannelMapping, tuple[str, ...]]:
    """The measurement's tables and the mapping that reads them: a ROS 2 bag's, the canonical CSV's, or the given
    mapping's; and the notes of reading them."""
    if is_ros_bag(path):
        return _bag_layout(path, robot, n_joints, mapping)
    tables = TableSet(path)
    if mapping is not None and (mapping.topic is not None or mapping.joint_names is not None):
        raise RobidInputError(f"{mapping.source}: topic and joint_names are for ROS 2 bags; {path} is not one "
                              "(a bag folder with metadata.yaml, or a .mcap or .db3 file)")
    if mapping is not None:
        return tables, mapping, ()
    return tables, *_canonical_layout(path, tables, n_joints)


def _bag_layout(
    path: Path, robot: RobotModel | None, n_joints: int, mapping: ChannelMapping | None
) -> tuple[TableSet, ChannelMapping, tuple[str, ...]]:
    """The tables of a ROS 2 bag (robid.io.ros_bag) and the mapping to read them with: the mapping's own signals
    (referring to the columns t, q1.., qd1.., effort1..), or by default positions, velocities (when every message
    has them) and efforts as joint torques, with the mapping's allowances; and the bag reader's notes."""
    from robid.io.ros_bag import read_joint_states

    table, bag_notes = read_joint_states(
        path, robot.joint_names if robot is not None else None, n_joints,
        topic=mapping.topic if mapping is not None else None,
        renames=mapping.joint_names if mapping is not None else None,
    )
    notes = tuple(bag_notes)
    tables = TableSet(path, own_table=table)
    if mapping is not None and mapping.groups:
        return tables, mapping, notes
    columns = {"positions": "q", "velocities": "qd", "torques": "effort"}
    groups = {
        name: Group(name=name, parts=(Part(columns=tuple(f"{prefix}{j + 1}" for j in range(n_joints)),
                                           units=DEFAULT_UNIT[name]),))
        for name, prefix in columns.items() if f"{prefix}1" in table.names
    }
    default = ChannelMapping(source=f"{path} (ROS 2 bag)", groups=groups, time=Part(columns=("t",), units="s"))
    if mapping is None:
        return tables, default, notes
    return tables, replace(default, source=mapping.source, allow_constant=mapping.allow_constant,
                           allow_saturated=mapping.allow_saturated, dof=mapping.dof,
                           description=mapping.description), notes


def _with_allowances(policy: ScreeningPolicy, mapping: ChannelMapping) -> ScreeningPolicy:
    """The policy with the mapping's allow_constant and allow_saturated channels added."""
    if not (mapping.allow_constant or mapping.allow_saturated):
        return policy
    return replace(
        policy,
        allow_constant=tuple(policy.allow_constant) + mapping.allow_constant,
        allow_saturated=tuple(policy.allow_saturated) + mapping.allow_saturated,
    )


@dataclass(frozen=True)
class _Columns:
    """The used columns of a measurement: the time column (None: from the rate) with its factor to s, and
    per group its channels and their factors to SI."""

    time: ChannelRef | None
    time_factor: float
    channels: list[ChannelRef]
    factors: dict[str, np.ndarray]

    @classmethod
    def locate(cls, tables: TableSet, mapping: ChannelMapping, n_joints: int) -> _Columns:
        time_ref, time_factor = None, 1.0
        if mapping.time is not None:
            refs, f = tables.channels(mapping.time, "time", "t", 1, f"{mapping.source}: time", n_joints)
            time_ref, time_factor = refs[0], float(f[0])
        channels: list[ChannelRef] = []
        factors: dict[str, np.ndarray] = {}
        for name, group in mapping.groups.items():
            refs, f = tables.group_channels(group, n_joints, mapping.source)
            channels.extend(refs)
            factors[name] = f
        return cls(time_ref, time_factor, channels, factors)

    def raw(self, tables: TableSet, keep: np.ndarray) -> dict[str, np.ndarray]:
        """The kept samples of every group, (N, dof), in SI units on the recorded side."""
        out = {}
        for name, factor in self.factors.items():
            refs = [c for c in self.channels if c.kind == name]
            out[name] = np.column_stack([tables.values(c, keep) for c in refs]) * factor
        return out


def _undo_delays(
    raw: dict[str, np.ndarray], t: np.ndarray, mapping: ChannelMapping, n_joints: int
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The recorded channels with the mapping's ``delay`` of each group undone, x(t) = x_rec(t + delay), by
    band-limited interpolation (robid.signals.time_shift), on the recorded side (before any transmission mixes
    channels); and one note per group shifted."""
    from robid.signals.time_shift import advance, uniform_step

    out = dict(raw)
    notes: list[str] = []
    for name, group in mapping.groups.items():
        delays = np.broadcast_to(np.asarray(group.delay, dtype=float), (n_joints,)) if np.ndim(group.delay) == 0 \
            else np.asarray(group.delay, dtype=float)
        if delays.shape != (n_joints,):
            raise RobidInputError(f"{mapping.source}: {name}.delay: {delays.size} values for {n_joints} joints")
        if not np.any(delays):
            continue
        step = uniform_step(t)
        if step is None:
            raise RobidInputError(
                f"{mapping.source}: {name}.delay: needs uniformly sampled time stamps (steps from "
                f"{np.min(np.diff(t)):.6g} to {np.max(np.diff(t)):.6g} s, rows dropped or a jittery clock); "
                "remove the delay or resample the file"
            )
        x = out[name].copy()
        for j in np.flatnonzero(delays):
            x[:, j] = advance(x[:, j], step, float(delays[j]))
        out[name] = x
        shifted = ", ".join(f"{j + 1}: {1e3 * delays[j]:g} ms" for j in np.flatnonzero(delays))
        notes.append(f"{mapping.source}: {name} recorded late, advanced by band-limited interpolation ({shifted})")
    return out, notes


def _joint_side(
    raw: dict[str, np.ndarray], mapping: ChannelMapping, robot: RobotModel | None, n_joints: int
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The canonical signals (q, qd, qdd, tau, theta) on the joint side: currents to torques, motor-side
    signals through the transmission, position offsets added; and a note for every conversion."""
    transmission = TransmissionMatrix(mapping, robot, n_joints)
    where = mapping.source
    out: dict[str, np.ndarray] = {}
    notes: list[str] = []
    for name, group in mapping.groups.items():
        x = raw[name]
        if name == "currents":
            out["tau"], rule = currents_to_torque(x, group, transmission, where)
            notes += rule
            continue
        if group.side == "motor":
            x, rule = motor_to_joint(x, name, transmission, where)
            notes += rule
        if group.offset is not None:
            if len(group.offset) != n_joints:
                raise RobidInputError(f"{where}: {name}.offset: {len(group.offset)} values for {n_joints} joints")
            x = x + np.asarray(group.offset)
        out[_FIELD[name]] = x
    return out, notes


def read_trajectory_timing(path: str | Path) -> tuple[float, tuple[int, ...] | None]:
    """Period (s) and excited harmonics of a trajectory or published design file
    (robid.io.design_file.read_trajectory_timing, loaded on first use: reading a measurement loads no design code)."""
    from robid.io.design_file import read_trajectory_timing as read

    return read(path)


def measured_groups(path: str | Path, mapping: str | Path | ChannelMapping | None = None) -> frozenset[str]:
    """The signal groups a measurement holds (``positions``, ``torques``, ``motor_positions``, ...), from its
    mapping or, for a canonical CSV, from its header line alone (the file is not read): what identification needs
    to choose its layout before reading the data. A file that is neither gives the empty set (reading it later
    says what is wrong)."""
    loaded = read_mapping(mapping) if isinstance(mapping, str | Path) else mapping
    if loaded is not None:
        return frozenset(loaded.groups)
    path = Path(path)
    try:
        with path.open("rb") as f:
            header = f.readline(1 << 20).decode("utf-8", errors="replace")
    except OSError:
        return frozenset()
    names = {n.strip().strip('"') for n in header.split(",")}
    groups = set()
    for group, prefix in GROUP_PREFIX.items():
        if f"{prefix}1" in names:
            groups.add(group)
    return frozenset(groups)
