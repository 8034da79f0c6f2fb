"""JSON Schema → the short Python type text a small model reads in a signature.

The text is always a valid Python expression (so a ``def`` line built from it parses),
but it is written for a reader, not for ``typing``: an object with known keys reads as
``{"path": str, "recursive?": bool}`` (``?`` marks an optional key), a map as
``dict[str, int]``, an enum as ``Literal["a", "b"]``. Anything we cannot or should not
spell out (deep nesting, recursion, external ``$ref``, a type too long to read) degrades
to a plainer type — ``dict``, ``list``, ``str`` or ``Any`` — never to an error.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from urllib.parse import unquote

MAX_DEPTH = 2  # objects nested deeper than this read as plain ``dict``
MAX_TYPE_CHARS = 90  # a longer type is rendered again, shallower, until it fits
MAX_LITERALS = 8  # larger enums read as their base type (the docstring lists values)
MAX_LITERAL_CHARS = 70
MAX_NODES = 400  # caps the work on pathological schemas (ref fan-out, huge unions)
MAX_LEVEL = 24  # caps recursion through items/anyOf chains that consume no depth

_SIMPLE = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
           "null": "None", "array": "list", "object": "dict"}
_OBJECT_KEYS = ("properties", "additionalProperties", "patternProperties", "required")


def type_text(schema: Any, root: Any = None, *, max_chars: int = MAX_TYPE_CHARS) -> str:
    """The Python type text for ``schema``; ``root`` resolves its local ``$ref``s."""
    root = schema if root is None else root
    text = "Any"
    for depth, literals in ((MAX_DEPTH, True), (1, True), (0, True), (0, False)):
        text = _Renderer(root, depth, literals).render(schema)
        if len(text) <= max_chars:
            return text
    return text if len(text) <= 2 * max_chars else "Any"


def py_literal(value: Any, limit: int = 40) -> str:
    """A JSON value as Python literal text, or ``...`` when too long or not JSON."""
    text = _literal(value)
    return text if text is not None and len(text) <= limit else "..."


def py_str(text: str) -> str:
    """A double-quoted Python string literal for ``text`` (JSON escapes are Python's)."""
    literal = json.dumps(text, ensure_ascii=False)
    if any("\ud800" <= ch <= "\udfff" for ch in literal):
        literal = json.dumps(text)  # lone surrogates cannot be written as source
    return literal


def resolve_ref(ref: Any, root: Any) -> Any:
    """The target of a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``…), else None."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node = root
    pointer = unquote(ref[1:])
    if not pointer:
        return node
    if not pointer.startswith("/"):
        return None  # a plain-name anchor; we do not index anchors
    for part in pointer[1:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def deref(schema: Any, root: Any, limit: int = 16) -> Any:
    """Follow ``$ref`` chains at the top of ``schema`` (bounded, so cycles end)."""
    for _ in range(limit):
        if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
            return schema
        target = resolve_ref(schema["$ref"], root)
        if target is None:
            return schema
        schema = target
    return schema


def enum_values(schema: Any, root: Any, level: int = 0) -> list[Any]:
    """The enum/const values of a schema or of its non-null ``anyOf``/``oneOf`` member."""
    schema = deref(schema, root)
    if not isinstance(schema, dict) or level > 8:
        return []
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list):
        return [v for v in schema["enum"] if v is not None]
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list):
            for member in members:
                values = enum_values(member, root, level + 1)
                if values:
                    return values
    return []


def object_keys(schema: Any, root: Any, level: int = 0) -> list[str]:
    """The keys (optional ones marked ``?``) of an object schema, or of the objects it lists
    or admits through ``anyOf``/``oneOf``; ``[]`` for anything else."""
    schema = deref(schema, root)
    if not isinstance(schema, dict) or level > 8:
        return []
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        return [k if k in required else f"{k}?" for k in props]
    for key in ("items", "anyOf", "oneOf"):
        members = schema.get(key)
        for member in members if isinstance(members, list) else [members]:
            keys = object_keys(member, root, level + 1)
            if keys:
                return keys
    return []


def format_hint(schema: Any, root: Any, level: int = 0) -> str:
    """A short ``format`` (``uuid``, ``date-time``, ``uri``) of a schema, or ``""``."""
    schema = deref(schema, root)
    if not isinstance(schema, dict) or level > 8:
        return ""
    fmt = schema.get("format")
    if isinstance(fmt, str) and re.fullmatch(r"[\w-]{1,16}", fmt):
        return fmt
    for key in ("anyOf", "oneOf"):
        members = schema.get(key)
        if isinstance(members, list):
            hints = {format_hint(m, root, level + 1) for m in members} - {""}
            if len(hints) == 1:
                return hints.pop()
    return ""


def _literal(value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return py_str(value)
    if isinstance(value, list):
        items = [text for v in value if (text := _literal(v)) is not None]
        return None if len(items) < len(value) else "[" + ", ".join(items) + "]"
    if isinstance(value, dict):
        pairs = [(k, _literal(v)) for k, v in value.items()]
        if any(not isinstance(k, str) or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{py_str(k)}: {v}" for k, v in pairs) + "}"
    return None


class _Renderer:
    """One rendering pass at a fixed object depth; every method returns alternatives."""

    def __init__(self, root: Any, depth: int, literals: bool) -> None:
        self.root = root
        self.depth = depth
        self.literals = literals
        self.nodes = 0

    def render(self, schema: Any) -> str:
        return _join(self.alts(schema, self.depth, frozenset(), 0))

    def alts(self, schema: Any, depth: int, seen: frozenset[str], level: int) -> list[str]:
        self.nodes += 1
        if self.nodes > MAX_NODES or level > MAX_LEVEL or not isinstance(schema, dict):
            return ["Any"]
        nullable = schema.get("nullable") is True
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = resolve_ref(ref, self.root)
            if target is None:
                found = ["Any"]
            elif ref in seen:  # recursive type: name its kind, not its shape
                found = ["dict" if _looks_object(target) else "Any"]
            else:
                found = self.alts(target, depth, seen | {ref}, level + 1)
        elif "const" in schema:
            found = self.enum([schema["const"]])
        elif isinstance(schema.get("enum"), list):
            found = self.enum(schema["enum"])
        elif isinstance(schema.get("anyOf"), list) or isinstance(schema.get("oneOf"), list):
            members = schema.get("anyOf")
            if not isinstance(members, list):
                members = schema["oneOf"]
            found = []
            for member in members:
                found += self.alts(_inherit(schema, member), depth, seen, level + 1)
            found = found or ["Any"]
        elif isinstance(schema.get("allOf"), list):
            found = self.alts(merge_all_of(schema), depth, seen, level + 1)
        else:
            found = self.by_type(schema, depth, seen, level)
        return _dedupe([*found, "None"] if nullable else found)

    def by_type(self, schema: dict, depth: int, seen: frozenset[str], level: int) -> list[str]:
        kinds = schema.get("type")
        if isinstance(kinds, str):
            kinds = [kinds]
        elif not isinstance(kinds, list):
            if any(key in schema for key in _OBJECT_KEYS):
                kinds = ["object"]
            elif "items" in schema or "prefixItems" in schema:
                kinds = ["array"]
            else:
                return ["Any"]
        found = []
        for kind in kinds:
            if kind == "array":
                found.append(self.array(schema, depth, seen, level))
            elif kind == "object":
                found.append(self.object(schema, depth, seen, level))
            else:
                found.append(_SIMPLE.get(kind, "Any") if isinstance(kind, str) else "Any")
        return found or ["Any"]

    def array(self, schema: dict, depth: int, seen: frozenset[str], level: int) -> str:
        items = schema.get("prefixItems", schema.get("items"))
        members = items if isinstance(items, list) else [items]
        found: list[str] = []
        for member in members:
            if isinstance(member, dict) and member:
                found += self.alts(member, depth, seen, level + 1)
        inner = _join(_dedupe(found)) if found else "Any"
        return "list" if inner == "Any" else f"list[{inner}]"

    def object(self, schema: dict, depth: int, seen: frozenset[str], level: int) -> str:
        props = schema.get("properties")
        if isinstance(props, dict) and props:
            if depth <= 0:
                return "dict"
            required = schema.get("required")
            required = set(required) if isinstance(required, list) else set()
            required = {r for r in required if isinstance(r, str)}
            entries = []
            for key, sub in props.items():
                label = key if key in required else f"{key}?"
                value = _join(self.alts(sub, depth - 1, seen, level + 1))
                entries.append(f"{py_str(label)}: {value}")
            return "{" + ", ".join(entries) + "}"
        values = schema.get("additionalProperties")
        if not (isinstance(values, dict) and values):
            patterns = schema.get("patternProperties")
            if isinstance(patterns, dict) and len(patterns) == 1:
                values = next(iter(patterns.values()))
        if isinstance(values, dict) and values and depth > 0:
            inner = _join(self.alts(values, depth - 1, seen, level + 1))
            return "dict" if inner == "Any" else f"dict[str, {inner}]"
        return "dict"

    def enum(self, values: list[Any]) -> list[str]:
        if not values:
            return ["Any"]
        found: list[str] = []
        literals = []
        for value in values:
            text = _literal(value) if isinstance(value, str | int | float) else None
            if value is None:
                found.append("None")
            elif text is None:
                found.append(_value_type(value))
            else:
                literals.append(text)
        if literals:
            shown = "Literal[" + ", ".join(literals) + "]"
            if self.literals and len(literals) <= MAX_LITERALS \
                    and len(shown) <= MAX_LITERAL_CHARS:
                found.insert(0, shown)
            else:
                found[:0] = [_value_type(v) for v in values if v is not None]
        return _dedupe(found)


def _value_type(value: Any) -> str:
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"),
                       (list, "list"), (dict, "dict")):
        if isinstance(value, kind):
            return name
    return "Any"


def _looks_object(schema: Any) -> bool:
    return isinstance(schema, dict) and (
        schema.get("type") == "object" or any(key in schema for key in _OBJECT_KEYS))


def _inherit(parent: dict, member: Any) -> Any:
    """A union member without a ``type`` takes the parent's.

    As in ``{"type": "object", "properties": …, "anyOf": [{"required": ["a"]}, …]}``.
    """
    if isinstance(member, dict) and "type" not in member and "type" in parent and not any(
            key in member for key in ("$ref", "anyOf", "oneOf", "allOf", "enum", "const")):
        rest = {k: v for k, v in parent.items() if k not in ("anyOf", "oneOf", "nullable")}
        return {**rest, **member}
    return member


def merge_all_of(schema: dict) -> dict:
    """``allOf`` read as one schema: member keys merged, properties and required united."""
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    props = merged.get("properties")
    props = dict(props) if isinstance(props, dict) else {}
    required = merged.get("required")
    required = list(required) if isinstance(required, list) else []
    for member in schema["allOf"]:
        if not isinstance(member, dict):
            continue
        for key, value in member.items():
            if key == "properties" and isinstance(value, dict):
                props.update(value)
            elif key == "required" and isinstance(value, list):
                required += value
            else:
                merged.setdefault(key, value)
    if props:
        merged["properties"] = props
    if required:
        merged["required"] = required
    return merged


def _dedupe(found: list[str]) -> list[str]:
    if "Any" in found:
        return ["Any"]
    unique = list(dict.fromkeys(found))
    if "None" in unique:  # ``X | None`` reads best with None last
        unique = [t for t in unique if t != "None"] + ["None"]
    return unique or ["Any"]


def _join(found: list[str]) -> str:
    return " | ".join(_dedupe(found))
