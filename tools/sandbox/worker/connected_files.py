"""Plain Python file access to the user's files, carried by the connected file tools.

Small models write ``open(path).read()`` and ``os.listdir(folder)`` far more readily
than ``filesystem.read_text_file(path=...)``; in the eval suite that was code mode's
main failure. When a connected server has the usual file tools (the MCP filesystem
server's names), a cell's plain file calls on a path the sandbox does not have (which
ones: routed.py, which replaces them) become these operations: each is a real tool
call — checked, approved, recorded — so the tool channel stays the only way out. Paths
the sandbox has (its working folder) keep plain Python behaviour.

Runs inside the sandbox worker: standard library only.
"""

from __future__ import annotations

import errno
import fnmatch
import io
import os
import re
import stat
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, NamedTuple

READ_TOOLS = ("read_text_file", "read_file")
WRITE_TOOLS = ("write_file",)
LIST_TOOLS = ("list_directory",)
MKDIR_TOOLS = ("create_directory",)
MOVE_TOOLS = ("move_file",)
INFO_TOOLS = ("get_file_info",)
# Calls that change nothing: a folder's listing stays good across them (Channel.changes).
UNCHANGING_TOOLS = frozenset(READ_TOOLS + LIST_TOOLS + INFO_TOOLS)
# get_file_info's text: "size: 6\ncreated: …\nisFile: true\n…", one "key: value" a line.
INFO_LINE = re.compile(r"^\s*(\w+):\s*(.*?)\s*$", re.M)
# Its times are JavaScript's Date text: "Sun Dec 06 2026 01:30:00 GMT+0000 (…)".
JS_DATE = re.compile(r"\w{3} (\w{3}) (\d{1,2}) (\d{4}) (\d\d:\d\d:\d\d) GMT([+-]\d{4})")


class FileInfo(NamedTuple):
    """What a server's file info says of a path (times in seconds since the epoch,
    None where it did not say)."""

    size: int
    is_dir: bool
    modified: float | None
    accessed: float | None
    created: float | None
    permissions: int | None  # the mode's permission bits (0o644)

    def stat(self) -> os.stat_result:
        """As os.stat gives it: the tools know no inode, device, links or owner."""
        kind = stat.S_IFDIR if self.is_dir else stat.S_IFREG
        mode = kind | (self.permissions if self.permissions is not None else 0o644)
        modified = self.modified or 0.0
        accessed = self.accessed or modified
        created = self.created or modified
        return os.stat_result((mode, 0, 0, 1, 0, 0, self.size, int(accessed),
                               int(modified), int(created), accessed, modified, created))


class ToolFiles:
    """The file tools of one server, as file operations; ``call(tool, **kwargs)``."""

    def __init__(self, server: str, tools: list[str], call: Callable[..., object],
                 changes: Callable[[], int] | None = None) -> None:
        def first(names: tuple[str, ...]) -> str | None:
            return next((name for name in names if name in tools), None)

        self.server, self._call, self._changes = server, call, changes
        # A folder's entries as this cell last listed them, with the count of calls that
        # may change things at that moment. ``os.path.isfile(join(folder, name))`` in a
        # loop lists the same folder once a name: the bridge refuses the fourth identical
        # call as a runaway, and the refusal read as "not a file" (a listing of five files
        # printed one). Kept until a call may have changed something, or the cell ends;
        # without ``changes`` (no count of such calls) nothing is kept.
        self._listed: dict[str, tuple[int, list[tuple[str, bool]]]] = {}
        self.read_tool, self.write_tool = first(READ_TOOLS), first(WRITE_TOOLS)
        self.list_tool = first(LIST_TOOLS)
        self.mkdir_tool, self.move_tool = first(MKDIR_TOOLS), first(MOVE_TOOLS)
        self.info_tool = first(INFO_TOOLS)

    @classmethod
    def find(cls, servers: dict[str, list[str]],
             call_for: Callable[[str], Callable[..., object]],
             changes: Callable[[], int] | None = None) -> ToolFiles | None:
        """The first server that can read files, or None."""
        for server, tools in servers.items():
            if any(name in tools for name in READ_TOOLS):
                return cls(server, tools, call_for(server), changes)
        return None

    def forget(self) -> None:
        """A new cell: folders are listed afresh (the user may have changed them)."""
        self._listed.clear()

    # ------------------------------------------------------------ operations

    def open(self, path: str, mode: str = "r", encoding: str | None = None) -> io.IOBase:
        binary = "b" in mode
        if "+" in mode or not set(mode) & set("rwax"):
            raise self._error(path, f"mode {mode!r} is not supported on the user's files "
                                    "from here; read, then write the whole file")
        if "r" in mode:
            text = self.read(path)
            return io.BytesIO(text.encode(encoding or "utf-8")) if binary else \
                io.StringIO(text)
        if self.write_tool is None:
            raise self._error(path, f"server {self.server!r} has no write_file tool")
        start = ""
        if "a" in mode:
            try:
                start = self.read(path)
            except FileNotFoundError:
                start = ""
        elif "x" in mode and self.exists(path):
            raise FileExistsError(errno.EEXIST, "File exists", path)
        writer = _BytesWriter if binary else _TextWriter
        return writer(self, path, start, encoding or "utf-8")

    def read(self, path: str) -> str:
        return tool_text(self._tool(self.read_tool, path))

    def write(self, path: str, content: str) -> None:
        self._tool(self.write_tool, path, content=content)

    def listdir(self, path: str) -> list[str]:
        return [name for name, _ in self.entries(path)]

    def entries(self, path: str) -> list[tuple[str, bool]]:
        """(name, is a folder) of each entry, as list_directory gives them."""
        if self.list_tool is None:
            raise self._error(path, f"server {self.server!r} has no list_directory tool")
        key, changes = path.rstrip("/") or "/", self._changes
        kept = self._listed.get(key)
        if kept is not None and changes is not None and kept[0] == changes():
            return list(kept[1])
        entries = listing_entries(tool_text(self._tool(self.list_tool, path)))
        if changes is not None:
            self._listed[key] = (changes(), entries)
        return list(entries)

    def walk(self, top: str, topdown: bool = True,
             onerror: Callable[[OSError], object] | None = None,
             ) -> Iterator[tuple[str, list[str], list[str]]]:
        """os.walk over the tools: one list_directory call per folder."""
        try:
            entries = self.entries(top)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            return
        dirs = [name for name, is_dir in entries if is_dir]
        files = [name for name, is_dir in entries if not is_dir]
        if topdown:
            yield top, dirs, files
        for name in dirs:  # after the caller may have pruned them, as os.walk does
            yield from self.walk(f"{top.rstrip('/')}/{name}", topdown, onerror)
        if not topdown:
            yield top, dirs, files

    def mkdir(self, path: str, exist_ok: bool = False) -> None:
        """A folder, with the folders above it (the tool makes those too)."""
        if self.mkdir_tool is None:
            raise self._error(path, f"server {self.server!r} has no create_directory tool")
        if not exist_ok and self.exists(path):
            raise FileExistsError(errno.EEXIST, "File exists", path)
        self._tool(self.mkdir_tool, path)

    def move(self, source: str, destination: str) -> None:
        """A file or folder moved or renamed; the destination must not exist."""
        if self.move_tool is None:
            raise self._error(source, f"server {self.server!r} has no move_file tool")
        self._run(self.move_tool, source, source=source, destination=destination)

    def glob(self, top: str, parts: list[str], recursive: bool,
             hidden: bool) -> list[str]:
        """The paths under the folder ``top`` that match the pattern's ``parts`` (its
        components after ``top``), as glob.glob gives them: one list_directory call per
        folder looked into; ``**`` (with ``recursive``) is any number of folders."""
        found: list[str] = []

        def visit(folder: str, rest: list[str]) -> None:
            if not rest:
                found.append(folder)
                return
            part, after = rest[0], rest[1:]
            try:
                entries = self.entries(folder)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                return  # matches nothing, as in glob (a refused call is said, though)
            if recursive and part == "**":
                visit(folder, after)  # ** is also no folder at all
                for name, is_dir in entries:
                    if is_dir and (hidden or not name.startswith(".")):
                        visit(f"{folder.rstrip('/')}/{name}", rest)
                return
            for name, is_dir in entries:
                if name.startswith(".") and not (hidden or part.startswith(".")):
                    continue
                if fnmatch.fnmatchcase(name, part) and (is_dir or not after):
                    visit(f"{folder.rstrip('/')}/{name}", after)

        visit(top, parts)
        return list(dict.fromkeys(found))

    def info(self, path: str) -> FileInfo:
        """A path's size, kind, times and permissions, from the server's file info."""
        if self.info_tool is None:
            raise self._error(path, f"server {self.server!r} has no get_file_info tool")
        said = {key.lower(): value
                for key, value in INFO_LINE.findall(tool_text(self._tool(self.info_tool, path)))}
        if not said.get("size", "").isdigit():
            raise self._error(path, "the file info did not say its size")
        permissions = said.get("permissions", "")
        return FileInfo(
            size=int(said["size"]), is_dir=said.get("isdirectory", "").lower() == "true",
            modified=_when(said.get("modified") or said.get("mtime")),
            accessed=_when(said.get("accessed") or said.get("atime")),
            created=_when(said.get("created") or said.get("birthtime")),
            permissions=int(permissions, 8) if re.fullmatch(r"[0-7]{3,4}", permissions)
            else None)

    def kind(self, path: str) -> str | None:
        """"file", "dir" or None (absent, or the tools cannot tell)."""
        parent, _, name = path.rstrip("/").rpartition("/")
        if self.list_tool is None or not name:
            return None
        try:
            entries = dict(self.entries(parent or "/"))
        except OSError:
            return None
        if name not in entries:
            return None
        return "dir" if entries[name] else "file"

    def exists(self, path: str) -> bool:
        return self.kind(path) is not None

    # ------------------------------------------------------------ plumbing

    def _tool(self, tool: str | None, path: str, **kwargs: object) -> object:
        assert tool is not None
        return self._run(tool, path, path=path, **kwargs)

    def _run(self, tool: str, at: str, **kwargs: object) -> object:
        """The tool's call, its failure raised as the OSError plain Python would give
        (for the path ``at``)."""
        try:
            return self._call(tool, **kwargs)
        except Exception as exc:  # the sandbox's ToolError: the server said why
            message = str(exc)
            lower = message.lower()
            if "enoent" in lower or "no such file" in lower or "not found" in lower:
                raise FileNotFoundError(errno.ENOENT, message, at) from None
            if "denied" in lower or "outside allowed" in lower or "eacces" in lower:
                raise PermissionError(errno.EACCES, message, at) from None
            if "already exists" in lower or "eexist" in lower:
                raise FileExistsError(errno.EEXIST, message, at) from None
            if "enotdir" in lower or "not a directory" in lower:
                raise NotADirectoryError(errno.ENOTDIR, message, at) from None
            raise OSError(errno.EIO, message, at) from None

    def _error(self, path: str, why: str) -> OSError:
        return OSError(errno.EINVAL, f"{why} (through {self.server}'s tools)", path)


def _when(text: str | None) -> float | None:
    """A time the file info gives (JavaScript's Date text or ISO 8601) in seconds since
    the epoch; None when it is neither."""
    if not text:
        return None
    from datetime import datetime  # only a stat needs it: not on every sandbox's start

    found = JS_DATE.match(text)
    try:
        if found is not None:
            month, day, year, clock, zone = found.groups()
            return datetime.strptime(f"{month} {day} {year} {clock} {zone}",
                                     "%b %d %Y %H:%M:%S %z").timestamp()
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def listing_entries(listing: str) -> list[tuple[str, bool]]:
    """(name, is a folder) of each "[FILE] name" / "[DIR] name" line of a listing."""
    out = []
    for line in listing.splitlines():
        tag, _, name = line.strip().partition(" ")
        if tag in ("[FILE]", "[DIR]") and name:
            out.append((name, tag == "[DIR]"))
    return out


def tool_text(value: object) -> str:
    """A file tool's answer as text: the filesystem server's {"content": text}, or text."""
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return value["content"]
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value)


class _WritesThrough:
    """Collects what the code writes; closing the file writes it through the tool.

    A ``with`` block that raises closes the file without writing: the user's file stays
    as it was. (Plain Python would have emptied it at ``open``; a small model's cell
    that fails halfway, e.g. on parsing what it read, would then leave an empty file
    behind and a "Successfully wrote" result that reads as success.)

    Mixed into io.StringIO or io.BytesIO, which provide ``closed``, ``getvalue`` and the
    ``close`` that ``super()`` reaches."""

    getvalue: Callable[[], str | bytes]
    if TYPE_CHECKING:
        @property
        def closed(self) -> bool: ...

    def _setup(self, files: ToolFiles, path: str, encoding: str) -> None:
        self._files, self._path, self._encoding, self.name = files, path, encoding, path

    def close(self) -> None:
        if not self.closed:
            content = self.getvalue()
            if isinstance(content, bytes):
                content = content.decode(self._encoding, errors="replace")
            super().close()  # pyright: ignore[reportAttributeAccessIssue] (the io class)
            self._files.write(self._path, content)

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if kind is not None and not self.closed:
            # Drop what was collected, then close: nothing reaches the tool.
            super().close()  # pyright: ignore[reportAttributeAccessIssue] (the io class)
            return
        self.close()


class _TextWriter(_WritesThrough, io.StringIO):
    def __init__(self, files: ToolFiles, path: str, start: str, encoding: str) -> None:
        super().__init__(start)
        self._setup(files, path, encoding)
        self.seek(0, io.SEEK_END)


class _BytesWriter(_WritesThrough, io.BytesIO):
    def __init__(self, files: ToolFiles, path: str, start: str, encoding: str) -> None:
        super().__init__(start.encode(encoding))
        self._setup(files, path, encoding)
        self.seek(0, io.SEEK_END)
