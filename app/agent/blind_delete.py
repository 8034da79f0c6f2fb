"""A delete of records that nothing in the turn has read: not run, once.

Asked to remove a note about someone's coffee order from a memory graph, the 1.5B's
first call deleted a relation it made up ({"from": "Jonah Price", "to": "coffee order",
"relationType": "has"}); the memory server deletes what matches and says success when
nothing does, and the model answered that the note was gone. A delete given records
(objects: relations, observations) before any call of the turn has returned anything is
refused once, with the server's tools that read what is there; the same call made again
goes through (the model may know the records exactly, from an earlier turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deskmate.app.agent.request import name_words
from deskmate.app.agent.tool_errors import Tools
from deskmate.tools.signatures import py_identifier

DELETE_WORDS = frozenset({"delete", "remove"})
READ_WORDS = frozenset({"read", "open", "search", "get", "list", "find", "query", "show"})
SHOWN = 3


def deletes_records(tool: str, arguments: Mapping[str, Any]) -> bool:
    """Whether ``tool`` deletes by the records it is given (not by a name or a path)."""
    return (bool(DELETE_WORDS & set(name_words(tool)))
            and any(_holds_records(value) for value in arguments.values()))


def _holds_records(value: Any) -> bool:
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and any(_holds_records(item) for item in value)


def readers(tools: Tools, server: str) -> list[str]:
    """The calls of ``server``'s tools that read (by their names), as signatures."""
    return [f"{py_identifier(server)}.{sig.call_text()}"
            for (s, name), (_, sig) in tools.items()
            if s == server and READ_WORDS & set(name_words(name))][:SHOWN]


def blind_delete_error(call: str, reads: list[str]) -> str:
    """The refusal: why, and what to read first."""
    how = (f"Read what is there first ({'; '.join(reads)}), then delete the records as "
           "they are written there" if reads else
           "Read what is there first, then delete the records as they are written there")
    return (f"{call} was not run: it deletes the records it is given only where they match "
            "exactly, and nothing this turn has read them, so they may not be there as "
            f"written (a delete that matches nothing changes nothing). {how}; or, if these "
            "are exactly the records, make the same call again.")
