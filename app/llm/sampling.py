"""The local model answering a server's approved sampling request (MCP sampling).

``ModelGenerate`` is the ``tools.hub.sampling.Generate`` of the app and ``deskmate run``:
it reads the loaded model when the request comes (the app loads it after the hub may
have started), and stops with the turn's cancel event. The model's own lock keeps it to
one generation at a time; during a tool call the agent's turn is waiting, not writing.
The request replaces the turn's prompt in the model's KV cache, so the turn's next step
evaluates its prompt again (the cache matches by token prefix: slower, never wrong).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from deskmate.app.llm.base import ChatMessage, ChatModel, GenerationParams, ModelError, complete
from deskmate.tools.hub.sampling import Sample, SampleRequest, stop_reason


class ModelGenerate:
    def __init__(self, model: Callable[[], ChatModel | None],
                 cancel: Callable[[], threading.Event | None] = lambda: None) -> None:
        self._model = model
        self._cancel = cancel

    def __call__(self, request: SampleRequest, max_tokens: int) -> Sample:
        model = self._model()
        if model is None:
            raise ModelError("no model is loaded yet")
        messages = [ChatMessage("system", request.system_prompt)] if request.system_prompt else []
        messages += [ChatMessage(m.role, m.text) for m in request.messages]
        temperature = (GenerationParams().temperature if request.temperature is None
                       else request.temperature)
        params = GenerationParams(max_tokens=max_tokens, temperature=temperature,
                                  stop=request.stop)
        finished = complete(model, messages, params, self._cancel())
        if finished.finish_reason == "cancelled":
            raise ModelError("the turn was cancelled")
        return Sample(finished.text, model.info.name, stop_reason(finished.finish_reason))
