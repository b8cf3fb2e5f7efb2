"""UR10e cross-validation on the real runs of Mamedov et al. (docs/validation.md).

robid identifies the built-in UR10e (``robid.load_robot("ur10e")``: rigid bodies, reflected rotor inertias,
viscous, Coulomb and offset friction; 58 base parameters) from the excitation runs the authors trimmed by hand,
with their drive gains (tau = K i), and predicts every other run: the excitation runs not used, the single-joint
runs (non-periodic, with rests) and the static poses. Next to it, the authors' published parameters
(``UR10E_parameters.txt``) evaluated on the same samples with the authors' own processing (their
``filterData.m``: 5th-order Butterworth, normalised cut-off 0.15 for the controller's velocity and for the
acceleration, zero-phase; acceleration by central differences of the filtered velocity). Both are scored by
the relative residual error per joint, RRE = 100 |tau_meas - tau_pred| / |tau_meas| (2-norms over the samples
robid predicts), with tau_meas = K i as recorded.

    python benchmarks/ur10e_crossvalidation.py [--processing auto|design] [--markdown FILE]

``--processing design``: identification runs whose published design the robot followed are cut by the design
(robid.io.design_file); the others are processed as by default. The authors' parameters are mapped onto
robid's standard parameters of their own URDF (``URe/urdf/ur10e.urdf``, whose link frames they are expressed
in): per link [Ixx Ixy Ixz Iyy Iyz Izz hx hy hz m] -> [m mx my mz Ixx Ixy Ixz Iyy Iyz Izz], friction per joint
[Fv Fc F0] -> [fv fc f0], rotor inertias as Im_j qdd_j. The mapping is checked by :func:`authors_check`, which
must give the README's independent pinocchio figures (30sec_12harm rows 635-3510).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy import signal  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robid.errors import RobidInputError  # noqa: E402
from robid.io.screening import ScreeningPolicy  # noqa: E402

MAPPING = ROOT / "examples" / "mappings" / "ur10e_mamedov.yaml"
GAINS = np.array([10.0000, 10.6956, 8.4566, 9.0029, 9.4800, 10.1232])  # N m/A, tau = K i (anchors A.1-1)

#: The runs the authors trimmed by hand (1-based inclusive rows): robid identifies on them.
IDENTIFY = {
    "ur-20_02_10-30sec_12harm": (635, 3510),
    "ur-20_02_12-40sec_12harm": (500, 4460),
    "ur-20_02_05-20sec_8harm": (320, 2310),
    "ur-20_02_19_14harm50sec": (195, 4966),
}
#: Unloaded excitation runs predicted (the corrupt 11_32_02 and the payload runs load_2600, 20_01_31-load and
#: 15harm50secLoad are left out: robid's model carries no payload).
HELD_OUT = (
    "ur-19_09_27-11_28_22", "ur-19_09_27-15_11_06", "ur-19_10_01-13_51_41", "ur-19_10_01-14_04_13",
    "ur-19_10_01-14_04_41", "ur-19_12_23_free", "ur-20_01_31-unload", "ur-20_02_05-20sec_12harm",
    "ur-20_02_06-20sec_10harm", "ur-20_02_06-20sec_5harm", "ur-20_02_10-20sec_7harm", "ur-20_02_19_15harm50sec",
)
#: The published design each run executed (found by aligning every design with every run; docs/validation.md).
DESIGNS = {
    "ur-19_09_27-11_28_22": "opt_sltn_N3T5", "ur-19_09_27-15_11_06": "opt_sltn_N3T5",
    "ur-19_10_01-13_51_41": "opt_sltn_N3T5", "ur-19_10_01-14_04_13": "opt_sltn_N3T5",
    "ur-19_10_01-14_04_41": "opt_sltn_N3T5", "ur-20_02_06-20sec_5harm": "ga_N5T20",
    "ur-20_02_10-20sec_7harm": "ptrnSrch_N7T20QR", "ur-20_02_10-30sec_12harm": "ptrnSrch_N12T30QR",
    "ur-20_02_19_14harm50sec": "ptrnSrch_N14T50QR", "ur-20_02_19_15harm50sec": "ptrnSrch_N15T50QR",
    "ur-20_02_05-20sec_8harm": "ptrnSrch_N8T20QR", "ur-20_02_06-20sec_10harm": "ptrnSrch_N10T20QR",
    "ur-20_02_12-40sec_12harm": "ptrnSrch_N12T40QR",
}
#: The README's independent check of the authors' parameters (pinocchio, 30sec_12harm rows 635-3510), %.
README_RRE = np.array([11.6, 5.4, 6.7, 17.9, 18.0, 12.0])
#: Where robid's RRE may stand above the authors' on a run it did not identify on (held-out excitation and
#: single-joint runs): (run, joint 1-based) -> (allowed excess in RRE points, why). Measured 2026-11-26
#: (docs/validation.md section 4); any other joint above the authors' fails tests/test_ur10e_crossvalidation.py.
EXPECTED_WORSE = {
    ("ur-19_12_23_free", 2): (
        0.5,
        "a rest-to-rest run (6.2 % with the 30 dB band before issue 31 and with the predicted-error cut-off since): "
        "robid's parameters with the authors' velocity and acceleration (the controller's qd, Butterworth at "
        "7.5 Hz) gave 5.9 % against their 6.1 %, so the 0.1 points are robid's accelerations of this run, not "
        "its parameters",
    ),
    ("ur-20_01_22-joint_1", 1): (
        0.6,
        "the moving joint, 12.9 % against 12.5 % (12.1 % before issue 31): the four identification runs are "
        "rest-to-rest records, and where robid's window processing does not predict clearly less acceleration "
        "error than the plain recipe (zero-phase Butterworth at the joint's cut-off, central differences) the "
        "guard takes the plain recipe (robid.signals.guard); with robid's own processing on every joint of those "
        "runs q1 is 12.2 % (measured 2026-11-28), so the 0.4 points are the guard's choice on the identification "
        "runs, not the prediction of this one",
    ),
    # joint_1 q5 and q6 (joints standing still while joint 1 moves) needed 10 and 15 points before the held
    # friction of issue 32 (104.0 / 108.7 % against 100.6 / 98.4 %); now 100.2 / 96.1 %, at or below the authors'
}
#: Static poses (records that begin and stay at rest: the move into the pose is not recorded, so the sign of the
#: torque its friction holds is unknown and robid predicts none): (pose, joint 1-based) -> (allowed excess of robid's
#: |mean torque error| over the authors', N m; why). Measured 2026-11-29 (docs/validation.md "Static poses").
_UNKNOWN_HOLD = ("the pose's record starts at rest, so the torque held by the friction of the unrecorded move into "
                 "it has an unknown sign; robid's error is within the held torque identified on the excitation "
                 "runs' end rests (J3 1.54, J4 1.60, J5 1.48 N m), the authors' smaller error is their gravity "
                 "parameters' offset at this pose, not a prediction of the held torque")
STATIC_EXPECTED_WORSE = {
    ("ur-20_01_17-p1", 3): (1.0, "robid +1.60 N m, the authors +1.07: " + _UNKNOWN_HOLD),
    ("ur-20_01_17-p2", 3): (1.0, "robid +1.78 N m, the authors +1.03: " + _UNKNOWN_HOLD),
    ("ur-20_01_17-p2", 4): (0.3, "robid +0.59 N m, the authors +0.41: " + _UNKNOWN_HOLD),
    ("ur-20_01_17-p4", 5): (0.2, "robid +0.71 N m, the authors +0.65: " + _UNKNOWN_HOLD),
    ("ur-20_01_17-p5", 5): (0.2, "robid -0.08 N m, the authors +0.00: " + _UNKNOWN_HOLD),
}
#: Low-pass cut-off (Hz) of robid's prediction where its automatic one is refused: the authors' 0.15 of Nyquist.
FALLBACK_CUTOFF = 7.5


def shared_data() -> Path | None:
    """The folder of the data set (ROBID_SHARED, or ../shared beside the project or its parent)."""
    env = os.environ.get("ROBID_SHARED")
    for c in ([Path(env)] if env else []) + [ROOT.parent / "shared", ROOT.parents[1] / "shared"]:
        path = c / "anchors" / "data" / "dynamic_calibration"
        if path.is_dir():
            return path
    return None


@dataclass(frozen=True)
class RunScore:
    """RRE per joint (%) of one run: robid's prediction and the authors' parameters with their processing."""

    name: str
    group: str  # identification | held-out excitation | single joint | static pose
    robid: tuple[float, ...]
    authors: tuple[float, ...]
    samples: int
    processing: str  # how robid processed it for identification (identification runs), else "prediction"
    #: mean torque error (measured minus predicted, N m) per joint over the same samples: robid's, the authors'
    mean_error: tuple[float, ...] = ()
    mean_error_authors: tuple[float, ...] = ()


# ---- the authors' side -------------------------------------------------------------------------------------
def authors_parameters(folder: Path, urdf_robot) -> tuple[np.ndarray, np.ndarray]:
    """(standard parameters of robid's robot of the authors' URDF, rotor inertias Im) from UR10E_parameters.txt."""
    text = (folder / "UR10E_parameters.txt").read_text()

    def vector(name: str) -> np.ndarray:
        found = re.search(rf"{name}\s*=\s*\[([^\]]*)\]", text)
        if found is None:
            raise RobidInputError(f"{folder / 'UR10E_parameters.txt'}: {name}: missing")
        return np.array([float(x) for x in found.group(1).split()])

    rigid, rotor, friction = vector("pi_rgd"), vector("pi_drvs"), vector("pi_frcn")
    names = list(urdf_robot.parameter_names)
    p = np.zeros(len(names))
    theirs = ("Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz", "mx", "my", "mz", "m")  # [I.. h.. m], h = m c
    for j, joint in enumerate(urdf_robot.joint_names):
        for k, name in enumerate(theirs):
            p[names.index(f"{name}_{joint}")] = rigid[10 * j + k]
        for k, name in enumerate(("fv", "fc", "f0")):
            p[names.index(f"{name}_{joint}")] = friction[3 * j + k]
    return p, rotor


def authors_states(t: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Their filterData.m: qd (the controller's) through a zero-phase 5th-order Butterworth at 0.15 of Nyquist;
    qdd by three-point central differences of it (measured time stamps), filtered the same way."""
    sos = signal.butter(5, 0.15, output="sos")
    qd_f = signal.sosfiltfilt(sos, qd, axis=0)
    qdd = np.zeros_like(qd_f)
    qdd[1:-1] = (qd_f[2:] - qd_f[:-2]) / (t[2:] - t[:-2])[:, None]
    return qd_f, signal.sosfiltfilt(sos, qdd, axis=0)


def authors_prediction(urdf_robot, params: np.ndarray, rotor: np.ndarray, m) -> np.ndarray:
    """Torque of the authors' parameters on a measurement, processed their way."""
    qd, qdd = authors_states(m.t, m.qd)
    return urdf_robot.inverse_dynamics(m.q, qd, qdd, params) + rotor * qdd


def rre(measured: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """100 |tau_meas - tau_pred| / |tau_meas| per joint (2-norms over the samples)."""
    return 100.0 * np.linalg.norm(measured - predicted, axis=0) / np.linalg.norm(measured, axis=0)


def authors_check(folder: Path) -> np.ndarray:
    """The README's independent check: the authors' parameters on 30sec_12harm rows 635-3510, their processing
    of the trimmed rows, against K i as recorded."""
    import robid
    from robid.io.measurement_file import read_measurement

    urdf = robid.load_robot(folder / "URe" / "urdf" / "ur10e.urdf")
    params, rotor = authors_parameters(folder, urdf)
    m = read_measurement(_run(folder, "ur-20_02_10-30sec_12harm"), mapping=MAPPING, dof=6)
    lo, hi = IDENTIFY["ur-20_02_10-30sec_12harm"]
    rows = slice(lo - 1, hi)
    trimmed = replace(m, t=m.t[rows], q=m.q[rows], qd=m.qd[rows], tau=m.tau[rows], qdd=None, theta=None)
    return rre(trimmed.tau, authors_prediction(urdf, params, rotor, trimmed))


# ---- robid's side ------------------------------------------------------------------------------------------
def _run(folder: Path, name: str) -> Path:
    for sub in ("identification_data", "jointwise_motion", "validation_data"):
        path = folder / "dataset_ur10e" / sub / f"{name}.csv"
        if path.is_file():
            return path
    raise RobidInputError(f"{folder}: no run {name}")


def _policy(group: str) -> ScreeningPolicy:
    """Bad rows dropped and recorded; joints that do not move (single-joint runs, static poses) allowed."""
    still = ("q", "qd") if group in ("single joint", "static pose") else ()
    return ScreeningPolicy(drop_bad_rows=True, allow_constant=still)


def design_options(folder: Path, name: str):
    """ProcessingOptions cutting the run's published design, or None when the run does not follow it."""
    from robid.io.design_file import design_processing
    from robid.io.measurement_file import read_measurement
    from robid.signals import ProcessingOptions, process

    design = DESIGNS.get(name)
    if design is None:
        return None
    period, band, samples = design_processing(folder / "trajectory_optmzn" / "optimal_trjctrs" / f"{design}.mat")
    options = ProcessingOptions(period=period, period_source="trajectory", excited_harmonics=band, design=samples)
    try:
        process(read_measurement(_run(folder, name), mapping=MAPPING, dof=6, policy=_policy("")), options)
    except RobidInputError:
        return None
    return options


def identify_robid(folder: Path, processing: str = "auto", method: str = "wls"):
    """robid's identification record of the built-in UR10e from the runs of :data:`IDENTIFY`, and how each
    was processed."""
    import robid
    from robid.identification import IdentificationOptions, identify

    robot = robid.load_robot("ur10e")
    files = [_run(folder, name) for name in IDENTIFY]
    per_file, how = {}, {}
    for name, path in zip(IDENTIFY, files, strict=True):
        options = design_options(folder, name) if processing == "design" else None
        how[name] = f"design {DESIGNS[name]}" if options is not None else "robid default"
        if options is not None:
            per_file[str(path)] = options
    options = IdentificationOptions(method=method, mapping=MAPPING, policy=_policy(""), file_processing=per_file)
    return robot, identify(robot, files, options), how


def _groups(folder: Path) -> list[tuple[str, str]]:
    runs = [(name, "identification") for name in IDENTIFY] + [(name, "held-out excitation") for name in HELD_OUT]
    for sub, group in (("jointwise_motion", "single joint"), ("validation_data", "static pose")):
        runs += [(p.stem, group) for p in sorted((folder / "dataset_ur10e" / sub).glob("*.csv"))]
    return runs


def crossvalidate(folder: Path, processing: str = "auto", method: str = "wls") -> list[RunScore]:
    """Every run scored by robid's prediction and by the authors' parameters, on the samples robid predicts."""
    import robid
    from robid.io.measurement_file import read_measurement

    robot, record, how = identify_robid(folder, processing, method)
    urdf = robid.load_robot(folder / "URe" / "urdf" / "ur10e.urdf")
    params, rotor = authors_parameters(folder, urdf)
    scores = []
    for name, group in _groups(folder):
        path, policy = _run(folder, name), _policy(group)
        m = read_measurement(path, mapping=MAPPING, dof=6, policy=policy)
        ours, note = _predict(robot, record, path, policy)
        theirs = authors_prediction(urdf, params, rotor, m)
        used = np.all(np.isfinite(ours), axis=1)
        mean_ours, mean_theirs = (tuple(np.mean(m.tau[used] - x[used], axis=0)) for x in (ours, theirs))
        scores.append(RunScore(name, group, tuple(rre(m.tau[used], ours[used])), tuple(rre(m.tau[used], theirs[used])),
                               int(used.sum()), how.get(name, note), mean_ours, mean_theirs))
    return scores


def _predict(robot, record, path: Path, policy: ScreeningPolicy) -> tuple[np.ndarray, str]:
    """robid's prediction of a file (predict_file, default cut-off); where the default is refused (a record
    too short for its filter), at the authors' velocity band :data:`FALLBACK_CUTOFF`, and said so."""
    from robid.identification.predict import predict_file

    try:
        return predict_file(robot, record, path, mapping=MAPPING, policy=policy).tau_pred, "prediction"
    except RobidInputError:
        given = {"cutoff_hz": FALLBACK_CUTOFF}
        tau = predict_file(robot, record, path, mapping=MAPPING, policy=policy, overrides=given).tau_pred
        return tau, f"prediction at {FALLBACK_CUTOFF:g} Hz (default cut-off refused: record too short)"


def worse_than_authors(scores: list[RunScore]) -> list[tuple[str, int, float, float]]:
    """(run, joint 1-based, robid RRE, authors' RRE) wherever robid's RRE is above the authors' on a run it did
    not identify on and that is not a static pose (the issue's acceptance: excitation and single-joint runs)."""
    out = []
    for s in scores:
        if s.group in ("held-out excitation", "single joint"):
            out += [(s.name, j + 1, r, a) for j, (r, a) in enumerate(zip(s.robid, s.authors, strict=True)) if r > a]
    return out


def static_worse_than_authors(scores: list[RunScore]) -> list[tuple[str, int, float, float]]:
    """(pose, joint 1-based, robid's, the authors' mean torque error) wherever robid's |mean error| over a static
    pose is above the authors' on J2-J5 (the joints whose torque at rest is mostly gravity)."""
    out = []
    for s in scores:
        if s.group == "static pose":
            out += [(s.name, j + 1, s.mean_error[j], s.mean_error_authors[j]) for j in range(1, 5)
                    if abs(s.mean_error[j]) > abs(s.mean_error_authors[j])]
    return out


def static_markdown(scores: list[RunScore]) -> list[str]:
    """The static poses' mean torque error per joint, robid next to the authors (docs/validation.md)."""
    lines = ["| pose | samples | robid mean error J1..J6 [N m] | authors' mean error J1..J6 [N m] |",
             "|---|---|---|---|"]
    for s in scores:
        if s.group == "static pose":
            lines.append(f"| {s.name.removeprefix('ur-')} | {s.samples} | "
                         f"{' / '.join(f'{v:+.2f}' for v in s.mean_error)} | "
                         f"{' / '.join(f'{v:+.2f}' for v in s.mean_error_authors)} |")
    worse = static_worse_than_authors(scores)
    lines += ["", f"Static poses, J2-J5: robid's |mean error| above the authors' on {len(worse)} of "
              f"{4 * sum(s.group == 'static pose' for s in scores)}."]
    for name, joint, ours, theirs in worse:
        why = STATIC_EXPECTED_WORSE.get((name, joint), (None, "not expected: see docs/validation.md"))[1]
        lines.append(f"* {name.removeprefix('ur-')} J{joint}: {ours:+.2f} N m against {theirs:+.2f} N m: {why}.")
    return lines


def markdown(scores: list[RunScore], check: np.ndarray, seconds: float, processing: str) -> str:
    """The table of docs/validation.md."""
    def cells(values):
        return " | ".join(f"{v:.1f}" for v in values)

    lines = [
        f"Authors' check (30sec_12harm rows 635-3510): RRE {cells(check)} % (README {cells(README_RRE)} %).",
        "",
        "| run | group | robid processing | samples | robid RRE % q1..q6 | authors' RRE % q1..q6 |",
        "|---|---|---|---|---|---|",
    ]
    for s in scores:
        lines.append(f"| {s.name.removeprefix('ur-')} | {s.group} | {s.processing} | {s.samples} | "
                     f"{' / '.join(f'{v:.1f}' for v in s.robid)} | {' / '.join(f'{v:.1f}' for v in s.authors)} |")
    lines += ["", f"robid processing of the identification runs: {processing}; {seconds:.0f} s on "
              f"{platform.machine()} ({platform.python_version()}, {os.cpu_count()} cores)."]
    worse = worse_than_authors(scores)
    lines += ["", f"Held-out excitation and single-joint runs: robid above the authors on {len(worse)} of "
              f"{6 * sum(s.group in ('held-out excitation', 'single joint') for s in scores)} joints."]
    for name, joint, ours, theirs in worse:
        why = EXPECTED_WORSE.get((name, joint), (None, "not expected: see docs/validation.md"))[1]
        lines.append(f"* {name.removeprefix('ur-')} q{joint}: {ours:.1f} % against {theirs:.1f} %: {why}.")
    return "\n".join(lines + [""] + static_markdown(scores))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--processing", choices=("auto", "design"), default="auto")
    p.add_argument("--method", choices=("ols", "wls", "irls"), default="wls")
    p.add_argument("--markdown", metavar="FILE", help="also write the table to FILE")
    args = p.parse_args(argv)
    folder = shared_data()
    if folder is None:
        print("the data set (shared/anchors/data/dynamic_calibration) is not there; set ROBID_SHARED", file=sys.stderr)
        return 2
    start = time.perf_counter()
    check = authors_check(folder)
    scores = crossvalidate(folder, args.processing, args.method)
    text = markdown(scores, check, time.perf_counter() - start, args.processing)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
