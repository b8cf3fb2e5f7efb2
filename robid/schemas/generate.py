"""JSON Schema (draft-07, what editors' YAML support reads) and the docs' field tables, both from the typed
definitions of :mod:`robid.schemas` (a :class:`~robid.schemas.fields.FileSchema` per file kind)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from robid.schemas.fields import NO_DEFAULT, QUANTITY_PATTERN, Field, FileSchema, Says

DRAFT = "http://json-schema.org/draft-07/schema#"


# ------------------------------------------------------------------------------------------------ JSON Schema
def json_schema(schema: FileSchema) -> dict[str, Any]:
    """The JSON Schema of a file kind."""
    out: dict[str, Any] = {"$schema": DRAFT, "title": schema.title, "description": schema.description}
    out.update(_object(schema.root))
    return out


def json_text(schema: FileSchema) -> str:
    """The schema file's text: stable key order, two-space indent, a final newline."""
    return json.dumps(json_schema(schema), indent=2, ensure_ascii=False) + "\n"


def field_schema(field: Field) -> dict[str, Any]:
    branches = [_branch(field, t) for t in field.types]
    body = branches[0] if len(branches) == 1 else {"anyOf": branches}
    out: dict[str, Any] = {}
    text = _annotation(field)
    if text:
        out["description"] = text
    if field.default is not NO_DEFAULT and not isinstance(field.default, Says):
        out["default"] = field.default
    out.update(body)
    return out


def _annotation(field: Field) -> str:
    parts = [field.description] if field.description else []
    if field.unit and field.unit != "1":
        parts.append(f"Unit: {field.unit}.")
    if field.frame:
        parts.append(f"Frame: {field.frame}.")
    if isinstance(field.default, Says):
        parts.append(f"Default: {field.default}.")
    return " ".join(parts)


def _bounds(field: Field) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (("minimum", field.minimum), ("maximum", field.maximum),
                       ("exclusiveMinimum", field.exclusive_minimum), ("exclusiveMaximum", field.exclusive_maximum)):
        if value is not None:
            out[key] = value
    return out


def _branch(field: Field, kind: str) -> dict[str, Any]:
    if kind in ("number", "integer"):
        out: dict[str, Any] = {"type": kind, **_bounds(field)}
        values = [v for v in field.enum if isinstance(v, int | float) and not isinstance(v, bool)]
        if values:
            out["enum"] = values
        return out
    if kind == "string":
        values = [v for v in field.enum if isinstance(v, str)]
        return {"type": "string", "enum": values} if values else {"type": "string"}
    if kind == "boolean":
        return {"type": "boolean"}
    if kind == "null":
        return {"type": "null"}
    if kind == "quantity":
        return {"anyOf": [{"type": "number", **_bounds(field)}, {"type": "string", "pattern": QUANTITY_PATTERN}]}
    if kind == "list":
        out = {"type": "array"}
        if field.items is not None:
            out["items"] = field_schema(field.items)
        if field.length is not None:
            out["minItems"] = out["maxItems"] = field.length
        elif field.min_items is not None:
            out["minItems"] = field.min_items
        return out
    if kind == "mapping":
        return _object(field)
    return {}


def _object(field: Field) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    if field.children:
        out["properties"] = {c.name: field_schema(c) for c in field.children}
        out["additionalProperties"] = False
        required = [c.name for c in field.children if c.required and not c.applies]
        if required:
            out["required"] = required
    elif field.values is not None:
        out["additionalProperties"] = field_schema(field.values)
    if field.exactly_one:
        out["minProperties"] = out["maxProperties"] = 1
    rules = _variant_rules(field)
    if rules:
        out["allOf"] = rules
    if field.keyed_variants:
        out["oneOf"] = [{"required": [v]} for v in field.keyed_variants]
    return out


def _variant_rules(field: Field) -> list[dict[str, Any]]:
    """if/then per variant: the fields of other variants are refused, the variant's required ones required."""
    if field.discriminator:
        disc = field.child(field.discriminator)
        conditions = {}
        for value in disc.enum:
            cond: dict[str, Any] = {"properties": {disc.name: {"const": value}}, "required": [disc.name]}
            if disc.default == value:
                cond = {"anyOf": [cond, {"not": {"required": [disc.name]}}]}
            conditions[value] = cond
    elif field.keyed_variants:
        conditions = {v: {"required": [v]} for v in field.keyed_variants}
    else:
        return []
    rules = []
    for variant, cond in conditions.items():
        then: dict[str, Any] = {}
        refused = [c.name for c in field.children if c.applies and variant not in c.applies]
        required = [c.name for c in field.children if c.applies and variant in c.applies and c.required]
        if refused:
            then["properties"] = {name: False for name in refused}
        if required:
            then["required"] = required
        if then:
            rules.append({"if": cond, "then": then})
    return rules


# ----------------------------------------------------------------------------------------------- docs tables
BEGIN = "<!-- BEGIN generated by python -m robid.schemas: {kind} fields -->"
END = "<!-- END generated: {kind} fields -->"


def markdown_table(schema: FileSchema) -> str:
    """One row per field, dotted paths (``joints[].link.mass``; ``<name>`` a name of the user's choice)."""
    lines = ["| field | type | unit | default | meaning |", "|---|---|---|---|---|"]
    for path, field in _doc_walk(schema.root, ""):
        lines.append(f"| `{path}` | {_type_text(field)} | {_cell(field.unit)} | {_default_text(field)} | "
                     f"{_meaning(field)} |")
    return "\n".join(lines)


def _doc_walk(field: Field, prefix: str):
    for child in field.children:
        path = f"{prefix}.{child.name}" if prefix else child.name
        yield path, child
        if not child.see:
            yield from _doc_inside(child, path)


def _doc_inside(field: Field, path: str):
    if field.children:
        yield from _doc_walk(field, path)
    if field.items is not None and not field.items.see:
        yield from _doc_inside(field.items, f"{path}[]")
    if field.values is not None:
        yield from _doc_inside(field.values, f"{path}.<name>")


def _type_text(field: Field) -> str:
    out = []
    for kind in field.types:
        if kind == "list":
            size = f" {field.length}" if field.length is not None else ""
            inner = " or ".join(_PLURAL.get(k, k) for k in field.items.types) if field.items is not None else ""
            out.append(f"list of{size} {inner}" if inner else "list")
        elif kind == "mapping" and field.values is not None:
            out.append("mapping of names")
        elif kind in ("string", "integer") and field.enum:
            out.append(" \\| ".join(f"`{v}`" for v in field.enum))
        else:
            out.append(kind)
    return " or ".join(out)


_PLURAL = {"number": "numbers", "integer": "integers", "string": "strings", "boolean": "booleans",
           "quantity": "quantities", "list": "lists", "mapping": "mappings", "null": "null", "any": "values"}


def _default_text(field: Field) -> str:
    if field.required and not field.applies:
        return "**required**"
    if field.required:
        return f"**required** ({', '.join(field.applies)})"
    if field.default is NO_DEFAULT:
        return ""
    if isinstance(field.default, Says):
        return f"_{_cell(field.default)}_"
    return f"`{json.dumps(field.default)}`"


def _meaning(field: Field) -> str:
    parts = [field.description]
    if field.frame:
        parts.append(f"Frame: {field.frame}.")
    if field.applies:
        parts.append(f"Only with {', '.join(field.applies)}.")
    if field.see:
        parts.append(f"Fields: {field.see}.")
    return _cell(" ".join(p for p in parts if p))


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def doc_section(schema: FileSchema) -> str:
    """The generated block of the docs page, markers included."""
    return "\n".join([BEGIN.format(kind=schema.kind), markdown_table(schema), END.format(kind=schema.kind)])


def replace_doc_section(text: str, schema: FileSchema) -> str:
    """``text`` with its generated block of ``schema`` replaced (ValueError when the markers are missing)."""
    pattern = re.compile(re.escape(BEGIN.format(kind=schema.kind)) + r".*?" + re.escape(END.format(kind=schema.kind)),
                         re.S)
    if not pattern.search(text):
        raise ValueError(f"{schema.doc}: no generated {schema.kind} section (markers {BEGIN.format(kind=schema.kind)})")
    return pattern.sub(lambda _: doc_section(schema), text, count=1)


def write_all(root: Path, docs: bool = True) -> list[Path]:
    """Write ``schemas/<kind>.schema.json`` under ``root`` and, with ``docs``, refresh the generated tables of the
    docs pages; returns the files whose content changed."""
    from robid.schemas import SCHEMAS

    changed = []
    for schema in SCHEMAS.values():
        target = root / "schemas" / f"{schema.kind}.schema.json"
        changed += _write_if_changed(target, json_text(schema))
        if docs:
            page = root / schema.doc
            changed += _write_if_changed(page, replace_doc_section(page.read_text(), schema))
    return changed


def _write_if_changed(path: Path, text: str) -> list[Path]:
    if path.exists() and path.read_text() == text:
        return []
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return [path]
