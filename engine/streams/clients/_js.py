"""JavaScript's value semantics, as far as the TypeScript libraries' assembly depends on them.

A decoded JSON value is read the way ``JSON.parse`` gives it to JavaScript code:
``null`` is None, a missing key is :data:`UNDEFINED`, ``x += y`` on a string
concatenates ``String(y)`` (so an object becomes ``"[object Object]"``), and an
array indexed by a key that is not an array index gets a property, not an element.
"""

from __future__ import annotations

import math
from typing import Any

UNDEFINED: Any = type("Undefined", (), {"__repr__": lambda self: "undefined", "__bool__": lambda self: False})()
MAX_ARRAY_INDEX = 2**32 - 2


def get(obj: Any, key: str) -> Any:
    """``obj?.[key]``: UNDEFINED when ``obj`` is no object or has no such key."""
    if isinstance(obj, dict):
        return obj.get(key, UNDEFINED)
    return UNDEFINED


def nullish(value: Any) -> bool:
    """``value == null``."""
    return value is None or value is UNDEFINED


def truthy(value: Any) -> bool:
    if value is None or value is UNDEFINED or value is False or value == "":
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value != 0 and not (isinstance(value, float) and math.isnan(value))
    return True


def strict_equal(a: Any, b: Any) -> bool:
    """``a === b`` for decoded JSON values (objects by identity)."""
    if a is UNDEFINED or b is UNDEFINED or a is None or b is None:
        return a is b
    kind = typeof(a)
    if kind != typeof(b):
        return False
    if kind == "object":
        return a is b
    return a == b


def typeof(value: Any) -> str:
    if value is UNDEFINED:
        return "undefined"
    if value is None or isinstance(value, (dict, list)):
        return "object"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string"


def number_text(value: float | int) -> str:
    """``String(n)`` for the numbers JSON carries (integral floats without ``.0``)."""
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def string(value: Any) -> str:
    """``String(value)``."""
    if isinstance(value, str):
        return value
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return number_text(value)
    if isinstance(value, list):
        return ",".join("" if nullish(v) else string(v) for v in value)
    return "[object Object]"


def array_index(key: Any) -> int | None:
    """The array element a property key names (``arr[key]``), or None when it names a plain property."""
    if isinstance(key, bool):
        return None
    if isinstance(key, int):
        return key if 0 <= key <= MAX_ARRAY_INDEX else None
    if isinstance(key, float):
        return int(key) if key.is_integer() and 0 <= key <= MAX_ARRAY_INDEX else None
    if isinstance(key, str) and key.isdigit() and (key == "0" or not key.startswith("0")):
        number = int(key)
        return number if number <= MAX_ARRAY_INDEX else None
    return None


def property_name(key: Any) -> str:
    """The property a key names (``String(key)``)."""
    return string(key)


class SparseArray:
    """A JavaScript array that may have holes: elements by position, ``length``, and stray properties
    (``arr[undefined] = x`` sets a property named ``"undefined"``: read back by the same key, never seen by
    ``map()`` or ``for...of``)."""

    __slots__ = ("items", "length", "props")

    def __init__(self) -> None:
        self.items: dict[int, Any] = {}
        self.length = 0
        self.props: dict[str, Any] = {}

    def at(self, key: Any) -> Any:
        """``arr[key]``: UNDEFINED for a hole or a property never set."""
        position = array_index(key)
        if position is None:
            return self.props.get(property_name(key), UNDEFINED)
        return self.items.get(position, UNDEFINED)

    def set(self, key: Any, value: Any) -> None:
        position = array_index(key)
        if position is None:
            self.props[property_name(key)] = value
            return
        self.items[position] = value
        if position >= self.length:
            self.length = position + 1

    def has_holes(self) -> bool:
        return len(self.items) != self.length

    def values(self) -> list[Any]:
        """``for...of``: every position in order, a hole as UNDEFINED."""
        return [self.items.get(i, UNDEFINED) for i in range(self.length)]
