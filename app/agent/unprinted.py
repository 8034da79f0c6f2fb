"""What a cell's tool calls returned that its output does not show, as a short look at
each after the output.

Only what the code prints comes back (the ATLAS way: intermediate results stay in the
program), so a small model that writes its code against the shape it guesses a result
has (HTML rows in what is markdown, a dict where there is text) sees an empty list and
answers "none found". When a cell came to nothing — it failed, printed nothing, or
printed an empty value — each result it never printed, whole when short and else its
first few hundred characters, shows the shape its next cell needs. A cell that printed
something else keeps the results to itself, and a result it printed is not shown twice.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deskmate.tools.sandbox.worker.failing_values import VALUES_MARK

PREVIEW_CHARS = 300  # of each result too long to show whole
# A result up to this long is shown whole, while the note stays within NOTE_CHARS: cut at
# 300, a 663-character table lost the rows the code needed and a 383-character file its
# last lines, and the 1.5B wrote its next cell against the part it had not seen.
WHOLE_CHARS = 1_200
NOTE_CHARS = 2_000
MAX_RESULTS = 3  # shown after one cell
LAYOUT_KEYS = 8  # of a dict a look is cut off in, named with what each holds
HEAD_CHARS = 40  # of a result that, found in the output, counts as printed
NOTE = "Not printed by your code (a look at what the tools returned):"
# The head of each look in the note ("fetch.fetch returned a str of 511 characters: ").
HEAD = re.compile(r"^[\w.]+ returned an? \w+(?: of [\d,]+ \w+)?: ", re.M)
# A line of output that is an empty value, alone or as a field's value ({'entities': []}).
EMPTY = re.compile(r"""(?:^|[:=]\s*)(?:\[\]|\{\}|\(\)|''|""|None|0)\s*[,}\])]*\s*$""", re.M)


def came_to_nothing(status: str, output: str) -> bool:
    """A cell that failed, printed nothing, or printed an empty value."""
    return status != "ok" or not output.strip() or bool(EMPTY.search(output))


@dataclass(frozen=True)
class Returned:
    call: str  # "fetch.fetch": the server's object and the tool, as the code calls it
    value: Any  # what the call returned to the code
    note: str = ""  # what the result adds for the model (empty_result.empty_note)
    # The call the bridge ran in a refused one's place, said before the cell's output
    # (value_hints.Repair.note); "" for a call that ran as written.
    repaired: str = ""


def unprinted(returned: Sequence[Returned], shown: str) -> str:
    """The note on the results in ``returned`` whose start is not in ``shown`` (what
    the cell printed, its value and its error), one per tool; "" when none."""
    flat = " ".join(shown.split())
    lines: list[str] = []
    seen: set[str] = set()
    for item in returned:
        text = item.value if isinstance(item.value, str) else repr(item.value)
        head = " ".join(text.split())[:HEAD_CHARS]
        if item.call in seen or not head or head in flat:
            continue
        seen.add(item.call)
        if len(seen) > MAX_RESULTS:
            break
        room = NOTE_CHARS - sum(map(len, lines))
        whole = len(text) <= max(PREVIEW_CHARS, min(WHOLE_CHARS, room))
        preview = text if whole else text[:PREVIEW_CHARS] + "…"
        lines.append(f"{item.call} returned {_size(item.value)}: {preview}")
        if not whole and (layout := _layout(item.value)):
            lines.append(layout)
    return f"{NOTE}\n" + "\n".join(lines) if lines else ""


def looked_at(observation: str) -> str:
    """What a failed cell's ``observation`` showed of the data: the note's look at the
    tools' results, without its heads (whose sizes are not data), and the values the
    failing line held (the error's last lines show them, and a result shown there gets
    no note); "" when it shows neither."""
    _, _, note = observation.partition(NOTE)
    held = [line.partition(VALUES_MARK)[2] for line in observation.splitlines()
            if line.startswith(VALUES_MARK)]
    return "\n".join(filter(None, [HEAD.sub("", note), *held]))


def _layout(value: Any) -> str:
    """A dict's keys and what each holds, for a look cut off before the later keys: the
    1.5B, shown 300 characters of a graph's 'entities', looked for the relations in
    them (``node['relationType']``) and never learned there was a 'relations' list."""
    if not isinstance(value, dict) or not value:
        return ""
    parts = [f"{key!r}: {_held(item)}" for key, item in list(value.items())[:LAYOUT_KEYS]]
    more = f"; {len(value) - LAYOUT_KEYS} more keys" if len(value) > LAYOUT_KEYS else ""
    return "  its keys: " + "; ".join(parts) + more


def _held(value: Any) -> str:
    """What a value is, in a few words: "a list of 13 dicts with keys 'from', 'to'"."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        keys = list(dict.fromkeys(k for v in value for k in v))
        shown = ", ".join(repr(k) for k in keys[:LAYOUT_KEYS])
        return f"a list of {len(value):,} dict{'s' * (len(value) != 1)} with keys {shown}"
    if isinstance(value, list) and value:
        kinds = sorted({type(v).__name__ for v in value})
        return f"a list of {len(value):,} {'/'.join(kinds)}"
    if isinstance(value, dict):
        return f"a dict with keys {', '.join(repr(k) for k in list(value)[:LAYOUT_KEYS])}"
    return _size(value)


def _size(value: Any) -> str:
    if isinstance(value, str):
        return f"a str of {len(value):,} characters"
    if isinstance(value, list | dict):
        unit = "keys" if isinstance(value, dict) else "items"
        return f"a {type(value).__name__} of {len(value):,} {unit}"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
