"""A first look at the user's data a request names, shown before the model's first step.

Asked for the median of ".../latency.log", a 1.5B model wrote the whole cell before it
had seen a line: ``int(line)`` on "GET /home 120ms" failed, and it answered from a guess.
A person opens the file before writing code against it; the model is given that look:
each file the request names is read (its first lines) and each folder listed, through
the connected file tools, as real calls (shown, recorded, under the approval policy:
a read that would ask the user is not made for a look). What it shows is a note after
the request, with the call that read it, so the code knows the shape before it parses.

Paths that do not exist yet (the file to write) are left out without a word.

A request often names its files by bare name inside the folder it gives ("the git
repository at /x … following the steps in its RELEASING.md", "Fix the Makefile"): listed
alone, the folder showed the names and the model then edited and committed against
files it had never opened. A listed folder's files that the request names this way are
read too. A small file is shown whole (the clashing port was line 20 of a 27-line
compose file, below a 12-line look); a larger one by its first lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from deskmate.app.agent.parse import LOOK_NOTE
from deskmate.app.agent.request import request_paths
from deskmate.app.agent.tool_errors import Tools
from deskmate.tools.sandbox.worker.connected_files import (
    LIST_TOOLS,
    READ_TOOLS,
    listing_entries,
    tool_text,
)
from deskmate.tools.signatures import py_identifier

MAX_PATHS = 3  # a request names a few; more is a list the model should walk itself
MAX_NAMED = 3  # files a request names by bare name in a folder it lists, read as well
LOOK_LINES = 12  # a larger file's first lines: enough to show its shape
LINE_CHARS = 160
LOOK_CHARS = 900  # per path, when cut
WHOLE_LINES = 40  # a file this short is shown whole ...
WHOLE_CHARS = 2000  # ... when it is this small, and
LOOK_BUDGET = 4000  # ... while what the look shows stays within this (each prompt holds it)
HEADER = LOOK_NOTE + " (read for you; your code must still read what it uses):"


@dataclass(frozen=True)
class FileTools:
    """The file server's read and list tools (names as the code calls them)."""

    server: str
    read: str | None
    listing: str | None
    head: bool  # the read tool takes ``head`` (its first N lines)

    @classmethod
    def find(cls, tools: Tools) -> FileTools | None:
        """The first server with a tool that reads files (``read_text_file``), or None."""
        by_server: dict[str, dict[str, Any]] = {}
        for (server, name), (spec, sig) in tools.items():
            by_server.setdefault(server, {})[name] = (spec, sig)
        for server, named in by_server.items():
            read = next((name for name in READ_TOOLS if name in named), None)
            if read is None:
                continue
            listing = next((name for name in LIST_TOOLS if name in named), None)
            head = any(p.original == "head" for p in named[read][1].params)
            return cls(server, read, listing, head)
        return None


@dataclass(frozen=True)
class Look:
    path: str
    call: str  # the call that read it, as code writes it
    text: str  # what it showed, cut to its first lines
    # A folder's listing shown whole: a cell that only lists it again is not run
    # (actions_code.py). A file's read is run again: the check of an answer read off
    # the look asks for code that reads the data, and a small file is shown whole too.
    whole_listing: bool = False

    entries: tuple[tuple[str, bool], ...] = ()  # a listed folder's (name, is a folder)

    @property
    def files(self) -> list[str]:
        return [name for name, folder in self.entries if not folder]

    def render(self) -> str:
        return f"{self.call}:\n{self.text}"


@dataclass(frozen=True)
class Looked:
    note: str  # "" when there was nothing to show
    calls: tuple[str, ...] = ()  # the listings it shows whole, as code writes the calls


def first_look(request: str, tools: Tools,
               call: Callable[[str, str, dict[str, Any]], Any]) -> Looked:
    """The note of what the request's paths hold, or "" (no file server, no path, or
    nothing there yet), and its calls. ``call(server, tool, arguments)`` runs one tool
    call; one that raises (the path is not there, or the policy refused) is left out."""
    files = FileTools.find(tools)
    if files is None or files.listing is None:
        return Looked("")
    looks: list[Look] = []
    listings: dict[str, dict[str, bool] | None] = {}  # folder -> {name: is a folder}
    shown = 0  # characters the look shows so far

    def add(path: str, folder: bool) -> Look | None:
        nonlocal shown
        look = _look(files, path, folder, call, room=LOOK_BUDGET - shown)
        if look is not None:
            looks.append(look)
            shown += len(look.text)
        return look

    for path in request_paths(request)[:MAX_PATHS]:
        path = path.rstrip("/") or "/"
        parent, _, name = path.rpartition("/")
        look = None
        if "." not in name:  # a folder, or a file without an extension (hosts, Makefile)
            look = add(path, True)
            if look is not None:  # (a path inside it needs no second listing)
                listings[path] = dict(look.entries)
        if look is None:
            # What the parent folder holds says whether the file is there, so no read
            # fails in front of the user for the file the request asks to create.
            if (parent := parent or "/") not in listings:
                listings[parent] = _entries(files, parent, call)
            entries = listings[parent]
            # (a name without "." that could not be listed is read only if it is a file)
            if (entries is not None and name in entries
                    and ("." in name or not entries[name])):
                add(path, entries[name])
    read = {look.path for look in looks}
    named = [f"{look.path.rstrip('/')}/{name}" for look in looks
             for name in named_in(request, look.files)]
    for path in [p for p in dict.fromkeys(named) if p not in read][:MAX_NAMED]:
        add(path, False)
    if not looks:
        return Looked("")
    return Looked("\n".join([HEADER, *(look.render() for look in looks)]),
                  tuple(look.call for look in looks if look.whole_listing))


def _entries(files: FileTools, folder: str,
             call: Callable[[str, str, dict[str, Any]], Any]) -> dict[str, bool] | None:
    """{name: is a folder} of what ``folder`` holds; None when it cannot be listed."""
    assert files.listing is not None
    try:
        listing = tool_text(call(files.server, files.listing, {"path": folder}))
    except Exception:  # not there, outside what the server may see, refused
        return None
    return dict(listing_entries(listing))


def named_in(request: str, names: Iterable[str]) -> list[str]:
    """The names of ``names`` the request writes as they are, as a word of their own
    ("its RELEASING.md", "Fix the Makefile"), in the order the request gives them."""
    places = {}
    for name in names:
        found = re.search(rf"(?<![\w./-]){re.escape(name)}(?![\w/-]|\.\w)", request)
        if found and len(name) >= 3:  # ("a", "x": a letter of the sentence)
            places[name] = found.start()
    return sorted(places, key=places.__getitem__)


def _look(files: FileTools, path: str, folder: bool,
          call: Callable[[str, str, dict[str, Any]], Any], room: int) -> Look | None:
    """The look at one path; a small file is shown whole if it fits in ``room``
    characters."""
    tool = files.listing if folder else files.read
    assert tool is not None
    arguments: dict[str, Any] = {"path": path}
    head = tool == files.read and files.head
    if head:
        # One more line than is shown: to tell that there is more.
        arguments["head"] = (WHOLE_LINES if room > 0 else LOOK_LINES) + 1
    try:
        value = call(files.server, tool, arguments)
    except Exception:  # refused, or a file the server cannot read as text
        return None
    written = f"{py_identifier(files.server)}.{tool}(path={path!r})"
    text = tool_text(value)
    if not folder and _small(text) and len(text) <= room:
        shown = text.rstrip("\n") or "(empty)"
    else:
        shown = _cut(text, whole=not head)
    return Look(path, written, shown, whole_listing=folder and shown == text.rstrip("\n"),
                entries=tuple(listing_entries(text)) if folder else ())


def _small(text: str) -> bool:
    lines = text.splitlines()
    return (len(lines) <= WHOLE_LINES and len(text) <= WHOLE_CHARS
            and all(len(line) <= LINE_CHARS for line in lines))


def _cut(text: str, whole: bool) -> str:
    """The first LOOK_LINES lines, each and all cut short; says how many more there are
    when the whole text was read (a ``head`` read only tells that there is more)."""
    lines = text.splitlines()
    shown = [line if len(line) <= LINE_CHARS else line[:LINE_CHARS] + " …"
             for line in lines[:LOOK_LINES]]
    out = _fit(shown)
    more = len(lines) - len(out)
    if more > 0:
        out.append(f"… ({more} more lines)" if whole else "… (more lines)")
    elif not lines:
        out = ["(empty)"]
    return "\n".join(out)


def _fit(lines: Iterable[str]) -> list[str]:
    out, size = [], 0
    for line in lines:
        size += len(line) + 1
        if size > LOOK_CHARS:
            break
        out.append(line)
    return out
