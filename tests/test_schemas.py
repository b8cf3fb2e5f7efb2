"""The typed file definitions (robid/schemas) against the readers, the docs and the committed JSON Schema files.

The readers' behaviour is the reference: every field of a definition is accepted by its reader (the full robot
example of docs/robot-file.md uses them all) and an unknown key is refused at every level; the built-in robots,
the shipped campaigns and mappings validate against the generated JSON Schema (checked by a small draft-07
validator written here, independent of the generator; the jsonschema package is not a dependency)."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from robid.errors import RobidInputError
from robid.io.keys import check_keys
from robid.schemas import SCHEMAS
from robid.schemas.fields import NO_DEFAULT, Says
from robid.schemas.generate import _doc_walk, doc_section, json_schema, json_text

ROOT = Path(__file__).resolve().parents[1]
ROBOT_DOC = ROOT / "docs" / "robot-file.md"


# ------------------------------------------------------------------------------------ a small draft-07 validator
def _type_ok(value, kind: str) -> bool:
    return {
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "null": value is None,
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, int | float) and not isinstance(value, bool),
    }[kind]


def errors(value, schema, path: str = "$") -> list[str]:
    """The violations of ``schema`` by ``value`` (the keywords the generator uses)."""
    if schema is True or schema == {}:
        return []
    if schema is False:
        return [f"{path}: not allowed"]
    out: list[str] = []
    if "type" in schema and not _type_ok(value, schema["type"]):
        return [f"{path}: expected {schema['type']}, got {value!r}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} not in {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} != {schema['const']!r}")
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        out.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if _type_ok(value, "number"):
        for key, bad in (("minimum", lambda v, b: v < b), ("maximum", lambda v, b: v > b),
                         ("exclusiveMinimum", lambda v, b: v <= b), ("exclusiveMaximum", lambda v, b: v >= b)):
            if key in schema and bad(value, schema[key]):
                out.append(f"{path}: {value} violates {key} {schema[key]}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            out.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            out.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for k, item in enumerate(value):
                out += errors(item, schema["items"], f"{path}[{k}]")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                out += errors(item, props[key], f"{path}.{key}")
            elif "additionalProperties" in schema:
                out += errors(item, schema["additionalProperties"], f"{path}.{key}")
        out += [f"{path}: missing {key}" for key in schema.get("required", []) if key not in value]
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            out.append(f"{path}: fewer than {schema['minProperties']} keys")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            out.append(f"{path}: more than {schema['maxProperties']} keys")
    for sub in schema.get("allOf", []):
        out += errors(value, sub, path)
    if "anyOf" in schema and all(errors(value, sub, path) for sub in schema["anyOf"]):
        out.append(f"{path}: matches none of anyOf")
    if "oneOf" in schema and sum(not errors(value, sub, path) for sub in schema["oneOf"]) != 1:
        out.append(f"{path}: does not match exactly one of oneOf")
    if "not" in schema and not errors(value, schema["not"], path):
        out.append(f"{path}: matches a 'not'")
    if "if" in schema and not errors(value, schema["if"], path):
        out += errors(value, schema.get("then", True), path)
    return out


def _validate(value, kind: str) -> list[str]:
    return errors(value, json_schema(SCHEMAS[kind]))


# ------------------------------------------------------------------------------------------------ helpers
def _example_text(kind: str = "") -> str:
    """The full example of docs/robot-file.md, or with ``kind="urdf "`` the example of a file with ``urdf``."""
    text = ROBOT_DOC.read_text()
    match = re.search(rf"<!-- robot-file {kind}example: begin -->\n```yaml\n(.*?)```", text, re.S)
    assert match, f"docs/robot-file.md: no robot-file {kind}example block"
    return match.group(1)


def _urdf_example(tmp_path: Path) -> Path:
    """The URDF example of docs/robot-file.md next to its URDF (tests/data/arm3_meshes.urdf as arm3.urdf)."""
    (tmp_path / "arm3.urdf").write_text((ROOT / "tests" / "data" / "arm3_meshes.urdf").read_text())
    path = tmp_path / "arm3.yaml"
    path.write_text(_example_text("urdf "))
    return path


def _paths(value, prefix: str = "") -> set[str]:
    """Dotted paths of every key in a loaded YAML document (``joints[].link.mass``)."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            out.add(path)
            out |= _paths(item, path)
    elif isinstance(value, list):
        for item in value:
            out |= _paths(item, f"{prefix}[]")
    return out


def _mappings(value, where: str = ""):
    """(path, dict) of every mapping inside a loaded document, to inject unknown keys into."""
    if isinstance(value, dict):
        yield where, value
        for key, item in value.items():
            yield from _mappings(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _mappings(item, f"{where}[{k}]")


def _definition_paths(kind: str) -> set[str]:
    """Paths of the definition as in _paths (list elements ``[]``; free names are not walked)."""
    return {p for p, _ in SCHEMAS[kind].root.walk() if ".*" not in p}


# -------------------------------------------------------------------- (1) readers and definitions agree
def test_the_full_robot_example_uses_every_field_of_the_definition():
    """The DH example uses every field but urdf and mjcf (they exclude each other; an mjcf file takes the same joint
    entries: tests/test_mjcf_robot_file.py) and the closed chains' (the loops example has them); the URDF example adds
    urdf."""
    example = yaml.safe_load(_example_text())
    urdf_example = yaml.safe_load(_example_text("urdf "))
    spring = {"joints[].compensator." + k for k in ("type", "base_point", "link_point", "stiffness", "free_length")}
    loops = _paths(yaml.safe_load(_example_text("loops "))) - _paths(example)  # the closed-chain example's fields
    assert loops == {"joints[].parent", "loops", "loops[].name", "loops[].kind", "loops[].passive", "loops[].close",
                     "loops[].close[].body", "loops[].close[].xyz"}
    assert _definition_paths("robot") == _paths(example) | spring | {"urdf", "mjcf"} | loops
    assert _paths(urdf_example) - _paths(example) == {"urdf"}
    assert "free_length" in ROBOT_DOC.read_text() and "type: spring" in ROBOT_DOC.read_text()


def test_the_urdf_joint_fields_are_the_definitions_and_the_reader_keeps_to_them(tmp_path):
    """A joint entry of a file with urdf takes every field of a DH joint but the placement ones (refused by
    name), and a DH file refuses urdf's companions the other way round (kinematics with urdf)."""
    from robid.model.yaml_reader import robot_from_dict
    from robid.schemas import robot as d

    assert set(d.URDF_JOINT_FIELDS) | set(d.DH_JOINT_FIELDS) == d.JOINT.keys()
    assert not set(d.URDF_JOINT_FIELDS) & set(d.DH_JOINT_FIELDS)
    assert set(d.DH_TOP_FIELDS) < d.ROBOT.keys()
    path = _urdf_example(tmp_path)
    example = yaml.safe_load(path.read_text())
    used = {key for entry in example["joints"] for key in entry}
    assert used <= set(d.URDF_JOINT_FIELDS)
    for key in d.DH_JOINT_FIELDS:
        data = copy.deepcopy(example)
        data["joints"][0][key] = d.JOINT.child(key).default
        with pytest.raises(RobidInputError, match=rf"joints\[0\]\.{key}: not with urdf"):
            robot_from_dict(data, str(path))
    for key in d.DH_TOP_FIELDS:
        data = dict(copy.deepcopy(example), **{key: "mdh"})
        with pytest.raises(RobidInputError, match=rf"{key}: not with urdf"):
            robot_from_dict(data, str(path))


def test_the_documented_urdf_example_loads_and_refuses_an_unknown_key_at_every_level(tmp_path):
    from robid.model.loader import read_robot
    from robid.model.yaml_reader import robot_from_dict

    path = _urdf_example(tmp_path)
    model = read_robot(path)
    fixture = read_robot(ROOT / "tests" / "data" / "arm3_urdf.yaml")
    assert model.joints == fixture.joints and model.gravity == fixture.gravity
    example = yaml.safe_load(path.read_text())
    assert not _validate(example, "robot")
    places = [where for where, _ in _mappings(example)]
    assert len(places) >= 10
    for where in places:
        data = copy.deepcopy(example)
        dict(_mappings(data))[where]["zz_unknown"] = 1
        with pytest.raises(RobidInputError, match=r"unknown field 'zz_unknown' \(allowed: "):
            robot_from_dict(data, str(path))


def test_the_robot_reader_refuses_an_unknown_key_at_every_level(tmp_path):
    from robid.model.yaml_reader import robot_from_dict

    example = yaml.safe_load(_example_text())
    places = [where for where, _ in _mappings(example)]
    assert len(places) > 25
    for where in places:
        data = copy.deepcopy(example)
        target = dict(_mappings(data))[where]
        target["zz_unknown"] = 1
        with pytest.raises(RobidInputError, match=r"unknown field 'zz_unknown' \(allowed: "):
            robot_from_dict(data, "ex.yaml")


def test_the_robot_reader_accepts_each_compensator_and_friction_variant_and_refuses_the_others():
    from robid.model.yaml_reader import robot_from_dict

    example = yaml.safe_load(_example_text())
    comp = SCHEMAS["robot"].root.at("joints[].compensator")
    for ctype in comp.child("type").enum:
        for other in comp.children:
            if other.applies and ctype not in other.applies:
                data = copy.deepcopy(example)
                c = data["joints"][1]["compensator"] if ctype == "gas" else data["joints"][3]["compensator"]
                if ctype == "spring":
                    continue  # the spring variant is checked through the docs snippet below
                c[other.name] = 1.0
                with pytest.raises(RobidInputError, match=rf"unknown field '{other.name}'"):
                    robot_from_dict(data, "ex.yaml")
    data = copy.deepcopy(example)
    data["joints"][1]["compensator"] = {"type": "spring", "base_point": [0.0, 0.3, 0.0],
                                        "link_point": [0.2, 0.0, 0.0], "stiffness": 2.0e5, "free_length": 0.9}
    assert robot_from_dict(data, "ex.yaml").joints[1].compensator.type == "spring"


def test_campaign_reader_keys_are_the_definition():
    import robid.campaign.campaign_file as reader
    from robid.schemas import campaign as d

    assert reader.TOP_KEYS == d.CAMPAIGN.keys()
    assert reader.MEASUREMENT_KEYS == {"simulate": {"simulate", "processing"},
                                       "file": {"file", "mapping", "trajectory", "processing"}}
    assert reader.SIMULATE_KEYS == {"trajectory", "periods", "noise", "seed", "rate", "q_noise", "tau_noise"}
    assert reader.TRAJECTORY_KEYS == {"spec", "file"}
    # processing and screening mirror dataclasses: same fields and defaults
    assert reader._processing_fields() - {"period"} == d.CAMPAIGN.child("processing").keys()
    assert reader._processing_fields() == d.MEASUREMENT.child("processing").keys()
    from robid.io.screening import ScreeningPolicy
    from robid.signals import ProcessingOptions

    for cls, block in ((ProcessingOptions, d.MEASUREMENT.child("processing")),
                       (ScreeningPolicy, d.CAMPAIGN.child("screening"))):
        for f in block.children:
            default = {fl.name: fl.default for fl in dataclasses.fields(cls)}[f.name]
            if cls is ProcessingOptions and f.name == "min_speed":  # campaigns use the commands' default
                from robid.defaults import DEFAULT_MIN_SPEED

                assert f.default == DEFAULT_MIN_SPEED and default is None
                continue
            if cls is ProcessingOptions and f.name == "decimate":  # "auto" in files is None in the library
                assert f.default == "auto" and default is None
                continue
            if f.default is NO_DEFAULT:
                assert default is None, f.name
            else:
                assert f.default == (list(default) if isinstance(default, tuple) else default), f.name
    from robid.simulation import NOISE_LEVELS

    assert set(d.SIMULATE.child("noise").enum) == set(NOISE_LEVELS)


def _campaign(tmp_path, **extra) -> dict:
    data = {"robid_campaign": 1, "name": "c", "robot": "puma560",
            "trajectories": {"ident": {"spec": {"harmonics": 5, "period": 10}}},
            "measurements": {"m1": {"simulate": {"trajectory": "ident"}}},
            "identification": {"measurements": ["m1"]}}
    data.update(extra)
    return data


@pytest.mark.parametrize("where, patch, message", [
    ("top", lambda d: d.update(measurments={}), r"c\.yaml: unknown field 'measurments' \(did you mean "
                                                 r"'measurements'\?; allowed: "),
    ("identification", lambda d: d["identification"].update(methods="wls"),
     r"c\.yaml: identification: unknown field 'methods' \(did you mean 'method'\?"),
    ("simulate", lambda d: d["measurements"]["m1"]["simulate"].update(period=2),
     r"measurements\.m1\.simulate: unknown field 'period' \(did you mean 'periods'\?"),
    ("measurement", lambda d: d["measurements"]["m1"].update(mapping="x.yaml"),
     r"measurements\.m1: unknown field 'mapping'"),
    ("report", lambda d: d.update(report={"titel": "x"}), r"report: unknown field 'titel' \(did you mean 'title'"),
])
def test_campaign_reader_refuses_unknown_keys_with_a_suggestion(tmp_path, where, patch, message):
    from robid.campaign.campaign_file import campaign_from_dict

    data = _campaign(tmp_path)
    assert campaign_from_dict(copy.deepcopy(data), tmp_path / "c.yaml").name == "c"
    assert not _validate(data, "campaign")
    patch(data)
    with pytest.raises(RobidInputError, match=message):
        campaign_from_dict(data, tmp_path / "c.yaml")
    assert _validate(data, "campaign"), where


def test_mapping_reader_keys_are_the_definition():
    import robid.io.mapping as reader
    from robid.schemas import mapping as d

    assert set(reader.GROUP_PREFIX) == set(d.SIGNALS)
    assert {k: set(v) for k, v in reader.UNITS.items()} == {k: set(v) for k, v in d.UNITS.items()}
    assert {k: v[0] for k, v in d.UNITS.items()} == reader.DEFAULT_UNIT
    assert reader._TOP_KEYS == d.MAPPING.keys()
    for signal in d.SIGNALS:
        assert d.MAPPING.child(signal).keys() == reader._PART_KEYS | reader._GROUP_KEYS
        assert d.MAPPING.at(f"{signal}.parts[]").keys() == reader._PART_KEYS
    assert d.MAPPING.child("time").keys() == reader._TIME_KEYS


def test_mapping_reader_suggests_the_field_meant():
    from robid.io.mapping import mapping_from_dict

    good = {"robid_mapping": 1, "time": {"column": 1}, "positions": {"columns": [2, 3]},
            "torques": {"columns": [4, 5], "unit": "Nm"}}
    assert mapping_from_dict(copy.deepcopy(good), "m.yaml").groups["positions"].parts[0].columns == (2, 3)
    assert not _validate(good, "mapping")
    bad = dict(good, position={"columns": [2]})
    with pytest.raises(RobidInputError, match=r"^m\.yaml: unknown field 'position' \(did you mean 'positions'\?; "
                                              r"allowed: .*design"):
        mapping_from_dict(bad, "m.yaml")
    bad = dict(good, positions={"colums": [2, 3]})
    with pytest.raises(RobidInputError, match=r"m\.yaml: positions: unknown field 'colums' \(did you mean"):
        mapping_from_dict(bad, "m.yaml")
    assert _validate(bad, "mapping")


def test_excitation_spec_reader_keys_are_the_definition():
    import robid.excitation.spec as reader
    from robid.schemas import excitation as d

    assert reader._KEYS == d.SPEC.keys()
    assert reader._LIMIT_KEYS == d.LIMITS.keys()
    assert reader._CART_KEYS == d.CARTESIAN.keys()
    spec = reader.spec_from_dict({"harmonics": 5, "period": 10})
    for f in d.SPEC.children:
        if f.default is not NO_DEFAULT and not isinstance(f.default, Says) and f.name != "limits":
            assert getattr(spec, f.name) == f.default, f.name


def test_excitation_spec_reader_accepts_raw_weight():
    from robid.excitation.spec import spec_from_dict

    assert spec_from_dict({"harmonics": 5, "period": 10, "criterion": "cond_both", "raw_weight": 2.0}).raw_weight == 2


def test_check_keys_message():
    with pytest.raises(RobidInputError, match=r"^f\.yaml: a: unknown field 'positon' \(did you mean 'position'\?; "
                                              r"allowed: position, velocity\)$"):
        check_keys({"positon": 1}, {"position", "velocity"}, "f.yaml: a")
    with pytest.raises(RobidInputError, match=r"^w: unknown field 'xyz' \(allowed: position, velocity\)$"):
        check_keys({"xyz": 1, "position": 2}, {"position", "velocity"}, "w")
    check_keys({"position": 1}, {"position"}, "w")


# --------------------------------------------------------------------------- (2) every field documented
@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_docs_field_tables_are_the_generated_ones(kind):
    schema = SCHEMAS[kind]
    text = (ROOT / schema.doc).read_text()
    assert doc_section(schema) in text, f"{schema.doc}: run python -m robid.schemas"
    for _, field in _doc_walk(schema.root, ""):  # the fields under a `see` are documented where it points
        if field.name:
            assert f"`{field.name}`" in text or f".{field.name}`" in text, (kind, field.name)


def test_user_docs_point_to_the_in_repo_file_references():
    for page in ("README.md", "docs/model.md", "docs/campaign.md"):
        text = (ROOT / page).read_text()
        assert "interfaces.md` section 1.1" not in text and "shared/guide/interfaces.md`. " not in text, page
    assert "docs/robot-file.md" in (ROOT / "README.md").read_text()
    assert "robot-file.md" in (ROOT / "docs/model.md").read_text()


# ------------------------------------------------------- (3) the example loads; shipped files validate
def test_the_documented_example_loads_with_the_robot_loader(tmp_path):
    from robid.model.loader import read_robot

    path = tmp_path / "example.yaml"
    path.write_text(_example_text())
    model = read_robot(path)
    assert [j.name for j in model.joints] == ["A1", "A2", "A3", "A4", "A5"]
    assert model.joints[0].link.inertia_com == (16.73, 29.80, 32.81, -1.70, 4.40, 0.13)
    assert model.joints[2].type == "prismatic" and model.joints[4].drive.coupling.joint == "A4"
    assert [j.friction.model for j in model.joints[:3]] == ["linear", "stribeck", "sigmoid"]
    assert not _validate(yaml.safe_load(_example_text()), "robot")


def _builtin_robots() -> list[Path]:
    return sorted((ROOT / "robid" / "model" / "robots").glob("*.yaml"))


@pytest.mark.parametrize("path", _builtin_robots(), ids=lambda p: p.stem)
def test_builtin_robots_validate_against_the_json_schema(path):
    assert _validate(yaml.safe_load(path.read_text()), "robot") == []


@pytest.mark.parametrize("kind, pattern", [
    ("campaign", "measurements/*/campaign.yaml"), ("campaign", "robid/campaign/demo.yaml"),
    ("campaign", "tests/data/campaign/*.yaml"), ("mapping", "examples/mappings/*.yaml"),
    ("mapping", "measurements/*/mapping.yaml"),
])
def test_shipped_files_validate_against_the_json_schema(kind, pattern):
    files = sorted(ROOT.glob(pattern))
    assert files, pattern
    for path in files:
        data = yaml.safe_load(path.read_text())
        if kind == "campaign" and "robid_campaign" not in data:
            continue
        assert _validate(data, kind) == [], path


@pytest.mark.parametrize("patch, message", [
    (lambda d: d["joints"][0]["limits"].update(positon=[0, 1]), "positon: not allowed"),
    (lambda d: d["joints"][1]["friction"].pop("static"), "missing static"),
    (lambda d: d["joints"][2]["friction"].update(coulomb=1.0), "coulomb: not allowed"),
    (lambda d: d["joints"][3]["compensator"].update(area=1.0), "area: not allowed"),
    (lambda d: d["joints"][0]["link"].update(inertia=[1, 1, 1]), "fewer than 6 items"),
    (lambda d: d["joints"][0].update(alpha="90 degrees"), "alpha: matches none"),
    (lambda d: d.update(kinematics="craig"), "not in ['dh', 'mdh']"),
])
def test_the_schema_refuses_what_the_reader_refuses(patch, message):
    from robid.model.yaml_reader import robot_from_dict

    data = yaml.safe_load(_example_text())
    patch(data)
    assert any(message in e for e in _validate(data, "robot")), _validate(data, "robot")
    with pytest.raises(RobidInputError):
        robot_from_dict(data, "ex.yaml")


# ------------------------------------------------------------- (4) committed schemas = the generator's
@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_committed_schema_files_are_the_generated_ones(kind):
    path = ROOT / "schemas" / f"{kind}.schema.json"
    assert path.read_text() == json_text(SCHEMAS[kind]), f"{path}: run python -m robid.schemas"


def test_schema_command_prints_the_committed_file(capsys):
    from robid.cli import main

    assert main(["schema", "mapping"]) == 0
    assert capsys.readouterr().out == (ROOT / "schemas" / "mapping.schema.json").read_text()
