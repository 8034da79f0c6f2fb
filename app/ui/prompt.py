"""``PromptArea``: the chat input. Enter sends, pasted text keeps its lines.

Up on the first line and Down on the last walk through what was sent before, like a
shell; the text being written is kept and comes back after the newest entry. With a
``PromptHistory`` (``use_history``) what is sent is kept on disk, and the next start
walks through it too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

if TYPE_CHECKING:
    from deskmate.app.services.prompt_history import PromptHistory


class PromptArea(TextArea):
    """A multi-line prompt with history.

    | Key | Action |
    | :- | :- |
    | enter | Send the prompt. |
    | ctrl+j | Insert a new line (remappable: `[keys] newline`). |
    | up / down | Previous / next prompt, on the first / last line. |
    | right | At the end: take the greyed completion of an `@server:uri` or `/server:prompt`. |
    """

    # TextArea binds F6 to "select line": here it stays the app's key for the chat (F7,
    # "select all", clashes with nothing and is kept).
    BINDINGS = [Binding("ctrl+j", "newline", "New line", show=False, id="newline"),
                Binding("f6", "app.open('chat')", "Chat", show=False)]

    DEFAULT_CSS = """
    PromptArea { height: auto; max-height: 10; min-height: 3; }
    """

    class Submitted(Message):
        def __init__(self, area: PromptArea, text: str) -> None:
            self.area = area
            self.text = text
            super().__init__()

    def __init__(self, *, placeholder: str = "", id: str | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False,
                         tab_behavior="focus", placeholder=placeholder, compact=True)
        self.sent: list[str] = []
        self._index = 0  # == len(history): the draft, not a history entry
        self._draft = ""
        # The rest of the word typed at the cursor (``@server:uri``, ``/server:prompt``),
        # shown greyed and taken with Right; the chat sets it.
        self.completer: Callable[[str], str] | None = None
        self.kept_in: PromptHistory | None = None

    def use_history(self, history: PromptHistory) -> None:
        """Walk through ``history``'s prompts and keep what is sent in it."""
        self.kept_in = history
        try:
            self.sent = history.load() + self.sent
        except OSError as exc:
            self.notify(f"The prompt history {history.path} cannot be read: "
                        f"{exc.strerror or exc}", severity="warning")
        self._index = len(self.sent)

    def update_suggestion(self) -> None:
        row, column = self.cursor_location
        if self.completer is None or column != len(self.document.get_line(row)):
            self.suggestion = ""
            return
        self.suggestion = self.completer(
            self.document.get_text_range((0, 0), self.cursor_location))

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if event.key == "up" and self.cursor_location[0] == 0 and self._recall(-1):
            event.stop()
            event.prevent_default()
            return
        if (event.key == "down" and self.cursor_location[0] == self.document.line_count - 1
                and self._recall(1)):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def action_newline(self) -> None:
        self.insert("\n")

    def submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        if not self.sent or self.sent[-1] != text:
            self.sent.append(text)
            self._keep(text)
        self._index = len(self.sent)
        self._draft = ""
        self.clear()
        self.post_message(self.Submitted(self, text))

    def _keep(self, text: str) -> None:
        if self.kept_in is None:
            return
        try:
            self.kept_in.add(text, self.sent)
        except OSError as exc:  # said once; the history then stays in memory only
            self.notify(f"The prompt history cannot be kept in {self.kept_in.path}: "
                        f"{exc.strerror or exc}", severity="warning")
            self.kept_in = None

    def _recall(self, direction: int) -> bool:
        index = self._index + direction
        if index < 0 or index > len(self.sent):
            return False
        if self._index == len(self.sent):
            self._draft = self.text
        self._index = index
        text = self._draft if index == len(self.sent) else self.sent[index]
        self.load_text(text)
        self.move_cursor(self.document.end if direction > 0 else (0, len(text.split("\n")[0])))
        return True
