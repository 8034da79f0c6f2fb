"""The help screen: every key binding of the app, as the config has remapped them."""

from __future__ import annotations

import dataclasses

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


def key_rows(app) -> list[tuple[str, str, str, str]]:
    """(where, keys, what, config name) for every binding, ``[keys]`` overrides applied."""
    from deskmate.app.ui.app import DeskmateApp
    from deskmate.app.ui.approval import ApprovalScreen
    from deskmate.app.ui.finetune import FinetuneScreen
    from deskmate.app.ui.models import ModelsScreen
    from deskmate.app.ui.prompt import PromptArea
    from deskmate.app.ui.servers import ServersScreen
    from deskmate.app.ui.sessions import SessionsScreen
    from deskmate.app.ui.task_picker import TaskPickerScreen

    remappable = dataclasses.asdict(app.config.keys)
    keymap = {k: v for k, v in remappable.items() if v}
    rows = []
    groups = [("everywhere", DeskmateApp.BINDINGS), ("prompt", PromptArea.BINDINGS),
              ("approval", ApprovalScreen.BINDINGS), ("sessions", SessionsScreen.BINDINGS),
              ("servers", ServersScreen.BINDINGS), ("models", ModelsScreen.BINDINGS),
              ("finetune", FinetuneScreen.BINDINGS),
              ("finetune tasks", TaskPickerScreen.BINDINGS)]
    for where, bindings in groups:
        for b in bindings:
            assert isinstance(b, Binding)
            keys = keymap.get(b.id or "", b.key) if b.id else b.key
            name = b.id if b.id in remappable else ""
            rows.append((where, keys, b.description or b.action, name))
    rows.append(("prompt", "enter", "Send", ""))
    rows.append(("prompt", "up / down", "Previous / next prompt", ""))
    rows.append(("everywhere", "ctrl+p", "Command palette: every action by name", ""))
    return rows


class HelpScreen(ModalScreen[None]):
    """Keys, grouped by where they work. Escape closes."""

    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box", id="help"):
            yield Static(Content("Keys. Those with a config name can be remapped in the "
                                 "[keys] section of the config."), id="help-title")
            yield DataTable(id="help-keys", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("where", "keys", "what", "config name")
        for row in key_rows(self.app):
            table.add_row(*(Text(cell) for cell in row))
