"""The virtual robot's compiled single-state chain (robid/simulation/scalar_chain.c) against the Python chain it
transcribes (robid.simulation.single_state.ScalarChain): the same bits on random serial chains, revolute and
prismatic, any axes and offsets. The physics of both is checked against pinocchio in tests/test_simulation_rnea.py
(which now runs the compiled one) and against the vectorised recursion here."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import robid
from robid.simulation import single_state_c
from robid.simulation.rnea import RigidBodyDynamics
from robid.simulation.single_state import ScalarChain

ROOT = Path(__file__).resolve().parents[1]


def _rotation(rng) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    return q if np.linalg.det(q) > 0 else -q


def _random_joints(seed: int, dof: int):
    rng = np.random.default_rng(seed)
    joints = []
    for _ in range(dof):
        axis = rng.normal(size=3)
        a = rng.normal(size=(3, 3))
        joints.append(types.SimpleNamespace(
            revolute=bool(rng.random() < 0.7), axis=axis / np.linalg.norm(axis), offset=rng.uniform(-3, 3),
            c_rotation=_rotation(rng), c_translation=rng.uniform(-1, 1, 3), mass=rng.uniform(0.1, 50),
            com=rng.uniform(-0.5, 0.5, 3), inertia=a @ a.T + 0.1 * np.eye(3)))
    return joints


@pytest.fixture(scope="module")
def function():
    f = single_state_c._library_function()
    assert f is not None, "the compiled chain must build where the suite runs (a C compiler is a test requirement)"
    return f


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), dof=st.integers(1, 9), state_seed=st.integers(0, 2**32 - 1))
def test_compiled_chain_gives_the_python_chains_bits(function, seed, dof, state_seed):
    joints = _random_joints(seed, dof)
    gravity = np.random.default_rng(seed + 1).normal(size=3) * 9.81
    python = ScalarChain(joints, gravity)
    compiled = single_state_c.CompiledChain(function, python.items, python.minus_g)
    rng = np.random.default_rng(state_seed)
    q, qd = rng.uniform(-4, 4, dof), rng.uniform(-5, 5, dof)
    mass, bias = compiled.mass_matrix_and_bias(q, qd)
    mass_py, bias_py = python.mass_matrix_and_bias(q.tolist(), qd.tolist())
    assert np.array_equal(mass, np.array(mass_py)), np.abs(mass - np.array(mass_py)).max()
    assert np.array_equal(bias, np.array(bias_py)), np.abs(bias - np.array(bias_py)).max()


def test_stanford_arm_with_a_prismatic_joint_agrees_with_the_vectorised_recursion(function):
    model = robid.load_robot(str(ROOT / "benchmarks" / "robots" / "stanford.yaml")).model
    dyn = RigidBodyDynamics(model)
    rng = np.random.default_rng(3)
    q, qd = rng.uniform(-1, 1, (5, model.dof)), rng.uniform(-2, 2, (5, model.dof))
    for k in range(5):
        mass, bias = dyn.mass_matrix_and_bias(q[k], qd[k])
        assert isinstance(dyn._compiled, single_state_c.CompiledChain)
        np.testing.assert_allclose(mass, dyn.mass_matrix(q[k])[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(bias, dyn.inverse_dynamics(q[k], qd[k], np.zeros(model.dof))[0],
                                   rtol=1e-12, atol=1e-12)


def test_without_the_library_the_python_chain_serves_with_the_same_numbers(monkeypatch):
    model = robid.load_robot("puma560").model
    q, qd = np.linspace(-1, 1, model.dof), np.linspace(2, -1, model.dof)
    compiled = RigidBodyDynamics(model).mass_matrix_and_bias(q, qd)
    monkeypatch.setattr(single_state_c, "_library_function", lambda: None)
    dyn = RigidBodyDynamics(model)
    plain = dyn.mass_matrix_and_bias(q, qd)
    assert dyn._compiled is False
    assert np.array_equal(compiled[0], plain[0]) and np.array_equal(compiled[1], plain[1])


def test_a_library_that_does_not_match_its_record_is_built_again(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path))
    first = single_state_c._library_path()
    assert first is not None and first.parent == tmp_path / "simulation"
    first.write_bytes(b"not a library")
    again = single_state_c._library_path()
    assert again == first and again.read_bytes() != b"not a library"
    assert sorted(p.name for p in first.parent.iterdir()) == sorted([first.name, first.with_suffix(".json").name])


def test_robid_backend_numpy_runs_no_compiled_chain(monkeypatch):
    monkeypatch.setenv("ROBID_BACKEND", "numpy")
    single_state_c._library_function.cache_clear()
    try:
        assert single_state_c.compiled_chain(ScalarChain(_random_joints(0, 2), np.zeros(3)).items, (0, 0, 0)) is None
    finally:
        single_state_c._library_function.cache_clear()
