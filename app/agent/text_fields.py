"""The fields of a text result that code indexed like a dict.

Many servers answer in text (git's log: ``Commit: …`` / ``Author: …`` / ``Message: …``
lines), and small models index it as the JSON they expected
(``git.git_log(...)[0]["message"]``). When a cell fails that way, the lines of its
tools' text results that start with a key the code used (``Message:`` for
``["message"]``) are named with the line of code that takes the value from the text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from deskmate.app.agent.unprinted import Returned

# The errors of indexing or reading a str as a dict.
STR_AS_DICT = re.compile(r"string indices must be integers|'str' object has no attribute "
                         r"'(?:get|keys|items)'")
# The keys the code used: x["key"], x['key'], x.get("key").
KEYS = re.compile(r"""\[\s*['"]([A-Za-z][\w ]{0,30})['"]\s*\]"""
                  r"""|\.get\(\s*['"]([A-Za-z][\w ]{0,30})['"]""")
MAX_FIELDS = 3


def text_fields(code: str, error: str, returned: Sequence[Returned]) -> str:
    """The hint for a cell that failed indexing a text result with keys; "" otherwise."""
    if not STR_AS_DICT.search(error):
        return ""
    keys = list(dict.fromkeys(next(filter(None, m)) for m in KEYS.findall(code)))
    lines: list[str] = []
    for item in returned:
        if not isinstance(item.value, str):
            continue
        for key in keys:
            label = re.escape(key).replace("_", "[ _]").replace(r"\ ", "[ _]")
            found = re.search(rf"^[ \t]*({label})[ \t]*:[ \t]*(\S.*)$", item.value, re.M | re.I)
            if found:
                search = f"re.search(r'^{found.group(1)}: (.*)$', {{}}, re.M).group(1)"
                rewritten = failing_line_rewritten(code, error, item.call, key, search)
                lines.append(f"{item.call} returns text, not a dict; its line "
                             f"{found.group(0).strip()!r} holds the {key!r} value: "
                             + (f"write the line that failed as\nimport re\n{rewritten}"
                                if rewritten else
                                f"text = {item.call}(...), then " + search.format("text")))
        if len(lines) >= MAX_FIELDS:
            break
    return "Hint: " + "\n".join(lines[:MAX_FIELDS]) if lines else ""


def failing_line_rewritten(code: str, error: str, call: str, key: str, search: str) -> str:
    """The cell's line that failed, with its index of ``call``'s text by ``key``
    (``git.git_log(...)[0]["message"]``, or a variable that holds the text, indexed so)
    replaced by ``search`` of that text: a line to copy, which small models do, where a
    recipe ("text = ..., then re.search(...)") is left unwritten. "" when the line is
    not one such statement."""
    lineno = failing_line(error)
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ""
    source_lines = code.splitlines()
    for statement in ast.walk(tree):
        if not (isinstance(statement, ast.stmt) and statement.lineno == lineno
                and statement.end_lineno == lineno
                and not isinstance(statement, ast.For | ast.While | ast.If | ast.With
                                   | ast.FunctionDef | ast.Try)):
            continue
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                    and node.slice.value == key):
                continue
            base = node.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if not (isinstance(base, ast.Name)
                    or (isinstance(base, ast.Call) and ast.unparse(base.func) == call)):
                continue
            line = source_lines[lineno - 1]
            indexed = ast.get_source_segment(code, node)
            text = ast.get_source_segment(code, base)
            if not indexed or not text or indexed not in line:
                continue
            return line.strip().replace(indexed, search.format(text), 1)
    return ""


def failing_line(error: str) -> int:
    """The line of the cell that raised, from its traceback (the last cell frame)."""
    found = re.findall(r'File "<cell \d+>", line (\d+)', error)
    return int(found[-1]) if found else 0
