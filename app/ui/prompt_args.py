"""``PromptArgsScreen``: the arguments of a server's prompt (``/server:prompt``) that were
not typed, asked for in one small form before the prompt is got and sent."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from deskmate.app.services.mcp_input import PromptCall


class PromptArgsScreen(ModalScreen[PromptCall | None]):
    """One input per argument of the prompt, the typed ones filled in. Enter in the last
    field (or Send) sends; a required one left empty is said, not sent.

    | Key | Action |
    | :- | :- |
    | enter | Next field; in the last one, send. |
    | escape | Cancel: nothing is sent. |
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, call: PromptCall) -> None:
        super().__init__(classes="dialog")
        self.call = call

    def compose(self) -> ComposeResult:
        spec = self.call.spec
        with Vertical(classes="dialog-box", id="prompt-args"):
            yield Static(Content.from_markup("[b]/$server:$name[/b] $what", server=spec.server,
                                             name=spec.name, what=spec.description),
                         classes="dialog-text")
            for i, arg in enumerate(spec.arguments):
                label = arg.name + (" (required)" if arg.required else "")
                if arg.description:
                    label += f": {arg.description}"
                yield Static(Content(label))
                # By position: an argument's name need not be a valid widget id.
                yield Input(self.call.arguments.get(arg.name, ""), id=f"arg-{i}",
                            placeholder=arg.name)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Send", id="send", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        inputs = list(self.query(Input))
        if not inputs:
            self.query_one("#send").focus()
            return
        next((i for i in inputs if not i.value), inputs[0]).focus()

    def values(self) -> dict[str, str]:
        return {arg.name: self.query_one(f"#arg-{i}", Input).value.strip()
                for i, arg in enumerate(self.call.spec.arguments)}

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        inputs = list(self.query(Input))
        if event.input is not inputs[-1]:
            inputs[inputs.index(event.input) + 1].focus()
            return
        self.send()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "send":
            self.send()
        else:
            self.dismiss(None)

    def send(self) -> None:
        call = PromptCall(self.call.spec, {k: v for k, v in self.values().items() if v})
        if call.missing:
            self.notify(f"{', '.join(call.missing)} is required", severity="warning")
            names = [a.name for a in call.spec.arguments]
            self.query_one(f"#arg-{names.index(call.missing[0])}", Input).focus()
            return
        self.dismiss(call)

    def action_cancel(self) -> None:
        self.dismiss(None)
