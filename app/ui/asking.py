"""A server's question during a tool call (MCP elicitation): what the agent's side
holds while the user answers.

``UiAsker`` runs on a hub worker thread: it posts ``QuestionAsked`` to the app and
blocks until the dialog (``app.ui.elicit``) answers, the turn is cancelled (cancel) or
the question has waited ``timeout`` seconds (cancel). Whichever comes first settles the
``PendingQuestion``; the dialog watches it and closes itself when it was settled
elsewhere. Nothing here loads the dialog or the MCP side: the app creates an asker at
start-up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from deskmate.tools.hub.elicitation import ElicitAnswer, ElicitRequest

TIMEOUT_S = 300.0  # how long a question waits for the user before it is cancelled


@dataclass
class PendingQuestion:
    """A server's question on its way to the user; the first ``settle`` wins."""

    request: ElicitRequest
    timeout: float  # seconds it waits for an answer
    answer: ElicitAnswer | None = None
    done: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    deadline: float = field(init=False)  # time.monotonic() when it is cancelled unanswered

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.timeout

    def settle(self, answer: ElicitAnswer) -> bool:
        with self._lock:
            if self.done.is_set():
                return False
            self.answer = answer
            self.done.set()
            return True


class QuestionAsked(Message):
    def __init__(self, pending: PendingQuestion) -> None:
        self.pending = pending
        super().__init__()


class UiAsker:
    """``tools.hub.elicitation.Asker`` for the app (called from a hub worker thread)."""

    def __init__(self, post: Callable[[Message], object], timeout: float = TIMEOUT_S) -> None:
        self._post = post
        self.timeout = timeout
        self.cancel: threading.Event = threading.Event()  # the running turn's cancel

    def __call__(self, request: ElicitRequest) -> ElicitAnswer:
        from deskmate.tools.hub.elicitation import ElicitAnswer

        pending = PendingQuestion(request, self.timeout)
        self._post(QuestionAsked(pending))
        while not pending.done.wait(0.1):
            if self.cancel.is_set():
                pending.settle(ElicitAnswer("cancel", decided_by="policy",
                                            reason="the turn was cancelled"))
            elif time.monotonic() > pending.deadline:
                pending.settle(ElicitAnswer("cancel", decided_by="policy",
                                            reason=f"no answer within {self.timeout:g} s"))
        assert pending.answer is not None
        return pending.answer
