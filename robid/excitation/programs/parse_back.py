"""Read an emitted program back, re-sample the motion the controller will execute, and verify every limit.

The parsers read the program text (point lists, timing statements, constants, loop counts); only the joint
convention (signs, offsets) and the fade length come from the ``robid-program:`` comment line. Each format's
executed motion follows the interpolation stated in its emitter module:

=========  ==============================================================  ===========
format     executed motion                                                 re-sampled
=========  ==============================================================  ===========
csv        the samples themselves (q, qd, qdd columns; jerk by difference)  file rate
krl        clamped cubic spline through the SPTP points at TIME_BLOCK times  12 ms IPO
rapid      uniform quadratic B-spline (corner-blended MoveAbsJ \\T:=DT)       4 ms
urscript   servoj targets at 1/DT, linear interpolation (differences)       1/DT
=========  ==============================================================  ===========

:func:`check_motion` compares the executed positions, velocities, accelerations and (where the trajectory
file has them) jerks with the hard limits of the trajectory file, and requires the executed positions to stay
within 1 % of the largest joint excursion of the designed motion (a program that smooths the excitation away
would pass the limits but excite less than designed). A program that commands another path than the design's
(``commanded=`` in its robid-program line, e.g. the motor-side reference of ``robid export --motor-side``) is
compared with that path (:func:`commanded_reference`); the limits apply to what it commands.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.interpolate

from robid.excitation.constraints import JointLimitSet
from robid.excitation.programs import krl as krl_module
from robid.excitation.programs import rapid as rapid_module
from robid.excitation.programs.common import (
    DEG,
    CommandedPath,
    floats,
    parse_metadata,
    smoothstep9,
    timeline_positions,
)
from robid.excitation.programs.limit_item import ProgramLimit
from robid.excitation.programs.workspace import workspace_items
from robid.excitation.trajectory_file import TrajectoryFile

#: the executed motion may deviate from the design by this fraction of the largest joint excursion bound
DEVIATION_FRACTION = 0.01
#: the quantities whose value is a smallest distance, at least its limit (robid.excitation.programs.workspace)
WORKSPACE = ("cartesian", "collision")
SUFFIXES = {"csv": (".csv",), "krl": (".src", ".dat"), "rapid": (".mod",), "urscript": (".script",)}


@dataclass(frozen=True, eq=False)
class ExecutedMotion:
    """Executed motion in robid's convention (SI): arrays (N, dof) at times t (program time, 0 = after the
    approach). ``design_time`` maps each sample to the design's time (None where it has no counterpart)."""

    fmt: str
    interpolation: str
    sample_time: float
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    jerk: np.ndarray | None
    design_time: np.ndarray
    periods: int
    lead: int
    start: np.ndarray | None = None  # approach target (robid convention)
    info: dict = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class ProgramCheck:
    fmt: str
    interpolation: str
    sample_time: float
    items: tuple[ProgramLimit, ...]
    deviation: float | None  # max |q_executed - q_design|, rad
    start_jump: float  # |first commanded pose - approach target|, rad
    samples: int
    deviation_tolerance: float = math.inf  # rad

    @property
    def deviation_ok(self) -> bool:
        return self.deviation is None or self.deviation <= self.deviation_tolerance

    @property
    def ok(self) -> bool:
        return all(i.ok for i in self.items) and self.start_jump < 1e-6 and self.deviation_ok

    def summary(self) -> str:
        bad = [i for i in self.items if not i.ok]
        dev = "" if self.deviation is None else f", max deviation from the design {self.deviation:.3g} rad"
        head = f"{self.fmt}: {self.samples} samples every {self.sample_time * 1000:.3g} ms ({self.interpolation}){dev}"
        if self.start_jump >= 1e-6:
            head += f"; start pose differs from the approach target by {self.start_jump:.3g} rad"
        if not self.deviation_ok:
            head += f"; deviation exceeds {self.deviation_tolerance:.3g} rad (1 % of the largest joint excursion)"
        if not bad and self.deviation_ok:
            return head + ": all limits satisfied"
        txt = ", ".join(f"{b.quantity} {b.joint} {_v(b.value)} {'<' if b.quantity in WORKSPACE else '>'} "
                        f"{_v(b.limit)}" for b in bad[:6])
        return head + f": {len(bad)} limit(s) violated: {txt}"


def _v(x) -> str:
    if isinstance(x, tuple):
        return "[" + ", ".join(f"{v:.5g}" for v in x) + "]"
    return f"{x:.5g}"


# ---------------------------------------------------------------------------------------------- parsers
def parse_csv(texts: dict[str, str]) -> ExecutedMotion:
    lines = texts[".csv"].splitlines(keepends=True)
    text = "".join(line for line in lines if not line.startswith("#"))  # the comment block of a commanded path
    header = text.split("\n", 1)[0].strip().split(",")
    data = np.loadtxt(io.StringIO(text), delimiter=",", skiprows=1, ndmin=2)
    col = {name: i for i, name in enumerate(header)}
    dof = sum(1 for h in header if re.fullmatch(r"q\d+", h))
    if "t" not in col or dof == 0:
        raise ValueError("CSV: expected columns t, q1.., qd1.., qdd1..")
    t = data[:, col["t"]]
    q = data[:, [col[f"q{j + 1}"] for j in range(dof)]]
    qd = data[:, [col[f"qd{j + 1}"] for j in range(dof)]]
    qdd = data[:, [col[f"qdd{j + 1}"] for j in range(dof)]]
    dt = float(np.median(np.diff(t))) if len(t) > 1 else 1.0
    jerk = np.diff(qdd, axis=0) / dt if len(t) > 1 else None
    return ExecutedMotion("csv", "samples as written (streamed at the file rate)", dt, t, q, qd, qdd, jerk, t, 0, 0)


def _convention(meta: dict[str, str], dof: int, unit: float):
    signs = floats(meta.get("signs", "")) if meta.get("signs") else np.ones(dof)
    offsets = floats(meta.get("offsets", "")) if meta.get("offsets") else np.zeros(dof)
    return lambda v: (np.asarray(v, dtype=float)[..., :dof] - offsets) / unit * signs


#: the executed motion and the controller's sampling time of the point-list formats (module docstring)
_POINT_LISTS = {
    "krl": ("clamped cubic spline through the SPTP points (PTP_SPLINE with TIME_BLOCK)", krl_module.IPO_CYCLE),
    "rapid": ("corner-blended MoveAbsJ = uniform quadratic B-spline of the points", rapid_module.IPO_CYCLE),
}


def _point_list_motion(
    fmt: str, tb, arrays, blocks: int, meta: dict, start, points: int, segment_time: float, design_time=None
) -> ExecutedMotion:
    """A point-list program's motion: one block (``arrays`` = q, qd, qdd, jerk sampled at ``tb``, at rest at both
    ends) repeated ``blocks`` times; ``design_time`` of every sample (default: the program time)."""
    interpolation, ipo = _POINT_LISTS[fmt]
    dur = tb[-1]
    t = np.concatenate([tb[:-1] + k * dur for k in range(blocks)] + [tb[-1:] + (blocks - 1) * dur])
    q, qd, qdd, jerk = (np.concatenate([a[:-1]] * blocks + [a[-1:]]) for a in arrays)
    design_time = t if design_time is None else design_time
    periods, lead = int(meta.get("periods", blocks)), int(meta.get("lead", 0))
    info = {"points": points, "blocks": blocks, "segment_time": segment_time}
    return ExecutedMotion(fmt, interpolation, ipo, t, q, qd, qdd, jerk, design_time, periods, lead, start, info)


def parse_krl(texts: dict[str, str]) -> ExecutedMotion:
    src, dat = texts[".src"], texts[".dat"]
    meta = parse_metadata(dat)
    points = {int(i): body for i, body in re.findall(r"^XP\[(\d+)\]=\{([^}]*)\}", dat, re.M)}
    start_match = re.search(r"DECL E6AXIS XSTART=\{([^}]*)\}", dat)

    def axes(body: str) -> np.ndarray:
        vals = dict(re.findall(r"A(\d)\s+([-+0-9.eE]+)", body))
        return np.array([float(vals[str(j + 1)]) for j in range(len(vals))])

    order = [int(i) for i in re.findall(r"^\s*SPTP XP\[(\d+)\]", src, re.M)]
    parts = [float(x) for x in re.findall(r"TIME_BLOCK PART\s*=\s*([-+0-9.eE]+)", src)]
    end = re.search(r"TIME_BLOCK END\s*=\s*([-+0-9.eE]+)", src)
    loop = re.search(r"FOR K=1 TO (\d+)", src)
    if not order or end is None or loop is None or len(parts) != len(order) - 1:
        raise ValueError("KRL: expected FOR K=1 TO n, a PTP_SPLINE of SPTP XP[i] with TIME_BLOCK PART/END")
    raw = np.array([axes(points[i]) for i in order])
    dof = raw.shape[1]
    conv = _convention(meta, dof, DEG)
    p = conv(raw)
    knots = np.concatenate([[0.0], np.cumsum(parts)])
    knots *= float(end.group(1)) / knots[-1]
    spline = scipy.interpolate.CubicSpline(knots, p, bc_type="clamped")
    tb = np.append(np.arange(0.0, knots[-1], krl_module.IPO_CYCLE), knots[-1])
    arrays = [spline(tb, k) for k in range(4)]
    start = conv(axes(start_match.group(1))) if start_match else None
    return _point_list_motion("krl", tb, arrays, int(loop.group(1)), meta, start, len(order), knots[1] - knots[0])


def parse_rapid(texts: dict[str, str]) -> ExecutedMotion:
    mod = texts[".mod"]
    meta = parse_metadata(mod)
    dt = float(re.search(r"CONST num DT := ([-+0-9.eE]+);", mod).group(1))
    nper = int(re.search(r"CONST num NPER := (\d+);", mod).group(1))
    npts = int(re.search(r"CONST num NPTS := (\d+);", mod).group(1))
    body = re.search(r"CONST jointtarget JP\{\d+\} := \[(.*?)\];", mod, re.S)
    if body is None:
        raise ValueError("RAPID: no JP{} jointtarget array")
    rows = re.findall(r"\[\[([^\]]*)\],\[[^\]]*\]\]", body.group(1))
    raw = np.array([[float(v) for v in r.split(",")] for r in rows])
    if raw.shape[0] != npts:
        raise ValueError(f"RAPID: NPTS = {npts} but {raw.shape[0]} jointtargets")
    start_row = re.search(r"CONST jointtarget JSTART := \[\[([^\]]*)\]", mod)
    dof = len(floats(meta.get("signs", ""))) or 6
    conv = _convention(meta, dof, DEG)
    p = conv(raw)
    c = np.vstack([p[:1], p, p[-1:]])  # stops at both ends: doubled control points
    duration = npts * dt
    tb = np.append(np.arange(0.0, duration, rapid_module.IPO_CYCLE), duration)
    s = np.minimum((tb / dt).astype(int), npts - 1)
    u = (tb / dt - s)[:, None]
    c0, c1, c2 = c[s], c[s + 1], c[s + 2]
    q = 0.5 * (1 - u) ** 2 * c0 + (0.5 + u - u * u) * c1 + 0.5 * u * u * c2
    qd = ((u - 1) * c0 + (1 - 2 * u) * c1 + u * c2) / dt
    acc_seg = (c[:-2] - 2 * c[1:-1] + c[2:]) / dt**2  # per segment
    qdd = acc_seg[s]
    jerk_seg = np.diff(np.vstack([np.zeros((1, dof)), acc_seg, np.zeros((1, dof))]), axis=0) / dt
    jerk = np.maximum(np.abs(jerk_seg[s]), np.abs(jerk_seg[s + 1]))
    block_design = np.clip(tb - dt / 2.0, 0.0, (npts - 1) * dt)  # blending the stops adds dt/2 at the start
    design_time = np.concatenate(
        [block_design[:-1] + k * (npts - 1) * dt for k in range(nper)]
        + [block_design[-1:] + (nper - 1) * (npts - 1) * dt]
    )
    start = conv(floats(start_row.group(1))) if start_row else None
    return _point_list_motion("rapid", tb, [q, qd, qdd, jerk], nper, meta, start, npts, dt, design_time)


def _ur_constant(script: str, name: str) -> str:
    m = re.search(rf"^\s*{name} = (.*)$", script, re.M)
    if m is None:
        raise ValueError(f"URScript: constant {name} not found")
    return m.group(1).strip()


def _ur_list(script: str, name: str) -> np.ndarray:
    return floats(_ur_constant(script, name).strip("[]"))


def parse_urscript(texts: dict[str, str]) -> ExecutedMotion:
    from robid.excitation.programs.urscript import TEMPLATE_VERSION

    script = texts[".script"]
    if TEMPLATE_VERSION not in script:
        raise ValueError("URScript: not written by this version of robid (template marker missing)")
    nj, h, k_per = (int(_ur_constant(script, n)) for n in ("NJ", "H", "K"))
    nper, lead = int(_ur_constant(script, "NPER")), int(_ur_constant(script, "LEAD"))
    dt = float(_ur_constant(script, "DT"))
    center, sa, sb = _ur_list(script, "CENTER"), _ur_list(script, "SA"), _ur_list(script, "SB")
    signs, offsets, start = _ur_list(script, "SIGNS"), _ur_list(script, "OFFSETS"), _ur_list(script, "START")
    commanded = re.search(r"^\s*DE = ", script, re.M) is not None  # the commanded-path template (emitter docstring)
    nt = nper * k_per + 2 * lead
    k = np.arange(nt + 1)
    x = 2.0 * math.pi * (k % k_per) / k_per
    s1, c1 = np.sin(x), np.cos(x)
    sn, cs = np.empty((len(k), h)), np.empty((len(k), h))
    sn[:, 0], cs[:, 0] = s1, c1
    for l in range(1, h):  # the same recurrence as the script
        sn[:, l] = sn[:, l - 1] * c1 + cs[:, l - 1] * s1
        cs[:, l] = cs[:, l - 1] * c1 - sn[:, l - 1] * s1
    env = np.ones(len(k))
    if lead > 0:
        u = np.ones(len(k))
        u = np.where(k < lead, k / lead, u)
        u = np.where(k > nt - lead, (nt - k) / lead, u)
        env = smoothstep9(u)
    acc = sn @ sa.reshape(nj, h).T - cs @ sb.reshape(nj, h).T
    if commanded:
        de, decay = _ur_list(script, "DE"), _ur_list(script, "DECAY")
        e = np.cumprod(np.vstack([np.ones(nj), np.tile(decay, (nt, 1))]), axis=0)  # E <- E * DECAY, tick by tick
        targets = signs * (center + env[:, None] * acc + de * e) + offsets
    else:
        targets = signs * (center + env[:, None] * acc) + offsets
    q_cmd = (targets - offsets) * signs
    q_start = (start - offsets) * signs
    # the robot rests at START before the first tick and at the last target after the loop; the differences
    # include these junctions (their arrays are longer than t by the rest samples)
    padded = np.vstack([q_start, q_start, q_start, q_cmd, q_cmd[-1:], q_cmd[-1:], q_cmd[-1:]])
    v = np.diff(padded, axis=0) / dt
    a = np.diff(v, axis=0) / dt
    j = np.diff(a, axis=0) / dt
    t = k * dt
    return ExecutedMotion(
        "urscript",
        "servoj targets with linear interpolation between ticks",
        dt,
        t,
        q_cmd,
        v,
        a,
        j,
        t,
        nper,
        lead // k_per,
        q_start,
        {"ticks_per_period": k_per, "ticks": nt + 1},
    )


PARSERS = {"csv": parse_csv, "krl": parse_krl, "rapid": parse_rapid, "urscript": parse_urscript}


def read_program_texts(path: str | Path, fmt: str) -> dict[str, str]:
    path = Path(path)
    from robid.io.files import read_text

    return {suffix: read_text(path.with_suffix(suffix), "program") for suffix in SUFFIXES[fmt]}


def parse_program(path: str | Path, fmt: str) -> ExecutedMotion:
    return PARSERS[fmt](read_program_texts(path, fmt))


def commanded_label(texts: dict[str, str]) -> str | None:
    """The ``commanded=`` entry of a program's robid-program line (None: the program commands the design)."""
    for text in texts.values():
        try:
            label = parse_metadata(text).get("commanded")
        except ValueError:
            continue
        return label or None
    return None


def commanded_reference(commanded: CommandedPath) -> Callable[[ExecutedMotion], np.ndarray]:
    """The positions ``commanded`` prescribes at an executed motion's design times (for :func:`check_motion`):
    the excited periods for the CSV format, the program's timeline for the others."""

    def reference(motion: ExecutedMotion) -> np.ndarray:
        if motion.fmt == "csv":
            return commanded.excited(motion.design_time)[0]
        return commanded.positions(motion.design_time, motion.periods, motion.lead)

    return reference


# ---------------------------------------------------------------------------------------------- checks
def check_motion(
    motion: ExecutedMotion,
    limits: JointLimitSet,
    tf: TrajectoryFile | None = None,
    names: tuple[str, ...] = (),
    reference: Callable[[ExecutedMotion], np.ndarray] | None = None,
    model=None,
) -> ProgramCheck:
    """Limits of the executed ``motion`` and its deviation from the design of ``tf`` or, when given, from
    ``reference(motion)``: the positions the program is meant to command at ``motion.design_time``. The
    design's Cartesian and collision limits are checked with ``model`` (None: the robot the design names)."""
    dof = motion.q.shape[1]
    names = names or tuple(f"q{j + 1}" for j in range(dof))
    items: list[ProgramLimit] = []
    tol = 1e-9
    for j in range(dof):
        lo, hi = limits.position[j]
        qmin, qmax = float(motion.q[:, j].min()), float(motion.q[:, j].max())
        items.append(
            ProgramLimit(
                "position", names[j], (qmin, qmax), (float(lo), float(hi)), qmin >= lo - tol and qmax <= hi + tol
            )
        )
        for quantity, arr in (("velocity", motion.qd), ("acceleration", motion.qdd), ("jerk", motion.jerk)):
            lim = float(getattr(limits, quantity)[j])
            if arr is None or not math.isfinite(lim):
                continue
            value = float(np.abs(arr[:, j]).max())
            items.append(ProgramLimit(quantity, names[j], value, lim, value <= lim * (1 + tol)))
    if tf is not None and tf.passive:
        items += passive_program_limits(motion, tf.passive)
    deviation = None
    tolerance = math.inf
    if tf is not None:
        tolerance = DEVIATION_FRACTION * max(float(np.max(tf.trajectory.derivative_bound(0))), 1e-2)
        traj = tf.trajectory
        if reference is not None:
            design = reference(motion)
        elif motion.fmt == "csv":
            design = traj.derivative(motion.design_time, 0)
        else:
            design = timeline_positions(traj, motion.design_time, motion.periods, motion.lead)
        deviation = float(np.max(np.abs(design - motion.q)))
        items += workspace_items(motion.q if reference is None else _link_path(traj, motion), tf, model)
    jump = 0.0
    if motion.start is not None:
        jump = float(np.max(np.abs(motion.start - motion.q[0])))
    return ProgramCheck(
        motion.fmt, motion.interpolation, motion.sample_time, tuple(items), deviation, jump, len(motion.t), tolerance
    )


def _link_path(traj, motion: ExecutedMotion) -> np.ndarray:
    """The links' positions of a program commanding another path (the motor side): the design's, on its timeline."""
    if motion.fmt == "csv":
        return traj.derivative(motion.design_time, 0)
    return timeline_positions(traj, motion.design_time, motion.periods, motion.lead)


def passive_program_limits(motion: ExecutedMotion, passive: dict) -> list[ProgramLimit]:
    """A closed chain's passive joints in the executed motion, q_p = G q_a at every re-sampled instant (the
    trajectory file's ``passive`` block), against their limits."""
    relation = np.asarray(passive["relation"], dtype=float)
    names = [f"{n} (passive)" for n in passive["names"]]
    limits = JointLimitSet.from_dict(passive.get("limits") or {}, len(names))
    items = []
    for quantity, arr in (("position", motion.q), ("velocity", motion.qd), ("acceleration", motion.qdd)):
        if arr is None:
            continue
        values = arr @ relation.T
        for p, name in enumerate(names):
            if quantity == "position":
                lo, hi = limits.position[p]
                if not (math.isfinite(lo) or math.isfinite(hi)):
                    continue
                vmin, vmax = float(values[:, p].min()), float(values[:, p].max())
                ok = vmin >= lo - 1e-9 and vmax <= hi + 1e-9
                items.append(ProgramLimit(quantity, name, (vmin, vmax), (float(lo), float(hi)), ok))
                continue
            lim = float(getattr(limits, quantity)[p])
            if math.isfinite(lim):
                value = float(np.abs(values[:, p]).max())
                items.append(ProgramLimit(quantity, name, value, lim, value <= lim * (1 + 1e-9)))
    return items


def verify_program(
    path: str | Path, tf: TrajectoryFile, fmt: str, commanded: CommandedPath | None = None, model=None
) -> ProgramCheck:
    """Parse the program at ``path`` and check it against the trajectory file's hard limits; a program written
    with a commanded path (``robid export --motor-side``) needs that path to compare with."""
    texts = read_program_texts(path, fmt)
    label = commanded_label(texts)
    if label is not None and commanded is None:
        raise ValueError(f"{path}: the program commands the {label} path: verify it with that path (commanded=)")
    if label is None and commanded is not None:
        raise ValueError(f"{path}: the program commands the design itself, not a {commanded.label} path")
    reference = None if commanded is None else commanded_reference(commanded)
    return check_motion(PARSERS[fmt](texts), tf.limits, tf, tf.trajectory.joint_names, reference, model)
