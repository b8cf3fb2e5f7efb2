"""Closed-form dynamics written by hand, for tests (independent of robid's code)."""

import numpy as np

#: planar 2R arm of Do (2021) section 3.2 as a robid file: gravity in the plane, standard DH, COM on the link
PLANAR_2R = """
robid: 1
name: planar2r
gravity: [0, -9.81, 0]
kinematics: dh
joints:
  - name: A1
    a: 0.4
    link: {mass: 20, com: [-0.2, 0, 0], inertia: [0.01, 0.2667, 0.2667, 0, 0, 0]}
  - name: A2
    a: 0.5
    link: {mass: 10, com: [-0.25, 0, 0], inertia: [0.01, 0.2083, 0.2083, 0, 0, 0]}
"""


def planar_2r_torque(q, qd, qdd):
    """Do (2021) eqs. 3.33-3.35 with the corrected M12 (reference notes 000, section 3.2), Lagrange by hand."""
    m1, m2, a1, x1, x2, i1, i2, g = 20, 10, 0.4, 0.2, 0.25, 0.2667, 0.2083, 9.81
    out = []
    for (q1, q2), (d1, d2), acc in zip(q, qd, qdd, strict=True):
        c2, s2 = np.cos(q2), np.sin(q2)
        m11 = i1 + i2 + m1 * x1**2 + m2 * (a1**2 + x2**2) + 2 * m2 * a1 * x2 * c2
        m12 = i2 + m2 * x2**2 + m2 * a1 * x2 * c2
        m22 = i2 + m2 * x2**2
        h = m2 * a1 * x2 * s2
        coriolis = np.array([-h * d2 * (2 * d1 + d2), h * d1**2])
        grav = np.array(
            [g * (m1 * x1 + m2 * a1) * np.cos(q1) + g * m2 * x2 * np.cos(q1 + q2), g * m2 * x2 * np.cos(q1 + q2)]
        )
        out.append(np.array([[m11, m12], [m12, m22]]) @ acc + coriolis + grav)
    return np.array(out)
