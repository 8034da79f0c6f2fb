"""Typed messages that thread workers post to the UI (they never touch widgets)."""

from __future__ import annotations

from textual.message import Message

from app.llm.base import ChatModel, Finished


class ModelReady(Message):
    def __init__(self, model: ChatModel) -> None:
        self.model = model
        super().__init__()


class ModelFailed(Message):
    def __init__(self, error: str, first_run: bool = False) -> None:
        self.error = error
        self.first_run = first_run
        super().__init__()


class ReplyDelta(Message, bubble=False):
    """A piece of the reply; handled by the ChatView that runs the generation."""

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__()


class ReplyDone(Message, bubble=False):
    def __init__(self, result: Finished) -> None:
        self.result = result
        super().__init__()
