"""Small modal dialogs: confirm, and ask for one line of text."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static


class ConfirmScreen(ModalScreen[bool]):
    """Yes or no. Dismissed with True only on an explicit yes.

    | Key | Action |
    | :- | :- |
    | y | Yes. |
    | n / escape | No. |
    """

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n", "answer(False)", "No"),
                Binding("escape", "answer(False)", "No", show=False)]

    def __init__(self, question: str, yes: str = "Yes") -> None:
        super().__init__(classes="dialog")
        self.question = question
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Static(Content(self.question), classes="dialog-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(self.yes, id="yes", variant="error")
                yield Button("Cancel", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class AskScreen(ModalScreen[str | None]):
    """One line of text (a name, a path, a command). Escape dismisses with None."""

    BINDINGS = [Binding("escape", "dismiss_none", "Cancel")]

    def __init__(self, question: str, value: str = "", placeholder: str = "") -> None:
        super().__init__(classes="dialog")
        self.question = question
        self.value = value
        self.placeholder = placeholder

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box"):
            yield Static(Content(self.question), classes="dialog-text")
            yield Input(self.value, placeholder=self.placeholder, id="answer")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
