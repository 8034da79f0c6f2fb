"""What a running tool call tells the turn: its progress, and the server's questions.

The bridge hands the hub one ``CallHooks`` per call, made here: progress becomes a
``ToolProgress`` event, and a question from the server (an MCP elicitation) is put to
the front end's asker between an ``ElicitationAsked`` and an ``ElicitationAnswered``
event, so the transcript shows it and the session records it, like an approval. With
no asker (headless runs, eval, training) every question is declined.
"""

from __future__ import annotations

from collections.abc import Callable

from deskmate.app.agent.events import (
    AgentEvent,
    ElicitationAnswered,
    ElicitationAsked,
    ToolProgress,
)
from deskmate.tools.hub.calls import CallHooks, Progress
from deskmate.tools.hub.elicitation import Asker, ElicitAnswer, ElicitRequest, decline


def call_hooks(emit: Callable[[AgentEvent], None], asker: Asker | None,
               call_id: str) -> CallHooks:
    """The hooks of the call ``call_id``, reporting through ``emit``."""

    def on_progress(news: Progress) -> None:
        emit(ToolProgress(call_id=call_id, progress=news.progress, total=news.total,
                          message=news.message))

    def ask(request: ElicitRequest) -> ElicitAnswer:
        emit(ElicitationAsked(call_id=call_id, server=request.server, tool=request.tool,
                              mode=request.mode, message=request.message,
                              schema=dict(request.schema), url=request.url))
        try:
            answer = (asker or decline)(request)
        except Exception as exc:  # a broken front end must not leave the server waiting
            answer = ElicitAnswer("cancel", decided_by="policy",
                                  reason=f"the question could not be shown: {exc}")
        emit(ElicitationAnswered(call_id=call_id, action=answer.action,
                                 content=dict(answer.content), decided_by=answer.decided_by,
                                 reason=answer.reason))
        return answer

    return CallHooks(on_progress=on_progress, asker=ask)
