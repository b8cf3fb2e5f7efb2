"""Frozen dataclass records to JSON-ready plain data and back, driven by the fields' type annotations.

Plain data are what :func:`json.dumps` writes: dict, list, str, int, float, bool, None. Supported field types:
``str``, ``int``, ``float``, ``bool``, ``X | None``, ``tuple[X, ...]``, ``tuple[X, Y]``, ``dict[str, X]``,
``typing.Any`` (a JSON value, passed through) and nested dataclasses.

A record never holds NaN or infinity (JSON has neither): a quantity that is not available is ``None``, and
:func:`to_plain` refuses a non-finite float, naming the field. Floats are written by ``repr``, so a record read
back from its JSON equals the record written.

Field metadata (``dataclasses.field(metadata=...)``):

* ``"json"``: the key in the JSON object when it differs from the field name (``class`` is a Python keyword);
* ``"omit_none"``: leave the key out when the value is None (reading a missing key gives the default);
* ``"extra"``: a ``tuple[tuple[str, float | None], ...]`` field that holds the numeric keys of the JSON object
  that are not fields (e.g. reference columns such as ``truth`` beside a parameter's ``value``).

A class may define ``_derived_plain(self) -> dict``: keys computed from its fields, added when writing and
skipped (listed in ``_DERIVED_KEYS``) when reading. Keys that are neither fields nor derived are ignored when
reading, so that a reader of schema 1.x reads a file of a later 1.y (new keys are additions).
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from functools import cache
from typing import Any

import numpy as np

from robid.errors import RobidInputError


def finite(x: Any) -> float | None:
    """``float(x)``, or None when it is missing, NaN or infinite (a record holds no non-finite number)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def finite_tuple(values: Any) -> tuple[float | None, ...]:
    return tuple(finite(v) for v in np.asarray(values, dtype=float).ravel())


def dumps(plain: Any, indent: int = 1) -> str:
    """JSON text of plain data: objects one key per line, indented; a list of numbers, strings or booleans on one
    line (the series of a run are rows of numbers, not one number per line); NaN and infinity refused."""

    def emit(x: Any, level: int) -> str:
        inner = " " * (indent * (level + 1))
        if isinstance(x, dict) and x:
            items = [f"{inner}{json.dumps(str(k))}: {emit(v, level + 1)}" for k, v in x.items()]
            return "{\n" + ",\n".join(items) + "\n" + " " * (indent * level) + "}"
        if isinstance(x, list) and any(isinstance(v, dict | list) for v in x):
            items = [inner + emit(v, level + 1) for v in x]
            return "[\n" + ",\n".join(items) + "\n" + " " * (indent * level) + "]"
        return json.dumps(x, allow_nan=False, separators=(", ", ": "))

    return emit(plain, 0) + "\n"


def loads(text: str, where: str) -> Any:
    """Parsed JSON text; malformed text, NaN and infinity (which JSON does not have) refused naming ``where``."""

    def number(token: str) -> float:
        value = float(token)
        if not math.isfinite(value):
            raise ValueError(f"{token} is not a finite number")
        return value

    def constant(token: str):
        raise ValueError(f"{token} is not JSON (a record writes null for a value that is not available)")

    try:
        return json.loads(text, parse_float=number, parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise RobidInputError(f"{where}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
    except ValueError as exc:
        raise RobidInputError(f"{where}: {exc}") from None
    except RecursionError:  # a hostile file nested thousands deep (docs/security.md)
        raise RobidInputError(f"{where}: lists and mappings nested too deep to read") from None


def to_plain(obj: Any, path: str = "") -> Any:
    """The JSON-ready form of a record (or of any value a record field may hold)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _dataclass_to_plain(obj, path)
    if isinstance(obj, bool) or obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise ValueError(f"{path or 'record'}: {obj} is not a JSON number (use None for 'not available')")
        return float(obj)
    if isinstance(obj, tuple | list):
        numbers = _finite_numbers(obj)
        if numbers is not None:  # a series: no path built per entry (a run holds about a million numbers)
            return numbers
        return [to_plain(v, f"{path}[{k}]") for k, v in enumerate(obj)]
    if isinstance(obj, dict):
        return {str(k): to_plain(v, f"{path}.{k}") for k, v in obj.items()}
    raise TypeError(f"{path or 'record'}: {type(obj).__name__} is not a record value")


def _finite_numbers(items: Any) -> list | None:
    """``list(items)`` when every entry is a Python float or None and the floats are finite; None otherwise (the
    entry-by-entry path then converts, or names the entry that is not a record value). The sum of finite floats is
    finite unless it overflows, which only sends the items to that path."""
    present = [v for v in items if v is not None]
    if all(type(v) is float for v in present) and math.isfinite(sum(present)):
        return list(items)
    return None


def _dataclass_to_plain(obj: Any, path: str) -> dict:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.metadata.get("extra"):
            out.update({label: to_plain(v, f"{path}.{label}") for label, v in value})
            continue
        if value is None and f.metadata.get("omit_none"):
            continue
        if value == () and f.metadata.get("omit_empty"):
            continue
        key = f.metadata.get("json", f.name)
        out[key] = to_plain(value, f"{path}.{key}" if path else key)
    derived = getattr(obj, "_derived_plain", None)
    if derived is not None:
        out.update(derived())
    return out


def from_plain(cls: type, data: Any, where: str) -> Any:
    """The record of type ``cls`` described by ``data``; errors name ``where`` (the file) and the key path."""
    try:
        return _convert(cls, data, "")
    except _PathError as exc:
        path, message = exc.args
        raise RobidInputError(f"{where}: {path + ': ' if path else ''}{message}") from None


class _PathError(Exception):
    """(key path, message) of malformed data; from_plain turns it into one RobidInputError line."""


def _key(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(tp: Any, data: Any, path: str) -> Any:
    if tp is Any:
        return data
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if data is None and type(None) in options:
            return None
        rest = [o for o in options if o is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"{path}: unsupported union {tp}")
        return _convert(rest[0], data, path)
    if origin is tuple:
        return _tuple(tp, data, path)
    if origin is dict:
        if not isinstance(data, dict):
            raise _error(path, "an object", data)
        _, value_type = typing.get_args(tp)
        return {str(k): _convert(value_type, v, _key(path, str(k))) for k, v in data.items()}
    if dataclasses.is_dataclass(tp):
        return _dataclass(tp, data, path)
    return _scalar(tp, data, path)


def _tuple(tp: Any, data: Any, path: str) -> tuple:
    if not isinstance(data, list):
        raise _error(path, "a list", data)
    args = typing.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:
        if args[0] in _FLOAT_ITEMS and (args[0] is not float or None not in data):
            numbers = _finite_numbers(data)
            if numbers is not None:  # a series read whole; anything else entry by entry, naming a bad entry
                return tuple(numbers)
        return tuple(_convert(args[0], v, f"{path}[{k}]") for k, v in enumerate(data))
    if len(args) != len(data):
        raise _error(path, f"a list of {len(args)}", data)
    return tuple(_convert(a, v, f"{path}[{k}]") for k, (a, v) in enumerate(zip(args, data, strict=True)))


#: item types of the series read whole by :func:`_tuple` (``typing.Optional[float]`` compares equal to ``float | None``)
_FLOAT_ITEMS = (float, float | None)


def _scalar(tp: Any, data: Any, path: str) -> Any:
    if tp is float:
        if isinstance(data, bool) or not isinstance(data, int | float) or not math.isfinite(data):
            raise _error(path, "a finite number", data)
        return float(data)
    if tp is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise _error(path, "an integer", data)
        return data
    if tp is bool:
        if not isinstance(data, bool):
            raise _error(path, "true or false", data)
        return data
    if tp is str:
        if not isinstance(data, str):
            raise _error(path, "a string", data)
        return data
    raise TypeError(f"{path}: unsupported field type {tp}")


def _dataclass(cls: type, data: Any, path: str) -> Any:
    if not isinstance(data, dict):
        raise _error(path, "an object", data)
    hints = _hints(cls)
    fields = dataclasses.fields(cls)
    known = {f.metadata.get("json", f.name) for f in fields} | set(getattr(cls, "_DERIVED_KEYS", ()))
    kwargs: dict[str, Any] = {}
    for f in fields:
        if f.metadata.get("extra"):
            kwargs[f.name] = tuple(
                (k, None if v is None else float(v))
                for k, v in data.items()
                if k not in known and (v is None or (isinstance(v, int | float) and not isinstance(v, bool)))
            )
            continue
        key = f.metadata.get("json", f.name)
        if key not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise _PathError(path, f"key {key!r} missing")
            continue
        kwargs[f.name] = _convert(hints[f.name], data[key], _key(path, key))
    return cls(**kwargs)


def _error(path: str, expected: str, got: Any) -> _PathError:
    text = repr(got)
    return _PathError(path, f"expected {expected}, got {text[:60]}{'...' if len(text) > 60 else ''}")
