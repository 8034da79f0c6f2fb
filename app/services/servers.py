"""MCP servers in the config: add, import, enable/disable (whole servers or single tools),
remove, a test connect, and OAuth sign-in and sign-out of HTTP/SSE servers.

What ``deskmate mcp …`` and the servers screen both do. Config writes go through
``update_config`` (validated, atomic, with a backup). User errors raise a
``ServerEditError`` subclass whose message says what is wrong.
"""

from __future__ import annotations

import os
import shlex
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from deskmate.app.config import Config, update_config

if TYPE_CHECKING:
    from deskmate.tools.hub import ServerState
    from deskmate.tools.hub.servers import ServerConfig
    from deskmate.tools.spec import ToolSpec


class ServerEditError(ValueError):
    """Something the user asked cannot become a server change; the message says what."""


class InvalidServer(ServerEditError):
    """The server's settings do not make a server (bad name, command, URL…)."""


class ServerExists(ServerEditError):
    """A server of that name is configured already."""


class UnknownServer(ServerEditError):
    """No server of that name is configured."""


class NothingToImport(ServerEditError):
    """The file adds no server; the message says why (all known, or none in it)."""


@dataclass(frozen=True)
class ConfigEdit:
    """A change written to the config file."""

    config: Config  # the config as written
    note: str  # what changed, in one line ("git disabled")
    warning: str = ""  # written, but it will not work as it stands (a command not found)


# ---------------------------------------------------------------- add, remove, toggle


def check_server(name: str, table: dict[str, Any]) -> ServerConfig:
    """The server a TOML table describes, or ``InvalidServer`` saying which key is wrong."""
    from deskmate.tools.hub.servers import ServerConfigError, server_from_table

    try:
        return server_from_table(name, table)
    except ServerConfigError as exc:
        raise InvalidServer(f"server {name!r}: {exc.key}: {exc}") from exc


def table_from_line(target: str) -> dict[str, Any]:
    """A command line, or a URL (with `` sse`` after it for SSE) → a server's TOML table."""
    target = target.strip()
    if target.startswith(("http://", "https://")):
        url, _, transport = target.partition(" ")
        table: dict[str, Any] = {"url": url}
        if transport.strip() == "sse":
            table["transport"] = "sse"
        return table
    try:
        argv = shlex.split(target)
    except ValueError as exc:
        raise InvalidServer(f"cannot split the command line: {exc}") from exc
    if not argv:
        raise InvalidServer("give a command (e.g. `uvx mcp-server-git`) or a URL")
    return {"command": argv[0], **({"args": argv[1:]} if argv[1:] else {})}


def add_server(name: str, table: dict[str, Any], config_path: Path | None, *,
               replace: bool = False) -> ConfigEdit:
    """Check the server and write it; an existing name is ``ServerExists`` unless ``replace``.

    A command that cannot be found is written all the same (it may be installed next)
    with a ``warning`` saying so.
    """
    server = check_server(name, table)
    checked = server.to_table()

    def mutate(data: dict[str, Any]) -> None:
        servers = data.setdefault("mcp", {}).setdefault("servers", {})
        if name in servers and not replace:
            raise ServerExists(f"a server named {name!r} already exists")
        servers[name] = checked

    return ConfigEdit(update_config(mutate, config_path), f"added {name}",
                      warning=missing_command(server))


def missing_command(server: ServerConfig) -> str:
    """Why a stdio server's command will not start, or "" when it is found."""
    if not server.command:
        return ""
    command = os.path.expanduser(server.command)
    if os.sep in command:
        where = Path(server.cwd).expanduser() / command if server.cwd else Path(command)
        if os.access(where, os.X_OK) and where.is_file():
            return ""
        return (f"{server.name}: {where} is not an executable file; the server will fail "
                "to start until it is")
    search = server.env.get("PATH") or os.environ.get("PATH", "")
    if shutil.which(command, path=search):
        return ""
    return (f"{server.name}: command {command!r} is not on PATH; the server will fail to "
            "start until it is installed (or give its full path)")


def set_target(name: str, target: str, config_path: Path | None) -> ConfigEdit:
    """Change how ``name`` is reached (a command line or a URL, as ``add`` takes it);
    its other settings (env, headers, cwd, sign-in options, enabled) stay."""
    reach = table_from_line(target)
    where = ("command", "args", "url", "transport")

    def change(servers: dict[str, Any]) -> None:
        kept = {k: v for k, v in servers[name].items() if k not in where}
        misfits = [k for k in (("headers",) if "command" in reach else ("env", "cwd"))
                   if k in kept]
        if misfits:
            raise InvalidServer(
                f"server {name!r}: its {' and '.join(misfits)} do not fit a "
                f"{'local (stdio)' if 'command' in reach else 'remote'} server: remove "
                "them first, or add the new one under another name")
        server = check_server(name, {**kept, **reach})
        servers[name] = server.to_table()
        checked.append(server)

    checked: list[ServerConfig] = []
    config = _edit_server(name, change, config_path)
    return ConfigEdit(config, f"{name} now runs {config.mcp.servers[name].describe()}",
                      warning=missing_command(checked[0]))


def set_variable(name: str, assignment: str, config_path: Path | None) -> ConfigEdit:
    """``KEY=VALUE``: an environment variable of a local server, a header of a remote
    one (``${VAR}`` is expanded when the server starts); ``KEY=`` removes it."""
    key, sep, value = assignment.partition("=")
    key = key.strip()
    if not sep or not key:
        raise InvalidServer(f"{assignment!r}: write KEY=VALUE (KEY= removes KEY); a secret "
                            "can stay in your environment: KEY=${SECRET}")

    def change(servers: dict[str, Any]) -> None:
        table = servers[name]
        section = "headers" if "url" in table else "env"
        values = dict(table.get(section, {}))
        if value:
            values[key] = value
        elif key not in values:
            raise InvalidServer(f"{name} has no {section[:-1] if section == 'headers' else section}"
                                f" {key!r} to remove")
        else:
            values.pop(key)
        updated = {**table, section: values} if values else {
            k: v for k, v in table.items() if k != section}
        servers[name] = check_server(name, updated).to_table()
        said.append(f"{name}: {'header' if section == 'headers' else 'env'} {key} "
                    + ("set" if value else "removed"))

    said: list[str] = []
    config = _edit_server(name, change, config_path)
    return ConfigEdit(config, said[0])


def remove_server(name: str, config_path: Path | None) -> ConfigEdit:
    config = _edit_server(name, lambda servers: servers.pop(name), config_path)
    signed_out = sign_out(name)  # a server added again under this name starts signed out
    return ConfigEdit(config, f"removed {name}" + (" (and its sign-in)" if signed_out else ""))


def set_enabled(name: str, enabled: bool, config_path: Path | None) -> ConfigEdit:
    def toggle(servers: dict[str, Any]) -> None:
        if enabled:
            servers[name].pop("enabled", None)
        else:
            servers[name]["enabled"] = False

    config = _edit_server(name, toggle, config_path)
    return ConfigEdit(config, f"{name} {'enabled' if enabled else 'disabled'}")


def set_tool_enabled(name: str, tool: str, enabled: bool,
                     config_path: Path | None) -> ConfigEdit:
    """Turn one tool of ``name`` off (``disabled_tools``: the agent neither sees nor calls
    it) or on again. Turning off a tool the server does not have is allowed (it may come
    with an update); the note says what the list now is."""
    tool = tool.strip()
    if not tool:
        raise InvalidServer("name the tool to turn on or off (`deskmate mcp tools NAME` "
                            "lists them)")

    def change(servers: dict[str, Any]) -> None:
        table = servers[name]
        off = list(table.get("disabled_tools", []))
        if enabled and tool not in off:
            raise InvalidServer(f"{name}.{tool} is not turned off"
                                + (f" (off: {', '.join(off)})" if off else ""))
        off = [t for t in off if t != tool] if enabled else [*off, tool]
        updated = {**table, "disabled_tools": off} if off else {
            k: v for k, v in table.items() if k != "disabled_tools"}
        servers[name] = check_server(name, updated).to_table()

    config = _edit_server(name, change, config_path)
    return ConfigEdit(config, f"{name}.{tool} turned {'on' if enabled else 'off'}")


@dataclass(frozen=True)
class ToolRow:
    """One of a server's tools as the servers screen and `mcp tools` list it."""

    name: str
    enabled: bool
    badges: tuple[str, ...]  # read-only / destructive / open-world
    description: str


def tool_badges(spec: ToolSpec) -> tuple[str, ...]:
    """What the tool's MCP annotations say it does. read-only and destructive follow the
    approval policy's reading (an unannotated tool counts as destructive, MCP's default);
    open-world only when the server says so."""
    badges = ["read-only"] if spec.read_only else ["destructive"] if spec.destructive else []
    if spec.annotations.get("openWorldHint"):
        badges.append("open-world")
    return tuple(badges)


def tool_rows(server: ServerConfig, tools: Iterable[ToolSpec]) -> list[ToolRow]:
    """The server's tools (all of them, as it lists them), each marked on or off."""
    rows = [ToolRow(t.name, t.name not in server.disabled_tools, tool_badges(t),
                    t.description.strip().split("\n")[0]) for t in tools]
    listed = {t.name for t in rows}
    # Turned off but not listed (renamed, or the server is down): still shown, to turn on.
    rows += [ToolRow(t, False, (), "(not listed by the server now)")
             for t in server.disabled_tools if t not in listed]
    return rows


def _edit_server(name: str, change: Callable[[dict[str, Any]], object],
                 config_path: Path | None) -> Config:
    """Apply ``change(servers)`` to the config's server tables; ``name`` must be there."""

    def mutate(data: dict[str, Any]) -> None:
        servers = data.get("mcp", {}).get("servers", {})
        if name not in servers:
            raise UnknownServer(f"no server named {name!r} in the config")
        change(servers)

    return update_config(mutate, config_path)


# ---------------------------------------------------------------- import

ImportAction = Literal["add", "replace", "skip"]


@dataclass(frozen=True)
class ImportItem:
    server: ServerConfig
    action: ImportAction  # skip: the name exists and replacing was not asked for


@dataclass(frozen=True)
class ServerImport:
    """What importing a servers file does: each server's fate, and the file's warnings."""

    items: tuple[ImportItem, ...]
    warnings: tuple[str, ...]

    @property
    def taken(self) -> dict[str, ServerConfig]:
        return {i.server.name: i.server for i in self.items if i.action != "skip"}

    def describe(self) -> str:
        """One line: what was imported, what was kept, and the file's warnings."""
        taken = list(self.taken)
        skipped = [i.server.name for i in self.items if i.action == "skip"]
        notes = [f"imported {len(taken)} server(s)" + (f": {', '.join(taken)}" if taken else "")]
        if skipped:
            notes.append(f"kept the existing {', '.join(skipped)}")
        notes.extend(self.warnings)
        return "; ".join(notes)


def read_servers_file(path: Path, existing: Iterable[str], *,
                      replace: bool = False) -> ServerImport:
    """Read a Claude Desktop / .mcp.json / Cursor / VS Code file; nothing is written yet."""
    from deskmate.tools.hub.dialects import ImportError_, load_server_file

    try:
        result = load_server_file(path.expanduser())
    except ImportError_ as exc:
        raise ServerEditError(str(exc)) from exc
    known = set(existing)

    def action(name: str) -> ImportAction:
        return ("replace" if replace else "skip") if name in known else "add"

    return ServerImport(tuple(ImportItem(s, action(s.name)) for s in result.servers),
                        tuple(result.warnings))


def import_servers(plan: ServerImport, config_path: Path | None) -> ConfigEdit:
    """Write the servers ``plan`` takes; ``NothingToImport`` when it takes none."""
    tables = {name: server.to_table() for name, server in plan.taken.items()}
    if not tables:
        raise NothingToImport(plan.describe())

    def mutate(data: dict[str, Any]) -> None:
        data.setdefault("mcp", {}).setdefault("servers", {}).update(tables)

    return ConfigEdit(update_config(mutate, config_path), plan.describe())


# ---------------------------------------------------------------- test


@dataclass(frozen=True)
class ServerTest:
    """One server connected on its own: its state, what it offers, how long it took."""

    name: str
    status: str  # ready, failed, …
    error: str
    server_info: str
    connect_s: float  # the connection itself
    total_s: float  # with starting the hub and listing
    tools: tuple[str, ...]
    prompts: tuple[str, ...]
    resources: tuple[str, ...]
    stderr: str  # the end of the server's stderr log
    specs: tuple[ToolSpec, ...] = ()  # the tools themselves (names, annotations, schemas)

    @property
    def ok(self) -> bool:
        return self.status == "ready"

    def describe(self) -> str:
        """The result in a few lines (the TUI's notification)."""
        if self.ok:
            return (f"{self.name}: ready — {self.server_info}, connected in "
                    f"{self.connect_s:.2f} s ({self.total_s:.2f} s in all); "
                    f"{len(self.tools)} tools: " + ", ".join(self.tools))
        text = f"{self.name}: {self.status}\n{self.error}"
        if self.stderr and self.stderr not in self.error:
            text += f"\nstderr:\n{self.stderr}"
        return text


def probe_server(config: Config, name: str, stderr_lines: int = 20) -> ServerTest:
    """Connect to one configured server on its own, list what it offers, time it."""
    from deskmate.app.toolspace import open_hub

    if name not in config.mcp.servers:
        raise UnknownServer(f"no server named {name!r} in the config")
    started = time.perf_counter()
    with open_hub(config, names=[name]) as hub:
        state = hub.start([name])[0]
        stderr = hub.stderr(name, stderr_lines)
    return _tested(state, time.perf_counter() - started, stderr)


def _tested(state: ServerState, total_s: float, stderr: str) -> ServerTest:
    return ServerTest(name=state.name, status=state.status, error=state.error,
                      server_info=state.server_info, connect_s=state.connect_s, total_s=total_s,
                      tools=tuple(t.name for t in state.tools), prompts=tuple(state.prompts),
                      resources=tuple(state.resources), stderr=stderr,
                      specs=tuple(state.tools))


# ---------------------------------------------------------------- sign-in


def sign_in(config: Config, name: str, show_url: Callable[[str], object],
            timeout: float = 300.0) -> ServerTest:
    """Sign in to an HTTP/SSE server with OAuth, then connect with the new tokens.

    ``show_url`` gets the authorization URL (a browser is opened too, unless this is an
    SSH session without a display); the person has ``timeout`` seconds to approve.
    """
    from deskmate.app.toolspace import open_hub
    from deskmate.tools.hub.oauth import browser_answer

    server = config.mcp.servers.get(name)
    if server is None:
        raise UnknownServer(f"no server named {name!r} in the config")
    if server.transport == "stdio":
        raise InvalidServer(f"{name} is a local (stdio) server: it takes its credentials "
                            "through `env`, not an OAuth sign-in")
    started = time.perf_counter()
    with open_hub(config, names=[name]) as hub:
        state = hub.sign_in(name, browser_answer(show_url), timeout)
    return _tested(state, time.perf_counter() - started, "")


def sign_out(name: str) -> bool:
    """Delete a server's kept sign-in (tokens and registration); whether there was one."""
    from deskmate.app.toolspace import mcp_token_dir
    from deskmate.tools.hub.tokens import forget

    return forget(mcp_token_dir(), name)
