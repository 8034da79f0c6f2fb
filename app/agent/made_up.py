"""The note after a call given records whose values come from nowhere.

Asked to store a fetched page's people in a memory graph, a small model wrote "This is
a simplified example; actual parsing would be more complex", then created Alice, Bob and
Charlie, while the page it had just fetched named Owen Price; it then answered that no
one was added. A call's values inside records (objects: an entity's name, a row's
fields) that share no word with the user's messages or anything a tool returned this
turn, after a tool has returned something this turn, get a note naming them and the
result they should have come from. It is a note, not a refusal: a value from the
model's own knowledge (a capital, a planet) is allowed, and the note says "if".

Top-level texts (a file's content, a commit message) are not checked: they are
written, not copied. Neither are word-less values (ids, numbers, dates), nor a record's
kind (``entityType``, ``status``: the model classifies).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

WORD = re.compile(r"[^\W\d_]{3,}")  # a word of three letters or more, in any script
MAX_CHARS = 60  # longer values are written text, not copied data
SHOWN = 4
# What the note says of the values (the loop reads it: an answer right after it is checked).
MADE_UP = ", found in no tool's result this turn nor in the request. "
# Keys whose values classify a record rather than copy data into it.
CLASSIFIES = re.compile(r"(?:type|kind|category|label|tags?|status|priority)$", re.I)


def made_up_note(call: str, arguments: Mapping[str, Any], known: str,
                 sources: list[str]) -> str:
    """The note for ``call`` (``memory.create_entities``) given ``arguments``, when
    values inside its records share no word with ``known`` (the user's messages and this
    turn's results, lower case); ``sources``: the calls whose results it should have
    read. "" when every value is found, or when no tool has returned anything yet."""
    if not sources:
        return ""
    missing = [value for value in dict.fromkeys(record_values(arguments))
               if not any(word.lower() in known for word in WORD.findall(value))]
    if not missing:
        return ""
    shown = ", ".join(repr(value) for value in missing[:SHOWN])
    more = f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else ""
    where = " or ".join(dict.fromkeys(sources[-2:]))
    return (f"Note: {call} was given {shown}{more}{MADE_UP}If they were to come from the "
            f"data, they are made up: take them from what {where} returned.")


def record_values(arguments: Mapping[str, Any]) -> Iterator[str]:
    """The short texts with a word in them found inside objects among the arguments
    (not the arguments' own top-level texts, nor lists of bare texts)."""
    for value in arguments.values():
        yield from _inside(value, in_record=False)


def _inside(value: Any, in_record: bool) -> Iterator[str]:
    if isinstance(value, str):
        if (in_record and len(value) <= MAX_CHARS and "\n" not in value
                and WORD.search(value) and "/" not in value):
            yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            # A record's kind ("entityType": "person") is the model's to choose.
            if not (isinstance(key, str) and CLASSIFIES.search(key)):
                yield from _inside(item, in_record=True)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _inside(item, in_record)
