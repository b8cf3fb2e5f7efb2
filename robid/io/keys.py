"""The unknown-key check of every YAML reader (robot, campaign, mapping files): one message shape,
``FILE: FIELD: unknown field 'position' (did you mean 'positions'?; allowed: ...)``.

A leaf module like :mod:`robid.io.files`: any layer may use it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from robid.errors import RobidInputError


def unknown_field_message(key: object, allowed: Iterable[str]) -> str:
    """``unknown field 'x' (did you mean 'y'?; allowed: a, b, ...)`` -- the suggestion when one is close."""
    names = sorted(str(a) for a in allowed)
    close = difflib.get_close_matches(str(key), names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?; " if close else ""
    return f"unknown field {str(key)!r} ({hint}allowed: {', '.join(names)})"


def check_keys(data: Mapping, allowed: Iterable[str], where: str) -> None:
    """Refuse the first key of ``data`` (in sorted order) that is not ``allowed``; ``where`` names the file and
    the field path (``robot.yaml: joints[2].link``)."""
    allowed = set(allowed)
    unknown = sorted(str(k) for k in data if k not in allowed)
    if unknown:
        raise RobidInputError(f"{where}: {unknown_field_message(unknown[0], allowed)}")


def check_field_types(data: object, field, where: str) -> None:
    """Refuse a value whose kind the schema ``field`` (a :class:`robid.schemas.fields.Field`) and the fields below
    it exclude: a list or mapping where they say text or a number (a name, a title, a path), a scalar where they
    say a list or a mapping (``FILE: report.title: expected string, got a list``). Numbers and dates in a text
    field, and the values inside each kind, are left to the readers. Iterative, along the schema."""
    stack = [(data, field, "")]
    while stack:
        value, f, path = stack.pop()
        if f is None or value is None or "any" in f.types:
            continue
        types = set(f.types) - {"null"}
        problem = None
        if isinstance(value, dict | list) and types <= {"string", "number", "integer", "boolean", "quantity"}:
            problem = "a list" if isinstance(value, list) else "a mapping"
        elif isinstance(value, list) and "list" not in types:
            problem = "a list"
        elif isinstance(value, dict) and "mapping" not in types:
            problem = "a mapping"
        elif not isinstance(value, dict | list) and types <= {"list", "mapping"}:
            problem = f"{type(value).__name__} {value!r}"[:80]
        if problem:
            raise RobidInputError(f"{where}: {path or f.name}: expected {' or '.join(sorted(types))}, got {problem}")
        if isinstance(value, dict):
            for key, item in value.items():
                child = next((c for c in f.children if c.name == key), None) if f.children else f.values
                child = None if child is not None and child.applies else child  # a variant's: its reader checks
                stack.append((item, child, f"{path}.{key}" if path else str(key)))
        elif isinstance(value, list) and f.items is not None:
            stack.extend((item, f.items, f"{path}[{k}]") for k, item in enumerate(value))
