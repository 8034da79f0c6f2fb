"""The eager baseline: every tool's JSON schema through the chat template's native tool
calling, and ``<tool_call>`` JSON parsed back out of the reply (Qwen/Hermes format).

It exists to measure what code orchestration with iterative loading saves, and for
models trained for native tool calls.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from deskmate.tools.catalog import Catalog
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


def _bare_calls(text: str, names: dict[str, ToolSpec]) -> list[str]:
    """Small models often drop the ``<tool_call>`` tags and write the JSON alone (or in a
    ```json fence): take a reply that is only such objects, each naming a known tool."""
    body = _FENCED.sub(r"\1", text).strip()
    raws = [line.strip() for line in body.splitlines() if line.strip()]
    if len(raws) > 1 and not all(r.startswith("{") for r in raws):
        raws = [body]  # one object over several lines
    for raw in raws:
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:
            return []
        if not (isinstance(data, dict) and data.get("name") in names):
            return []
    return raws


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
