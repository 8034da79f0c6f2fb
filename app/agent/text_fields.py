"""The fields of a text result that code indexed like a dict.

Many servers answer in text (git's log: ``Commit: …`` / ``Author: …`` / ``Message: …``
lines), and small models index it as the JSON they expected
(``git.git_log(...)[0]["message"]``). When a cell fails that way, the lines of its
tools' text results that start with a key the code used (``Message:`` for
``["message"]``) are named with the line of code that takes the value from the text.
"""

from __future__ import annotations

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
                lines.append(f"{item.call} returns text, not a dict; its line "
                             f"{found.group(0).strip()!r} holds the {key!r} value: "
                             f"text = {item.call}(...), then "
                             f"re.search(r'^{found.group(1)}: (.*)$', text, re.M).group(1)")
        if len(lines) >= MAX_FIELDS:
            break
    return "Hint: " + "\n".join(lines[:MAX_FIELDS]) if lines else ""
