"""Collision-aware excitation design (issue 33, robid.excitation.collision): a tool volume, a table plane, a keep-out
box and self-collision between link capsules, all certified in continuous time. Each design is checked at 1 kHz over
its period with an independent computation: forward kinematics by RobotModel.forward_kinematics sample by sample
(not the batched chain of the designer), exact capsule distances (segment to plane, segment to box by dense
sampling of the segment, segment to segment in closed form), never the designer's spheres."""

from __future__ import annotations

import numpy as np
import pytest

import robid
from robid.errors import RobidInputError
from robid.excitation.collision import capsule_spheres, collision_limits
from robid.excitation.design import design_from_spec
from robid.excitation.spec import spec_from_dict

RATE = 1000.0


def _segment_points(model, q, body: int, start, end) -> tuple[np.ndarray, np.ndarray]:
    """The capsule's segment ends in the base frame at every configuration (independent FK, one sample at a time)."""
    a, b = np.empty((len(q), 3)), np.empty((len(q), 3))
    for i, qi in enumerate(q):
        pose = model.forward_kinematics(qi)[body]
        a[i] = pose[:3, :3] @ start + pose[:3, 3]
        b[i] = pose[:3, :3] @ end + pose[:3, 3]
    return a, b


def _segment_distance(p1, q1, p2, q2, points: int = 41) -> np.ndarray:
    """Distance between segments p1-q1 and p2-q2 (rows) by brute force: the closest of ``points`` x ``points``
    pairs of points spread along both (at most half a spacing above the true distance)."""
    grid = np.linspace(0.0, 1.0, points)[None, :, None]
    out = np.empty(len(p1))
    for k in range(0, len(p1), 500):
        sl = slice(k, k + 500)
        a = p1[sl, None] + grid * (q1 - p1)[sl, None]
        b = p2[sl, None] + grid * (q2 - p2)[sl, None]
        out[sl] = np.min(np.linalg.norm(a[:, :, None] - b[:, None, :], axis=3), axis=(1, 2))
    return out


def _design(robot_name: str, spec: dict):
    robot = robid.load_robot(robot_name)
    result, tf = design_from_spec(robot, spec_from_dict(spec, "collision.yaml"), robot_name)
    assert result.check.ok, result.check.summary()
    traj = tf.trajectory
    t = np.arange(0.0, traj.period, 1.0 / RATE)
    return robot.model, traj.derivative(t, 0), result


#: the UR10e with a 20 cm tool of radius 5 cm on its flange above a table at the base plane; defaults otherwise,
#: but 2 starts instead of 4 (the property checked does not depend on which start wins; 4 take twice as long)
TOOL_TABLE = {"harmonics": 5, "period": 20, "starts": 2, "collision": {
    "tool": {"body": "J6", "from": [0, 0, 0], "to": [0, 0, 0.2], "radius": 0.05},
    "obstacles": [{"name": "table", "plane": {"normal": [0, 0, 1], "offset": 0.0}}]}}
TOOL_END = np.array([0.0, 0.0, 0.2])


def _tool_above_table(model, q) -> np.ndarray:
    """Lowest point of the tool capsule above z = 0 at every configuration: points spread over the capsule's
    surface (rings of 24 points at 21 stations along the segment and the two hemispherical caps), by the model's
    own forward kinematics one sample at a time -- no segment, plane or sphere formula of robid's."""
    u = np.linspace(0.0, 2.0 * np.pi, 24, endpoint=False)
    ring = np.stack([np.cos(u), np.sin(u), np.zeros_like(u)], axis=1)
    side = [s * TOOL_END + 0.05 * ring for s in np.linspace(0.0, 1.0, 21)]
    caps = [0.05 * np.cos(a) * ring + np.array([0, 0, z + sign * 0.05 * np.sin(a)])
            for a in np.linspace(0.0, np.pi / 2, 7) for z, sign in ((0.0, -1.0), (0.2, 1.0))]
    surface = np.concatenate(side + caps)  # (N_points, 3) in the flange frame
    out = np.empty(len(q))
    for i, qi in enumerate(q):
        pose = model.forward_kinematics(qi)[5]
        out[i] = np.min(surface @ pose[:3, :3].T[:, 2] + pose[2, 3])
    return out


@pytest.fixture(scope="module")
def tool_table():
    robot = robid.load_robot("ur10e")
    result, tf = design_from_spec(robot, spec_from_dict(TOOL_TABLE, "collision.yaml"), "ur10e")
    return robot.model, result, tf


def test_a_design_with_a_tool_and_a_table_never_collides(tool_table):
    """Without the collision section the same SPEC drives the tool through the table (measured: 0.97 m below it,
    the stretched arm's centre at zero); with it, the tool's surface stays the clearance above it at 1 kHz."""
    model, result, tf = tool_table
    assert result.check.ok, result.check.summary()
    free_spec = {k: v for k, v in TOOL_TABLE.items() if k != "collision"}
    _, free = design_from_spec(robid.load_robot("ur10e"), spec_from_dict(free_spec, "free.yaml"), "ur10e")
    t = np.arange(0.0, free.trajectory.period, 0.01)
    assert _tool_above_table(model, free.trajectory.derivative(t, 0)).min() < 0.0
    q = tf.trajectory.derivative(np.arange(0.0, tf.trajectory.period, 1.0 / RATE), 0)
    lowest = _tool_above_table(model, q)
    print(f"tool above the table: lowest {lowest.min():.4f} m over {len(q)} samples at 1 kHz; "
          f"{result.check.summary()}")
    # the surface points lie on the capsule, so their lowest is at least the capsule's: never under the clearance
    assert lowest.min() >= 0.02 - 1e-9
    assert any(i.name == "tool~table" for i in result.check.items)


@pytest.mark.parametrize("fmt", ["urscript", "krl", "rapid"])
def test_the_exported_program_keeps_the_tool_off_the_table(tool_table, fmt, tmp_path):
    """The program's executed motion, parsed back at the controller's interpolation rate, including the fade of
    the periodic design's first and last period: the tool's surface never under the clearance."""
    from robid.excitation.programs import export_program
    from robid.excitation.programs.common import ProgramOptions
    from robid.excitation.programs.parse_back import parse_program

    model, _, tf = tool_table
    out = tmp_path / {"urscript": "x.script", "krl": "x.src", "rapid": "x.mod"}[fmt]
    result = export_program(tf, fmt, out, ProgramOptions())
    assert result.check.ok and any(i.quantity == "collision" and i.joint == "tool~table" for i in result.check.items)
    motion = parse_program(out, fmt)
    lowest = _tool_above_table(model, motion.q[::2])
    print(f"{fmt}: tool lowest {lowest.min():.4f} m above the table over {len(motion.q[::2])} of {len(motion.q)} "
          f"executed samples every {motion.sample_time * 1000:.3g} ms")
    assert lowest.min() >= 0.02 - 1e-9


def test_a_program_that_would_touch_the_table_is_refused_naming_the_pair(tool_table):
    """The parse-back's workspace check on a motion lowered into the table: the pair named, the export refused."""
    from robid.excitation.programs.workspace import workspace_items

    model, _, tf = tool_table
    q = tf.trajectory.derivative(np.linspace(0.0, tf.trajectory.period, 400), 0)
    items = workspace_items(q, tf, model)
    assert items and all(i.ok for i in items)
    lowered = q.copy()
    lowered[:, 1] -= 1.2  # the shoulder tipped forward by 69 degrees: the flange goes under the base plane
    bad = [i for i in workspace_items(lowered, tf, model) if not i.ok]
    assert [i.joint for i in bad] == ["tool~table"] and bad[0].value < bad[0].limit


def test_self_collision_and_a_keep_out_box_hold_in_continuous_time():
    """The TX200 3-axis arm's forearm against its base column (self-collision) and a fixture box under its tip at
    the middle of the ranges: the same design without the collision section drives the forearm into the box
    (measured: 0.1 m deep, its whole radius); with it, the forearm keeps the clearance at every sample."""
    free = {"harmonics": 5, "period": 6, "starts": 1, "center": [-1.0037, 1.0644, -1.0645]}
    model, q, _ = _design("tx200_3axis", free)
    box_lo, box_hi = np.array([0.6, -1.8, 0.6]), np.array([1.2, -1.2, 1.05])
    assert _forearm_to_box(model, q, box_lo, box_hi).min() < 0.0
    spec = {**free, "collision": {
        "links": [{"name": "column", "body": 1, "from": [0, 0, 0], "to": [0, 0, -0.5], "radius": 0.15},
                  {"name": "forearm", "body": 3, "from": [0, 0, 0], "to": [0.9, 0, 0], "radius": 0.1}],
        "tool": {"body": 3, "from": [0.9, 0, 0], "to": [1.0, 0, 0], "radius": 0.05},
        "obstacles": [{"name": "fixture", "box": {"min": [0.6, -1.8, 0.6], "max": [1.2, -1.2, 1.05]}}],
        "self_collision": True}}
    model, q, result = _design("tx200_3axis", spec)
    names = {i.name for i in result.check.items if i.quantity == "collision"}
    assert {"tool~column", "column~forearm", "forearm~fixture", "tool~fixture"} <= names
    c0, c1 = _segment_points(model, q, 0, np.zeros(3), np.array([0, 0, -0.5]))
    f0, f1 = _segment_points(model, q, 2, np.zeros(3), np.array([0.9, 0, 0]))
    gap = _segment_distance(c0, c1, f0, f1) - 0.15 - 0.1
    outside = _forearm_to_box(model, q, box_lo, box_hi)
    print(f"forearm to column: {gap.min():.4f} m; forearm to fixture: {outside.min():.4f} m ({len(q)} samples)")
    # brute-force distances sample the segments every 2.25 cm (column 1.25 cm): at most half a spacing too large
    assert gap.min() >= 0.02 - 0.0175 and outside.min() >= 0.02 - 0.0113


def _forearm_to_box(model, q, lo, hi) -> np.ndarray:
    """Distance of the forearm capsule (radius 0.1) to the box at every sample, its segment sampled every 2.25 cm."""
    f0, f1 = _segment_points(model, q, 2, np.zeros(3), np.array([0.9, 0, 0]))
    points = f0[None] + np.linspace(0.0, 1.0, 41)[:, None, None] * (f1 - f0)[None]
    return np.linalg.norm(points - np.clip(points, lo, hi), axis=2).min(axis=0) - 0.1


def test_closest_points_of_two_segments_against_brute_force():
    from robid.excitation.collision import segment_parameters

    rng = np.random.default_rng(5)
    ends = [rng.normal(size=(300, 3)) for _ in range(4)]
    ends[3][:20] = ends[2][:20]  # a segment that is a point
    ends[1][20:40] = ends[0][20:40] + 1e-3 * rng.normal(size=(20, 3))  # nearly one
    ends[3][40:60] = ends[2][40:60] + (ends[1] - ends[0])[40:60]  # parallel segments
    s, t = segment_parameters(*ends)
    x1, x2 = ends[0] + s[:, None] * (ends[1] - ends[0]), ends[2] + t[:, None] * (ends[3] - ends[2])
    grid = np.linspace(0, 1, 401)
    for i in range(300):
        a = ends[0][i] + grid[:, None] * (ends[1][i] - ends[0][i])
        b = ends[2][i] + grid[:, None] * (ends[3][i] - ends[2][i])
        brute = np.min(np.linalg.norm(a[:, None] - b[None], axis=2))
        assert np.linalg.norm(x1[i] - x2[i]) <= brute + 1e-9
        spacing = (np.linalg.norm(ends[1][i] - ends[0][i]) + np.linalg.norm(ends[3][i] - ends[2][i])) / 400
        assert np.linalg.norm(x1[i] - x2[i]) >= brute - spacing


def test_spheres_cover_their_capsule():
    rng = np.random.default_rng(3)
    spheres = capsule_spheres("c", 0, [0, 0, 0], [0.5, 0, 0], 0.04)
    for _ in range(2000):
        s = rng.random() * 0.5
        direction = rng.normal(size=3)
        point = np.array([s, 0, 0]) + 0.04 * rng.random() ** (1 / 3) * direction / np.linalg.norm(direction)
        assert min(np.linalg.norm(point - sp.point) - sp.radius for sp in spheres) <= 1e-12


def test_a_collision_section_error_names_the_field():
    model = robid.load_robot("ur10e").model
    with pytest.raises(RobidInputError, match=r"collision.tool.body: expected a joint name"):
        collision_limits({"tool": {"body": "J9", "radius": 0.1}}, model, "s.yaml: collision")
    with pytest.raises(RobidInputError, match=r"obstacles\[0\]: expected"):
        collision_limits({"tool": {"body": 6, "radius": 0.1}, "obstacles": [{"name": "x"}]}, model,
                         "s.yaml: collision")
    with pytest.raises(RobidInputError, match=r"collision: obstacles and self_collision need volumes"):
        collision_limits({"obstacles": [{"name": "t", "plane": {"normal": [0, 0, 1], "offset": 0}}]}, model,
                         "s.yaml: collision")
    with pytest.raises(RobidInputError, match=r"links\[1\].name: 'J2-link' is already used"):
        collision_limits({"links": [{"body": 2, "radius": 0.1}, {"body": "J2", "to": [0.3, 0, 0], "radius": 0.1}]},
                         model, "s.yaml: collision")
    with pytest.raises(RobidInputError, match="unknown field|did you mean"):
        spec_from_dict({"harmonics": 5, "period": 10, "collision": {"tools": {}}}, "s.yaml")


def test_distance_gradients_match_finite_differences():
    """The optimiser's rows use d(distance)/dq from the closest points' Jacobians (the envelope theorem): central
    differences of the distances themselves at random UR10e configurations, for a capsule pair and for a
    sphere against a box from outside and from inside."""
    from robid.excitation.collision import Capsule, DistanceLimit, Sphere

    model = robid.load_robot("ur10e").model
    upper = Capsule("upper", 1, np.zeros(3), np.array([-0.6, 0, 0]), 0.08)
    wrist = Capsule("wrist", 4, np.zeros(3), np.array([0, 0, 0.1]), 0.06)
    pair = DistanceLimit("upper~wrist", upper, wrist, None, 0.02, {})
    tip = Sphere("tool", 5, np.array([0, 0, 0.2]), 0.05)
    rng = np.random.default_rng(11)
    q = rng.uniform(-2.5, 2.5, size=(40, 6))
    p_tip = np.array([model.forward_kinematics(qi)[5][:3, :3] @ tip.point + model.forward_kinematics(qi)[5][:3, 3]
                      for qi in q])
    outside = DistanceLimit("tool~box", tip, None, (np.array([2.0, 2.0, 2.0]), np.array([3.0, 3.0, 3.0])), 0.02, {})
    inside = DistanceLimit("tool~box", tip, None, (p_tip.min(0) - 0.3, p_tip.max(0) + 0.3), 0.02, {})
    eps = 1e-6
    for limit in (pair, outside, inside):
        d, grad = limit.distances(model, q)
        for j in range(6):
            step = np.zeros(6)
            step[j] = eps
            fd = (limit.distances(model, q + step)[0] - limit.distances(model, q - step)[0]) / (2 * eps)
            np.testing.assert_allclose(grad[:, j], fd, atol=1e-6, err_msg=f"{limit.name} J{j + 1}")
    assert np.all(inside.distances(model, q)[0] < 0)  # inside the box: negative


def test_robid_export_checks_the_collision_section_with_the_designs_robot(tool_table, tmp_path, capsys):
    """The command line: the design's robot loaded by name for the check (its parse-back line names the pair);
    a robot that cannot be loaded is a one-line error saying to give --robot, and --robot then works."""
    import dataclasses

    from robid.cli import main
    from robid.excitation.trajectory_file import save_trajectory

    _, _, tf = tool_table
    path = tmp_path / "traj.json"
    save_trajectory(path, tf)
    assert main(["export", str(path), "--format", "urscript", "--out", str(tmp_path / "x.script")]) == 0
    out = capsys.readouterr().out
    assert "parse-back check" in out and "all limits satisfied" in out
    moved = tmp_path / "moved.json"
    save_trajectory(moved, dataclasses.replace(tf, design={**tf.design, "robot": str(tmp_path / "gone.urdf")}))
    assert main(["export", str(moved), "--format", "urscript", "--out", str(tmp_path / "y.script")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robid: error: ") and err.count("\n") == 1 and "give --robot ROBOT" in err, err
    assert not (tmp_path / "y.script").exists()
    assert main(["export", str(moved), "--format", "urscript", "--out", str(tmp_path / "y.script"),
                 "--robot", "ur10e"]) == 0


@pytest.mark.parametrize("center, expected", [
    # the tool 0.39 m under the table at rest: the pair named once (both ends of the capsule are one pair)
    ([0, 0.4, 0, 0, 0, 0], r"the centre pose itself violates cartesian:z>= of tool~table \(limit 0.07, at rest "
                           r"-0.3909\) \(within"),
    # 8 mm of room between the tool and the table: no start can move, and the floor error says which pair pins it
    ([0, -0.3, 0.6, 0, 0, 0], r"excitation floor .*; at the centre, tool~table has 0.00836 m of room "
                              r"\(cartesian:z>=\): move center away from it$"),
])
def test_a_design_that_cannot_move_names_the_pair(center, expected):
    """What the error says, not what the optimiser finds: one start and a coarse grid (64 points) keep it fast."""
    spec = {**TOOL_TABLE, "starts": 1, "grid_points": 64, "center": center}
    with pytest.raises(RobidInputError, match=expected) as info:
        design_from_spec(robid.load_robot("ur10e"), spec_from_dict(spec, "collision.yaml"), "ur10e")
    assert str(info.value).count("tool~table") == 1


def test_the_design_reports_the_smallest_gap_of_each_pair(tool_table):
    """What robid design prints: the tool's smallest gap to the table, the independent 1 kHz surface check's
    value within the sampling of the final check (1024 points per period)."""
    from robid.excitation.collision import smallest_gaps

    model, result, tf = tool_table
    gaps = smallest_gaps(result.check, TOOL_TABLE["collision"], model)
    q = tf.trajectory.derivative(np.linspace(0.0, tf.trajectory.period, 2000, endpoint=False), 0)
    lowest = _tool_above_table(model, q).min()
    assert list(gaps) == ["tool~table"] and abs(gaps["tool~table"] - lowest) < 2e-3, (gaps, lowest)
