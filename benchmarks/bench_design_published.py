"""Excitation design against the published UR10e designs, at their published limits (issue 14, "Excitation design").

For each published case (Mamedov et al. 2020, ``trajectory_optmzn/optimal_trjctrs/ptrnSrch_N8T20QR.mat`` and
``ptrnSrch_N12T30QR.mat``: harmonics, period, centre q0 and the limits ``traj_par`` q_min, q_max, qd_max,
q2d_max stored with each design), robid designs a rest-to-rest trajectory with the same harmonics and period
under the same limits with robid's DEFAULT settings (criterion cond_both with the excitation floor
min_rms_velocity 0.2, margin 0.05, seed 0), 8 starts on a local Dask cluster of 2 worker processes (what
``robid design --workers 2`` uses), and the benchmark reports in one run:

* the design time (cluster start and stop included, and without them) and the time of every start;
* raw and column-scaled condition numbers of robid's design and of the published design on the same grid
  (0.1 s with both ends, as in the anchors README), each computed with three regressors: robid's base regressor
  (``robid.load_robot('ur10e')``, rigid + rotor + viscous + Coulomb + offset, 58 columns), an independent
  pinocchio regressor of the same robot (the UR10e built in pinocchio from robid's DH table: joint frames, no
  robid code in the regressor) and pinocchio on the authors' URDF (``URe/urdf/ur10e.urdf``, the robot the
  published designs were made for); the pinocchio regressors get the rotor and friction columns appended and
  their base columns chosen by pivoted QR;
* whether robid's base regressor spans the same space as pinocchio's (least-squares residual of its columns);
* every joint's RMS velocity over the period against the floor (and the published design's);
* limits at 500 Hz: the design (hard limits, one period) and its URScript program at 500 Hz (parsed back and
  re-sampled by ``robid.excitation.programs``), and the published design against its own limits.

Run from the project root:  python benchmarks/bench_design_published.py [--workers 2] [--starts 8] [--markdown F]
"""

from __future__ import annotations

import os

# small dense linear algebra: threads only add contention on a 2-core machine
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.linalg  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_excitation import ANCHORS, DESIGNS, PublishedDesign, score  # noqa: E402
from bench_excitation import violations as limit_violations  # noqa: E402

from robid.excitation.constraints import JointLimitSet  # noqa: E402
from robid.excitation.criteria import stack  # noqa: E402
from robid.excitation.optimiser import DesignProblem, design_excitation, portable_robot  # noqa: E402
from robid.excitation.velocity_floor import rms_velocity  # noqa: E402

TERMS = ("rigid", "rotor", "viscous", "coulomb", "offset")
CASES = ("ptrnSrch_N8T20QR", "ptrnSrch_N12T30QR")
RATE = 500.0


# ------------------------------------------------------------------------------------------ regressors
def _with_drive_columns(rigid: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """Append rotor inertia (qdd_j), viscous (qd_j), Coulomb (sign qd_j) and offset (1) columns per joint."""
    n, dof = qd.shape
    out = np.zeros((n, dof, rigid.shape[2] + 4 * dof))
    out[:, :, : rigid.shape[2]] = rigid
    base = rigid.shape[2]
    for j in range(dof):
        out[:, j, base + j] = qdd[:, j]
        out[:, j, base + dof + j] = qd[:, j]
        out[:, j, base + 2 * dof + j] = np.sign(qd[:, j])
        out[:, j, base + 3 * dof + j] = 1.0
    return out


def _angle(value) -> float:
    text = str(value).strip()
    return math.radians(float(text[:-3])) if text.endswith("deg") else float(text)


def pinocchio_from_dh(robot_file: Path) -> object:
    """The robot of a robid robot file with standard DH (revolute joints, read here from the YAML's a, alpha, d,
    not through robid) as a pinocchio model: joint i turns about z of DH frame i-1; its placement in joint
    i-1's frame is the constant part Tz(d) Tx(a) Rx(alpha) of the previous link."""
    import pinocchio as pin
    import yaml

    spec = yaml.safe_load(robot_file.read_text())
    assert spec["kinematics"] == "dh"
    pm = pin.Model()
    pm.gravity = pin.Motion(np.array([*spec.get("gravity", [0, 0, -9.81]), 0.0, 0.0, 0.0]))
    parent, placement = 0, pin.SE3.Identity()
    rng = np.random.default_rng(0)
    for i, joint in enumerate(spec["joints"]):
        assert float(joint.get("offset", 0.0)) == 0.0 and joint.get("type", "revolute") == "revolute"
        jid = pm.addJoint(parent, pin.JointModelRZ(), placement, f"J{i + 1}")
        # any inertia: the regressor does not depend on it
        pm.appendBodyToJoint(jid, pin.Inertia.FromDynamicParameters(_random_inertia(rng)), pin.SE3.Identity())
        d, a, alpha = float(joint["d"]), float(joint["a"]), _angle(joint["alpha"])
        rot_x = np.array([[1, 0, 0], [0, math.cos(alpha), -math.sin(alpha)], [0, math.sin(alpha), math.cos(alpha)]])
        placement = pin.SE3(rot_x, np.array([a, 0.0, d]))  # Tz(d) Tx(a) Rx(alpha)
        parent = jid
    return pm


def _random_inertia(rng) -> np.ndarray:
    m, c = 1.0 + rng.random(), rng.standard_normal(3) * 0.05
    i_c = np.diag(0.01 + 0.01 * rng.random(3))
    i_o = i_c + m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), i_o[0, 0], i_o[0, 1], i_o[1, 1], i_o[0, 2], i_o[1, 2], i_o[2, 2]])


def pinocchio_regressor(pm):
    """Base regressor of a pinocchio model with the drive columns appended; base columns by pivoted QR of the
    regressor stacked over random states (tolerance 1e-9 of the largest pivot)."""
    import pinocchio as pin

    data = pm.createData()
    nrigid = 10 * (pm.njoints - 1)

    def full(q, qd, qdd):
        rigid = np.zeros((q.shape[0], pm.nv, nrigid))
        for i in range(q.shape[0]):
            rigid[i] = pin.computeJointTorqueRegressor(pm, data, q[i], qd[i], qdd[i])
        return _with_drive_columns(rigid, qd, qdd)

    rng = np.random.default_rng(0)
    y = stack(full(*(rng.uniform(-3, 3, (80, pm.nv)) for _ in range(3))))
    _, r, piv = scipy.linalg.qr(y, pivoting=True, mode="economic")
    rank = int(np.sum(np.abs(np.diag(r)) > 1e-9 * abs(r[0, 0])))
    idx = np.sort(piv[:rank])
    return (lambda q, qd, qdd: full(q, qd, qdd)[:, :, idx]), full, rank


def span_residual(robid_reg, pin_full) -> float:
    """Largest relative least-squares residual of robid's base columns in the span of pinocchio's full regressor
    (random states): 0 when both describe the same torques."""
    rng = np.random.default_rng(1)
    states = [rng.uniform(-3, 3, (60, 6)) for _ in range(3)]
    w_r = stack(robid_reg(*states))
    w_p = stack(pin_full(*states))
    coef, *_ = np.linalg.lstsq(w_p, w_r, rcond=None)
    return float(np.max(np.linalg.norm(w_p @ coef - w_r, axis=0) / np.linalg.norm(w_r, axis=0)))


# ------------------------------------------------------------------------------------------ helpers
def published_limits(path: Path) -> tuple[JointLimitSet, dict]:
    d = scipy.io.loadmat(str(path))
    par = d["traj_par"][0, 0]
    pos = np.stack([np.squeeze(par["q_min"]), np.squeeze(par["q_max"])], axis=1).astype(float)
    vel = np.squeeze(par["qd_max"]).astype(float)
    acc = np.squeeze(par["q2d_max"]).astype(float)
    info = {
        "period": float(np.squeeze(par["T"])),
        "harmonics": int(np.squeeze(par["N"])),
        "q0": np.squeeze(par["q0"]).astype(float),
    }
    return JointLimitSet.create(6, pos, vel, acc), info


def violations(q, qd, qdd, limits: JointLimitSet) -> str:
    """The limits ``limits`` exceeds at the samples (bench_excitation's check on a JointLimitSet)."""
    return limit_violations(q, qd, qdd, limits.position, limits.velocity, limits.acceleration)


def dask_map(client):
    from robid.cli.design_cmd import _dask_map

    return _dask_map(client)


# ------------------------------------------------------------------------------------------ one case
def run_case(
    name: str, robot, regressors: dict, workers: int, starts: int, seed: int, lines: list[str], **settings
) -> None:
    """One published case; ``settings`` override DesignProblem's defaults (e.g. min_rms_velocity)."""
    from robid.excitation.programs import ProgramOptions, export_program
    from robid.excitation.trajectory_file import TrajectoryFile
    from robid.fleet.dask_engine import dask_client

    path = DESIGNS / f"{name}.mat"
    limits, info = published_limits(path)
    period, harmonics = info["period"], info["harmonics"]
    problem = DesignProblem(
        period=period,
        harmonics=harmonics,
        center=info["q0"],
        limits=limits,  # criterion and excitation floor: DesignProblem's defaults (the spec's)
        seed=seed,
        starts=starts,
        joint_names=tuple(robot.model.joint_names),
        **settings,
    )
    regressor = portable_robot(robot).base_parameters().regressor if workers else robot.base_parameters().regressor
    t0 = time.perf_counter()
    if workers:
        with dask_client(None, workers) as client:
            t1 = time.perf_counter()
            result = design_excitation(problem, regressor, map_starts=dask_map(client))
            t2 = time.perf_counter()
    else:
        t1 = time.perf_counter()
        result = design_excitation(problem, regressor)
        t2 = time.perf_counter()
    t3 = time.perf_counter()
    traj = result.trajectory
    where = f"{workers} Dask workers" if workers else "serially"
    per_start = ", ".join(f"{s.seconds:.1f}" for s in result.starts)
    cpu = [s.cpu_seconds for s in result.starts]
    its = ", ".join(str(s.iterations) for s in result.starts)
    label = f"settings {settings}" if settings else "default settings"
    lines += [
        f"### {name}: {harmonics} harmonics, T = {period:g} s, published limits",
        "",
        f"Limits (traj_par): position {np.round(limits.position, 4).tolist()} rad, velocity "
        f"{limits.velocity.tolist()} rad/s, acceleration {limits.acceleration.tolist()} rad/s^2; centre q0.",
        "",
        f"robid design ({label}): criterion {problem.criterion}, min_rms_velocity "
        f"{problem.min_rms_velocity:g}, margin {problem.margin}, seed {seed}, {starts} starts "
        f"{where}: **{t3 - t0:.1f} s** wall with the cluster's start and stop ({t2 - t1:.1f} s design only); "
        f"time per start [s]: {per_start} (mean {np.mean([s.seconds for s in result.starts]):.1f}); CPU per "
        f"start [s]: {', '.join(f'{c:.1f}' for c in cpu)} (sum {sum(cpu):.1f}, mean {np.mean(cpu):.1f}); SLSQP "
        f"iterations: {its}; best start {result.best_start + 1}; certified check: {result.check.summary()}.",
        "",
        "| design | " + " | ".join(f"cond raw / scaled ({label})" for label in regressors) + " | limits at 500 Hz |",
        "|---|" + "---|" * len(regressors) + "---|",
    ]
    grid = np.arange(0.0, period + 1e-9, 0.1)
    dense = np.arange(0.0, period, 1.0 / RATE)
    pub = PublishedDesign(path)
    rows = {"robid": traj.evaluate(grid, 2), "published": pub.evaluate(grid)}
    checks = {
        "robid": violations(*traj.evaluate(dense, 2), limits),
        "published": violations(*pub.evaluate(dense), limits) + " (its own limits)",
    }
    dense_qd = {"robid": traj.evaluate(dense, 1)[1], "published": pub.evaluate(dense)[1]}
    rms = {
        "robid (Parseval)": rms_velocity(traj.coefficients()),
        "robid at 500 Hz": np.sqrt(np.mean(dense_qd["robid"] ** 2, axis=0)),
        "published at 500 Hz": np.sqrt(np.mean(dense_qd["published"] ** 2, axis=0)),
    }
    rms_text = "; ".join(f"{k} " + ", ".join(f"{v:.3f}" for v in vals) for k, vals in rms.items())
    floor_text = ", ".join(f"{v:.3f}" for v in problem.floor_speeds())
    rms_line = f"RMS velocity over the period per joint [rad/s]: floor {floor_text}; {rms_text}."
    for design, states in rows.items():
        cells = [f"{r:.1f} / {s:.2f}" for r, s in (score(reg, *states) for reg in regressors.values())]
        lines.append(f"| {design} | " + " | ".join(cells) + f" | {checks[design]} |")
    tf = TrajectoryFile(traj, limits, problem.margin, (), {"robot": "ur10e", "criterion": problem.criterion})
    with tempfile.TemporaryDirectory() as tmp:
        export = export_program(tf, "urscript", Path(tmp) / "design.script", ProgramOptions(periods=1, rate=RATE))
    lines += [
        "",
        rms_line,
        "",
        f"URScript program at {export.rate:g} Hz (parsed back, re-sampled): {export.check.summary()}",
        "",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2, help="Dask worker processes (0: serially)")
    parser.add_argument("--starts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", nargs="+", default=list(CASES))
    parser.add_argument("--markdown", type=Path, default=None, help="also write the results to this file")
    parser.add_argument("--min-rms-velocity", type=float, default=None,
                        help="excitation floor instead of the default (0: none; docs/excitation.md)")
    args = parser.parse_args()
    import pinocchio as pin

    import robid

    robot = robid.load_robot("ur10e", terms=TERMS)
    robid_reg = robot.base_parameters().regressor
    robot_file = ROOT / "robid" / "model" / "robots" / "ur10e.yaml"
    pin_dh, pin_dh_full, rank_dh = pinocchio_regressor(pinocchio_from_dh(robot_file))
    pin_urdf, _, rank_urdf = pinocchio_regressor(pin.buildModelFromUrdf(str(ANCHORS / "URe" / "urdf" / "ur10e.urdf")))
    regressors = {
        f"robid, {len(robot.base_parameters().names)} base": robid_reg,
        f"pinocchio, robid's DH, {rank_dh} base": pin_dh,
        f"pinocchio, authors' URDF, {rank_urdf} base": pin_urdf,
    }
    residual = span_residual(robid_reg, pin_dh_full)
    load = os.getloadavg()
    lines = [
        "## Excitation design against the published UR10e designs (issue 14)",
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} cores, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}, load average at start {load[0]:.2f}. Condition numbers on the "
        f"0.1 s grid of one period with both ends. robid's base columns in the span of pinocchio's regressor of "
        f"the same DH robot: largest relative residual {residual:.1e}.",
        "",
    ]
    for name in args.cases:
        settings = {} if args.min_rms_velocity is None else {"min_rms_velocity": args.min_rms_velocity}
        run_case(name, robot, regressors, args.workers, args.starts, args.seed, lines, **settings)
    lines.append(f"Load average at the end: {os.getloadavg()[0]:.2f}.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
