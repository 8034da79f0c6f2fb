"""The hint for a cell that failed after a regular expression matched nothing in a
tool's text: the pattern, the variable it searched, and the text's lines it was meant
for.

Small models write the pattern for the shape they expect (``<span class="price">`` for
a page the fetch server returned as a markdown table; ``Author: (.*)`` for a log that
says ``author:``), then fail on what the empty match leaves (``min()`` of an empty
list, ``None.group(1)``) and retry the same pattern: the error names neither the
pattern nor the text. Only a constant pattern over a variable's str is checked, with
the flags that match the most (multi-line, any case, dot matches all), so a pattern
called a miss matches nothing under the model's own flags either."""

from __future__ import annotations

import ast
import linecache
import re
from collections.abc import Iterator
from types import FrameType
from typing import Any, TypeGuard

from .state import CELL_PREFIX

SEARCHES = frozenset({"findall", "search", "match", "fullmatch", "finditer"})
MOST = re.MULTILINE | re.IGNORECASE | re.DOTALL
SHOWN_LINES = 4
LINE_CHARS = 100
PATTERN_CHARS = 80
TAG_SIGNS = frozenset("<>/=\"'")


def regex_miss(exc: BaseException) -> str:
    """A hint naming the cell's first pattern (up to the failing line) that matches
    nothing in the text it searched, with the text's lines closest to it; or ""."""
    found = failing_cell_line(exc)
    if found is None:
        return ""
    frame, lineno = found
    source = "".join(linecache.getlines(frame.f_code.co_filename))
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ""
    calls = sorted((node for node in ast.walk(tree) if _is_search(node)),
                   key=lambda node: (node.lineno, node.col_offset))
    for call in calls:
        if call.lineno > lineno:
            break
        pattern, target = _pattern_and_target(call)
        if pattern is None or target is None:
            continue
        text = value_of(target, frame)
        if not isinstance(text, str) or not text.strip():
            continue
        try:
            if re.search(pattern, text, MOST):
                continue
        except re.error:
            continue
        written = ast.get_source_segment(source, call.args[0] if call.args else call)
        return _message(call, written or repr(pattern), pattern, ast.unparse(target), text)
    return ""


def failing_cell_line(exc: BaseException) -> tuple[FrameType, int] | None:
    """The innermost frame of a cell in the traceback and its line."""
    tb, found = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.startswith(CELL_PREFIX):
            found = tb.tb_frame, tb.tb_lineno
        tb = tb.tb_next
    return found


def _is_search(node: ast.AST) -> TypeGuard[ast.Call]:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
            and node.func.attr in SEARCHES)


def _pattern_and_target(call: ast.Call) -> tuple[str | None, ast.expr | None]:
    args = list(call.args[:2])
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    pattern = args[0] if args else keywords.get("pattern")
    target = args[1] if len(args) > 1 else keywords.get("string")
    if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
        return None, None
    return pattern.value, target


def value_of(node: ast.expr, frame: FrameType) -> object:
    """A variable's value, or a constant index into one (``page["content"]``): nothing
    that would call code (a tool) again."""
    if isinstance(node, ast.Name):
        if node.id in frame.f_locals:
            return frame.f_locals[node.id]
        return frame.f_globals.get(node.id)
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        container = value_of(node.value, frame)
        try:
            return container[node.slice.value]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return None
    return None


def _message(call: ast.Call, written: str, pattern: str, target: str, text: str) -> str:
    shown = written if len(written) <= PATTERN_CHARS else written[:PATTERN_CHARS] + "…"
    function = call.func.attr if isinstance(call.func, ast.Attribute) else "search"
    what = f"re.{function}({shown}, {target})"
    note = ""
    if re.search(r"<\s*/?\s*[A-Za-z]", pattern) and "<" not in text:
        note = f" ({target} has no HTML tags: it is text)"
    lines = closest_lines(pattern, text)
    return (f"Hint: {what} matches nothing{note}; write the pattern for {target}'s own "
            "lines, such as:\n" + "".join(f"  {line}\n" for line in lines))


def closest_lines(pattern: str, text: str) -> list[str]:
    """The text's lines holding most of the pattern's literal words and signs (a word
    counts twice), in the text's order; its first lines when none holds any."""
    tokens = literal_tokens(pattern)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    scored = [(sum((2 if token.isalnum() else 1) for token in tokens
                   if token in line.lower()), index)
              for index, line in enumerate(lines)]
    best = sorted((item for item in scored if item[0] > 0), key=lambda s: (-s[0], s[1]))
    picked = sorted(index for _, index in best[:SHOWN_LINES]) or list(
        range(min(SHOWN_LINES, len(lines))))
    return [_cut(lines[index]) for index in picked]


def literal_tokens(pattern: str) -> set[str]:
    """The words (3 letters or more, lower case) and signs the pattern matches as
    written: escapes that stand for a class (``\\d``), character classes and the
    syntax of groups and repeats are left out, and so are the signs of HTML's tags
    (``</span>``'s slash is in every URL of a page's text)."""
    literal, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            following = pattern[i + 1]
            literal.append(" " if following.isalnum() else following)
            i += 2
        elif char == "[":
            end = _class_end(pattern, i)
            literal.append(" ")
            i = end + 1
        elif char == "(" and pattern.startswith("?", i + 1):
            close = re.match(r"\(\?(?:P<\w+>|<\w+>|[:=!]|<[=!]|[aiLmsux-]+[:)])", pattern[i:])
            literal.append(" ")
            i += len(close.group(0)) if close else 1
        elif char == "{":
            repeat = re.match(r"\{\d*(?:,\d*)?\}", pattern[i:])
            literal.append(" " if repeat else char)
            i += len(repeat.group(0)) if repeat else 1
        elif char in "()*+?|^$.":
            literal.append(" ")
            i += 1
        else:
            literal.append(char)
            i += 1
    text = "".join(literal).lower()
    words = {word for word in re.findall(r"[a-z0-9_]{3,}", text)}
    signs = {sign for sign in re.findall(r"[^\sa-z0-9_]", text) if sign not in TAG_SIGNS}
    return words | signs


def _class_end(pattern: str, start: int) -> int:
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i
        i += 1
    return len(pattern) - 1


def _cut(line: str) -> str:
    return line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + "…"


def line_values(exc: BaseException) -> Iterator[tuple[str, Any]]:
    """The variables named on the cell's line that raised ``exc`` (the innermost frame
    of a cell: a library's own frames name its variables, not the model's), with their
    values, in the order the line names them."""
    found = failing_cell_line(exc)
    if found is None:
        return
    frame, lineno = found
    line = linecache.getline(frame.f_code.co_filename, lineno)
    for name in dict.fromkeys(re.findall(r"[A-Za-z_]\w*", line)):
        if name in frame.f_locals:
            yield name, frame.f_locals[name]
        elif name in frame.f_globals:
            yield name, frame.f_globals[name]
