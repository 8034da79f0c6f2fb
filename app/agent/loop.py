"""``Agent``: the loop. Query the model, run its code, show it the output, repeat.

``run(task)`` is a plain generator of typed events (app/agent/events.py) used as is by
the CLI, the TUI, the recorder and RL rollouts. The transcript is append-only and
exactly what the model saw, so llama.cpp reuses its KV cache for the whole prefix and
the stored session is training data as it is.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from queue import Empty, Queue
from typing import Any

from deskmate.app.agent import events as ev
from deskmate.app.agent.bridge import BridgeError, ToolBridge, new_call_id
from deskmate.app.agent.eager import EagerCall, openai_call, parse_tool_calls, prose, tool_schemas
from deskmate.app.agent.parse import (
    OUTPUT_PREFIX,
    CodeAction,
    FinalAnswer,
    Malformed,
    closed_code_block,
    is_feedback,
    parse_reply,
)
from deskmate.app.llm.base import (
    ChatMessage,
    ChatModel,
    Delta,
    Finished,
    GenerationParams,
    ModelError,
)
from deskmate.tools.sandbox import SandboxError
from deskmate.tools.sandbox.capture import truncate_middle as truncate


@dataclass(frozen=True)
class AgentLimits:
    max_steps: int = 12  # model calls per turn
    max_tool_calls: int = 30  # per turn
    wall_s: float = 600.0  # per turn
    observation_chars: int = 4000  # what one cell's output may add to the context
    max_tokens: int = 1024  # per model reply
    temperature: float = 0.2
    repeat_code: int = 3  # the same cell this many times in a turn ends it


class _EitherEvent(threading.Event):
    """Set by us, by the user's cancel event, or by the turn's deadline passing.

    Model streams, cells and tool calls all poll ``is_set``, so one long call cannot
    overrun the turn's wall time."""

    def __init__(self, other: threading.Event, deadline: float = math.inf) -> None:
        super().__init__()
        self._other = other
        self._deadline = deadline

    @property
    def expired(self) -> bool:
        return time.perf_counter() > self._deadline

    def is_set(self) -> bool:
        return super().is_set() or self._other.is_set() or self.expired


class _Stop(Exception):
    def __init__(self, status: ev.TurnStatus) -> None:
        self.status = status


class Agent:
    def __init__(self, model: ChatModel, *, system_prompt: str, sandbox: Any = None,
                 bridge: ToolBridge | None = None, mode: str = "code",
                 limits: AgentLimits = AgentLimits(),
                 transcript: list[ChatMessage] | None = None) -> None:
        if mode == "code" and sandbox is None:
            raise ValueError("code mode needs a sandbox")
        if mode == "eager" and bridge is None:
            raise ValueError("eager mode needs a tool bridge")
        self.model, self.sandbox, self.bridge = model, sandbox, bridge
        self.mode, self.limits = mode, limits
        self.system_prompt = system_prompt
        self.transcript: list[ChatMessage] = list(transcript or [])
        # Code mode shows the model its cells' output as user messages: not turns.
        self.turns = sum(1 for m in self.transcript
                         if m.role == "user" and not is_feedback(m.content))
        self._tools = tuple(tool_schemas(bridge.catalog)) if mode == "eager" and bridge else ()
        self._events: Queue[ev.AgentEvent] = Queue()
        self._deadline = math.inf  # of the running turn, on time.perf_counter()
        if bridge is not None:
            bridge.emit = self._events.put
            bridge.max_tool_calls = limits.max_tool_calls

    # ---------------------------------------------------------------- the turn

    def run(self, task: str, cancel: threading.Event | None = None) -> Iterator[ev.AgentEvent]:
        cancel = cancel or threading.Event()
        started = time.perf_counter()
        self._deadline = started + self.limits.wall_s
        self.turns += 1
        counts = Counter()
        yield ev.TurnStarted(turn=self.turns, user_message=task)
        if not self.transcript:
            yield self._append(ChatMessage("system", self.system_prompt))
        yield self._append(ChatMessage("user", task))
        if self.bridge is not None:
            self.bridge.new_turn(_EitherEvent(cancel, self._deadline))
        status: ev.TurnStatus = "max_steps"
        codes: Counter[str] = Counter()
        try:
            for step in range(1, self.limits.max_steps + 1):
                self._check(cancel, started)
                counts["steps"] = step
                if self.bridge is not None:
                    self.bridge.step = step
                text, result = yield from self._generate(step, cancel)
                counts["model_calls"] += 1
                counts["prompt_tokens"] += result.usage.prompt_tokens
                counts["completion_tokens"] += result.usage.completion_tokens
                if result.finish_reason == "cancelled":
                    raise _Stop("cancelled" if cancel.is_set() else "timeout")
                if self.mode == "eager":
                    done = yield from self._eager_step(step, text, cancel, counts)
                else:
                    done = yield from self._code_step(step, text, cancel, codes)
                if done:
                    status = "answered"
                    break
                if self.bridge is not None and self.bridge.limit_reached:
                    raise _Stop("max_tool_calls")
        except _Stop as stop:
            status = stop.status
        except ModelError as exc:
            status = "error"
            yield ev.AgentError(message=str(exc), kind="model")
        except SandboxError as exc:  # the worker could not be (re)started
            status = "error"
            yield ev.AgentError(message=f"the Python sandbox failed: {exc}", kind="sandbox")
        if self.bridge is not None:
            counts["tool_calls"] = self.bridge.calls
        yield ev.TurnFinished(
            turn=self.turns, status=status, steps=counts["steps"],
            model_calls=counts["model_calls"], tool_calls=counts["tool_calls"],
            prompt_tokens=counts["prompt_tokens"],
            completion_tokens=counts["completion_tokens"],
            wall_s=time.perf_counter() - started)

    def _check(self, cancel: threading.Event, started: float) -> None:
        if cancel.is_set():
            raise _Stop("cancelled")
        if time.perf_counter() - started > self.limits.wall_s:
            raise _Stop("timeout")

    def _append(self, message: ChatMessage) -> ev.MessageAppended:
        self.transcript.append(message)
        return ev.MessageAppended(position=len(self.transcript) - 1, role=message.role,
                                  content=message.content, tool_call_id=message.tool_call_id,
                                  tool_calls=message.tool_calls)

    def _generate(self, step: int, cancel: threading.Event):
        """One model call, streamed; in code mode it stops at the end of the first block."""
        params = GenerationParams(max_tokens=self.limits.max_tokens,
                                  temperature=self.limits.temperature, tools=self._tools)
        # Our own stop, also set by the user's cancel: we end the stream ourselves once
        # the code block is complete, so the model cannot invent the block's output.
        stop = _EitherEvent(cancel, self._deadline)
        text, result = "", None
        for event in self.model.stream(self.transcript, params, stop):
            if isinstance(event, Delta):
                text += event.text
                yield ev.ModelDelta(step=step, text=event.text)
                if self.mode == "code" and (end := closed_code_block(text)) is not None:
                    text = text[:end]
                    stop.set()
            elif isinstance(event, Finished):
                result = event
        assert result is not None
        cut = result.finish_reason == "cancelled" and (cancel.is_set() or stop.expired)
        reason = "cancelled" if cut else (
            "stop" if result.finish_reason == "cancelled" else result.finish_reason)
        yield ev.ModelMessage(step=step, text=text, finish_reason=reason, usage=result.usage)
        return text, Finished(text, reason, result.usage)

    # ---------------------------------------------------------------- code mode

    def _code_step(self, step: int, text: str, cancel: threading.Event, codes: Counter):
        yield self._append(ChatMessage("assistant", text))
        parsed = parse_reply(text)
        if isinstance(parsed, FinalAnswer):
            yield ev.FinalAnswer(step=step, text=parsed.text)
            return True
        if isinstance(parsed, Malformed):
            yield ev.Observation(step=step, content=parsed.correction, status="error",
                                 duration_s=0.0)
            yield self._append(ChatMessage("user", parsed.correction))
            return False
        assert isinstance(parsed, CodeAction)
        yield ev.CodeAction(step=step, thought=parsed.thought, code=parsed.code)
        codes[parsed.code.strip()] += 1
        if codes[parsed.code.strip()] >= self.limits.repeat_code:
            raise _Stop("repetition")
        result = yield from self._execute(parsed.code, cancel)
        content = self._observation(result)
        yield ev.Observation(step=step, content=content, status=result.status,
                             duration_s=result.duration_s)
        yield self._append(ChatMessage("user", content))
        if cancel.is_set():
            raise _Stop("cancelled")
        return False

    def _execute(self, code: str, cancel: threading.Event):
        # A cell gets the time left in the turn at most; its status is then "timeout".
        limits = getattr(self.sandbox, "limits", None)
        left = max(0.1, self._deadline - time.perf_counter())
        timeout = min(limits.cell_timeout_s, left) if limits is not None else left
        return (yield from self._in_thread(self.sandbox.execute, code, timeout=timeout,
                                           cancel=_EitherEvent(cancel, self._deadline)))

    def _in_thread(self, fn: Any, *args: Any, **kwargs: Any):
        """Run ``fn`` in a helper thread, passing on the bridge's events as they happen
        (tool calls report from that thread); return its result or raise its error."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-work") as pool:
            future = pool.submit(fn, *args, **kwargs)
            while True:
                done = future.done()  # read first: events queued before it must pass
                while True:
                    try:
                        yield self._events.get(timeout=0.02 if not done else 0)
                    except Empty:
                        break
                if done:
                    return future.result()

    def _observation(self, result: Any) -> str:
        parts = []
        if result.stdout:
            parts.append(result.stdout.rstrip())
        if result.value is not None:
            parts.append(result.value)
        if result.error:
            parts.append(f"Error: {result.error.rstrip()}")
        if result.state_lost:
            parts.append("(The Python session was restarted: earlier variables are gone.)")
        if not parts:
            parts.append("(no output — print() what you need to see)")
        return OUTPUT_PREFIX + truncate("\n".join(parts), self.limits.observation_chars)

    # ---------------------------------------------------------------- eager mode

    def _eager_step(self, step: int, text: str, cancel: threading.Event, counts: Counter):
        assert self.bridge is not None
        catalog = self.bridge.catalog
        calls = parse_tool_calls(text, catalog)
        if not calls:
            yield self._append(ChatMessage("assistant", text))
            yield ev.FinalAnswer(step=step, text=text.strip())
            return True
        # OpenAI's shape: the calls ride on the assistant message, each tool message
        # answers one by id, and the bridge records each call under the same id.
        ids = [new_call_id() for _ in calls]
        yield self._append(ChatMessage("assistant", prose(text), tool_calls=tuple(
            openai_call(call_id, call, catalog) for call_id, call in zip(ids, calls,
                                                                          strict=True))))
        for call_id, call in zip(ids, calls, strict=True):
            if isinstance(call, EagerCall):
                started = time.perf_counter()
                content = yield from self._eager_call(call, call_id, cancel)
                duration = time.perf_counter() - started
            else:
                content, duration = f"Error: {call.message}", 0.0
            status = "error" if content.startswith("Error:") else "ok"
            content = truncate(content, self.limits.observation_chars)
            yield ev.Observation(step=step, content=content, status=status, duration_s=duration)
            yield self._append(ChatMessage("tool", content, tool_call_id=call_id))
            if cancel.is_set():
                raise _Stop("cancelled")
        return False

    def _eager_call(self, call: EagerCall, call_id: str, cancel: threading.Event):
        assert self.bridge is not None
        try:
            value = yield from self._in_thread(self.bridge.call_json, call.server, call.tool,
                                               call.arguments, call_id=call_id)
        except BridgeError as exc:
            return f"Error: {exc}"
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
