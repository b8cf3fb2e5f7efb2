"""Virtual robot benchmark (issue 6): kr_heavy, 2 periods of a 10 s excitation trajectory.

Run: ``python benchmarks/bench_simulation.py [TRAJ.json]``. Without a trajectory file a fixed random rest-to-rest
Fourier trajectory (5 harmonics, 10 s, seed 1) around the home pose is used. Prints wall and CPU time of the
default simulation (LSODA, rtol 1e-7), the integrator counters, the torque accuracy against a rtol 1e-10 run, and
the cost of the single-state dynamics call.
"""

from __future__ import annotations

import os
import platform
import sys
import time

import numpy as np

from robid.excitation.fourier import FourierTrajectory
from robid.model.loader import read_robot
from robid.simulation import IntegratorSettings, RigidBodyDynamics, SensorSettings, simulate


def trajectory(path=None):
    if path:
        from robid.excitation.trajectory_file import load_trajectory

        return load_trajectory(path).trajectory
    rng = np.random.default_rng(1)
    center = np.radians([0, -90, 90, 0, 45, 0])
    a, b = rng.normal(scale=0.08, size=(6, 5)), rng.normal(scale=0.08, size=(6, 5))
    return FourierTrajectory(10.0, center, a, b, rest_order=4).project_rest()


def main() -> None:
    traj = trajectory(sys.argv[1] if len(sys.argv) > 1 else None)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}, python {platform.python_version()}")
    print(f"trajectory: period {traj.period:g} s, {traj.harmonics} harmonics, rest-to-rest {traj.rest_to_rest}")
    rows = ["| run | wall (s) | CPU (s) | nfev | njev | max abs tau diff to rtol 1e-10 (N m) |",
            "|---|---|---|---|---|---|"]
    reference = None
    for label, integ in (("rtol 1e-10 (reference)", IntegratorSettings(rtol=1e-10, atol_position=1e-12,
                                                                        atol_velocity=1e-10)),
                         ("default (LSODA rtol 1e-7)", IntegratorSettings()),
                         ("LSODA rtol 1e-8", IntegratorSettings(rtol=1e-8, atol_position=1e-10, atol_velocity=1e-8))):
        w0, c0 = time.perf_counter(), time.process_time()
        res = simulate("kr_heavy", traj, periods=2, sensors=SensorSettings.with_noise_level("realistic"),
                       integrator=integ, seed=0)
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        if reference is None:
            reference = res.tau
        diff = np.abs(res.tau - reference).max()
        rows.append(f"| {label} | {wall:.2f} | {cpu:.2f} | {res.stats.nfev} | {res.stats.njev} | {diff:.3g} |")
    print("\n".join(rows))
    print(f"samples {res.t.size}, max tracking error (mrad): {np.round(1e3 * res.tracking_error, 3).tolist()}")
    dyn = RigidBodyDynamics(read_robot("kr_heavy"))
    q, qd = np.random.default_rng(0).normal(size=(2, 6))
    n = 2000
    c0 = time.process_time()
    for _ in range(n):
        dyn.mass_matrix_and_bias(q, qd)
    kind = "compiled (scalar_chain.c)" if dyn._compiled else "Python (no compiler)"
    print(f"single-state M(q) and c + g, {kind}: {1e6 * (time.process_time() - c0) / n:.1f} us CPU per call")
    ql, qdl = q.tolist(), qd.tolist()
    c0 = time.process_time()
    for _ in range(n):
        dyn._scalar.mass_matrix_and_bias(ql, qdl)
    print(f"the same in plain Python (single_state.ScalarChain): {1e6 * (time.process_time() - c0) / n:.1f} us CPU")
    qs = np.random.default_rng(1).normal(size=(3, 5000, 6))
    c0 = time.process_time()
    dyn.inverse_dynamics(*qs)
    print(f"vectorised inverse dynamics, 5000 samples: {1e3 * (time.process_time() - c0):.1f} ms CPU")


if __name__ == "__main__":
    main()
