"""``TurnRecord``: what this turn's tool calls were given and returned.

The bridge (bridge.py) checks and runs each call; this record is what the calls leave
behind for the rest of the turn: the loop's checks before a final answer read which
tools ran and with what (a step still missing, a web address never opened, a file only
listed), the notes after a cell read what the calls returned, and the made-up check
compares the records a call is given with what the user and the tools said. A new
record per turn; ``new_step`` clears only the step's results.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from deskmate.app.agent.blind_delete import deletes_records
from deskmate.app.agent.empty_result import empty
from deskmate.app.agent.made_up import made_up_note, record_values
from deskmate.app.agent.overwrite import Loss, asks_to_remove, loss, whole_write
from deskmate.app.agent.tool_errors import TEXT_WORDS, Tools, path_arguments
from deskmate.app.agent.unprinted import Returned
from deskmate.tools.signatures import py_identifier

REPEAT_LIMIT = 3  # identical calls allowed per turn (or step) before the bridge refuses
UNCHANGED_WRITE = " gave the file the text it already held"  # the note's words (loop.py)


@dataclass
class TurnRecord:
    calls: int = 0  # calls that ran (refused ones do not count)
    changes: int = 0  # of those, calls that succeeded to a tool not marked read-only
    limit_reached: bool = False  # a call was refused for the turn's max_tool_calls
    sent: list[str] = field(default_factory=list)  # each call's arguments, as JSON
    called: list[tuple[str, str]] = field(default_factory=list)  # ... (server, tool)
    changed: list[str] = field(default_factory=list)  # the paths changes were given
    returned: list[Returned] = field(default_factory=list)  # this step's results, in order
    # Results as text and the calls that returned them: what a record's values should
    # have been copied from (made_up.made_up_note), the words a replace meant
    # (self_replace.py).
    results: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    documented: set[tuple[str, str]] = field(default_factory=set)  # tools an error showed
    _repeats: Counter[str] = field(default_factory=Counter)
    # Code mode counts repeats within a step: each cell is a whole program that reads
    # again what it uses, and a fourth cell's read of the same file is not a runaway loop
    # (one cell's loop over the same call is). Eager mode counts them over the turn.
    per_step: bool = False
    _made_up_step: int = -1  # the step whose made-up note was given (one a step)
    # Each file's text as this turn last saw it: what a read returned (the first look's
    # too), or what a write gave it.
    _texts: dict[str, str] = field(default_factory=dict)
    _rewritten: set[str] = field(default_factory=set)  # files a write of this turn changed
    unchanged: list[str] = field(default_factory=list)  # files a write left as they were
    # Calls refused once: writes as losses (overwrite.py), deletes of records unread
    # (blind_delete.py).
    _refused: set[str] = field(default_factory=set)
    # A cell that met a delete refused as unread may be written again as it was, and the
    # delete then runs (a write refused as a loss may not: the repeat guard stays, since
    # the 1.5B wrote the refused write again unchanged).
    deletes_refused: int = 0

    def new_step(self) -> None:
        self.returned = []
        if self.per_step:
            self._repeats.clear()

    def repeated(self, server: str, tool: str, arguments: dict[str, Any]) -> bool:
        """Count a call about to run; True when these exact arguments went to this tool
        more than REPEAT_LIMIT times this turn, or this step with ``per_step`` (a runaway
        loop)."""
        key = json.dumps([server, tool, arguments], sort_keys=True, default=str)
        self._repeats[key] += 1
        return self._repeats[key] > REPEAT_LIMIT

    def ran(self, server: str, tool: str, arguments: dict[str, Any]) -> None:
        """A call the policy allowed, as it starts."""
        self.calls += 1
        self.sent.append(json.dumps(arguments, ensure_ascii=False, default=str))
        self.called.append((server, tool))

    def changed_by(self, arguments: dict[str, Any]) -> None:
        """A call to a tool that may change things succeeded."""
        self.changes += 1
        self.changed += [value for value in arguments.values()
                         if isinstance(value, str) and value.startswith("/")]

    def loses(self, tool: str, arguments: dict[str, Any], request: str) -> Loss | None:
        """What a whole-file write would throw away of the text this turn saw in the
        file, when it is most of it and the request asks to remove nothing (overwrite.py);
        None for the same write made again after being told."""
        write = whole_write(tool, arguments)
        if write is None:
            return None
        key, path, text = write
        old = self._texts.get(path)
        if old is None or asks_to_remove(request):
            return None
        found = loss(old, text, path, key)
        if found is None:
            return None
        again = json.dumps([tool, arguments], sort_keys=True, default=str)
        if again in self._refused:
            return None
        self._refused.add(again)
        return found

    def blind_delete(self, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether a delete of records comes before anything this turn returned
        (blind_delete.py); False for the same call made again after being told."""
        # (the first look's reads are no results of the model's, but were shown to it)
        if self.results or self._texts or not deletes_records(tool, arguments):
            return False
        again = json.dumps([tool, arguments], sort_keys=True, default=str)
        if again in self._refused:
            return False
        self._refused.add(again)
        self.deletes_refused += 1
        return True

    def saw(self, reads: bool, arguments: dict[str, Any], text: str) -> tuple[str, str] | None:
        """Keep what a call that succeeded says a file holds (``reads``: a tool that only
        reads); for a write that gave a file exactly the text this turn saw in it, the
        argument that named the file, as (key, path); else None."""
        paths = path_arguments(arguments)
        if len(paths) != 1:
            return None
        key, path = paths[0]
        written = next((v for k, v in arguments.items()
                        if isinstance(v, str) and k.lower().endswith(TEXT_WORDS)), None)
        if written is not None:
            before = self._texts.get(path)
            self._texts[path] = written
            if before is not None and before.strip() == written.strip():
                if path in self._rewritten:
                    # The text this turn's own write gave it, written again: the first
                    # write made the change (told "nothing changed" after the second,
                    # the 1.5B took its change for lost).
                    return None
                if path not in self.unchanged:
                    self.unchanged.append(path)
                return key, path
            self._rewritten.add(path)
            if path in self.unchanged:
                self.unchanged.remove(path)
            return None
        if reads and whole_read(arguments, key, text) and text.strip():
            self._texts[path] = text
        elif not reads:
            self._texts.pop(path, None)  # changed some other way (an edit, a move)
        return None

    def result(self, name: str, value: Any, text: str, note: str,
               repaired: str = "") -> None:
        """What a call of the model's code returned (``name``: ``fetch.fetch``), with the
        note it adds for the model and, for a call run fixed, the note that says so."""
        self.returned.append(Returned(name, value, note, repaired))
        if text.strip() and not empty(value):
            self.results.append(text)
            self.sources.append(name)

    def made_up(self, name: str, arguments: dict[str, Any], step: int,
                said: Callable[[], str]) -> str:
        """The note for records given values found nowhere (made_up.py), once a step;
        read before this call's own result, which often repeats what it was given.
        ``said`` is the conversation's text, joined only for a call given records."""
        if (self._made_up_step == step or not self.sources
                or not any(record_values(arguments))):
            return ""
        known = "\n".join([said(), *self.results]).lower()
        note = made_up_note(name, arguments, known, self.sources)
        if note:
            self._made_up_step = step
        return note

    def takers(self, name: str, tools: Tools) -> list[str]:
        """The calls of the tools, on servers this turn used, with a list or object
        parameter called ``name``, when none of them was called this turn."""
        used = {server for server, _ in self.called}
        found = [(server, sig) for (server, _), (_, sig) in tools.items()
                 if server in used and any(p.name == name and p.type.startswith(
                     ("list", "dict", "{")) for p in sig.params)]
        if any((server, sig.name) in self.called for server, sig in found):
            return []
        return [f"{py_identifier(server)}.{sig.call_text()}" for server, sig in found]


# A read's arguments that take part of a file: its first or last lines.
LINE_LIMITS = ("head", "tail")


def whole_read(arguments: dict[str, Any], key: str, text: str) -> bool:
    """Whether a read returned the whole file: no argument but the path (``key``), or a
    head or tail of more lines than the text has. The first look reads with a head, and
    a file shorter than it is read whole: its text, missed, let a write of garbage over
    a three-line file through (the loss check had nothing to compare with)."""
    lines = len(text.splitlines())
    return all(v is None or (k.lower() in LINE_LIMITS and isinstance(v, int | float)
                             and not isinstance(v, bool) and lines < v)
               for k, v in arguments.items() if k != key)


def unchanged_note(call: str, named: tuple[str, str]) -> str:
    """For a write whose text is what the file held (``named``: the argument that named
    it, as ``TurnRecord.saw`` gives it): the change the code meant did not happen
    (``text.replace('recieve', 'receive')`` on a text spelled otherwise gives it back as
    it was), and the commit after it finds nothing to stage."""
    key, path = named
    return (f"Note: {call}({key}={path!r}, …){UNCHANGED_WRITE} (as read this turn): "
            "nothing changed. If the request asks for a change, the new text must differ: "
            "print the part your code replaces to check it is in the file as written "
            "(its spelling and case).")
