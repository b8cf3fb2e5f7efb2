"""Source of the nonlinear part of an exported model's joint friction: what each joint's friction model adds to the
linear fv qd + fc sign(qd) + f0 of the base parameters (robid.model.robot_model.Friction.excess), for the
standalone feed-forward modules of robid.export.code.

Per joint J with s = sign(qd_J) (docs/model.md "Joint friction"):

* Stribeck:  (fs - fc) s exp(-(qd_J / vs)^2);
* sigmoids:  sum_k (a_k / 2) [tanh(b_k (qd_J + c_k) / 2) - tanh(b_k c_k / 2)]  (Gaz et al. 2019, eq. 3);
* ripple:    sum_h (frc_h cos(h q_J) + frs_h sin(h q_J)) s.

Numbers are written with ``repr`` (every double exactly); a joint whose friction is linear adds nothing, and a
model without any nonlinear joint gets a function that returns zeros (Python) or leaves tau as it is (C).
"""

from __future__ import annotations

from robid.model.robot_model import RobotModel


def _terms(model: RobotModel, sign: str, exp: str, tanh: str, cos: str, sin: str, qd: str, q: str) -> list[
        tuple[int, str]]:
    """(joint row, expression) of every nonlinear friction term, in a language given by its function names and
    the joint's velocity and position expressions (``{j}`` replaced by the row)."""
    out = []
    for j, joint in enumerate(model.joints):
        f = joint.friction
        v, x = qd.format(j=j), q.format(j=j)
        s = sign.format(v=v)
        if f.model == "stribeck":
            out.append((j, f"{float(f.static - f.coulomb)!r} * {s} * {exp}(-({v} / {float(f.stribeck_velocity)!r}) "
                           f"* ({v} / {float(f.stribeck_velocity)!r}))"))
        for g in f.sigmoids:
            a, b, c = float(g.amplitude), float(g.slope), float(g.offset)
            out.append((j, f"{0.5 * a!r} * ({tanh}({0.5 * b!r} * ({v} + {c!r})) - {tanh}({0.5 * b * c!r}))"))
        if f.ripple is not None:
            for h, a, b in zip(f.ripple.harmonics, f.ripple.cos, f.ripple.sin, strict=True):
                out.append((j, f"({float(a)!r} * {cos}({int(h)} * {x}) + {float(b)!r} * {sin}({int(h)} * {x})) * {s}"))
    return out


def python_friction_source(model: RobotModel) -> str:
    """``friction_excess(q, qd) -> (N, dof)`` for the numpy module."""
    terms = _terms(model, "np.sign({v})", "np.exp", "np.tanh", "np.cos", "np.sin", "qd[:, {j}]", "q[:, {j}]")
    lines = [
        "def friction_excess(q, qd):",
        '    """(N, dof) what the joints\' nonlinear friction models add to fv qd + fc sign(qd) + f0 (Stribeck, '
        'sigmoids, ripple)."""',
        "    q = np.atleast_2d(np.asarray(q, dtype=float))",
        "    qd = np.atleast_2d(np.asarray(qd, dtype=float))",
        "    out = np.zeros_like(qd)",
    ]
    lines += [f"    out[:, {j}] += {e}" for j, e in terms]
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def c_friction_source(model: RobotModel, name: str) -> str:
    """``static void name(const double *q, const double *qd, long n, double *tau)``: adds the nonlinear friction
    to tau (n, dof) row-major."""
    dof = model.dof
    sign = "(double)(({v} > 0.0) - ({v} < 0.0))"
    terms = _terms(model, sign, "exp", "tanh", "cos", "sin", "qdk[{j}]", "qk[{j}]")
    lines = [f"static void {name}(const double *q, const double *qd, long n, double *tau) {{"]
    if not terms:
        lines += ["    (void)q; (void)qd; (void)n; (void)tau;", "}"]
        return "\n".join(lines) + "\n"
    lines += [
        "    for (long k = 0; k < n; ++k) {",
        f"        const double *qk = q + {dof} * k, *qdk = qd + {dof} * k;",
        f"        double *tauk = tau + {dof} * k;",
        "        (void)qk;",
    ]
    lines += [f"        tauk[{j}] += {e};" for j, e in terms]
    lines += ["    }", "}"]
    return "\n".join(lines) + "\n"


def has_nonlinear_friction(model: RobotModel) -> bool:
    return any(not j.friction.is_linear for j in model.joints)
