"""What the worker's parts share: the toolspace a cell sees, and whether a cell runs.

Plain classes, not dataclasses: importing dataclasses (and with it inspect) would add
to every sandbox's start.
"""

from __future__ import annotations

from typing import NamedTuple

# A cell's code is compiled under "<cell N>": tracebacks and the path hook tell the
# cell's own frames from the worker's by this prefix.
CELL_PREFIX = "<cell "
# The cells' module. What the worker puts in a cell's reach (ToolError, the server
# objects, the routed open) says it belongs there, as when the worker was one script:
# tracebacks read "ToolError: ..." and help() "in module __main__", never the
# worker's own module names.
CELLS_MODULE = "__main__"


class Toolspace(NamedTuple):
    """The connected servers' names and tools, as the host's setup frame listed them."""

    server_names: tuple[str, ...]
    # tool name -> the servers that have it, for a hint when code calls a tool bare.
    tool_servers: dict[str, list[str]]
    # "server.tool" -> its call line ``tool(a: str, b: int = 0)``, for hints to show.
    signatures: dict[str, str] = {}  # a NamedTuple default, never mutated

    @classmethod
    def of(cls, servers: dict[str, list[str]],
           signatures: dict[str, str] | None = None) -> Toolspace:
        tool_servers: dict[str, list[str]] = {}
        for server, tools in servers.items():
            for tool in tools:
                tool_servers.setdefault(tool, []).append(server)
        return cls(tuple(servers), tool_servers, signatures or {})


class WorkerState:
    """The worker's mutable facts, read by the channel (an interrupt goes only to a
    running cell) and the path hook (only a cell's own file calls are its concern, and
    its relative paths may be the request's files)."""

    __slots__ = ("folder", "in_cell", "named", "noted", "pid", "toolspace")

    def __init__(self, toolspace: Toolspace, pid: int) -> None:
        self.toolspace = toolspace
        self.pid = pid  # the worker's own; a process that a cell forked has another
        self.in_cell = False
        # The running cell's request: the folder of the user's that holds every path it
        # names (None: none such), and its files by the names it gives them ("LINES.txt"
        # -> the user's path). A relative path the sandbox lacks is taken from these.
        self.folder: str | None = None
        self.named: dict[str, str] = {}
        self.noted: set[str] = set()  # the relative paths the running cell was told of
