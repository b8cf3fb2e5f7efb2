"""Closed chains benchmark (issue 36): the built-in palletizer kr180_pa.

Run: ``python benchmarks/bench_closed_chain.py``. Prints, as a Markdown table: the cold derivation (regressor, base
parameters, generated code) in a fresh cache, the projected base regressor per sample, the virtual robot's
single-state constrained dynamics (tree Newton-Euler and Lagrange multipliers), and the simulate step of the
palletizer campaign's two runs and of tests/test_closed_chain_simulation.py's fixture.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time

import numpy as np


def _timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    os.environ["ROBID_CACHE_DIR"] = tempfile.mkdtemp(prefix="robid-bench-closed-")
    import robid
    from robid.simulation.closed_dynamics import ClosedChainDynamics

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}, python {platform.python_version()}")
    rows = ["| what | wall | CPU |", "|---|---|---|"]
    robot = robid.load_robot("kr180_pa")
    base, wall, cpu = _timed(robot.base_parameters)
    rows.append(f"| derivation, cold cache ({len(robot.parameter_names)} standard, {len(base.names)} base, exact "
                f"{base.exact}) | {wall:.1f} s | {cpu:.1f} s |")
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-0.5, 0.5, (3, 10000, robot.dof))
    base.regressor(q, qd, qdd)
    _, wall, cpu = _timed(lambda: base.regressor(q, qd, qdd))
    rows.append(f"| base regressor per sample (N = 10^4) | {wall / 1e4 * 1e6:.2f} us | {cpu / 1e4 * 1e6:.2f} us |")
    dyn = ClosedChainDynamics(robot.model)
    t = np.linspace(0, 1, 500)
    qs, qds = 0.5 * np.sin(np.outer(t, [1, 2, 3, 4])), np.cos(np.outer(t, [1, 2, 3, 4]))
    dyn.mass_matrix_and_bias(qs[0], qds[0])
    _, wall, cpu = _timed(lambda: [dyn.mass_matrix_and_bias(a, b) for a, b in zip(qs, qds, strict=True)])
    rows.append(f"| virtual robot, M_a and h_a of one state (warm-started closure) | {wall / 500 * 1e3:.2f} ms | "
                f"{cpu / 500 * 1e3:.2f} ms |")
    rows += _simulations(robot)
    print("\n".join(rows))


def _simulations(robot) -> list[str]:
    """The simulate step of the palletizer campaign (robid/campaign/palletizer.yaml: its identification and
    validation runs) and of tests/test_closed_chain_simulation.py's fixture (design and held-out runs, the friction
    feed-forward); the designs are not timed."""
    from robid.excitation.design import design_from_spec
    from robid.excitation.spec import spec_from_dict
    from robid.simulation import ControllerSettings, SensorSettings, simulate

    runs = (("campaign ident, 2 periods of an 8 s rest-to-rest design",
             {"harmonics": 5, "period": 8, "rest_to_rest": True, "seed": 1, "starts": 2}, 2, "rigid"),
            ("campaign valid, 2 periods of 6 s", {"harmonics": 4, "period": 6, "rest_to_rest": True, "seed": 2,
                                                  "starts": 1}, 2, "rigid"),
            ("test fixture design, 2 periods of 5 s", {"harmonics": 5, "period": 5, "seed": 1}, 2, "full"),
            ("test fixture held out, 1 period of 5 s", {"harmonics": 5, "period": 5, "seed": 7}, 1, "full"))
    rows = []
    for label, spec, periods, feedforward in runs:
        _, traj = design_from_spec(robot, spec_from_dict(spec, "bench"))
        sim, wall, cpu = _timed(lambda t=traj, p=periods, f=feedforward: simulate(
            robot.model, t.trajectory, periods=p, sensors=SensorSettings.with_noise_level("realistic", rate=250.0),
            seed=0, controller=ControllerSettings(feedforward=f)))
        rows.append(f"| simulation, {label} ({sim.stats.nfev} right-hand sides) | {wall:.1f} s | {cpu:.1f} s |")
    return rows


if __name__ == "__main__":
    main()
