"""Tool approval: the modal the user answers, and the approver the agent's thread calls.

``UiApprover`` runs on the agent's worker thread: it posts ``ApprovalAsked`` to the app
and blocks until the modal answers (or the turn is cancelled, which denies the call).
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Static

from deskmate.app.ui.messages import ApprovalAsked, PendingApproval
from deskmate.tools.policy import ApprovalRequest, Decision

if TYPE_CHECKING:
    from textual.message import Message


class UiApprover:
    """``tools.policy.Approver`` for the app (called from the agent's thread)."""

    def __init__(self, post: Callable[[Message], object]) -> None:
        self._post = post
        self.cancel: threading.Event = threading.Event()  # the running turn's cancel

    def __call__(self, request: ApprovalRequest) -> Decision:
        pending = PendingApproval(request)
        self._post(ApprovalAsked(pending))
        while not pending.done.wait(0.1):
            if self.cancel.is_set():
                return "deny"
        return pending.decision


def hidden_characters(text: str) -> list[str]:
    """Invisible or direction-changing characters: how injected text hides in arguments."""
    found = []
    for ch in text:
        cat = unicodedata.category(ch)
        tag = 0xE0000 <= ord(ch) <= 0xE007F
        if tag or cat in ("Cf", "Co", "Cs") or (cat == "Cc" and ch not in "\n\t\r"):
            name = unicodedata.name(ch, "TAG" if tag else "control")
            found.append(f"U+{ord(ch):04X} {name}")
    return found


def pretty_arguments(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, indent=2, ensure_ascii=True)  # \uXXXX shows hidden ones


class ApprovalScreen(ModalScreen[Decision]):
    """Allow or deny one tool call. Dismissed with the decision.

    | Key | Action |
    | :- | :- |
    | y | Allow once. |
    | a | Allow this tool for the rest of the session. |
    | t | Trust the whole server. |
    | n / escape | Deny. |
    """

    BINDINGS = [
        Binding("y", "decide('allow_once')", "Allow once", id="allow_once"),
        Binding("a", "decide('allow_tool')", "Allow tool", id="allow_tool"),
        Binding("t", "decide('trust_server')", "Trust server", id="trust_server"),
        Binding("n", "decide('deny')", "Deny", id="deny"),
        Binding("escape", "decide('deny')", "Deny", show=False),
    ]

    def __init__(self, request: ApprovalRequest) -> None:
        super().__init__(classes="dialog")
        self.request = request

    def compose(self) -> ComposeResult:
        tool = self.request.tool
        args = self.request.arguments
        hidden = hidden_characters(json.dumps(args, ensure_ascii=False))
        notes = []
        if tool.destructive:
            notes.append(("destructive: it may delete or overwrite things", "$error"))
        elif not tool.read_only:
            notes.append(("it may change things", "$warning"))
        if tool.annotations:
            notes.append(("annotations: " + ", ".join(f"{k}={v}" for k, v in sorted(
                tool.annotations.items())), "$text-muted"))
        with Vertical(id="approval"):
            yield Static(Content.assemble("Allow ", (f"{tool.server}.{tool.name}", "bold"),
                                          "?"), id="approval-title")
            if tool.description:
                yield Static(Content(tool.description.strip().splitlines()[0]),
                             classes="description")
            for text, style in notes:
                yield Static(Content.styled(text, style), classes="note")
            if hidden:
                yield Static(Content.styled(
                    "hidden characters in the arguments (possible prompt injection): "
                    + "; ".join(hidden[:8]) + (" …" if len(hidden) > 8 else ""), "$error"),
                    id="hidden-warning")
            with VerticalScroll(id="approval-args"):
                yield Static(Content(pretty_arguments(args)))
            with Horizontal(id="approval-buttons"):
                yield Button("Allow once", id="allow_once", variant="success")
                yield Button("Allow tool for session", id="allow_tool")
                yield Button("Trust server", id="trust_server", variant="warning")
                yield Button("Deny", id="deny", variant="error")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#deny", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(cast(Decision, event.button.id))  # the buttons' ids are decisions

    def action_decide(self, decision: Decision) -> None:
        self.dismiss(decision)
