"""A server's question during a tool call (MCP elicitation): the dialog.

It answers the ``PendingQuestion`` that ``app.ui.asking.UiAsker`` posted, and closes
itself when the question was settled elsewhere (the turn cancelled, timed out). Form
mode shows one field per property of the requested (flat) schema, with its defaults;
URL mode shows the link's host and opens the browser only when the user says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import (
    Button,
    Checkbox,
    Footer,
    Input,
    RadioButton,
    RadioSet,
    SelectionList,
    Static,
)

from deskmate.app.ui.approval import hidden_characters
from deskmate.tools.hub.elicitation import (
    Action,
    BadAnswer,
    ElicitAnswer,
    ElicitField,
    check_answer,
)

if TYPE_CHECKING:
    from textual.timer import Timer

    from deskmate.app.ui.asking import PendingQuestion

class ElicitScreen(ModalScreen[ElicitAnswer]):
    """Answer a server's question. Dismissed with the answer.

    | Key | Action |
    | :- | :- |
    | ctrl+s | Accept (send the form, or open the link). |
    | ctrl+d | Decline. |
    | escape | Cancel (the server hears that the question was dismissed). |
    """

    BINDINGS = [
        Binding("ctrl+s", "answer('accept')", "Accept", id="question_accept", priority=True),
        Binding("ctrl+d", "answer('decline')", "Decline", id="question_decline",
                priority=True),
        Binding("escape", "answer('cancel')", "Cancel"),
    ]

    DEFAULT_CSS = """
    ElicitScreen #elicit { border: thick $accent; }
    ElicitScreen #elicit-title { text-style: bold; margin-bottom: 1; }
    ElicitScreen #elicit-fields { height: auto; max-height: 45vh; }
    ElicitScreen .field-label { margin-top: 1; }
    ElicitScreen #elicit-fields Input { width: 60; }
    ElicitScreen .field-help, ElicitScreen #elicit-left { color: $text-muted; }
    ElicitScreen #elicit-error { color: $error; text-style: bold; }
    ElicitScreen #elicit-host { text-style: bold; color: $warning; margin: 1 0; }
    ElicitScreen SelectionList { height: auto; max-height: 8; }
    """

    def __init__(self, pending: PendingQuestion) -> None:
        super().__init__(classes="dialog")
        self.pending = pending
        self.request = pending.request
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        request = self.request
        where = f" during {request.tool}" if request.tool else ""
        with Vertical(id="elicit", classes="dialog-box"):
            yield Static(Content.assemble((request.server, "bold"), f" asks{where}"),
                         id="elicit-title")
            yield Static(Content(request.message), classes="dialog-text")
            if request.mode == "url":
                yield from self._compose_url()
            else:
                with VerticalScroll(id="elicit-fields"):
                    for index, f in enumerate(request.fields):
                        yield from _compose_field(index, f)
            yield Static("", id="elicit-error")
            yield Static(f"Unanswered, it is cancelled after {_duration(self.pending.timeout)}.",
                         id="elicit-left")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Open in browser" if request.mode == "url" else "Accept",
                             id="accept", variant="success")
                yield Button("Decline", id="decline", variant="error")
                yield Button("Cancel", id="cancel")
        yield Footer()

    def _compose_url(self) -> ComposeResult:
        url = self.request.url
        yield Static(Content(f"Opens {self.request.host or 'an unknown host'}"), id="elicit-host")
        yield Static(Content(url), id="elicit-url")
        if hidden := hidden_characters(url):
            yield Static(Content.styled("hidden characters in the link: " + "; ".join(
                hidden[:8]), "$error"))

    def on_mount(self) -> None:
        self._timer = self.set_interval(0.2, self._watch)
        self._watch()
        inputs = self.query("#elicit-fields Input, #elicit-fields Checkbox")
        (inputs.first() if inputs else self.query_one("#cancel", Button)).focus()

    def _watch(self) -> None:
        """Close when the question was settled elsewhere (turn cancelled, timed out)."""
        # Only from the top of the stack (F1 may cover it): until then it keeps watching.
        if self.pending.done.is_set() and self.is_attached and self.app.screen is self:
            if self._timer is not None:
                self._timer.stop()
            self.dismiss(self.pending.answer)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_answer(cast(Action, event.button.id))  # the buttons' ids are actions

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_answer("accept")

    def action_answer(self, action: Action) -> None:
        answer = ElicitAnswer(action)
        if action == "accept" and self.request.mode == "form":
            try:
                answer = ElicitAnswer("accept", check_answer(self.request.fields,
                                                             self._values()))
            except BadAnswer as exc:
                self.query_one("#elicit-error", Static).update(Content(str(exc)))
                self._focus_field(exc.name)
                return
        if action == "accept" and self.request.mode == "url":
            self.app.open_url(self.request.url)
        if self.pending.settle(answer):
            self.dismiss(answer)

    def _values(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for index, f in enumerate(self.request.fields):
            widget = self.query_one(f"#field-{index}")
            if isinstance(widget, Input | Checkbox):
                values[f.name] = widget.value
            elif isinstance(widget, RadioSet):
                chosen = widget.pressed_index
                values[f.name] = f.options[chosen][0] if chosen >= 0 else None
            elif isinstance(widget, SelectionList):
                values[f.name] = list(widget.selected)
        return values

    def _focus_field(self, label: str) -> None:
        for index, f in enumerate(self.request.fields):
            if f.label == label:
                self.query_one(f"#field-{index}").focus()
                return


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} seconds"


def _compose_field(index: int, f: ElicitField) -> ComposeResult:
    mark = " *" if f.required else ""
    yield Static(Content.assemble((f.label, "bold"), mark), classes="field-label")
    if f.description:
        yield Static(Content(f.description), classes="field-help")
    yield _widget(f, f"field-{index}")


def _widget(f: ElicitField, id: str) -> Widget:
    default = f.default
    if f.kind == "boolean":
        return Checkbox("yes", value=bool(default), id=id, compact=True)
    if f.kind == "enum":
        # Radio buttons, not a Select: a Select mounted with a value in a dialog could
        # fail on a loaded machine (Textual queried its label before composing it).
        return RadioSet(*[RadioButton(label, value=value == default, compact=True)
                          for value, label in f.options], id=id, compact=True)
    if f.kind == "multi":
        chosen = set(default) if isinstance(default, list) else set()
        return SelectionList[str](*[(label, value, value in chosen)
                                    for value, label in f.options], id=id, compact=True)
    kind: Literal["integer", "number", "text"] = "integer" if f.kind == "integer" else (
        "number" if f.kind == "number" else "text")
    return Input("" if default is None else str(default), placeholder=f.format or f.kind,
                 type=kind, id=id, compact=True)
