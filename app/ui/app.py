"""``DeskmateApp``: the chat app. Loads the model in a worker, hosts the chat view."""

from __future__ import annotations

from collections.abc import Callable
from importlib.resources import files

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header
from textual.worker import Worker, WorkerState

from app.config import Config
from app.llm import ChatModel, ModelError, NoModelConfigured, open_model
from app.ui.chat import ChatView
from app.ui.messages import ModelFailed, ModelReady

ModelFactory = Callable[[Config, str | None], ChatModel]


class DeskmateApp(App[None]):
    """The deskmate app.

    | Key | Action |
    | :- | :- |
    | escape | Cancel the reply being generated. |
    | ctrl+q | Quit. |
    """

    TITLE = "deskmate"
    CSS_PATH = str(files("assets").joinpath("app.tcss"))
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, config: Config, model_spec: str | None = None,
                 model_factory: ModelFactory = open_model) -> None:
        super().__init__()
        self.config = config
        self.model_spec = model_spec
        self.model_factory = model_factory
        self.model: ChatModel | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield ChatView(self.config)
        yield Footer()

    def on_mount(self) -> None:
        if self.config.ui.theme in self.available_themes:
            self.theme = self.config.ui.theme
        self.load_model(self.model_spec)

    @work(thread=True, exclusive=True, group="model", exit_on_error=False)
    def load_model(self, spec: str | None) -> None:
        self.call_from_thread(self.query_one(ChatView).set_status, "loading model …")
        try:
            model = self.model_factory(self.config, spec)
        except NoModelConfigured as exc:
            self.post_message(ModelFailed(str(exc), first_run=True))
            return
        except ModelError as exc:
            self.post_message(ModelFailed(str(exc)))
            return
        self.post_message(ModelReady(model))

    def on_model_ready(self, message: ModelReady) -> None:
        if self.model is not None:
            self.model.close()
        self.model = message.model
        self.query_one(ChatView).model = message.model
        self.sub_title = message.model.info.name

    def on_model_failed(self, message: ModelFailed) -> None:
        self.query_one(ChatView).show_problem(message.error, first_run=message.first_run)

    def on_chat_view_switch_model(self, message: ChatView.SwitchModel) -> None:
        self.load_model(message.spec)

    def action_cancel(self) -> None:
        self.query_one(ChatView).cancel()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place where an unexpected worker failure becomes a visible error."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.notify(str(event.worker.error), title="Something failed",
                        severity="error", timeout=10)

    def on_unmount(self) -> None:
        if self.model is not None:
            self.model.close()
