"""``Agent``: the loop. Query the model, run the action its reply holds, repeat.

``run(task)`` is a plain generator of typed events (app/agent/events.py) used as is by
the CLI, the TUI, the recorder and RL rollouts. What a reply looks like and what running
it does belongs to the action format (app/agent/actions.py: code or eager), so the loop
reads the same for both. The transcript is append-only and exactly what the model saw,
so llama.cpp reuses its KV cache for the whole prefix and the stored session is training
data as it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from queue import Queue
from typing import TYPE_CHECKING

from deskmate.app.agent import events as ev
from deskmate.app.agent.actions import Actions, Stop, Turn
from deskmate.app.agent.answer_checks import AnswerChecks
from deskmate.app.agent.bridge import CallContext, ToolBridge
from deskmate.app.agent.first_look import first_look
from deskmate.app.agent.parse import TOOLS_FOUND, is_feedback
from deskmate.app.agent.prompt import CODE_EXAMPLE, example_form
from deskmate.app.agent.request import clauses, head_start_query, only_asks
from deskmate.app.llm.base import (
    ChatMessage,
    ChatModel,
    Delta,
    Finished,
    GenerationParams,
    ModelError,
    Usage,
)
from deskmate.tools.sandbox import SandboxError

if TYPE_CHECKING:
    from deskmate.app.agent.experience import Experience

@dataclass(frozen=True)
class AgentLimits:
    max_steps: int = 12  # model calls per turn
    max_tool_calls: int = 30  # per turn
    wall_s: float = 600.0  # per turn
    observation_chars: int = 4000  # what one action's output may add to the context
    max_tokens: int = 1024  # per model reply
    temperature: float = 0.2
    repeat_code: int = 3  # the same cell this many times in a turn ends it
    head_start: int = 3  # code mode: tools found for the request, shown before step 1
    # Code mode: the request's files read (first lines) and folders listed before step 1.
    first_look: bool = True
    code_after_error: bool = True  # code mode: a failed cell's next reply is code (grammar)
    # Code mode's example: "text" inside the system prompt, "turns" after it
    # (prompt.CODE_EXAMPLE), or "auto": by the model's size (prompt.example_form).
    example: str = "auto"


@dataclass
class Tally:
    """What a turn used so far, reported in ``TurnFinished``."""

    steps: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, usage: Usage) -> None:
        self.model_calls += 1
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens


class Agent:
    """A conversation with one model: ``run`` a turn per user message, in one transcript.

    ``actions`` is the format the model acts in (code or eager); ``bridge`` is the one
    way to the tools, whichever format calls them, so the loop gives it each turn's
    limits and counts its calls."""

    def __init__(self, model: ChatModel, actions: Actions, bridge: ToolBridge, *,
                 system_prompt: str, limits: AgentLimits = AgentLimits(),
                 transcript: list[ChatMessage] | None = None) -> None:
        self.model, self.actions, self.bridge = model, actions, bridge
        self.limits = limits
        self.system_prompt = system_prompt
        self.transcript: list[ChatMessage] = list(transcript or [])
        # Code actions show the model its cells' output as user messages: not turns.
        self.turns = sum(1 for m in self.transcript
                         if m.role == "user" and not is_feedback(m.content))
        # Tool calls report from helper threads; the turn passes their events on in order.
        self._events: Queue[ev.AgentEvent] = Queue()
        # Solved earlier requests to show one of as an example (code mode); None: none.
        self.experience: Experience | None = None
        # Code mode's checks of a final answer before it is taken (answer_checks.py).
        self._turn_start = 0  # where this turn's messages start in the transcript
        self.checks = AnswerChecks(bridge, lambda: self.transcript[self._turn_start:])

    def run(self, task: str, cancel: threading.Event | None = None) -> Iterator[ev.AgentEvent]:
        cancel = cancel or threading.Event()
        started = time.perf_counter()
        self.turns += 1
        tally = Tally()
        yield ev.TurnStarted(turn=self.turns, user_message=task)
        if not self.transcript:
            yield self._append(ChatMessage("system", self.system_prompt))
        self._turn_start = len(self.transcript)
        yield self._append(ChatMessage("user", task))
        yield from self._recall(task)
        yield from self._head_start(task)
        turn = Turn(cancel=cancel, deadline=started + self.limits.wall_s,
                    observation_chars=self.limits.observation_chars,
                    repeat_code=self.limits.repeat_code, append=self._append,
                    events=self._events, request=task, max_steps=self.limits.max_steps)
        self.bridge.new_turn(CallContext(emit=self._events.put,
                                         max_tool_calls=self.limits.max_tool_calls,
                                         cancel=turn.interrupt(), said=self._said,
                                         request=task))
        self.actions.new_turn()
        self.checks.new_turn(task)
        status: ev.TurnStatus = "max_steps"
        try:
            yield from self._first_look(task, turn)
            for step in range(1, self.limits.max_steps + 1):
                if cancel.is_set():
                    raise Stop("cancelled")
                if time.perf_counter() - started > self.limits.wall_s:
                    raise Stop("timeout")
                tally.steps = step
                if (yield from self.step(step, turn, tally)):
                    status = "answered"
                    break
                if self.bridge.turn.limit_reached:
                    raise Stop("max_tool_calls")
        except Stop as stop:
            status = stop.status
        except ModelError as exc:
            status = "error"
            yield ev.AgentError(message=str(exc), kind="model")
        except SandboxError as exc:  # the worker could not be (re)started
            status = "error"
            yield ev.AgentError(message=f"the Python sandbox failed: {exc}", kind="sandbox")
        tally.tool_calls = self.bridge.turn.calls
        yield ev.TurnFinished(
            turn=self.turns, status=status, steps=tally.steps, model_calls=tally.model_calls,
            tool_calls=tally.tool_calls, prompt_tokens=tally.prompt_tokens,
            completion_tokens=tally.completion_tokens, wall_s=time.perf_counter() - started)

    def step(self, step: int, turn: Turn, tally: Tally) -> Generator[ev.AgentEvent, None, bool]:
        """Query the model, then execute the action in its reply; True: it answered."""
        self.bridge.new_step(step)
        reply = yield from self._query(step, turn, tally)
        # A check wants code, then an answer: with fewer steps left than that, the answer
        # given is worth more than a turn that ends at max_steps with none — except
        # where the request's change is still undone, which the last step can still make.
        left = self.limits.max_steps - step
        check = (self.checks.check(reply, change_only=left < 2)
                 if left >= 1 and self.actions.mode == "code" else "")
        if check:
            yield turn.append(ChatMessage("assistant", reply))
            yield ev.Observation(step=step, content=check, status="error", duration_s=0.0)
            yield turn.append(ChatMessage("user", check))
            return False
        return (yield from self.actions.act(step, reply, turn))

    def _recall(self, task: str) -> Iterator[ev.AgentEvent]:
        """The code that solved a similar earlier request, as a note after this one."""
        if self.experience is None or self.actions.mode != "code":
            return
        servers = [info.name for info in self.bridge.catalog.servers()]
        recalled = self.experience.recall(task, servers)
        if recalled is not None:
            yield self._append(ChatMessage("user", recalled.note))

    def _head_start(self, task: str) -> Iterator[ev.AgentEvent]:
        """The search a small model often skips, done for it: the signatures of the tools
        that best match the request, as a note after it (feedback, not a user's turn)."""
        if self.actions.mode != "code" or not self.limits.head_start:
            return
        if not self.bridge.catalog.servers():
            return
        # A question's words often match tools that change things; a request for a change
        # that starts "Read ... and store ..." is not a question.
        reading = only_asks(task)
        k = self.limits.head_start
        try:
            # A request of several steps ("fetch the page and write the file") needs a tool
            # per step, and the words of one step drown the other's in a search for the
            # whole: the whole request's best tool, each step's, then the whole's others.
            query = head_start_query(task)
            # Not the tools of a step the request rules out ("but do not commit it").
            whole = self.bridge.search_tools(query, k, reading=reading, servers=True,
                                             leave_out=task)
            found = whole[:1]
            for clause in clauses(query)[:k]:
                found += self.bridge.search_tools(clause, 1, reading=reading, leave_out=task)
            found += whole
        except Exception:  # a search that fails costs the head start, not the turn
            return
        found = list(dict.fromkeys(found))[:k]
        if found:
            yield self._append(ChatMessage("user", TOOLS_FOUND + "\n".join(found)))

    def _first_look(self, task: str, turn: Turn) -> Generator[ev.AgentEvent, None, None]:
        """What the request's files and folders hold, read through the file tools (their
        calls count in this turn), as a note after the request (first_look.py)."""
        if self.actions.mode != "code" or not self.limits.first_look:
            return
        looked = yield from turn.in_thread(first_look, task, self.bridge.tools(),
                                           self.bridge.call_quietly)
        # The look's calls are not the model's: an answer before its own is checked.
        self.checks.looked(self.bridge.turn.calls)
        if looked.note:
            self.actions.looked(looked.calls)
            yield self._append(ChatMessage("user", looked.note))

    def _said(self) -> str:
        """What the user and the tools said in this conversation: the text a record's
        values may be copied from (the bridge's made-up check)."""
        return "\n".join(m.content for m in self.transcript if m.role in ("user", "tool"))

    @property
    def example_turns(self) -> bool:
        """Whether the worked example is shown as turns (else it is in the system prompt)."""
        return example_form(self.limits.example, self.model.info) == "turns"

    def model_view(self) -> list[ChatMessage]:
        """What the model is given: the transcript, and in code mode with the example
        as turns (``example_turns``) and a server connected the exchange (``CODE_EXAMPLE``)
        after its system prompt (with no server, a made-up server's call is only a wrong
        lead). The example is not recorded: sessions, the UI and the judge see the
        conversation only."""
        if (self.actions.mode != "code" or not self.example_turns
                or not self.transcript or self.transcript[0].role != "system"
                or not self.bridge.catalog.servers()):
            return self.transcript
        return [self.transcript[0], *CODE_EXAMPLE, *self.transcript[1:]]

    def _append(self, message: ChatMessage) -> ev.MessageAppended:
        self.transcript.append(message)
        return ev.MessageAppended(position=len(self.transcript) - 1, role=message.role,
                                  content=message.content, tool_call_id=message.tool_call_id,
                                  tool_calls=message.tool_calls)

    def _query(self, step: int, turn: Turn,
               tally: Tally) -> Generator[ev.AgentEvent, None, str]:
        """One model call, streamed, ended early where the action format says the reply
        is complete (code: the end of the first block)."""
        grammar = (self.actions.next_grammar(last=step >= self.limits.max_steps)
                   if self.limits.code_after_error and self.model.info.grammar else None)
        params = GenerationParams(max_tokens=self.limits.max_tokens, grammar=grammar,
                                  temperature=self.limits.temperature, tools=self.actions.tools)
        # Our own stop, also set by the user's cancel and by the turn's deadline.
        stop = turn.interrupt()
        text, result = "", None
        for event in self.model.stream(self.model_view(), params, stop):
            if isinstance(event, Delta):
                text += event.text
                yield ev.ModelDelta(step=step, text=event.text)
                if (end := self.actions.stop_at(text)) is not None:
                    text = text[:end]
                    stop.set()
            elif isinstance(event, Finished):
                result = event
        assert result is not None
        cut = result.finish_reason == "cancelled" and (turn.cancel.is_set() or stop.expired)
        reason = "cancelled" if cut else (
            "stop" if result.finish_reason == "cancelled" else result.finish_reason)
        yield ev.ModelMessage(step=step, text=text, finish_reason=reason, usage=result.usage)
        tally.add(result.usage)
        if reason == "cancelled":
            raise Stop("cancelled" if turn.cancel.is_set() else "timeout")
        return text

