"""Closed chains (docs/model.md, "Closed chains"): the projected regressor against independent oracles, the base
parameters against the numerical rank, the closure's derivatives, and the robot file's errors.

Oracles: a Lagrangian of the planar parallelogram written by hand here (sympy, minimal coordinates: the
parallelogram keeps the forearm parallel to the crank and the rod parallel to the upper arm); for the general
four-bar, pinocchio's own kinematics (frame Jacobians, classical accelerations) and recursive Newton-Euler on the
tree, with the closed loop's torques from the principle of virtual work. Neither uses robid's closure or regressor.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import robid
from robid.errors import RobidInputError
from robid.model.closure import LoopClosure
from robid.model.loops import tree_joints, tree_parents

DATA = Path(__file__).parent / "data"
PARALLELOGRAM = DATA / "parallelogram_2r.yaml"
FOURBAR = DATA / "fourbar_planar.yaml"


def _states(seed: int, n: int, dof: int, spread: float = 1.0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-spread, spread, (n, dof)), rng.uniform(-2, 2, (n, dof)), rng.uniform(-5, 5, (n, dof))


def _parallelogram_lagrangian(model):
    """tau(q, qd, qdd) of parallelogram_2r by Euler-Lagrange, bodies placed by hand in the vertical plane."""
    import sympy as sp

    t = sp.Symbol("t")
    q1, q2 = sp.Function("q1")(t), sp.Function("q2")(t)
    byname = {j.name: j for j in tree_joints(model)}
    l1, l2, r = 0.8, 0.9, 0.25

    def rot(phi):
        return sp.Matrix([[sp.cos(phi), -sp.sin(phi)], [sp.sin(phi), sp.cos(phi)]])

    def unit(phi):
        return sp.Matrix([sp.cos(phi), sp.sin(phi)])

    elbow = l1 * unit(q1)
    crank_tip = r * unit(q2 + sp.pi / 2)
    # (body, frame origin, absolute angle): forearm parallel to the crank's lever side, rod parallel to the arm
    bodies = [("A1", elbow, q1), ("P2", elbow + l2 * unit(q2), q2), ("A2", crank_tip, q2 + sp.pi / 2),
              ("P3", crank_tip + l1 * unit(q1), q1)]
    kinetic, potential = 0, 0
    for name, origin, phi in bodies:
        link = byname[name].link
        com = origin + rot(phi) * sp.Matrix(link.com[:2])
        v = com.diff(t)
        spin = link.inertia_com[2] * phi.diff(t) ** 2  # Izz about the COM: the plane's normal
        kinetic += sp.Rational(1, 2) * (link.mass * (v.T * v)[0] + spin)
        potential += link.mass * 9.81 * com[1]
    lag = kinetic - potential
    qs = [q1, q2]
    taus = [sp.diff(lag.diff(q.diff(t)), t) - lag.diff(q) for q in qs]
    syms = sp.symbols("x1 x2 v1 v2 a1 a2")
    subs = {}
    for k, q in enumerate(qs):
        subs[q.diff(t, 2)] = syms[4 + k]
    for k, q in enumerate(qs):
        subs[q.diff(t)] = syms[2 + k]
    for k, q in enumerate(qs):
        subs[q] = syms[k]
    exprs = [tau.subs(subs) for tau in taus]
    return sp.lambdify(syms, exprs, "numpy")


def test_parallelogram_regressor_matches_a_hand_derived_lagrangian():
    robot = robid.load_robot(PARALLELOGRAM)
    assert robot.model.chain.relation == ((-1.0, 1.0), (1.0, -1.0))
    q, qd, qdd = _states(3, 40, 2, spread=1.5)
    f = _parallelogram_lagrangian(robot.model)
    rigid = np.column_stack(f(*q.T, *qd.T, *qdd.T))
    drives = [j for j in robot.model.joints]
    extra = np.column_stack([j.drive.reflected_inertia * qdd[:, k] + j.friction.viscous * qd[:, k]
                             + j.friction.coulomb * np.sign(qd[:, k]) + j.friction.offset
                             for k, j in enumerate(drives)])
    expected = rigid + extra
    y = robot.regressor(q, qd, qdd)
    scale = np.abs(expected).max()
    assert np.abs(y @ robot.parameters - expected).max() < 1e-9 * scale
    assert np.abs(robot.inverse_dynamics(q, qd, qdd) - expected).max() < 1e-9 * scale


def _virtual_work_torques(model, q_active, qd_active, qdd_active):
    """Active torques of the rigid bodies from pinocchio: tree states closed by robid's position solution (checked
    here with pinocchio's kinematics), velocities and accelerations from pinocchio's closing-point Jacobians and
    classical accelerations, tau_a = W^T rnea(q, v, a)."""
    pin = pytest.importorskip("pinocchio")
    from oracles.pinocchio_model import add_point_frame, tree_model_from_robid

    tree, parents = tree_joints(model), tree_parents(model)
    pm = tree_model_from_robid(model, tree, parents)
    index = {j.name: k for k, j in enumerate(tree)}
    loop = model.chain.loops[0]
    fa, fb = (add_point_frame(pm, tree, index[e.body], e.xyz, f"end{k}") for k, e in enumerate(loop.close))
    data = pm.createData()
    closure = LoopClosure(model)
    active, passive = closure.active, closure.passive
    q_tree = closure.solve(q_active)[0]
    out = []
    for q, v_a, a_a in zip(q_tree, qd_active, qdd_active, strict=True):
        pin.forwardKinematics(pm, data, q)
        pin.updateFramePlacements(pm, data)
        assert np.linalg.norm(data.oMf[fa].translation - data.oMf[fb].translation) < 1e-12
        pin.computeJointJacobians(pm, data, q)
        world = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        jac = (pin.getFrameJacobian(pm, data, fb, world) - pin.getFrameJacobian(pm, data, fa, world))[:3]
        g = -np.linalg.lstsq(jac[:, passive], jac[:, active], rcond=None)[0]
        v = np.zeros(len(tree))
        v[active], v[passive] = v_a, g @ v_a
        pin.forwardKinematics(pm, data, q, v, np.zeros(len(tree)))
        bias = (pin.getFrameClassicalAcceleration(pm, data, fb, world).linear
                - pin.getFrameClassicalAcceleration(pm, data, fa, world).linear)
        a = np.zeros(len(tree))
        a[active] = a_a
        a[passive] = g @ a_a - np.linalg.lstsq(jac[:, passive], bias, rcond=None)[0]
        w = np.zeros((len(tree), len(active)))
        w[active, np.arange(len(active))] = 1.0
        w[passive] = g
        out.append(w.T @ pin.rnea(pm, data, q, v, a))
    return np.array(out)


def test_general_four_bar_matches_pinocchio_virtual_work():
    robot = robid.load_robot(FOURBAR)
    assert robot.model.chain.relation is None
    q, qd, qdd = _states(5, 25, 2, spread=3.0)
    expected = _virtual_work_torques(robot.model, q, qd, qdd)
    rigid = [k for k, n in enumerate(robot.parameter_names) if n.split("_")[0] in
             ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")]
    y = robot.regressor(q, qd, qdd)
    got = y[:, :, rigid] @ robot.parameters[rigid]
    assert np.abs(got - expected).max() < 1e-9 * np.abs(expected).max()


def test_parallelogram_solved_numerically_equals_the_symbolic_projection(tmp_path):
    text = PARALLELOGRAM.read_text().replace("kind: parallelogram", "kind: planar")
    numeric = robid.load_robot(_write(tmp_path, "numeric.yaml", text))
    symbolic = robid.load_robot(PARALLELOGRAM)
    assert numeric.model.chain.relation is None
    q, qd, qdd = _states(8, 30, 2, spread=0.7)  # |q_P2| = |q_A2 - q_A1| < 1.4 rad: before the dead points at 90 deg
    a, b = numeric.inverse_dynamics(q, qd, qdd), symbolic.inverse_dynamics(q, qd, qdd)
    assert np.abs(a - b).max() < 1e-9 * np.abs(b).max()
    assert len(numeric.base_parameters().names) == len(symbolic.base_parameters().names)
    assert symbolic.base_parameters().exact and not numeric.base_parameters().exact


@pytest.mark.parametrize("robot_name", ["kr180_pa", str(PARALLELOGRAM), str(FOURBAR)])
def test_base_count_is_the_rank_of_the_projected_regressor(robot_name):
    robot = robid.load_robot(robot_name)
    closure = LoopClosure(robot.model)
    rng = np.random.default_rng(11)
    q, _ = closure.solve(rng.uniform(-1.0, 1.0, (60, robot.dof)), strict=False)
    q_a = q[:, closure.active]
    qd, qdd = rng.normal(size=(2, 60, robot.dof))
    y = robot.regressor(q_a, qd, qdd).reshape(-1, len(robot.parameter_names))
    s = np.linalg.svd(y / np.maximum(np.linalg.norm(y, axis=0), 1e-300), compute_uv=False)
    rank = int((s > 1e-9 * s[0]).sum())
    base = robot.base_parameters()
    assert rank == len(base.names)
    beta = base.values(robot.parameters)
    full = robot.regressor(q_a, qd, qdd) @ robot.parameters
    assert np.abs(base.regressor(q_a, qd, qdd) @ beta - full).max() < 1e-9 * np.abs(full).max()


def test_palletizer_counts_and_exact_grouping():
    robot = robid.load_robot("kr180_pa")
    assert robot.dof == 4 and robot.joint_names == ["A1", "A2", "A3", "A6"]
    base = robot.base_parameters()
    assert base.exact and len(base.names) == 39
    assert "m_E3" in robot.parameter_names and "fv_E3" not in robot.parameter_names
    ops = robot.meta["operation_counts"]["base_regressor"]
    assert ops["mul"] > 0 and ops["add"] > 0


def test_closure_velocity_and_acceleration_are_the_derivatives_of_the_position():
    closure = LoopClosure(robid.load_robot(FOURBAR).model)
    t = np.linspace(0.0, 1.0, 4001)
    q = np.column_stack([2.5 * np.sin(3 * t), np.cos(2 * t)])
    qd = np.column_stack([7.5 * np.cos(3 * t), -2 * np.sin(2 * t)])
    qdd = np.column_stack([-22.5 * np.sin(3 * t), -4 * np.cos(2 * t)])
    s = closure.states(q, qd, qdd)
    h = t[1] - t[0]
    inner = slice(4, -4)
    assert np.abs(np.gradient(s.q, h, axis=0)[inner] - s.qd[inner]).max() < 1e-5
    assert np.abs(np.gradient(s.qd, h, axis=0)[inner] - s.qdd[inner]).max() < 1e-4
    assert np.abs(closure.residual(s.q)).max() < 1e-12


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_a_pose_that_cannot_close_is_named():
    robot = robid.load_robot(FOURBAR)
    closure = LoopClosure(robot.model)
    # the rocker's arm cannot reach: a four-bar with a 0.9 m crank is not assembled at every crank angle
    with pytest.raises(RobidInputError, match="cannot close at sample"):
        LoopClosure(_long_crank(robot.model)).solve(np.array([[np.pi, 0.0]]))
    assert closure.solve(np.array([[np.pi, 0.0]]))[1].all()


def _long_crank(model):
    from dataclasses import replace

    chain = model.chain
    passive = tuple(replace(j, geometry=replace(j.geometry, a_translation=(0.45, 0.0, 0.0))) if j.name == "P2"
                    else j for j in chain.passive)
    return replace(model, chain=replace(chain, passive=passive))


@pytest.mark.parametrize(
    "edit, message",
    [
        (("offset: 1.624919841198245", "offset: 1.5"), r"loops\[0\]: the loop does not close at the zero pose"),
        (("    parent: P3\n    a: 0.45\n", "    parent: P3\n    a: 0.45\n    elasticity: {stiffness: 1.0e5}\n"),
         r"joints\[3\]\.elasticity: not in a robot with loops"),
        (("kind: planar", "kind: parallelogram"), r"passive angles are not linear"),
        (("passive: [P2, P3]", "passive: [P2, P4]"), r"loops\[0\]\.passive\[1\]: no joint named 'P4'"),
        (("passive: [P2, P3]", "passive: [P2, A4]"), r"loops\[0\]\.passive\[1\]: joint 'A4' is not on the loop"),
        (("    parent: base\n", "    parent: A9\n"), r"joints\[2\]\.parent: 'A9' is not an earlier joint"),
        (("kind: planar", "kind: spherical"), r"loops\[0\]\.kind: unknown loop kind 'spherical'"),
    ],
)
def test_robot_file_errors_name_the_field(tmp_path, edit, message):
    text = FOURBAR.read_text()
    assert edit[0] in text
    text = text.replace(edit[0], edit[1], 1)
    if "[P2, A4]" in text:  # A4 as a passive joint: without its drive, so that the path check is what refuses it
        text = text.replace("    drive: {gear_ratio: 30, rotor_inertia: 5.0e-5}\n", "")
        text = text.replace("    friction: {viscous: 0.5, coulomb: 0.8, offset: 0.0}\n", "")
    path = _write(tmp_path, "bad.yaml", text)
    with pytest.raises(RobidInputError, match=message):
        robid.load_robot(path)


def test_passive_joint_refuses_a_drive_and_parents_need_loops(tmp_path):
    text = PARALLELOGRAM.read_text()
    anchor = "    parent: A1\n"
    bad = text.replace(anchor, anchor + "    drive: {gear_ratio: 10}\n")
    with pytest.raises(RobidInputError, match=r"joints\[1\]\.drive: not on a passive joint"):
        robid.load_robot(_write(tmp_path, "a.yaml", bad))
    no_loops = text[: text.index("loops:")]
    with pytest.raises(RobidInputError, match=r"joints\[2\]\.parent: only in a robot with loops"):
        robid.load_robot(_write(tmp_path, "b.yaml", no_loops))


def test_the_robot_file_docs_loops_example_loads(tmp_path):
    import re

    text = (Path(__file__).parents[1] / "docs" / "robot-file.md").read_text()
    block = re.search(r"<!-- robot-file loops example: begin -->\n```yaml\n(.*?)```", text, re.S).group(1)
    model = robid.load_robot(_write(tmp_path, "loops.yaml", block)).model
    assert model.joint_names == ["A1", "A2"] and model.chain.relation == ((-1.0, 1.0), (1.0, -1.0))


def test_closure_states_of_a_parallelogram_follow_its_relation():
    closure = LoopClosure(robid.load_robot(PARALLELOGRAM).model)
    q, qd, qdd = _states(2, 7, 2, spread=0.6)
    s = closure.states(q, qd, qdd)
    g = np.array([[-1.0, 1.0], [1.0, -1.0]])
    assert np.allclose(s.qd[:, closure.passive], qd @ g.T) and np.allclose(s.qdd[:, closure.passive], qdd @ g.T)
    assert np.abs(closure.residual(s.q)).max() < 1e-12
