"""What a running tool call tells the turn: its progress, and the server's questions.

The bridge makes one ``CallNews`` per call and hands its ``hooks`` to the hub: progress
becomes a ``ToolProgress`` event, and a question from the server (an MCP elicitation)
is put to the front end's asker between an ``ElicitationAsked`` and an
``ElicitationAnswered`` event, so the transcript shows it and the session records it,
like an approval. With no asker (headless runs, eval, training) every question is
declined.

The bridge closes the news when the call ends. A question still open then (the turn
was cancelled and the call given up) is answered "cancel" at once, so its events stay
inside the call's: the asker's own late answer is not reported.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from deskmate.app.agent.events import (
    AgentEvent,
    ElicitationAnswered,
    ElicitationAsked,
    ToolProgress,
)
from deskmate.tools.hub.calls import CallHooks, Progress
from deskmate.tools.hub.elicitation import Asker, ElicitAnswer, ElicitRequest, decline


class CallNews:
    def __init__(self, emit: Callable[[AgentEvent], None], asker: Asker | None,
                 call_id: str, cancel: threading.Event | None = None) -> None:
        self._emit, self._asker, self.call_id = emit, asker or decline, call_id
        self._cancel = cancel  # the turn's: says why a call ended with a question open
        self._lock = threading.Lock()
        self._open = 0  # questions asked and not yet answered
        self._closed = False
        self.hooks = CallHooks(on_progress=self._progress, asker=self._ask)

    def close(self) -> None:
        """The call is over: nothing more is reported; open questions end cancelled."""
        reason = ("the turn was cancelled" if self._cancel is not None and self._cancel.is_set()
                  else "the call ended before an answer")
        with self._lock:
            self._closed = True
            for _ in range(self._open):
                self._emit(ElicitationAnswered(call_id=self.call_id, action="cancel",
                                               decided_by="policy", reason=reason))
            self._open = 0

    def _progress(self, news: Progress) -> None:
        with self._lock:
            if not self._closed:
                self._emit(ToolProgress(call_id=self.call_id, progress=news.progress,
                                        total=news.total, message=news.message))

    def _ask(self, request: ElicitRequest) -> ElicitAnswer:
        with self._lock:
            if self._closed:
                return ElicitAnswer("cancel", decided_by="policy", reason="the call had ended")
            self._open += 1
            self._emit(ElicitationAsked(call_id=self.call_id, server=request.server,
                                        tool=request.tool, mode=request.mode,
                                        message=request.message, schema=dict(request.schema),
                                        url=request.url))
        try:
            answer = self._asker(request)
        except Exception as exc:  # a broken front end must not leave the server waiting
            answer = ElicitAnswer("cancel", decided_by="policy",
                                  reason=f"the question could not be shown: {exc}")
        with self._lock:
            if not self._closed:
                self._open -= 1
                self._emit(ElicitationAnswered(call_id=self.call_id, action=answer.action,
                                               content=dict(answer.content),
                                               decided_by=answer.decided_by,
                                               reason=answer.reason))
        return answer
