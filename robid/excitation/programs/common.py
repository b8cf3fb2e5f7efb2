"""What every controller program shares: the timeline, joint conventions, the design comment and metadata.

Timeline
--------
* rest-to-rest design: each period starts and ends at the centre pose at rest, so a program repeats one
  period ``periods`` times; the excited periods are exactly the design.
* periodic design: the program adds one fade-in and one fade-out segment of ``lead`` periods where the
  deviation from the centre is multiplied by the C4 smoothstep e(s) = 126 s^5 - 420 s^6 + 540 s^7 - 315 s^8
  + 70 s^9 (e and its first four derivatives are 0 at s = 0 and 1 at s = 1 with zero derivatives), so the
  robot starts and stops at rest; the excited periods run from t = lead T to (lead + periods) T after the
  approach and are the only ones to use for identification.

Joint conventions
-----------------
The controller value of joint j is ``sign_j * q_j * unit + offset_j`` with ``unit`` = 180/pi for controllers
that expect degrees (KRL, RAPID) and 1 for radians (URScript, CSV); offsets are in controller units.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from robid.excitation.fourier import FourierTrajectory
from robid.excitation.trajectory_file import TrajectoryFile

DEG = 180.0 / math.pi


@dataclass(frozen=True)
class ProgramOptions:
    """Options of an emitted program. ``rate`` in Hz (None = the format's automatic choice)."""

    periods: int = 1
    rate: float | None = None
    signs: tuple[float, ...] | None = None
    offsets: tuple[float, ...] | None = None  # controller units
    name: str = "robid_excitation"
    lead_periods: int = 1  # fade-in/out length for periodic (non rest-to-rest) designs
    approach_fraction: float = 0.1  # approach speed as a fraction of the velocity limits


@dataclass(frozen=True)
class JointConvention:
    signs: np.ndarray
    offsets: np.ndarray
    unit: float  # controller units per SI unit

    @staticmethod
    def create(dof: int, options: ProgramOptions, unit: float) -> JointConvention:
        signs = np.ones(dof) if options.signs is None else np.asarray(options.signs, dtype=float)
        offsets = np.zeros(dof) if options.offsets is None else np.asarray(options.offsets, dtype=float)
        if signs.shape != (dof,) or offsets.shape != (dof,):
            raise ValueError(f"joint signs and offsets need {dof} values each")
        if not np.all(np.abs(signs) == 1.0):
            raise ValueError("joint signs must be +1 or -1")
        return JointConvention(signs, offsets, unit)

    def to_controller(self, q: np.ndarray) -> np.ndarray:
        return self.signs * q * self.unit + self.offsets


def smoothstep9(s: np.ndarray) -> np.ndarray:
    s = np.clip(s, 0.0, 1.0)
    return s**5 * (126.0 + s * (-420.0 + s * (540.0 + s * (-315.0 + 70.0 * s))))


def lead_periods(traj: FourierTrajectory, options: ProgramOptions) -> int:
    return 0 if traj.rest_to_rest else max(1, options.lead_periods)


def timeline_positions(traj: FourierTrajectory, t: np.ndarray, periods: int, lead: int) -> np.ndarray:
    """Commanded joint positions (N, dof) at program time t (0 = end of the approach)."""
    t = np.asarray(t, dtype=float)
    q = traj.derivative(t, 0)
    if lead == 0:
        return q
    total = (periods + 2 * lead) * traj.period
    ramp = lead * traj.period
    env = np.minimum(smoothstep9(t / ramp), smoothstep9((total - t) / ramp))
    return traj.center + env[:, None] * (q - traj.center)


def design_comment(tf: TrajectoryFile, fmt: str, options: ProgramOptions, extra: list[str]) -> list[str]:
    """Human-readable lines describing the design (without comment markers)."""
    traj = tf.trajectory
    d = tf.design
    crit = d.get("criteria", {})
    lines = [
        "robid excitation trajectory (Fourier series, Swevers form)",
        f"period {traj.period:g} s, {traj.harmonics} harmonics, fundamental {1.0 / traj.period:.6g} Hz",
        (
            f"rest-to-rest, C{traj.continuity_order()} at start and end"
            if traj.rest_to_rest
            else f"periodic design with {lead_periods(traj, options)}-period fade-in and fade-out"
        ),
        f"excited periods: {options.periods}",
    ]
    if crit:
        lines.append(
            f"criterion {d.get('criterion', '?')}: cond {_fmt(crit.get('cond'))} (column-scaled), "
            f"cond raw {_fmt(crit.get('cond_raw'))}, logdet {_fmt(crit.get('logdet'))}"
        )
    if d.get("robot"):
        lines.append(f"robot {d['robot']}, seed {d.get('seed')}, designed {d.get('created', '')}")
    lim = tf.limits
    for j, name in enumerate(traj.joint_names):
        lo, hi = lim.position[j]
        lines.append(
            f"{name}: position [{lo * DEG:.2f}, {hi * DEG:.2f}] deg, velocity {_fmt(lim.velocity[j])}, "
            f"acceleration {_fmt(lim.acceleration[j])}, jerk {_fmt(lim.jerk[j])} (SI, rad based)"
        )
    lines.append(f"safety margin in the design: {tf.margin:g}")
    return lines + extra


def program_comments(
    tf: TrajectoryFile, fmt: str, options: ProgramOptions, notes: list[str], metadata: dict
) -> list[str]:
    """The comment block of a program: :func:`design_comment`, the format's ``notes`` and the metadata line."""
    return design_comment(tf, fmt, options, [*notes, metadata_line(fmt, metadata)])


@dataclass(frozen=True, eq=False)
class PointList:
    """The commanded points of a point-list program (KRL, RAPID; degrees): the timeline (module docstring)
    sampled every ``dt``. A rest-to-rest design is one period of ``segments`` segments that the controller
    repeats ``blocks`` (= periods) times; a periodic design is one block with the fades."""

    convention: JointConvention
    period: float
    periods: int
    dt: float
    lead: int
    blocks: int
    segments: int
    values: np.ndarray  # (segments + 1, dof), controller units

    @staticmethod
    def sample(traj: FourierTrajectory, options: ProgramOptions, rate: float) -> PointList:
        conv = JointConvention.create(traj.dof, options, DEG)
        n = samples_per_period(traj.period, rate)
        dt = traj.period / n
        lead = lead_periods(traj, options)
        blocks, segments = (options.periods, n) if lead == 0 else (1, n * (options.periods + 2 * lead))
        t = np.arange(segments + 1) * dt
        values = conv.to_controller(timeline_positions(traj, t, options.periods, lead))
        return PointList(conv, traj.period, options.periods, dt, lead, blocks, segments, values)

    def comments(self, tf: TrajectoryFile, fmt: str, options: ProgramOptions, timing: str, **extra) -> list[str]:
        """:func:`program_comments` with the ``timing`` note, the joint convention and the metadata the
        parse-back reads: the rate, the format's ``extra`` values, the timeline and the convention."""
        timeline = {"points": self.segments + 1, "blocks": self.blocks, "periods": self.periods, "lead": self.lead}
        convention = {"signs": self.convention.signs, "offsets": self.convention.offsets}
        metadata = {"rate": repr(1.0 / self.dt), **extra, **timeline, "period": repr(self.period), **convention}
        note = "joint values: controller = sign * robid * 180/pi + offset (deg); see robid-program line"
        return program_comments(tf, fmt, options, [timing, note], metadata)


def _fmt(v) -> str:
    if v is None:
        return "none"
    v = float(v)
    return "none" if not math.isfinite(v) else f"{v:.6g}"


def metadata_line(fmt: str, values: dict) -> str:
    """One machine-readable line (inside a comment) that the parse-back reads: ``robid-program: k=v; ...``."""
    parts = [f"format={fmt}", "version=1"]
    for k, v in values.items():
        if isinstance(v, list | tuple | np.ndarray):
            v = ",".join(repr(float(x)) for x in v)
        parts.append(f"{k}={v}")
    return "robid-program: " + "; ".join(parts)


def parse_metadata(text: str) -> dict[str, str]:
    match = re.search(r"robid-program: ([^\n\r]*)", text)
    if not match:
        raise ValueError("not a robid program (no 'robid-program:' line)")
    out = {}
    for part in match.group(1).split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def floats(text: str) -> np.ndarray:
    return np.array([float(x) for x in text.split(",")]) if text else np.zeros(0)


def samples_per_period(period: float, rate: float) -> int:
    return max(2, int(round(period * rate)))
