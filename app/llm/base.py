"""The contract between deskmate and a language model.

Everything above this line (agent loop, CLI, TUI, judge, RL rollouts) talks to a
``ChatModel``; llama.cpp in-process and OpenAI-compatible servers sit below it.
A call streams ``Delta`` events and ends with exactly one ``Finished`` that carries
the whole text and the usage figures, whatever ended it (stop, length, cancel).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "length", "cancelled"]


class ModelError(Exception):
    """A model could not be loaded or could not answer; the message tells what to do."""


@dataclass(frozen=True)
class ChatMessage:
    role: Role
    content: str
    # Native tool calling (eager mode): OpenAI-shaped tool calls of an assistant
    # message, and the id a tool message answers.
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = list(self.tool_calls)
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        return out

    def for_template(self, template: str) -> dict[str, Any]:
        """This message as a Jinja chat template takes it: tool-call arguments as objects
        (templates write them with ``tojson``), and for a template that knows no tool
        calls, the calls written into the content in the Hermes format the model reads."""
        out = self.to_openai()
        if not self.tool_calls:
            return out
        calls = [{**c, "function": {**c["function"],
                                    "arguments": _json_object(c["function"]["arguments"])}}
                 for c in self.tool_calls]
        if "tool_calls" in template:
            out["tool_calls"] = calls
            return out
        del out["tool_calls"]
        written = [json.dumps({"name": c["function"]["name"],
                               "arguments": c["function"]["arguments"]}, ensure_ascii=False)
                   for c in calls]
        out["content"] = "\n".join([self.content] * bool(self.content) + [
            f"<tool_call>\n{w}\n</tool_call>" for w in written])
        return out


def _json_object(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except json.JSONDecodeError:
            return {}
    return arguments


@dataclass(frozen=True)
class GenerationParams:
    max_tokens: int = 1024
    temperature: float = 0.2
    top_p: float = 0.95
    seed: int | None = None
    stop: tuple[str, ...] = ()
    # At most one of these constrains the output: a GBNF grammar, or a JSON Schema.
    grammar: str | None = None
    json_schema: dict[str, Any] | None = None
    # OpenAI-shaped tool definitions rendered by the chat template (eager mode).
    tools: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    # Prompt tokens whose KV entries were already in the cache, and the rest, which
    # the model had to evaluate. None when a backend cannot tell.
    reused_tokens: int | None = None
    evaluated_tokens: int | None = None
    completion_tokens: int = 0
    ttft_s: float = 0.0  # call start to first generated token
    decode_tps: float = 0.0  # generated tokens per second after the first
    total_s: float = 0.0


@dataclass(frozen=True)
class Delta:
    text: str


@dataclass(frozen=True)
class Finished:
    text: str
    finish_reason: FinishReason
    usage: Usage = field(default_factory=Usage)


StreamEvent = Delta | Finished


@dataclass(frozen=True)
class ModelInfo:
    name: str
    backend: str
    context_size: int
    architecture: str = ""
    path: str = ""
    adapter: str = ""
    gpu_offload: bool = False
    # Where the layers run, for builds that can offload ("GPU 37/37 layers"); "" on a
    # CPU-only build, where there is no choice to show.
    placement: str = ""
    # The model's weight count (llama.cpp reads it from the file); 0 where the backend
    # cannot tell (a server). The agent picks its example's form by it (example = "auto").
    parameters: int = 0
    # The backend takes a GBNF grammar for a reply (llama.cpp in-process). A server may
    # reject an unknown "grammar" field, so the agent constrains replies only where true.
    grammar: bool = False


@runtime_checkable
class ChatModel(Protocol):
    info: ModelInfo

    def stream(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams = GenerationParams(),
        cancel: threading.Event | None = None,
    ) -> Iterator[StreamEvent]:
        """Stream a reply; setting ``cancel`` ends it early with finish_reason 'cancelled'."""
        ...

    def close(self) -> None: ...


def complete(
    model: ChatModel,
    messages: Sequence[ChatMessage],
    params: GenerationParams = GenerationParams(),
    cancel: threading.Event | None = None,
) -> Finished:
    """Run ``stream`` to the end and return its ``Finished`` event."""
    for event in model.stream(messages, params, cancel):
        if isinstance(event, Finished):
            return event
    raise ModelError(f"{model.info.name}: the stream ended without a result")


class TokenClock:
    """Measures time to first token and decode rate for one call."""

    def __init__(self, now: float) -> None:
        self.start = now
        self.first: float | None = None
        self.last = now
        self.tokens = 0

    def tick(self, now: float, tokens: int = 1) -> None:
        if self.first is None:
            self.first = now
        self.last = now
        self.tokens += tokens

    def usage(self, now: float, **counts: int) -> Usage:
        ttft = (self.first - self.start) if self.first is not None else 0.0
        decode_s = self.last - self.first if self.first is not None else 0.0
        tps = (self.tokens - 1) / decode_s if self.tokens > 1 and decode_s > 0 else 0.0
        return Usage(completion_tokens=self.tokens, ttft_s=ttft, decode_tps=tps,
                     total_s=now - self.start, **counts)
