"""A server's request to use the local model (MCP sampling): the approver and dialog.

``UiSampleApprover`` runs on a hub worker thread: it posts ``SampleAsked`` to the app
and blocks until ``SampleScreen`` decides, the turn is cancelled or ``timeout`` seconds
pass (both decline). The dialog shows which server asks, its system prompt, messages and
token limit; it allows once, allows the server for the session, or declines, and closes
itself when the request was settled elsewhere.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Button, Footer, Static

from deskmate.tools.hub.sampling import (
    MAX_TOKENS,
    Choice,
    SampleDecision,
    SampleRequest,
    describe,
)

TIMEOUT_S = 300.0  # how long a request waits for the user before it is declined


@dataclass
class PendingSample:
    """A sampling request on its way to the user; the first ``settle`` wins."""

    request: SampleRequest
    timeout: float
    cap: int = MAX_TOKENS
    decision: SampleDecision | None = None
    done: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def settle(self, decision: SampleDecision) -> bool:
        with self._lock:
            if self.done.is_set():
                return False
            self.decision = decision
            self.done.set()
            return True


class SampleAsked(Message):
    def __init__(self, pending: PendingSample) -> None:
        self.pending = pending
        super().__init__()


class UiSampleApprover:
    """``tools.hub.sampling.Approver`` for the app (called from a hub worker thread)."""

    def __init__(self, post: Callable[[Message], object],
                 cancel: Callable[[], threading.Event], timeout: float = TIMEOUT_S) -> None:
        self._post = post
        self._cancel = cancel  # the running turn's
        self.timeout = timeout

    def __call__(self, request: SampleRequest) -> SampleDecision:
        pending = PendingSample(request, self.timeout)
        self._post(SampleAsked(pending))
        deadline = time.monotonic() + self.timeout
        while not pending.done.wait(0.1):
            if self._cancel().is_set():
                pending.settle(SampleDecision("decline", decided_by="policy",
                                              reason="the turn was cancelled"))
            elif time.monotonic() > deadline:
                pending.settle(SampleDecision("decline", decided_by="policy",
                                              reason=f"no answer within {self.timeout:g} s"))
        assert pending.decision is not None
        return pending.decision


class SampleScreen(ModalScreen[SampleDecision]):
    """Let a server use the local model, or not. Dismissed with the decision.

    | Key | Action |
    | :- | :- |
    | ctrl+s | Allow this request. |
    | ctrl+a | Allow this server's requests for the session. |
    | ctrl+d, escape | Decline. |
    """

    BINDINGS = [
        Binding("ctrl+s", "decide('once')", "Allow once", priority=True),
        Binding("ctrl+a", "decide('server')", "Allow server", priority=True),
        Binding("ctrl+d", "decide('decline')", "Decline", priority=True),
        Binding("escape", "decide('decline')", "Decline"),
    ]

    DEFAULT_CSS = """
    SampleScreen #sample { border: thick $accent; }
    SampleScreen #sample-title { text-style: bold; margin-bottom: 1; }
    SampleScreen #sample-messages { height: auto; max-height: 45vh; }
    SampleScreen #sample-left { color: $text-muted; }
    """

    def __init__(self, pending: PendingSample) -> None:
        super().__init__(classes="dialog")
        self.pending = pending
        self.request = pending.request
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        title, *lines = describe(self.request, self.pending.cap)
        with Vertical(id="sample", classes="dialog-box"):
            yield Static(Content.assemble((self.request.server, "bold"),
                                          title[len(self.request.server):]), id="sample-title")
            with VerticalScroll(id="sample-messages"):
                for line in lines:
                    yield Static(Content(line), classes="dialog-text")
            yield Static(f"Undecided, it is declined after {self.pending.timeout:g} s.",
                         id="sample-left")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Allow once", id="once", variant="success")
                yield Button("Allow this server", id="server", variant="warning")
                yield Button("Decline", id="decline", variant="error")
        yield Footer()

    def on_mount(self) -> None:
        self._timer = self.set_interval(0.2, self._watch)
        self.query_one("#decline", Button).focus()

    def _watch(self) -> None:
        """Close when the request was settled elsewhere (turn cancelled, timed out)."""
        if self.pending.done.is_set() and self.is_attached and self.app.screen is self:
            if self._timer is not None:
                self._timer.stop()
            self.dismiss(self.pending.decision)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_decide(cast(Choice, event.button.id))  # the buttons' ids are choices

    def action_decide(self, choice: Choice) -> None:
        decision = SampleDecision(choice)
        if self.pending.settle(decision):
            self.dismiss(decision)
