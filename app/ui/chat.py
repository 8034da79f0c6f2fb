"""``ChatScreen`` and ``ChatView``: the conversation with the agent.

A turn runs in a thread worker that iterates ``Conversation.run`` and only posts
``AgentEventPosted`` messages; the handlers below turn them into transcript blocks,
one per event type (the table in ``_handlers``, as the recorder dispatches the same
events). The view is handed its conversation; what the app does (a new session, another
model, help, the approver's cancel) it asks for with messages. Slash commands
(``app.ui.commands``) never reach the model. Nothing typed is lost: a prompt sent during
a turn, or before the agent is ready, is queued and sent when it can be.

The model's text streams through ``Markdown.get_stream`` into an anchored scroll view
and is rendered once in full when the model call ends (not once per token). Old blocks
are unmounted past ``MAX_BLOCKS``: the full session stays in the store.

The blocks (``app.ui.blocks``, which loads Markdown and markdown_it) and the agent's
events are imported where they are first used, not at start-up: the first screen has
no block on it.
"""

from __future__ import annotations

import dataclasses
import re
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Header, Static

from deskmate.app.ui.commands import Typed, hint, read_command
from deskmate.app.ui.host import host
from deskmate.app.ui.messages import AgentEventPosted, FeedbackStored, TurnEnded
from deskmate.app.ui.prompt import PromptArea
from deskmate.app.ui.workers import ReportsWorkers

if TYPE_CHECKING:
    from textual.widgets.markdown import MarkdownStream

    from deskmate.app.agent import events as ev
    from deskmate.app.services.conversation import Conversation
    from deskmate.app.store import ResumedSession, SessionDetail
    from deskmate.app.ui.blocks import ActionBlock, FeedbackBar, ReplyBlock
    from deskmate.tools.sandbox import Isolation

MAX_BLOCKS = 200
DELTA_HZ = 30  # most streamed-text messages a second
RESUME_TURNS = 40  # turns redrawn when a session is resumed
_TOOL_CALL = re.compile(r"<tool_call>.*?(</tool_call>|$)", re.S)
_STOPS = {"max_steps": "it used every step it may take", "max_tool_calls": "the tool call "
          "limit was reached", "repetition": "it kept repeating the same code",
          "timeout": "the turn ran out of time", "error": "an error stopped it"}


class ChatView(ReportsWorkers, Vertical):
    """The transcript, the status line (usage, sandbox isolation) and the prompt."""

    class SwitchModel(Message):
        """The user typed ``/model SPEC``."""

        def __init__(self, spec: str) -> None:
            self.spec = spec
            super().__init__()

    class NewSessionRequested(Message):
        """A fresh session is wanted: the user typed ``/new``, or deleted the current
        session on the sessions screen."""

    class HelpRequested(Message):
        """The user typed ``/help``."""

    class ModelsListed(Message):
        """The models to choose from, one Markdown line each, for ``/model`` alone."""

        def __init__(self, lines: list[str]) -> None:
            self.lines = lines
            super().__init__()

    class TurnStarting(Message):
        """A turn is about to run; setting ``cancel`` stops it."""

        def __init__(self, cancel: threading.Event) -> None:
            self.cancel = cancel
            super().__init__()

    busy: reactive[bool] = reactive(False, init=False)
    """True while a turn runs."""

    def __init__(self, conversation: Conversation) -> None:
        super().__init__()
        self.conversation = conversation
        self._cancel = threading.Event()
        self._reply: ReplyBlock | None = None
        self._stream: MarkdownStream | None = None
        self._actions: dict[str, ActionBlock] = {}
        self._denied: set[str] = set()
        self._tools_since_observation = 0
        self.turn = 0
        self.hidden = 0  # blocks unmounted to keep long sessions light
        self._blocks: deque[Widget] = deque()  # mounted blocks, oldest first
        self.queued: deque[str] = deque()  # typed during a turn or before the agent was ready

    def compose(self) -> ComposeResult:
        yield VerticalScroll(Static("", id="hidden"), id="transcript")
        with Horizontal(id="status-line"):
            yield Static("", id="usage")
            yield Static("", id="sandbox")
        yield PromptArea(id="prompt", placeholder="Ask anything · Enter sends · ctrl+j new "
                         "line · /model NAME|PATH · /new · Esc cancels")

    def on_mount(self) -> None:
        self.query_one("#transcript", VerticalScroll).anchor()
        self.query_one("#hidden").display = False
        self.query_one("#sandbox").display = False
        self.query_one(PromptArea).focus()

    # ---------------------------------------------------------------- input

    @on(PromptArea.Submitted)
    def submit(self, event: PromptArea.Submitted) -> None:
        text = event.text.strip()
        if (command := read_command(text)) is not None:
            self.run_command(command, event)
            return
        if self.busy or self.conversation.runtime is None:
            # Never thrown away: sent when the turn ends, or once the agent is ready.
            self.queued.append(text)
            waiting = ("this turn ends" if self.busy else
                       "the model is loaded (F4 opens the models)")
            more = f" ({len(self.queued)} waiting)" if len(self.queued) > 1 else ""
            self.notify(f"Queued{more}: sent when {waiting}.", title="Message queued")
            return
        self.send(text)

    def send(self, text: str) -> None:
        """Start a turn on ``text`` (the agent is ready and no turn runs)."""
        from deskmate.app.ui.blocks import UserBlock

        self.add(UserBlock(text))
        self.busy = True
        self._cancel = threading.Event()
        self.post_message(self.TurnStarting(self._cancel))
        self.set_status("thinking …")
        self.run_turn(self.conversation, text, self._cancel)

    def send_queued(self) -> None:
        """Send the oldest queued message, if the agent is free to take it."""
        if self.queued and not self.busy and self.conversation.runtime is not None:
            self.send(self.queued.popleft())

    def agent_ready(self) -> None:
        """Called by the app when an agent was built: what waited for it is sent."""
        self.send_queued()

    def run_command(self, command: Typed, typed: PromptArea.Submitted) -> None:
        if command.name == "/model":
            if command.argument:
                self.post_message(self.SwitchModel(command.argument))
            else:
                self.list_models(host(self).config.model.name)
        elif command.name == "/new":
            self.post_message(self.NewSessionRequested())
        elif command.name == "/help":
            self.post_message(self.HelpRequested())
        else:
            if not typed.area.text:  # back in the prompt, to correct
                typed.area.load_text(typed.text)
            self.notify(f"{command.name} is not a command. {hint()}", title="Not sent",
                        severity="warning", timeout=10)

    @work(thread=True, exclusive=True, group="model-list", exit_on_error=False)
    def list_models(self, active: str) -> None:
        from deskmate.app.services.models import known_models, local_model_files

        lines = []
        for model in known_models(active):
            where = "on this machine" if model.path else (
                f"{model.size_mb:,} MB to download" if model.size_mb else "to download")
            mark = " **(active)**" if model.active else ""
            lines.append(f"- `{model.name}`{mark}: {model.description} · {where}")
        for path in local_model_files(active):
            mark = " **(active)**" if str(path.resolve()) == active else ""
            lines.append(f"- `{path}`{mark}: a local file")
        self.post_message(self.ModelsListed(lines))

    def on_chat_view_models_listed(self, message: ModelsListed) -> None:
        from deskmate.app.ui.blocks import Notice

        message.stop()
        app = host(self)
        loaded = app.model.info.name if app.model is not None else "none"
        self.add(Notice(f"**Model:** {app.config.model.name or '(none chosen)'} · loaded: "
                        f"{loaded}\n\n" + "\n".join(message.lines) + "\n\n`/model NAME` or "
                        "`/model PATH` makes one the model; F4 opens the models screen.",
                        "info"))

    def cancel(self) -> bool:
        if self.busy and not self._cancel.is_set():
            self._cancel.set()
            self.set_status("cancelling …")
            return True
        return False

    @work(thread=True, exclusive=True, group="turn", exit_on_error=False)
    def run_turn(self, conversation: Conversation, text: str, cancel: threading.Event) -> None:
        from deskmate.app.agent.events import ModelDelta

        pending: list[ModelDelta] = []
        last = 0.0

        def flush() -> None:
            if pending:
                joined = "".join(d.text for d in pending)
                self.post_message(AgentEventPosted(dataclasses.replace(pending[0],
                                                                       text=joined)))
                pending.clear()

        try:
            # Deltas that arrive faster than the screen redraws are joined (at most
            # DELTA_HZ messages a second), so a fast model never floods the event loop.
            for event in conversation.run(text, cancel):
                if isinstance(event, ModelDelta) and (
                        not pending or pending[0].step == event.step):
                    pending.append(event)
                    if (now := time.monotonic()) - last >= 1 / DELTA_HZ:
                        last = now
                        flush()
                    continue
                flush()
                self.post_message(AgentEventPosted(event))
            flush()
        finally:  # a crash still ends the turn; the app's worker handler shows the error
            self.post_message(TurnEnded())

    # ---------------------------------------------------------------- blocks

    def add(self, *widgets: Widget) -> None:
        self.query_one("#transcript", VerticalScroll).mount_all(widgets)
        self._blocks.extend(widgets)
        if len(self._blocks) > MAX_BLOCKS:
            while len(self._blocks) > MAX_BLOCKS:
                self._blocks.popleft().remove()
                self.hidden += 1
            banner = self.query_one("#hidden", Static)
            banner.update(f"{self.hidden} earlier blocks are not shown here; the whole "
                          "session is in Sessions (F2).")
            banner.display = True

    def clear(self) -> None:
        while self._blocks:
            self._blocks.popleft().remove()
        self.hidden = 0
        self.query_one("#hidden").display = False
        self.query_one("#sandbox").display = False
        self._actions.clear()
        self._reply = None
        # The focus may have been on a block just removed (a rating button, an
        # expanded action): typing must still reach the prompt.
        self.query_one(PromptArea).focus()

    def drop(self, kind: str) -> None:
        """Remove the blocks of class ``kind`` (news that is no longer true)."""
        for block in [b for b in self._blocks if b.has_class(kind)]:
            self._blocks.remove(block)
            block.remove()

    def show_resumed(self, resumed: ResumedSession, detail: SessionDetail) -> None:
        """Redraw a recorded session: questions, tool calls and answers of recent turns."""
        from deskmate.app.ui.blocks import (
            ActionBlock,
            FeedbackBar,
            ReplyBlock,
            UserBlock,
            short_args,
        )

        self.clear()
        ratings = {f.turn: f.rating for f in detail.feedback}
        turns = detail.turns[-RESUME_TURNS:]
        self.hidden = len(detail.turns) - len(turns)
        blocks: list[Widget] = []
        for turn in turns:
            blocks.append(UserBlock(turn.user_message))
            for call in (c for c in detail.tool_calls if c.turn == turn.turn):
                block = ActionBlock("tool", f"{call.server}.{call.tool}"
                                    f"({short_args(call.arguments)})", "", key=call.call_id)
                status = "denied" if call.approval == "deny" else (
                    "error" if call.is_error else "ok")
                block.finish(status, call.result or "", call.duration_s or 0.0)
                blocks.append(block)
            if turn.final_answer:
                blocks.append(ReplyBlock(turn.final_answer, step=-1, classes="answer"))
                bar = FeedbackBar(turn.turn)
                bar.set_reactive(FeedbackBar.rating, ratings.get(turn.turn, 0))
                blocks.append(bar)
        self.add(*blocks)
        if self.hidden:
            banner = self.query_one("#hidden", Static)
            banner.update(f"{self.hidden} earlier turns are not shown here.")
            banner.display = True
        self.turn = resumed.next_turn - 1
        title = resumed.summary.title or resumed.summary.id
        self.set_status(f"resumed {title} · {len(resumed.transcript)} messages")

    def set_status(self, text: str) -> None:
        self.query_one("#usage", Static).update(text)

    def set_sandbox(self, isolation: Isolation | None) -> None:
        """Show the code sandbox's isolation level; hidden when no code runs (eager).

        Weak isolation (the network or the home directory in reach) is shown as a
        warning: the model's code can then read your files or send them away.
        """
        label = self.query_one("#sandbox", Static)
        label.display = isolation is not None
        if isolation is None:
            return
        reach = [what for what, open_ in (("network", isolation.network),
                                          ("home visible", isolation.home_visible)) if open_]
        label.update(f"sandbox: {isolation.level}" + (f" ({', '.join(reach)})" if reach else ""))
        label.set_class(bool(reach), "-weak")
        label.tooltip = isolation.details

    async def on_agent_event_posted(self, message: AgentEventPosted) -> None:
        message.stop()
        handler = _handlers().get(type(message.event))
        if handler is not None:
            await handler(self, message.event)

    async def _turn_started(self, e: ev.TurnStarted) -> None:
        self.turn = e.turn
        self._actions.clear()
        self._denied.clear()

    async def _model_delta(self, e: ev.ModelDelta) -> None:
        from textual.widgets import Markdown

        from deskmate.app.ui.blocks import ReplyBlock

        # A delta with no open stream (its step's message already ended it) starts a reply
        # of its own rather than writing into a finished one.
        if self._stream is None or self._reply is None or self._reply.step != e.step:
            await self._end_stream()
            self._reply = ReplyBlock(step=e.step)
            self.add(self._reply)
            self._stream = Markdown.get_stream(self._reply)
        await self._stream.write(e.text)

    async def _model_message(self, e: ev.ModelMessage) -> None:
        await self._end_stream()
        if self._reply is not None and self._reply.step == e.step:
            shown = _TOOL_CALL.sub("", e.text).strip()
            if shown:
                await self._reply.update(shown)  # the one full render of this reply
            else:
                await self._reply.remove()
                self._reply = None
        u = e.usage
        reused = f" ({u.reused_tokens:,} reused)" if u.reused_tokens else ""
        speed = f" · {u.decode_tps:.0f} tok/s" if u.decode_tps else ""
        self.set_status(f"step {e.step} · {u.prompt_tokens:,} prompt{reused} · "
                        f"{u.completion_tokens:,} generated{speed}")

    async def _code_action(self, e: ev.CodeAction) -> None:
        from deskmate.app.ui.blocks import ActionBlock

        if self._reply is not None and self._reply.step == e.step:
            if e.thought.strip():
                await self._reply.update(e.thought)
            else:
                await self._reply.remove()
                self._reply = None
        first = next((line for line in e.code.splitlines() if line.strip()), "")
        block = ActionBlock("code", f"python · {first.strip()[:60]}", e.code, key=f"{e.step}")
        self._actions[f"code{e.step}"] = block
        self.add(block)
        block.status = "running"

    async def _observation(self, e: ev.Observation) -> None:
        from deskmate.app.ui.blocks import ActionBlock

        status = "ok" if e.status == "ok" else "error"
        block = self._actions.get(f"code{e.step}")
        if block is None and self._tools_since_observation == 0:
            label = "reply format corrected" if status == "error" else "observation"
            block = ActionBlock("code", label, "", key=f"{e.step}")
            self.add(block)
        self._tools_since_observation = 0
        if block is not None:
            block.finish(status, e.content.removeprefix("Output:\n"), e.duration_s)

    async def _tool_started(self, e: ev.ToolCallStarted) -> None:
        import json

        from deskmate.app.ui.blocks import ActionBlock, short_args

        self._tools_since_observation += 1
        block = ActionBlock("tool", f"{e.server}.{e.tool}({short_args(e.arguments)})",
                            json.dumps(e.arguments, indent=2, ensure_ascii=False),
                            key=e.call_id)
        self._actions[e.call_id] = block
        self.add(block)
        block.status = "running"

    async def _approval_needed(self, e: ev.ToolApprovalNeeded) -> None:
        if block := self._actions.get(e.call_id):
            block.status = "waiting"

    async def _approval_decided(self, e: ev.ToolApprovalDecided) -> None:
        block = self._actions.get(e.call_id)
        if e.decision == "deny":
            self._denied.add(e.call_id)
        elif block is not None:
            block.status = "running"

    async def _tool_finished(self, e: ev.ToolCallFinished) -> None:
        if block := self._actions.get(e.call_id):
            status = "denied" if e.call_id in self._denied else (
                "error" if e.is_error else "ok")
            block.finish(status, e.result, e.duration_s)

    async def _final_answer(self, e: ev.FinalAnswer) -> None:
        from deskmate.app.ui.blocks import FeedbackBar, ReplyBlock

        await self._end_stream()
        if self._reply is None or self._reply.step != e.step:
            self._reply = ReplyBlock(step=e.step)
            self.add(self._reply)
        await self._reply.update(e.text)
        self._reply.add_class("answer")
        self.add(FeedbackBar(self.turn))

    async def _turn_finished(self, e: ev.TurnFinished) -> None:
        from deskmate.app.ui.blocks import Notice

        await self._end_stream()
        for block in self._actions.values():
            if block.status in ("pending", "running", "waiting"):
                block.finish("cancelled", block.preview)
        if e.status == "cancelled" and self._reply is not None:
            self._reply.add_class("cancelled")
        elif e.status in _STOPS:
            self.add(Notice(f"The agent stopped: {_STOPS[e.status]}.", "warning"))
        calls = f" · {e.tool_calls} tool call{'s' if e.tool_calls != 1 else ''}"
        self.set_status(
            f"{e.status} · {e.steps} step{'s' if e.steps != 1 else ''}{calls} · "
            f"{e.prompt_tokens:,} prompt · {e.completion_tokens:,} generated · "
            f"{e.wall_s:.1f} s")

    async def _error(self, e: ev.AgentError) -> None:
        from deskmate.app.ui.blocks import Notice

        self.add(Notice(f"**{e.kind} error:** {e.message}", "error"))

    async def on_turn_ended(self, message: TurnEnded) -> None:
        message.stop()
        await self._end_stream()
        self._reply = None
        self.busy = False
        self.send_queued()

    def on_feedback_bar_rated(self, event: FeedbackBar.Rated) -> None:
        event.stop()
        self.store_rating(self.conversation, event.turn, event.up)

    @work(thread=True, group="store", exit_on_error=False)
    def store_rating(self, conversation: Conversation, turn: int, up: bool) -> None:
        conversation.rate(turn, up)
        self.post_message(FeedbackStored(turn, 1 if up else -1))

    def on_feedback_stored(self, message: FeedbackStored) -> None:
        from deskmate.app.ui.blocks import FeedbackBar

        message.stop()
        for bar in self.query(FeedbackBar):
            if bar.turn == message.turn:
                bar.rating = message.rating

    async def _end_stream(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()


@cache
def _handlers() -> dict[type, Callable[[ChatView, Any], Awaitable[None]]]:
    """What each agent event does to the transcript (built at the first event: the
    events module loads with the first turn). Events not here change nothing shown."""
    from deskmate.app.agent import events as ev

    return {
        ev.TurnStarted: ChatView._turn_started,
        ev.ModelDelta: ChatView._model_delta,
        ev.ModelMessage: ChatView._model_message,
        ev.CodeAction: ChatView._code_action,
        ev.Observation: ChatView._observation,
        ev.ToolCallStarted: ChatView._tool_started,
        ev.ToolApprovalNeeded: ChatView._approval_needed,
        ev.ToolApprovalDecided: ChatView._approval_decided,
        ev.ToolCallFinished: ChatView._tool_finished,
        ev.FinalAnswer: ChatView._final_answer,
        ev.TurnFinished: ChatView._turn_finished,
        ev.AgentError: ChatView._error,
    }


class ChatScreen(Screen):
    """The main screen: the chat."""

    def __init__(self, conversation: Conversation) -> None:
        super().__init__()
        self.conversation = conversation

    def compose(self) -> ComposeResult:
        yield Header()
        yield ChatView(self.conversation)
        yield Footer()

    def on_screen_resume(self) -> None:
        if self.focused is None:
            self.query_one(PromptArea).focus()

    def on_key(self, event: events.Key) -> None:
        """A key that reached the screen found nothing focused: a printable one is
        typed into the prompt rather than lost."""
        if self.focused is None and event.is_printable and event.character:
            event.stop()
            prompt = self.query_one(PromptArea)
            prompt.focus()
            prompt.insert(event.character)
