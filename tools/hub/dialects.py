"""Read the MCP server lists other clients write, into ServerConfigs.

Accepted: Claude Desktop and Cursor (``mcpServers`` of ``command``/``args``/``env`` or
``url``), Claude Code ``.mcp.json`` (``type`` stdio/http/sse), VS Code (``servers``),
Windsurf (``serverUrl``), and Zed (``context_servers`` with a ``command`` object).
``envFile`` (plain KEY=VALUE lines) is read into ``env``, Claude Code's ``timeout``
(milliseconds) becomes ``call_timeout`` and its ``oauth`` (``clientId``, ``callbackPort``)
a pre-registered client; other keys are reported as warnings and otherwise
ignored. ``${VAR}`` references are kept and expanded when the server starts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deskmate.tools.hub.servers import ServerConfig, ServerConfigError, expand, server_from_table

_TYPES = {"stdio": "stdio", "local": "stdio", "http": "http", "streamable-http": "http",
          "streamableHttp": "http", "streamable_http": "http", "remote": "http", "sse": "sse"}
_IGNORED_QUIETLY = {"description", "name", "$schema"}
_NOT_IMPORTED = {
    "alwaysAllow": "deskmate asks per tool; `trust = true` in its config trusts the server",
    "autoApprove": "deskmate asks per tool; `trust = true` in its config trusts the server",
    "inputs": "deskmate does not prompt for inputs; give the values as ${VAR} from the "
              "environment",
}
_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


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
    return parse_servers(data, str(path), base_dir=path.parent)


def parse_servers(data: Any, source: str = "<input>",
                  base_dir: Path | None = None) -> ImportResult:
    """The servers of one client's JSON; ``base_dir`` resolves relative ``envFile``s."""
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
    if "inputs" in data:
        result.warnings.append(f"inputs not imported: {_NOT_IMPORTED['inputs']}")
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            result.warnings.append(f"{name}: not an object, skipped")
            continue
        try:
            result.servers.append(_one(name, entry, result.warnings, base_dir or Path.cwd()))
        except ServerConfigError as exc:
            result.warnings.append(f"{name}: skipped — {exc.key}: {exc}")
    return result


def _one(name: str, entry: dict[str, Any], warnings: list[str],
         base_dir: Path) -> ServerConfig:
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
    if entry.get("envFile"):
        table["env"] = _env_file(name, str(entry["envFile"]), base_dir, warnings)
    for key in ("env", "headers"):
        if isinstance(entry.get(key), dict):  # given values win over the envFile's
            table[key] = {**table.get(key, {}), **{str(k): str(v) for k, v in entry[key].items()}}
    timeout = entry.get("timeout")
    if isinstance(timeout, int | float) and not isinstance(timeout, bool) and timeout > 0:
        table["call_timeout"] = timeout / 1000  # Claude Code gives milliseconds
        if timeout < 1000:
            warnings.append(f"{name}: timeout {timeout} taken as milliseconds; if it meant "
                            "seconds, set call_timeout in its config table")
    elif timeout is not None:
        warnings.append(f"{name}: ignored timeout {timeout!r} (expected milliseconds)")
    if entry.get("cwd"):
        table["cwd"] = str(entry["cwd"])
    if entry.get("disabled") is True or entry.get("enabled") is False:
        table["enabled"] = False
    if isinstance(entry.get("oauth"), dict):
        table.update(_oauth(name, entry["oauth"], warnings))
    used = {"command", "args", "url", "serverUrl", "type", "transport", "env", "headers", "cwd",
            "disabled", "enabled", "envFile", "timeout", "oauth"}
    for key in entry:
        if key in _NOT_IMPORTED:
            warnings.append(f"{name}: {key} not imported: {_NOT_IMPORTED[key]}")
        elif key not in used and key not in _IGNORED_QUIETLY:
            warnings.append(f"{name}: ignored unknown key {key!r}")
    for text in [table.get("command", ""), table.get("url", ""), *table.get("args", []),
                 *table.get("env", {}).values(), *table.get("headers", {}).values()]:
        try:
            expand(text)
        except ServerConfigError as exc:
            warnings.append(f"{name}: {exc} — set it before deskmate starts this server")
    return server_from_table(name, table)


def _oauth(name: str, oauth: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """Claude Code's ``oauth`` object (a pre-registered client) as our keys."""
    table: dict[str, Any] = {}
    if isinstance(oauth.get("clientId"), str):
        table["client_id"] = oauth["clientId"]
    if isinstance(oauth.get("callbackPort"), int):
        table["callback_port"] = oauth["callbackPort"]
    if "clientSecret" in oauth:
        warnings.append(f"{name}: oauth.clientSecret not imported: put the secret in an "
                        "environment variable and name it in client_secret_env")
    return table


def _env_file(name: str, path_text: str, base_dir: Path, warnings: list[str]) -> dict[str, str]:
    """The KEY=VALUE lines of an ``envFile`` (relative to the imported file), or a warning."""
    path = base_dir / Path(path_text).expanduser()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"{name}: envFile {path_text} not imported: cannot read {path} ({exc})")
        return {}
    env = {}
    for number, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _ENV_LINE.match(line.strip())
        if not match:
            warnings.append(f"{name}: envFile {path} not imported: line {number} is not a plain "
                            "KEY=VALUE; copy its variables into the server's env yourself")
            return {}
        env[match.group(1)] = match.group(2)
    if env:
        warnings.append(f"{name}: copied {len(env)} variable(s) from envFile {path} into the "
                        "config; move secrets to ${VAR} references")
    return env
