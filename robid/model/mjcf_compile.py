"""Compile an MJCF file with MuJoCo itself, without the files dynamics never needs.

MuJoCo's own compiler resolves what an MJCF reader would otherwise have to re-implement: ``<default>`` classes and
``childclass``, ``<include>``, ``<frame>``, every orientation form (``quat``, ``euler`` with ``eulerseq``,
``axisangle``, ``xyaxes``, ``zaxis``), ``angle="degree"``, the inertia of a body without ``<inertial>`` from its
geoms (``inertiafromgeom``), ``autolimits``. The compiled ``MjModel`` is what ``mj_inverse`` uses, so the robot robid
builds from it is MuJoCo's robot to round-off.

Meshes, textures, height fields and skins are only needed to draw the model or for contacts, and vendor models
often ship without their mesh folder. Before compiling, the model specification (``MjSpec``) loses them where they
cannot change the dynamics: the mesh and height-field geoms of a body whose inertia is given explicitly (or of the
world body), every texture and skin. A body whose inertia MuJoCo infers from a mesh keeps it; if that mesh file is
missing the error names the body.
"""

from __future__ import annotations

from pathlib import Path

from robid.errors import RobidInputError


def _mujoco():
    try:
        import mujoco
    except ImportError as exc:  # pragma: no cover - a dependency of robid
        raise RobidInputError(f"reading MJCF needs the mujoco package ({exc}); pip install mujoco") from None
    return mujoco


def load_spec(path: Path):
    """The parsed ``MjSpec`` of an MJCF file (includes resolved); a parse error is one line naming the file."""
    mujoco = _mujoco()
    try:
        return mujoco.MjSpec.from_file(str(path))
    except ValueError as exc:
        raise RobidInputError(f"{path}: MuJoCo cannot read this MJCF file: {_first_line(exc)}") from None


def compile_mjcf(path: str | Path):
    """``(spec, model)``: the MJCF file parsed and compiled by MuJoCo, without the assets dynamics never needs
    (module docstring)."""
    path = Path(path)
    spec = load_spec(path)
    needs_geometry = _bodies_inferring_inertia(spec)
    _strip_drawing_assets(spec, needs_geometry)
    try:
        model = spec.compile()
    except ValueError as exc:
        message = _first_line(exc)
        hint = ""
        if "file" in message.lower() and needs_geometry:
            hint = (f" (bodies whose inertia MuJoCo computes from their geoms: {', '.join(sorted(needs_geometry))};"
                    " give them an <inertial> or provide the mesh files)")
        raise RobidInputError(f"{path}: MuJoCo cannot compile this model: {message}{hint}") from None
    return spec, model


def _bodies_inferring_inertia(spec) -> set[str]:
    """Names of the bodies whose inertia the compiler takes from their geoms (``inertiafromgeom`` true, or auto
    without an ``<inertial>``)."""
    mujoco = _mujoco()
    mode = spec.compiler.inertiafromgeom
    always = mode == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_TRUE
    never = mode == mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    out = set()
    for k, body in enumerate(spec.bodies):
        if k == 0 or never:  # the world body has no inertia
            continue
        if always or not body.explicitinertial:
            out.add(body.name or f"#{k}")
    return out


def _strip_drawing_assets(spec, needs_geometry: set[str]) -> None:
    """Delete what only drawing and contacts use, where it cannot change the dynamics (module docstring)."""
    mujoco = _mujoco()
    file_geoms = (mujoco.mjtGeom.mjGEOM_MESH, mujoco.mjtGeom.mjGEOM_HFIELD)
    for k, body in enumerate(spec.bodies):
        if (body.name or f"#{k}") in needs_geometry:
            continue
        for geom in [g for g in body.geoms if g.type in file_geoms]:
            spec.delete(geom)
    used_meshes = {g.meshname for g in spec.geoms if g.type == mujoco.mjtGeom.mjGEOM_MESH}
    used_fields = {g.hfieldname for g in spec.geoms if g.type == mujoco.mjtGeom.mjGEOM_HFIELD}
    for mesh in list(spec.meshes):
        if mesh.name not in used_meshes:
            spec.delete(mesh)
    for field in list(spec.hfields):
        if field.name not in used_fields:
            spec.delete(field)
    for material in spec.materials:
        material.textures = [""] * len(material.textures)
    for item in list(spec.textures) + list(spec.skins):
        spec.delete(item)


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return "; ".join(lines[:2]) if lines else type(exc).__name__
