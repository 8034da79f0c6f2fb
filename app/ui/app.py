"""``DeskmateApp``: screens, key bindings, the model, the MCP hub and the agent.

Once the first frame is on screen, two workers run side by side (load the model, in
``model_workers`` with the others that choose and download one; connect the MCP
servers); when both are done a third builds the agent. Starting them
only then keeps their imports (llama_cpp, the MCP SDK) from holding up the first paint.
Workers write nothing onto the app: each posts a typed message carrying what it made
(``ModelReady(model)``, ``HubStarted(hub)``, ``AgentReady(built)``) and the handler takes
it on, here on the event loop. A failed worker, here or on a screen, becomes an error
in one place (``workers.report_worker``). Screens hear of changes through the hooks
below (attributes down); widgets ask for things with messages (messages up).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from functools import partial
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.theme import Theme
from textual.worker import Worker, get_current_worker

from deskmate.app.config import Config, update_config
from deskmate.app.llm import ChatModel, open_model
from deskmate.app.llm.sampling import ModelGenerate
from deskmate.app.services.conversation import Conversation
from deskmate.app.ui.approval import ApprovalScreen, UiApprover
from deskmate.app.ui.asking import QuestionAsked, UiAsker
from deskmate.app.ui.cell_approval import CellApprovalAsked, CellApprovalScreen, UiCellApprover
from deskmate.app.ui.chat import ChatScreen, ChatView
from deskmate.app.ui.messages import (
    AgentReady,
    ApprovalAsked,
    ConfigChanged,
    HubChanged,
    HubStarted,
    ModelFailed,
    ModelReady,
    ServerRestarted,
    SessionResumed,
)
from deskmate.app.ui.model_workers import ModelFactory, ModelWorkers
from deskmate.app.ui.sampling import SampleAsked, SampleScreen, UiSampleApprover
from deskmate.app.ui.workers import report_worker
from deskmate.tools.hub.sampling import Sampler
from deskmate.tools.hub.status import not_ready

if TYPE_CHECKING:
    from deskmate.app.agent.factory import AgentRuntime
    from deskmate.app.agent.modes import Mode
    from deskmate.app.ui.help import KeyGroups
    from deskmate.app.ui.host import AppHost
    from deskmate.tools.hub import Hub
    from deskmate.tools.policy import Decision
    from deskmate.tools.sandbox.gate import CellDecision

_UNTIL_MODEL = "-until-model"  # chat cards about the missing model, dropped when one loads


@runtime_checkable
class FollowsConfig(Protocol):
    """A screen that redraws when the config, the model or the hub changed."""

    def config_changed(self) -> None: ...


@runtime_checkable
class FollowsHub(Protocol):
    """A screen that shows the MCP servers' live state (the servers screen)."""

    def hub_changed(self) -> None: ...


def _screen(name: str) -> Callable[[], Screen]:
    """Screens other than the chat are imported when first opened (fast start-up)."""
    def make() -> Screen:
        import importlib

        module, cls = {"sessions": ("deskmate.app.ui.sessions", "SessionsScreen"),
                       "servers": ("deskmate.app.ui.servers", "ServersScreen"),
                       "models": ("deskmate.app.ui.models", "ModelsScreen"),
                       "finetune": ("deskmate.app.ui.finetune", "FinetuneScreen")}[name]
        return getattr(importlib.import_module(module), cls)()
    return make


class DeskmateApp(ModelWorkers, App[None]):
    """The deskmate app. Every binding has an id: `[keys]` in the config remaps it.

    | Key | Action |
    | :- | :- |
    | f1 | Help: every key. |
    | f2 / f3 / f4 / f5 / f6 | Sessions / servers / models / finetune / chat. |
    | ctrl+n | New session. |
    | escape | Cancel the running turn; on another screen, back to the chat. |
    | ctrl+t | Light / dark theme. |
    | ctrl+q | Quit. |
    """

    TITLE = "deskmate"
    CSS_PATH = str(files("deskmate.assets").joinpath("app.tcss"))
    MODES = {"sessions": _screen("sessions"),
             "servers": _screen("servers"), "models": _screen("models"),
             "finetune": _screen("finetune")}
    # show=False: kept off the footer, which must fit 140 columns (test_ui_footer.py);
    # F1 help and the command palette still list them.
    BINDINGS = [
        Binding("f1", "help", "Help", id="help"),
        Binding("f2", "open('sessions')", "Sessions", id="sessions"),
        Binding("f3", "open('servers')", "Servers", id="servers"),
        Binding("f4", "open('models')", "Models", id="models"),
        Binding("f5", "open('finetune')", "Finetune", id="finetune"),
        Binding("f6", "open('chat')", "Chat", show=False, id="chat"),
        Binding("ctrl+n", "new_session", "New", id="new_session"),
        Binding("escape", "cancel", "Cancel", id="cancel"),
        Binding("ctrl+t", "toggle_theme", "Theme", show=False, id="toggle_theme"),
        Binding("ctrl+q", "quit", "Quit", show=False, priority=True, id="quit"),
    ]

    def __init__(self, config: Config, model_spec: str | None = None,
                 model_factory: ModelFactory = open_model, *, config_path: Path | None = None,
                 mode: Mode = "code", record: bool = True) -> None:
        super().__init__()
        self.config = config
        self.config_path = config_path
        self.model_spec = model_spec
        self.model_factory = model_factory
        self.model: ChatModel | None = None
        self.hub: Hub | None = None
        self._hub_ready = False
        self._builds = 0  # agent builds asked for: only the latest one's is taken on
        self.approver = UiApprover(self.post_message)
        cells = UiCellApprover(self.post_message, lambda: self.approver.cancel)
        self.asker = UiAsker(self.post_message)  # servers' questions during tool calls
        # Servers' requests to use the model (MCP sampling): approved here, the loaded
        # model answers; the turn's cancel (kept by the asker) declines or stops it.
        self.sampler = Sampler(UiSampleApprover(self.post_message, lambda: self.asker.cancel),
                               ModelGenerate(lambda: self.model, lambda: self.asker.cancel))
        self.conversation = Conversation(config, self.approver, mode=mode, record=record,
                                         cell_approver=cells, asker=self.asker)
        self._approval: ApprovalScreen | CellApprovalScreen | None = None
        self.chat_screen = ChatScreen(self.conversation)
        self.add_mode("chat", lambda: self.chat_screen)

    # ---------------------------------------------------------------- start-up

    def on_mount(self) -> None:
        if self.config.ui.theme in self.available_themes:
            self.theme = self.config.ui.theme
        # Ctrl+T and the palette's theme picker both change it: keep the choice.
        self.theme_changed_signal.subscribe(self, self._keep_theme)
        self.apply_keymap()
        self.switch_mode("chat")

    def on_ready(self) -> None:
        self._show_loading(self.model_spec or self.config.model.name)
        self.load_model(self.model_spec)
        self.start_hub()

    def apply_keymap(self) -> None:
        keys = dataclasses.asdict(self.config.keys)
        self.set_keymap({name: value for name, value in keys.items() if value})

    @property
    def chat(self) -> ChatView:
        return self.chat_screen.query_one(ChatView)

    def _show_loading(self, what: str) -> None:
        """The header says a model is loading from the moment it starts, so it never
        names one that is on its way out."""
        self.sub_title = f"loading {what} …" if what else "loading …"

    def _show_model(self) -> None:
        """The header names the model that answers (and its adapter), or none."""
        if self.model is None:
            self.sub_title = ""
            return
        adapter = self.model.info.adapter
        self.sub_title = self.model.info.name + (f" + {Path(adapter).name}" if adapter else "")

    def _live_views(self) -> list[ChatView]:
        """The chat views a worker's news is shown in. The news can arrive while the app
        closes, when a view still answers the query but its children are gone: none then."""
        if not self.is_running:
            return []
        return [view for view in self.chat_screen.query(ChatView) if view.is_attached]

    def _set_status(self, text: str) -> None:
        """The chat's status line, from a worker's news."""
        for view in self._live_views():
            view.set_status(text)

    @work(thread=True, exclusive=True, group="hub", exit_on_error=False)
    def start_hub(self, old: Hub | None = None) -> None:
        """Close ``old``, the hub this one replaces, and start the configured servers."""
        from deskmate.app.toolspace import open_hub

        if old is not None:
            old.close()
        hub = open_hub(self.config, on_change=lambda state: self.post_message(HubChanged(state)),
                       sampler=self.sampler)
        states = hub.start()
        if get_current_worker().is_cancelled:  # a newer start replaces this hub
            hub.close()
            return
        self.post_message(HubStarted(hub, states))

    def build_agent(self) -> None:
        """(Re)build the agent over the loaded model and the hub. The old agent is let go
        now, so no turn starts on it while the new one is built."""
        if self.model is None:
            return
        self._builds += 1
        self._build_agent(self.model, self.hub, self.conversation.detach(), self._builds)

    @work(thread=True, exclusive=True, group="agent", exit_on_error=False)
    def _build_agent(self, model: ChatModel, hub: Hub | None, old: AgentRuntime | None,
                     build: int) -> None:
        if old is not None:
            old.close()
        self.post_message(AgentReady(self.conversation.prepare(model, hub), build))

    @work(thread=True, group="close", exit_on_error=False)
    def close_later(self, closable: AgentRuntime | Hub) -> None:
        """Close what was replaced (stopping a sandbox or servers blocks for a moment)."""
        closable.close()

    def on_model_ready(self, message: ModelReady) -> None:
        if self.model is not None and self.model is not message.model:
            self.model.close()
        self.model = message.model
        self._show_model()
        for view in self._live_views():  # "no model" news is now stale
            view.transcript.drop(_UNTIL_MODEL)
        self._set_status(f"{message.model.info.name} loaded · connecting tools …"
                         if not self._hub_ready else f"{message.model.info.name} loaded")
        if self._hub_ready:
            self.build_agent()
        self._tell_screen()

    def _tell_screen(self) -> None:
        if self.screen_stack and isinstance(self.screen, FollowsConfig):
            self.screen.config_changed()

    def on_hub_started(self, message: HubStarted) -> None:
        if self.hub is not None and self.hub is not message.hub:
            self.close_later(self.hub)  # a start that overtook this one's restart
        self.hub = message.hub
        self._hub_ready = True
        broken = [s for s in message.states if s.status != "ready"]
        for state in broken:
            self.notify(not_ready(state), severity="warning", timeout=8)
        if self.model is not None:
            self.build_agent()
        self._tell_screen()

    def on_agent_ready(self, message: AgentReady) -> None:
        if message.build != self._builds:  # a newer build is on its way: it is the one
            self.close_later(message.built.runtime)
            return
        old = self.conversation.adopt(message.built)
        if old is not None and old is not message.built.runtime:
            self.close_later(old)
        tools = len(self.conversation.runtime.catalog) if self.conversation.runtime else 0
        where = f" · {self.model.info.placement}" if self.model and self.model.info.placement \
            else ""  # GPU builds only: how many layers run on the GPU
        self._set_status(f"{self.model.info.name if self.model else ''}{where} · "
                         f"{self.conversation.active_mode} mode · {tools} tools · ready")
        sandbox = self.conversation.runtime.sandbox if self.conversation.runtime else None
        for view in self._live_views():
            view.set_sandbox(sandbox.isolation if sandbox is not None else None)
            view.agent_ready()
        if message.built.warning:
            self.notify(message.built.warning, severity="warning", timeout=10)

    def on_model_failed(self, message: ModelFailed) -> None:
        from deskmate.app.ui.blocks import Notice

        if not self._live_views():
            return  # closing
        self._show_model()  # a model loaded before still answers: the header says which
        self.chat.set_status("no model" if self.model is None else
                             f"{self.model.info.name} still loaded: the new one failed")
        if message.first_run:
            from deskmate.app.ui.first_run import FirstRunScreen, first_run_choice

            self.push_screen(FirstRunScreen(), partial(first_run_choice, self))
            card = Notice("## Welcome to deskmate\n\nNo model is set up yet: F4 opens the "
                          "models, or type `/model tiny` to try the small offline one.", "info")
        else:
            card = Notice(f"## The model could not be loaded\n\n{message.error}", "error")
        self.chat.transcript.add(card.add_class(_UNTIL_MODEL))

    def on_chat_view_switch_model(self, message: ChatView.SwitchModel) -> None:
        self.chat.set_status(f"choosing {message.spec} …")
        self.choose_model(message.spec)

    def on_chat_view_help_requested(self, _: ChatView.HelpRequested) -> None:
        self.action_help()

    def on_chat_view_new_session_requested(self, _: ChatView.NewSessionRequested) -> None:
        self.action_new_session()

    def on_chat_view_turn_starting(self, message: ChatView.TurnStarting) -> None:
        self.approver.cancel = message.cancel  # a cancelled turn denies what it waits for
        self.asker.cancel = message.cancel  # and cancels a server's open question

    # ---------------------------------------------------------------- events from workers

    def on_approval_asked(self, message: ApprovalAsked) -> None:
        pending = message.pending

        def answered(decision: Decision | None) -> None:
            self._approval = None
            pending.answer(decision or "deny")

        self._approval = ApprovalScreen(pending.request)
        self.push_screen(self._approval, answered)

    def on_cell_approval_asked(self, message: CellApprovalAsked) -> None:
        pending = message.pending

        def answered(decision: CellDecision | None) -> None:
            self._approval = None
            if decision == "allow_session":  # so the status line says it at once
                self.conversation.cell_gate.allowed_for_session = True
                self.chat.set_sandbox(pending.request.isolation)
            pending.answer(decision or "deny")

        self._approval = CellApprovalScreen(pending.request)
        self.push_screen(self._approval, answered)

    def on_question_asked(self, message: QuestionAsked) -> None:
        from deskmate.app.ui.elicit import ElicitScreen  # loaded with the first question

        self.push_screen(ElicitScreen(message.pending))

    def on_sample_asked(self, message: SampleAsked) -> None:
        self.push_screen(SampleScreen(message.pending))

    def on_server_restarted(self, _: ServerRestarted) -> None:
        self.build_agent()

    def on_hub_changed(self, _: HubChanged) -> None:
        if self.screen_stack and isinstance(self.screen, FollowsHub):
            self.screen.hub_changed()

    def on_config_changed(self, message: ConfigChanged) -> None:
        self.config = message.config
        self.conversation.config = message.config
        self.apply_keymap()
        if message.note:
            self.notify(message.note)
        self._tell_screen()
        if message.restart_hub:
            old, self.hub = self.hub, None
            self._hub_ready = False
            self.start_hub(old)
        if message.reload_model:
            self._set_status("loading the model …")
            self._show_loading(self.config.model.name)
            self.model_spec = None  # the config now names the model to use
            self.load_model(None)

    def on_session_resumed(self, message: SessionResumed) -> None:
        from deskmate.app.services.conversation import other_model

        self.conversation.continue_session(message.resumed)
        self.switch_mode("chat")
        self.chat.show_resumed(message.resumed, message.detail)
        if note := other_model(message.resumed.summary, self.model):
            self.notify(note, severity="warning", timeout=10)
        if self.model is not None and self._hub_ready:
            self.build_agent()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker(self, event)

    # ---------------------------------------------------------------- actions

    def action_open(self, mode: str) -> None:
        self.switch_mode(mode)

    def action_help(self) -> None:
        from deskmate.app.ui.help import HelpScreen

        prompts = self.hub.prompts() if self.hub is not None else []
        self.push_screen(HelpScreen(key_groups(), self.config.keys, [
            (f"/{p.server}:{p.name}" + "".join(f" {a.name}=…" for a in p.arguments),
             p.description or "A prompt of the server") for p in prompts]))

    def action_cancel(self) -> None:
        if self.chat.cancel():
            if self._approval is not None:
                self._approval.dismiss("deny")
        elif self.current_mode != "chat":
            self.switch_mode("chat")

    def action_new_session(self) -> None:
        if self.chat.busy:
            self.notify("A turn is running: Esc cancels it first.", severity="warning")
            return
        self.conversation.new_session()
        self.sampler.allowed.clear()  # "allow this server" lasts one session
        self.chat.clear()
        self.switch_mode("chat")
        if self.model is not None and self._hub_ready:
            self.build_agent()

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def _keep_theme(self, theme: Theme) -> None:
        if theme.name == self.config.ui.theme:
            return  # the one from the config, applied at start
        self.config = dataclasses.replace(
            self.config, ui=dataclasses.replace(self.config.ui, theme=theme.name))
        self.save_theme(theme.name)

    @work(thread=True, exclusive=True, group="theme", exit_on_error=False)
    def save_theme(self, name: str) -> None:
        def mutate(data: dict) -> None:
            data.setdefault("ui", {})["theme"] = name

        update_config(mutate, self.config_path)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's own, less "Keys": its key panel repeats what our Help (F1) lists, and
        # two entries for one thing make the palette harder to read.
        yield from (c for c in super().get_system_commands(screen) if c.title != "Keys")
        for title, help_text, action in _COMMANDS:
            yield SystemCommand(title, help_text, partial(self.call_next, self.run_action, action))
        for prompt in self.hub.prompts() if self.hub is not None else []:  # the servers'
            yield SystemCommand(f"/{prompt.server}:{prompt.name}",
                                prompt.description or "A prompt of the server",
                                partial(self.chat.start_prompt, prompt))
        # The actions of the screen the palette was opened on (rename a session, start a
        # run, …), so that every action has a name to find it by.
        where = (screen.title or type(screen).__name__.removesuffix("Screen")).lower()
        for binding in screen.BINDINGS:
            if isinstance(binding, Binding) and binding.id and binding.description:
                yield SystemCommand(f"{where.capitalize()}: {binding.description}",
                                    f"Key {self.get_key_display(binding)} on this screen",
                                    partial(self.call_next, screen.run_action, binding.action))

    def on_unmount(self) -> None:
        self.approver.cancel.set()  # a turn waiting for an approval ends (denied)
        self.asker.cancel.set()
        self.conversation.close()
        if self.hub is not None:
            self.hub.close()
        if self.model is not None:
            self.model.close()


if TYPE_CHECKING:
    # Screens see the app as an AppHost (they cannot import this module): the type
    # checker holds DeskmateApp to that protocol here.
    _host_check: type[AppHost] = DeskmateApp


def key_groups() -> KeyGroups:
    """Every binding, grouped by where it works, for the help screen (imported when
    help is first opened, like the screens themselves)."""
    from deskmate.app.ui.approval import ApprovalScreen
    from deskmate.app.ui.finetune import FinetuneScreen
    from deskmate.app.ui.models import ModelsScreen
    from deskmate.app.ui.prompt import PromptArea
    from deskmate.app.ui.servers import ServersScreen
    from deskmate.app.ui.sessions import SessionsScreen
    from deskmate.app.ui.task_picker import TaskPickerScreen

    return [("everywhere", DeskmateApp.BINDINGS), ("prompt", PromptArea.BINDINGS),
            ("approval", ApprovalScreen.BINDINGS),
            ("unisolated cell", CellApprovalScreen.BINDINGS), ("sessions", SessionsScreen.BINDINGS),
            ("servers", ServersScreen.BINDINGS), ("models", ModelsScreen.BINDINGS),
            ("finetune", FinetuneScreen.BINDINGS),
            ("finetune tasks", TaskPickerScreen.BINDINGS)]


_COMMANDS = [
    ("Chat", "Back to the conversation", "open('chat')"),
    ("New session", "Start a fresh conversation", "new_session"),
    ("Cancel turn", "Stop the running turn", "cancel"),
    ("Sessions", "List, search, resume, rename, delete and export sessions",
     "open('sessions')"),
    ("MCP servers", "Status, tools, add, import, enable, restart, test", "open('servers')"),
    ("Models", "Choose, download and configure models", "open('models')"),
    ("Finetune", "Finetuning runs and their progress", "open('finetune')"),
    ("Help", "Every key binding", "help"),
    ("Toggle light/dark theme", "Switch between textual-light and textual-dark",
     "toggle_theme"),
]
