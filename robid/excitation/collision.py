"""Collision-aware design: a tool volume, the robot's links as capsules, table planes and keep-out boxes, as
constraints checked in continuous time like the joint limits (docs/excitation.md, "Collisions").

The SPEC's ``collision`` section (robid.schemas.excitation.COLLISION)::

    collision:
      clearance: 0.02                       # m kept between any two volumes (default 0.02)
      tool: {body: J6, from: [0, 0, 0], to: [0, 0, 0.15], radius: 0.06}    # a capsule on a body
      links:                                # the robot's own volumes (capsules), for self-collision
        - {body: J2, from: [0, 0, 0], to: [-0.61, 0, 0], radius: 0.08}
      obstacles:
        - {name: table, plane: {normal: [0, 0, 1], offset: 0.0}}             # keep above
        - {name: fixture, box: {min: [0.4, -0.2, 0], max: [0.8, 0.2, 0.3]}}  # keep out
      self_collision: true                  # the tool and link capsules two or more joints apart

**Constraints**, exact where a closed form exists. A capsule against a plane: both segment ends in the half-space
n . p >= d + r + clearance (the segment's lowest point is an end): two :class:`robid.excitation.cartesian.
CartesianLimit` points named ``<volume>~<obstacle>``, certified in continuous time by the point-speed bound of that
module. Two capsules: the distance between their segments (closest points in closed form, Ericson, Real-Time
Collision Detection 5.1.9) minus both radii, its gradient from the Jacobians of the two closest points (the
envelope theorem). A capsule against a keep-out box: the capsule is covered by k = max(1, ceil(2 L / r)) spheres
centred at the midpoints of k equal pieces of its segment, of radius r + L / (2k) (a point of the capsule lies
within r of a segment point, which lies within L / (2k) of a centre; conservative by at most r / 4), each sphere's
centre-to-box distance minus its radius. Each of the last two is a :class:`DistanceLimit`, at least the clearance.
Between grid samples h apart a distance changes at most (h / 2) (v_1 + v_2), v the bound sum_j R_j max|qd_j| on
the speed of any point of each volume (robid.excitation.cartesian.lever_arms at its farther segment end), so a
grid row

    d(t_i) - clearance - (h / 2)(v_1 + v_2) >= 0

at every sample certifies the whole period, as for the Cartesian points; the optimiser's rows (robid.excitation.
grid_constraints) and the final check (robid.excitation.constraints.check_trajectory) both use it, and a violated
constraint is named by its pair (``tool~fixture``, ``J2-link~J5-link``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from robid.errors import RobidInputError
from robid.excitation.cartesian import CartesianLimit, chain_frames, cross_rows, lever_arms

#: clearance kept between volumes when the SPEC gives none, m
DEFAULT_CLEARANCE = 0.02


@dataclass(frozen=True, eq=False)
class Sphere:
    """A sphere of ``radius`` around ``point`` (m) fixed in body ``body`` (0-based joint index)."""

    name: str
    body: int
    point: np.ndarray
    radius: float


@dataclass(frozen=True, eq=False)
class Capsule:
    """The points within ``radius`` of the segment ``start``-``end`` (m) fixed in body ``body`` (0-based)."""

    name: str
    body: int
    start: np.ndarray
    end: np.ndarray
    radius: float

    def ends(self) -> tuple[Sphere, Sphere]:
        return (Sphere(self.name, self.body, self.start, self.radius), Sphere(self.name, self.body, self.end,
                                                                             self.radius))


@dataclass(frozen=True, eq=False)
class DistanceLimit:
    """The signed distance between ``first`` and ``second`` (a sphere) or ``box`` (lo, hi corners, base frame; keep
    out) at least ``clearance`` (module docstring). ``offsets``: one row per sample (the Cartesian rows' layout)."""

    name: str
    first: Sphere | Capsule
    second: Capsule | None
    box: tuple[np.ndarray, np.ndarray] | None
    clearance: float
    description: dict

    @property
    def offsets(self) -> np.ndarray:
        return np.zeros(1)

    def arms(self, model, travel: np.ndarray) -> np.ndarray:
        """R_j (dof,) bounding how fast the distance can change per unit joint speed: the sum over both volumes of
        the bound at the farther end (lever arms grow with the point's distance from the body frame's origin)."""
        return sum((_arms(model, v, travel) for v in (self.first, self.second) if v is not None),
                   np.zeros(model.dof))

    def distances(self, model, q: np.ndarray, frames=None) -> tuple[np.ndarray, np.ndarray]:
        """Signed distances (N,) at the configurations q (N, dof) and their gradients d/dq (N, dof); ``frames``:
        robid.excitation.cartesian.chain_frames(model, q) when already computed (shared by every limit)."""
        frames = chain_frames(model, q) if frames is None else frames
        if self.second is not None:
            return _capsule_distance(model, frames, self.first, self.second)
        p1, j1 = sphere_centres(model, frames, self.first)
        return _box_distance(p1, j1, *self.box, self.first.radius)


def _arms(model, volume, travel) -> np.ndarray:
    if isinstance(volume, Capsule):
        return np.maximum(*(lever_arms(model, end, travel) for end in volume.ends()))
    return lever_arms(model, volume, travel)


def sphere_centres(model, frames, sphere: Sphere) -> tuple[np.ndarray, np.ndarray]:
    """Centre positions (N, 3) and Jacobians (N, 3, dof) from the chain's frames."""
    pose = frames[0][:, sphere.body]
    p = pose[:, :3, :3] @ sphere.point + pose[:, :3, 3]
    return p, _point_jacobian(model, frames, sphere.body, p)


def _point_jacobian(model, frames, body: int, p: np.ndarray) -> np.ndarray:
    """dp/dq (N, 3, dof) of points p (N, 3) moving with ``body`` (as robid.excitation.cartesian.
    point_positions_and_jacobians: z_j x (p - o_j) for a revolute joint, z_j for a prismatic one)."""
    _, axes, origins = frames
    jac = np.zeros((p.shape[0], 3, model.dof))
    for j, joint in enumerate(model.joints[: body + 1]):
        jac[:, :, j] = cross_rows(axes[:, j], p - origins[:, j]) if joint.revolute else axes[:, j]
    return jac


def segment_parameters(p1, q1, p2, q2) -> tuple[np.ndarray, np.ndarray]:
    """(s, t) in [0, 1] of the closest points p1 + s (q1 - p1) and p2 + t (q2 - p2) of two segments, row by row
    (Ericson, Real-Time Collision Detection, section 5.1.9, every case vectorised: either segment a point,
    parallel segments, an unconstrained optimum clamped to an end)."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = np.sum(d1 * d1, 1), np.sum(d2 * d2, 1), np.sum(d2 * r, 1)
    c, b = np.sum(d1 * r, 1), np.sum(d1 * d2, 1)
    eps = 1e-18
    safe_a, safe_e = np.where(a > eps, a, 1.0), np.where(e > eps, e, 1.0)
    denom = a * e - b * b
    s = np.where(denom > eps * np.maximum(a * e, eps), np.clip((b * f - c * e) / np.where(denom > 0, denom, 1.0), 0, 1),
                 0.0)
    t = (b * s + f) / safe_e
    s = np.where(t < 0, np.clip(-c / safe_a, 0, 1), np.where(t > 1, np.clip((b - c) / safe_a, 0, 1), s))
    t = np.clip(t, 0, 1)
    # a segment that is a point: the other's parameter alone
    s = np.where(e <= eps, np.clip(-c / safe_a, 0, 1), s)
    t = np.where(e <= eps, 0.0, t)
    t = np.where(a <= eps, np.clip(f / safe_e, 0, 1), t)
    s = np.where(a <= eps, 0.0, s)
    return s, t


def _capsule_distance(model, frames, first: Capsule, second: Capsule) -> tuple[np.ndarray, np.ndarray]:
    """Distance between two capsules (N,) and its gradient (N, dof): module docstring."""
    ends = []
    for c in (first, second):
        pose = frames[0][:, c.body]
        ends += [pose[:, :3, :3] @ c.start + pose[:, :3, 3], pose[:, :3, :3] @ c.end + pose[:, :3, 3]]
    s, t = segment_parameters(*ends)
    x1 = ends[0] + s[:, None] * (ends[1] - ends[0])
    x2 = ends[2] + t[:, None] * (ends[3] - ends[2])
    diff = x1 - x2
    norm = np.maximum(np.linalg.norm(diff, axis=1), 1e-12)
    jac = _point_jacobian(model, frames, first.body, x1) - _point_jacobian(model, frames, second.body, x2)
    return norm - first.radius - second.radius, np.einsum("ni,nij->nj", diff / norm[:, None], jac)


def _box_distance(p, jac, lo, hi, radius) -> tuple[np.ndarray, np.ndarray]:
    """Signed distance of spheres at p (N, 3) to the axis-aligned box [lo, hi] (negative inside) and its gradient."""
    nearest = np.clip(p, lo, hi)
    out = p - nearest
    norm = np.linalg.norm(out, axis=1)
    depth = np.concatenate([p - lo, hi - p], axis=1)  # (N, 6): the distances to the faces from inside
    face = np.argmin(depth, axis=1)
    inside = norm <= 1e-12
    dist = np.where(inside, -depth[np.arange(len(p)), face], norm) - radius
    direction = np.where(inside[:, None], 0.0, out / np.maximum(norm, 1e-12)[:, None])
    axis, sign = face % 3, np.where(face < 3, -1.0, 1.0)  # inside: d = -(p - lo) or -(hi - p)
    direction[inside, axis[inside]] = sign[inside]
    return dist, np.einsum("ni,nij->nj", direction, jac)


def capsule_spheres(name: str, body: int, start, end, radius: float) -> list[Sphere]:
    """The spheres covering a capsule (module docstring)."""
    a, b = np.asarray(start, dtype=float), np.asarray(end, dtype=float)
    length = float(np.linalg.norm(b - a))
    k = max(1, math.ceil(2.0 * length / radius)) if length > 0 else 1
    centres = [a + (i + 0.5) / k * (b - a) for i in range(k)]
    r = radius + length / (2.0 * k)
    return [Sphere(name, body, c, r) for c in centres]


def collision_limits(section, model, where: str) -> list:
    """CartesianLimit and DistanceLimit constraints of a SPEC's ``collision`` section (module docstring)."""
    if not section:
        return []
    clearance = _number(section.get("clearance", DEFAULT_CLEARANCE), f"{where}.clearance", minimum=0.0)
    volumes: list[Capsule] = []
    if section.get("tool") is not None:
        volumes.append(_capsule(section["tool"], "tool", model, f"{where}.tool"))
    for k, link in enumerate(section.get("links") or []):
        volumes.append(_capsule(link, None, model, f"{where}.links[{k}]"))
        if any(v.name == volumes[-1].name for v in volumes[:-1]):
            raise RobidInputError(f"{where}.links[{k}].name: {volumes[-1].name!r} is already used; give each "
                                  "volume its own name (errors name pairs by them)")
    if not volumes and (section.get("obstacles") or section.get("self_collision")):
        raise RobidInputError(f"{where}: obstacles and self_collision need volumes to keep apart: give a tool or "
                              "links (capsules)")
    out: list = []
    for k, obstacle in enumerate(section.get("obstacles") or []):
        out += _obstacle_limits(obstacle, volumes, clearance, f"{where}.obstacles[{k}]")
    if section.get("self_collision"):
        out += _self_limits(volumes, clearance)
    return out


def _obstacle_limits(obstacle, volumes, clearance: float, where: str) -> list:
    if not isinstance(obstacle, dict) or ("plane" in obstacle) == ("box" in obstacle):
        raise RobidInputError(f"{where}: expected {{name: ..., plane: {{normal, offset}}}} or {{name: ..., box: "
                              "{min, max}}")
    name = str(obstacle.get("name", f"obstacle{where.rsplit('[', 1)[-1].rstrip(']')}"))
    out = []
    if "plane" in obstacle:
        normal = np.asarray(_vector(obstacle["plane"].get("normal"), f"{where}.plane.normal"))
        norm = float(np.linalg.norm(normal))
        if norm == 0:
            raise RobidInputError(f"{where}.plane.normal: must not be zero")
        offset = _number(obstacle["plane"].get("offset"), f"{where}.plane.offset") / norm
        for v in volumes:  # the segment's ends: its lowest point above the plane is one of them
            for end in v.ends() if np.any(v.start != v.end) else v.ends()[:1]:
                out.append(CartesianLimit.from_box_and_planes(
                    f"{v.name}~{name}", v.body, end.point, planes=[(normal / norm, offset + v.radius + clearance)]))
        return out
    box = obstacle["box"]
    lo = np.asarray(_vector(box.get("min"), f"{where}.box.min"))
    hi = np.asarray(_vector(box.get("max"), f"{where}.box.max"))
    if not np.all(lo < hi):
        raise RobidInputError(f"{where}.box: min must be below max on every axis")
    for v in volumes:
        for sphere in capsule_spheres(v.name, v.body, v.start, v.end, v.radius):
            out.append(DistanceLimit(f"{v.name}~{name}", sphere, None, (lo, hi), clearance,
                                     {"kind": "collision", "name": f"{v.name}~{name}"}))
    return out


def _self_limits(volumes, clearance: float) -> list:
    """Capsule pairs on bodies two or more joints apart."""
    out = []
    for i, a in enumerate(volumes):
        for b in volumes[i + 1:]:
            if abs(a.body - b.body) >= 2:
                out.append(DistanceLimit(f"{a.name}~{b.name}", a, b, None, clearance,
                                         {"kind": "collision", "name": f"{a.name}~{b.name}"}))
    return out


def _capsule(item, default_name, model, where: str) -> Capsule:
    if not isinstance(item, dict) or "body" not in item or "radius" not in item:
        raise RobidInputError(f"{where}: expected {{body, from, to, radius}} (a capsule on a body; from = to: a "
                              "sphere)")
    body = _body(item["body"], model, f"{where}.body")
    start = _vector(item.get("from", [0, 0, 0]), f"{where}.from")
    end = _vector(item.get("to", item.get("from", [0, 0, 0])), f"{where}.to")
    radius = _number(item["radius"], f"{where}.radius", minimum=0.0, strict=True)
    name = str(item.get("name", default_name or f"{model.joint_names[body]}-link"))
    return Capsule(name, body, np.asarray(start, dtype=float), np.asarray(end, dtype=float), radius)


def _body(value, model, where: str) -> int:
    names = model.joint_names
    if isinstance(value, str) and value in names:
        return names.index(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= model.dof:
        return value - 1
    raise RobidInputError(f"{where}: expected a joint name ({', '.join(names)}) or an index 1..{model.dof}, "
                          f"got {value!r}")


def _vector(value, where: str) -> list[float]:
    from robid.model.units import parse_quantity

    if not isinstance(value, list) or len(value) != 3:
        raise RobidInputError(f"{where}: expected [x, y, z] in m")
    return [parse_quantity(v, f"{where}[{i}]") for i, v in enumerate(value)]


def _number(value, where: str, minimum: float | None = None, strict: bool = False) -> float:
    from robid.model.units import parse_quantity

    if value is None:
        raise RobidInputError(f"{where}: missing")
    x = parse_quantity(value, where)
    if minimum is not None and (x < minimum or (strict and x <= minimum)):
        raise RobidInputError(f"{where}: expected a number {'>' if strict else '>='} {minimum:g}, got {value!r}")
    return x


def smallest_gaps(check, section, model) -> dict[str, float]:
    """The smallest sampled gap (m, radii removed) of every pair of a design's collision ``section`` in its
    CheckReport ``check``: a limit's sampled slack plus the clearance, the least over the pair's limits."""
    if not section:
        return {}
    limits = collision_limits(section, model, "collision")
    names = {c.name for c in limits}
    clearance = _number(section.get("clearance", DEFAULT_CLEARANCE), "collision.clearance", minimum=0.0)
    gaps: dict[str, float] = {}
    for item in check.items:
        if item.name in names:
            gaps[item.name] = min(gaps.get(item.name, math.inf), item.sampled_slack + clearance)
    return gaps
