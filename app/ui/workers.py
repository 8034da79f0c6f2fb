"""``ReportsWorkers``: a worker's failure on a screen or widget reaches the app's handler.

Textual posts a worker's state changes to the node that started it, and they do not
bubble; without this, an error in a screen's worker would pass unseen.
"""

from __future__ import annotations

from textual.worker import Worker


class ReportsWorkers:
    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        self.app.report_worker(event)  # type: ignore[attr-defined]
