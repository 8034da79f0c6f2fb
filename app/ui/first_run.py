"""The first-run dialog: no model is configured yet, so offer the three ways to get one."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from deskmate.app.llm.registry import recommended, registry
from deskmate.app.ui.model_workers import ModelWorkers


class FirstRunScreen(ModalScreen[str | None]):
    """Pick how to get a model: download the recommended one, a local file, or the tiny one.

    | Key | Action |
    | :- | :- |
    | enter | Choose the highlighted way. |
    | escape | Later (F4 opens the models screen). |
    """

    BINDINGS = [Binding("escape", "dismiss", "Later")]

    def compose(self) -> ComposeResult:
        rec = recommended()
        tiny = registry().get("tiny")
        with Vertical(classes="dialog-box", id="first-run"):
            yield Static("Welcome to deskmate", id="first-run-title")
            yield Static("deskmate runs a language model on this machine. Choose one to "
                         "start with; F4 changes it later.", classes="dialog-text")
            options = [Option(Content(f"Download {rec.name}: {rec.description} "
                                      f"({rec.size_mb:,} MB)"), id="download"),
                       Option("Use a .gguf file I already have", id="local")]
            if tiny is not None:
                options.append(Option(Content(f"Try the tiny offline model ({tiny.size_mb} MB,"
                                              " for a first look; it is not smart)"), id="tiny"))
            yield OptionList(*options, id="first-run-options")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)


def first_run_choice(app: ModelWorkers, choice: str | None) -> None:
    """Act on the dialog's answer (after it is gone, so a follow-up dialog can open)."""
    if choice == "download":
        app.switch_mode("models")
        app.download_model(recommended().name, use_after=True)
    elif choice == "tiny":
        app.download_model("tiny", use_after=True)
    elif choice == "local":
        from deskmate.app.ui.dialogs import AskScreen

        def answered(path: str | None) -> None:
            if path:
                app.use_model(path)

        app.push_screen(AskScreen("Path of the .gguf model file:",
                                  placeholder="~/models/model.gguf"), answered)
