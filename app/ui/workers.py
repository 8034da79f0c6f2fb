"""A worker's failure, on the app or on any screen or widget, shown as one kind of error.

Textual posts a worker's state changes to the node that started it, and they do not
bubble; without ``ReportsWorkers``, an error in a screen's worker would pass unseen.
"""

from __future__ import annotations

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, WorkerState, get_current_worker


def report_worker(app: App, event: Worker.StateChanged) -> None:
    """The one place where an unexpected worker failure becomes a visible error."""
    if event.state == WorkerState.ERROR and event.worker.error is not None:
        error = event.worker.error
        # Our own errors already say what failed and what to do; others get their type.
        known = isinstance(error, ValueError) or type(error).__module__.startswith(
            ("deskmate.",))
        app.notify(str(error) if known else f"{type(error).__name__}: {error}",
                   title=failure_title(event.worker.name), severity="error", timeout=12)


def failure_title(worker_name: str) -> str:
    """What failed, from the worker's name (its method's: ``load_model`` → "Load model
    failed"), so a toast says which job it is about."""
    words = worker_name.strip("_").replace("_", " ").strip()
    return f"{words[:1].upper()}{words[1:]} failed" if words else "Something failed"


class ReportsWorkers(MessagePump):
    """Mixed into the screens and widgets that start workers."""

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        report_worker(self.app, event)


def post_fresh(node: MessagePump, message: Message) -> None:
    """Post a thread worker's result unless a newer run of its exclusive group has
    replaced it (the newer one's start cancels it): on a loaded machine a reload that
    began before a rename can finish after the one that began after it, and its stale
    rows must not be drawn last."""
    if not get_current_worker().is_cancelled:
        node.post_message(message)
