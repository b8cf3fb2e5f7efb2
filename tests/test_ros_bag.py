"""ROS 2 bags as measurements (robid/io/ros_bag.py): sqlite3 and MCAP storage written with rosbags' own writer,
joints matched by name in any order, topic and renames from a mapping file, and one clear line (exit 2) for a bag
whose joint names do not match the robot, a bag without effort, or a bag with several JointState topics."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from test_mjcf_acceptance import write_joint_state_bag
from test_mjcf_reader import UR10E

import robid
from robid.cli import main
from robid.errors import RobidInputError
from robid.io.measurement_file import read_measurement
from robid.io.ros_bag import is_ros_bag


@pytest.fixture(scope="module")
def robot():
    return robid.load_robot(UR10E)


def _run(n: int = 400, seed: int = 1) -> dict:
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.004
    q = np.sin(np.outer(t, np.arange(1, 7)) * 2.0) + rng.normal(0, 1e-3, (n, 6))
    return {"stamps": np.arange(n) * 4_000_000, "q_meas": q, "qd": np.cos(np.outer(t, np.arange(1, 7))),
            "tau_meas": rng.normal(0, 10, (n, 6))}


@pytest.mark.parametrize("storage", ["sqlite3", "mcap"])
def test_values_in_robot_order(robot, tmp_path, storage):
    """Positions, velocities and efforts land on the robot's joints whatever the message order; t starts at 0 and
    comes from the header stamps in integer nanoseconds; an extra joint is ignored with a note."""
    run = _run()
    names = robot.joint_names + ["finger"]
    run_x = {**run, "q_meas": np.column_stack([run["q_meas"], np.ones(400)]),
             "qd": np.column_stack([run["qd"], np.ones(400)]), "tau_meas": np.column_stack([run["tau_meas"],
                                                                                           np.ones(400)])}
    bag = tmp_path / "bag"
    write_joint_state_bag(run_x, bag, names, storage, order=[6, 5, 4, 3, 2, 1, 0], velocity=True)
    assert is_ros_bag(bag) and not is_ros_bag(tmp_path)
    m = read_measurement(bag, robot.model)
    np.testing.assert_array_equal(m.q, run["q_meas"])
    np.testing.assert_array_equal(m.qd, run["qd"])
    np.testing.assert_array_equal(m.tau, run["tau_meas"])
    np.testing.assert_array_equal(m.t, run["stamps"] / 1e9)
    assert any("ignored: finger" in n for n in m.notes)


def test_mapping_topic_renames_and_currents(robot, tmp_path):
    """A bag with two JointState topics: the mapping picks one, renames its joints, and reads its efforts as motor
    currents through gains."""
    run = _run()
    bag = tmp_path / "bag"
    store = get_typestore(Stores.ROS2_HUMBLE)
    state, header, time = (store.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                                     "builtin_interfaces/msg/Time"))
    short = [f"j{k + 1}" for k in range(6)]
    with Writer(bag, version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        arm = writer.add_connection("/arm/joint_states", state.__msgtype__, typestore=store)
        cmd = writer.add_connection("/arm/command_states", state.__msgtype__, typestore=store)
        for k, stamp in enumerate(run["stamps"]):
            for conn, scale in ((arm, 1.0), (cmd, 2.0)):
                msg = state(header=header(stamp=time(sec=0, nanosec=int(stamp)), frame_id=""), name=short,
                            position=run["q_meas"][k] * scale, velocity=np.zeros(0), effort=run["tau_meas"][k])
                writer.write(conn, int(stamp), store.serialize_cdr(msg, state.__msgtype__))
    with pytest.raises(RobidInputError, match="2 sensor_msgs/msg/JointState topics .*choose one with topic:"):
        read_measurement(bag, robot.model)
    mapping = tmp_path / "bag.yaml"
    renames = ", ".join(f"{s}: {n}" for s, n in zip(short, robot.joint_names, strict=True))
    mapping.write_text(f"robid_mapping: 1\ntopic: /arm/joint_states\njoint_names: {{{renames}}}\n")
    m = read_measurement(bag, robot.model, mapping=mapping)
    np.testing.assert_array_equal(m.q, run["q_meas"])
    gains = [2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
    columns = ", ".join(f"effort{j + 1}" for j in range(6))
    mapping.write_text(f"robid_mapping: 1\ntopic: /arm/joint_states\njoint_names: {{{renames}}}\n"
                       f"positions: {{columns: [{', '.join(f'q{j + 1}' for j in range(6))}]}}\n"
                       f"currents: {{columns: [{columns}], gains: {gains}}}\n")
    m = read_measurement(bag, robot.model, mapping=mapping)
    np.testing.assert_allclose(m.tau, run["tau_meas"] * gains, rtol=1e-15)


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("names", "no joint named shoulder_pan_joint, wrist_3_joint in the messages (they name"),
        ("effort", "the messages have no effort (joint torques)"),
        ("topic", "topic '/other': no such sensor_msgs/msg/JointState topic (the bag has /joint_states)"),
    ],
)
def test_bad_bags_are_one_line(robot, tmp_path, capsys, kind, message):
    """Mismatched joint names (the missing ones named), no effort, an unknown topic: exit 2, one line."""
    run = _run()
    names = list(robot.joint_names)
    if kind == "names":
        names[0], names[5] = "base_joint", "tool_joint"
    bag = tmp_path / "bag"
    write_joint_state_bag(run, bag, names, "mcap", effort=kind != "effort")
    args = ["process", str(UR10E), str(bag), "--out", str(tmp_path / "p.csv")]
    if kind == "topic":
        (tmp_path / "map.yaml").write_text("robid_mapping: 1\ntopic: /other\n")
        args += ["--mapping", str(tmp_path / "map.yaml")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("robid: error: ") and err.count("\n") == 1 and message in err, err


def test_an_odd_message_is_a_screened_row(robot, tmp_path):
    """A message that lacks a robot joint among good ones is an unreadable row (its message number): refused by
    default, dropped and counted when the policy allows."""
    run = _run()
    bag = tmp_path / "bag"
    store = get_typestore(Stores.ROS2_HUMBLE)
    state, header, time = (store.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                                     "builtin_interfaces/msg/Time"))
    with Writer(bag, version=9, storage_plugin=StoragePlugin.SQLITE3) as writer:
        conn = writer.add_connection("/joint_states", state.__msgtype__, typestore=store)
        for k, stamp in enumerate(run["stamps"]):
            names = robot.joint_names if k != 7 else robot.joint_names[:5]
            msg = state(header=header(stamp=time(sec=0, nanosec=int(stamp)), frame_id=""), name=names,
                        position=run["q_meas"][k, : len(names)], velocity=np.zeros(0),
                        effort=run["tau_meas"][k, : len(names)])
            writer.write(conn, int(stamp), store.serialize_cdr(msg, state.__msgtype__))
    with pytest.raises(RobidInputError, match="row 8"):
        read_measurement(bag, robot.model)


def test_topic_is_refused_for_a_csv(robot, tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("t,q1,q2,q3,q4,q5,q6,tau1,tau2,tau3,tau4,tau5,tau6\n" + "0" + ",0" * 12 + "\n")
    mapping = tmp_path / "m.yaml"
    mapping.write_text("robid_mapping: 1\ntopic: /joint_states\n")
    with pytest.raises(RobidInputError, match="topic and joint_names are for ROS 2 bags"):
        read_measurement(csv, robot.model, mapping=mapping)


@settings(max_examples=15, deadline=None)
@given(order=st.permutations(list(range(8))), storage=st.sampled_from(["sqlite3", "mcap"]))
def test_any_joint_order_reads_the_same(robot, tmp_path_factory, order, storage):
    """Property: the robot's six joints and two others, in any order in the messages: the same q, tau in the
    robot's order, and the two others ignored."""
    run = _run(40)
    names = robot.joint_names + ["finger_left", "finger_right"]
    wide = {**run, "q_meas": np.column_stack([run["q_meas"], np.full((40, 2), 7.0)]),
            "tau_meas": np.column_stack([run["tau_meas"], np.full((40, 2), -7.0)])}
    bag = tmp_path_factory.mktemp("bag") / "bag"
    write_joint_state_bag(wide, bag, names, storage, order=list(order))
    m = read_measurement(bag, robot.model)
    np.testing.assert_array_equal(m.q, run["q_meas"])
    np.testing.assert_array_equal(m.tau, run["tau_meas"])
