"""Resolve a ROBOT argument: a YAML robot file (DH, modified DH, or starting from a URDF or an MJCF file with
``urdf:`` / ``mjcf:``), a URDF file, an MJCF file (``.xml``, MuJoCo), or the name of a built-in robot."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from robid.errors import RobidInputError
from robid.model.robot_model import RobotModel
from robid.model.urdf_reader import read_robot_urdf
from robid.model.yaml_reader import read_robot_yaml


def builtin_robot_names() -> list[str]:
    folder = resources.files("robid.model") / "robots"
    return sorted(p.name[: -len(".yaml")] for p in folder.iterdir() if p.name.endswith(".yaml"))


def builtin_robot_path(name: str) -> Path:
    return Path(str(resources.files("robid.model") / "robots" / f"{name}.yaml"))


def read_robot(robot: str | Path) -> RobotModel:
    text = str(robot)
    path = Path(text)
    if path.suffix.lower() in (".yaml", ".yml"):
        if not path.exists():
            raise RobidInputError(f"{path}: no such robot file")
        return read_robot_yaml(path)
    if path.suffix.lower() == ".urdf":
        if not path.exists():
            raise RobidInputError(f"{path}: no such URDF file")
        return read_robot_urdf(path)
    if path.suffix.lower() in (".xml", ".mjcf"):
        if not path.exists():
            raise RobidInputError(f"{path}: no such MJCF file")
        from robid.model.mjcf_reader import read_robot_mjcf

        return read_robot_mjcf(path)
    if text in builtin_robot_names():
        return read_robot_yaml(builtin_robot_path(text))
    raise RobidInputError(
        f"{text}: not a robot file (.yaml, .urdf, .xml MJCF) nor a built-in robot "
        f"(built-in: {', '.join(builtin_robot_names())})"
    )
