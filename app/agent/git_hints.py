"""git_add of a file that a .gitignore ignores: the line that ignores it, and the edit
that makes git track it.

The git server's git_add has no ``-f``: asked to track a file that a pattern ignores,
the 1.5B called git_add again and again with the same path until the repeat guard ended
the turn. The fix is a line ``!path`` after the pattern (or, when the pattern ignores the
file's folder, which git never looks inside, the folder's files ignored instead). Pure
functions of the error text and the .gitignore's text (read by failure_hints.py).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

from deskmate.app.agent.tool_errors import Tools
from deskmate.app.agent.value_hints import call_with

IGNORED = re.compile(r"paths are ignored by one of your \.gitignore files:\s*\n(.*?)"
                     r"(?:\n\s*hint:|'|$)", re.S)


def ignored_paths(error: str) -> list[str]:
    """The paths git refused to add because a pattern ignores them."""
    match = IGNORED.search(error)
    if match is None:
        return []
    return [line.strip() for line in match.group(1).splitlines() if line.strip()]


@dataclass(frozen=True)
class Ignoring:
    """The .gitignore line that ignores a path; ``folder``: the folder of the path it
    ignores (``data/``), else "" (it names the file itself: ``*.csv``)."""

    line: str
    folder: str = ""

    def fix(self, path: str) -> tuple[str, str]:
        """(the line, what it becomes) so that git tracks ``path`` and ignores the rest."""
        if self.folder:  # git never looks inside an ignored folder: ignore its files
            return self.line, f"{self.folder}/*\n!{path}"
        return self.line, f"{self.line}\n!{path}"


def ignoring_line(gitignore: str, path: str) -> Ignoring | None:
    """The last line of a .gitignore's text that ignores ``path`` (a path in the
    repository, '/'-separated), as git reads it: the last matching line wins, and a
    line that matches a folder above the path ignores all of it."""
    parts = path.strip("/").split("/")
    found: Ignoring | None = None
    for raw in gitignore.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line[1:] if negated else line
        only_folder = pattern.endswith("/")
        anchored = "/" in pattern.rstrip("/")  # a '/' before the end: from the root
        pattern = pattern.strip("/")
        for depth in range(1, len(parts) + 1):
            is_folder = depth < len(parts)
            if only_folder and not is_folder:
                continue
            target = "/".join(parts[:depth]) if anchored else parts[depth - 1]
            if fnmatch.fnmatchcase(target, pattern):
                folder = "/".join(parts[:depth]) if is_folder else ""
                found = None if negated else Ignoring(line, folder)
                break
    return found


def unignore_hint(tools: Tools, repo: str, path: str, gitignore: str | None,
                  tool: str) -> str:
    """The hint after a git add of ``path`` (in the repository at ``repo``) that a
    .gitignore refused: the line that ignores it and the edit to copy."""
    file = f"{repo.rstrip('/')}/.gitignore"
    ignoring = ignoring_line(gitignore, path) if gitignore is not None else None
    if ignoring is None:
        return (f"\nHint: a .gitignore pattern ignores {path}, and {tool} cannot force it: "
                f"add the line `!{path}` below that pattern in its .gitignore, then call "
                f"{tool} again.")
    old, new = ignoring.fix(path)
    why = (f"the line `{old}` of {file} ignores its folder {ignoring.folder}/, and git "
           "never looks inside an ignored folder" if ignoring.folder
           else f"the line `{old}` of {file} ignores it")
    return (f"\nHint: {tool} cannot stage {path}: {why} ({tool} cannot force it). To track "
            f"it and keep the rest ignored, change that line to {new!r}"
            f"{_edit_call(tools, file, old, new)}, then call {tool} again.")


def _edit_call(tools: Tools, file: str, old: str, new: str) -> str:
    """The edit of ``file`` to copy (``old`` replaced by ``new``), with a connected tool
    that edits files by text."""
    for (server, name), (_, sig) in tools.items():
        if name == "edit_file" and {"path", "edits"} <= {p.original for p in sig.params}:
            edits: Any = [{"oldText": old, "newText": new}]
            return f": {call_with(server, sig, {}, {'path': file, 'edits': edits})}"
    return ""

