"""Read the MCP server lists other clients write, into ServerConfigs.

Accepted: Claude Desktop and Cursor (``mcpServers`` of ``command``/``args``/``env`` or
``url``), Claude Code ``.mcp.json`` (``type`` stdio/http/sse), VS Code (``servers``),
Windsurf (``serverUrl``), and Zed (``context_servers`` with a ``command`` object).
Unknown keys are reported as warnings and otherwise ignored; ``${VAR}`` references are
kept and expanded when the server starts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.hub.servers import ServerConfig, ServerConfigError, expand, server_from_table

_TYPES = {"stdio": "stdio", "local": "stdio", "http": "http", "streamable-http": "http",
          "streamableHttp": "http", "streamable_http": "http", "remote": "http", "sse": "sse"}
_IGNORED_QUIETLY = {"description", "name", "alwaysAllow", "autoApprove", "timeout", "envFile",
                    "inputs", "$schema"}


class ImportError_(ValueError):
    """The file cannot be read as any known MCP server list."""


@dataclass
class ImportResult:
    servers: list[ServerConfig] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_server_file(path: Path) -> ImportResult:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ImportError_(f"cannot read {path}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ImportError_(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    return parse_servers(data, str(path))


def parse_servers(data: Any, source: str = "<input>") -> ImportResult:
    if not isinstance(data, dict):
        raise ImportError_(f"{source}: expected a JSON object with an mcpServers map")
    for key in ("mcpServers", "servers", "context_servers"):
        if isinstance(data.get(key), dict):
            servers = data[key]
            break
    else:
        # A bare map of servers is common in snippets people paste.
        if data and all(isinstance(v, dict) and ({"command", "url", "serverUrl"} & set(v))
                        for v in data.values()):
            servers = data
        else:
            raise ImportError_(f"{source}: no `mcpServers` (or `servers`) map found")
    result = ImportResult()
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            result.warnings.append(f"{name}: not an object, skipped")
            continue
        try:
            result.servers.append(_one(name, entry, result.warnings))
        except ServerConfigError as exc:
            result.warnings.append(f"{name}: skipped — {exc.key}: {exc}")
    return result


def _one(name: str, entry: dict[str, Any], warnings: list[str]) -> ServerConfig:
    table: dict[str, Any] = {}
    command = entry.get("command")
    if isinstance(command, dict):  # Zed: {"command": {"path": ..., "args": [...], "env": {...}}}
        entry = {**entry, **{k: v for k, v in command.items() if k in ("args", "env")}}
        command = command.get("path")
    if command:
        table["command"] = command
        if entry.get("args"):
            table["args"] = [str(a) for a in entry["args"]]
    url = entry.get("url") or entry.get("serverUrl")
    if url:
        table["url"] = url
    kind = entry.get("type") or entry.get("transport")
    if kind:
        if kind not in _TYPES:
            raise ServerConfigError("type", f"unknown transport type {kind!r}")
        table["transport"] = _TYPES[kind]
    elif url and "/sse" in url.rstrip("/")[-5:]:
        table["transport"] = "sse"  # an old-style SSE endpoint, by convention
    for key in ("env", "headers"):
        if isinstance(entry.get(key), dict):
            table[key] = {str(k): str(v) for k, v in entry[key].items()}
    if entry.get("cwd"):
        table["cwd"] = str(entry["cwd"])
    if entry.get("disabled") is True or entry.get("enabled") is False:
        table["enabled"] = False
    used = {"command", "args", "url", "serverUrl", "type", "transport", "env", "headers", "cwd",
            "disabled", "enabled"}
    for key in entry:
        if key not in used and key not in _IGNORED_QUIETLY:
            warnings.append(f"{name}: ignored unknown key {key!r}")
    for text in [table.get("command", ""), table.get("url", ""), *table.get("args", []),
                 *table.get("env", {}).values(), *table.get("headers", {}).values()]:
        try:
            expand(text)
        except ServerConfigError as exc:
            warnings.append(f"{name}: {exc} — set it before deskmate starts this server")
    return server_from_table(name, table)
