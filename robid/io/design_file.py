"""Excitation designs read as trajectories: robid's TRAJ.json and the published MATLAB designs of Mamedov et al.

``read_design(path)`` returns a :class:`robid.excitation.trajectory_file.TrajectoryFile` for either kind;
``design_processing(path)`` what the signal stage needs of a design: its period, its band and, for a design
executed once between rests, its sampled positions (``read_trajectory_timing`` of
:mod:`robid.io.measurement_file` gives period and band alone).

Published designs (github.com/shamilmamedov/dynamic_calibration, ``trajectory_optmzn/optimal_trjctrs/*.mat``)
hold ``a``, ``b`` (dof x N), ``c_pol`` (dof x 6) and the struct ``traj_par`` with ``T`` (s), ``wf`` (rad/s),
``N`` and, in most files, ``q0``, ``q_min``, ``q_max``, ``qd_max``, ``q2d_max``. Their trajectory (the authors'
``mixed_traj.m``) is the Swevers series plus a polynomial in ascending powers of t::

    q(t) = sum_l a_l / (l wf) sin(l wf t) - b_l / (l wf) cos(l wf t) + sum_k c_pol[:, k] t^k,   t in [0, T]

(:class:`robid.excitation.fourier_polynomial.FourierPolynomialTrajectory`). The reader checks wf = 2 pi / T,
N = the coefficient count and, where ``q0`` is stored, q(0) = q0; the recorded UR10e runs follow these designs
to 0.003-0.1 rad rms (docs/validation.md).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from robid.errors import RobidInputError
from robid.excitation.constraints import JointLimitSet
from robid.excitation.fourier_polynomial import FourierPolynomialTrajectory
from robid.excitation.trajectory_file import TrajectoryFile, load_trajectory
from robid.io.files import read_json
from robid.io.tables import load_mat
from robid.signals.design_alignment import DesignSamples, design_samples

#: Samples of a design per period handed to the signal stage: at least this many, and 16 per harmonic kept.
DESIGN_SAMPLES = 256

#: How far q(0) of a published design may lie from its stored q0 (rad): the coefficients are stored rounded.
Q0_TOLERANCE = 1e-6


def read_design(path: str | Path) -> TrajectoryFile:
    """A robid TRAJ.json or a published ``.mat`` design (module docstring), as a TrajectoryFile."""
    path = Path(path)
    if not path.is_file():
        raise RobidInputError(f"{path}: no such trajectory file")
    if path.suffix.lower() == ".mat":
        return read_published_design(path)
    return load_trajectory(path)


def design_processing(path: str | Path) -> tuple[float, tuple[int, ...] | None, DesignSamples | None]:
    """Period (s), band and -- for a design executed once between rests (a published ``.mat`` design) -- its
    sampled positions for ``ProcessingOptions.design``. A robid TRAJ.json gives its period and harmonics
    (``read_trajectory_timing``) and no samples: its periods go to the periodic path. The band of a published
    design is where it holds its motion (:meth:`FourierPolynomialTrajectory.band`: the N of the series and
    what the polynomial adds)."""
    path = Path(path)
    if path.suffix.lower() != ".mat":
        return (*read_trajectory_timing(path), None)
    traj = read_published_design(path).trajectory
    period, band = float(traj.period), traj.band()
    k = max(DESIGN_SAMPLES, 16 * max(band)) + 1
    q = traj.derivative(np.linspace(0.0, period, k), 0)
    return period, band, design_samples(Path(path).name, period, band, q)


def read_trajectory_timing(path: str | Path) -> tuple[float, tuple[int, ...] | None]:
    """Period (s) and excited harmonics of a trajectory file written by ``robid design`` (JSON with
    ``period`` and ``harmonics``: a count H meaning 1..H, or a list), or of a published ``.mat`` design
    (its period and the harmonics that hold its motion)."""
    path = Path(path)
    if path.suffix.lower() == ".mat":
        traj = read_published_design(path).trajectory
        return float(traj.period), traj.band()
    data = read_json(path, "trajectory")
    if not isinstance(data, dict):
        raise RobidInputError(f"{path}: expected a JSON object with period and harmonics")
    period = data.get("period")
    if isinstance(period, bool) or not isinstance(period, int | float) or not period > 0:
        raise RobidInputError(f"{path}: period: expected a positive number of seconds, got {period!r}")
    raw = data.get("harmonics")
    harmonics: tuple[int, ...] | None
    if raw is None:
        harmonics = None
    elif isinstance(raw, int) and not isinstance(raw, bool) and raw >= 1:
        harmonics = tuple(range(1, raw + 1))
    elif isinstance(raw, list) and raw and all(isinstance(h, int) and not isinstance(h, bool) and h >= 1 for h in raw):
        harmonics = tuple(sorted(set(raw)))
    else:
        raise RobidInputError(f"{path}: harmonics: expected a count or a list of positive integers, got {raw!r}")
    return float(period), harmonics


def read_published_design(path: str | Path) -> TrajectoryFile:
    """A design of Mamedov et al. (``a``, ``b``, ``c_pol``, ``traj_par``) with its limits, checked."""
    path = Path(path)
    if not path.is_file():
        raise RobidInputError(f"{path}: no such design file")
    contents = load_mat(path)
    a, b = _matrix(contents, path, "a"), _matrix(contents, path, "b")
    poly = _matrix(contents, path, "c_pol")
    par = contents.get("traj_par")
    if par is None or not hasattr(par, "_fieldnames"):
        raise RobidInputError(f"{path}: traj_par: missing (a struct with T, wf, N)")
    period = _scalar(par, path, "T")
    if a.shape != b.shape or poly.shape[0] != a.shape[0]:
        raise RobidInputError(f"{path}: a {a.shape}, b {b.shape} and c_pol {poly.shape}: joint counts disagree")
    n = int(_scalar(par, path, "N"))
    if n != a.shape[1]:
        raise RobidInputError(f"{path}: traj_par.N = {n} but a and b hold {a.shape[1]} harmonics")
    if "wf" in par._fieldnames:
        wf = _scalar(par, path, "wf")
        if not math.isclose(wf, 2.0 * math.pi / period, rel_tol=1e-6):
            raise RobidInputError(f"{path}: traj_par.wf = {wf:g} rad/s is not 2 pi / T = {2 * math.pi / period:g}")
    traj = FourierPolynomialTrajectory(period, a, b, poly)
    design = {"source": str(path), "format": "mamedov-mat", "formula": _FORMULA}
    if "q0" in par._fieldnames:
        q0 = _vector(par, path, "q0", traj.dof)
        gap = float(np.max(np.abs(traj.center - q0)))
        if gap > Q0_TOLERANCE:
            raise RobidInputError(
                f"{path}: q(0) of a, b, c_pol differs from traj_par.q0 by {gap:.3g} rad: not the convention "
                f"{_FORMULA}"
            )
        design["q0"] = q0.tolist()
    return TrajectoryFile(traj, _limits(par, path, traj.dof), 0.0, (), design)


_FORMULA = "q(t) = sum_l a_l/(l wf) sin(l wf t) - b_l/(l wf) cos(l wf t) + sum_k c_pol[:, k] t^k"


def _matrix(contents: dict, path: Path, name: str) -> np.ndarray:
    if name not in contents:
        found = ", ".join(k for k in contents if not k.startswith("__"))
        raise RobidInputError(f"{path}: {name}: missing (the file holds: {found})")
    try:
        value = np.atleast_2d(np.asarray(contents[name], dtype=float))
    except (TypeError, ValueError):
        raise RobidInputError(f"{path}: {name}: not a numeric matrix") from None
    if value.ndim != 2 or not np.all(np.isfinite(value)):
        raise RobidInputError(f"{path}: {name}: expected a finite matrix, got shape {value.shape}")
    return value


def _scalar(par, path: Path, name: str) -> float:
    if name not in par._fieldnames:
        raise RobidInputError(f"{path}: traj_par.{name}: missing")
    try:
        value = float(np.asarray(getattr(par, name), dtype=float).reshape(-1)[0])
    except (TypeError, ValueError, IndexError):
        raise RobidInputError(f"{path}: traj_par.{name}: not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise RobidInputError(f"{path}: traj_par.{name}: expected a positive number, got {value!r}")
    return value


def _vector(par, path: Path, name: str, dof: int) -> np.ndarray:
    try:
        value = np.asarray(getattr(par, name), dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise RobidInputError(f"{path}: traj_par.{name}: not numeric") from None
    if value.shape != (dof,) or not np.all(np.isfinite(value)):
        raise RobidInputError(f"{path}: traj_par.{name}: expected {dof} finite values, got shape {value.shape}")
    return value


def _limits(par, path: Path, dof: int) -> JointLimitSet:
    """Hard limits the design was made for (traj_par.q_min/q_max, qd_max, q2d_max), +-inf where absent."""
    fields = par._fieldnames

    def get(name: str):
        return _vector(par, path, name, dof).tolist() if name in fields else None

    lo, hi = get("q_min"), get("q_max")
    position = list(zip(lo, hi, strict=True)) if lo is not None and hi is not None else None
    return JointLimitSet.create(dof, position=position, velocity=get("qd_max"), acceleration=get("q2d_max"))
