"""What an action format is, and what it gets of the running turn.

The loop (app/agent/loop.py) is the same whatever the model's replies look like: query
the model, hand the reply to the action format, repeat. An ``Actions`` says where a reply
may stop while it streams, runs the action the reply holds and appends what came back to
the transcript. Two ship: code (actions_code.py) and eager JSON tool calls
(actions_eager.py).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from queue import Empty, Queue
from typing import Any, ParamSpec, Protocol, TypeVar

from deskmate.app.agent import events as ev
from deskmate.app.agent.modes import Mode
from deskmate.app.llm.base import ChatMessage

P = ParamSpec("P")
T = TypeVar("T")


class Stop(Exception):
    """Ends the turn with ``status``; raised by the loop and by the action formats."""

    status: ev.TurnStatus

    def __init__(self, status: ev.TurnStatus) -> None:
        super().__init__(status)
        self.status = status


class Interrupt(threading.Event):
    """Set by us, by the user's cancel event, or by the turn's deadline passing.

    Model streams, cells and tool calls all poll ``is_set``, so one long call cannot
    overrun the turn's wall time."""

    def __init__(self, other: threading.Event, deadline: float = math.inf) -> None:
        super().__init__()
        self._other = other
        self._deadline = deadline

    @property
    def expired(self) -> bool:
        return time.perf_counter() > self._deadline

    def is_set(self) -> bool:
        return super().is_set() or self._other.is_set() or self.expired


@dataclass(frozen=True)
class Turn:
    """The running turn as an action format sees it; the loop makes one per turn."""

    cancel: threading.Event  # the user's
    deadline: float  # when the turn's wall time runs out, on time.perf_counter()
    observation_chars: int  # what one action's output may add to the context
    repeat_code: int  # the same cell this many times in a turn ends it
    append: Callable[[ChatMessage], ev.MessageAppended]  # to the transcript, as an event
    events: Queue[ev.AgentEvent]  # what the bridge reports, from whichever thread
    request: str = ""  # the user's message this turn answers
    max_steps: int = 0  # the turn's model calls at most; 0: not known

    def interrupt(self) -> Interrupt:
        return Interrupt(self.cancel, self.deadline)

    def seconds_left(self) -> float:
        return self.deadline - time.perf_counter()

    def check_cancelled(self) -> None:
        if self.cancel.is_set():
            raise Stop("cancelled")

    def in_thread(self, fn: Callable[P, T], *args: P.args,
                  **kwargs: P.kwargs) -> Generator[ev.AgentEvent, None, T]:
        """Run ``fn`` in a helper thread, passing on the bridge's events as they happen
        (tool calls report from that thread); return its result or raise its error."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="agent-work") as pool:
            future = pool.submit(fn, *args, **kwargs)
            while True:
                done = future.done()  # read first: events queued before it must pass
                while True:
                    try:
                        yield self.events.get(timeout=0.02 if not done else 0)
                    except Empty:
                        break
                if done:
                    return future.result()


class Actions(Protocol):
    """How the model acts: the shape of its replies and what running one does."""

    mode: Mode
    tools: tuple[dict[str, Any], ...]  # native tool schemas sent with every model call

    def stop_at(self, reply: str) -> int | None:
        """Where the streaming reply is complete (the model is stopped there), or None."""
        ...

    def new_turn(self) -> None:
        """Forget what the previous turn's guards counted."""
        ...

    def act(self, step: int, reply: str, turn: Turn) -> Generator[ev.AgentEvent, None, bool]:
        """Append the reply, run its action, append what came back; True: answered."""
        ...

    def next_grammar(self, last: bool = False) -> str | None:
        """A GBNF grammar the next reply must follow (where the backend takes one), or
        None for a free reply. ``last``: the reply is the turn's last step."""
        ...

    def looked(self, calls: Sequence[str]) -> None:
        """The calls the first look made for the model this turn, as code writes them."""
        ...
