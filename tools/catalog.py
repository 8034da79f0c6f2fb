"""One catalog over the tools of many MCP servers, live or recorded.

A catalog is built once per session from the connected servers (``Catalog.from_specs``)
or offline from a folder of recorded ``tools/list`` snapshots (``Catalog.from_snapshots``),
which is what the benchmarks and ``deskmate tools search --catalog DIR`` use. It keeps the
servers in the order they were given and each server's tools in its own order, so the
system-prompt index built from it is stable from one turn to the next.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from deskmate.tools.signatures import summary_line
from deskmate.tools.spec import ToolSpec
from deskmate.tools.suggest import did_you_mean


class CatalogError(Exception):
    """A snapshot that cannot be read, or a lookup of a server or tool that is not there."""


@dataclass(frozen=True)
class ServerInfo:
    name: str
    tool_count: int
    summary: str = ""  # one line, empty when the server says nothing about itself


class Catalog:
    """The tools of many servers, looked up by server and tool name."""

    def __init__(self, specs: Iterable[ToolSpec],
                 summaries: Mapping[str, str] | None = None) -> None:
        self._tools: dict[str, dict[str, ToolSpec]] = {}
        for spec in specs:
            tools = self._tools.setdefault(spec.server, {})
            if spec.name in tools:
                raise CatalogError(f"server {spec.server!r} lists the tool {spec.name!r} twice")
            tools[spec.name] = spec
        for server in summaries or {}:
            self._tools.setdefault(server, {})
        self._summaries = {name: summary_line(text) for name, text in (summaries or {}).items()}

    @classmethod
    def from_specs(cls, specs: Iterable[ToolSpec],
                   summaries: Mapping[str, str] | None = None) -> Catalog:
        """From live servers: their tools, and each server's ``instructions`` or title."""
        return cls(specs, summaries)

    @classmethod
    def from_snapshots(cls, folder: str | Path) -> Catalog:
        """From a folder of ``{"server": …, "tools": [{name, description, inputSchema}]}`` files."""
        folder = Path(folder)
        if not folder.is_dir():
            raise CatalogError(f"catalog folder {folder} does not exist or is not a folder")
        files = sorted(folder.glob("*.json"))
        if not files:
            raise CatalogError(f"catalog folder {folder} holds no .json snapshot files")
        specs: list[ToolSpec] = []
        summaries: dict[str, str] = {}
        for path in files:
            server, tools, summary = _read_snapshot(path)
            if server in summaries:
                raise CatalogError(f"{path}: server {server!r} is also recorded in another file "
                                   f"of {folder}; keep one snapshot per server")
            summaries[server] = summary
            specs.extend(tools)
        return cls(specs, summaries)

    # ------------------------------------------------------------ lookup

    def get(self, server: str, tool: str) -> ToolSpec:
        tools = self._server_tools(server)
        if tool not in tools:
            raise CatalogError(f"server {server!r} has no tool {tool!r}"
                               + _did_you_mean(tool, tools))
        return tools[tool]

    def tools(self, server: str | None = None) -> list[ToolSpec]:
        """All tools in catalog order, or those of one server."""
        if server is not None:
            return list(self._server_tools(server).values())
        return list(self)

    def servers(self) -> list[ServerInfo]:
        return [ServerInfo(name, len(tools), self._summaries.get(name, ""))
                for name, tools in self._tools.items()]

    def server(self, name: str) -> ServerInfo:
        return ServerInfo(name, len(self._server_tools(name)), self._summaries.get(name, ""))

    def first(self, n: int) -> Catalog:
        """A catalog of the first ``n`` tools (for measuring how costs grow with size)."""
        specs = list(self)[:n]
        kept = {spec.server for spec in specs}
        return Catalog(specs, {s: t for s, t in self._summaries.items() if s in kept})

    def scaled(self, n: int) -> Catalog:
        """``first(n)``, or past the catalog's size its servers again under new names
        (``git-2``, …, ``git-3``, … in catalog order) up to ``n`` tools: a larger toolspace
        of real tools for measuring what grows with the number of servers."""
        if n <= len(self):
            return self.first(n)
        specs, summaries = list(self), dict(self._summaries)
        copy = 1
        while len(specs) < n:
            copy += 1
            for server, tools in self._tools.items():
                name = f"{server}-{copy}"
                room = n - len(specs)
                specs.extend(replace(tool, server=name) for tool in list(tools.values())[:room])
                summaries[name] = self._summaries.get(server, "")
                if len(specs) >= n:
                    break
        kept = {spec.server for spec in specs}
        return Catalog(specs, {s: t for s, t in summaries.items() if s in kept})

    def _server_tools(self, server: str) -> dict[str, ToolSpec]:
        if server not in self._tools:
            raise CatalogError(f"no server {server!r} in the catalog"
                               + _did_you_mean(server, self._tools))
        return self._tools[server]

    def __iter__(self) -> Iterator[ToolSpec]:
        for tools in self._tools.values():
            yield from tools.values()

    def __len__(self) -> int:
        return sum(len(tools) for tools in self._tools.values())

    def __contains__(self, key: object) -> bool:
        if isinstance(key, tuple) and len(key) == 2:
            server, tool = key
            return tool in self._tools.get(server, {})
        return key in self._tools


def _read_snapshot(path: Path) -> tuple[str, list[ToolSpec], str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CatalogError(f"{path}: not a readable JSON snapshot ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("server"), str) \
            or not isinstance(data.get("tools"), list):
        raise CatalogError(f"{path}: expected an object with a \"server\" name and a \"tools\" "
                           "list, as `tools/list` records are saved")
    server = data["server"]
    specs = []
    for i, tool in enumerate(data["tools"]):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise CatalogError(f"{path}: tools[{i}] has no \"name\"")
        schema = tool.get("inputSchema")
        if schema is not None and not isinstance(schema, dict):
            raise CatalogError(f"{path}: tool {tool['name']!r} has an inputSchema that is not "
                               "an object")
        specs.append(ToolSpec.from_mcp_json(server, tool))
    return server, specs, _snapshot_summary(data)


def _snapshot_summary(data: dict[str, Any]) -> str:
    info = data.get("serverInfo")
    info = info if isinstance(info, dict) else {}
    for text in (info.get("description"), data.get("instructions"), info.get("title")):
        if isinstance(text, str) and text.strip():
            return text
    return ""


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    hint = did_you_mean(name, known, n=3, joiner=", ")
    return f"; {hint}" if hint else ""
