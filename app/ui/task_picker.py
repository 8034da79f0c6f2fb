"""``TaskPickerScreen``: which of your session prompts finetuning may train on.

Opened from the Finetune screen (t). Every prompt that would be a training task is
listed (rated up, or answered and never rated down); Space includes or excludes the
highlighted one. The choice is stored (``finetune.tasks.choose_task``) and holds for
every later run.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static

from deskmate.app.ui.workers import ReportsWorkers

PROMPT_CHARS = 90


class TaskPickerScreen(ReportsWorkers, ModalScreen[None]):
    BINDINGS = [
        Binding("space", "toggle_task", "Include/exclude", id="task_toggle"),
        Binding("escape", "dismiss_none", "Close"),
    ]

    class Listed(Message):
        def __init__(self, rows: list[tuple[str, bool, str, str]]) -> None:
            self.rows = rows  # key, included, prompt, why it is a task
            super().__init__()

    def __init__(self) -> None:
        super().__init__(classes="dialog")
        self.included: dict[str, bool] = {}

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box", id="task-picker"):
            yield Static("Tasks from your sessions · Space includes or excludes · Esc closes",
                         classes="dialog-text")
            yield DataTable(id="task-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="task-count", classes="screen-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("train", key="train")
        table.add_column("prompt", key="prompt")
        table.add_column("why", key="why")
        table.focus()
        self.load()

    @work(thread=True, exclusive=True, group="task-list", exit_on_error=False)
    def load(self) -> None:
        from deskmate.app.store import open_db
        from deskmate.finetune.tasks import from_sessions

        with open_db() as db:
            tasks = from_sessions(db, with_excluded=True)
        self.post_message(self.Listed([
            (t.key, not t.metadata.get("excluded"), " ".join(t.prompt.split()),
             "rated up" if t.metadata.get("rated") else "answered") for t in tasks]))

    @work(thread=True, group="task-choose", exit_on_error=False)
    def store(self, key: str, included: bool) -> None:
        from deskmate.app.store import open_db
        from deskmate.finetune.tasks import choose_task

        with open_db() as db:
            choose_task(db, key, included)

    def on_task_picker_screen_listed(self, message: Listed) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for key, included, prompt, why in message.rows:
            self.included[key] = included
            short = prompt if len(prompt) <= PROMPT_CHARS else prompt[:PROMPT_CHARS - 1] + "…"
            table.add_row(_mark(included), short, why, key=key)
        self._count()

    def action_toggle_task(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count == 0:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if key is None:
            return
        self.included[key] = not self.included[key]
        table.update_cell(key, "train", _mark(self.included[key]))
        self.store(key, self.included[key])
        self._count()

    def action_dismiss_none(self) -> None:
        self.dismiss(None)

    def _count(self) -> None:
        chosen = sum(self.included.values())
        total = len(self.included)
        self.query_one("#task-count", Static).update(
            f"{chosen} of {total} included" if total else
            "No tasks yet: rate answers up in the chat (or accept them by not rating "
            "them down), then come back.")


def _mark(included: bool) -> str:
    return "✓" if included else "–"
