"""ROS 2 bags as measurements: ``sensor_msgs/JointState`` messages of a bag folder (sqlite3 or MCAP storage) or of
one ``.mcap`` / ``.db3`` file, read with the pure-Python ``rosbags`` library (no ROS installation).

Every message is one sample: ``header.stamp`` is its time (``t = stamp - first stamp``, from integer nanoseconds,
so that a CSV of the same stamps reads to the same doubles; the bag's receive time when every stamp is zero),
``position`` the joint positions, ``velocity`` the measured velocities (when every message has them) and
``effort`` the joint torques (N m, N). Joints are matched to the robot's by name, in any order and per message:
a bag name equals robid's joint name, or becomes it as robid names a URDF or MJCF joint (characters other than
letters, digits and _ replaced by _), or a mapping file's ``joint_names`` renames it. A joint of the robot that the
messages do not have is an error naming it; joints the robot does not have are ignored (a note). A message that
lacks a matched joint or has arrays of the wrong length is an unreadable row (its message number), for screening
to count and refuse or drop (docs/signals.md).

The result is a table with the columns ``t``, ``q1``.., ``qd1``.., ``effort1``.. in the robot's joint order: from
there a bag is read exactly like the canonical CSV (by default efforts are joint torques), or through a mapping's
columns (efforts that are motor currents: ``currents: {columns: [effort1, ...], torque_constants: robot}``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.io.tables import RawTable

JOINT_STATE = "sensor_msgs/msg/JointState"
BAG_SUFFIXES = (".mcap", ".db3")


def is_ros_bag(path: str | Path) -> bool:
    """A rosbag2 folder (with ``metadata.yaml``) or a single ``.mcap`` / ``.db3`` file."""
    path = Path(path)
    if path.is_dir():
        return (path / "metadata.yaml").is_file()
    return path.suffix.lower() in BAG_SUFFIXES


@dataclass
class _Samples:
    """What the messages hold, sample by sample (NaN where a message lacks it)."""

    stamps: list[int] = field(default_factory=list)
    receive: list[int] = field(default_factory=list)
    rows: list[np.ndarray] = field(default_factory=list)
    problems: dict[int, tuple[int, str]] = field(default_factory=dict)
    velocity_missing: int = 0
    effort_missing: int = 0


def read_joint_states(
    path: str | Path, joints: list[str] | None, dof: int, topic: str | None = None,
    renames: dict[str, str] | None = None,
) -> tuple[RawTable, list[str]]:
    """The bag's JointState samples as a canonical table (module docstring) and the notes on how it was read.
    ``joints``: the robot's joint names (None: the first message's order, ``dof`` of them)."""
    path = Path(path)
    renames = renames or {}
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    try:
        reader = AnyReader([path], default_typestore=get_typestore(Stores.ROS2_HUMBLE))
        reader.open()
    except Exception as exc:  # rosbags raises its own errors and OSError for unreadable storage
        raise RobidInputError(f"{path}: not a readable ROS 2 bag ({_one_line(exc)})") from None
    try:
        chosen = _topic(reader, path, topic)
        connections = [c for c in reader.connections if c.topic == chosen]
        samples, sample_notes = _samples(reader, connections, path, chosen, joints, dof, renames)
    finally:
        reader.close()
    return _table(samples, path, chosen, sample_notes)


def _topic(reader, path: Path, topic: str | None) -> str:
    topics = sorted({c.topic for c in reader.connections if c.msgtype == JOINT_STATE})
    others = sorted({f"{c.topic} ({c.msgtype})" for c in reader.connections if c.msgtype != JOINT_STATE})
    if topic is not None:
        if topic not in topics:
            raise RobidInputError(f"{path}: topic {topic!r}: no such {JOINT_STATE} topic (the bag has "
                                  f"{', '.join(topics) or 'none'}{'; others: ' + ', '.join(others) if others else ''})")
        return topic
    if not topics:
        raise RobidInputError(f"{path}: no {JOINT_STATE} topic (the bag has {', '.join(others) or 'no topics'})")
    if len(topics) > 1:
        raise RobidOptionError(None, f"{path}: {len(topics)} {JOINT_STATE} topics ({', '.join(topics)}): choose "
                               "one with topic: in a mapping file ({mapping})")
    return topics[0]


def _matcher(names: tuple[str, ...], joints: list[str], renames: dict[str, str], where: str) -> list[int]:
    """Index into a message's arrays of each robot joint (module docstring)."""
    index: dict[str, int] = {}
    for k, name in enumerate(names):
        for candidate in (renames.get(name), name, re.sub(r"\W", "_", name), re.sub(r"[^A-Za-z0-9_]", "_", name)):
            if candidate in joints and candidate not in index:
                index[candidate] = k
                break
    missing = [j for j in joints if j not in index]
    if missing:
        raise RobidOptionError(None,
            f"{where}: no joint named {', '.join(missing)} in the messages (they name {', '.join(names) or 'none'}); "
            "rename them with joint_names: {bag name: robot joint} in a mapping file ({mapping})"
        )
    return [index[j] for j in joints]


def _samples(reader, connections, path, topic, joints, dof, renames) -> tuple[_Samples, list[str]]:
    where = f"{path}: topic {topic}"
    out = _Samples()
    matchers: dict[tuple[str, ...], list[int] | None] = {}
    ignored: set[str] = set()
    for number, (conn, received, raw) in enumerate(reader.messages(connections=connections), start=1):
        msg = reader.deserialize(raw, conn.msgtype)
        names = tuple(str(n) for n in msg.name)
        if joints is None:
            joints = list(names[:dof])
        if names not in matchers:
            try:
                matchers[names] = _matcher(names, joints, renames, where)
            except RobidInputError:
                if not matchers:
                    raise
                matchers[names] = None  # an odd message among good ones: a row for screening
            ignored |= set(names) - {names[k] for k in matchers[names] or ()}
        if matchers[names] is None:
            out.problems[number - 1] = (number, f"message {number} lacks a robot joint (it names {', '.join(names)})")
        out.stamps.append(int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec))
        out.receive.append(int(received))
        out.rows.append(_row(msg, matchers[names], len(names), len(joints), number, out))
    if not out.rows:
        raise RobidInputError(f"{where}: no messages")
    if out.effort_missing == len(out.rows):
        raise RobidInputError(f"{where}: the messages have no effort (joint torques): robid identifies from torques; "
                              "record a topic whose JointState carries effort")
    notes = [f"{where}: {len(out.rows)} {JOINT_STATE} messages, joints {', '.join(joints)}"]
    if ignored:
        notes.append(f"{where}: joints not in the robot, ignored: {', '.join(sorted(ignored))}")
    return out, notes


def _row(msg, match: list[int] | None, n_names: int, dof: int, number: int, out: _Samples) -> np.ndarray:
    """[t placeholder, q, qd, tau] of one message; NaN and a problem where it lacks them."""
    position, velocity, effort = (np.asarray(a, dtype=float) for a in (msg.position, msg.velocity, msg.effort))
    out.velocity_missing += velocity.size == 0
    out.effort_missing += effort.size == 0
    nan = np.full(1 + 3 * dof, np.nan)
    if match is None:
        return nan
    bad = [label for label, a, required in (("position", position, True), ("velocity", velocity, False),
                                            ("effort", effort, True))
           if a.size != n_names and (required or a.size)]
    if bad:
        out.problems[number - 1] = (number, f"message {number}: {', '.join(bad)} has not one value per name")
        return nan
    pick = np.asarray(match)
    qd = velocity[pick] if velocity.size else np.full(dof, np.nan)
    return np.concatenate([[0.0], position[pick], qd, effort[pick]])


def _table(samples: _Samples, path: Path, topic: str, notes: list[str]) -> tuple[RawTable, list[str]]:
    """The canonical table: t from the stamps (module docstring), qd only when every message has velocities; and
    ``notes`` followed by the table's own."""
    stamps = np.asarray(samples.stamps, dtype=np.int64)
    where = f"{path}: topic {topic}"
    own: list[str] = []
    if not np.any(stamps):
        stamps = np.asarray(samples.receive, dtype=np.int64)
        own.append(f"{where}: every header stamp is zero: t is the bag's receive time")
    values = np.vstack(samples.rows)
    dof = (values.shape[1] - 1) // 3
    values[:, 0] = (stamps - stamps[0]) / 1e9
    names = ["t"] + [f"{p}{j + 1}" for p in ("q", "qd", "effort") for j in range(dof)]
    if samples.velocity_missing:
        keep = [k for k, n in enumerate(names) if not n.startswith("qd")]
        values, names = values[:, keep], [names[k] for k in keep]
        some = "not every message has" if samples.velocity_missing < values.shape[0] else "the messages have no"
        own.append(f"{where}: {some} velocities: qd is computed from the positions")
    table = RawTable(file=f"{path} ({topic})", values=values, rows=np.arange(1, values.shape[0] + 1),
                     names=names, problems=dict(samples.problems))
    return table, [*notes, *own]


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    return text[:200] or type(exc).__name__
