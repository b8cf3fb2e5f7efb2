"""The excitation preview of the report (issue 33): a strip of poses over one period and the swept volume's extent,
checked against the robot's own forward kinematics sample by sample (RobotModel.forward_kinematics, not the batched
chain the preview uses)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest
from test_excitation_programs import LIMITS, _trajectory

import robid
from robid.excitation.trajectory_file import TrajectoryFile
from robid.report.sections.excitation_preview import EXTENT_SAMPLES, POSES, preview

TOOL = [0.0, 0.0, 0.2]
COLLISION = {"tool": {"body": "J6", "to": TOOL, "radius": 0.05},
             "obstacles": [{"name": "table", "plane": {"normal": [0, 0, 1], "offset": -0.5}},
                           {"name": "fixture", "box": {"min": [0.4, -0.2, 0], "max": [0.8, 0.2, 0.3]}}]}


@pytest.fixture(scope="module")
def ur10e_preview():
    robot = robid.load_robot("ur10e")
    tf = TrajectoryFile(_trajectory(4, usage=0.9), LIMITS, 0.05, (),
                        {"robot": "ur10e", "tool_point": TOOL, "collision": COLLISION})
    figures, rows = preview(SimpleNamespace(robot=robot), tf)
    return robot.model, tf, figures, dict(rows)


def _ranges(text: str) -> np.ndarray:
    """[[lo, hi] per axis] from 'x a … b, y a … b, z a … b'."""
    found = re.findall(r"([xyz]) (-?[\d.e+-]+) \u2026 (-?[\d.e+-]+)", text.replace("\u2212", "-"))
    assert [axis for axis, *_ in found] == ["x", "y", "z"], text
    return np.array([[float(lo), float(hi)] for _, lo, hi in found])


def test_the_swept_extent_is_the_forward_kinematics_bounding_box(ur10e_preview):
    model, tf, _, rows = ur10e_preview
    t = np.linspace(0.0, tf.trajectory.period, EXTENT_SAMPLES, endpoint=False)
    tool, origins = [], []
    for q in tf.trajectory.derivative(t, 0):
        frames = model.forward_kinematics(q)
        tool.append(frames[-1][:3, :3] @ TOOL + frames[-1][:3, 3])
        origins += [f[:3, 3] for f in frames]
    tool, origins = np.array(tool), np.array(origins)
    print(rows)
    expected_tool = np.stack([tool.min(0), tool.max(0)], axis=1)
    expected_joints = np.stack([origins.min(0), origins.max(0)], axis=1)
    np.testing.assert_allclose(_ranges(rows["swept extent of the tool point"]), expected_tool, atol=6e-3)  # 3 digits
    np.testing.assert_allclose(_ranges(rows["swept extent of the joint origins"]), expected_joints, atol=6e-3)
    assert "the design's tool point" in rows["swept extent of the tool point"]
    height = rows["tool point: lowest height, farthest reach"].replace("\u2212", "-")
    lowest = float(re.search(r"z (-?[\d.]+) m", height).group(1))
    assert lowest == pytest.approx(tool[:, 2].min(), abs=6e-3)


def test_the_strip_of_poses_is_one_figure_with_every_instant(ur10e_preview):
    from io import BytesIO

    from matplotlib.image import imread

    _, _, figures, _ = ur10e_preview
    assert len(figures) == 1
    html = str(figures[0])
    assert f"at {POSES} equally spaced instants" in html and 'alt="strip of poses over one period"' in html
    png = imread(BytesIO(__import__("base64").b64decode(html.split("base64,", 1)[1].split('"', 1)[0])))
    rgb = png[..., :3].astype(float) / (255.0 if png.max() > 1 else 1.0)
    blue = (rgb[..., 2] > 0.5) & (rgb[..., 0] < 0.3)  # the stick figures (C0)
    rows, cols = png.shape[:2]
    for k in range(POSES):  # every panel of the 2 x POSES/2 grid draws its stick figure
        r, c = divmod(k, POSES // 2)
        panel = blue[r * rows // 2:(r + 1) * rows // 2, c * cols // (POSES // 2):(c + 1) * cols // (POSES // 2)]
        assert panel.sum() > 30, (k, panel.sum())


def test_a_model_that_does_not_match_the_trajectory_shows_no_preview():
    robot = robid.load_robot("tx200_3axis")
    tf = TrajectoryFile(_trajectory(4), LIMITS, 0.05, (), {})
    assert preview(SimpleNamespace(robot=robot), tf) == ([], [])
