"""Frequency response functions (robid.elastic.frf): direct inverse against modal superposition of the state-space
model, the static limit, the flange Jacobian against the closed form of the planar 2R, resonance peaks at the modal
frequencies."""

from __future__ import annotations

import numpy as np
import pytest

from robid.elastic.frf import flange_jacobian, frequency_response, joint_receptance
from robid.elastic.modal import linearise, modal_analysis
from robid.model.loader import read_robot

POSE = (0.4, 1.1)


def superposition(lin, frequencies_hz):
    """G(s) = C V diag(1 / (s - lambda)) V^-1 B of the state space x' = A x + B f, y = C x (eigen-expansion)."""
    m = lin.mass.shape[0]
    inv_m = np.linalg.inv(lin.mass)
    a = np.block([[np.zeros((m, m)), np.eye(m)], [-inv_m @ lin.stiffness, -inv_m @ lin.damping]])
    b = np.vstack([np.zeros((m, m)), inv_m])
    lam, v = np.linalg.eig(a)
    left = v[:m]
    right = np.linalg.solve(v, b)
    return np.array([left @ np.diag(1.0 / (2j * np.pi * f - lam)) @ right for f in frequencies_hz])


def test_joint_receptance_equals_modal_superposition_and_static_compliance():
    model = read_robot("do_2r_elastic")
    lin = linearise(model, POSE, "controlled")
    freqs = np.linspace(0.0, 40.0, 81)
    g = joint_receptance(lin, freqs)
    ref = superposition(lin, freqs)
    assert np.abs(g - ref).max() < 1e-9 * np.abs(ref).max()
    np.testing.assert_allclose(g[0].real, np.linalg.inv(lin.stiffness), rtol=1e-12, atol=1e-15)


def test_flange_jacobian_of_the_planar_2r_is_the_closed_form():
    model = read_robot("do_2r_elastic")
    q1, q2 = POSE
    a1, a2 = 0.4, 0.5
    s1, c1, s12, c12 = np.sin(q1), np.cos(q1), np.sin(q1 + q2), np.cos(q1 + q2)
    closed = np.array([[-a1 * s1 - a2 * s12, -a2 * s12], [a1 * c1 + a2 * c12, a2 * c12], [0.0, 0.0]])
    np.testing.assert_allclose(flange_jacobian(model, POSE), closed, atol=1e-9)


def test_flange_receptance_peaks_at_the_modes():
    model = read_robot("do_2r_elastic")
    modes = modal_analysis(model, POSE, "controlled")
    freqs = np.linspace(0.5, 60.0, 6000)
    frf = frequency_response(model, POSE, freqs, "controlled")
    magnitude = np.abs(frf.flange[:, 0, 0]) + np.abs(frf.flange[:, 1, 1])
    peaks = [i for i in range(1, freqs.size - 1) if magnitude[i] > magnitude[i - 1] and magnitude[i] > magnitude[i + 1]]
    assert peaks
    for i in peaks:  # every resonance peak sits at a lightly damped mode (within the peak shift of its damping)
        near = min(modes.frequencies_hz, key=lambda f: abs(f - freqs[i]))
        zeta = modes.damping_ratios[modes.frequencies_hz.index(near)]
        assert abs(freqs[i] / near - 1) < max(2 * zeta**2, 0.01), (freqs[i], near, zeta)
    # reciprocity: the flange receptance is symmetric
    assert np.abs(frf.flange - np.transpose(frf.flange, (0, 2, 1))).max() < 1e-12 * np.abs(frf.flange).max()


def test_modal_command_adds_the_frf(capsys):
    import json

    from robid.cli import main

    assert main(["modal", "do_2r_elastic", "--pose", "0.4,1.1", "--frf", "0,40,50", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["frf"]["frequencies_hz"]) == 50 and len(out["frf"]["flange_magnitude_m_per_n"][0]) == 3
    assert main(["modal", "do_2r_elastic", "--pose", "0.4,1.1", "--frf", "0,40"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("robid: error: --frf") and "Traceback" not in err


def test_modal_command_refuses_an_infinite_frf_band_and_names_motor_states(capsys):
    import warnings

    import robid
    from robid.cli import main
    from robid.errors import RobidInputError

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["modal", "do_2r_elastic", "--pose", "0.4,1.1", "--frf", "0,inf,10"]) == 2
    assert capsys.readouterr().err.startswith("robid: error: --frf")
    robot = robid.load_robot("do_2r_elastic", terms=("rigid", "rotor", "stiffness"))
    q = np.zeros((3, 2))
    with pytest.raises(RobidInputError, match="theta"):
        robot.regressor(q, q, q, motor=(q[:, :1], q, q))
