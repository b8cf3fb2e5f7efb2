"""Core symbolic stage: closed forms, base-parameter algebra, cache behaviour, numeric path without sympy."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from oracles.closed_forms import PLANAR_2R
from oracles.closed_forms import planar_2r_torque as planar_closed_form

import robid
from robid.symbolic import cache


@pytest.fixture
def planar(tmp_path):
    path = tmp_path / "planar2r.yaml"
    path.write_text(PLANAR_2R)
    return robid.load_robot(path, terms=("rigid",))


def states(n, dof, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-np.pi, np.pi, (n, dof)), rng.normal(size=(n, dof)), rng.normal(size=(n, dof))


def test_planar_2r_matches_closed_form(planar):
    q, qd, qdd = states(30, 2)
    tau = planar.inverse_dynamics(q, qd, qdd)
    ref = planar_closed_form(q, qd, qdd)
    assert np.abs(tau - ref).max() <= 1e-9 * np.abs(ref).max()


def test_planar_2r_base_parameters_are_the_textbook_ones(planar):
    base = planar.base_parameters()
    assert len(base.names) == 6  # planar 2R with gravity in the plane: 3 per link
    assert base.exact
    # standard DH frames sit at the distal end: mx_A1 absorbs a1 (m1 + m2)
    row = base.names.index("mx_A1")
    g = dict(zip(planar.parameter_names, base.grouping[row], strict=True))
    assert g["mx_A1"] == 1 and g["m_A1"] == pytest.approx(0.4) and g["m_A2"] == pytest.approx(0.4)
    assert base.expressions[row] == "mx_A1 + 0.4*m_A1 + 0.4*m_A2"
    assert base.classes["Ixx_A1"] == "unidentifiable"
    assert base.classes["my_A2"] == "identifiable"
    assert base.classes["m_A2"] == "grouped"


def test_regressor_base_regressor_and_torque_agree(planar):
    q, qd, qdd = states(40, 2, seed=3)
    p = planar.parameters
    y = planar.regressor(q, qd, qdd)
    base = planar.base_parameters()
    yb = base.regressor(q, qd, qdd)
    tau = planar.inverse_dynamics(q, qd, qdd)
    scale = np.abs(tau).max()
    assert y.shape == (40, 2, 20) and yb.shape == (40, 2, 6)
    assert np.abs(y @ p - tau).max() <= 1e-10 * scale
    assert np.abs(yb @ base.values(p) - tau).max() <= 1e-10 * scale
    assert np.array_equal(yb, y[:, :, base.indices])


def test_cache_is_keyed_by_kinematics_not_inertia(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBID_CACHE_DIR", str(tmp_path / "cache"))
    a = tmp_path / "a.yaml"
    a.write_text(PLANAR_2R)
    b = tmp_path / "b.yaml"
    b.write_text(PLANAR_2R.replace("mass: 10", "mass: 12"))
    c = tmp_path / "c.yaml"
    c.write_text(PLANAR_2R.replace("a: 0.5", "a: 0.55"))
    keys = [cache.model_key(robid.load_robot(p).model, ("rigid",)) for p in (a, b, c)]
    assert keys[0] == keys[1] != keys[2]
    robot = robid.load_robot(a, terms=("rigid",))
    robot.base_parameters()
    entries = list((tmp_path / "cache").iterdir())
    assert len(entries) == 1 and (entries[0] / "model.py").exists()
    meta = json.loads((entries[0] / "meta.json").read_text())
    assert meta["operation_counts"]["regressor"]["mul"] > 0


def test_numeric_path_imports_no_sympy(tmp_path):
    path = tmp_path / "planar2r.yaml"
    path.write_text(PLANAR_2R)
    env = dict(os.environ, ROBID_CACHE_DIR=str(tmp_path / "cache"))
    warm = f"import robid; robid.load_robot(r'{path}').base_parameters()"
    subprocess.run([sys.executable, "-c", warm], check=True, env=env)
    probe = textwrap.dedent(
        f"""
        import sys, numpy as np, robid
        r = robid.load_robot(r'{path}')
        r.regressor(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)))
        r.base_parameters().regressor(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)))
        print('sympy' in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_bad_state_shape_is_a_clear_error(planar):
    with pytest.raises(robid.RobidInputError, match="q: expected shape"):
        planar.regressor(np.zeros((3, 3)), np.zeros((3, 3)), np.zeros((3, 3)))


def test_unknown_term_is_a_clear_error(tmp_path):
    path = tmp_path / "planar2r.yaml"
    path.write_text(PLANAR_2R)
    with pytest.raises(robid.RobidInputError, match="unknown term 'springs'"):
        robid.load_robot(path, terms=("rigid", "springs"))


def test_compiled_c_backend_agrees_with_the_numpy_code(planar):
    base = planar.base_parameters()
    if planar._c is None:
        pytest.skip("no C compiler: the numpy backend is used")
    q, qd, qdd = states(50, 2, seed=9)
    assert np.allclose(planar.regressor(q, qd, qdd), planar._module.regressor(q, qd, qdd), rtol=1e-14, atol=1e-12)
    assert np.allclose(base.regressor(q, qd, qdd), base._module.base_regressor(q, qd, qdd), rtol=1e-14, atol=1e-12)
