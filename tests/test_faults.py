"""Fault injection (issue 30, findings 3 to 7): what a hostile or careless user gives robid is refused with one
line, or spoken up about, and never crashes it, exhausts it or fools it. (Findings 1 and 2, injection into
generated code and programs: tests/test_injection.py; fuzzing of the readers: tests/test_fuzz_readers.py.)"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

import robid
from robid.cli import main
from robid.errors import RobidInputError

ROBOT = """robid: 1
name: planar
gravity: [0, -9.81, 0]
kinematics: dh
joints:
  - name: P1
    a: 0.5
    limits: {position: [-2.5, 2.5], velocity: 3.0, acceleration: 20.0}
    link: {mass: 2.0, com: [-0.25, 0.01, 0.0], inertia: [0.013, 0.012, 0.011, -0.0003, -0.0007, 0.0002]}
    friction: {viscous: 0.8, coulomb: 1.5}
  - name: P2
    a: 0.4
    limits: {position: [-2.5, 2.5], velocity: 3.0, acceleration: 20.0}
    link: {mass: 1.5, com: [-0.2, -0.005, 0.01], inertia: [0.0073, 0.0085, 0.0073, 0.0005, -0.0004, 0.0009]}
    friction: {viscous: 0.5, coulomb: 1.0}
"""


def _run(argv: list[str]) -> tuple[int, list[str]]:
    """``robid -q ARGV`` in this process (no step lines: warnings and errors only): (exit status, the non-empty lines
    it wrote on stderr); a traceback fails."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["-q", *argv])
    return status, [line for line in err.getvalue().splitlines() if line.strip()]


def _one_line_error(argv: list[str], fragment: str = "") -> str:
    status, lines = _run(argv)
    assert status == 2 and len(lines) == 1 and lines[0].startswith("robid: error: "), (status, lines)
    assert fragment in lines[0], lines[0]
    return lines[0]


def _planar(folder: Path, torque_sign: float = 1.0, unit: float = 1.0, name: str = "run.csv", seed: int = 0):
    """The planar arm (robot.yaml) and a noiseless simulated run of it (``name``): torque times ``torque_sign``,
    positions times ``unit`` (180/pi: degrees)."""
    from robid.excitation.fourier import FourierTrajectory

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "robot.yaml").write_text(ROBOT)
    robot = robid.load_robot(folder / "robot.yaml")
    rng = np.random.default_rng(seed)
    traj = FourierTrajectory(4.0, np.zeros(2), 0.3 * rng.standard_normal((2, 4)), 0.3 * rng.standard_normal((2, 4)),
                             4, ("P1", "P2")).project_rest()
    t = np.arange(0.0, 12.0, 0.01)
    q, qd, qdd = traj.evaluate(t, 2)
    tau = robot.inverse_dynamics(q, qd, qdd) * torque_sign
    np.savetxt(folder / name, np.column_stack([t, q * unit, tau]), delimiter=",", header="t,q1,q2,tau1,tau2",
               comments="")
    return robot, folder / name


# ------------------------------------------------------------------------------------------ 3. memory and time
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(8))


def test_a_yaml_alias_bomb_under_a_string_field_is_refused_while_reading(tmp_path):
    """Finding 3: a billion-laughs document under report.title (10^9 strings once expanded) is refused before it
    is built, in a fraction of a second and a few MB; a title that is a list is refused as such."""
    from robid.campaign import read_campaign

    path = tmp_path / "bomb.yaml"
    path.write_text("robid_campaign: 1\nname: bomb\nrobot: planar_2r\n" + BOMB + "report:\n  title: *i\n")
    tracemalloc.start()
    t0 = time.perf_counter()
    with pytest.raises(RobidInputError, match="aliases"):
        read_campaign(path)
    seconds, peak = time.perf_counter() - t0, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50e6, peak  # the limit (not a timing assertion: a bomb built would take minutes and GB)
    path.write_text("robid_campaign: 1\nname: t\nrobot: planar_2r\nreport: {title: [a, b]}\n")
    with pytest.raises(RobidInputError, match=r"report\.title: expected string, got a list"):
        read_campaign(path)
    assert seconds < 60


@pytest.mark.parametrize("suffix, kind", [(".json", "DOCUMENT"), (".yaml", "YAML"), (".csv", "TABLE")])
def test_an_oversized_file_is_refused_before_it_is_read(tmp_path, monkeypatch, suffix, kind):
    """Finding 3: a file larger than the limit (here lowered to 20 MB by its variable; defaults 64 MB for
    documents, 8 MB for YAML, 1024 MB for tables) costs nothing: one line naming the size, the limit and the
    variable."""
    monkeypatch.setenv(f"ROBID_MAX_{kind}_MB", "20")
    path = tmp_path / f"big{suffix}"
    with open(path, "wb") as f:
        f.truncate(200_000_000)  # sparse: 200 MB of zeros
    reader = {".json": "robid.io.files:read_json", ".yaml": "robid.io.files:read_yaml",
              ".csv": "robid.io.measurement_file:read_measurement"}[suffix]
    module, name = reader.split(":")
    function = getattr(__import__(module, fromlist=[name]), name)
    tracemalloc.start()
    with pytest.raises(RobidInputError, match=f"200.0 MB is more than the 20 MB .*ROBID_MAX_{kind}_MB"):
        function(path) if suffix != ".csv" else function(path, dof=2)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10e6, peak


def test_a_binary_file_named_csv_is_refused_on_its_first_bytes(tmp_path):
    """Finding 3: below the size limit, a binary table is refused after reading 4 kB, not the whole file."""
    from robid.io.measurement_file import read_measurement

    path = tmp_path / "binary.csv"
    with open(path, "wb") as f:
        f.truncate(100_000_000)
    tracemalloc.start()
    with pytest.raises(RobidInputError, match="binary data"):
        read_measurement(path, dof=2)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10e6, peak


# ------------------------------------------------------------------------------------------ 4. one line, exit 2
@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bad")
    (folder / "binary.yaml").write_bytes(b"robid: 1\nname: \xff\xfe\x80 robot\n")
    (folder / "binary.json").write_bytes(b'{"robid": 1, "name": "\xff\xfe\x80"}')
    (folder / "binary.csv").write_bytes(b"t,q1,q2,tau1,tau2\n\xff\xfe,1,2,3,4\n")
    (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "deep.yaml").write_text("[" * 100_000 + "]" * 100_000)
    (folder / "a_file").write_text("not a folder")
    _planar(folder)
    return folder


R = str(Path(__file__).parent / "data" / "planar_2r.yaml")


def _commands(d: Path, bad: str) -> dict[str, list[str]]:
    """Every command that reads a file of the kind of ``bad`` (binary.yaml / deep.json ...), with it."""
    y, j = str(d / f"{bad}.yaml"), str(d / f"{bad}.json")
    csv, out = str(d / "run.csv"), str(d / "out")
    return {
        "model robot": ["model", y],
        "design spec": ["design", R, y, "--out", f"{out}.json"],
        "export traj": ["export", j, "--format", "csv", "--out", f"{out}.csv"],
        "simulate traj": ["simulate", R, j, "--out", f"{out}.csv"],
        "process mapping": ["process", str(d / "robot.yaml"), csv, "--mapping", y, "--out", f"{out}.csv"],
        "predict result": ["predict", str(d / "robot.yaml"), j, csv, "--out", f"{out}.csv"],
        "report result": ["report", j, "--out", f"{out}.html"],
        "export-model result": ["export-model", j, "--format", "json", "--out", f"{out}.json"],
        "campaign file": ["campaign", y],
        "fleet file": ["fleet", y, "--workers", "0"],
        "modal robot": ["modal", y, "--pose", "0,0"],
        "modal-fit data": ["modal-fit", R, j],
        "payload mapping": ["payload", "identify", str(d / "robot.yaml"), "--loaded", csv, "--unloaded", csv,
                            "--mapping", y, "--format", "json", "--out", f"{out}.json"],
    }


@pytest.mark.parametrize("bad", ["binary", "deep"])
def test_binary_and_deeply_nested_files_give_one_line_in_every_command(bad_files, bad):
    """Finding 4: a non-UTF-8 file (UnicodeDecodeError before) and JSON/YAML nested 100 000 deep (RecursionError
    before) given to every command that reads robot, spec, TRAJ, mapping, RESULT, campaign, fleet or modal
    files: exit 2 and one line naming the file."""
    for label, argv in _commands(bad_files, bad).items():
        line = _one_line_error(argv)
        assert bad in line, (label, line)


def test_a_binary_measurement_gives_one_line(bad_files):
    _one_line_error(["process", str(bad_files / "robot.yaml"), str(bad_files / "binary.csv"), "--out",
                     str(bad_files / "p.csv")], "binary.csv")


@pytest.mark.parametrize("command", ["campaign", "demo", "fleet-demo", "fleet"])
@pytest.mark.parametrize("where", ["file", "under-file", "unwritable"])
def test_an_unusable_out_folder_gives_one_line(bad_files, tmp_path, command, where):
    """Finding 4: --out that is a file (NotADirectoryError / FileExistsError before), lies under a file, or cannot
    be written (OSError before; /proc/self stands in for a read-only folder, since root may write anywhere else)
    for campaign, demo and fleet: exit 2, one line naming the folder; nothing is derived or run first."""
    from robid.cli.demo_cmd import demo_campaign_path

    out = {"file": bad_files / "a_file", "under-file": bad_files / "a_file" / "sub",
           "unwritable": Path("/proc/self/robid-out")}[where]
    if command == "fleet":
        from robid.fleet.demo import write_demo_fleet

        argv = ["fleet", str(write_demo_fleet(tmp_path)), "--workers", "0", "--out", str(out)]
    else:
        argv = {"campaign": ["campaign", str(demo_campaign_path()), "--out", str(out)],
                "demo": ["demo", "--out", str(out)], "fleet-demo": ["fleet", "--demo", "--out", str(out)]}[command]
    _one_line_error(argv, out.name)


# ------------------------------------------------------------------------------------------ 5. wrong results
def test_the_same_run_given_twice_is_refused(tmp_path):
    """Finding 5: the same file twice, or a copy of it, stacked as two runs (std x 0.705 before): refused."""
    from robid.identification import run_identification

    robot, run = _planar(tmp_path)
    shutil.copy(run, tmp_path / "copy.csv")
    for files in ([run, run], [run, tmp_path / "copy.csv"]):
        with pytest.raises(RobidInputError, match="the same run as"):
            run_identification(robot, files)
    _one_line_error(["identify", str(tmp_path / "robot.yaml"), str(run), str(tmp_path / "copy.csv"), "--out",
                     str(tmp_path / "r.json")], "same run")


def test_a_flipped_torque_sign_is_warned_about(tmp_path, caplog):
    """Finding 5: the torque with the opposite sign convention gives negative viscous and Coulomb friction and
    negative mean power; the record's notes and a warning line say the convention looks flipped. The right sign
    gives no such line."""
    from robid.identification import run_identification

    robot, run = _planar(tmp_path, torque_sign=-1.0)
    with caplog.at_level(logging.WARNING, logger="robid"):
        record = run_identification(robot, [run]).record
    flipped = [n for n in record.notes if "torque sign convention" in n]
    assert {n.split(":")[0] for n in flipped} == {"joint P1", "joint P2"}, record.notes
    assert any("torque sign convention" in r.getMessage() for r in caplog.records)
    robot, run = _planar(tmp_path / "right")
    assert not [n for n in run_identification(robot, [run]).record.notes if "torque sign" in n]


def test_positions_in_degrees_are_refused_naming_the_unit(tmp_path):
    """Finding 5: positions of +-100 "rad" for joints limited to +-2.5 rad (degrees read as radians) are refused;
    positions slightly outside the limits only warn."""
    from robid.io.measurement_file import read_measurement

    robot, run = _planar(tmp_path, unit=180 / np.pi)
    with pytest.raises(RobidInputError, match="in degrees"):
        read_measurement(run, robot.model)
    _one_line_error(["identify", str(tmp_path / "robot.yaml"), str(run), "--out", str(tmp_path / "r.json")],
                    "degrees")
    robot, run = _planar(tmp_path / "slight", unit=1.0)
    data = np.loadtxt(run, delimiter=",", skiprows=1)
    data[:, 1] += 2.6 - data[:, 1].max()  # 0.1 rad beyond the limit
    np.savetxt(run, data, delimiter=",", header="t,q1,q2,tau1,tau2", comments="")
    measurement = read_measurement(run, robot.model)
    assert any("outside its limits" in n for n in measurement.notes)


def test_a_robot_file_without_a_mass_is_warned_about(tmp_path, caplog):
    path = tmp_path / "robot.yaml"
    path.write_text(ROBOT.replace("mass: 2.0, ", ""))
    with caplog.at_level(logging.WARNING, logger="robid"):
        robid.load_robot(path)
    assert any("joints[0].link: no mass given" in r.getMessage() for r in caplog.records)


@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    from robid.identification import run_identification
    from robid.io.result_file import write_result

    folder = tmp_path_factory.mktemp("result")
    robot, run = _planar(folder)
    write_result(folder / "result.json", run_identification(robot, [run]).record)
    return folder


@pytest.mark.parametrize("damage", ["asymmetric", "negative"])
def test_export_model_refuses_a_covariance_that_is_not_symmetric_positive_semidefinite(result_file, tmp_path,
                                                                                       damage):
    """Finding 5: an edited RESULT.json whose covariance is not symmetric (accepted before) or not positive
    semi-definite: export-model exits 2 naming the entry."""
    data = json.loads((result_file / "result.json").read_text())
    cov = np.array(data["covariance"], dtype=float)
    if damage == "asymmetric":
        cov[0, 1] = cov[0, 1] + 10 * np.sqrt(cov[0, 0] * cov[1, 1])
    else:
        d = np.sqrt(np.diag(cov))
        cov[0, 1] = cov[1, 0] = 1.5 * d[0] * d[1]  # a correlation of 1.5
    data["covariance"] = cov.tolist()
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    fragment = "not symmetric" if damage == "asymmetric" else "not positive semi-definite"
    _one_line_error(["export-model", str(path), "--base", str(result_file / "robot.yaml"), "--format", "json",
                     "--out", str(tmp_path / "m.json")], fragment)


@pytest.mark.parametrize("pose", ["1e300,0", "nan,0", "0,200"])
def test_modal_refuses_an_absurd_pose(pose):
    """Finding 5: ``modal --pose 1e300,...`` printed modes; a pose that is not finite or lies outside the joint
    limits (200 rad: degrees given as radians) is refused."""
    _one_line_error(["modal", "do_2r_elastic", f"--pose={pose}"], "pose")


# ------------------------------------------------------------------------------------------ 6. campaign outputs
def test_a_truncated_or_edited_campaign_output_is_recomputed_with_a_warning(tmp_path, caplog):
    """Finding 6: result.json truncated after a run was "up to date" before (and every later run failed until
    --force); an edited value was kept. Now each output's SHA-256 is checked: recomputed, with a warning."""
    from robid.campaign import read_campaign, run_campaign

    _planar(tmp_path)
    path = tmp_path / "c.yaml"
    path.write_text("robid_campaign: 1\nname: c\nrobot: robot.yaml\nmeasurements:\n  m: {file: run.csv}\n"
                    "identification: {measurements: [m]}\nreport: false\n")
    first = run_campaign(read_campaign(path), tmp_path / "out", log=lambda _: None)
    result = first.result_path
    assert run_campaign(read_campaign(path), tmp_path / "out", log=lambda _: None).recomputed == ()
    text = result.read_text()
    edited = json.loads(text)
    edited["base_parameters"][0]["value"] = 12345.0
    for damaged in (text[: len(text) // 2], json.dumps(edited, indent=1) + "\n"):
        assert damaged != text
        result.write_text(damaged)
        with caplog.at_level(logging.WARNING, logger="robid"):
            again = run_campaign(read_campaign(path), tmp_path / "out", log=lambda _: None)
        assert again.recomputed == ("identify",)
        assert any("changed since the step wrote it" in r.getMessage() for r in caplog.records)
        np.testing.assert_allclose(again.record.values, first.record.values, rtol=1e-9)  # recomputed, not kept
        caplog.clear()


# ------------------------------------------------------------------------------------------ 7. leftovers
def test_temporaries_of_a_killed_cache_writer_are_removed_by_the_next_writer(tmp_path, monkeypatch):
    """Finding 7: a derivation killed while compiling left its temporary folder for ever (only folders of the same
    key older than an hour were removed). Now the next writer removes every temporary whose owner process is dead
    on this host, and any that is older than an hour; a living owner's folder stays."""
    from robid.symbolic import cache
    from robid.symbolic.cache_temporaries import ORPHAN_AGE_S, host_tag

    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True).stdout.strip()
    killed = tmp_path / f".0123456789abcdef01234567-{dead}-1-2-h{host_tag()}"
    living = tmp_path / f".0123456789abcdef01234567-{os.getpid()}-1-3-h{host_tag()}"
    old = tmp_path / ".fedcba9876543210fedcba98-4242-1-4"  # no host tag (an earlier robid), two hours old
    for folder in (killed, living, old):
        folder.mkdir()
        (folder / "model_c.c").write_text("x" * 600_000)
    os.utime(old, (time.time() - 2 * ORPHAN_AGE_S,) * 2)
    entry = tmp_path / "abcdefabcdefabcdefabcdef"
    entry.mkdir()
    native = entry / f".model_c-native-x-{dead}-1-5-h{host_tag()}.so"
    native.write_bytes(b"\0" * 1000)
    cache.write_entry("00000000000000000000000a", {"model.py": "", "exact.py": "", "meta.json": "{}"})
    assert not killed.exists() and not old.exists() and not native.exists()
    assert living.exists()


def test_the_fleet_names_a_lost_worker_and_the_campaigns_run_again(tmp_path):
    """Finding 7: a Dask worker that dies mid-task (here: the task kills its own worker process the first time)
    was not mentioned; the fleet's lines now name the lost worker and the campaign the scheduler ran again."""
    from distributed import Client, LocalCluster

    from robid.fleet.runner import worker_losses

    marker = tmp_path / "killed-once"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=50) as cluster, Client(cluster) as client:
        since = time.time()
        future = client.submit(_die_once, str(marker), key="robid-campaign-R-1-2025-01-10-x", pure=False)
        assert future.result(timeout=120) == "done"
        jobs = {future.key: SimpleNamespace(serial="R-1", date="2025-01-10")}
        for _ in range(50):  # the scheduler logs the removal as it notices the death
            lines = worker_losses(client, jobs, since)
            if lines:
                break
            time.sleep(0.1)
    assert len(lines) == 1 and "was lost" in lines[0] and "R-1 2025-01-10" in lines[0], lines


def _die_once(marker: str) -> str:
    if not os.path.exists(marker):
        Path(marker).write_text("x")
        os._exit(1)  # the worker process dies with the task on it
    return "done"


def test_the_string_fields_of_every_schema_refuse_lists_and_mappings(tmp_path):
    """Finding 3 (typed strings): a name, title or path given as a list or mapping is refused by each reader."""
    from robid.campaign import read_campaign
    from robid.fleet.spec import read_fleet
    from robid.io.mapping import read_mapping

    cases = [
        (read_campaign, {"robid_campaign": 1, "name": "c", "robot": ["planar_2r"]}, "robot: expected string"),
        (read_fleet, {"robid_fleet": 1, "name": {"a": 1}, "robots": []}, "name: expected string"),
        (robid.load_robot, yaml.safe_load(ROBOT) | {"name": [1, 2]}, "name: expected string"),
        (read_mapping, {"robid_mapping": 1, "format": ["csv"]}, "format: expected string"),
    ]
    for k, (reader, data, message) in enumerate(cases):
        path = tmp_path / f"f{k}.yaml"
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(RobidInputError, match=message):
            reader(path)
