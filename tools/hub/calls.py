"""What a caller hands the hub for one tool call (``CallHooks``), and the call's clock.

A call's timeout measures the server, not the person: ``CallClock`` runs out after
``timeout`` seconds without news from the server — each progress notification starts
it again — and stands still while the server's question (an elicitation) waits for an
answer, and while its sampling request is decided and answered. The clock lives on the
hub's event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass

from deskmate.tools.hub.elicitation import Asker


@dataclass(frozen=True)
class Progress:
    """One progress notification of a running call."""

    progress: float
    total: float | None = None
    message: str = ""

    @property
    def fraction(self) -> float | None:
        """Between 0 and 1 when the server gave a total, else None."""
        if not self.total or self.total <= 0:
            return None
        return max(0.0, min(1.0, self.progress / self.total))

    def bar(self, cells: int = 10) -> str:
        """``▰▰▰▱▱▱▱▱▱▱ 3/10 message``, or ``3 message`` when the total is unknown."""
        fraction = self.fraction
        if fraction is None or self.total is None:
            text = f"{self.progress:g}"
        else:
            filled = round(cells * fraction)
            text = f"{'▰' * filled}{'▱' * (cells - filled)} {self.progress:g}/{self.total:g}"
        return f"{text} {self.message}".strip()


@dataclass(frozen=True)
class CallHooks:
    """A call's way back to its caller; both are optional."""

    # Called on the hub's loop thread for each progress notification: must not block.
    on_progress: Callable[[Progress], None] | None = None
    # Answers the questions the server asks during this call (None: the hub's asker).
    asker: Asker | None = None


class CallClock:
    """The timeout of one call: idle time of the server, paused while a person answers."""

    def __init__(self, timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self._now = clock
        self._since = clock()  # the last news from the server
        self._paused = 0  # questions open now (a server may ask more than one)
        self.changed = asyncio.Event()  # set at each touch, pause and resume

    def touch(self) -> None:
        """The server gave news (progress): the timeout starts again."""
        self._since = self._now()
        self.changed.set()

    def pause(self) -> None:
        self._paused += 1
        self.changed.set()

    def resume(self) -> None:
        self._paused = max(0, self._paused - 1)
        if not self._paused:
            self._since = self._now()
        self.changed.set()

    def remaining(self) -> float | None:
        """Seconds left, or None while stopped."""
        if self._paused:
            return None
        return self._since + self.timeout - self._now()


@dataclass(eq=False)
class ActiveCall:
    """A call in flight on one connection (the connection's questions go to it)."""

    tool: str
    hooks: CallHooks
    clock: CallClock
