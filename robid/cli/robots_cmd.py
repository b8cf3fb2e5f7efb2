"""``robid robots``: list the built-in robots."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("robots", help="list the built-in robots", description="List the built-in robots.")
    p.set_defaults(func=run)


def run(args) -> int:
    from robid.model.loader import builtin_robot_names, builtin_robot_path
    from robid.model.yaml_reader import read_robot_yaml

    for name in builtin_robot_names():
        model = read_robot_yaml(builtin_robot_path(name))
        extras = []
        if model.is_elastic:
            extras.append("elastic joints")
        if any(j.compensator for j in model.joints):
            extras.append("gravity compensator")
        if model.is_closed:
            extras.append(f"closed chain ({len(model.chain.loops)} loop, {len(model.chain.passive)} passive joints)")
        kinds = "".join("R" if j.revolute else "P" for j in model.joints)
        suffix = f", {', '.join(extras)}" if extras else ""
        print(f"{name:22s} {model.dof} axes ({kinds}), {model.kinematics}{suffix}")
    return 0
