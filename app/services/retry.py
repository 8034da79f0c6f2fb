"""``/retry``: set the last answer aside and ask the same question again.

The agent's transcript loses the last turn (the user's message and all that followed),
so the model answers as if it had never answered. The store is append-only, so the
recorded session keeps that answer as it was, and the retry is recorded in a branch of
the session (``store.branch``): a new session holding the turns before it, titled
``retry: …``. Both the chat and the terminal chat go through ``set_aside_last_turn``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deskmate.app.services.conversation import Conversation


@dataclass(frozen=True)
class Retry:
    """The last turn, set aside: its message, to send again as the model saw it."""

    prompt: str  # the user message of the turn set aside, as the model read it
    kept_in: str | None  # the session that keeps the old answer (None: not recorded)
    branch: str | None  # the session the retry is recorded in


def set_aside_last_turn(conversation: Conversation) -> Retry | None:
    """Drop the last turn from ``conversation``'s agent and branch its session; None
    when there is no turn to retry. Blocking (SQLite); no turn may be running."""
    from deskmate.app.agent.parse import is_feedback

    runtime = conversation.runtime
    if runtime is None:
        raise RuntimeError("no agent yet: load a model first")
    agent = runtime.agent
    starts = [i for i, m in enumerate(agent.transcript)
              if m.role == "user" and not is_feedback(m.content)]
    if not starts:
        return None
    cut = starts[-1]
    prompt = agent.transcript[cut].content
    kept_in = conversation.session_id
    branch = None
    if kept_in is not None and conversation.recorder is not None:
        from deskmate.app.store import Recorder
        from deskmate.app.store.branch import branch_session

        branch = branch_session(conversation.db, kept_in, messages=cut,
                                turns=len(starts) - 1)
        conversation.recorder = Recorder(conversation.db, branch)
    del agent.transcript[cut:]
    agent.turns = len(starts) - 1
    conversation.transcript = list(agent.transcript)
    return Retry(prompt, kept_in, branch)
