"""What identification chooses where the caller left it open, and why: the layout, the estimator and the friction
models (docs/interfaces.md section 4: with no options ``robid identify`` takes the best path the robot file and the
data allow, and says what it chose). Each choice is one line for the record's ``choices`` and the command line.

* **Layout.** A robot whose file declares springs (``elasticity`` blocks) is identified in the elastic layout
  (terms ``stiffness`` and ``damping``, and ``link_viscous`` where the file gives one: link rows and motor rows,
  docs/elastic.md section 3) when every
  identification file measures the motor positions (``theta1..``, or a mapping's ``motor_positions``); without
  them the rigid layout is all the data allow, and the line names the springs left out. Terms given by the caller
  (``--terms``, a campaign's ``terms``, ``load_robot(..., terms=...)``) are kept as given.
* **Estimator** ``auto``: ``eiv`` in the elastic layout -- the spring and damping columns are differences of two
  encoders' processed signals, whose noise biases least squares and makes its independent-row covariance too
  small (docs/elastic.md section 3, docs/estimation.md "Errors in variables"); ``wls`` elsewhere (two-step
  per-joint weights, the rows' correlation by the filter counted).
* **Terms that cannot apply** (:func:`term_lines`): a requested rotor term on joints without a drive (a URDF or
  MJCF file declares none) adds no parameter there; the line says so and how to provide the drives (a robot file
  on the URDF, ``urdf: arm.urdf`` with a ``drive`` per joint, docs/robot-file.md "Starting from a URDF"). A
  stiffness term without motor positions is refused by the data sets with the columns it needs. When a built-in
  model of the same robot (same name, same number of joints) has terms this one lacks, the line names them: the
  URDF of the UR10e gives 54 base parameters where the built-in ``ur10e`` gives 58 with its rotor inertias.
* **Friction models** ``auto``: linear, Stribeck and sigmoid compared per joint
  (robid.identification.friction_selection) when the layout is rigid, the joints have their own viscous and
  Coulomb parameters, the estimator is ``wls`` (whose values the joint fit of the chosen models replaces) and the
  stacked problem has at most :data:`FRICTION_AUTO_ROWS` used rows; otherwise the line says why not and how to
  ask for it.
"""

from __future__ import annotations

from pathlib import Path

from robid.defaults import EIV, FRICTION_MODELS_AUTO, PERIODIC, WLS
from robid.estimation.nonlinear_friction import FRICTION_CANDIDATES
from robid.robot import Robot

#: (sample, joint) rows up to which the friction models are compared by default: the comparison refits the whole
#: problem about a dozen times (benchmarks/RESULTS.md, "friction model selection": its share of identify's time)
FRICTION_AUTO_ROWS = 150_000

#: friction terms: any robot can have them (a caller who leaves one out chose to)
FRICTION_TERMS = ("viscous", "coulomb", "offset")

#: the terms the elastic layout adds to the robot's default terms
ELASTIC_LAYOUT_TERMS = ("stiffness", "damping")


def chosen_layout(robot: Robot, files, options) -> tuple[Robot, str | None]:
    """(the robot identification uses, the line that says which layout and why; None when the caller gave the
    terms or the robot has no springs). ``options``: robid.identification.IdentificationOptions."""
    model = robot.model
    if getattr(robot, "terms_given", True) or not model.is_elastic or options.static_deflection:
        return robot, None
    springs = ", ".join(j.name for j in model.joints if j.elasticity is not None)
    if options.motor_encoders_only:
        return _elastic(robot), (f"layout: elastic (springs of {springs}; --motor-encoders-only: the link states "
                                 "are reconstructed from the motor encoders)")
    missing = [str(f) for f in files if "motor_positions" not in _groups(f, options)]
    if missing:
        return robot, (f"layout: rigid -- the robot file declares springs on {springs}, but {missing[0]} has no "
                       "motor positions (theta1.., or a mapping's motor_positions): stiffness and damping left out; "
                       "measure the motor encoders too, or give --terms")
    elastic = _elastic(robot)
    extra = ", link viscous friction" if "link_viscous" in elastic.terms else ""
    return elastic, (f"layout: elastic (springs declared on {springs}, motor positions measured): link and motor "
                     f"rows with stiffness, damping{extra}")


def term_lines(robot: Robot) -> list[str]:
    """Lines for what the robot's terms cannot give (module docstring): rotor terms on joints without a drive,
    and the terms a built-in model of the same robot has beyond this one's."""
    model = robot.model
    source = Path(model.source).name if model.source else model.name
    lines = []
    rotor = [t for t in robot.terms if t in ("rotor", "rotor_coupled")]
    without = [j.name for j in model.joints if j.drive is None]
    if rotor and without:
        which = "any joint" if len(without) == len(model.joints) else ", ".join(without)
        lines.append(f"terms: {rotor[0]} asked for, but {source} declares no drive on {which}: no reflected rotor "
                     "inertia (Ia_J) there; to identify it, give a robot file on it with a drive per joint "
                     f"(urdf: {source} and joints: [{{name: ..., drive: {{gear_ratio: ..., rotor_inertia: ...}}}}], "
                     "docs/robot-file.md \"Starting from a URDF\")")
    lines += _builtin_line(robot, source)
    return lines


def _builtin_line(robot: Robot, source: str) -> list[str]:
    """The line naming the terms a built-in model of the same robot (name and joint count) has beyond ``robot``'s;
    none for a built-in robot itself or when it has no more."""
    from robid.model.loader import builtin_robot_names, builtin_robot_path, read_robot
    from robid.model.terms import default_terms

    model = robot.model

    def key(name: str) -> str:
        return "".join(c for c in name.lower() if c.isalnum())

    names = [n for n in builtin_robot_names() if key(n) == key(model.name)]
    if not names or (model.source and Path(model.source).resolve() == builtin_robot_path(names[0]).resolve()):
        return []
    builtin = read_robot(names[0])
    if builtin.dof != model.dof:
        return []
    # the terms a robot file must declare data for (drives, compensators, couplings), which this one cannot have
    extra = [t for t in default_terms(builtin) if t not in default_terms(model) and t not in FRICTION_TERMS]
    if not extra:
        return []
    what = {"rotor": f"rotor (the reflected rotor inertia of its {sum(j.drive is not None for j in builtin.joints)} "
                     "drives)", "compensator": "compensator (its gravity compensator)",
            "drive_coupling": "drive_coupling (a motor turning two joints)"}
    return [f"model: the built-in robot {names[0]} has terms {source} lacks: "
            + ", ".join(what.get(t, t) for t in extra)
            + f"; identify with ROBOT {names[0]}, or add them in a robot file on {source}"]


def _elastic(robot: Robot) -> Robot:
    """The robot in the elastic layout: its terms with stiffness and damping, and link_viscous where the robot
    file gives a link-side viscous friction (a term the file declares is one the model must carry)."""
    link = any(j.elasticity is not None and j.elasticity.link_viscous for j in robot.model.joints)
    return Robot(robot.model, tuple(robot.terms) + ELASTIC_LAYOUT_TERMS + (("link_viscous",) if link else ()))


def _groups(source, options) -> frozenset[str]:
    from robid.io.measurement_file import measured_groups

    path = getattr(source, "path", source)
    return measured_groups(Path(path), options.mapping_for(source))


def resolved_method(robot: Robot, options, datasets=None) -> tuple[str, str | None]:
    """(the estimator, the line that says why; None when the caller named it). In the elastic layout ``auto``
    needs the processed runs (``datasets``): eiv where every run took the averaged periodic path with every torque
    harmonic (what its covariance needs), else wls with a line that says its std are too small there; before the
    runs are processed it stays ``auto``."""
    if options.method != "auto":
        return options.method, None
    if not robot.motor_joints or options.motor_encoders_only:
        return WLS, "method: wls (auto) -- two-step per-joint weights (--method overrides)"
    if datasets is None:
        return "auto", None
    averaged = all(d.processed.mode == PERIODIC and options.processing_for(d.source).torque_band == "all"
                   for d in datasets)
    if averaged:
        return EIV, ("method: eiv (auto) -- the elastic layout's spring, damping and acceleration columns carry "
                      "the encoders' noise; least squares corrected for it, with a covariance that counts the rows "
                      "correlated within the period (--method overrides)")
    return WLS, ("method: wls (auto) -- the elastic layout on runs that are not averaged periodic ones: eiv's "
                  "covariance needs whole periods; wls's std of the spring and damping parameters are too small "
                  "here (noise in their columns; docs/elastic.md section 3)")


def friction_candidates(robot: Robot, options, method: str, rows: int, streamed: bool) -> tuple[tuple, str | None]:
    """(the friction models to compare, the line that says why; None when the caller named them or switched the
    comparison off). ``rows``: the stacked problem's used rows; ``streamed``: the runs were kept compactly."""
    asked = options.friction_models
    if asked != FRICTION_MODELS_AUTO:
        return tuple(asked), None
    how = "ask for it with --friction-models linear,stribeck,sigmoid"
    names = robot.base_parameters().names
    own = [j for j in robot.joint_names if f"fv_{j}" in names and f"fc_{j}" in names]
    if robot.motor_joints or options.motor_encoders_only:
        reason = "the elastic layout (the comparison is for one row per joint)"
    elif not own:
        return (), None
    elif method != WLS:
        reason = f"--method {method} (the chosen models would be fitted by wls)"
    elif streamed:
        reason = "a long non-periodic record kept on the streamed path"
    elif rows > FRICTION_AUTO_ROWS:
        reason = f"{rows} rows (more than {FRICTION_AUTO_ROWS})"
    else:
        return FRICTION_CANDIDATES, (f"friction models: {', '.join(FRICTION_CANDIDATES)} compared per joint (auto; "
                                     "--friction-models none switches it off)")
    return (), f"friction models: linear only, not compared: {reason}; {how}"
