"""Compaction: when a session nears the model's context window, its older turns become
one summary the model writes, and the session goes on from there.

``compact`` asks the agent's own model for the summary of every turn but the newest
``keep_turns``, then the agent's transcript becomes: the system prompt, the summary (a
user message), a short acknowledgement, and the kept turns as they were. The model's KV
cache is rebuilt once, at the next call (only the system prompt's entries still fit).
The recorded session is not rewritten: the compacted transcript is recorded as a new
session (``store.compaction``) and the conversation records into it from then on. The
chat does this by itself after a turn that filled ``NEAR_FULL`` of the window, and on
``/compact``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from deskmate.app.llm import ChatMessage, Finished, GenerationParams

if TYPE_CHECKING:
    from deskmate.app.llm import ChatModel
    from deskmate.app.services.conversation import Conversation

NEAR_FULL = 0.8  # the share of the window after which the chat compacts by itself
SUMMARY_TOKENS = 512  # the summary's length, at most
ACK = "Understood: I will go on from this summary."
_SUMMARISE = ("You summarise a conversation between a user and an assistant that uses "
              "tools, for the assistant to go on from. Keep every fact, file name, number, "
              "decision and open question the user may come back to; drop the wording. "
              "Write plain sentences, at most 300 words.")


def tokens(n: int) -> str:
    """A token count, short: 950, 3.1k, 8k, 131k."""
    if n < 1000:
        return str(n)
    k = n / 1000
    return f"{k:.1f}k".replace(".0k", "k") if k < 10 else f"{k:.0f}k"


def reading(used: int, window: int) -> tuple[str, bool]:
    """The meter's text, and whether the session is near the window's end."""
    if window <= 0:  # a backend that does not say its context size
        return f"ctx {tokens(used)}", False
    return f"ctx {tokens(used)}/{tokens(window)}", used >= NEAR_FULL * window


class NothingToCompact(ValueError):
    """Too few turns: everything would be kept."""


@dataclass(frozen=True)
class Compaction:
    summary: str
    messages_before: int  # the transcript's length before, with the system prompt
    messages_after: int
    kept_in: str | None  # the recorded session that keeps the full transcript
    session: str | None  # the session recorded from now on (None: not recording)


def compact(conversation: Conversation, *, keep_turns: int = 1,
            cancel: threading.Event | None = None) -> Compaction:
    """Summarise all but the last ``keep_turns`` turns of ``conversation``'s agent (a
    model call: blocking); no turn may be running."""
    from deskmate.app.agent.parse import is_feedback

    runtime = conversation.runtime
    if runtime is None:
        raise RuntimeError("no agent yet: load a model first")
    agent = runtime.agent
    transcript = agent.transcript
    starts = [i for i, m in enumerate(transcript)
              if m.role == "user" and not is_feedback(m.content)]
    if len(starts) <= keep_turns:
        raise NothingToCompact(f"{len(starts)} turn(s) so far: nothing older than the last "
                               f"{keep_turns} to summarise")
    cut = starts[-keep_turns]
    summary = _summarise(agent.model, transcript[1:cut], cancel)
    kept_in, session = conversation.session_id, None
    if kept_in is not None and conversation.recorder is not None:
        from deskmate.app.store import Recorder
        from deskmate.app.store.compaction import compacted_session

        session = compacted_session(conversation.db, kept_in,
                                    summary=summary_message(summary), ack=ACK,
                                    keep_from=cut, turns=agent.turns)
        conversation.recorder = Recorder(conversation.db, session)
    before = len(transcript)
    agent.transcript[1:cut] = [ChatMessage("user", summary_message(summary)),
                               ChatMessage("assistant", ACK)]
    conversation.transcript = list(agent.transcript)
    return Compaction(summary, before, len(agent.transcript), kept_in, session)


def summary_message(summary: str) -> str:
    from deskmate.app.store.compaction import SUMMARY_HEAD

    return f"{SUMMARY_HEAD}\n{summary}"


def _summarise(model: ChatModel, older: list[ChatMessage], cancel: threading.Event | None) -> str:
    # The part to summarise may itself not fit: its newest part is what the next turns
    # most likely build on.
    window = model.info.context_size or 8192
    text = "\n\n".join(f"{m.role}: {m.content}" for m in older)[-window * 2:]
    params = GenerationParams(max_tokens=SUMMARY_TOKENS, temperature=0.2)
    messages = [ChatMessage("system", _SUMMARISE),
                ChatMessage("user", f"The conversation:\n\n{text}\n\nIts summary:")]
    for event in model.stream(messages, params, cancel):
        if isinstance(event, Finished):
            if event.finish_reason == "cancelled":
                raise RuntimeError("compaction cancelled: the session is as it was")
            if not event.text.strip():
                raise RuntimeError("the model wrote an empty summary: the session is as it "
                                   "was")
            return event.text.strip()
    raise RuntimeError("the model ended without a summary: the session is as it was")
