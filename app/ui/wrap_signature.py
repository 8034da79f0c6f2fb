"""Python signatures folded to a panel's width, one parameter a line when too long.

The Servers screen shows each tool as the model reads it; a code block does not wrap,
so a long ``def`` line was cut at the panel's edge, parameters and all.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

_OPEN, _CLOSE = "([{", ")]}"


def _outside_quotes(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """(index, character, bracket depth after it) for each character outside quotes."""
    depth, quote = 0, ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
            continue
        depth += (ch in _OPEN) - (ch in _CLOSE)
        yield i, ch, depth


def split_top_level(text: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes."""
    parts, start = [], 0
    for i, ch, depth in _outside_quotes(text):
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    tail = text[start:].strip()
    return parts + ([tail] if tail else [])


def _closing_paren(line: str, opening: int) -> int:
    for i, ch, depth in _outside_quotes(line, opening):
        if ch in _CLOSE and depth == 0:
            return i
    return -1


def fold(signature: str, width: int) -> str:
    """``signature`` (a ``def`` line and an indented docstring) within ``width`` columns
    where it can be: parameters one a line, the docstring wrapped. Nothing is dropped."""
    lines = signature.splitlines()
    if not lines:
        return signature
    head, rest = lines[0], lines[1:]
    out: list[str] = []
    opening = head.find("(")
    closing = _closing_paren(head, opening) if opening >= 0 else -1
    if len(head) > width and closing > opening >= 0:
        params = split_top_level(head[opening + 1:closing])
        out.append(head[:opening + 1])
        out.extend(f"    {p}," for p in params)
        out.append(head[closing:])
    else:
        out.append(head)
    for line in rest:
        indent = line[: len(line) - len(line.lstrip())]
        if len(line) <= width or not line.strip():
            out.append(line)
        else:
            out.extend(textwrap.wrap(line.strip(), width=max(20, width - len(indent)),
                                     initial_indent=indent, subsequent_indent=indent,
                                     break_long_words=False, break_on_hyphens=False))
    return "\n".join(out)
