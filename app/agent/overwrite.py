"""A write that would throw away most of a file the turn has read.

Asked to add `printer.local` to a hosts file "keeping the entries that are already
there", the 1.5B called ``filesystem.write_file(path, 'printer.local 192.168.1.40\\n')``:
the file's six lines were gone, and the agent had destroyed the user's file while
reporting success. A whole-file write replaces what the file holds, and small models
write only the part they mean to add. So a write that would keep less than half of the
words of the text this turn last saw in that file is not run, unless the request asks to
remove or replace something; the error shows the lines it would drop and how to write
the file with its old text kept. The same write made again goes through: a replace the
user asked for in other words is one repeat away.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deskmate.app.agent.tool_errors import TEXT_WORDS, Tools, file_reader, path_arguments
from deskmate.tools.signatures import py_identifier

KEPT_SHARE = 0.5  # of the old text's words (case-insensitive), below which a write drops
MIN_LINES = 2  # a file of one line replaced by another is a change, not a loss
SHOWN = 3  # dropped lines shown in the error
WORD = re.compile(r"[^\W_]+")
# A request that asks for lines or text to go: its write may drop most of the file.
REMOVES = re.compile(r"\b(remov|delet|drop|replac|overwrit|rewrit|clear|empt|wipe|truncat|"
                     r"filter|prun|purg|trim|strip|only|instead|reset|start over|"
                     r"from scratch)\w*", re.I)


@dataclass(frozen=True)
class Loss:
    path: str
    key: str  # the argument that named the file
    lines: int  # the old text's non-blank lines
    written: int  # the new text's
    dropped: list[str]  # old lines whose words the new text no longer has
    text: str  # what the write was given


def whole_write(tool: str, arguments: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(key, path, text) for a call that writes a whole file's text: one path argument
    and a text one (``content``); not an append, which adds its text."""
    paths = path_arguments(arguments)
    if len(paths) != 1 or "append" in tool.lower():
        return None
    if any(isinstance(v, str) and v.lower() == "append" for v in arguments.values()):
        return None
    if not any(isinstance(v, str) and k.lower().endswith(TEXT_WORDS)
               for k, v in arguments.items()):
        return None
    key, path = paths[0]
    return key, path, whole_text(arguments)


def whole_text(arguments: Mapping[str, Any]) -> str:
    """The text a whole-file write was given ("" for none)."""
    return next((v for k, v in arguments.items()
                 if isinstance(v, str) and k.lower().endswith(TEXT_WORDS)), "")


def words(text: str) -> Counter[str]:
    return Counter(w.lower() for w in WORD.findall(text))


def loss(old: str, new: str, path: str, key: str) -> Loss | None:
    """What writing ``new`` over ``old`` loses, when it keeps less than ``KEPT_SHARE`` of
    the old words (lowercased: a file lowercased, sorted or reformatted keeps them)."""
    lines = [line for line in old.splitlines() if line.strip()]
    before = words(old)
    if len(lines) < MIN_LINES or not before:
        return None
    after = words(new)
    kept = sum(min(n, after[w]) for w, n in before.items())
    if kept >= KEPT_SHARE * sum(before.values()):
        return None
    dropped = [line for line in lines if words(line) - after]
    written = sum(1 for line in new.splitlines() if line.strip())
    return Loss(path, key, len(lines), written, dropped, new)


def asks_to_remove(request: str) -> bool:
    return bool(REMOVES.search(request))


SHOWN_TEXT = 200  # characters of the write's own text copied into the fix


def reader_call(tools: Tools, server: str) -> str:
    """The call that reads a whole file's text on ``server`` (a file server), or ""."""
    found = file_reader(tools, server)
    return f"{py_identifier(server)}.{tools[found][1].name}" if found else ""


def loss_error(call: str, found: Loss, reader: str = "") -> str:
    """The error for a write refused by ``loss``: what it would drop, and the fix —
    with ``reader`` (the call that reads the file, ``filesystem.read_text_file``) the
    two lines that keep the file's text and add the write's own."""
    shown = "; ".join(repr(line.strip()) for line in found.dropped[:SHOWN])
    more = f" and {len(found.dropped) - SHOWN} more" if len(found.dropped) > SHOWN else ""
    lines = "line" if found.written == 1 else "lines"
    added = repr(found.text) if len(found.text) <= SHOWN_TEXT else "new_text"
    # As lines of code, the cell to write: small models copy a block, not a sentence.
    fix = (f" To keep its lines and add yours, write this cell (to change a line, replace it "
           f"in text before writing):\ntext = {reader}({found.key}={found.path!r})\n"
           f"print({call}({found.key}={found.path!r}, content=text.rstrip('\\n') + '\\n' + "
           f"{added}))\n"
           if reader else " To add to the file or change part of it, write its old text with "
           "the change: read it, add or change the lines in that text, and write the "
           "whole text back.")
    return (f"{call} was not run: it writes the whole file, so {found.path} would hold "
            f"only the {found.written} {lines} given and lose {len(found.dropped)} of the "
            f"{found.lines} it has ({shown}{more}), and the request does not ask to remove "
            f"anything.{fix}{' ' if not reader else ''}If the request does mean to replace "
            "the file, make the same call again.")
