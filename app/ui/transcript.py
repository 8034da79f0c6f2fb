"""``Transcript``: the chat's anchored scroll of blocks, and how each agent event is drawn.

``ChatView`` composes one and hands it every agent event through ``draw``; the
transcript dispatches through an explicit table keyed by event type (``_handlers``, as
the recorder dispatches the same events). What it cannot show itself, the usage line
for the view's status line, ``draw`` returns: the view sets it at once, so a status the
view sets next ("thinking …" for a queued prompt) is never overwritten by a late one.

The model's text streams through ``Markdown.get_stream`` into the anchored scroll and is
rendered once in full when the model call ends (not once per token). Old blocks are
unmounted past ``MAX_BLOCKS``: the full session stays in the store.

The blocks (``app.ui.blocks``, which loads Markdown and markdown_it) and the agent's
events are imported where they are first used, not at start-up: the first screen has
no block on it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

if TYPE_CHECKING:
    from textual.widgets.markdown import MarkdownStream

    from deskmate.app.agent import events as ev
    from deskmate.app.store import ResumedSession, SessionDetail
    from deskmate.app.ui.blocks import ActionBlock, ReplyBlock

MAX_BLOCKS = 200
RESUME_TURNS = 40  # turns redrawn when a session is resumed
_TOOL_CALL = re.compile(r"<tool_call>.*?(</tool_call>|$)", re.S)
_STOPS = {"max_steps": "it used every step it may take", "max_tool_calls": "the tool call "
          "limit was reached", "repetition": "it kept repeating the same code",
          "timeout": "the turn ran out of time", "error": "an error stopped it"}


class Transcript(VerticalScroll):
    """The blocks of the conversation, newest at the bottom, the view anchored there."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._reply: ReplyBlock | None = None
        self._stream: MarkdownStream | None = None
        self._actions: dict[str, ActionBlock] = {}
        self._denied: set[str] = set()
        self._tools_since_observation = 0
        self.turn = 0
        self.hidden = 0  # blocks unmounted to keep long sessions light
        self._blocks: deque[Widget] = deque()  # mounted blocks, oldest first

    def compose(self) -> ComposeResult:
        yield Static("", id="hidden")

    def on_mount(self) -> None:
        self.anchor()
        self.query_one("#hidden").display = False

    # ---------------------------------------------------------------- blocks

    def add(self, *widgets: Widget) -> None:
        self.mount_all(widgets)
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
        self._actions.clear()
        self._reply = None

    def drop(self, kind: str) -> None:
        """Remove the blocks of class ``kind`` (news that is no longer true)."""
        for block in [b for b in self._blocks if b.has_class(kind)]:
            self._blocks.remove(block)
            block.remove()

    def show_resumed(self, resumed: ResumedSession, detail: SessionDetail) -> None:
        """Redraw a recorded session in place of what is shown: questions, tool calls and
        answers of recent turns."""
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

    async def end_turn(self) -> None:
        """The turn's worker is done: the open stream, if any, is closed."""
        await self._end_stream()
        self._reply = None

    # ---------------------------------------------------------------- events

    async def draw(self, event: ev.AgentEvent) -> str | None:
        """Show ``event``; return the status line it brings (a model call's or a turn's
        usage), if any. Events without an entry in the table change nothing shown."""
        handler = _handlers().get(type(event))
        return await handler(self, event) if handler is not None else None

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

    async def _model_message(self, e: ev.ModelMessage) -> str:
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
        return (f"step {e.step} · {u.prompt_tokens:,} prompt{reused} · "
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

        # A call made before step 1 (the first look) answers no reply of the model's: the
        # next observation still gets its own block.
        if e.step:
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

    async def _tool_progress(self, e: ev.ToolProgress) -> None:
        from deskmate.app.ui.blocks import one_line
        from deskmate.tools.hub.calls import Progress

        if (block := self._actions.get(e.call_id)) and block.status == "running":
            block.show_news(one_line(Progress(e.progress, e.total, e.message).bar()))

    async def _question_asked(self, e: ev.ElicitationAsked) -> None:
        from deskmate.app.ui.blocks import one_line

        if block := self._actions.get(e.call_id):
            block.status = "waiting"
            what = f"open {e.url}" if e.mode == "url" else e.message
            block.show_news(one_line(f"asks: {what}", 60))

    async def _question_answered(self, e: ev.ElicitationAnswered) -> None:
        if block := self._actions.get(e.call_id):
            block.status = "running"
            said = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}
            block.show_news(f"question {said[e.action]}" + (f": {e.reason}" if e.reason
                                                            else ""))

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

    async def _turn_finished(self, e: ev.TurnFinished) -> str:
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
        return (f"{e.status} · {e.steps} step{'s' if e.steps != 1 else ''}{calls} · "
                f"{e.prompt_tokens:,} prompt · {e.completion_tokens:,} generated · "
                f"{e.wall_s:.1f} s")

    async def _error(self, e: ev.AgentError) -> None:
        from deskmate.app.ui.blocks import Notice

        self.add(Notice(f"**{e.kind} error:** {e.message}", "error"))

    async def _end_stream(self) -> None:
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()


@cache
def _handlers() -> dict[type, Callable[[Transcript, Any], Awaitable[str | None]]]:
    """What each agent event does to the transcript, and the status line it brings
    (built at the first event: the events module loads with the first turn). Events not
    here change nothing shown."""
    from deskmate.app.agent import events as ev

    return {
        ev.TurnStarted: Transcript._turn_started,
        ev.ModelDelta: Transcript._model_delta,
        ev.ModelMessage: Transcript._model_message,
        ev.CodeAction: Transcript._code_action,
        ev.Observation: Transcript._observation,
        ev.ToolCallStarted: Transcript._tool_started,
        ev.ToolApprovalNeeded: Transcript._approval_needed,
        ev.ToolApprovalDecided: Transcript._approval_decided,
        ev.ToolProgress: Transcript._tool_progress,
        ev.ElicitationAsked: Transcript._question_asked,
        ev.ElicitationAnswered: Transcript._question_answered,
        ev.ToolCallFinished: Transcript._tool_finished,
        ev.FinalAnswer: Transcript._final_answer,
        ev.TurnFinished: Transcript._turn_finished,
        ev.AgentError: Transcript._error,
    }
