"""Controller logs users already have, read through the mapping files of examples/mappings/: UR RTDE logs (UR's
own record.py, space separated; ur_rtde's startFileRecording, comma separated) and libfranka's logToCSV. Each file
is written here byte for byte in the layout its public source code writes (docs/mapping-file.md, "Controller
logs"), from a known motion, and read back to the same values in SI units."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import robid
from robid.cli import main
from robid.io.measurement_file import read_measurement

ROOT = Path(__file__).resolve().parents[1]
MAPPINGS = ROOT / "examples" / "mappings"
UR_GAINS = np.array([10.0000, 10.6956, 8.4566, 9.0029, 9.4800, 10.1232])


def _motion(n: int, dof: int, seed: int):
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.002
    w = rng.uniform(0.5, 2.0, dof)
    q = 0.8 * np.sin(np.outer(t, w)) + rng.uniform(-1, 1, dof)
    return t, q, 0.8 * w * np.cos(np.outer(t, w)), rng.normal(0, 3.0, (n, dof))


def _ur_rows(n: int):
    t, q, qd, current = _motion(n, 6, 1)
    timestamp = 1234.5 + t  # seconds since the controller started
    header = ["timestamp"] + [f"{name}_{j}" for name in ("actual_q", "actual_qd", "actual_current") for j in range(6)]
    rows = [[float(x) for x in np.concatenate([[timestamp[k]], q[k], qd[k], current[k]])] for k in range(n)]
    return header, rows, timestamp, q, qd, current


@pytest.mark.parametrize(("mapping", "delimiter"), [("ur_rtde_record.yaml", " "), ("ur_rtde_receive.yaml", ",")])
def test_ur_rtde_logs(tmp_path, mapping, delimiter):
    """RTDE names (timestamp, actual_q_0..5, actual_qd_0..5, actual_current_0..5), written as csv.writer writes
    them; the joint torque is K i with the mapping's gains."""
    header, rows, timestamp, q, qd, current = _ur_rows(500)
    path = tmp_path / "rtde_log.csv"
    with path.open("w", newline="") as f:
        writer = csv.writer(f, delimiter=delimiter)
        writer.writerow(header)
        writer.writerows(rows)
    m = read_measurement(path, robid.load_robot("ur10e").model, mapping=MAPPINGS / mapping)
    np.testing.assert_array_equal(m.t, timestamp)
    np.testing.assert_array_equal(m.q, q)
    np.testing.assert_array_equal(m.qd, qd)
    np.testing.assert_allclose(m.tau, current * UR_GAINS, rtol=1e-15)


def _franka_header() -> str:
    """franka::logToCSV's header (src/log.cpp): names ", "-separated inside a group, "," between groups."""
    def group(name: str, size: int) -> str:
        return ", ".join(f"{name}[{k}]" for k in range(size))

    state = ["time, success_rate, " + group("state.q", 7)] + [group(f"state.{n}", 7) for n in
                                                             ("q_d", "dq", "dq_d", "tau_J", "tau_ext_hat_filtered")]
    command = [group("cmd.q_d", 7), group("cmd.dq_d", 7), group("cmd.O_T_EE_d", 16), group("cmd.O_dP_EE_d", 6),
               group("cmd.tau_J_d", 7)]
    return ",".join(state + command)


def test_libfranka_log(tmp_path, capsys):
    """libfranka's log: time in integer ms, every value printed with std::ostream's default 6 significant digits;
    tau_J (the torque sensors) as the joint torque. robid process reads it with the example mapping."""
    n = 400
    t, q, dq, tau = _motion(n, 7, 2)
    ms = 5_000_000 + np.arange(n)  # the robot clock, 1 kHz
    lines = [_franka_header()]
    for k in range(n):
        state = [ms[k], 1.0, *q[k], *q[k], *dq[k], *dq[k], *tau[k], *np.zeros(7)]
        command = [*q[k], *dq[k], *np.eye(4).ravel(), *np.zeros(6), *np.zeros(7)]
        lines.append(",".join(f"{int(x)}" if j == 0 else f"{x:g}" for j, x in enumerate(state + command)))
    path = tmp_path / "log.csv"
    path.write_text("\n".join(lines) + "\n")
    m = read_measurement(path, mapping=MAPPINGS / "franka_libfranka_log.yaml")
    six = np.vectorize(lambda x: float(f"{x:g}"))
    np.testing.assert_array_equal(m.t, ms * 1e-3)
    np.testing.assert_array_equal(m.q, six(q))
    np.testing.assert_array_equal(m.qd, six(dq))
    np.testing.assert_array_equal(m.tau, six(tau))
    panda = ROOT / "tests" / "data" / "panda_gaz.yaml"
    out = tmp_path / "processed.csv"
    assert main(["process", str(panda), str(path), "--mapping", str(MAPPINGS / "franka_libfranka_log.yaml"),
                 "--out", str(out)]) == 0
    assert out.read_text().startswith("t,q1")
