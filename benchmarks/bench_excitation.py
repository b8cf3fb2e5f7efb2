"""Excitation design benchmarks (issue 3).

1. UR10e, harmonics 7, period 25 s, centre [0, -90, 0, -90, 0, 0] deg, position limits [-180, 180], [-180, 0],
   [-160, 160], [-180, 0], [-90, 90], [-90, 90] deg, velocity [3.14, 3.14, 3.14, 6.28, 6.28, 6.28] rad/s,
   acceleration 1.5 rad/s^2, rest-to-rest: robid's design against the published designs of the same robot with
   the same harmonics and period (Mamedov et al., ``trajectory_optmzn/optimal_trjctrs/*N7T25*.mat``: Fourier
   series plus a 5th-order polynomial), all scored by the same base regressor (rigid + rotor + viscous +
   Coulomb + offset) on the same grid, raw and column-normalised; every design re-sampled at 1 kHz against
   the limits.
2. Timing: 6-axis robot, 5 harmonics, criterion on 250 grid points.

Run from the project root:  python benchmarks/bench_excitation.py [--starts N] [--markdown FILE]
``--regressor pinocchio`` scores with an independent pinocchio regressor of the authors' URDF instead of
``robid.load_robot('ur10e')`` (useful as a cross-check, or before the core is available).
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
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robid import progress  # noqa: E402
from robid.excitation.constraints import JointLimitSet  # noqa: E402
from robid.excitation.criteria import condition_number, stack  # noqa: E402
from robid.excitation.optimiser import DesignProblem, design_excitation  # noqa: E402

ANCHORS = ROOT.parent / "shared" / "anchors" / "data" / "dynamic_calibration"
DESIGNS = ANCHORS / "trajectory_optmzn" / "optimal_trjctrs"
TERMS = ("rigid", "rotor", "viscous", "coulomb", "offset")
DEG = math.pi / 180.0
CENTER = np.array([0, -90, 0, -90, 0, 0]) * DEG
LIMITS = JointLimitSet.create(
    6,
    np.array([[-180, 180], [-180, 0], [-160, 160], [-180, 0], [-90, 90], [-90, 90]]) * DEG,
    [3.14, 3.14, 3.14, 6.28, 6.28, 6.28],
    [1.5] * 6,
)


# ------------------------------------------------------------------------------------------ regressors
def robid_regressor():
    import robid

    try:
        robot = robid.load_robot("ur10e", terms=TERMS)
    except TypeError:
        robot = robid.load_robot("ur10e", terms="+".join(TERMS))
    base = robot.base_parameters()
    return base.regressor, f"robid.load_robot('ur10e', terms={'+'.join(TERMS)}): {len(base.names)} base parameters"


def pinocchio_regressor():
    """Independent oracle: pinocchio on the authors' URDF, rotor/friction columns appended, base columns by
    pivoted QR on random states."""
    import pinocchio as pin
    import scipy.linalg

    model = pin.buildModelFromUrdf(str(ANCHORS / "URe" / "urdf" / "ur10e.urdf"))
    data = model.createData()

    def full(q, qd, qdd):
        n = q.shape[0]
        out = np.zeros((n, 6, 84))
        for i in range(n):
            out[i, :, :60] = pin.computeJointTorqueRegressor(model, data, q[i], qd[i], qdd[i])
        for j in range(6):
            out[:, j, 60 + j] = qdd[:, j]
            out[:, j, 66 + j] = qd[:, j]
            out[:, j, 72 + j] = np.sign(qd[:, j])
            out[:, j, 78 + j] = 1.0
        return out

    rng = np.random.default_rng(0)
    y = stack(full(*(rng.uniform(-3, 3, (80, 6)) for _ in range(3))))
    _, r, piv = scipy.linalg.qr(y, pivoting=True, mode="economic")
    rank = int(np.sum(np.abs(np.diag(r)) > 1e-9 * abs(r[0, 0])))
    idx = np.sort(piv[:rank])
    return (lambda q, qd, qdd: full(q, qd, qdd)[:, :, idx]), f"pinocchio regressor of URe/urdf/ur10e.urdf: {rank} base"


# ------------------------------------------------------------------------------------------ published designs
class PublishedDesign:
    """q(t) = sum_k a_k/(k wf) sin(k wf t) - b_k/(k wf) cos(k wf t) + sum_i c_i t^(i-1)  (mixed_traj.m)."""

    def __init__(self, path: Path):
        import scipy.io

        d = scipy.io.loadmat(str(path))
        self.name = path.stem
        self.a, self.b, self.c = d["a"], d["b"], d["c_pol"]
        par = d["traj_par"][0, 0]
        self.period = float(np.squeeze(par["T"]))
        self.wf = float(np.squeeze(par["wf"]))
        self.n = int(np.squeeze(par["N"]))
        self.own_acc = np.squeeze(par["q2d_max"]).astype(float)
        self.own_vel = np.squeeze(par["qd_max"]).astype(float)
        self.own_pos = np.stack([np.squeeze(par["q_min"]), np.squeeze(par["q_max"])], axis=1).astype(float)

    def evaluate(self, t: np.ndarray):
        t = np.asarray(t, dtype=float)[:, None]
        q = np.zeros((t.shape[0], 6))
        qd = np.zeros_like(q)
        qdd = np.zeros_like(q)
        for k in range(1, self.n + 1):
            w = k * self.wf
            s, c = np.sin(w * t), np.cos(w * t)
            q += self.a[:, k - 1] / w * s - self.b[:, k - 1] / w * c
            qd += self.a[:, k - 1] * c + self.b[:, k - 1] * s
            qdd += -self.a[:, k - 1] * w * s + self.b[:, k - 1] * w * c
        powers = np.hstack([t**i for i in range(6)])
        q += powers @ self.c.T
        qd += np.hstack([i * t ** max(i - 1, 0) for i in range(6)]) @ self.c.T
        qdd += np.hstack([i * (i - 1) * t ** max(i - 2, 0) for i in range(6)]) @ self.c.T
        return q, qd, qdd


def violations(q, qd, qdd, pos, vel, acc) -> str:
    out = []
    lo, hi = pos[:, 0], pos[:, 1]
    over = np.maximum(q - hi, lo - q).max(axis=0)
    for j in np.nonzero(over > 1e-9)[0]:
        out.append(f"q{j + 1} position by {over[j] / DEG:.2f} deg")
    for name, x, lim in (("velocity", qd, vel), ("acceleration", qdd, acc)):
        peak = np.abs(x).max(axis=0)
        for j in np.nonzero(peak > lim * (1 + 1e-9))[0]:
            out.append(f"q{j + 1} {name} {peak[j]:.3f} > {lim[j]:.3f}")
    return "none" if not out else "; ".join(out)


def score(regressor, q, qd, qdd) -> tuple[float, float]:
    w = stack(regressor(q, qd, qdd))
    return condition_number(w, False), condition_number(w, True)


# ------------------------------------------------------------------------------------------ benchmarks
def comparison(
    regressor,
    starts: int,
    seed: int,
    lines: list[str],
    criterion: str = "cond_both",
    margin: float = 0.05,
    raw_weight: float = 1.0,
) -> None:
    problem = DesignProblem(
        period=25.0,
        harmonics=7,
        center=CENTER,
        limits=LIMITS,
        margin=margin,
        rest_order=4,
        criterion=criterion,
        raw_weight=raw_weight,
        grid_points=250,
        seed=seed,
        starts=starts,
        max_iterations=150,
        joint_names=("J1", "J2", "J3", "J4", "J5", "J6"),
    )
    t0 = time.perf_counter()
    result = design_excitation(problem, regressor)
    seconds = time.perf_counter() - t0
    traj = result.trajectory
    grid_mid = (np.arange(250) + 0.5) * 0.1  # robid's criterion grid (0.1 s, cell centres)
    grid_01 = np.arange(0, 25.0 + 1e-9, 0.1)  # 0.1 s grid with both ends, as in the anchors README
    t1k = np.arange(0, 25.0 + 1e-9, 1e-3)
    t02 = np.arange(0, 25.0 + 1e-9, 0.2)
    lines.append(
        "| design | cond raw (0.1 s, mid) | cond scaled (0.1 s, mid) | cond raw (0.1 s, ends) | "
        "cond scaled (0.1 s, ends) | violations at 1 kHz (issue limits) | at 1 kHz (own limits) | "
        "at 0.2 s (own limits) |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")
    q1k = traj.evaluate(t1k, 2)
    own = violations(*q1k, LIMITS.position, LIMITS.velocity, LIMITS.acceleration)
    r_mid, s_mid = score(regressor, *traj.evaluate(grid_mid, 2))
    r_01, s_01 = score(regressor, *traj.evaluate(grid_01, 2))
    label = criterion if criterion != "cond_both" else f"cond_both, raw_weight {raw_weight:g}"
    lines.append(
        f"| robid ({label}, margin {margin:g}, seed {seed}, {starts} starts, rest-to-rest "
        f"C{traj.continuity_order()}) | {r_mid:.1f} | "
        f"{s_mid:.2f} | {r_01:.1f} | {s_01:.2f} | {own} | (same) | "
        f"{violations(*traj.evaluate(t02, 2), LIMITS.position, LIMITS.velocity, LIMITS.acceleration)} |"
    )
    for path in sorted(DESIGNS.glob("*N7T25*.mat")):
        pub = PublishedDesign(path)
        r_mid, s_mid = score(regressor, *pub.evaluate(grid_mid))
        r_01, s_01 = score(regressor, *pub.evaluate(grid_01))
        issue = violations(*pub.evaluate(t1k), LIMITS.position, LIMITS.velocity, LIMITS.acceleration)
        own1k = violations(*pub.evaluate(t1k), pub.own_pos, pub.own_vel, pub.own_acc)
        own02 = violations(*pub.evaluate(t02), pub.own_pos, pub.own_vel, pub.own_acc)
        lines.append(
            f"| published {pub.name} | {r_mid:.1f} | {s_mid:.2f} | {r_01:.1f} | {s_01:.2f} | {issue} | "
            f"{own1k} | {own02} |"
        )
    lines.append("")
    lines.append(
        f"robid design: {seconds:.1f} s for {starts} starts; certified check: {result.check.summary()}; "
        f"logdet {result.criteria.logdet:.3f}; rank {result.criteria.rank}/{result.criteria.columns}."
    )
    lines.append(
        "Published designs' own limits (from their .mat): position [-pi, pi], [-pi, 0], [-pi/2, pi/2], "
        "[-pi, 0], [-pi/2, pi/2], [-pi/2, pi/2]; velocity as the issue; acceleration q2d_max of each file."
    )


def timing(regressor, starts: int, seed: int, lines: list[str]) -> None:
    problem = DesignProblem(
        period=20.0,
        harmonics=5,
        center=CENTER,
        limits=LIMITS,
        margin=0.05,
        rest_order=4,
        criterion="cond",
        grid_points=250,
        seed=seed,
        starts=starts,
        max_iterations=150,
    )
    t0 = time.perf_counter()
    result = design_excitation(problem, regressor)
    seconds = time.perf_counter() - t0
    its = ", ".join(str(s.iterations) for s in result.starts)
    lines.append(
        f"| 6-axis UR10e, 5 harmonics, T = 20 s, 250 grid points, rest-to-rest | {starts} | {its} | "
        f"{result.criteria.cond:.2f} | {result.criteria.cond_raw:.1f} | {seconds:.1f} s |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--regressor", choices=("robid", "pinocchio"), default="robid")
    parser.add_argument("--criterion", default="cond_both", help="criterion of the UR10e comparison design")
    parser.add_argument("--raw-weight", type=float, default=3.0, help="weight of log cond_raw in cond_both")
    parser.add_argument("--margin", type=float, default=0.05, help="safety margin of the comparison design")
    parser.add_argument("--skip-comparison", action="store_true")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the results to this file")
    args = parser.parse_args()
    progress.set_progress(progress.stderr_printer)
    regressor, label = robid_regressor() if args.regressor == "robid" else pinocchio_regressor()
    lines = [
        "## Excitation design (issue 3)",
        "",
        f"Machine: {platform.platform()}, {os.cpu_count()} cores, OPENBLAS_NUM_THREADS="
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}. Base regressor: {label}.",
        "",
    ]
    if not args.skip_comparison:
        lines += ["### UR10e, 7 harmonics, 25 s, rest-to-rest, against the published N7T25 designs", ""]
        comparison(regressor, args.starts, args.seed, lines, args.criterion, args.margin, args.raw_weight)
        lines.append("")
    if not args.skip_timing:
        lines += [
            "### Timing (criterion cond)",
            "",
            "| case | starts | SLSQP iterations per start | cond (scaled) | cond raw | time |",
            "|---|---|---|---|---|---|",
        ]
        timing(regressor, args.starts, args.seed, lines)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
