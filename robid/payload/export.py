"""The identified payload as controller load data: KUKA KRL ``LOAD_DATA``, ABB RAPID ``loaddata``, URScript
``set_target_payload``, and robid's JSON.

Every format takes the mass, the COM in the flange frame and the inertia about the COM. robid's flange frame is
the last body frame of the robot file; it is the controller's flange frame only when the robot file's last frame
is (robid's built-in UR10e: UR's DH frame 6, the tool flange; the KUKA-like robots: the flange frame of the file).

* KUKA (KSS system integrator manual, "Payload data"; Beckhoff TF5120 KRC_WriteLoadData): M in kg; CM the COM
  X, Y, Z in mm relative to the flange and A, B, C in degrees, the orientation of the principal inertia axes
  (rotation Rz(A) Ry(B) Rx(C)); J the mass moments of inertia JX, JY, JZ in kg m^2 about those axes.
* ABB (RAPID reference, data type loaddata): ``[mass, [x, y, z], [q1, q2, q3, q4], ix, iy, iz]``: kg, the COG in mm
  in the tool (here flange) frame, aom the orientation of the principal axes at the COG as a quaternion, and the
  moments about them in kg m^2.
* Universal Robots (URScript manual, SW 10.6, ``set_target_payload(m, cog, inertia=[0, 0, 0, 0, 0, 0],
  transition_time=0)``): m in kg, cog [CoGx, CoGy, CoGz] in m from the tool mount, inertia [Ixx, Iyy, Izz, Ixy,
  Ixz, Iyz] in kg m^2 with origin at the CoG and axes aligned with the tool flange axes (tensor entries); left
  out, a zero matrix is used, which is what robid writes when it did not identify the inertia.
"""

from __future__ import annotations

import math

import numpy as np

from robid.errors import RobidOptionError
from robid.io.escaping import check_identifier, comment_line
from robid.payload.body import abc_angles_deg, quaternion
from robid.payload.estimate import PayloadEstimate

FORMATS = ("krl", "rapid", "urscript", "json")


def _header(est: PayloadEstimate, robot: str, frame: str, comment: str) -> list[str]:
    lines = [
        f"robid payload identification, robot {robot}, in {frame}:",
        est.uncertainty_line(),
        f"model {est.model}; reference: {est.reference}; "
        + ("inertia identified" if est.model == "full" else "inertia not identified (point mass at the COM)"),
    ]
    return [f"{comment} {comment_line(line)}" for line in lines]  # names and paths are the user's: one line each


def krl(est: PayloadEstimate, robot: str, frame: str, tool: int = 1) -> str:
    """``LOAD_DATA[tool]={M .., CM {X .., Y .., Z .., A .., B .., C ..}, J {X .., Y .., Z ..}}`` (module docstring)
    with a comment line stating the convention."""
    moments, axes = _principal(est)
    a, b, c = abc_angles_deg(axes)
    x, y, z = (1000.0 * v for v in est.body.com)
    lines = _header(est, robot, frame, ";")
    lines.append("; KRL LOAD: M kg; CM X,Y,Z mm from the flange, A,B,C deg = principal inertia axes (Rz(A) Ry(B) "
                 "Rx(C)) in the flange frame; J X,Y,Z kg m^2 about them at the COM")
    lines.append(f"LOAD_DATA[{tool}]={{M {est.body.mass:.4f},CM {{X {x:.2f},Y {y:.2f},Z {z:.2f},A {a:.3f},"
                 f"B {b:.3f},C {c:.3f}}},J {{X {moments[0]:.5f},Y {moments[1]:.5f},Z {moments[2]:.5f}}}}}")
    return "\n".join(lines) + "\n"


def rapid(est: PayloadEstimate, robot: str, frame: str, name: str = "load_identified") -> str:
    """``PERS loaddata NAME := [mass, [x, y, z], [q1, q2, q3, q4], ix, iy, iz];`` (module docstring)."""
    check_identifier(name, "RAPID loaddata name", max_length=32)
    moments, axes = _principal(est)
    q = quaternion(axes)
    x, y, z = (1000.0 * v for v in est.body.com)
    lines = _header(est, robot, frame, "!")
    lines.append("! loaddata: mass kg; cog mm in the tool (flange) frame; aom = principal axes at the cog "
                 "(quaternion); ix, iy, iz kg m^2 about them")
    lines.append(f"PERS loaddata {name} := [{est.body.mass:.4f},[{x:.2f},{y:.2f},{z:.2f}],"
                 f"[{q[0]:.6f},{q[1]:.6f},{q[2]:.6f},{q[3]:.6f}],{moments[0]:.5f},{moments[1]:.5f},{moments[2]:.5f}];")
    return "\n".join(lines) + "\n"


def urscript(est: PayloadEstimate, robot: str, frame: str) -> str:
    """``set_target_payload(m, [cx, cy, cz], [Ixx, Iyy, Izz, Ixy, Ixz, Iyz])`` (module docstring); without the
    inertia argument when the inertia was not identified."""
    b = est.body
    lines = _header(est, robot, frame, "#")
    lines.append("# set_target_payload(m kg, cog [x, y, z] m from the tool mount, inertia [Ixx, Iyy, Izz, Ixy, Ixz, "
                 "Iyz] kg m^2 at the cog, flange axes)")
    cog = ", ".join(f"{v:.6f}" for v in b.com)
    if est.model == "full":
        inertia = ", ".join(f"{v:.6f}" for v in b.inertia_com)
        lines.append(f"set_target_payload({b.mass:.4f}, [{cog}], [{inertia}])")
    else:
        lines.append(f"set_target_payload({b.mass:.4f}, [{cog}])")
    return "\n".join(lines) + "\n"


def to_document(est: PayloadEstimate, robot: str, frame: str) -> dict:
    """robid's JSON of a payload estimate (SI units)."""

    def num(x):
        return None if x is None or not math.isfinite(float(x)) else float(x)

    b = est.body
    return {
        "robid": 1,
        "kind": "payload",
        "robot": robot,
        "frame": frame,
        "model": est.model,
        "reference": est.reference,
        "mass": num(b.mass),
        "mass_std": num(est.mass_std),
        "com": [num(v) for v in b.com],
        "com_std": [num(v) for v in est.com_std],
        "uncertainty": {
            "realistic": {"mass_std": num(est.mass_realistic_std),
                          "com_std": [num(v) for v in est.com_realistic_std], "source": est.uncertainty_source},
            "statistical": {"mass_std": num(est.mass_std), "com_std": [num(v) for v in est.com_std],
                            "source": "residual noise through the least squares"},
        },
        "inertia_com": {k: num(v) for k, v in zip(("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz"), b.inertia_com,
                                                  strict=True)} if est.model == "full" else None,
        "standard_parameters": [
            {"name": n, "value": num(v), "std": num(s), "determined": d, "variance_inflation": num(f)}
            for n, v, s, d, f in zip(est.names, est.values, est.std, est.determined, est.vif, strict=True)
        ],
        "condition_number": num(est.condition_number),
        "sigma_per_joint": [num(s) for s in est.sigma],
        "rows_used": est.rows_used,
        "mass_by_joint": [num(m) for m in est.mass_by_joint],
        "physical_consistency": {"consistent": est.consistency.consistent, "reasons": list(est.consistency.reasons)},
        "notes": list(est.notes),
    }


def render(est: PayloadEstimate, fmt: str, robot: str, frame: str, tool: int = 1) -> str:
    """The text of ``fmt`` (one of FORMATS)."""
    if fmt == "krl":
        return krl(est, robot, frame, tool)
    if fmt == "rapid":
        return rapid(est, robot, frame)
    if fmt == "urscript":
        return urscript(est, robot, frame)
    if fmt == "json":
        import json

        return json.dumps(to_document(est, robot, frame), indent=1) + "\n"
    raise RobidOptionError("format", f"expected one of {', '.join(FORMATS)}, got {fmt!r}")


def _principal(est: PayloadEstimate) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments and axes of the identified inertia about the COM; zeros and the flange axes when the
    inertia was not identified (a point mass)."""
    if est.model != "full":
        return np.zeros(3), np.eye(3)
    return est.body.principal()
