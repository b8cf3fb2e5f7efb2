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

Commanded path
--------------
By default a program commands the design's link path q. A :class:`CommandedPath` in
``ProgramOptions.commanded`` replaces it with other positions on the same timeline (``robid export
--motor-side``: the motor-side reference theta of an elastic robot, :mod:`robid.elastic.program_reference`); the
program's comments state it, its ``robid-program:`` line carries ``commanded=<label>``, and the parse-back check
compares the executed motion with those positions.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from robid.excitation.fourier import FourierTrajectory
from robid.excitation.programs.timeline import smoothstep9 as smoothstep9
from robid.excitation.programs.timeline import smoothstep9_derivative as smoothstep9_derivative
from robid.excitation.programs.timeline import timeline_derivative as timeline_derivative
from robid.excitation.programs.timeline import timeline_positions as timeline_positions
from robid.excitation.trajectory_file import TrajectoryFile
from robid.io.escaping import comment_line

DEG = 180.0 / math.pi
#: decimals of the point-list formats (KRL, RAPID: degrees)
POINT_DECIMALS = 6


@dataclass(frozen=True, eq=False)
class CommandedSeries:
    """Commanded positions as the URScript tick loop computes them (SI, robid convention), at tick k (t = k DT):
    ``center + sum_l sa_l sin(l w t) - sb_l cos(l w t) + start * decay^k``; sa, sb (dof, H) position amplitudes,
    decay (dof,) the factor per tick (0: the term is ``start`` at k = 0 only). ``note``: a comment line on how
    the series was obtained (truncation)."""

    center: np.ndarray
    sa: np.ndarray
    sb: np.ndarray
    start: np.ndarray
    decay: np.ndarray
    note: str


class CommandedPath(Protocol):
    """Positions a program commands in place of the design's link path (module docstring). Times are program
    times (0 = end of the approach), arrays (N, dof), SI, robid's joint convention."""

    label: str  # one word, written in the robid-program line as commanded=<label>

    def positions(self, t: np.ndarray, periods: int, lead: int) -> np.ndarray:
        """Commanded positions on the program's timeline (:func:`timeline_positions`)."""

    def excited(self, t: np.ndarray) -> list[np.ndarray]:
        """[positions, velocities, accelerations] of the excited periods from t = 0 (the CSV format)."""

    def series(self, dt: float) -> CommandedSeries:
        """The positions of a rest-to-rest program as a series evaluated every ``dt`` (URScript); ValueError if
        they are not one."""

    def comments(self, deviation: np.ndarray) -> list[str]:
        """Comment lines stating what is commanded; ``deviation``: max |commanded - link| per joint over the
        program's samples."""


@dataclass(frozen=True)
class ProgramOptions:
    """Options of an emitted program. ``rate`` in Hz (None = the format's automatic choice). ``commanded``:
    positions to command instead of the link path (module docstring)."""

    periods: int = 1
    rate: float | None = None
    signs: tuple[float, ...] | None = None
    offsets: tuple[float, ...] | None = None  # controller units
    name: str = "robid_excitation"
    lead_periods: int = 1  # fade-in/out length for periodic (non rest-to-rest) designs
    approach_fraction: float = 0.1  # approach speed as a fraction of the velocity limits
    commanded: CommandedPath | None = None
    #: run the design at this fraction of its speed (robid.excitation.programs.speed; 0.1 for a first run)
    speed_scale: float = 1.0
    #: the robot model for the Cartesian and collision limits of the parse-back (None: the design's robot,
    #: loaded by name; robid.excitation.programs.workspace)
    workspace_model: object | None = None


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


def lead_periods(traj: FourierTrajectory, options: ProgramOptions) -> int:
    return 0 if traj.rest_to_rest else max(1, options.lead_periods)


def commanded_lines(options: ProgramOptions, commanded: np.ndarray, link: np.ndarray) -> list[str]:
    """The comment lines of ``options.commanded`` (none without), with the max |commanded - link| per joint over
    the program's samples (``commanded``, ``link`` (N, dof), SI)."""
    if options.commanded is None:
        return []
    return options.commanded.comments(np.max(np.abs(np.asarray(commanded) - np.asarray(link)), axis=0))


def design_comment(
    tf: TrajectoryFile, fmt: str, options: ProgramOptions, extra: list[str], commanded: list[str] = ()
) -> list[str]:
    """Human-readable lines describing the design (without comment markers); ``commanded`` (what the program
    commands instead of the link path) right after the first line."""
    traj = tf.trajectory
    d = tf.design
    crit = d.get("criteria", {})
    lines = [
        "robid excitation trajectory (Fourier series, Swevers form)",
        *commanded,
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
    from robid.excitation.programs.speed import speed_lines

    return lines + speed_lines(tf, periods=options.periods) + extra


def program_comments(
    tf: TrajectoryFile, fmt: str, options: ProgramOptions, notes: list[str], metadata: dict, commanded: list[str] = ()
) -> list[str]:
    """The comment block of a program: :func:`design_comment`, the format's ``notes`` and the metadata line
    (with ``commanded=<label>`` when the program commands ``options.commanded``). Every line is
    :func:`robid.io.escaping.comment_line`: a name, date or path with a line break in it stays inside its comment."""
    if options.commanded is not None:
        metadata = {**metadata, "commanded": options.commanded.label}
    lines = design_comment(tf, fmt, options, [*notes, metadata_line(fmt, metadata)], list(commanded))
    return [comment_line(line) for line in lines]  # the design's texts are the user's: one ASCII line each


@dataclass(frozen=True, eq=False)
class PointList:
    """The commanded points of a point-list program (KRL, RAPID; degrees): the timeline (module docstring)
    sampled every ``dt``. A rest-to-rest design is one period of ``segments`` segments that the controller
    repeats ``blocks`` (= periods) times; a periodic design is one block with the fades. A commanded path
    (``options.commanded``) is sampled over the whole timeline and repeated as blocks only where every period
    has the first one's points to 1e-3 of the printed precision; otherwise it is one block."""

    convention: JointConvention
    period: float
    periods: int
    dt: float
    lead: int
    blocks: int
    segments: int
    values: np.ndarray  # (segments + 1, dof), controller units
    commanded: tuple[str, ...] = ()  # comment lines of options.commanded

    @staticmethod
    def sample(traj: FourierTrajectory, options: ProgramOptions, rate: float) -> PointList:
        conv = JointConvention.create(traj.dof, options, DEG)
        n = samples_per_period(traj.period, rate)
        dt = traj.period / n
        lead = lead_periods(traj, options)
        periods = options.periods
        if options.commanded is None:
            blocks, segments = (periods, n) if lead == 0 else (1, n * (periods + 2 * lead))
            t = np.arange(segments + 1) * dt
            values = conv.to_controller(timeline_positions(traj, t, periods, lead))
            return PointList(conv, traj.period, periods, dt, lead, blocks, segments, values)
        t = np.arange(n * (periods + 2 * lead) + 1) * dt
        robid_values = options.commanded.positions(t, periods, lead)
        lines = commanded_lines(options, robid_values, timeline_positions(traj, t, periods, lead))
        values = conv.to_controller(robid_values)
        blocks, segments = 1, len(t) - 1
        if lead == 0 and periods > 1:
            first = values[: n + 1]
            tolerance = 1e-3 * 10.0**-POINT_DECIMALS
            if all(np.max(np.abs(values[k * n : (k + 1) * n + 1] - first)) <= tolerance for k in range(1, periods)):
                blocks, segments, values = periods, n, first
        return PointList(conv, traj.period, periods, dt, lead, blocks, segments, values, tuple(lines))

    def comments(self, tf: TrajectoryFile, fmt: str, options: ProgramOptions, timing: str, **extra) -> list[str]:
        """:func:`program_comments` with the ``timing`` note, the joint convention and the metadata the
        parse-back reads: the rate, the format's ``extra`` values, the timeline and the convention."""
        timeline = {"points": self.segments + 1, "blocks": self.blocks, "periods": self.periods, "lead": self.lead}
        convention = {"signs": self.convention.signs, "offsets": self.convention.offsets}
        metadata = {"rate": repr(1.0 / self.dt), **extra, **timeline, "period": repr(self.period), **convention}
        note = "joint values: controller = sign * robid * 180/pi + offset (deg); see robid-program line"
        return program_comments(tf, fmt, options, [timing, note], metadata, self.commanded)


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
    """The ``robid-program:`` line that robid wrote: the comment marker, then the key at the start of the comment
    (text a user put in another comment line, e.g. a robot name, is never taken for it)."""
    match = re.search(r"^[ \t]*(?:;|!|#)[ \t]*robid-program: ([^\n\r]*)", text, re.M)
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
