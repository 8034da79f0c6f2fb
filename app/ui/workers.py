"""``ReportsWorkers``: a worker's failure on a screen or widget reaches the app's handler.

Textual posts a worker's state changes to the node that started it, and they do not
bubble; without this, an error in a screen's worker would pass unseen.
"""

from __future__ import annotations

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker


class ReportsWorkers:
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_worker(event)  # type: ignore[attr-defined]


def post_fresh(node: MessagePump, message: Message) -> None:
    """Post a thread worker's result unless a newer run of its exclusive group has
    replaced it (the newer one's start cancels it): on a loaded machine a reload that
    began before a rename can finish after the one that began after it, and its stale
    rows must not be drawn last."""
    if not get_current_worker().is_cancelled:
        node.post_message(message)
