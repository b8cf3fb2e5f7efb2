"""``robid model ROBOT [--json]``: parameter counts, base parameters and identifiability classes."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser(
        "model",
        help="derive the regressor: standard and base parameters, classes",
        description="Derive (or load from the cache) the regressor of ROBOT and print its standard and base "
        "parameters, the base parameter expressions and the identifiability class of every standard parameter.",
    )
    p.add_argument("robot", metavar="ROBOT",
                   help="robot file (.yaml, .urdf; docs/robot-file.md) or built-in robot name (robid robots)")
    p.add_argument("--json", action="store_true", help="print the model as JSON: dof, standard_parameters, "
                   "base_parameters (name, expression), classes, exact, terms, operation_counts (and operations "
                   "with --ops)")
    p.add_argument(
        "--ops",
        action="store_true",
        help="also count the operations of each generated program (multiplications, additions, total; "
        "El-Rayyes 1990 convention, docs/model.md 'Operation counts'): inverse dynamics, base inverse dynamics, "
        "regressor, base regressor with the parameters as inputs, and the inverse dynamics with the nominal "
        "parameters folded (customised Newton-Euler, a few seconds); with --json under the key 'operations'",
    )
    p.add_argument(
        "--terms",
        help="comma-separated model terms (rigid, rotor, viscous, coulomb, offset, and compensator, stiffness, damping "
        "where the robot file has them; docs/robot-file.md); default: all that apply",
    )
    p.set_defaults(func=run)


def run(args) -> int:
    import robid
    from robid import progress

    terms = tuple(t.strip() for t in args.terms.split(",")) if args.terms else None
    if not args.json:
        progress.show_steps()
    robot = robid.load_robot(args.robot, terms=terms)
    base = robot.base_parameters()
    names = robot.parameter_names
    classes = {n: base.classes[n] for n in names}
    operations = _operations(robot) if args.ops else None
    if args.json:
        print(json.dumps(_model_json(robot, classes, operations), indent=1))
        return 0
    counts = {c: sum(1 for v in classes.values() if v == c) for c in ("identifiable", "grouped", "unidentifiable")}
    print(f"robot: {robot.name} ({robot.dof} joints, {robot.model.kinematics}), terms: {', '.join(robot.terms)}")
    print(f"standard parameters: {len(names)}    base parameters: {len(base.names)}"
          f" ({'exact' if base.exact else 'floating-point'} grouping)")
    from robid.identification.choices import term_lines

    for line in term_lines(robot):  # a requested term that cannot apply, a built-in model with more terms
        print(f"note: {line}")
    print(
        f"classes: {counts['identifiable']} identifiable, {counts['grouped']} grouped,"
        f" {counts['unidentifiable']} unidentifiable"
    )
    print("\nbase parameters:")
    width = max(len(n) for n in base.names)
    for n, e in zip(base.names, base.expressions, strict=True):
        print(f"  {n:{width}s} = {e}")
    print("\nunidentifiable: " + (", ".join(n for n in names if classes[n] == "unidentifiable") or "none"))
    ops = robot.meta["operation_counts"]
    print(
        "\ngenerated code (mult/add): "
        + ", ".join(f"{k} {v['mul']}/{v['add']}" for k, v in ops.items())
    )
    if operations is not None:
        _print_operations(robot, operations)
    return 0


def _model_json(robot, classes: dict, operations: dict | None) -> dict:
    """What ``robid model --json`` prints."""
    base = robot.base_parameters()
    out = {
        "dof": robot.dof,
        "standard_parameters": robot.parameter_names,
        "base_parameters": [
            {"name": n, "expression": e} for n, e in zip(base.names, base.expressions, strict=True)
        ],
        "classes": classes,
        "exact": base.exact,
        "terms": list(robot.terms),
        "operation_counts": robot.meta["operation_counts"],
    }
    if operations is not None:
        out["operations"] = {name: c.as_dict() for name, c in operations.items()}
    return out


def _print_operations(robot, operations: dict) -> None:
    """The operation counts per sample of every generated program (``robid model --ops``)."""
    print("\noperations per sample (multiplications + additions = total; sin/cos of joint angles are inputs):")
    width = max(len(k) for k in operations)
    for name, c in operations.items():
        calls = f", {c.calls} calls" if c.calls else ""
        print(f"  {name:{width}s}  {c.mul:5d} + {c.add:5d} = {c.total:5d}{calls}")
    if "inverse_dynamics_folded" not in operations and robot.model.chain is not None:
        print("  (a general planar loop: these are the tree's programs, projected numerically after the loop "
              "closure; no folded inverse dynamics)")
    elif "inverse_dynamics_folded" not in operations:
        print("  (no folded inverse dynamics for the elastic layout: its joint torques need the motor states)")


def _operations(robot) -> dict:
    """Counts of the four generated programs and of the inverse dynamics with the nominal parameters folded in
    its base-parameter form (robid.symbolic.operations); the folded one is left out for the elastic layout and for
    a general planar loop (closed numerically: its generated programs are the tree's, docs/model.md)."""
    from robid.symbolic.derive import base_equivalent_values
    from robid.symbolic.operations import customised_operations, generated_operations

    out = generated_operations(robot.meta["operation_counts"])
    numeric_loops = robot.model.chain is not None and robot.model.chain.relation is None
    if not robot.motor_joints and not numeric_loops:
        base = robot.base_parameters()
        values = base_equivalent_values(len(robot.parameter_names), base.indices, base.values(robot.parameters))
        out["inverse_dynamics_folded"] = customised_operations(robot.model, robot.terms, values)
    return out
