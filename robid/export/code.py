"""Standalone feed-forward source of an identified model: inverse dynamics with the identified values folded in,
and the base regressor, as one numpy module or one C file.

The symbolic stage derives the torques once more with the exported values folded in as exact rationals of their
doubles (the setting of El-Rayyes 1990, Tables 4.2/4.3: geometry and mass data numeric, constants folded): the
customised Newton-Euler program of :func:`robid.symbolic.derive.folded_program` (base-parameter form, zero terms
pruned, CLEAR-like passes; the program `robid model --ops` counts), beside the base regressor's columns from
their own CSE. The sources need nothing but numpy (Python) or libm (C):

* Python: ``inverse_dynamics(q, qd, qdd) -> (N, dof)``, ``base_regressor(q, qd, qdd) -> (N, dof, nb)``,
  ``BASE_NAMES``, ``BASE_VALUES`` (``tau = base_regressor(...) @ BASE_VALUES``);
* C: ``void <prefix>_inverse_dynamics(const double *q, const double *qd, const double *qdd, long n,
  double *tau)`` and ``<prefix>_base_regressor(..., double *y)`` on row-major (n, dof) and (n, dof, nb) arrays,
  and ``<prefix>_base_values[nb]``.

Coulomb friction uses sign(qd); identification and ``robid predict`` use its expected value given the velocity
noise (robid.identification.coulomb), which equals sign(qd) beyond a few noise levels of the velocity. A
controller that needs a smooth sign should replace it. A joint friction model that is not linear (Stribeck,
sigmoids, position ripple: chosen and adopted by identification) is added by ``friction_excess(q, qd)`` (Python)
or ``static <prefix>_friction_excess`` (C), which ``inverse_dynamics`` calls; the base regressor stays the linear
part (``inverse_dynamics = base_regressor @ BASE_VALUES + friction_excess``; robid.export.friction_source).
The elastic layout (motor rows) is not exported: its feed-forward needs the motor-side reference
(``robid export --motor-side``).
"""

from __future__ import annotations

import numpy as np

from robid.errors import RobidInputError, RobidOptionError
from robid.io.escaping import c_comment, check_identifier, python_docstring, python_string
from robid.model.robot_model import RobotModel


def _program(model: RobotModel, terms: tuple[str, ...], values, base_indices):
    """The optimised program with the outputs ``("tau", i)`` (values folded) and the base regressor columns."""
    from robid.symbolic.derive import folded_program
    from robid.symbolic.terms import motor_symbols

    if motor_symbols(model, terms):
        raise RobidOptionError(None,
            "export-model {format} python|c: the elastic layout (terms with 'stiffness') has no joint-torque "
            "feed-forward; export the motor-side reference with 'robid export {motor_side}'"
        )
    prog, symbols = folded_program(model, terms, values, with_columns=True)
    offsets = [j.geometry.angle_offset if j.revolute else 0.0 for j in model.joints]
    return prog, symbols, offsets, list(base_indices)


def python_source(model, terms, values, base_indices, base_names, base_values, header: str) -> str:
    """The standalone numpy module (module docstring); ``header`` opens its docstring."""
    from robid.export.friction_source import python_friction_source
    from robid.symbolic.codegen import numpy_function

    prog, symbols, offsets, indices = _program(model, terms, values, base_indices)
    folded, ops = numpy_function("_folded_inverse_dynamics", prog, symbols, offsets, torque_output="tau")
    regressor, _ = numpy_function("base_regressor", prog, symbols, offsets, columns=indices)
    doc = header.rstrip() + (
        "\n\nq, qd, qdd: (N, dof) arrays in rad, rad/s, rad/s^2 (m, m/s, m/s^2 for prismatic joints), joint order "
        f"{', '.join(model.joint_names)}.\ninverse_dynamics: {ops['mul']} multiplications, {ops['add']} additions "
        f"and {ops['call']} function calls per sample.\n"
    )
    names = ", ".join(python_string(n) for n in base_names)
    numbers = ",\n    ".join(repr(float(v)) for v in base_values)
    return (
        f'"""{python_docstring(doc)}"""\n\nimport numpy as np\n\n'
        f"BASE_NAMES = ({names},)\n"
        f"BASE_VALUES = np.array([\n    {numbers},\n])\n\n\n"
        "def inverse_dynamics(q, qd, qdd):\n"
        '    """(N, dof) joint torques (N m, N) of the identified model; one sample (dof,) gives (dof,)."""\n'
        "    single = np.ndim(q) == 1\n"
        "    q, qd = np.atleast_2d(q), np.atleast_2d(qd)\n"
        "    tau = _folded_inverse_dynamics(q, qd, np.atleast_2d(qdd), ()) + friction_excess(q, qd)\n"
        "    return tau[0] if single else tau\n\n\n"
        + python_friction_source(model) + "\n\n" + folded + "\n\n" + regressor
    )


def c_source(model, terms, values, base_indices, base_names, base_values, header: str, prefix: str) -> str:
    """The standalone C file (module docstring); ``header`` becomes its leading comment."""
    from robid.export.friction_source import c_friction_source
    from robid.symbolic.ccode import c_torque_function, portable_c_function

    check_identifier(prefix, "export-model: --prefix")
    prog, symbols, offsets, indices = _program(model, terms, values, base_indices)
    lead = c_comment(header)
    nb, dof = len(base_values), model.dof
    values_text = ",\n    ".join(
        f"{float(v)!r} /* {c_comment(n, lead='')} */" for n, v in zip(base_names, base_values, strict=True)
    )
    return (
        f"/*\n{lead}\n *\n * {prefix}_inverse_dynamics: tau (n, {dof}) of q, qd, qdd (n, {dof}), row-major, SI units;"
        f"\n * {prefix}_base_regressor: y (n, {dof}, {nb}), tau = y . {prefix}_base_values.\n"
        f"{c_comment('joints: ' + ', '.join(model.joint_names))}\n */\n"
        "#include <math.h>\n\n"
        f"const long {prefix}_dof = {dof};\nconst long {prefix}_nb = {nb};\n"
        f"const double {prefix}_base_values[{nb}] = {{\n    {values_text}\n}};\n\n"
        + c_friction_source(model, f"{prefix}_friction_excess") + "\n"
        + "static " + c_torque_function(f"{prefix}_linear_inverse_dynamics", prog, symbols, offsets, "tau")
        + "\n"
        + f"void {prefix}_inverse_dynamics(const double *q, const double *qd, const double *qdd, long n, "
          "double *tau) {\n"
        + f"    {prefix}_linear_inverse_dynamics(q, qd, qdd, n, tau);\n"
        + f"    {prefix}_friction_excess(q, qd, n, tau);\n}}\n\n"
        + portable_c_function(f"{prefix}_base_regressor", prog, symbols, offsets, indices)
    )


def check_values(values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(v)):
        raise RobidInputError("export-model: the standard set has non-finite values")
    return v
