"""UR10e cross-validation harness (benchmarks/ur10e_crossvalidation.py, docs/validation.md) on the real runs of
Mamedov et al.: the authors' parameters mapped onto robid's standard parameters reproduce the README's
independent pinocchio check; the mapping agrees with pinocchio term by term; robid's built-in UR10e has the
authors' joint conventions; robid's pipeline runs end to end on every run. Skipped without the shared data.

On every joint of the held-out excitation and single-joint runs robid's RRE is at most the authors', except where
``EXPECTED_WORSE`` of the harness says why and by how much at most (docs/validation.md section 4).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _harness():
    spec = importlib.util.spec_from_file_location("ur10e_crossvalidation", ROOT / "benchmarks" /
                                                  "ur10e_crossvalidation.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def harness():
    return _harness()


@pytest.fixture
def folder(shared):
    return shared / "anchors" / "data" / "dynamic_calibration"


def test_the_authors_parameters_reproduce_the_readme_check(harness, folder):
    rre = harness.authors_check(folder)
    print("\nauthors' RRE on 30sec_12harm rows 635-3510:", np.round(rre, 2), "README:", harness.README_RRE)
    assert np.all(np.abs(rre - harness.README_RRE) < 0.5)


def test_the_parameter_mapping_agrees_with_pinocchio(harness, folder):
    """The authors' [Ixx Ixy Ixz Iyy Iyz Izz hx hy hz m] per link, read into robid's standard parameters of the
    URDF, give the torques pinocchio computes from its own order [m hx hy hz Ixx Ixy Iyy Ixz Iyz Izz]."""
    pin = pytest.importorskip("pinocchio")
    import robid

    urdf = folder / "URe" / "urdf" / "ur10e.urdf"
    robot = robid.load_robot(urdf, terms=("rigid",))
    params, _ = harness.authors_parameters(folder, robid.load_robot(urdf))
    ours = params[:60]
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    text = (folder / "UR10E_parameters.txt").read_text().split("pi_rgd = [")[1].split("]")[0]
    raw = np.array([float(x) for x in text.split()])
    theirs = np.concatenate([[r[9], r[6], r[7], r[8], r[0], r[1], r[3], r[2], r[4], r[5]] for r in raw.reshape(6, 10)])
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-2, 2, (5, 6)) for _ in range(3))
    states = zip(q, qd, qdd, strict=True)
    expected = np.array([pin.computeJointTorqueRegressor(model, data, *s) @ theirs for s in states])
    np.testing.assert_allclose(robot.inverse_dynamics(q, qd, qdd, ours), expected, rtol=1e-9, atol=1e-9)


def test_the_builtin_ur10e_has_the_authors_joint_conventions(folder):
    """Same joint angles, same motion: the flange of robid's UR10e (UR's DH) and of the authors' URDF (older
    ur_description, base_link turned by pi about z) agree within the 1-2 mm the two sets of lengths differ."""
    import robid

    dh = robid.load_robot("ur10e").model
    urdf = robid.load_robot(folder / "URe" / "urdf" / "ur10e.urdf").model
    turn = np.diag([-1.0, -1.0, 1.0])
    for q in np.random.default_rng(0).uniform(-3, 3, (20, 6)):
        flange_dh = dh.forward_kinematics(q)[-1][:3, 3]
        flange_urdf = (urdf.forward_kinematics(q)[-1] @ np.array([0.0, 0.117, 0.0, 1.0]))[:3]
        assert np.linalg.norm(turn @ flange_urdf - flange_dh) < 2.5e-3


@pytest.fixture(scope="module")
def scores(harness):
    from conftest import shared_dir

    path = shared_dir()
    if path is None:
        pytest.skip("../shared (real data sets) not present")
    return harness.crossvalidate(path / "anchors" / "data" / "dynamic_calibration")


def test_robid_runs_end_to_end_on_every_run(harness, folder, scores):
    check = harness.authors_check(folder)
    print("\n" + harness.markdown(scores, check, 0.0, "auto"))
    groups = [s.group for s in scores]
    assert groups.count("identification") == 4 and groups.count("held-out excitation") == 12
    assert groups.count("single joint") == 6 and groups.count("static pose") == 5
    for s in scores:
        assert len(s.robid) == 6 and np.all(np.isfinite(s.robid)) and np.all(np.isfinite(s.authors)), s.name
        assert s.samples > 300, s.name  # the shortest records (static poses, ~700 rows) lose their filter edges


def test_robid_is_no_worse_than_the_authors_on_runs_it_did_not_use(harness, scores):
    """The issue's acceptance on real data: every joint of the held-out excitation and single-joint runs at or
    below the authors' RRE, or listed in EXPECTED_WORSE with its reason and stays within its allowance."""
    worse = harness.worse_than_authors(scores)
    for name, joint, ours, theirs in worse:
        allowed, why = harness.EXPECTED_WORSE.get((name, joint), (0.0, "not expected"))
        print(f"{name} q{joint}: robid {ours:.1f} % against the authors' {theirs:.1f} %: {why}")
        assert ours - theirs <= allowed, (name, joint, ours, theirs)
    moving = [s for s in scores if s.group == "single joint"]
    for s in moving:  # the moving joint of every single-joint run: robid at or below the authors, or within the
        # allowance EXPECTED_WORSE states with its measured reason (joint_1 q1 since issue 31's guard)
        j = int(s.name.rsplit("_", 1)[1]) - 1
        allowed = harness.EXPECTED_WORSE.get((s.name, j + 1), (0.0, ""))[0]
        assert s.robid[j] <= s.authors[j] + allowed, (s.name, s.robid[j], s.authors[j])


def test_static_poses_mean_torque_error_against_the_authors_on_j2_to_j5(harness, scores):
    """Static poses p1..p5 (issue 32): robid's mean torque error per pose on J2-J5 at or below the authors' in
    magnitude, or listed in STATIC_EXPECTED_WORSE with its measured reason and within its allowance (N m)."""
    worse = harness.static_worse_than_authors(scores)
    for name, joint, ours, theirs in worse:
        allowed, why = harness.STATIC_EXPECTED_WORSE.get((name, joint), (0.0, "not expected"))
        print(f"{name} J{joint}: robid {ours:+.2f} N m against the authors' {theirs:+.2f} N m: {why}")
        assert abs(ours) - abs(theirs) <= allowed, (name, joint, ours, theirs)
    assert len(worse) <= 5  # of 20 (pose, joint) pairs, measured 2026-11-29
