"""Compensator physics (robid.model.compensator) against independent references: the law of cosines by hand, the
joint's own 4x4 transform, central differences for dl/dq, hand values of the force laws, and the same functions
evaluated with sympy and with numpy."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from robid.model import compensator
from robid.model.robot_model import Compensator, Joint, JointGeometry

ROOT = Path(__file__).resolve().parents[1]
EYE = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
GAS = {"area": 1.669e-3, "l0": 1.0, "v0": 2.0e-3, "n": 1.3}  # gas volume > 0 up to l = 2.2 m


def planar_joint(base_length: float, link_length: float, offset: float) -> Joint:
    """Axis z through the origin; base point (0, L, 0) in frame i-1, link point (R, 0, 0) in frame i."""
    geometry = JointGeometry(EYE, (0.0, 0.0, 0.0), (0.0, 0.0, 1.0), EYE, (0.0, 0.0, 0.0), angle_offset=offset)
    comp = Compensator(type="spring", base_point=(0.0, base_length, 0.0), link_point=(link_length, 0.0, 0.0))
    return Joint("J", "revolute", geometry, compensator=comp)


def _rotation(rng) -> tuple[tuple[float, ...], ...]:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return tuple(tuple(float(v) for v in row) for row in q)


def skewed_joint(kind: str, seed: int = 3) -> Joint:
    """A joint with every part of A . M(q) . B in use: rotations, translations, a tilted axis, an offset."""
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    geometry = JointGeometry(
        _rotation(rng),
        tuple(float(v) for v in rng.uniform(-0.5, 0.5, 3)),
        tuple(float(v) for v in axis),
        _rotation(rng),
        tuple(float(v) for v in rng.uniform(-0.5, 0.5, 3)),
        angle_offset=0.7,
        displacement_offset=0.2,
    )
    comp = Compensator(type="gas", base_point=(0.9, -0.3, 0.4), link_point=(-0.2, 0.5, 0.1), **GAS, p0=5e6)
    return Joint("J", kind, geometry, compensator=comp)


def transform_reference(joint: Joint, q: np.ndarray) -> np.ndarray:
    """|T(q) p - b| from the joint's numeric 4x4 transform (robot_model.JointGeometry.transform)."""
    p = np.append(joint.compensator.link_point, 1.0)
    b = np.asarray(joint.compensator.base_point)
    return np.array([np.linalg.norm((joint.geometry.transform(x, joint.revolute) @ p)[:3] - b) for x in q])


def test_anchor_length_is_the_law_of_cosines():
    """Link point R (cos t, sin t, 0), t = q + offset, base point (0, L, 0): l^2 = L^2 + R^2 - 2 L R sin t,
    dl/dq = -L R cos t / l."""
    big_l, r, offset = 0.8, 0.2, math.radians(30.0)
    q = np.radians([-100.0, -30.0, 0.0, 45.0, 170.0])
    length, dl = compensator.anchor_length(planar_joint(big_l, r, offset), q)
    t = q + offset
    expected = np.sqrt(big_l**2 + r**2 - 2 * big_l * r * np.sin(t))
    np.testing.assert_allclose(length, expected, rtol=1e-13)
    np.testing.assert_allclose(dl, -big_l * r * np.cos(t) / expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_anchor_length_matches_the_joint_transform(kind):
    joint = skewed_joint(kind)
    q = np.linspace(-1.5, 1.5, 7)
    np.testing.assert_allclose(compensator.anchor_length(joint, q)[0], transform_reference(joint, q), rtol=1e-12)


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_dl_dq_matches_central_differences(kind):
    joint = skewed_joint(kind)
    q = np.linspace(-1.2, 1.2, 9)
    h = 1e-6
    numeric = (transform_reference(joint, q + h) - transform_reference(joint, q - h)) / (2 * h)
    np.testing.assert_allclose(compensator.anchor_length(joint, q)[1], numeric, rtol=1e-6, atol=1e-9)


def test_force_laws_at_hand_values():
    k, l0 = 2.0e4, 0.9
    assert compensator.spring_force(l0, k, l0) == 0.0
    assert compensator.spring_force(l0 - 0.1, k, l0) == pytest.approx(0.1 * k)  # compressed: pushes apart
    assert compensator.spring_force(l0 + 0.1, k, l0) == pytest.approx(-0.1 * k)
    area, gl0, v0, p0 = GAS["area"], GAS["l0"], GAS["v0"], 1.6e7
    # at the reference length the pressure is p0 and the cylinder pulls with p0 A
    assert compensator.gas_force(gl0, p0, area, gl0, v0, 1.3) == pytest.approx(-p0 * area)
    # extended by v0 / (2 A): the gas volume halves, p = p0 2^n
    half = gl0 + v0 / (2 * area)
    assert compensator.gas_volume(half, area, gl0, v0) == pytest.approx(v0 / 2)
    assert compensator.gas_pressure(half, p0, area, gl0, v0, 1.3) == pytest.approx(p0 * 2**1.3)
    assert compensator.gas_force(half, p0, area, gl0, v0, 1.3) == pytest.approx(-p0 * area * 2**1.3)
    # retracted by v0 / A: the volume doubles, isothermal pressure halves
    assert compensator.gas_pressure(gl0 - v0 / area, p0, area, gl0, v0, 1.0) == pytest.approx(p0 / 2)


def test_columns_reproduce_the_motor_torque():
    """tau = -F dl/dq (docs/interfaces.md 1.2): spring k * col_k + (k l0) * col_kl0, gas p0 * col_p0."""
    length, dl = np.array([0.7, 0.8, 0.95]), np.array([-0.1, 0.05, 0.2])
    k, l0 = 2.0e4, 0.9
    col_k, col_kl0 = compensator.spring_columns(length, dl)
    np.testing.assert_allclose(k * col_k + k * l0 * col_kl0, -k * (l0 - length) * dl, rtol=1e-13)
    p0 = 1.6e7
    pressure = p0 * (GAS["v0"] / (GAS["v0"] - GAS["area"] * (length - GAS["l0"]))) ** GAS["n"]
    np.testing.assert_allclose(p0 * compensator.gas_p0_column(length, dl, **GAS), pressure * GAS["area"] * dl,
                               rtol=1e-13)
    assert compensator.compensator_torque(3.0, 2.0) == -6.0


@pytest.mark.parametrize("kind", ["revolute", "prismatic"])
def test_sympy_and_numpy_evaluations_agree(kind):
    """The same functions with exact sympy numbers (lambdified) and with numpy arrays."""
    joint = skewed_joint(kind)
    x = sp.Symbol("x", real=True)
    exact = compensator.Arithmetic(number=lambda v: sp.Rational(repr(float(v))), sqrt=sp.sqrt, normal=sp.expand)
    if kind == "revolute":
        theta = x + exact.number(joint.geometry.angle_offset)
        motion = (sp.sin(theta), sp.cos(theta))
    else:
        motion = x + exact.number(joint.geometry.displacement_offset)
    length, rate = compensator.length_and_rate(*compensator.anchor_vectors(joint, motion, exact), exact)
    gas = {k: exact.number(v) for k, v in GAS.items()}
    force = compensator.gas_force(length, exact.number(5e6), **gas)
    column = compensator.gas_p0_column(length, rate / length, **gas)
    assert not (length.free_symbols - {x})
    evaluate = sp.lambdify(x, [length, rate / length, force, column], "numpy")
    q = np.linspace(-1.0, 1.0, 5)
    sym_l, sym_dl, sym_f, sym_col = (np.broadcast_to(v, q.shape) for v in evaluate(q))
    num_l, num_dl = compensator.anchor_length(joint, q)
    assert np.all(np.isfinite(sym_col)) and np.all(np.isfinite(sym_f))
    np.testing.assert_allclose(sym_l, num_l, rtol=1e-12)
    np.testing.assert_allclose(sym_dl, num_dl, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sym_f, compensator.gas_force(num_l, 5e6, **GAS), rtol=1e-10)
    np.testing.assert_allclose(sym_col, compensator.gas_p0_column(num_l, num_dl, **GAS), rtol=1e-10, atol=1e-15)


def test_model_package_needs_no_sympy():
    probe = "import sys, robid.model.compensator; print('sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT)})
    assert out.stdout.strip() == "False"


def test_identification_side_never_imports_the_simulator():
    """The virtual robot is the independent oracle: identification, estimation and signals must not share its
    compensator (or anything else of it)."""
    offenders = []
    for package in ("identification", "estimation", "signals"):
        for path in sorted((ROOT / "robid" / package).rglob("*.py")):
            text = path.read_text()
            if "robid.simulation" in text or "from robid import simulation" in text:
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
