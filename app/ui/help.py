"""The help screen: every key binding of the app, as the config has remapped them, and
the chat's slash commands.

The app hands the screen its bindings, grouped by where they work (``KeyGroups``), so
this module imports no screen (and the app, which imports them, is not imported here).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from deskmate.app.config import KeysConfig
from deskmate.app.ui.commands import COMMANDS

KeyGroups = Sequence[tuple[str, Sequence[BindingType]]]
"""(where, bindings) pairs, e.g. ("sessions", SessionsScreen.BINDINGS)."""

# Keys handled in code rather than by a binding, and the chat's slash commands.
_UNBOUND = [("prompt", "enter", "Send (during a turn: queued until it ends)", ""),
            ("prompt", "up / down", "Previous / next prompt (kept across restarts)", ""),
            ("prompt", "right", "At the end: take the greyed completion of a command", ""),
            ("prompt", "@./file @/abs/file", "Attach a local file's text to the message", ""),
            ("message", "c / k", "On a focused message or action (click, shift+tab): "
             "copy it / its code", ""),
            ("message", "enter / click", "On a code cell or tool call's title: expand it "
             "(code, output)", ""),
            ("message", "▲ / ▼", "Under an answer: rate it (finetuning learns "
             "from it)", ""),
            ("status line", "tok/s", "The model's speed, live while it writes", ""),
            ("status line", "ctx used/window", "Context the last model call used; "
             "from 80% /compact runs by itself", ""),
            ("everywhere", "ctrl+p", "Command palette: every action by name", ""),
            *(("chat command", c.usage, c.what, "") for c in COMMANDS),
            ("terminal", "deskmate chat", "The chat in the plain terminal: /new /compact "
             "/context /exit", "")]


def key_rows(groups: KeyGroups, keys: KeysConfig) -> list[tuple[str, str, str, str]]:
    """(where, keys, what, config name) for every binding, ``[keys]`` overrides applied."""
    remappable = dataclasses.asdict(keys)
    keymap = {k: v for k, v in remappable.items() if v}
    rows = []
    for where, bindings in groups:
        for b in bindings:
            assert isinstance(b, Binding)
            shown = keymap.get(b.id or "", b.key) if b.id else b.key
            name = b.id if b.id in remappable else ""
            rows.append((where, shown, b.description or b.action, name or ""))
    return rows + _UNBOUND


class HelpScreen(ModalScreen[None]):
    """Keys, grouped by where they work. Escape closes."""

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def __init__(self, groups: KeyGroups, keys: KeysConfig,
                 prompts: Sequence[tuple[str, str]] = ()) -> None:
        """``prompts``: (usage, what) of the MCP servers' prompts, typed as commands."""
        super().__init__()
        self.groups = groups
        self.keys = keys
        self.prompts = prompts

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box", id="help"):
            yield Static(Content("Keys and chat commands. Keys with a config name can be "
                                 "remapped in [keys]."), id="help-title")
            yield DataTable(id="help-keys", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("where", "keys", "what", "config name")
        for row in key_rows(self.groups, self.keys):
            table.add_row(*(Text(cell) for cell in row))
        for usage, what in self.prompts:
            table.add_row(Text("server prompt"), Text(usage), Text(what), Text(""))
