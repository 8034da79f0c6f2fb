"""The widgets a chat transcript is made of.

``ActionBlock`` is one code cell or one tool call: a collapsed one-line title with a
live status (pending, running, waiting, ok, error, denied), the duration and a preview
of the result; expanding it shows the code or arguments and the full output. While a
tool call runs, its title also carries the server's news: progress (a bar when the
server says how much there is) or the question it is asking.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, Collapsible, Markdown, Static

from deskmate.app.ui.copying import COPY_BINDINGS, Copyable, code_of

Status = Literal["pending", "running", "waiting", "ok", "error", "denied", "cancelled"]

_MARKS: dict[str, tuple[str, str]] = {
    "pending": ("○", "$text-muted"), "running": ("◐", "$accent"),
    "waiting": ("?", "$warning"), "ok": ("✓", "$success"), "error": ("✗", "$error"),
    "denied": ("⊘", "$error"), "cancelled": ("■", "$warning"),
}
_RATED = {1: "rated good", -1: "rated bad", 0: ""}
PREVIEW_CHARS = 80
OUTPUT_CHARS = 4000  # what an expanded block shows; the session keeps everything


def one_line(text: str, limit: int = PREVIEW_CHARS) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def short_args(arguments: dict[str, Any], limit: int = 48) -> str:
    return one_line(", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}"
                              for k, v in arguments.items()), limit)


class UserBlock(Static, Copyable, can_focus=True):
    """What the user asked."""

    BINDINGS = COPY_BINDINGS

    def __init__(self, text: str) -> None:
        super().__init__(Content(text), classes="user")
        self.text = text

    def copy_text(self) -> str:
        return self.text


class ReplyBlock(Markdown, Copyable, can_focus=True):
    """The model's text for one step, streamed, then rendered once in full."""

    BINDINGS = COPY_BINDINGS

    def __init__(self, text: str = "", *, step: int = 0, classes: str = "") -> None:
        super().__init__(text, classes=f"assistant {classes}".strip())
        self.step = step

    def copy_text(self) -> str:
        return self.source


class Notice(Markdown):
    """A message from deskmate itself (errors, stops, first run)."""

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(text, classes=f"notice -{kind}")


class ActionBlock(Collapsible, Copyable):
    """One code cell or tool call, with its live status; ``c`` copies the code or the
    arguments and the output, ``k`` the code or arguments only (from its title, which
    takes the focus)."""

    BINDINGS = COPY_BINDINGS

    status: reactive[Status] = reactive("pending", init=False)
    """Where the action stands; the title's mark and colour follow it."""

    def __init__(self, kind: Literal["code", "tool"], label: str, detail: str,
                 *, key: str) -> None:
        self.kind = kind
        self.label = label
        self.key = key  # the step number or the tool call id
        self.started = time.monotonic()
        self.duration: float | None = None
        self.preview = ""
        self.news = ""  # the running call's progress or question, in the title
        self.detail = detail
        self.output = ""
        self._detail = Static(Content(detail), classes="detail")
        self._output = Static("", classes="output")
        super().__init__(self._detail, self._output, title="", collapsed=True,
                         classes=f"action -{kind}")
        self._retitle()

    def watch_status(self, old: Status, new: Status) -> None:
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")
        self._retitle()

    def show_news(self, news: str) -> None:
        self.news = news
        self._retitle()

    def finish(self, status: Status, output: str, duration: float | None = None) -> None:
        self.news = ""
        self.duration = duration if duration is not None else time.monotonic() - self.started
        self.preview = one_line(output) if output else ""
        self.output = output
        text = output if len(output) <= OUTPUT_CHARS else output[:OUTPUT_CHARS] + "\n…"
        self._output.update(Content(text))
        self.status = status

    def copy_text(self) -> str:
        return f"{self.detail}\n\n{self.output}".strip() if self.output else self.detail

    def copy_code(self) -> str:
        return code_of(self.detail) or self.detail

    def _retitle(self) -> None:
        mark, colour = _MARKS[self.status]
        parts: list[str | tuple[str, str]] = [(mark, colour), " ", (self.label, "bold")]
        if self.duration is not None:
            parts.append((f"  {self.duration:.2f} s", "$text-muted"))
        if self.status in ("waiting", "denied", "cancelled"):
            parts.append((f"  {self.status}", colour))
        if self.news:
            parts.append((f"  {self.news}", colour))
        if self.preview:
            parts.append(("  → " + self.preview, "$text-muted"))
        self.title = Content.assemble(*parts)


class FeedbackBar(Horizontal):
    """Thumbs up / down under an answer; the choice is stored as feedback."""

    class Rated(Message):
        def __init__(self, bar: FeedbackBar, turn: int, up: bool) -> None:
            self.bar = bar
            self.turn = turn
            self.up = up
            super().__init__()

    rating: reactive[int] = reactive(0, init=False)
    """1 up, -1 down, 0 not rated."""

    def __init__(self, turn: int) -> None:
        super().__init__(classes="feedback")
        self.turn = turn

    def compose(self) -> ComposeResult:
        yield Button("▲ good", id="up", compact=True, tooltip="Thumbs up: a good answer")
        yield Button("▼ bad", id="down", compact=True, tooltip="Thumbs down: a bad answer")
        yield Static(_RATED[self.rating], classes="rated")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.post_message(self.Rated(self, self.turn, event.button.id == "up"))

    def watch_rating(self, rating: int) -> None:
        self.query_one(".rated", Static).update(_RATED[rating])
