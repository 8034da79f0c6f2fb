"""RFC 6570 URI templates, as MCP resource templates use them (``file:///{path}``,
``repo://{owner}/{name}/issues{?state,page}``).

``expand`` fills a template in (all four levels: the ``+ # . / ; ? &`` operators, the
``:n`` prefix and ``*`` explode modifiers); ``variables`` names what it asks for;
``matches`` tells whether a URI could have come from it, so that a URI can be traced back
to the server whose template made it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_UNRESERVED = "-._~"
_RESERVED = ":/?#[]@!$&'()*+,;="


class TemplateError(ValueError):
    """A template that is not RFC 6570."""


@dataclass(frozen=True)
class _Operator:
    first: str  # what the expansion starts with
    sep: str  # between values
    named: bool  # name=value pairs
    empty: str  # after the name of an empty value
    reserved: bool  # reserved characters pass unencoded


_OPERATORS = {
    "": _Operator("", ",", False, "", False),
    "+": _Operator("", ",", False, "", True),
    "#": _Operator("#", ",", False, "", True),
    ".": _Operator(".", ".", False, "", False),
    "/": _Operator("/", "/", False, "", False),
    ";": _Operator(";", ";", True, "", False),
    "?": _Operator("?", "&", True, "=", False),
    "&": _Operator("&", "&", True, "=", False),
}


@dataclass(frozen=True)
class _Var:
    name: str
    prefix: int | None = None
    explode: bool = False


def _parse(expression: str) -> tuple[_Operator, list[_Var]]:
    op = expression[:1] if expression[:1] in _OPERATORS and expression[:1] else ""
    body = expression[len(op):]
    found = []
    for spec in body.split(","):
        match = re.fullmatch(r"([A-Za-z0-9_.%]+)(?::([1-9]\d{0,3})|(\*))?", spec)
        if match is None:
            raise TemplateError(f"{{{expression}}} is not a URI template expression")
        found.append(_Var(match.group(1), int(match.group(2)) if match.group(2) else None,
                          bool(match.group(3))))
    return _OPERATORS[op], found


def variables(template: str) -> list[str]:
    """The variable names of ``template``, in order, each once."""
    names: dict[str, None] = {}
    for expression in _EXPRESSION.findall(template):
        for var in _parse(expression)[1]:
            names.setdefault(var.name)
    return list(names)


def expand(template: str, values: Mapping[str, Any]) -> str:
    """``template`` with ``values`` filled in; an absent or None value is left out."""
    return _EXPRESSION.sub(lambda m: _expand_one(m.group(1), values), template)


def _encode(text: str, reserved: bool) -> str:
    return quote(text, safe=_UNRESERVED + (_RESERVED + "%" if reserved else ""))


def _expand_one(expression: str, values: Mapping[str, Any]) -> str:
    op, found = _parse(expression)
    parts = []
    for var in found:
        value = values.get(var.name)
        if value is None or value == [] or value == {}:
            continue
        if isinstance(value, Mapping):
            pairs = [(str(k), str(v)) for k, v in value.items()]
            if var.explode:
                parts.extend(f"{_encode(k, op.reserved)}={_encode(v, op.reserved)}"
                             for k, v in pairs)
                continue
            joined = ",".join(f"{_encode(k, op.reserved)},{_encode(v, op.reserved)}"
                              for k, v in pairs)
            parts.append(f"{var.name}={joined}" if op.named else joined)
            continue
        if isinstance(value, (list, tuple)):
            items = [_encode(str(v), op.reserved) for v in value]
            if var.explode:
                parts.extend(f"{var.name}={item}" if op.named else item for item in items)
            else:
                joined = ",".join(items)
                parts.append(f"{var.name}={joined}" if op.named else joined)
            continue
        text = _scalar(value)
        if var.prefix is not None:
            text = text[:var.prefix]
        encoded = _encode(text, op.reserved)
        if op.named:
            parts.append(f"{var.name}={encoded}" if encoded else f"{var.name}{op.empty}")
        else:
            parts.append(encoded)
    return op.first + op.sep.join(parts) if parts else ""


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def matches(template: str, uri: str) -> bool:
    """Whether ``uri`` could be an expansion of ``template`` (a loose check: each simple
    expression matches one path segment, the others anything)."""
    pattern, last = [], 0
    for match in _EXPRESSION.finditer(template):
        pattern.append(re.escape(template[last:match.start()]))
        op = match.group(1)[:1]
        pattern.append("[^/?#]*" if op not in _OPERATORS or op in ("", ".", ";") else ".*")
        last = match.end()
    pattern.append(re.escape(template[last:]))
    return re.fullmatch("".join(pattern), uri) is not None
