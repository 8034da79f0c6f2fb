"""Cells that would run without isolation (level rlimits): the modal that shows the cell
and the approver the agent's thread calls (the shape of approval.py, for cells).

``UiCellApprover`` runs on the agent's worker thread: it posts ``CellApprovalAsked`` and
blocks until the modal answers (or the turn is cancelled, which denies the cell).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from deskmate.tools.sandbox.gate import CellDecision, CellRequest

if TYPE_CHECKING:
    from textual.message import Message as PostedMessage

WARNING = ("Nothing isolates code on this machine (sandbox level rlimits): this cell runs "
           "with your rights, with your files and the network in reach.")


@dataclass
class PendingCell:
    """A cell waiting for the user; ``answer`` unblocks the agent's thread."""

    request: CellRequest
    decision: CellDecision = "deny"
    done: threading.Event = field(default_factory=threading.Event)

    def answer(self, decision: CellDecision) -> None:
        self.decision = decision
        self.done.set()


class CellApprovalAsked(Message):
    def __init__(self, pending: PendingCell) -> None:
        self.pending = pending
        super().__init__()


class UiCellApprover:
    """``tools.sandbox.gate.CellApprover`` for the app (called from the agent's thread);
    ``cancel`` gives the running turn's cancel event."""

    def __init__(self, post: Callable[[PostedMessage], object],
                 cancel: Callable[[], threading.Event]) -> None:
        self._post = post
        self._cancel = cancel

    def __call__(self, request: CellRequest) -> CellDecision:
        pending = PendingCell(request)
        self._post(CellApprovalAsked(pending))
        while not pending.done.wait(0.1):
            if self._cancel().is_set():
                return "deny"
        return pending.decision


class CellApprovalScreen(ModalScreen[CellDecision]):
    """Run one cell without isolation, or not. Dismissed with the decision.

    | Key | Action |
    | :- | :- |
    | y | Run this cell. |
    | s | Run this session's cells without asking. |
    | n / escape | Do not run it. |
    """

    BINDINGS = [
        Binding("y", "decide('allow_once')", "Run once", id="cell_run"),
        Binding("s", "decide('allow_session')", "Run all this session", id="cell_run_session"),
        Binding("n", "decide('deny')", "Don't run", id="cell_skip"),
        Binding("escape", "decide('deny')", "Don't run", show=False),
    ]

    def __init__(self, request: CellRequest) -> None:
        super().__init__(classes="dialog")
        self.request = request

    def compose(self) -> ComposeResult:
        with Vertical(id="approval"):
            yield Static(Content.assemble("Run this ", ("unisolated", "bold"), " cell?"),
                         id="approval-title")
            yield Static(Content.styled(WARNING, "$warning"), classes="note")
            with VerticalScroll(id="approval-args"):
                yield Static(Content(self.request.code), id="cell-code")
            with Horizontal(id="approval-buttons"):
                yield Button("Run once", id="allow_once", variant="warning")
                yield Button("Run all this session", id="allow_session")
                yield Button("Don't run", id="deny", variant="error")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(cast(CellDecision, event.button.id))  # the buttons' ids are decisions

    def action_decide(self, decision: CellDecision) -> None:
        self.dismiss(decision)
