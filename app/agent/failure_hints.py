"""``FailureHints``: what the bridge adds to a tool's error, after the server's text.

The bridge (bridge.py) raises a failed call's error as the server wrote it; small models
repeat the call unless the error shows the fix. The hints come after it, in one order:
the file server's path errors or else the tool's documentation (once a turn), a web
address taken for a path, a path beside the folder the server may reach, the folder
above a missing path, an edit's text not in the file, git's unstaged file or the name it
likely meant, a one-character text, a CSV header's column name passed as a value (or
else the value likely meant or its format), a wildcard for
one path, the request's leading '/', a move into a folder, another tool the error
names to call first, and the .gitignore line that keeps git from adding a file
(git_hints.py). Most are read from the error in path_errors.py, tool_errors.py and
value_hints.py; some need a call of their own (a folder's listing, a file's text), made
quietly through the bridge: a hint's own call makes no hints of its own, and
``calling`` tells the bridge which call that is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from deskmate.app.agent.git_hints import ignored_paths, unignore_hint
from deskmate.app.agent.header_rows import header_hint
from deskmate.app.agent.path_errors import (
    folder_note,
    missing_folder,
    outside_hint,
    path_hint,
    pathspec_folder,
    similar_name,
    web_address_hint,
    write_first,
)
from deskmate.app.agent.tool_errors import (
    WRITE_FILE_TOOLS,
    Tools,
    character_hint,
    closest_lines,
    create_first,
    edit_target,
    file_reader,
    fixed_edits,
    move_into_hint,
    named_first,
    path_arguments,
    wildcard_hint,
)
from deskmate.app.agent.turn_record import TurnRecord
from deskmate.app.agent.value_hints import call_with, format_hint, leading_slash, value_hint
from deskmate.tools.signatures import Signature
from deskmate.tools.spec import ToolSpec

log = logging.getLogger(__name__)


class FailureHints:
    """The hints for a failed call, given the bridge's tools (read when needed: the
    bridge's ``retool`` replaces them) and its ``call_json`` for the calls hints make."""

    def __init__(self, tools: Callable[[], Tools],
                 call: Callable[[str, str, dict[str, Any]], Any]) -> None:
        self._tools = tools
        self._call = call
        self.calling = False  # a hint is making its own call (_quietly)

    def text(self, server: str, spec: ToolSpec, sig: Signature, arguments: dict[str, Any],
             error: str, turn: TurnRecord, said: str) -> str:
        """What follows the error ``server``'s ``spec`` returned for ``arguments``; ""
        when nothing applies. ``said``: the text of the user's messages so far. A hint
        that fails costs the hints, never the server's error (a path of "/" once turned
        the call's failure into "ValueError: Can't mix absolute and relative paths")."""
        try:
            return self._text(server, spec, sig, arguments, error, turn, said)
        except Exception:
            log.exception("the hints for %s.%s failed", server, spec.name)
            return ""

    def _text(self, server: str, spec: ToolSpec, sig: Signature, arguments: dict[str, Any],
              error: str, turn: TurnRecord, said: str) -> str:
        tools = self._tools()
        # A path taken from a web address: the page's fetch, not the folder's listing.
        return ((web_address_hint(tools, error, arguments, said)
                 or outside_hint(error)
                 or path_hint(tools, server, error, spec.name)
                 or self._docs(turn, server, sig))
                + self._folder_shown(server, error, spec.name)
                + self._lines_shown(server, sig, error, arguments)
                + write_first(tools, error, self._meant(error, arguments),
                              call_with(server, sig, arguments))
                + character_hint(arguments, spec.name)
                + (header_hint(arguments, [said, *turn.results])
                   or value_hint(tools, server, spec, sig, arguments, error)
                   or format_hint(server, sig, arguments))
                + wildcard_hint(tools, server, sig, arguments)
                + leading_slash(server, sig, arguments, said)
                + move_into_hint(spec.name, arguments, error)
                + create_first(tools, server, sig.name, error)
                + named_first(tools, server, spec.name, error, arguments,
                              turn.changed, turn.unchanged, turn.called)
                + self._unignored(server, spec.name, error, arguments))

    def _docs(self, turn: TurnRecord, server: str, sig: Signature) -> str:
        """The tool's documentation, the first time it fails in a turn: the compact
        signature the model called from says ``timezone: str``, the docs say "IANA
        timezone name (e.g. 'America/New_York')", and a server's error often says neither."""
        if (server, sig.name) in turn.documented:
            return ""
        turn.documented.add((server, sig.name))
        return f"\nThe tool's documentation:\n{sig.text()}"

    def _folder_shown(self, server: str, error: str, tool: str) -> str:
        """For a file server's "no such file": what the folder above that path holds,
        listed with the server's own tool (tool_errors.folder_note)."""
        folder = missing_folder(error)
        if (folder is None or (server, "list_directory") not in self._tools()
                or tool in WRITE_FILE_TOOLS):  # a write's folder is missing: nothing to list
            return ""
        listing = self._list(server, folder)
        return "" if listing is None else folder_note(folder, listing)

    def _lines_shown(self, server: str, sig: Signature, error: str,
                     arguments: dict[str, Any]) -> str:
        """For an edit whose text to replace is not in the file: the file's lines closest
        to it, read with the server's own tool (tool_errors.closest_lines), and the call
        with the file's words for a one-word text to replace (tool_errors.fixed_edits)."""
        target = edit_target(error, arguments)
        tools = self._tools()
        reader = file_reader(tools, server)
        if target is None or reader is None:
            return ""
        text = self._quietly(*reader, {"path": target[0]})
        if text is None:
            return ""
        shown = closest_lines(target[0], text, target[1])
        fixed = fixed_edits(arguments, text)
        if not shown or fixed is None:
            return shown
        return f"{shown}\nLikely meant: {call_with(server, sig, {}, fixed)}"

    def _unignored(self, server: str, tool: str, error: str,
                   arguments: dict[str, Any]) -> str:
        """For git's "paths are ignored by one of your .gitignore files": the line that
        ignores the file, read from the repository's .gitignore with whichever server
        reads files (git_hints.py), and the edit that makes git track it."""
        paths = ignored_paths(error)
        repo = next((value for _, value in path_arguments(arguments)
                     if value.startswith("/")), None)
        if not paths or repo is None:
            return ""
        tools = self._tools()
        reader = file_reader(tools)  # (whichever server reads files: git's does not)
        text = (None if reader is None else
                self._quietly(*reader, {"path": f"{repo.rstrip('/')}/.gitignore"}))
        return unignore_hint(tools, repo, paths[0], text if isinstance(text, str) else None,
                             f"{server}.{tool}")

    def _meant(self, error: str, arguments: dict[str, Any]) -> str | None:
        """For git's unmatched pathspec: the name in the repository's folder that the
        call likely meant, listed with whichever server lists folders."""
        folder = pathspec_folder(error, arguments)
        lister = next((s for (s, name) in self._tools() if name == "list_directory"), None)
        if folder is None or lister is None:
            return None
        listing = self._list(lister, folder)
        return None if listing is None else similar_name(error, listing)

    def _list(self, server: str, folder: str) -> Any:
        """``folder``'s listing, or None when it cannot be had."""
        return self._quietly(server, "list_directory", {"path": folder})

    def _quietly(self, server: str, tool: str, arguments: dict[str, Any]) -> Any:
        """A call an error's hint makes (a folder's listing, a file's text), or None when
        it cannot be had."""
        if self.calling:  # the call's own failure calls nothing more
            return None
        self.calling = True
        try:
            return self._call(server, tool, arguments)
        except Exception:  # refused or failed: the hint still says what to call
            return None
        finally:
            self.calling = False
