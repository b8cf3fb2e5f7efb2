"""Property tests of the loop closure (robid.model.closure) on random crank-rocker four-bars (docs/model.md, "Loop
closure"): any Grashof four-bar assembled at a random crank angle closes at every crank angle; the solution closes to
1e-12 of the loop's size, stays on the assembly branch of the zero pose, and its velocities and accelerations are
the derivatives of its positions."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from robid.model.closure import LoopClosure
from robid.model.yaml_reader import robot_from_dict


def _four_bar(crank: float, coupler: float, rocker: float, ground: float, angle: float, upper: bool):
    """A crank-rocker four-bar (modified DH) assembled at the crank angle ``angle`` on the upper or lower branch:
    the passive joints' offsets come from the triangle of the coupler and the rocker."""
    c = (crank * math.cos(angle), crank * math.sin(angle))
    dx, dy = ground - c[0], -c[1]
    dist = math.hypot(dx, dy)
    along = (coupler**2 - rocker**2 + dist**2) / (2 * dist)
    height = math.sqrt(max(coupler**2 - along**2, 0.0)) * (1 if upper else -1)
    b = (c[0] + along * dx / dist - height * dy / dist, c[1] + along * dy / dist + height * dx / dist)
    coupler_angle = math.atan2(b[1] - c[1], b[0] - c[0])
    rocker_angle = math.atan2(b[1], b[0] - ground)
    link = {"mass": 1.0, "com": [0.1, 0.0, 0.0], "inertia": [0.01, 0.01, 0.01, 0, 0, 0]}
    data = {
        "robid": 1, "name": "four-bar", "kinematics": "mdh", "gravity": [0, -9.81, 0],
        "joints": [
            {"name": "A1", "offset": angle, "link": link},
            {"name": "P2", "parent": "A1", "a": crank, "offset": coupler_angle - angle, "link": link},
            {"name": "P3", "parent": "base", "a": ground, "offset": rocker_angle, "link": link},
        ],
        "loops": [{"kind": "planar", "passive": ["P2", "P3"],
                   "close": [{"body": "P2", "xyz": [coupler, 0, 0]}, {"body": "P3", "xyz": [rocker, 0, 0]}]}],
    }
    return robot_from_dict(data, "four-bar.yaml")


@st.composite
def grashof_crank_rockers(draw):
    """Link lengths with the crank the shortest and s + l < p + q by at least 0.05 m (the crank turns fully, away
    from the change point where the two branches meet), a crank angle of assembly and a branch."""
    crank = draw(st.floats(0.05, 0.3))
    coupler, rocker, ground = (draw(st.floats(crank + 0.1, 1.0)) for _ in range(3))
    lengths = sorted([crank, coupler, rocker, ground])
    assume(lengths[0] + lengths[3] < lengths[1] + lengths[2] - 0.05)
    return crank, coupler, rocker, ground, draw(st.floats(-math.pi, math.pi)), draw(st.booleans())


@settings(max_examples=15, deadline=None, derandomize=True)
@given(grashof_crank_rockers())
def test_random_four_bars_close_on_their_branch_with_consistent_derivatives(bar):
    crank, coupler, rocker, ground, angle, upper = bar
    closure = LoopClosure(_four_bar(crank, coupler, rocker, ground, angle, upper))
    t = np.linspace(0.0, 1.0, 401)
    q = (2.0 * math.pi * t)[:, None]  # a full turn of the crank
    qd = np.full_like(q, 2.0 * math.pi)
    qdd = np.zeros_like(q)
    s = closure.states(q, qd, qdd)
    assert np.abs(closure.residual(s.q)).max() < 1e-12 * closure.loops[0].size
    det = np.linalg.det(closure.jacobian(s.q)[0][:, :, closure.passive])
    assert np.all(np.sign(det) == np.sign(det[0]))  # one branch all the way round
    h = t[1] - t[0]
    inner = slice(3, -3)
    scale = 1.0 + np.abs(s.qd).max()
    assert np.abs(np.gradient(s.q, h, axis=0)[inner] - s.qd[inner]).max() < 2e-3 * scale
    assert np.abs(np.gradient(s.qd, h, axis=0)[inner] - s.qdd[inner]).max() < 2e-2 * (1.0 + np.abs(s.qdd).max())
    turn = s.q[-1, closure.passive] - s.q[0, closure.passive]  # the linkage comes back (the coupler turns once
    assert np.allclose(np.angle(np.exp(1j * turn)), 0.0, atol=1e-9)  # relative to the crank: -2 pi, not 0)
