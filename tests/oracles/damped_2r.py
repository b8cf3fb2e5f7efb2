"""The virtual robot the elastic identification tests share: Do's planar 2R (do_2r_elastic.yaml, Spong model) with
spring damping 12 / 8 N m s/rad and motor Coulomb friction 1.5 / 1.0 N m added, run in closed loop on two random
4-harmonic Fourier excitations (periods 6 s and 5 s, seed 4) at 500 Hz, encoders 2^20 (motor) and 2^22 (link)
counts/rev, 2e-6 rad position and 0.05 N m torque noise."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from robid.excitation.fourier import FourierTrajectory
from robid.model.loader import builtin_robot_path
from robid.simulation import SensorSettings, simulate


def damped_2r_runs(folder: Path, periods: int = 3) -> tuple[Path, list[Path]]:
    """(robot file, [identification run, validation run]) written to ``folder``: link and motor positions."""
    doc = yaml.safe_load(builtin_robot_path("do_2r_elastic").read_text())
    doc["name"] = "do-2r-damped"
    for j, (damping, coulomb) in zip(doc["joints"], ((12.0, 1.5), (8.0, 1.0)), strict=True):
        j["elasticity"]["damping"] = damping
        j["friction"]["coulomb"] = coulomb
    robot_file = folder / "robot.yaml"
    robot_file.write_text(yaml.safe_dump(doc))
    rng = np.random.default_rng(4)
    files = []
    for k, period in enumerate((6.0, 5.0)):
        traj = FourierTrajectory(period=period, center=np.array([-1.2, 0.8]), a=0.35 * rng.normal(size=(2, 4)),
                                 b=0.35 * rng.normal(size=(2, 4)))
        sensors = SensorSettings(rate=500.0, q_noise=2e-6, tau_noise=0.05, encoder_counts=2**20,
                                 link_encoder_counts=2**22)
        sim = simulate(robot_file, traj, periods=periods, sensors=sensors, seed=k)
        files.append(sim.write_csv(folder / f"run{k}.csv"))
    return robot_file, files
