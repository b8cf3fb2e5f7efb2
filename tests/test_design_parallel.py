"""Parallel optimiser starts (Dask): the same design, bit for bit, as the serial loop."""

import json
import pickle

import numpy as np
import pytest

import robid
from robid.cli import main
from robid.excitation.constraints import JointLimitSet
from robid.excitation.optimiser import DesignProblem, design_excitation, portable_robot, start_map
from robid.excitation.planar2r import Planar2R

pytest.importorskip("distributed")

LIMITS = JointLimitSet.create(2, [(-2.5, 2.5), (-2.0, 2.0)], [1.5, 2.0], [3.0, 4.0])


def _dask_map(client):
    from robid.cli.design_cmd import _dask_map

    return _dask_map(client)


def _same(a, b):
    assert np.array_equal(a.trajectory.a, b.trajectory.a) and np.array_equal(a.trajectory.b, b.trajectory.b)
    assert a.criteria.cond == b.criteria.cond and a.criteria.logdet == b.criteria.logdet
    assert a.best_start == b.best_start
    assert [s.objective for s in a.starts] == [s.objective for s in b.starts]
    assert [s.iterations for s in a.starts] == [s.iterations for s in b.starts]


def test_local_cluster_matches_serial_bit_for_bit():
    from robid.fleet.dask_engine import dask_client

    planar = Planar2R()
    problem = DesignProblem(period=6.0, harmonics=5, center=[0.2, 0.4], limits=LIMITS, grid_points=120, starts=4,
                            seed=3, max_iterations=30, joint_names=("J1", "J2"))
    serial = design_excitation(problem, planar.base_parameters().regressor)
    # a compiled robid robot (3 axes): its regressor does not pickle, the portable one is rebuilt on the workers
    robot = robid.load_robot("tx200_3axis")
    with pytest.raises((ValueError, TypeError, pickle.PicklingError)):
        pickle.dumps(robot.base_parameters().regressor)
    portable = portable_robot(robot)
    assert portable is not robot
    pickle.loads(pickle.dumps(portable.base_parameters().regressor))
    limits3 = JointLimitSet.create(3, [(-1.5, 1.5)] * 3, [1.0] * 3, [2.0] * 3)
    problem3 = DesignProblem(period=5.0, harmonics=4, center=[0.0, 0.1, -0.1], limits=limits3, grid_points=100,
                             starts=4, seed=5, max_iterations=15, model=robot.model)
    serial3 = design_excitation(problem3, robot.base_parameters().regressor)
    with dask_client(workers=2) as client:
        parallel = design_excitation(problem, planar.base_parameters().regressor, map_starts=_dask_map(client))
        with start_map(_dask_map(client)):
            parallel3 = design_excitation(problem3, portable.base_parameters().regressor)
    _same(serial, parallel)
    _same(serial3, parallel3)


def test_cli_workers_2_writes_the_same_trajectory(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("harmonics: 4\nperiod: 4\nseed: 1\nstarts: 4\ngrid_points: 100\nmax_iterations: 15\n")
    outs = {}
    for workers in ("0", "2"):
        out = tmp_path / f"traj{workers}.json"
        assert main(["design", "tx200_3axis", str(spec), "--out", str(out), "--workers", workers, "--quiet"]) == 0
        data = json.loads(out.read_text())
        for volatile in ("created", "seconds", "machine"):
            data["design"].pop(volatile)
        outs[workers] = data
    assert outs["0"] == outs["2"]
    assert len(outs["2"]["design"]["start_results"]) == 4


def test_workers_and_scheduler_exclusive(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text("harmonics: 4\nperiod: 4\n")
    args = ["design", "tx200_3axis", str(spec), "--out", str(tmp_path / "t.json"), "--workers", "2",
            "--scheduler", "tcp://127.0.0.1:1"]
    assert main(args) == 2
    assert "--workers and --scheduler" in capsys.readouterr().err and not (tmp_path / "t.json").exists()
