"""Model runtime: the ChatModel protocol and its backends (llama.cpp, OpenAI-compatible).

Importing this package is cheap; llama_cpp loads only when a model is opened.
"""

from deskmate.app.llm.base import (
    ChatMessage,
    ChatModel,
    Delta,
    Finished,
    GenerationParams,
    ModelError,
    ModelInfo,
    StreamEvent,
    Usage,
    complete,
)
from deskmate.app.llm.factory import NoModelConfigured, open_model

__all__ = [
    "ChatMessage",
    "ChatModel",
    "Delta",
    "Finished",
    "GenerationParams",
    "ModelError",
    "ModelInfo",
    "NoModelConfigured",
    "StreamEvent",
    "Usage",
    "complete",
    "open_model",
]
