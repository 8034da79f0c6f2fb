"""The MCP servers screen: status, tools with signatures, stderr; add, import, toggle.

The table lists every configured server with the hub's live state; the right side
shows the highlighted server's error, its tools (on or off for the agent, with what
their annotations say: read-only, destructive, open-world), the ones on as compact
Python signatures (what ``tool_help`` gives the model), and the end of its stderr log.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Markdown, Static

from deskmate.app.services import servers as server_ops
from deskmate.app.ui.dialogs import AskScreen, ConfirmScreen
from deskmate.app.ui.host import host
from deskmate.app.ui.messages import ConfigChanged, HubChanged, ServerRestarted
from deskmate.app.ui.tables import TableScreen

if TYPE_CHECKING:
    from deskmate.tools.hub import ServerConfig, ServerState
    from deskmate.tools.spec import ToolSpec

STDERR_LINES = 20


def describe_tools(tools: Sequence[ToolSpec], width: int = 0) -> str:
    """The tools as the model reads them; with ``width``, folded to fit it."""
    from deskmate.app.ui.wrap_signature import fold
    from deskmate.tools.signatures import signature

    if not tools:
        return ""
    texts = (signature(t).text() for t in tools)
    body = "\n\n".join(fold(t, width) if width else t for t in texts)
    return f"### {len(tools)} tools\n\n```python\n{body}\n```"


class SignaturePanel(Markdown):
    """The selected server's signatures, folded to this panel's width.

    The width changes without the terminal resizing: a scrollbar appears beside a long
    list and takes two columns. Narrower than the fold, the lines would be cut, so the
    panel asks for a refold then. Wider is left to the screen's resize: refolding on
    growth could flip the scrollbar on and off."""

    class Narrowed(Message):
        pass

    folded_at = 0  # the panel width the shown signatures were folded for

    def on_resize(self) -> None:
        if 0 < self.size.width < self.folded_at:
            self.post_message(self.Narrowed())


class ServersScreen(TableScreen):
    """Your MCP servers.

    | Key | Action |
    | :- | :- |
    | a | Add a server (a command line or a URL). |
    | i | Import a Claude / .mcp.json / Cursor / VS Code file. |
    | space | Enable or disable. |
    | r | Restart. |
    | t | Test: connect on its own, list tools, time it. |
    | l | Sign in (OAuth, in the browser) to an HTTP/SSE server that asks for it. |
    | e | Edit how to reach it (command line or URL); its other settings stay. |
    | v | Set an environment variable (local server) or a header (remote): KEY=VALUE. |
    | d | Remove it (asks first). |
    | o | Turn the tool highlighted in the tools list off or on (o or tab moves there). |
    """

    # show=False: kept off the footer, which must fit 140 columns (test_ui_footer.py);
    # F1 help and the command palette still list them.
    BINDINGS = [
        Binding("a", "add", "Add", id="server_add"),
        Binding("i", "import", "Import", show=False, id="server_import"),
        Binding("space", "toggle_server", "Enable/disable", id="server_toggle"),
        Binding("r", "restart", "Restart", id="server_restart"),
        Binding("t", "test", "Test", id="server_test"),
        Binding("l", "sign_in", "Sign in", show=False, id="server_sign_in"),
        Binding("e", "edit_target", "Edit", show=False, id="server_edit"),
        Binding("v", "set_variable", "Env/header", show=False, id="server_variable"),
        Binding("d", "remove", "Remove", show=False, id="server_remove"),
        Binding("o", "toggle_tool", "Tool off/on", show=False, id="server_tool_toggle"),
    ]
    TABLE = "#servers-table"

    class Detail(Message):
        def __init__(self, name: str, stderr: str) -> None:
            self.name = name
            self.stderr = stderr
            super().__init__()

    class Tested(Message):
        def __init__(self, result: server_ops.ServerTest) -> None:
            self.result = result
            super().__init__()

    class SignInUrl(Message):
        """The authorization page to open (a browser is opened too, where there is one)."""

        def __init__(self, name: str, url: str) -> None:
            self.name = name
            self.url = url
            super().__init__()

    class SignedIn(Message):
        def __init__(self, result: server_ops.ServerTest) -> None:
            self.result = result
            super().__init__()

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(classes="screen-body"):
            yield DataTable(id="servers-table", cursor_type="row", zebra_stripes=True,
                            classes="screen-list")
            with VerticalScroll(classes="screen-detail"):
                yield Static("", id="server-status")
                yield DataTable(id="server-tool-list", cursor_type="row")
                yield SignaturePanel("", id="server-tools")
                yield Static("", id="server-stderr")
        yield Static("", id="servers-hint", classes="screen-hint")
        yield Footer()

    def on_resize(self) -> None:
        self.show_detail()  # the signatures are folded to the panel's width

    @on(SignaturePanel.Narrowed)
    def refold(self) -> None:
        self.show_detail()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("server", key="name")
        table.add_column("status", key="status")
        table.add_column("tools", key="tools")
        table.add_column("target", key="target")
        tools = self.query_one("#server-tool-list", DataTable)
        tools.add_column("", key="on")
        tools.add_column("tool", key="tool")
        tools.add_column("annotations", key="badges")
        table.focus()
        self.refresh_table()

    def on_screen_resume(self) -> None:
        self.refresh_table()

    def states(self) -> dict[str, ServerState]:
        hub = host(self).hub
        return {s.name: s for s in hub.states()} if hub is not None else {}

    def refresh_table(self) -> None:
        """Redraw from the config and the hub's snapshots (no I/O)."""
        states = self.states()
        rows = []
        for name, cfg in host(self).config.mcp.servers.items():
            state = states.get(name)
            status = "disabled" if not cfg.enabled else (state.status if state else "starting")
            tools = str(len(state.tools)) if state and state.status == "ready" else ""
            if state and tools and (off := sum(t.name in cfg.disabled_tools for t in state.tools)):
                tools += f" ({off} off)"
            rows.append((name, (name, status, tools, Text(cfg.describe()))))
        self.refill(rows)
        self.query_one("#servers-hint", Static).update(
            "no servers yet: a adds one, i imports a Claude/.mcp.json file"
            if not rows else
            "a add · i import · space enable/disable · r restart · t test · l sign in · "
            "e edit · v env/header · d remove · o tool off/on")
        self.show_detail()

    def show_detail(self) -> None:
        name = self.selected
        state = self.states().get(name) if name else None
        status = self.query_one("#server-status", Static)
        tools = self.query_one("#server-tools", SignaturePanel)
        cfg = host(self).config.mcp.servers.get(name) if name else None
        self.show_tool_list(cfg, state)
        if name is None:
            status.update("")
            if tools.source:
                tools.update("")
            return
        if state is None:
            status.update(Content(f"{name}: not started"))
        else:
            line = f"{name}: {state.status}"
            if state.status == "ready":
                line += f" · {state.server_info}"
            elif state.status == "needs-sign-in":
                line += " · press l to sign in"
            names = sorted(cfg.env if cfg and cfg.transport == "stdio" else
                           cfg.headers if cfg else ())  # names only: values may be secrets
            if names:
                line += f"\n{'env' if cfg and cfg.transport == 'stdio' else 'headers'}: " \
                        + ", ".join(names)
            status.update(Content(line + (f"\n{state.error}" if state.error else "")))
        # The code block's frame and padding take a few columns of the panel.
        width = max(20, tools.size.width - 6) if tools.size.width else 0
        tools.folded_at = tools.size.width
        off = cfg.disabled_tools if cfg else ()
        text = describe_tools([t for t in state.tools if t.name not in off],
                              width) if state else ""
        if text != tools.source:  # hub changes arrive often; re-render only what changed
            tools.update(text)
        self.load_stderr(name)

    def show_tool_list(self, cfg: ServerConfig | None, state: ServerState | None) -> None:
        """The server's tools, on or off, with their badges; the cursor stays on its tool."""
        table = self.query_one("#server-tool-list", DataTable)
        rows = server_ops.tool_rows(cfg, state.tools if state else ()) if cfg else []
        table.display = bool(rows)
        keep = self.selected_tool
        table.clear()
        for row in rows:
            table.add_row(Text("on", "green") if row.enabled else Text("off", "bold red"),
                          Text(row.name, "" if row.enabled else "dim strike"),
                          Text(" ".join(row.badges)), key=row.name)
        if keep is not None and keep in table.rows:
            table.move_cursor(row=table.get_row_index(keep))

    @property
    def selected_tool(self) -> str | None:
        table = self.query_one("#server-tool-list", DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    # ---------------------------------------------------------------- workers

    @work(thread=True, exclusive=True, group="server-detail", exit_on_error=False)
    def load_stderr(self, name: str) -> None:
        hub = host(self).hub
        try:
            text = hub.stderr(name, STDERR_LINES) if hub is not None else ""
        except Exception:  # the server is not in the running hub (added since)
            text = ""
        self.post_message(self.Detail(name, text))

    @work(thread=True, group="server-edit", exit_on_error=False)
    def edit(self, change: Callable[[Path | None], server_ops.ConfigEdit]) -> None:
        """Write ``change(config_path)``; a ServerEditError reaches the app's worker-failure
        handler, which shows its message."""
        edit = change(host(self).config_path)
        self.app.post_message(ConfigChanged(edit.config, edit.note, restart_hub=True))
        if edit.warning:
            self.notify(edit.warning, title="Added, but", severity="warning", timeout=12)

    @work(thread=True, group="server-edit", exit_on_error=False)
    def edit_tool(self, name: str, tool: str, enabled: bool) -> None:
        """Write the tool's switch, and apply it to the running hub without a restart: the
        agent takes the new tool list on at its next turn (and is told)."""
        edit = server_ops.set_tool_enabled(name, tool, enabled, host(self).config_path)
        hub = host(self).hub
        if hub is not None and any(s.name == name for s in hub.states()):
            hub.set_disabled_tools(name, edit.config.mcp.servers[name].disabled_tools)
        self.app.post_message(ConfigChanged(edit.config, edit.note))

    @work(thread=True, exclusive=True, group="server-restart", exit_on_error=False)
    def restart_server(self, name: str) -> None:
        hub = host(self).hub
        if hub is None:  # the whole hub is restarting (a config edit), this server with it
            return
        state = hub.restart(name)
        self.app.post_message(HubChanged(state))
        self.post_message(ServerRestarted(name))  # up to the app: its tools may have changed

    @work(thread=True, group="server-test", exit_on_error=False)
    def probe(self, name: str) -> None:
        config = host(self).config
        self.post_message(self.Tested(server_ops.probe_server(config, name)))

    @work(thread=True, exclusive=True, group="server-sign-in", exit_on_error=False)
    def sign_in(self, name: str) -> None:
        config = host(self).config
        result = server_ops.sign_in(config, name,
                                    lambda url: self.post_message(self.SignInUrl(name, url)))
        self.post_message(self.SignedIn(result))

    # ---------------------------------------------------------------- handlers

    def config_changed(self) -> None:
        """Called by the app after the config changed."""
        self.refresh_table()

    def hub_changed(self) -> None:
        """Called by the app when a server's state changed (``FollowsHub``)."""
        # A server stopping as the app closes reports after the screen lost its table.
        if self.query(self.TABLE):
            self.refresh_table()

    def on_servers_screen_detail(self, message: Detail) -> None:
        if message.name == self.selected:
            self.query_one("#server-stderr", Static).update(
                Content(f"stderr (last {STDERR_LINES} lines):\n{message.stderr}"
                        if message.stderr else ""))

    def on_servers_screen_tested(self, message: Tested) -> None:
        ok = message.result.ok
        self.notify(message.result.describe(), title="Test passed" if ok else "Test failed",
                    severity="information" if ok else "error", timeout=12)

    def on_servers_screen_sign_in_url(self, message: SignInUrl) -> None:
        self.app.copy_to_clipboard(message.url)
        self.notify(f"Approve in your browser (the link is copied):\n{message.url}",
                    title=f"Sign in to {message.name}", timeout=60)

    def on_servers_screen_signed_in(self, message: SignedIn) -> None:
        result = message.result
        if result.ok:
            self.notify(f"{len(result.tools)} tools", title=f"Signed in to {result.name}")
            if result.name in self.states():  # the app's hub connects with the new tokens
                self.restart_server(result.name)
        else:
            self.notify(f"{result.status}: {result.error}", title=f"{result.name}: not signed in",
                        severity="error", timeout=12)

    @on(DataTable.RowHighlighted, "#servers-table")
    def highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail()

    def action_add(self) -> None:
        def add(name: str, target: str, config_path: Path | None) -> server_ops.ConfigEdit:
            return server_ops.add_server(name, server_ops.table_from_line(target), config_path)

        def got_name(name: str | None) -> None:
            def got_target(target: str | None) -> None:
                if name and target:
                    self.edit(partial(add, name, target))

            if name:
                self.app.push_screen(
                    AskScreen(f"How to reach {name}: a command line, or a URL (add ' sse' "
                              "for an SSE server)", placeholder="uvx mcp-server-git"),
                    got_target)

        self.app.push_screen(AskScreen("Name of the new server:", placeholder="git"), got_name)

    def action_import(self) -> None:
        def import_(path: str, config_path: Path | None) -> server_ops.ConfigEdit:
            existing = host(self).config.mcp.servers
            plan = server_ops.read_servers_file(Path(path), existing)  # existing names kept
            return server_ops.import_servers(plan, config_path)

        def got_path(path: str | None) -> None:
            if path:
                self.edit(partial(import_, path))

        self.app.push_screen(
            AskScreen("Import servers from (Claude Desktop, Claude Code .mcp.json, Cursor, "
                      "VS Code):", placeholder="~/.config/Claude/claude_desktop_config.json"),
            got_path)

    def action_edit_target(self) -> None:
        if (name := self.selected) is None:
            return
        cfg = host(self).config.mcp.servers[name]
        current = cfg.describe() if cfg.transport == "stdio" else (
            cfg.url + (" sse" if cfg.transport == "sse" else ""))

        def got(target: str | None) -> None:
            if target and target.strip() != current:
                self.edit(partial(server_ops.set_target, name, target))

        self.app.push_screen(AskScreen(f"How to reach {name}: a command line, or a URL (add "
                                       "' sse' for an SSE server)", value=current), got)

    def action_set_variable(self) -> None:
        if (name := self.selected) is None:
            return
        local = host(self).config.mcp.servers[name].transport == "stdio"
        what = "An environment variable" if local else "A header"

        def got(assignment: str | None) -> None:
            if assignment:
                self.edit(partial(server_ops.set_variable, name, assignment))

        self.app.push_screen(AskScreen(f"{what} for {name}: KEY=VALUE (KEY= removes it; "
                                       "${VAR} takes it from your environment)",
                                       placeholder="API_KEY=${MY_API_KEY}"), got)

    def action_remove(self) -> None:
        if (name := self.selected) is None:
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.edit(partial(server_ops.remove_server, name))

        self.app.push_screen(ConfirmScreen(f"Remove the server {name} from the config (and "
                                           "its sign-in, if any)?", yes="Remove"), confirmed)

    def action_toggle_server(self) -> None:
        if (name := self.selected) is not None:
            cfg = host(self).config.mcp.servers[name]
            self.edit(partial(server_ops.set_enabled, name, not cfg.enabled))

    def action_toggle_tool(self) -> None:
        if (name := self.selected) is None or (tool := self.selected_tool) is None:
            return
        tools = self.query_one("#server-tool-list", DataTable)
        if self.focused is not tools:  # never switch a tool the person did not pick
            tools.focus()
            self.notify(f"pick one of {name}'s tools (up/down), then o turns it off or on")
            return
        cfg = host(self).config.mcp.servers[name]
        self.edit_tool(name, tool, tool in cfg.disabled_tools)

    def action_restart(self) -> None:
        if (name := self.selected) is not None and name in self.states():
            self.restart_server(name)

    def action_sign_in(self) -> None:
        name = self.selected
        if name is None:
            return
        if host(self).config.mcp.servers[name].transport == "stdio":
            self.notify(f"{name} is a local server: it takes credentials through env, not a "
                        "sign-in", severity="warning")
            return
        self.notify(f"signing in to {name} …")
        self.sign_in(name)

    def action_test(self) -> None:
        if (name := self.selected) is not None:
            self.notify(f"testing {name} …")
            self.probe(name)
