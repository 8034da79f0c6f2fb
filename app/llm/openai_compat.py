"""``OpenAICompatibleModel``: the ChatModel protocol over an OpenAI-style HTTP API.

For llama-server, vLLM, Ollama and the like — the way out when one machine is not
enough. Native tool calls the server returns are written into the text as Hermes
``<tool_call>`` blocks, so the agent parses one format whatever the backend.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import httpx

from deskmate.app.llm.base import (
    ChatMessage,
    Delta,
    Finished,
    GenerationParams,
    ModelError,
    ModelInfo,
    StreamEvent,
    TokenClock,
)


class OpenAICompatibleModel:
    def __init__(self, base_url: str, *, model: str = "", api_key: str = "",
                 timeout: float = 120.0, context: int = 0) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            headers=headers, timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))
        self.info = ModelInfo(name=model or self.base_url, backend="openai",
                              context_size=context, path=self.base_url)
        # How this server takes a JSON schema: OpenAI's "json_schema" (vLLM, llama-server,
        # Ollama) or llama-cpp-python's own {"type": "json_object", "schema": …}; learnt
        # from the first refusal.
        self._schema_style = "json_schema"

    def _payload(self, messages: Sequence[ChatMessage], params: GenerationParams) -> dict:
        body: dict[str, Any] = {
            "messages": [m.to_openai() for m in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
        }
        if self.model:
            body["model"] = self.model
        if params.seed is not None:
            body["seed"] = params.seed
        if params.stop:
            body["stop"] = list(params.stop)
        if params.tools:
            body["tools"] = list(params.tools)
        if params.json_schema is not None:
            body["response_format"] = (
                {"type": "json_object", "schema": params.json_schema}
                if self._schema_style == "json_object" else
                {"type": "json_schema", "json_schema": {
                    "name": "response", "schema": params.json_schema, "strict": True}})
        if params.grammar:
            body["grammar"] = params.grammar  # llama.cpp servers; others reject or ignore it
        return body

    def stream(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams = GenerationParams(),
        cancel: threading.Event | None = None,
    ) -> Iterator[StreamEvent]:
        cancel = cancel or threading.Event()
        clock = TokenClock(time.perf_counter())
        url = f"{self.base_url}/chat/completions"
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage: dict[str, Any] = {}
        finish = "stop"
        try:
            with self._request(url, messages, params) as resp:
                for chunk in _sse_json(resp.iter_lines()):
                    if cancel.is_set():
                        finish = "cancelled"
                        break
                    usage = _usage(chunk) or usage
                    for choice in chunk.get("choices") or []:
                        delta = choice.get("delta") or {}
                        if piece := delta.get("content"):
                            clock.tick(time.perf_counter())
                            text.append(piece)
                            yield Delta(piece)
                        for call in delta.get("tool_calls") or []:
                            clock.tick(time.perf_counter())
                            _merge_call(calls, call)
                        if choice.get("finish_reason") == "length":
                            finish = "length"
        except httpx.ConnectError as exc:
            raise ModelError(f"cannot reach the model server at {self.base_url} ({exc}): "
                             "start it, or fix [openai] base_url in the config") from exc
        except httpx.HTTPError as exc:
            raise ModelError(f"the model server at {self.base_url} failed: {exc}") from exc
        if calls:
            tail = "".join(_hermes(c) for _, c in sorted(calls.items()))
            text.append(tail)
            yield Delta(tail)
        if cancel.is_set():
            finish = "cancelled"
        counts = {"prompt_tokens": usage.get("prompt", 0),
                  "reused_tokens": usage.get("cached"),
                  "evaluated_tokens": usage.get("evaluated")}
        result = clock.usage(time.perf_counter(), **counts)
        if usage.get("completion"):
            result = replace(result, completion_tokens=usage["completion"])
        yield Finished("".join(text), finish, result)

    @contextmanager
    def _request(self, url: str, messages: Sequence[ChatMessage],
                 params: GenerationParams) -> Iterator[httpx.Response]:
        for attempt in range(2):
            with self._client.stream("POST", url, json=self._payload(messages, params)) as resp:
                if resp.status_code < 400:
                    yield resp
                    return
                body = resp.read().decode(errors="replace")
            refused_schema = (params.json_schema is not None and "json_object" in body
                              and self._schema_style == "json_schema")
            if attempt == 0 and refused_schema:
                self._schema_style = "json_object"  # llama-cpp-python's server
                continue
            raise ModelError(f"{url} answered HTTP {resp.status_code}: {body[:500]}")

    def close(self) -> None:
        self._client.close()


def _sse_json(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            yield json.loads(data)
        except json.JSONDecodeError:
            continue  # keep-alive noise from some proxies


def _usage(chunk: dict[str, Any]) -> dict[str, Any]:
    """Token counts from the OpenAI ``usage`` block or llama-server's ``timings``."""
    out: dict[str, Any] = {}
    if usage := chunk.get("usage"):
        out["prompt"] = usage.get("prompt_tokens", 0)
        out["completion"] = usage.get("completion_tokens", 0)
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
        if cached is not None:
            out["cached"] = cached
            out["evaluated"] = out["prompt"] - cached
    timings = chunk.get("timings") or {}
    if "cache_n" in timings and "prompt_n" in timings:
        out["cached"], out["evaluated"] = timings["cache_n"], timings["prompt_n"]
        out.setdefault("prompt", timings["cache_n"] + timings["prompt_n"])
    return out


def _merge_call(calls: dict[int, dict[str, str]], delta: dict[str, Any]) -> None:
    slot = calls.setdefault(delta.get("index", len(calls)), {"name": "", "arguments": ""})
    fn = delta.get("function") or {}
    slot["name"] += fn.get("name") or ""
    slot["arguments"] += fn.get("arguments") or ""


def _hermes(call: dict[str, str]) -> str:
    try:
        arguments = json.loads(call["arguments"] or "{}")
    except json.JSONDecodeError:
        arguments = call["arguments"]
    return ("<tool_call>\n" + json.dumps({"name": call["name"], "arguments": arguments})
            + "\n</tool_call>")
