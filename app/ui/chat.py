"""``ChatScreen`` and ``ChatView``: the input side of the conversation with the agent.

``ChatView`` takes the prompt, handles slash commands (read by ``app.ui.commands``,
done by ``app.ui.commands_run``; they never reach the model), runs a turn in a thread
worker, cancels it and stores ratings. The worker iterates ``Conversation.run`` and
only posts ``AgentEventPosted`` messages; the view hands each to its ``Transcript``
(``app.ui.transcript``), which draws it. The view is handed its conversation; what the
app does (a new session, another model, help, the approver's cancel) it asks for with
messages. Nothing typed is lost: a prompt sent during a turn, or before the agent is
ready, is queued and sent when it can be.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Header, Static

from deskmate.app.agent.events import ModelMessage
from deskmate.app.ui.attachment import attachment_blocks, file_problem
from deskmate.app.ui.commands import COMMANDS, read_command
from deskmate.app.ui.commands_run import RunsCommands
from deskmate.app.ui.compacting import Compacting
from deskmate.app.ui.context_meter import ContextMeter
from deskmate.app.ui.copying import COPY_KEYS, Copyable
from deskmate.app.ui.host import host
from deskmate.app.ui.messages import AgentEventPosted, FeedbackStored, TurnEnded
from deskmate.app.ui.prompt import PromptArea
from deskmate.app.ui.transcript import Transcript
from deskmate.app.ui.workers import ReportsWorkers

if TYPE_CHECKING:

    from deskmate.app.services.conversation import Conversation
    from deskmate.app.services.mcp_input import PromptCall
    from deskmate.app.store import ResumedSession, SessionDetail
    from deskmate.app.ui.blocks import FeedbackBar
    from deskmate.app.ui.status_rate import RateRead
    from deskmate.tools.hub.published import PromptSpec
    from deskmate.tools.sandbox import Isolation

DELTA_HZ = 30  # most streamed-text messages a second


class ChatView(ReportsWorkers, Vertical, Compacting, RunsCommands):
    """The transcript, the status line (usage, sandbox isolation) and the prompt."""

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
        self.transcript = Transcript(id="transcript")
        self.queued: deque[str] = deque()  # typed during a turn or before the agent was ready

    def compose(self) -> ComposeResult:
        yield self.transcript
        with Horizontal(id="status-line"):
            yield Static("", id="usage")
            yield ContextMeter("", id="context")
            yield Static("", id="sandbox")
        yield PromptArea(id="prompt", placeholder="Ask anything · Enter sends · ctrl+j new "
                         "line · /model NAME|PATH · /new · Esc cancels")

    def on_mount(self) -> None:
        self.query_one("#sandbox").display = False
        self.query_one(ContextMeter).reset()
        from deskmate.app.services.prompt_history import PromptHistory, history_path

        prompt = self.query_one(PromptArea)
        prompt.completer = self.complete
        prompt.use_history(PromptHistory(history_path()))
        prompt.focus()

    # ---------------------------------------------------------------- input

    @on(PromptArea.Submitted)
    def submit(self, event: PromptArea.Submitted) -> None:
        text = event.text.strip()
        if (command := read_command(text)) is not None:
            self.run_command(command, event.area, event.text)
            return
        if self.asks_for_arguments(text, event):
            return
        if problem := file_problem(text):  # said now, the text back to correct
            if not event.area.text:
                event.area.load_text(event.text)
            self.notify(problem, title="Not sent", severity="warning", timeout=10)
            return
        self.take(text)

    def take(self, text: str) -> None:
        """Send ``text`` now, or queue it while a turn runs or the agent is not ready."""
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

        self.transcript.add(UserBlock(text), *attachment_blocks(text))
        self.start_turn(text)

    def start_turn(self, text: str, *, retry: bool = False) -> None:
        self.busy = True
        self._cancel = threading.Event()
        self.post_message(self.TurnStarting(self._cancel))
        self.set_status("thinking …")
        self.run_turn(self.conversation, text, self._cancel, retry)

    def send_queued(self) -> None:
        """Send the oldest queued message, if the agent is free to take it."""
        if self.queued and not self.busy and self.conversation.runtime is not None:
            self.send(self.queued.popleft())

    # ---------------------------------------------------------------- MCP prompts, resources

    def complete(self, before: str) -> str:
        """The prompt's completion of a slash command, ``@server:uri`` or
        ``/server:prompt``."""
        from deskmate.app.services.mcp_input import completions, suggest

        hub = host(self).hub
        return suggest(before, [c.name for c in COMMANDS]
                       + (completions(hub) if hub is not None else []))

    def asks_for_arguments(self, text: str, typed: PromptArea.Submitted) -> bool:
        """A ``/server:prompt`` that cannot go as typed: its missing arguments are asked
        for (then it is sent), or what is wrong is said. True when handled here."""
        from deskmate.app.services.mcp_input import InputError, prompt_call

        hub = host(self).hub
        if hub is None:
            return False
        try:
            call = prompt_call(text, hub.prompts(), [s.name for s in hub.states()])
        except InputError as exc:
            if not typed.area.text:  # back in the prompt, to correct
                typed.area.load_text(typed.text)
            self.notify(str(exc), title="Not sent", severity="warning", timeout=10)
            return True
        if call is None or not call.missing:
            return False
        self.ask_arguments(call)
        return True

    def start_prompt(self, spec: PromptSpec) -> None:
        """A server's prompt chosen in the command palette."""
        from deskmate.app.services.mcp_input import PromptCall

        if spec.arguments:
            self.ask_arguments(PromptCall(spec))
        else:
            self.take(PromptCall(spec).text())

    def ask_arguments(self, call: PromptCall) -> None:
        """The prompt's arguments in a small form; sent once they are all there."""
        from deskmate.app.ui.prompt_args import PromptArgsScreen

        def answered(done: PromptCall | None) -> None:
            if done is not None:
                self.take(done.text())

        self.app.push_screen(PromptArgsScreen(call), answered)

    def agent_ready(self) -> None:
        """Called by the app when an agent was built: what waited for it is sent."""
        self.send_queued()

    def cancel(self) -> bool:
        if self.busy and not self._cancel.is_set():
            self._cancel.set()
            self.set_status("cancelling …")
            return True
        return False

    @work(thread=True, exclusive=True, group="turn", exit_on_error=False)
    def run_turn(self, conversation: Conversation, text: str, cancel: threading.Event,
                 retry: bool = False) -> None:
        """One turn on ``text``; with ``retry``, on the last turn's prompt instead, that
        turn set aside first."""
        from deskmate.app.agent.events import ModelDelta
        from deskmate.app.services.retry import set_aside_last_turn
        from deskmate.app.ui.status_rate import LiveRate, RateRead

        pending: list[ModelDelta] = []
        last = 0.0
        rate = LiveRate()  # tok/s on the status line while the model writes

        def flush() -> None:
            if pending:
                joined = "".join(d.text for d in pending)
                self.post_message(AgentEventPosted(dataclasses.replace(pending[0],
                                                                       text=joined)))
                pending.clear()

        try:
            if retry:
                if (found := set_aside_last_turn(conversation)) is None:
                    self.post_message(self.Said("Nothing to retry yet: no prompt was "
                                                "answered in this session.", "Not retried",
                                                "warning"))
                    return
                self.post_message(self.Retrying(found))
                text = found.prompt
            # Deltas that arrive faster than the screen redraws are joined (at most
            # DELTA_HZ messages a second), so a fast model never floods the event loop.
            # A retried prompt is sent as the model read it (already expanded).
            turn = (conversation.run(text, cancel, expand=False) if retry
                    else conversation.run(text, cancel))
            for event in turn:
                if isinstance(event, ModelDelta) and (
                        not pending or pending[0].step == event.step):
                    pending.append(event)
                    now = time.monotonic()
                    reading = rate.feed(event.step, now)
                    if reading is not None or now - last >= 1 / DELTA_HZ:
                        last = now
                        flush()
                    if reading is not None:
                        self.post_message(RateRead(reading))
                    continue
                flush()
                self.post_message(AgentEventPosted(event))
            flush()
        finally:  # a crash still ends the turn; the app's worker handler shows the error
            self.post_message(TurnEnded())

    # ---------------------------------------------------------------- display

    def clear(self) -> None:
        """An empty transcript, for a new session."""
        self.transcript.clear()
        self.query_one("#sandbox").display = False
        self.query_one(ContextMeter).reset()
        # The focus may have been on a block just removed (a rating button, an
        # expanded action): typing must still reach the prompt.
        self.query_one(PromptArea).focus()

    def show_resumed(self, resumed: ResumedSession, detail: SessionDetail) -> None:
        """Redraw a recorded session: questions, tool calls and answers of recent turns."""
        self.clear()
        self.transcript.show_resumed(resumed, detail)
        title = resumed.summary.title or resumed.summary.id
        self.set_status(f"resumed {title} · {len(resumed.transcript)} messages")

    def set_status(self, text: str) -> None:
        # A worker's news can arrive while the app closes and this view's children are
        # already gone (the view itself still answers the app's query): nothing to show.
        for usage in self.query("#usage").results(Static):
            usage.update(text)

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
        said = "; ".join(filter(None, [", ".join(reach),
                                       self.conversation.cell_gate.status(isolation)]))
        label.update(f"sandbox: {isolation.level}" + (f" ({said})" if said else ""))
        label.set_class(bool(reach), "-weak")
        label.tooltip = isolation.details

    async def on_agent_event_posted(self, message: AgentEventPosted) -> None:
        message.stop()
        if isinstance(message.event, ModelMessage) and self.conversation.runtime is not None:
            used = message.event.usage.prompt_tokens + message.event.usage.completion_tokens
            window = self.conversation.runtime.agent.model.info.context_size
            self.query_one(ContextMeter).show(used, window)
        if (status := await self.transcript.draw(message.event)) is not None:
            self.set_status(status)

    def on_rate_read(self, message: RateRead) -> None:
        message.stop()
        if self.busy and not self._cancel.is_set():  # "cancelling …" stays until the end
            self.set_status(message.text)

    async def on_turn_ended(self, message: TurnEnded) -> None:
        message.stop()
        await self.transcript.end_turn()
        self.busy = False
        if self.meter().near_full:  # before the next prompt: it may not fit any more
            self.start_compaction(auto=True)
        else:
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
        """A key that reached the screen found nothing focused, or a message focused to
        copy it (which binds only c and k): a printable one is typed into the prompt
        rather than lost."""
        copying = isinstance(self.focused, Copyable)
        if copying and event.key in COPY_KEYS:
            return  # the block's binding, checked once the key passed the screen
        if (copying or self.focused is None) and event.is_printable and event.character:
            event.stop()
            prompt = self.query_one(PromptArea)
            prompt.focus()
            prompt.insert(event.character)
