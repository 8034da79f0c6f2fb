"""Blocking MCP server chores behind the servers screen: config edits and a test connect.

Config writes go through ``update_config`` (validated, atomic, with a backup), the same
way ``deskmate mcp add/import/enable/disable`` make them.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deskmate.app.config import Config, update_config


class ServerEditError(ValueError):
    """Something the user typed cannot become a server; the message says what."""


def table_for(name: str, target: str) -> dict[str, Any]:
    """``NAME`` + a command line or URL → the validated TOML table of the server."""
    from deskmate.tools.hub.servers import ServerConfigError, server_from_table

    target = target.strip()
    if target.startswith(("http://", "https://")):
        url, _, transport = target.partition(" ")
        table: dict[str, Any] = {"url": url}
        if transport.strip() == "sse":
            table["transport"] = "sse"
    else:
        try:
            argv = shlex.split(target)
        except ValueError as exc:
            raise ServerEditError(f"cannot split the command line: {exc}") from exc
        if not argv:
            raise ServerEditError("give a command (e.g. `uvx mcp-server-git`) or a URL")
        table = {"command": argv[0], **({"args": argv[1:]} if argv[1:] else {})}
    try:
        return server_from_table(name, table).to_table()
    except ServerConfigError as exc:
        raise ServerEditError(f"server {name!r}: {exc.key}: {exc}") from exc


def add_server(name: str, target: str, config_path: Path | None) -> Config:
    table = table_for(name, target)

    def mutate(data: dict[str, Any]) -> None:
        servers = data.setdefault("mcp", {}).setdefault("servers", {})
        if name in servers:
            raise ServerEditError(f"a server named {name!r} already exists")
        servers[name] = table

    return update_config(mutate, config_path)


def import_servers(path: Path, existing: set[str],
                   config_path: Path | None) -> tuple[Config, str]:
    """Add the servers of a Claude/.mcp.json/Cursor/VS Code file; existing names are kept.

    Raises ``ServerEditError`` (saying why) when the file adds no server.
    """
    from deskmate.tools.hub.dialects import ImportError_, load_server_file

    try:
        result = load_server_file(path.expanduser())
    except ImportError_ as exc:
        raise ServerEditError(str(exc)) from exc
    new = {s.name: s.to_table() for s in result.servers if s.name not in existing}
    skipped = [s.name for s in result.servers if s.name in existing]
    notes = [f"imported {len(new)} server(s)" + (f": {', '.join(new)}" if new else "")]
    if skipped:
        notes.append(f"kept the existing {', '.join(skipped)}")
    notes.extend(result.warnings)
    if not new:
        raise ServerEditError("; ".join(notes))

    def mutate(data: dict[str, Any]) -> None:
        data.setdefault("mcp", {}).setdefault("servers", {}).update(new)

    return update_config(mutate, config_path), "; ".join(notes)


def set_enabled(name: str, enabled: bool, config_path: Path | None) -> Config:
    def mutate(data: dict[str, Any]) -> None:
        servers = data.get("mcp", {}).get("servers", {})
        if name not in servers:
            raise ServerEditError(f"no server named {name!r} in the config file")
        if enabled:
            servers[name].pop("enabled", None)
        else:
            servers[name]["enabled"] = False

    return update_config(mutate, config_path)


@dataclass(frozen=True)
class ProbeReport:
    name: str
    status: str
    text: str


def probe_server(config: Config, name: str) -> ProbeReport:
    """Connect to one server on its own, list its tools, time it (`deskmate mcp test`)."""
    from deskmate.app.toolspace import open_hub

    started = time.perf_counter()
    with open_hub(config, names=[name]) as hub:
        state = hub.start([name])[0]
        stderr = hub.stderr(name, 20)
    total = time.perf_counter() - started
    if state.status == "ready":
        text = (f"{name}: ready — {state.server_info}, connected in {state.connect_s:.2f} s "
                f"({total:.2f} s in all); {len(state.tools)} tools: "
                + ", ".join(t.name for t in state.tools))
    else:
        text = f"{name}: {state.status}\n{state.error}"
        if stderr and stderr not in state.error:
            text += f"\nstderr:\n{stderr}"
    return ProbeReport(name, state.status, text)
