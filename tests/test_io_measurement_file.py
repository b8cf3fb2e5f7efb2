"""Reading measurements: the canonical CSV and every mapping feature, on small files written here.

Expected values are computed by hand from the numbers written to the files (unit factors, gear ratios,
coupling), never by the reader itself.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from robid.errors import RobidInputError
from robid.io.mapping import read_mapping
from robid.io.measurement_file import read_measurement
from robid.io.processed_files import write_processed_csv
from robid.io.screening import ScreeningPolicy
from robid.model.loader import read_robot
from robid.signals.processing import process

DATA = Path(__file__).resolve().parent / "data" / "signals"
ROBOT = DATA / "robot2.yaml"  # 2 joints: gear ratios 100, 50; torque constants 0.5, 0.4


@pytest.fixture(scope="module")
def robot():
    return read_robot(ROBOT)


def signals(n: int = 200, rate: float = 100.0):
    t = np.arange(n) / rate
    q = np.column_stack([0.5 * np.sin(2 * np.pi * 0.5 * t), 0.3 * np.cos(2 * np.pi * 0.7 * t) + 0.1])
    tau = np.column_stack([3.0 * np.cos(q[:, 0]) + 0.2 * np.sin(5 * t), 1.5 * np.sin(q[:, 1]) + 0.1 * t])
    return t, q, tau


def write_csv(path: Path, header: list[str] | None, table: np.ndarray, sep: str = ",") -> Path:
    with open(path, "w") as f:
        if header is not None:
            f.write(sep.join(header) + "\n")
        for row in table:
            f.write(sep.join(f"{v:.12g}" for v in row) + "\n")
    return path


def write_mapping(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_canonical_csv(tmp_path, robot):
    t, q, tau = signals()
    f = write_csv(tmp_path / "m.csv", ["t", "q1", "q2", "tau1", "tau2", "extra"], np.column_stack([t, q, tau, t]))
    m = read_measurement(f, robot)
    assert m.n_samples == t.size and m.dof == 2
    assert np.allclose(m.q, q, atol=1e-11) and np.allclose(m.tau, tau, atol=1e-11)
    assert any("not used: extra" in n for n in m.notes)
    assert m.qd is None and m.dropped.count == 0


def test_canonical_csv_currents_use_the_robot_drives(tmp_path, robot):
    t, q, tau = signals()
    current = tau / np.array([0.5 * 100, 0.4 * 50])  # tau = i * k_T * gear ratio
    f = write_csv(tmp_path / "m.csv", ["t", "q1", "q2", "i1", "i2"], np.column_stack([t, q, current]))
    m = read_measurement(f, robot)
    assert np.allclose(m.tau, tau, rtol=1e-9)


def test_headerless_columns_degrees_and_gains(tmp_path, robot):
    t, q, tau = signals()
    gains = np.array([12.0, 7.5])
    table = np.column_stack([t * 1000.0, np.degrees(q), np.zeros_like(t), tau / gains])
    f = write_csv(tmp_path / "log.csv", None, table)
    mp = write_mapping(
        tmp_path / "map.yaml",
        """robid_mapping: 1
header: false
time: {column: 1, unit: ms}
positions: {columns: [2, 3], unit: deg}
currents: {columns: [5, 6], unit: A, gains: [12.0, 7.5]}
""",
    )
    m = read_measurement(f, robot, mapping=mp)
    assert np.allclose(m.t, t) and np.allclose(m.q, q, atol=1e-10) and np.allclose(m.tau, tau, rtol=1e-9)


def test_motor_side_units_with_coupling_matrix(tmp_path, robot):
    t, q, tau = signals()
    n_mat = np.array([[100.0, 0.0], [50.0, 50.0]])  # theta_m2 = 50 (q1 + q2): a coupled wrist
    theta_m = q @ n_mat.T
    tau_m = np.linalg.solve(n_mat.T, tau.T).T  # tau = N^T tau_m
    table = np.column_stack([theta_m, tau_m])
    f = write_csv(tmp_path / "motor.csv", ["M1", "M2", "T1", "T2"], table)
    mp = write_mapping(
        tmp_path / "map.yaml",
        """robid_mapping: 1
time: {rate: 100}
positions: {columns: [M1, M2], side: motor, offset: [0, "90deg"]}
torques: {columns: [T1, T2], side: motor}
transmission: {gear_ratios: [100, 50], coupling: [[2, 1, 50]]}
""",
    )
    m = read_measurement(f, robot, mapping=mp)
    assert np.allclose(m.t, t)
    assert np.allclose(m.q, q + [0.0, math.pi / 2], atol=1e-9)
    assert np.allclose(m.tau, tau, rtol=1e-8, atol=1e-9)
    assert m.uniform_time


def test_currents_through_torque_constants_and_robot_gear_ratios(tmp_path, robot):
    t, q, tau = signals()
    current = tau / np.array([0.5 * 100, 0.4 * 50]) * 1000.0  # mA
    f = write_csv(tmp_path / "c.csv", ["time", "a", "b", "ia", "ib"], np.column_stack([t, q, current]))
    mp = write_mapping(
        tmp_path / "map.yaml",
        """robid_mapping: 1
time: {column: time}
positions: {columns: [a, b]}
currents: {columns: [ia, ib], unit: mA, torque_constants: robot}
""",
    )
    m = read_measurement(f, robot, mapping=mp)
    assert np.allclose(m.tau, tau, rtol=1e-9)


def test_whitespace_text_with_comments(tmp_path, robot):
    t, q, tau = signals()
    f = tmp_path / "log.txt"
    with open(f, "w") as h:
        h.write("# exported by a controller\n# t q1 q2 tau1 tau2\n")
        for row in np.column_stack([t, q, tau]):
            h.write("   ".join(f"{v:.12g}" for v in row) + "\n")
    mp = write_mapping(
        tmp_path / "map.yaml",
        """robid_mapping: 1
format: text
comment: "#"
time: {column: 1}
positions: {columns: [2, 3]}
torques: {columns: [4, 5]}
""",
    )
    m = read_measurement(f, robot, mapping=mp)
    assert np.allclose(m.q, q) and np.allclose(m.tau, tau)


def test_one_value_per_line_in_several_files(tmp_path, robot):
    t, q, tau = signals()
    folder = tmp_path / "log"
    folder.mkdir()
    np.savetxt(folder / "time.txt", t)
    np.savetxt(folder / "pos.txt", q.reshape(-1))
    np.savetxt(folder / "tau.txt", tau.reshape(-1))
    mp = write_mapping(
        tmp_path / "map.yaml",
        """robid_mapping: 1
format: text
values_per_sample: 2
time: {file: time.txt, values_per_sample: 1, column: 1}
positions: {file: pos.txt}
torques: {file: tau.txt}
""",
    )
    m = read_measurement(folder, robot, mapping=mp)
    assert np.allclose(m.t, t) and np.allclose(m.q, q) and np.allclose(m.tau, tau)


def test_mat_struct_with_parts(tmp_path, robot):
    t, q, tau = signals()
    rec = {
        "time": t[None, :],
        "link_deg": np.vstack([np.degrees(q[:, 0]), np.zeros_like(t)]),  # joint 2 has no link encoder
        "motor_deg": np.degrees(q).T,
        "tau_motor": (tau / np.array([100.0, 50.0])).T,
    }
    f = tmp_path / "data.mat"
    scipy.io.savemat(f, {"rec": rec})
    mp = write_mapping(
        tmp_path / "map.yaml",
        """robid_mapping: 1
format: mat
time: {variable: rec.time}
positions:
  parts:
    - {variable: rec.link_deg, columns: [1], unit: deg}
    - {variable: rec.motor_deg, columns: [2], unit: deg}
motor_positions: {variable: rec.motor_deg, unit: deg}
torques: {variable: rec.tau_motor, side: motor}
""",
    )
    m = read_measurement(f, robot, mapping=mp)  # gear ratios from the robot file
    assert np.allclose(m.q, q) and np.allclose(m.theta, q) and np.allclose(m.tau, tau)
    with pytest.raises(RobidInputError, match="no field 'nope'"):
        bad = write_mapping(tmp_path / "bad.yaml", mp.read_text().replace("rec.time", "rec.nope"))
        read_measurement(f, robot, mapping=bad)


def test_files_are_never_modified_and_outputs_are_atomic(tmp_path, robot):
    t, q, tau = signals(400)
    f = write_csv(tmp_path / "m.csv", ["t", "q1", "q2", "tau1", "tau2"], np.column_stack([t, q, tau]))
    before = hashlib.sha256(f.read_bytes()).hexdigest()
    stamp = f.stat().st_mtime_ns
    p = process(read_measurement(f, robot))
    out = tmp_path / "out.csv"
    out.write_text("old content\n")
    write_processed_csv(out, p)
    assert hashlib.sha256(f.read_bytes()).hexdigest() == before and f.stat().st_mtime_ns == stamp
    assert out.read_text().startswith("t,q1,q2,qd1,qd2,qdd1,qdd2,tau1,tau2\n")
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.csv", "out.csv"]  # no temporary file left


def test_mapping_errors_name_the_key(tmp_path):
    cases = {
        "robid_mapping: 2\n": "schema version",
        "robid_mapping: 1\ntime: {rate: 10}\npositions: {columns: [1]}\n": "torques or currents",
        "robid_mapping: 1\ntime: {rate: 10}\npositions: {columns: [1], unit: furlong}\ntorques: {columns: [2]}\n": (
            "unknown 'furlong'"
        ),
        "robid_mapping: 1\ntime: {rate: 10}\npositions: {columns: [0]}\ntorques: {columns: [2]}\n": "1-based",
        "robid_mapping: 1\ntime: {rate: 10}\npositions: {colums: [1]}\ntorques: {columns: [2]}\n": "'colums'",
        "robid_mapping: 1\ntime: {rate: 10}\npositions: {columns: [1]}\ncurrents: {columns: [2]}\n": "exactly one",
        "robid_mapping: 1\ntime: [1]\n": "time: expected mapping, got a list",
    }
    for k, (text, expected) in enumerate(cases.items()):
        path = write_mapping(tmp_path / f"m{k}.yaml", text)
        with pytest.raises(RobidInputError, match=expected):
            read_mapping(path)


def test_shipped_mappings_parse():
    folder = Path(__file__).resolve().parents[1] / "examples" / "mappings"
    files = sorted(folder.glob("*.yaml"))
    assert len(files) >= 4
    for f in files:
        assert read_mapping(f).groups["positions"]


def test_drop_record_lists_rows_and_reasons(tmp_path, robot):
    t, q, tau = signals(300)
    lines = ["t,q1,q2,tau1,tau2"] + [",".join(f"{v:.12g}" for v in row) for row in np.column_stack([t, q, tau])]
    lines[51] = lines[51].replace(lines[51].split(",")[3], "nan", 1)
    lines[120] = ",".join(lines[120].split(",")[:3])  # truncated
    lines[200] = lines[199]  # repeated time stamp
    f = tmp_path / "m.csv"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(RobidInputError, match=r"m.csv: row 52, column 4 \(tau1\): NaN"):
        read_measurement(f, robot)
    m = read_measurement(f, robot, policy=ScreeningPolicy(drop_bad_rows=True))
    assert m.dropped.row_numbers == (52, 121, 201)
    reasons = [r.reason for r in m.dropped.rows]
    assert "NaN" in reasons[0] and "truncated" in reasons[1] and "repeats row 200" in reasons[2]
    assert m.n_samples == 297
