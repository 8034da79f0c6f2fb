"""``deskmate mcp``: add, import, list, test and remove MCP servers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from deskmate.app.cli.common import Env, fail


@click.group()
def mcp() -> None:
    """Connect your MCP servers (stdio, streamable HTTP, SSE)."""


def _pairs(values: tuple[str, ...], what: str) -> dict[str, str]:
    out = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{item!r}: write {what} as KEY=VALUE")
        out[key] = value
    return out


def _save_servers(env: Env, tables: dict[str, dict[str, Any]], *, replace: bool) -> None:
    from deskmate.app.config import update_config

    def mutate(data: dict[str, Any]) -> None:
        servers = data.setdefault("mcp", {}).setdefault("servers", {})
        for name, table in tables.items():
            if name in servers and not replace:
                raise click.ClickException(
                    f"a server named {name!r} already exists; use --force to replace it")
            servers[name] = table

    update_config(mutate, env.config_path)


@mcp.command(context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", help="URL of a remote server (streamable HTTP or SSE).")
@click.option("--transport", type=click.Choice(["http", "sse"]), help="Remote transport.")
@click.option("--header", "headers", multiple=True, help="HTTP header K=V (repeatable).")
@click.option("--env", "envs", multiple=True, help="Environment variable K=V for a stdio "
              "server (repeatable; ${VAR} is expanded at start).")
@click.option("--cwd", default="", help="Working directory of a stdio server.")
@click.option("--force", is_flag=True, help="Replace a server of the same name.")
@click.pass_obj
def add(env: Env, name: str, command: tuple[str, ...], url: str | None, transport: str | None,
        headers: tuple[str, ...], envs: tuple[str, ...], cwd: str, force: bool) -> None:
    """Add a server: `add NAME -- CMD ARGS…` or `add NAME --url URL`."""
    from deskmate.tools.hub.servers import ServerConfigError, server_from_table

    table: dict[str, Any] = {}
    if url:
        if command:
            raise click.UsageError("give either a command (after --) or --url, not both")
        if envs or cwd:
            raise click.UsageError("--env and --cwd are for a local (stdio) server, not --url; "
                                   "a remote server takes --header")
        table.update(url=url, transport=transport or "http")
        if headers:
            table["headers"] = _pairs(headers, "--header")
    elif command:
        if headers or transport:
            raise click.UsageError("--header and --transport are for a --url server; a local "
                                   "(stdio) server takes --env and --cwd")
        table.update(command=command[0])
        if command[1:]:
            table["args"] = list(command[1:])
        if envs:
            table["env"] = _pairs(envs, "--env")
        if cwd:
            table["cwd"] = cwd
    else:
        raise click.UsageError("say how to reach the server: `-- CMD ARGS…` or `--url URL`")
    try:
        config = server_from_table(name, table)
    except ServerConfigError as exc:
        fail(f"server {name!r}: {exc.key}: {exc}", 2)
    _save_servers(env, {name: config.to_table()}, replace=force)
    click.echo(f"added {name}: {config.describe()}  (check it with `deskmate mcp test {name}`)")


@mcp.command()
@click.argument("name")
@click.pass_obj
def remove(env: Env, name: str) -> None:
    """Remove a server from the config."""
    _edit_server(env, name, lambda servers: servers.pop(name))
    click.echo(f"removed {name}")


@mcp.command()
@click.argument("name")
@click.pass_obj
def enable(env: Env, name: str) -> None:
    """Enable a server."""
    _set_enabled(env, name, True)


@mcp.command()
@click.argument("name")
@click.pass_obj
def disable(env: Env, name: str) -> None:
    """Disable a server without removing it."""
    _set_enabled(env, name, False)


def _set_enabled(env: Env, name: str, enabled: bool) -> None:
    def toggle(servers: dict[str, Any]) -> None:
        if enabled:
            servers[name].pop("enabled", None)
        else:
            servers[name]["enabled"] = False

    _edit_server(env, name, toggle)
    click.echo(f"{name} {'enabled' if enabled else 'disabled'}")


def _edit_server(env: Env, name: str, change: Any) -> None:
    """Apply ``change(servers)`` to the config's server tables; ``name`` must exist."""
    from deskmate.app.config import update_config

    def mutate(data: dict[str, Any]) -> None:
        servers = data.get("mcp", {}).get("servers", {})
        if name not in servers:
            raise click.ClickException(f"no server named {name!r} in the config")
        change(servers)

    update_config(mutate, env.config_path)


@mcp.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Show what would be added; change nothing.")
@click.option("--force", is_flag=True, help="Replace servers that already exist.")
@click.pass_obj
def import_(env: Env, file: Path, dry_run: bool, force: bool) -> None:
    """Import servers from Claude Desktop, Claude Code (.mcp.json), Cursor, VS Code…"""
    from deskmate.tools.hub.dialects import ImportError_, load_server_file

    try:
        result = load_server_file(file)
    except ImportError_ as exc:
        fail(str(exc), 1)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    existing = set(env.config.mcp.servers)
    tables = {}
    for server in result.servers:
        clash = server.name in existing
        verb = "skip (exists; --force replaces)" if clash and not force else (
            "replace" if clash else "add")
        click.echo(f"{verb:>8}  {server.name}: {server.describe()}")
        if verb != "skip (exists; --force replaces)":
            tables[server.name] = server.to_table()
    if dry_run:
        click.echo("dry run: the config was not changed")
        return
    if tables:
        _save_servers(env, tables, replace=True)
    click.echo(f"imported {len(tables)} server(s)")


@mcp.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--offline", is_flag=True, help="Do not connect; show the config only.")
@click.pass_obj
def list_(env: Env, as_json: bool, offline: bool) -> None:
    """List servers with live status and tool counts (connects to each, in parallel)."""
    servers = env.config.mcp.servers
    if not servers:
        click.echo("no MCP servers configured: `deskmate mcp add NAME -- CMD ARGS…` or "
                   "`deskmate mcp import ~/.config/Claude/claude_desktop_config.json`")
        return
    states = {}
    if not offline:
        from deskmate.app.toolspace import open_hub

        with open_hub(env.config) as hub:
            states = {s.name: s for s in hub.start()}
    rows = []
    for name, cfg in servers.items():
        state = states.get(name)
        status = state.status if state else ("disabled" if not cfg.enabled else "not checked")
        rows.append({"name": name, "status": status, "tools": len(state.tools) if state else None,
                     "connect_s": round(state.connect_s, 2) if state else None,
                     "error": state.error if state else "", "target": cfg.describe()})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        tools = f"{r['tools']} tools" if r["tools"] is not None and r["status"] == "ready" else ""
        click.echo(f"{r['name']:<{width}}  {r['status']:<11} {tools:<10} {r['target']}")
        if r["error"]:
            click.echo("    " + r["error"].replace("\n", "\n    "))


@mcp.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def test(env: Env, name: str, as_json: bool) -> None:
    """Connect to one server, list its tools, and report timings."""
    import time

    from deskmate.app.toolspace import open_hub

    if name not in env.config.mcp.servers:
        fail(f"no server named {name!r} in the config (`deskmate mcp list`)", 1)
    started = time.perf_counter()
    with open_hub(env.config, names=[name]) as hub:
        state = hub.start([name])[0]
        stderr = hub.stderr(name, 20)
    total = time.perf_counter() - started
    if as_json:
        click.echo(json.dumps({"name": name, "status": state.status, "error": state.error,
                               "server_info": state.server_info,
                               "connect_s": round(state.connect_s, 3), "total_s": round(total, 3),
                               "tools": [t.name for t in state.tools],
                               "prompts": list(state.prompts),
                               "resources": list(state.resources)}, indent=2))
    elif state.status == "ready":
        click.echo(f"{name}: ready — {state.server_info}, connected in {state.connect_s:.2f} s")
        click.echo(f"{len(state.tools)} tools: " + ", ".join(t.name for t in state.tools))
        if state.prompts:
            click.echo(f"{len(state.prompts)} prompts: " + ", ".join(state.prompts))
        if state.resources:
            click.echo(f"{len(state.resources)} resources")
    else:
        click.echo(f"{name}: {state.status}\n{state.error}", err=True)
        if stderr and stderr not in state.error:
            click.echo(f"stderr:\n{stderr}", err=True)
    if state.status != "ready":
        raise SystemExit(1)


@mcp.command()
@click.argument("name")
@click.option("--lines", "-n", default=50, help="How many lines.")
def logs(name: str, lines: int) -> None:
    """Show the end of a server's stderr log."""
    from deskmate.app.toolspace import mcp_log_dir

    path = mcp_log_dir() / f"{name}.log"
    if not path.exists():
        fail(f"no log for {name!r} yet ({path})", 1)
    click.echo("\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
