"""Eager actions, the baseline: every tool's JSON schema through the chat template's
native tool calling, and ``<tool_call>`` JSON parsed back out of the reply (Qwen/Hermes
format). Each call goes through the bridge; each result comes back as a tool message.

It exists to measure what code orchestration with iterative loading saves, and for
models trained for native tool calls.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from deskmate.app.agent import events as ev
from deskmate.app.agent.actions import Turn
from deskmate.app.agent.bridge import BridgeError, ToolBridge, new_call_id
from deskmate.app.agent.modes import Mode
from deskmate.app.agent.parse import EMPTY_ANSWER
from deskmate.app.llm.base import ChatMessage
from deskmate.tools.catalog import Catalog
from deskmate.tools.sandbox.capture import truncate_middle as truncate
from deskmate.tools.spec import ToolSpec

_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_FENCED = re.compile(r"^\s*```(?:json)?\s*\n(.*?)\n\s*```\s*$", re.S)
SEPARATOR = "__"  # server__tool: function names allow only [A-Za-z0-9_-]


@dataclass(frozen=True)
class EagerCall:
    server: str
    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class EagerParseError:
    message: str
    name: str = ""  # the function the model named, when it named one
    arguments: dict[str, Any] = field(default_factory=dict)


def function_name(spec: ToolSpec) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{spec.server}{SEPARATOR}{spec.name}")[:64]


def tool_schemas(catalog: Catalog) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {
        "name": function_name(spec), "description": spec.description,
        "parameters": spec.input_schema or {"type": "object", "properties": {}}}}
        for spec in catalog]


# What a small model adds to a call it reports rather than makes (after the tool's
# answer came back: {"name": …, "arguments": …, "result": "The sum … is 138290."}).
RESULT_KEYS = ("result", "output", "response")


def _bare_objects(text: str) -> list[tuple[str, Any]]:
    """The reply as JSON objects written without the ``<tool_call>`` tags (alone, one a
    line, or in a ```json fence), each with its text; [] when it is anything else."""
    body = _FENCED.sub(r"\1", text).strip()
    raws = [line.strip() for line in body.splitlines() if line.strip()]
    if len(raws) > 1 and not all(r.startswith("{") for r in raws):
        raws = [body]  # one object over several lines
    objects = []
    for raw in raws:
        try:
            objects.append((raw, json.loads(raw)))
        except json.JSONDecodeError:
            return []
    return objects


def _bare_calls(text: str, names: dict[str, ToolSpec]) -> list[str]:
    """Small models often drop the ``<tool_call>`` tags and write the JSON alone (or in a
    ```json fence): take a reply that is only such objects, each naming a known tool and
    none reporting a result."""
    objects = _bare_objects(text)
    if not all(isinstance(data, dict) and data.get("name") in names
               and not any(key in data for key in RESULT_KEYS) for _, data in objects):
        return []
    return [raw for raw, _ in objects]


def reported_result(text: str) -> str | None:
    """The result a reply reports in a call's JSON (the tool already answered, and the
    model wrote the call again with what it returned), as the answer's text."""
    objects = _bare_objects(text)
    results = [data[key] for _, data in objects if isinstance(data, dict)
               for key in RESULT_KEYS if key in data]
    if not results:
        return None
    return "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)
                     for r in results)


def parse_tool_calls(text: str, catalog: Catalog) -> list[EagerCall | EagerParseError]:
    names = {function_name(spec): spec for spec in catalog}
    calls: list[EagerCall | EagerParseError] = []
    for raw in _CALL.findall(text) or _bare_calls(text, names):
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            calls.append(EagerParseError(f"the <tool_call> is not valid JSON ({exc.msg}); "
                                         'write {"name": ..., "arguments": {...}}'))
            continue
        name = data.get("name", "") if isinstance(data, dict) else ""
        name = name if isinstance(name, str) else ""
        arguments = data.get("arguments") or {} if isinstance(data, dict) else {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                calls.append(EagerParseError(f"arguments of {name} are not a JSON object",
                                             name))
                continue
        spec = names.get(name)
        if spec is None:
            calls.append(EagerParseError(f"there is no tool named {name!r}", name,
                                         arguments if isinstance(arguments, dict) else {}))
            continue
        calls.append(EagerCall(spec.server, spec.name, arguments))
    return calls


def prose(text: str) -> str:
    """A reply with tool calls, without them (they go into the message's ``tool_calls``);
    a reply of bare calls is all calls."""
    return _CALL.sub("", text).strip() if _CALL.search(text) else ""


def openai_call(call_id: str, call: EagerCall | EagerParseError,
                catalog: Catalog) -> dict[str, Any]:
    """An OpenAI-shaped tool call; ``arguments`` is JSON text, as OpenAI sends it."""
    if isinstance(call, EagerCall):
        name, arguments = function_name(catalog.get(call.server, call.tool)), call.arguments
    else:
        name, arguments = call.name, call.arguments
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}


class EagerActions:
    mode: Mode = "eager"

    def __init__(self, bridge: ToolBridge) -> None:
        self.bridge = bridge
        self.tools: tuple[dict[str, Any], ...] = tuple(tool_schemas(bridge.catalog))
        self._empty_said = False  # an empty reply was answered with EMPTY_ANSWER this turn

    def stop_at(self, reply: str) -> int | None:
        return None  # a reply may hold several calls: let the model finish

    def new_turn(self) -> None:
        # (the bridge guards eager calls; it starts each turn afresh itself)
        self._empty_said = False

    def next_grammar(self, last: bool = False) -> str | None:
        return None  # a reply is prose or calls, in the template's own format

    def looked(self, calls: Sequence[str]) -> None:
        pass  # (the first look is code mode's)

    def act(self, step: int, reply: str, turn: Turn) -> Generator[ev.AgentEvent, None, bool]:
        catalog = self.bridge.catalog
        calls = parse_tool_calls(reply, catalog)
        if not calls:
            yield turn.append(ChatMessage("assistant", reply))
            if not reply.strip() and not self._empty_said:
                self._empty_said = True
                yield ev.Observation(step=step, content=EMPTY_ANSWER, status="error",
                                     duration_s=0.0)
                yield turn.append(ChatMessage("user", EMPTY_ANSWER))
                return False
            reported = reported_result(reply)
            yield ev.FinalAnswer(step=step, text=reply.strip() if reported is None
                                 else reported)
            return True
        # OpenAI's shape: the calls ride on the assistant message, each tool message
        # answers one by id, and the bridge records each call under the same id.
        ids = [new_call_id() for _ in calls]
        yield turn.append(ChatMessage("assistant", prose(reply), tool_calls=tuple(
            openai_call(call_id, call, catalog) for call_id, call in zip(ids, calls,
                                                                          strict=True))))
        for call_id, call in zip(ids, calls, strict=True):
            if isinstance(call, EagerCall):
                started = time.perf_counter()
                content = yield from self._call(call, call_id, turn)
                duration = time.perf_counter() - started
            else:
                content, duration = f"Error: {call.message}", 0.0
            status = "error" if content.startswith("Error:") else "ok"
            content = truncate(content, turn.observation_chars)
            yield ev.Observation(step=step, content=content, status=status, duration_s=duration)
            yield turn.append(ChatMessage("tool", content, tool_call_id=call_id))
            turn.check_cancelled()
        return False

    def _call(self, call: EagerCall, call_id: str,
              turn: Turn) -> Generator[ev.AgentEvent, None, str]:
        try:
            value = yield from turn.in_thread(self.bridge.call_json, call.server, call.tool,
                                              call.arguments, call_id=call_id)
        except BridgeError as exc:
            return f"Error: {exc}"
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        last = self.bridge.turn.returned[-1] if self.bridge.turn.returned else None
        notes = [last.repaired, last.note] if last is not None else []
        return "\n".join([text, *filter(None, notes)])
