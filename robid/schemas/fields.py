"""The typed description of robid's input files: one :class:`Field` per key, with its type, unit, frame, default
and meaning. The readers take their allowed keys from it, the JSON Schema files and the field tables of the docs
are generated from it (:mod:`robid.schemas.generate`), so the three cannot drift apart.

A leaf module: it imports nothing of robid.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


#: a field without a default (required, or absent means "not given")
NO_DEFAULT: Any = _NoDefault()

class Says(str):
    """A default that is a rule, not a value ("the file name", "zeros"): documented, not written to JSON Schema."""


#: the types a field may have; a union is written with ``|`` ("string|list")
TYPES = ("number", "integer", "string", "boolean", "quantity", "list", "mapping", "null", "any")

#: a number with an optional unit, as robid.model.units.parse_quantity reads it ("90deg", "250mm", "180deg/s")
QUANTITY_PATTERN = r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*((deg|rad|mm|m)(/[a-zA-Z0-9^/]*)?)?\s*$"


@dataclass(frozen=True)
class Field:
    """One key of a file.

    ``type``: one of :data:`TYPES` or a union ``a|b``; ``quantity`` is a number in SI units or a string with a
    unit (robot and SPEC files). A ``mapping`` is closed: its ``children`` are the only keys allowed, unless it
    has ``values`` (a mapping of free names, e.g. trajectory names, each a ``values``) or neither (any keys).
    ``items``: the element of a ``list``; ``length``: its exact length. ``applies``: the variants the field
    belongs to (empty: all) -- the value of the parent's ``discriminator`` field, or with ``keyed_variants`` the
    key that selects the variant (``simulate`` or ``file`` of a campaign measurement). ``required``: required
    wherever the field applies. ``exactly_one``: a mapping with exactly one of its keys. ``see``: where the
    docs table sends the reader instead of listing the children again.
    """

    name: str
    type: str
    description: str
    unit: str = ""
    frame: str = ""
    default: Any = NO_DEFAULT
    required: bool = False
    enum: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    children: tuple[Field, ...] = ()
    items: Field | None = None
    values: Field | None = None
    length: int | None = None
    min_items: int | None = None
    applies: tuple[str, ...] = ()
    discriminator: str = ""
    keyed_variants: tuple[str, ...] = ()
    exactly_one: bool = False
    see: str = ""  # the docs table points here instead of listing the children

    def __post_init__(self) -> None:
        for part in self.type.split("|"):
            if part not in TYPES:
                raise ValueError(f"field {self.name!r}: unknown type {part!r}")
        names = [c.name for c in self.children]
        if len(set(names)) != len(names):
            raise ValueError(f"field {self.name!r}: duplicate child names {names}")

    @property
    def types(self) -> tuple[str, ...]:
        return tuple(self.type.split("|"))

    def keys(self, variant: str | None = None) -> set[str]:
        """The keys of this mapping; with ``variant``, those that apply to it."""
        return {c.name for c in self.children if variant is None or not c.applies or variant in c.applies}

    def ordered_keys(self, variant: str | None = None) -> tuple[str, ...]:
        return tuple(c.name for c in self.children if variant is None or not c.applies or variant in c.applies)

    def child(self, name: str) -> Field:
        for c in self.children:
            if c.name == name:
                return c
        raise KeyError(f"{self.name}: no field {name!r}")

    def at(self, path: str) -> Field:
        """The field at a dotted path: ``joints[].link``, ``measurements.*.simulate`` (``[]`` a list element,
        ``*`` a value of a mapping of free names)."""
        field = self
        for token in path.replace("[]", ".[]").split("."):
            if not token:
                continue
            if token == "[]":
                if field.items is None:
                    raise KeyError(f"{field.name}: not a list")
                field = field.items
            elif token == "*":
                if field.values is None:
                    raise KeyError(f"{field.name}: not a mapping of names")
                field = field.values
            else:
                field = field.child(token)
        return field

    def walk(self, prefix: str = ""):
        """(dotted path, field) of every field below this one, depth first, in declaration order."""
        for c in self.children:
            path = f"{prefix}.{c.name}" if prefix else c.name
            yield path, c
            yield from _walk_inside(c, path)


def _walk_inside(field: Field, path: str):
    if field.children:
        yield from field.walk(path)
    if field.items is not None:
        yield from _walk_inside(field.items, f"{path}[]")
    if field.values is not None:
        yield from _walk_inside(field.values, f"{path}.*")


@dataclass(frozen=True)
class FileSchema:
    """A file kind: its root mapping, title, the docs page that documents it and a short example."""

    kind: str
    title: str
    root: Field
    doc: str  # docs/<file>.md, relative to the repository
    description: str = ""


def quantity(name: str, description: str, unit: str, **kwargs: Any) -> Field:
    return Field(name, "quantity", description, unit=unit, **kwargs)


def vector3(name: str, description: str, unit: str, **kwargs: Any) -> Field:
    return Field(name, "list", description, unit=unit, length=3, items=Field("", "quantity", "", unit=unit), **kwargs)


def mapping(name: str, description: str, *children: Field, **kwargs: Any) -> Field:
    return Field(name, "mapping", description, children=children, **kwargs)


def names_list(name: str, description: str, **kwargs: Any) -> Field:
    return Field(name, "list", description, items=Field("", "string", ""), **kwargs)
