"""A copy of the robot's own MJCF file with the identified inertials, armature, damping and frictionloss
(:mod:`robid.export.mjcf_writer` says what is written and why; docs/export.md, "MJCF").

The robot's MJCF is the file itself (``robid identify arm.xml``) or the ``mjcf:`` of a robot file that starts from
one. Its bodies are matched with MuJoCo's compiled bodies by their depth-first order (``<frame>`` is transparent,
``<include>`` files are inlined first); the match is checked with every body name, and a model whose bodies MuJoCo
generates (``<replicate>``, ``<attach>``, composites) is refused rather than guessed at.

Asset paths (meshes, textures) are relative to the model's folder in MJCF; :func:`relocate_assets` rewrites the
compiler's ``meshdir`` and ``texturedir`` so that a copy written to another folder still finds them.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

from robid.errors import RobidInputError, RobidOptionError
from robid.export.mjcf_writer import (
    _INERTIA_COMPILER_OPTIONS,
    _comment,
    _Inertial,
    _inertial_values,
    _raised_lines,
    _set_inertial,
    _set_joint,
    _text,
)
from robid.io.files import read_text
from robid.model.mjcf_compile import compile_mjcf
from robid.model.mjcf_reader import object_name, serial_chain
from robid.model.robot_model import RobotModel

_ZERO = _Inertial(0.0, (0.0, 0.0, 0.0), (0.0,) * 6, ())
#: elements whose bodies MuJoCo generates or brings from elsewhere: the copy cannot match them one to one
_GENERATING = ("replicate", "attach", "composite", "flexcomp")


def source_mjcf(model: RobotModel) -> Path | None:
    """The MJCF file a robot was read from: the file itself, or the ``mjcf:`` of its robot file; else None."""
    if model.kinematics != "mjcf" or not model.source:
        return None
    source = Path(model.source)
    if source.suffix.lower() in (".yaml", ".yml") and source.is_file():
        from robid.io.files import read_yaml

        data = read_yaml(source)
        if isinstance(data, dict) and isinstance(data.get("mjcf"), str):
            path = Path(data["mjcf"]).expanduser()
            return path if path.is_absolute() else source.parent / path
        return None
    return source if source.is_file() else None


def _parse(path: Path) -> ET.Element:
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    try:
        return ET.fromstring(read_text(path), parser=parser)
    except ET.ParseError as exc:
        raise RobidInputError(f"{path}: malformed XML ({exc})") from None


def _inline_includes(element: ET.Element, folder: Path, depth: int = 0) -> None:
    """Replace every ``<include file>`` by the children of the included file's ``<mujoco>`` (as MuJoCo does; the
    path is relative to the main model's folder)."""
    for k, child in reversed(list(enumerate(element))):
        if child.tag == "include":
            if depth > 20:
                raise RobidInputError(f"{folder}: <include> nested more than 20 deep")
            path = Path(child.get("file", ""))
            included = _parse(path if path.is_absolute() else folder / path)
            _inline_includes(included, folder, depth + 1)
            element.remove(child)
            for offset, grandchild in enumerate(list(included)):
                element.insert(k + offset, grandchild)
        elif isinstance(child.tag, str):
            _inline_includes(child, folder, depth)


def _bodies(element: ET.Element) -> list[ET.Element]:
    """The ``<body>`` elements below ``element`` in depth-first order, through ``<frame>``."""
    out = []
    for child in element:
        if child.tag == "body":
            out.append(child)
            out += _bodies(child)
        elif child.tag == "frame":
            out += _bodies(child)
    return out


def _world_bodies(root: ET.Element, compiled, where: str) -> list[ET.Element]:
    """The file's bodies in MuJoCo's order (index = body id - 1), checked against the compiled model."""
    generating = sorted({e.tag for e in root.iter() if e.tag in _GENERATING})
    if generating:
        raise RobidOptionError(None, f"{where}: uses <{'>, <'.join(generating)}>, which make bodies MuJoCo generates: "
                              "export-model {format} mjcf cannot match them; flatten the model first "
                              "(mujoco.MjSpec.from_file(...).to_xml())")
    bodies = [b for world in root.findall("worldbody") for b in _bodies(world)]
    if len(bodies) != compiled.nbody - 1:
        raise RobidInputError(f"{where}: {len(bodies)} <body> elements but MuJoCo compiles {compiled.nbody - 1} "
                              "bodies: cannot match them for the copy")
    for k, element in enumerate(bodies):
        expected = object_name(compiled, "body", k + 1)
        if element.get("name", "") != expected:
            raise RobidInputError(f"{where}: body {k + 1} is {element.get('name', '')!r} in the file but "
                                  f"{expected!r} in MuJoCo's model: cannot match them for the copy")
    return bodies


def _joint_element(body: ET.Element) -> ET.Element:
    """The body's own ``<joint>`` (directly in it or in one of its frames)."""
    for child in body:
        if child.tag == "joint":
            return child
        if child.tag == "frame":
            found = [e for e in child.iter("joint")]
            if found:
                return found[0]
    raise RobidInputError("no <joint> element in a moving body")  # MuJoCo compiled one: cannot happen


def _neutralise_compiler(root: ET.Element) -> list[str]:
    """Remove the compiler options that would change the written inertials; the removed ones, for the header."""
    removed = []
    for compiler in root.iter("compiler"):
        for key in _INERTIA_COMPILER_OPTIONS:
            if key in compiler.attrib:
                removed.append(f'{key}="{compiler.attrib.pop(key)}"')
        if compiler.get("inertiafromgeom") == "true":
            compiler.set("inertiafromgeom", "auto")
            removed.append('inertiafromgeom="true" (now auto)')
    return removed


def mjcf_copy_with_model(source: Path, model: RobotModel, header: str = "") -> str:
    """The MJCF ``source`` with the identified values of ``model`` (read from that file, then identified): module
    docstring."""
    source = Path(source)
    where = str(source)
    root = _parse(source)
    if root.tag != "mujoco":
        raise RobidInputError(f"{where}: root element must be <mujoco>, got <{root.tag}>")
    _inline_includes(root, source.parent)
    _, compiled = compile_mjcf(source)
    chain = serial_chain(compiled, where)
    bodies = _world_bodies(root, compiled, where)
    joints = {j.name: j for j in model.joints}
    if set(joints) != set(chain.names):
        raise RobidInputError(f"{where}: the identified model's joints ({', '.join(joints)}) are not the file's "
                              f"({', '.join(chain.names)})")
    values = []
    for k, name in enumerate(chain.names):
        body = bodies[chain.bodies[k] - 1]
        values.append(_inertial_values(joints[name]))
        _set_inertial(body, values[-1])
        for merged in chain.merged[k]:
            _set_inertial(bodies[merged - 1], _ZERO)
            bodies[merged - 1].insert(0, ET.Comment(f" inertial merged into body of joint {name} by robid "))
        _set_joint(_joint_element(body), joints[name])
    removed = _neutralise_compiler(root)
    lines = [header] if header else []
    lines += _raised_lines(values)
    if removed:
        lines.append(f"Removed compiler options that would change the identified inertials: {', '.join(removed)}.")
    root.insert(0, _comment("\n".join(lines)))
    return _text(root)


def relocate_assets(text: str, source_folder: Path, out_folder: Path) -> str:
    """``text`` (an MJCF whose relative asset paths start at ``source_folder``) with the compiler's ``meshdir`` and
    ``texturedir`` rewritten to start at ``out_folder``; unchanged when the folders are the same or no asset
    names a file."""
    source_folder, out_folder = Path(source_folder).resolve(), Path(out_folder).resolve()
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(text, parser=parser)
    if source_folder == out_folder or not any(isinstance(e.tag, str) and e.get("file") for e in root.iter()):
        return text
    compilers = list(root.iter("compiler"))
    settings: dict[str, str] = {}
    for compiler in compilers:
        settings.update({k: v for k, v in compiler.attrib.items() if k in ("assetdir", "meshdir", "texturedir")})
    if not compilers:
        compilers = [ET.Element("compiler")]
        root.insert(1, compilers[0])
    for compiler in compilers:
        compiler.attrib.pop("assetdir", None)
    for key in ("meshdir", "texturedir"):
        given = settings.get(key, settings.get("assetdir", ""))
        folder = Path(given) if Path(given).is_absolute() else source_folder / given
        for compiler in compilers[1:]:
            compiler.attrib.pop(key, None)
        compilers[0].set(key, os.path.relpath(folder, out_folder))
    return _text(root)


def mjcf_text(robot_model: RobotModel, identified: RobotModel, header_lines, names, values) -> str:
    """``robid export-model --format mjcf``: a copy of the robot's MJCF when it came from one, else a generated
    MJCF; the header says what was identified and what MJCF cannot hold (``names``/``values``: the standard set)."""
    from robid.export.mjcf_writer import mjcf_from_model, not_in_mjcf

    header = "\n".join([*header_lines, *not_in_mjcf(identified, names, values),
                        "Inertials: pos = COM, fullinertia = Ixx Iyy Izz Ixy Ixz Iyz about it; armature = reflected "
                        "rotor inertia Ia, damping = viscous fv, frictionloss = Coulomb fc (a soft constraint in "
                        "MuJoCo: fc sign(qd) away from velocity reversals)."])
    source = source_mjcf(robot_model)
    if source is not None:
        return mjcf_copy_with_model(source, identified, header)
    return mjcf_from_model(identified, header)
