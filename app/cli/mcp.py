"""``deskmate mcp``: add, import, list, test and remove MCP servers."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import click

from deskmate.app.cli.common import Env, fail

if TYPE_CHECKING:
    from deskmate.app.services.servers import ConfigEdit, ServerTest


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


@mcp.command(context_settings={"ignore_unknown_options": True})
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", help="URL of a remote server (streamable HTTP or SSE).")
@click.option("--transport", type=click.Choice(["http", "sse"]), help="Remote transport.")
@click.option("--header", "headers", multiple=True, help="HTTP header K=V (repeatable).")
@click.option("--env", "envs", multiple=True, help="Environment variable K=V for a stdio "
              "server (repeatable; ${VAR} is expanded at start).")
@click.option("--cwd", default="", help="Working directory of a stdio server.")
@click.option("--client-id", default="", help="OAuth: the client registered for deskmate "
              "beforehand (else deskmate registers itself at `mcp login`).")
@click.option("--client-secret-env", default="", help="OAuth: the environment variable that "
              "holds that client's secret (never the secret itself).")
@click.option("--callback-port", type=int, default=0, help="OAuth: the fixed loopback port of "
              "the client's registered redirect URI.")
@click.option("--force", is_flag=True, help="Replace a server of the same name.")
@click.pass_obj
def add(env: Env, name: str, command: tuple[str, ...], url: str | None, transport: str | None,
        headers: tuple[str, ...], envs: tuple[str, ...], cwd: str, client_id: str,
        client_secret_env: str, callback_port: int, force: bool) -> None:
    """Add a server: `add NAME -- CMD ARGS…` or `add NAME --url URL`."""
    from deskmate.app.services.servers import InvalidServer, ServerExists, add_server

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
    oauth = {"client_id": client_id, "client_secret_env": client_secret_env,
             "callback_port": callback_port}
    table.update({key: value for key, value in oauth.items() if value})
    try:
        edit = add_server(name, table, env.config_path, replace=force)
    except InvalidServer as exc:
        fail(str(exc), 2)
    except ServerExists as exc:
        raise click.ClickException(f"{exc}; use --force to replace it") from exc
    described = edit.config.mcp.servers[name].describe()
    click.echo(f"added {name}: {described}  (check it with `deskmate mcp test {name}`)")
    if edit.warning:
        click.echo(f"warning: {edit.warning}", err=True)


@mcp.command()
@click.argument("name")
@click.pass_obj
def remove(env: Env, name: str) -> None:
    """Remove a server from the config."""
    from deskmate.app.services.servers import remove_server

    click.echo(_edited(lambda: remove_server(name, env.config_path)))


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
    from deskmate.app.services.servers import set_enabled

    click.echo(_edited(lambda: set_enabled(name, enabled, env.config_path)))


@mcp.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def tools(env: Env, name: str, as_json: bool) -> None:
    """List a server's tools: on or off, and what their annotations say (connects to it)."""
    from deskmate.app.services.servers import tool_rows

    result = _probe(env, name)
    rows = tool_rows(env.config.mcp.servers[name], result.specs)
    if as_json:
        click.echo(json.dumps({"name": name, "status": result.status, "tools": [
            {"name": r.name, "enabled": r.enabled, "badges": list(r.badges),
             "description": r.description} for r in rows]}, indent=2))
    else:
        if not result.ok:
            click.echo(f"{name}: {result.status} (only the tools turned off are known)\n"
                       f"{result.error}", err=True)
        width = max((len(r.name) for r in rows), default=0)
        for r in rows:
            badges = f" [{', '.join(r.badges)}]" if r.badges else ""
            click.echo(f"{'on ' if r.enabled else 'off'}  {r.name:<{width}}  "
                       f"{r.description[:70]}{badges}")
    if not result.ok:
        raise SystemExit(1)


@mcp.command("disable-tool")
@click.argument("name")
@click.argument("tool")
@click.pass_obj
def disable_tool(env: Env, name: str, tool: str) -> None:
    """Turn one tool off: the agent no longer sees it, and a call to it is refused."""
    _set_tool(env, name, tool, False)


@mcp.command("enable-tool")
@click.argument("name")
@click.argument("tool")
@click.pass_obj
def enable_tool(env: Env, name: str, tool: str) -> None:
    """Turn a tool turned off with disable-tool on again."""
    _set_tool(env, name, tool, True)


def _probe(env: Env, name: str) -> ServerTest:
    """Connect to the configured server ``name`` on its own; an unknown name exits 1."""
    from deskmate.app.services.servers import UnknownServer, probe_server

    try:
        return probe_server(env.config, name)
    except UnknownServer as exc:
        fail(f"{exc} (`deskmate mcp list`)", 1)


def _set_tool(env: Env, name: str, tool: str, enabled: bool) -> None:
    from deskmate.app.services.servers import InvalidServer, set_tool_enabled

    try:
        click.echo(_edited(lambda: set_tool_enabled(name, tool, enabled, env.config_path)))
    except InvalidServer as exc:
        raise click.ClickException(str(exc)) from exc


def _edited(edit: Callable[[], ConfigEdit]) -> str:
    """Run a config edit; an unknown server name is a click error (exit 1)."""
    from deskmate.app.services.servers import UnknownServer

    try:
        return edit().note
    except UnknownServer as exc:
        raise click.ClickException(str(exc)) from exc


@mcp.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Show what would be added; change nothing.")
@click.option("--force", is_flag=True, help="Replace servers that already exist.")
@click.pass_obj
def import_(env: Env, file: Path, dry_run: bool, force: bool) -> None:
    """Import servers from Claude Desktop, Claude Code (.mcp.json), Cursor, VS Code…"""
    from deskmate.app.services.servers import ServerEditError, import_servers, read_servers_file

    try:
        plan = read_servers_file(file, env.config.mcp.servers, replace=force)
    except ServerEditError as exc:
        fail(str(exc), 1)
    for warning in plan.warnings:
        click.echo(f"warning: {warning}", err=True)
    for item in plan.items:
        verb = "skip (exists; --force replaces)" if item.action == "skip" else item.action
        click.echo(f"{verb:>8}  {item.server.name}: {item.server.describe()}")
    if dry_run:
        click.echo("dry run: the config was not changed")
        return
    if plan.taken:
        import_servers(plan, env.config_path)
    click.echo(f"imported {len(plan.taken)} server(s)")


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
        click.echo(f"{r['name']:<{width}}  {r['status']:<13} {tools:<10} {r['target']}")
        if r["error"]:
            click.echo("    " + r["error"].replace("\n", "\n    "))


@mcp.command()
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def test(env: Env, name: str, as_json: bool) -> None:
    """Connect to one server, list its tools, and report timings."""
    result = _probe(env, name)
    if as_json:
        click.echo(json.dumps({"name": name, "status": result.status, "error": result.error,
                               "server_info": result.server_info,
                               "connect_s": round(result.connect_s, 3),
                               "total_s": round(result.total_s, 3),
                               "tools": list(result.tools), "prompts": list(result.prompts),
                               "resources": list(result.resources)}, indent=2))
    elif result.ok:
        click.echo(f"{name}: ready — {result.server_info}, connected in "
                   f"{result.connect_s:.2f} s")
        click.echo(f"{len(result.tools)} tools: " + ", ".join(result.tools))
        if result.prompts:
            click.echo(f"{len(result.prompts)} prompts: " + ", ".join(result.prompts))
        if result.resources:
            click.echo(f"{len(result.resources)} resources")
    else:
        click.echo(f"{name}: {result.status}\n{result.error}", err=True)
        if result.stderr and result.stderr not in result.error:
            click.echo(f"stderr:\n{result.stderr}", err=True)
    if not result.ok:
        raise SystemExit(1)


@mcp.command()
@click.argument("name")
@click.option("--timeout", default=300.0, show_default=True,
              help="Seconds to wait for you to approve in the browser.")
@click.pass_obj
def login(env: Env, name: str, timeout: float) -> None:
    """Sign in to an HTTP/SSE server with OAuth (opens the browser, or prints the URL)."""
    from deskmate.app.services.servers import ServerEditError, sign_in

    def show(url: str) -> None:
        port = urlsplit(parse_qs(urlsplit(url).query).get("redirect_uri", [""])[0]).port
        click.echo(f"Sign in to {name} in your browser:\n\n  {url}\n", err=True)
        if port:
            click.echo(f"(On another machine than the browser? Forward the callback port first: "
                       f"ssh -L {port}:127.0.0.1:{port} THIS_HOST)", err=True)

    try:
        result = sign_in(env.config, name, show, timeout)
    except ServerEditError as exc:
        fail(str(exc), 1)
    if not result.ok:
        fail(f"{name}: not signed in: {result.status}\n{result.error}", 1)
    click.echo(f"signed in to {name}: {result.server_info}, {len(result.tools)} tools")


@mcp.command()
@click.argument("name")
def logout(name: str) -> None:
    """Forget a server's OAuth sign-in (its tokens and client registration)."""
    from deskmate.app.services.servers import sign_out

    click.echo(f"signed out of {name}" if sign_out(name) else f"no sign-in kept for {name}")


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
