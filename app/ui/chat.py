"""``ChatView``: the transcript, the prompt input and the usage line.

Replies stream into a Markdown widget through ``Markdown.get_stream`` (appends
fragments and re-renders once at the end, not per token) while the transcript stays
anchored to the bottom. Generation runs in a thread worker that only posts messages.
"""

from __future__ import annotations

import threading

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Input, Markdown, Static

from app.config import Config
from app.llm.base import ChatMessage, ChatModel, Delta, GenerationParams
from app.ui.messages import ReplyDelta, ReplyDone


class ChatView(Vertical):
    """A conversation with the model (no tools yet)."""

    class SwitchModel(Message):
        """The user asked for another model with ``/model SPEC``."""

        def __init__(self, spec: str) -> None:
            self.spec = spec
            super().__init__()

    model: reactive[ChatModel | None] = reactive(None, init=False)
    """The model replies come from; None until one is loaded."""
    busy: reactive[bool] = reactive(False, init=False)
    """True while a reply is being generated."""

    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config
        self.history: list[ChatMessage] = []
        self._cancel = threading.Event()
        self._stream = None
        self._reply: Markdown | None = None

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="transcript")
        yield Static("", id="usage")
        yield Input(placeholder="Ask anything · /model NAME|PATH to switch · Esc cancels",
                    id="prompt")

    def on_mount(self) -> None:
        self.query_one("#transcript", VerticalScroll).anchor()
        self.query_one("#prompt", Input).focus()

    def set_status(self, text: str) -> None:
        self.query_one("#usage", Static).update(text)

    def watch_model(self, model: ChatModel | None) -> None:
        if model is not None:
            info = model.info
            self.set_status(f"{info.name} · {info.backend} · context {info.context_size:,}"
                            + (" · GPU" if info.gpu_offload else ""))

    def show_problem(self, error: str, first_run: bool = False) -> None:
        if first_run:
            title = "Welcome to deskmate"
            head, _, rest = error.partition("\n")
            body = (f"{head[0].upper()}{head[1:]}\n\n```text\n{rest}\n```\n\n"
                    "Or type `/model tiny` below to try the small offline model now.")
        else:
            title = "The model could not be loaded"
            body = error
        self._add(Markdown(f"## {title}\n\n{body}", classes="notice"))
        self.set_status("no model")

    @on(Input.Submitted, "#prompt")
    def submit(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        event.input.clear()
        if text.startswith("/model"):
            spec = text.removeprefix("/model").strip()
            if spec:
                self.post_message(self.SwitchModel(spec))
            return
        if self.busy:
            self.notify("Still answering — press Esc to cancel first.", severity="warning")
            return
        if self.model is None:
            self.notify("No model loaded yet: use /model NAME|PATH.", severity="warning")
            return
        self._add(Static(text, classes="user"))
        self._reply = Markdown("", classes="assistant")
        self._add(self._reply)
        self._stream = Markdown.get_stream(self._reply)
        self.history.append(ChatMessage("user", text))
        self.busy = True
        self._cancel = threading.Event()
        self.generate(self.model, list(self.history), self._cancel)

    def _add(self, widget) -> None:
        self.query_one("#transcript", VerticalScroll).mount(widget)

    @work(thread=True, exclusive=True, group="generate", exit_on_error=False)
    def generate(self, model: ChatModel, messages: list[ChatMessage],
                 cancel: threading.Event) -> None:
        cfg = self.config.model
        params = GenerationParams(max_tokens=cfg.max_tokens, temperature=cfg.temperature,
                                  seed=cfg.seed if cfg.seed >= 0 else None)
        try:
            for event in model.stream(messages, params, cancel):
                if isinstance(event, Delta):
                    self.post_message(ReplyDelta(event.text))
                else:
                    self.post_message(ReplyDone(event))
        finally:
            # A failure still ends the turn; the app's worker handler shows the error.
            if not cancel.is_set():
                cancel.set()

    async def on_reply_delta(self, message: ReplyDelta) -> None:
        if self._stream is not None:
            await self._stream.write(message.text)

    async def on_reply_done(self, message: ReplyDone) -> None:
        result = message.result
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if self._reply is not None and result.finish_reason == "cancelled":
            self._reply.add_class("cancelled")
        if result.text:
            self.history.append(ChatMessage("assistant", result.text))
        elif self.history and self.history[-1].role == "user":
            self.history.pop()  # nothing answered: keep the transcript alternating
        u = result.usage
        reused = f" ({u.reused_tokens} cached)" if u.reused_tokens else ""
        self.set_status(
            f"{self.model.info.name if self.model else ''} · {u.prompt_tokens} prompt"
            f"{reused} · {u.completion_tokens} generated · {u.decode_tps:.0f} tok/s"
            + (" · cancelled" if result.finish_reason == "cancelled" else ""))
        self.busy = False

    def cancel(self) -> None:
        if self.busy:
            self._cancel.set()
