"""A deterministic ChatModel that plays back prepared replies (for tests and benchmarks).

Each reply is a string, or a function of the messages so far that returns one, so a
script can react to what the tools answered. Replies stream in small chunks, like a
real model, and report usage computed from the text (four characters a token).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence

from deskmate.app.llm.base import (
    ChatMessage,
    Delta,
    Finished,
    GenerationParams,
    ModelError,
    ModelInfo,
    StreamEvent,
    Usage,
)

Reply = str | Callable[[list[ChatMessage]], str]


class ScriptedModel:
    def __init__(self, replies: Sequence[Reply], *, chunk: int = 6,
                 name: str = "scripted", parameters: int = 0, grammar: bool = False) -> None:
        self.replies = list(replies)
        self.chunk = chunk
        self.calls: list[list[ChatMessage]] = []
        self.params: list[GenerationParams] = []
        self.info = ModelInfo(name=name, backend="scripted", context_size=32768,
                              parameters=parameters, grammar=grammar)
        self._seen_chars = 0

    def stream(self, messages: Sequence[ChatMessage],
               params: GenerationParams = GenerationParams(),
               cancel: threading.Event | None = None) -> Iterator[StreamEvent]:
        messages = list(messages)
        if len(self.calls) >= len(self.replies):
            raise ModelError(f"scripted model has no reply #{len(self.calls) + 1}")
        reply = self.replies[len(self.calls)]
        self.calls.append(messages)
        self.params.append(params)
        text = reply(messages) if callable(reply) else reply
        prompt_chars = sum(len(m.content) for m in messages)
        reused = min(self._seen_chars, prompt_chars)
        out = []
        for start in range(0, len(text), self.chunk):
            if cancel is not None and cancel.is_set():
                yield Finished("".join(out), "cancelled", self._usage(prompt_chars, reused, out))
                return
            piece = text[start : start + self.chunk]
            out.append(piece)
            yield Delta(piece)
        self._seen_chars = prompt_chars + len(text)
        yield Finished(text, "stop", self._usage(prompt_chars, reused, out))

    @staticmethod
    def _usage(prompt_chars: int, reused_chars: int, out: list[str]) -> Usage:
        prompt = prompt_chars // 4
        reused = reused_chars // 4
        return Usage(prompt_tokens=prompt, reused_tokens=reused, evaluated_tokens=prompt - reused,
                     completion_tokens=len("".join(out)) // 4 + 1)

    def close(self) -> None:
        pass
