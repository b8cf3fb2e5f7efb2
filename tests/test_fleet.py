"""Fleets (robid/fleet, docs/fleet.md): campaigns as Dask tasks on a local cluster and on a scheduler started as
separate processes, results equal to the serial run's bit for bit, nothing recomputed the second time, a failed
robot reported with its reason while the others finish, and fleet file errors as one line naming the field."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from robid.errors import RobidInputError
from robid.fleet.demo import DemoRobot, write_demo_fleet
from robid.fleet.runner import run_fleet
from robid.fleet.spec import fleet_from_dict, read_fleet
from robid.io.result_file import read_result

TERMS = ("rigid", "rotor", "viscous", "coulomb")
#: short designs and runs: the test fleet is about its plumbing, not its accuracy
SMALL = {"ident_periods": 2, "rate": 100.0,
         "design": {"harmonics": 4, "period": 4, "starts": 1, "grid_points": 60, "max_iterations": 10},
         "valid_design": {"harmonics": 4, "period": 4, "starts": 1, "grid_points": 60, "max_iterations": 5}}
BIN = Path(sys.executable).parent


def _fleet(out: Path, n: int = 4, dates=("2025-01-10",)) -> Path:
    robots = [DemoRobot(f"R-{k}", "do_2r_elastic", f"cell {k}", TERMS,
                        fault=(1, 1, "viscous", 1.4) if k == 1 else None) for k in range(n)]
    return write_demo_fleet(out, robots, dates, campaign_kwargs=SMALL)


@pytest.fixture(scope="module")
def client():
    from robid.fleet.dask_engine import dask_client

    with dask_client(workers=2) as c:
        yield c


def _values(result_path: str):
    record = read_result(result_path)
    return record.names, np.asarray(record.values), np.asarray(record.std), record.metrics


def test_a_local_cluster_gives_the_serial_results_bit_for_bit_and_a_second_run_recomputes_nothing(tmp_path, client):
    serial = run_fleet(read_fleet(_fleet(tmp_path / "serial")), tmp_path / "serial", analyse=False)
    spec = read_fleet(_fleet(tmp_path / "dask"))
    assert len(client.scheduler_info()["workers"]) == 2
    first = run_fleet(spec, tmp_path / "dask", client, analyse=False)
    assert [r.serial for r in first.results] == [f"R-{k}" for k in range(4)]
    assert all(r.ok and r.recomputed for r in serial.results + first.results), [r.error for r in first.results]
    for s, d in zip(serial.results, first.results, strict=True):
        assert Path(d.result_path).is_relative_to((tmp_path / "dask" / d.serial / d.date).resolve())
        names_s, values_s, std_s, metrics_s = _values(s.result_path)
        names_d, values_d, std_d, metrics_d = _values(d.result_path)
        assert names_s == names_d
        assert values_s.tobytes() == values_d.tobytes() and std_s.tobytes() == std_d.tobytes()
        assert metrics_s == metrics_d
        assert np.array_equal(s.record.values, d.record.values)  # the record that travelled back from the worker
    # the individuals differ (own perturbation per serial number)
    assert not np.array_equal(first.results[0].record.values, first.results[2].record.values)
    second = run_fleet(spec, tmp_path / "dask", client, analyse=False)
    assert [r.recomputed for r in second.results] == [False] * 4
    assert all(np.array_equal(a.record.values, b.record.values) for a, b in zip(first.results, second.results,
                                                                                strict=True))


def test_a_failed_robot_is_reported_with_its_reason_and_the_others_finish(tmp_path, client):
    path = _fleet(tmp_path, n=2)
    data = yaml.safe_load(path.read_text())
    (tmp_path / "garbage.csv").write_text("this is,not\na measurement\n")
    base = data["robots"][0]["identifications"][0]["campaign"]
    data["robots"].append({"serial": "BROKEN-1", "robot": "do_2r_elastic", "identifications": [
        {"date": "2025-01-10", "campaign": {**base, "measurements": {"ident": {"file": "garbage.csv"}},
                                            "identification": {"measurements": ["ident"]}}}]})
    data["robots"].append({"serial": "MISSING-1", "robot": "do_2r_elastic", "identifications": [
        {"date": "2025-01-10", "campaign": {**base, "measurements": {"ident": {"file": "nowhere/run.csv"}},
                                            "identification": {"measurements": ["ident"]}}}]})
    spec = fleet_from_dict(data, path)
    run = run_fleet(spec, tmp_path / "out", client, analyse=False)
    by = {r.serial: r for r in run.results}
    assert by["R-0"].ok and by["R-1"].ok
    assert not by["BROKEN-1"].ok and by["BROKEN-1"].record is None
    assert "step identify" in by["BROKEN-1"].error and "garbage.csv" in by["BROKEN-1"].error
    assert not by["MISSING-1"].ok
    assert "measurements.ident.file" in by["MISSING-1"].error and "does not exist" in by["MISSING-1"].error
    assert {r.serial for r in run.failed} == {"BROKEN-1", "MISSING-1"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_robid_fleet_on_a_scheduler_and_worker_started_as_processes(tmp_path, capsys):
    from robid.cli import main

    fleet = _fleet(tmp_path / "fleet", n=2)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    procs = []
    try:
        procs.append(subprocess.Popen([BIN / "dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                                       "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        time.sleep(1.0)
        procs.append(subprocess.Popen([BIN / "dask", "worker", address, "--nworkers", "1", "--nthreads", "1",
                                       "--no-dashboard"], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        code = main(["fleet", str(fleet), "--scheduler", address, "--out", str(tmp_path / "out")])
        printed = capsys.readouterr().out
        assert code == 0, printed
        assert "2 of 2 campaigns identified" in printed
        for serial in ("R-0", "R-1"):
            result = tmp_path / "out" / serial / "2025-01-10" / "reports" / "identification" / "result.json"
            assert len(read_result(result).values) > 0
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def _good() -> dict:
    return {"robid_fleet": 1, "robots": [{"serial": "A1", "robot": "do_2r_elastic", "identifications": [
        {"date": "2025-01-10", "campaign": "c.yaml"}]}]}


@pytest.mark.parametrize("patch, message", [
    (lambda d: d.update(robid_fleet=2), "robid_fleet: schema version must be 1"),
    (lambda d: d.update(robts=[]), "robts"),
    (lambda d: d.update(robots=[]), "robots: expected a list"),
    (lambda d: d["robots"][0].pop("serial"), "robots[0].serial: expected a serial number"),
    (lambda d: d["robots"][0].update(serial="a/b"), "robots[0].serial"),
    (lambda d: d["robots"].append(dict(d["robots"][0])), "robots[1].serial: 'A1' is listed twice"),
    (lambda d: d["robots"][0].update(robot="no_such_robot"), "robots[0].robot: 'no_such_robot'"),
    (lambda d: d["robots"][0].update(robot="missing.yaml"), "robots[0].robot:"),
    (lambda d: d["robots"][0].update(instalation="x"), "robots[0]: unknown"),
    (lambda d: d["robots"][0]["identifications"][0].update(date="10.01.2025"),
     "robots[0].identifications[0].date: expected an ISO date"),
    (lambda d: d["robots"][0]["identifications"][0].update(campaign=3),
     "robots[0].identifications[0].campaign: expected a campaign file"),
    (lambda d: d["robots"][0].update(identifications=[]), "robots[0].identifications: expected a list"),
])
def test_fleet_file_errors_are_one_line_naming_the_field(tmp_path, patch, message, capsys):
    from robid.cli import main

    data = _good()
    patch(data)
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(RobidInputError) as err:
        read_fleet(path)
    text = str(err.value)
    assert message in text and "\n" not in text and str(path) in text
    assert main(["fleet", str(path), "--workers", "0", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == f"robid: error: {text}"


def test_a_campaign_the_reader_refuses_is_that_identification_s_error_with_the_campaign_reader_s_message(tmp_path):
    path = tmp_path / "fleet.yaml"
    data = _good()
    data["robots"][0]["identifications"].append(
        {"date": "2025-06-01", "campaign": {"measurements": {"m": {"simulate": {"trajectory": "t"}}},
                                            "identification": {"measurements": ["m"]}}})
    path.write_text(yaml.safe_dump(data))
    spec = read_fleet(path)
    first, second = spec.jobs
    assert first.campaign is None and "identifications[0].campaign" in first.error and "c.yaml" in first.error
    assert second.campaign is None
    assert "robots[0].identifications[1].campaign: measurements.m.simulate.trajectory: unknown trajectory" \
        in second.error


def test_the_demo_fleet_flags_exactly_the_two_injected_faults(tmp_path, client):
    """``robid fleet --demo`` (its fleet, on the 2-worker local cluster): DO-102's viscous friction on J2
    (+40 % injected) and TX-202's compensator spring (-15 % injected) are flagged between the two dates, each with
    the parameter, the size of the change and its uncertainty; no healthy robot and no other robot is flagged."""
    fleet_run = run_fleet(read_fleet(write_demo_fleet(tmp_path)), tmp_path, client)
    assert not fleet_run.failed
    flags = fleet_run.drift.flags
    flagged = {(f.serial, f.parameter) for f in flags}
    print("demo flags:", *(f.summary for f in flags), sep="\n  ")
    assert {serial for serial, _ in flagged} == {"DO-102", "TX-202"}
    friction = [f for f in flags if f.serial == "DO-102"]
    compensator = [f for f in flags if f.serial == "TX-202"]
    assert [f.parameter for f in friction] == ["fv_J2"] and friction[0].change > 0
    assert compensator and all(f.parameter.startswith("comp_") and f.change < 0 for f in compensator)
    for f in flags:
        assert f.kind == "between identifications" and f.maintenance_relevant
        assert abs(f.change) > 5 * f.uncertainty > 0 and f.parameter in f.summary
