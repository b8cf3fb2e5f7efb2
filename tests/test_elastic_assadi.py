"""Assadi (2019) TX200 and KR90 with the rotors held: the model natural frequencies of Tables 4.5/4.6.

The acceptance of the elastic-joint issue: the locked-rotor modes of ``tx200_elastic`` and ``kr90_elastic``
reproduce the thesis' model frequencies within 1 % per mode at configurations 2 and 3, with the inputs of
reference notes 003 section 4.1(d): Tables 3.3/3.6 (base parameters), 4.3/4.4 (K, C), 4.1/4.2 (postures, as DH
angles) and the rotor inertias Mm1, Mm2 the notes calibrate on configuration 1.

References, none produced by the code under test:
* the printed model columns of Tables 4.5/4.6 (notes 003 section 3.6), and the damping within 0.3 points
  (notes 6.2, AT-4);
* the thesis' linearised model in closed form (eq 4.4-4.6): M0 = D(q0) - M_m with D(q) written in the base
  parameters psi (a Lagrange derivation from the modified DH of Table 2.1 with the grouping of Table 3.1, done
  with sympy outside robid; it reproduces the cfg-1 M0 the notes print, to their 0.1 kg m^2), K0 = K + dG/dq
  with G the gravity and compensator torques of Appendix B / eq 2.11, C0 = diag(C).

Two inputs of eq 4.6 as the notes evaluate it are not in robid's locked model, by design (docs/elastic.md):
the rotor-3 spin coupling r3 psi16 left in M0[1, 2] (rotors held do not spin) and the compensator's B2 cos 2q2
(robid's fourier compensator is odd about its symmetry angle). The tests show robid equals the closed form without
them to round-off, and print what each changes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import robid
from robid.cli import main
from robid.elastic import linearise, modal_analysis

G0 = 9.81
R3 = 100.0  # assumed gear ratio of axis 3 (the thesis gives none; notes AT-3)

ROBOTS = {
    "tx200_elastic": dict(
        a1=0.25, a2=0.95,  # Table 2.2
        psi=[919.09, 708.51, 253.51, -9.75, -315.85, -41.34, -38.95, -3.20, 132.10, 123.26, 2.75, -143.21,
             -8.89, -8.80, 1.13],  # Table 3.3 psi1..psi15
        psi16=0.0094, b=[2562.6, -85.45, 278.32],  # Table 3.3 psi16, B1..B3
        k=[1.95e6, 5.63e6, 1.13e6], c=[3.3e3, 0.3e3, 1.0e3],  # Table 4.3
        mm=[361.3, 356.1],  # notes 4.1(d), calibrated on cfg 1
        poses={1: (-91, 57, -84), 2: (-91, 27, -43), 3: (-91, 33, -71)},  # Table 4.1 (deg; q4..q6 frozen)
        # Table 4.5 model columns, per configuration: frequencies (Hz) and damping (%), in frequency order
        thesis={1: ((9.236, 12.48, 24.03), (4.8, 2.2, 2.8)), 2: ((7.46, 11.17, 29.19), (3.90, 1.66, 4.07)),
                3: ((8.09, 11.96, 25.42), (4.24, 1.97, 3.28))},
        # notes 4.1(d) "our f": the notes' own evaluation of eq 4.6 (with the r3 psi16 coupling and B2)
        notes={1: (9.24, 12.44, 24.04), 2: (7.47, 11.14, 29.27), 3: (8.10, 11.94, 25.40)},
        m0_cfg1=[[578.2, 31.4, -5.0], [31.4, 514.2, 147.9], [-5.0, 147.9, 132.1]],  # notes 4.1(d)
    ),
    "kr90_elastic": dict(
        a1=0.35, a2=1.35,  # Table 2.3
        psi=[1892.88, 1463.98, 653.48, 51.49, -652.62, 33.36, 80.92, -0.58, 163.97, 130.47, -2.78, -157.71,
             1.09, 3.04, -0.95],  # Table 3.6 psi1..psi15
        psi16=0.0112, b=[-7736.22, -80.29, 200.14],  # Table 3.6 psi16, B1..B3
        k=[3.12e6, 3.75e6, 2.98e6], c=[1.45e3, 1.1e3, 0.29e3],  # Table 4.4
        mm=[746.5, 807.9],  # notes 4.1(d), calibrated on cfg 1
        poses={1: (0, 70, -100), 2: (0, 135, -100), 3: (0, 135, -140)},  # Table 4.2
        # Table 4.6 model columns, put in frequency order (the table lists MAC-paired rows: cfg 2 is 14.6, 10.9,
        # 23.7 with damping 2.1, 1, 0.8; cfg 3 is 14.2, 13, 21.7 with 2, 1.3, 0.7)
        thesis={1: ((10.0, 11.0, 23.7), (1.4, 1.0, 0.8)), 2: ((10.9, 14.6, 23.7), (1.0, 2.1, 0.8)),
                3: ((13.0, 14.2, 21.7), (1.3, 2.0, 0.7))},
        notes={1: (10.00, 11.00, 23.69), 2: (10.95, 14.72, 23.69), 3: (13.06, 14.27, 21.61)},
        m0_cfg1=[[785.1, -29.8, 1.4], [-29.8, 751.5, 130.8], [1.4, 130.8, 164.0]],
    ),
}  # fmt: skip


def thesis_mass(r: dict, q, rotor_coupling: bool = True) -> np.ndarray:
    """M0 = D(q) - diag(Mm1, Mm2, r3^2 psi16) (eq 4.6) in the base parameters of Table 3.1; with
    ``rotor_coupling`` the rotor-3 terms eq 4.6 leaves in (psi16 on D22, r3 psi16 on D23)."""
    a1, a2 = r["a1"], r["a2"]
    p = [None, *r["psi"]]
    q2, q3 = q[1], q[2]
    c, s = np.cos, np.sin
    d11 = (p[1] + 2 * a1 * (p[10] * c(q2 + q3) - p[11] * s(q2 + q3) + p[3] * c(q2) - p[4] * s(q2))
           + a2 * (p[10] * (c(q3) + c(2 * q2 + q3)) - p[11] * (s(q3) + s(2 * q2 + q3)))
           + p[12] * (1 - c(2 * (q2 + q3))) / 2 - p[14] * s(2 * (q2 + q3))
           + p[5] * (1 - c(2 * q2)) / 2 - p[7] * s(2 * q2))  # fmt: skip
    d13 = -p[13] * s(q2 + q3) - p[15] * c(q2 + q3)
    d12 = d13 - p[6] * s(q2) - p[8] * c(q2)
    d23 = a2 * (p[10] * c(q3) - p[11] * s(q3)) + p[9]
    d22 = d23 + a2 * (p[10] * c(q3) - p[11] * s(q3)) + p[2]
    m = np.array([[d11 - r["mm"][0], d12, d13], [d12, d22 - r["mm"][1], d23], [d13, d23, p[9]]])
    if rotor_coupling:
        m[1, 1] += r["psi16"]
        m[1, 2] = m[2, 1] = d23 + R3 * r["psi16"]
    return m


def static_torque(r: dict, q, with_b2: bool = True) -> np.ndarray:
    """G(q) - tau_GC(q2): gravity (z0 up) and the compensator series of eq 2.11 on the tau_ext side."""
    p = [None, *r["psi"]]
    q2, q3 = q[1], q[2]
    g3 = G0 * (p[10] * np.cos(q2 + q3) - p[11] * np.sin(q2 + q3))
    orders = (1, 2, 3) if with_b2 else (1, 3)
    comp = sum(r["b"][n - 1] * np.cos(n * q2) for n in orders)
    return np.array([0.0, g3 + G0 * (p[3] * np.cos(q2) - p[4] * np.sin(q2)) - comp, g3])


def thesis_stiffness(r: dict, q, with_b2: bool = True, h: float = 1e-6) -> np.ndarray:
    """K0 = diag(K) + dG/dq (eq 4.6), dG/dq by central differences of the closed form."""
    q = np.asarray(q, dtype=float)
    kg = np.column_stack([(static_torque(r, q + h * e, with_b2) - static_torque(r, q - h * e, with_b2)) / (2 * h)
                          for e in np.eye(3)])  # fmt: skip
    return np.diag(r["k"]) + 0.5 * (kg + kg.T)


def thesis_modes(r: dict, q, rotor_coupling: bool = True, with_b2: bool = True):
    """Frequencies (Hz) and damping ratios (%) of eq 4.10-4.12 with the closed-form M0, C0, K0."""
    m, k, c = thesis_mass(r, q, rotor_coupling), thesis_stiffness(r, q, with_b2), np.diag(r["c"])
    a = np.block([[np.zeros((3, 3)), np.eye(3)], [-np.linalg.solve(m, k), -np.linalg.solve(m, c)]])
    ev = np.linalg.eigvals(a)
    ev = ev[ev.imag > 0]
    ev = ev[np.argsort(np.abs(ev))]
    return np.abs(ev) / (2 * np.pi), -100 * ev.real / np.abs(ev)


def pose(r: dict, cfg: int) -> np.ndarray:
    return np.radians(r["poses"][cfg])


@pytest.fixture(scope="module", params=sorted(ROBOTS))
def case(request):
    return request.param, ROBOTS[request.param], robid.load_robot(request.param)


def test_closed_form_reproduces_the_m0_the_notes_print(case):
    """The oracle itself: eq 4.6 as the notes evaluate it gives their cfg-1 M0 (printed to 0.1 kg m^2) and their
    frequencies (printed to 0.01 Hz; one digit of slack: TX200 cfg 1 mode 3 is 24.045 here, 24.04 there)."""
    _, r, _ = case
    np.testing.assert_allclose(thesis_mass(r, pose(r, 1)), r["m0_cfg1"], rtol=0, atol=0.051)
    for cfg, f_notes in r["notes"].items():
        np.testing.assert_allclose(thesis_modes(r, pose(r, cfg))[0], f_notes, rtol=0, atol=0.011)


def test_locked_model_equals_the_closed_form(case):
    """M_bar = M0 without the rotor-3 spin coupling, D_bar = diag(C), K_bar = K0 without B2; and the rigid model
    with rotors gives back the identified D(q) = M0 + diag(M_m) of Tables 3.3/3.6."""
    name, r, robot = case
    with_rotors = robid.load_robot(name, terms=("rigid", "rotor"))
    mm = np.array([*r["mm"], R3**2 * r["psi16"]])
    for cfg in (1, 2, 3):
        q = pose(r, cfg)
        lin = linearise(robot, q, "locked")
        assert lin.coordinates == ("q_J1", "q_J2", "q_J3")
        m0 = thesis_mass(r, q, rotor_coupling=False)
        np.testing.assert_allclose(lin.mass, m0, rtol=0, atol=1e-9 * np.abs(m0).max())
        np.testing.assert_allclose(lin.damping, np.diag(r["c"]), rtol=1e-12)
        k0 = thesis_stiffness(r, q, with_b2=False)
        np.testing.assert_allclose(lin.stiffness, k0, rtol=0, atol=1e-7 * np.abs(k0).max())
        d = with_rotors.inverse_dynamics(np.repeat(q[None], 3, 0), np.zeros((3, 3)), np.eye(3))
        d -= with_rotors.inverse_dynamics(q[None], np.zeros((1, 3)), np.zeros((1, 3)))
        np.testing.assert_allclose(d.T, m0 + np.diag(mm), rtol=0, atol=1e-9 * np.abs(m0).max())


def test_locked_frequencies_reproduce_tables_4_5_and_4_6(case):
    """The acceptance: every mode within 1 % at configurations 2 and 3 (1 is where Mm1, Mm2 were calibrated,
    checked too); damping within 0.3 points (notes AT-4). Prints robid against the thesis."""
    name, r, robot = case
    lines = [
        f"\n{name} (rotors held) vs Assadi Table {'4.5' if 'tx200' in name else '4.6'} model columns",
        "cfg mode  thesis Hz   robid Hz   dev %   eq4.6 Hz | thesis z %  robid z %",
    ]
    worst = {}
    for cfg in (1, 2, 3):
        q = pose(r, cfg)
        res = modal_analysis(robot, q, "locked")
        assert res.stable and len(res.frequencies_hz) == 3
        f, z = np.array(res.frequencies_hz), 100 * np.array(res.damping_ratios)
        f_thesis, z_thesis = (np.array(v) for v in r["thesis"][cfg])
        f_eq46 = thesis_modes(r, q)[0]
        dev = 100 * (f / f_thesis - 1)
        for i in range(3):
            lines.append(
                f"{cfg:>3} {i + 1:>4} {f_thesis[i]:9.3f} {f[i]:10.3f} {dev[i]:+7.2f} {f_eq46[i]:10.3f}"
                f" | {z_thesis[i]:10.2f} {z[i]:10.2f}"
            )
        worst[cfg] = (np.abs(dev).max(), np.abs(z - z_thesis).max())
    print("\n".join(lines))
    print("eq4.6 Hz: the thesis' eq 4.6 as the notes evaluate it (rotor-3 spin coupling r3 psi16, B2 kept)")
    for cfg, (df, dz) in worst.items():
        assert df < 1.0, f"{name} cfg {cfg}: frequency {df:.2f} % from the thesis"
        assert dz < 0.3, f"{name} cfg {cfg}: damping {dz:.2f} points from the thesis"


def test_what_robid_leaves_out_of_eq_4_6(case):
    """The two differences to eq 4.6 as evaluated by the notes, one at a time: B2 is negligible (< 0.003 %);
    the rotor-3 spin coupling moves the third mode by up to 0.7 % (the only visible difference)."""
    name, r, robot = case
    for cfg in (1, 2, 3):
        q = pose(r, cfg)
        f = np.array(modal_analysis(robot, q, "locked").frequencies_hz)
        np.testing.assert_allclose(f, thesis_modes(r, q, rotor_coupling=False, with_b2=False)[0], rtol=1e-9)
        b2 = np.abs(thesis_modes(r, q, rotor_coupling=False)[0] / f - 1).max()
        coupling = np.abs(thesis_modes(r, q, with_b2=False)[0] / f - 1)
        assert b2 < 3e-5
        assert coupling[:2].max() < 2e-3 and coupling[2] < 7e-3
        print(f"\n{name} cfg {cfg}: B2 moves {100 * b2:.4f} %, the r3 psi16 coupling {np.round(100 * coupling, 2)} %")


def test_cli_modal_locked_on_the_builtin_robot(capsys):
    assert main(["modal", "tx200_elastic", "--pose=-91deg,27deg,-43deg", "--motors", "locked", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["coordinates"] == ["q_J1", "q_J2", "q_J3"]
    np.testing.assert_allclose(out["frequencies_hz"], ROBOTS["tx200_elastic"]["thesis"][2][0], rtol=0.01)
    assert main(["modal", "tx200_elastic", "--pose=-91deg,27deg,-43deg"]) == 2  # no controller gains
    assert "--motors locked" in capsys.readouterr().err
