"""What a file server's path error adds, so that the model's next call is right: the
call the error points to (a file is read, a folder listed, a missing folder made first,
a web page fetched), the folder above a missing path, and for git's unmatched pathspec
the name the repository's folder likely meant and the tool that writes the file first.

Pure functions of the error text, the call's arguments and the session's tools, as in
tool_errors.py; failure_hints.py makes the one call among them (listing the folder).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping
from typing import Any

from deskmate.app.agent.request import web_addresses
from deskmate.app.agent.tool_errors import (
    MAKE_FOLDER_TOOLS,
    MISSING_PATH,
    WRITE_FILE_TOOLS,
    Tools,
    path_arguments,
)
from deskmate.tools.signatures import py_identifier

# File servers' path errors (Node's and Python's names for them), with what to call next.
PATH_ERRORS = (
    (re.compile(r"ENOTDIR|not a directory", re.I), ("read_text_file", "read_file"),
     "that path is a file, not a folder; read it with"),
    (re.compile(r"EISDIR|is a directory", re.I), ("list_directory", "directory_tree"),
     "that path is a folder; list it with"),
    (MISSING_PATH, ("list_directory", "search_files"),
     "nothing is at that path; see what its folder holds with"),
)
UNMATCHED_PATHSPEC = re.compile(r"pathspec '([^']*)' did not match any files", re.I)
FOLDER_LINES = 30  # of a folder's listing shown after a "no such file" error


def path_hint(tools: Tools, server: str, error: str, tool: str = "") -> str:
    """The next call for a file server's path errors, which small models answer with
    "the path is not a directory" instead of reading the file (or listing the folder)
    with the server's own tools. A file written (``tool``) into a folder that does not
    exist needs the folder made first."""
    maker = next((sig for (s, name), (_, sig) in tools.items()
                  if s == server and name in MAKE_FOLDER_TOOLS), None)
    folder = missing_folder(error)
    if tool in WRITE_FILE_TOOLS and maker is not None and folder is not None:
        return (f"\nHint: the folder {folder} does not exist yet: make it first with "
                f"{py_identifier(server)}.{maker.name}(path={folder!r}), then write the file.")
    for pattern, names, advice in PATH_ERRORS:
        if pattern.search(error):
            for name in names:
                if (server, name) in tools:
                    call = tools[(server, name)][1].call_text()
                    return f"\nHint: {advice} {py_identifier(server)}.{call}"
    return ""


# The reference file server's refusal: "Access denied - path outside allowed
# directories: /w/logs not in /w/workspace" (several folders: ", "-separated).
OUTSIDE = re.compile(r"outside allowed directories: (/\S*?) not in (.+?)\s*$", re.M)


def outside_hint(error: str) -> str:
    """For a path beside the folder the server may reach (asked to make "a folder named
    logs there", the 1.5B made /w/logs for the workspace /w/workspace, and repeated the
    refused call): the path inside that folder, which the request most likely meant."""
    found = OUTSIDE.search(error)
    if found is None:
        return ""
    path = found.group(1).rstrip("/") or "/"
    allowed = [d.strip().rstrip("/") for d in found.group(2).split(",") if d.strip()]
    # The folder that shares the most of the path's start (/w/workspace for /w/logs).
    best = max(allowed, key=lambda d: len(posixpath.commonpath([d, path])), default=None)
    if best is None or path.startswith(best + "/"):
        return ""
    if posixpath.commonpath([best, path]) == "/":  # nowhere near: no path to offer
        return (f"\nHint: the server reaches only what is inside {', '.join(allowed)}; "
                f"{path} is outside.")
    inside = f"{best}/{posixpath.basename(path)}"
    return (f"\nHint: the server reaches only what is inside {best}; {path} is outside it. "
            f"Inside it, that path is {inside!r}: use that.")


def web_address_hint(tools: Tools, error: str, arguments: Mapping[str, Any],
                     said: str) -> str:
    """For a path that is not there, named after a web address of the conversation
    (``path='products'`` for http://h/products.html): a page is not a file. Told that
    nothing is at the path, the 1.5B listed the missing folder until the turn ended;
    the page was the fetch tool's to read, which the head start had shown."""
    if not MISSING_PATH.search(error):
        return ""
    fetchers = [(server, sig) for (server, _), (_, sig) in tools.items()
                if any(p.original in ("url", "uri") for p in sig.params)]
    for _, value in path_arguments(arguments):
        name = posixpath.basename(value.rstrip("/"))
        stem = name.rsplit(".", 1)[0]
        address = next((a for a in web_addresses(said) if stem and re.search(
            rf"/{re.escape(stem)}(?:\.[\w]+)?(?:[/?#]|$)", a)), None)
        if address is None or not fetchers:
            continue
        server, sig = fetchers[0]
        key = next(p.original for p in sig.params if p.original in ("url", "uri"))
        return (f"\nHint: {name} is part of the web address {address} in the request: a "
                f"web page is not a file here; read it with "
                f"{py_identifier(server)}.{sig.name}({key}={address!r})")
    return ""


def missing_folder(error: str) -> str | None:
    """The folder above the path a "no such file or directory" error names, if any."""
    if not MISSING_PATH.search(error):
        return None
    quoted = re.findall(r"'(/[^']*)'", error)
    return (posixpath.dirname(quoted[-1].rstrip("/")) or "/") if quoted else None


def folder_note(folder: str, listing: Any) -> str:
    """A folder's listing, as it follows a "no such file" error: a small model that
    guessed a file name (src/src.py) otherwise spends its next step listing the folder,
    or guesses again."""
    text = listing if isinstance(listing, str) else json.dumps(listing)
    lines = text.strip().splitlines()
    if not lines:
        # An empty "holds:" read as a listing still to come; the model listed it again.
        return f"\n{folder} is empty: it holds no files or folders."
    shown = "\n".join(lines[:FOLDER_LINES]) + (
        f"\n… {len(lines) - FOLDER_LINES} more" if len(lines) > FOLDER_LINES else "")
    return f"\n{folder} holds:\n{shown}"


def pathspec_folder(error: str, arguments: Mapping[str, Any]) -> str | None:
    """For git's "pathspec did not match any files": the repository's folder the call
    named, to look for the name that was meant (the model wrote "LICENSE", then staged
    "LICENSE.txt")."""
    if not UNMATCHED_PATHSPEC.search(error):
        return None
    folder = next((value for _, value in path_arguments(arguments)
                   if value.startswith("/")), None)
    return folder.rstrip("/") or "/" if folder else None


def similar_name(error: str, listing: Any) -> str | None:
    """The name in a folder's listing that the unmatched pathspec of ``error`` likely
    meant: the same name before its extension, or a close spelling."""
    import difflib

    match = UNMATCHED_PATHSPEC.search(error)
    if match is None:
        return None
    wanted = posixpath.basename(match.group(1))
    text = listing if isinstance(listing, str) else json.dumps(listing)
    names = [line.split("]", 1)[1].strip() if line.startswith("[") else line.strip()
             for line in text.splitlines()]
    names = [name for name in names if name and name != wanted and not name.startswith(".")]
    stem = wanted.split(".")[0].lower()
    same = [name for name in names if name.split(".")[0].lower() == stem]
    close = same or difflib.get_close_matches(wanted, names, n=1, cutoff=0.8)
    return close[0] if close else None


def write_first(tools: Tools, error: str, similar: str | None = None,
                staged: str = "") -> str:
    """For git's "pathspec did not match any files": the file to add is not there yet,
    and the tool that writes it (on whichever server has one). Small models stage a file
    the request asked them to create, then stage it again. ``similar``: a name the
    repository's folder holds that the call likely meant; ``staged``, the call that
    failed (``git.git_add``), written again with that name when given."""
    match = UNMATCHED_PATHSPEC.search(error)
    if match is None:
        return ""
    writer = next(((s, sig) for (s, name), (_, sig) in tools.items()
                   if name in WRITE_FILE_TOOLS), None)
    how = f"{py_identifier(writer[0])}.{writer[1].call_text()}" if writer else None
    if similar:
        that = (f" that name with {staged.replace(repr(match.group(1)), repr(similar))}"
                if staged and repr(match.group(1)) in staged else " that name")
        return (f"\nHint: the repository's folder holds {similar!r}: stage{that}"
                + (f", or write the file first with {how}." if how else "."))
    if how is None:
        return ""
    return f"\nHint: that file is not in the folder yet: write it first with {how}, then add it."
