"""The status line's live decode rate: tokens a second while a model call streams.

The exact figures (``Usage.decode_tps``, from the backend's ``TokenClock``) arrive with
the call's ``ModelMessage``, once the call ended. Until then the chat's turn worker
feeds a ``LiveRate`` each streamed delta (a token, or a few the stop matcher held
back) and posts what it reads at most ``STATUS_HZ`` times a second: the status line
moves while a plain answer streams, and the model message's exact line replaces it.
"""

from __future__ import annotations

from textual.message import Message

from deskmate.app.llm.base import TokenClock

STATUS_HZ = 4  # most live readings a second: a status line changing faster is unreadable


class LiveRate:
    """One ``TokenClock`` per model call (a step), ticked once per streamed delta."""

    def __init__(self, hz: float = STATUS_HZ) -> None:
        self.every = 1 / hz
        self.step: int | None = None
        self.clock = TokenClock(0.0)
        self.shown = 0.0  # when the last reading was given

    def feed(self, step: int, now: float) -> str | None:
        """Count a delta of ``step`` at ``now``; the status text when one is due."""
        if step != self.step:  # a new model call: its rate starts from its first delta
            self.step, self.clock, self.shown = step, TokenClock(now), now
        self.clock.tick(now)
        if now - self.shown < self.every:
            return None
        usage = self.clock.usage(now)
        if not usage.decode_tps:
            return None
        self.shown = now
        return (f"step {step} · writing · {usage.completion_tokens:,} generated · "
                f"{usage.decode_tps:.0f} tok/s")


class RateRead(Message):
    """A live reading for the status line, posted by the turn's worker."""

    def __init__(self, text: str) -> None:
        self.text = text
        super().__init__()
