"""The app's model workers: choose a model, download one with progress and cancel.

A mixin of ``DeskmateApp`` so a download keeps going while the user moves between
screens; progress goes to the app, which hands it to the screens that show it.
"""

from __future__ import annotations

import threading
import time

from textual import work

from deskmate.app.llm.base import ModelError
from deskmate.app.ui import model_jobs
from deskmate.app.ui.messages import ConfigChanged, DownloadFinished, DownloadProgress

PROGRESS_INTERVAL_S = 0.1  # at most ten progress messages a second


class ModelWorkers:
    download_cancel: threading.Event | None = None
    download_state: DownloadProgress | None = None  # the latest progress, for new screens

    @work(thread=True, exclusive=True, group="use-model", exit_on_error=False)
    def use_model(self, spec: str) -> None:
        config, value = model_jobs.activate(spec, self.config_path)  # errors: the app shows
        self.post_message(ConfigChanged(config, f"active model: {value}", reload_model=True))

    @work(thread=True, exclusive=True, group="download", exit_on_error=False)
    def download_model(self, spec: str, use_after: bool = False) -> None:
        from deskmate.app.llm.download import pull

        cancel = self.download_cancel = threading.Event()
        last = 0.0

        def progress(done: int, total: int | None) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= PROGRESS_INTERVAL_S or (total and done >= total):
                last = now
                self.post_message(DownloadProgress(spec, done, total))

        self.post_message(DownloadProgress(spec, 0, None))
        try:
            path = pull(spec, progress, cancel)
        except ModelError as exc:
            self.post_message(DownloadFinished(spec, error=str(exc)))
            return
        finally:
            if self.download_cancel is cancel:  # not a download started since
                self.download_cancel = None
        self.post_message(DownloadFinished(spec, path=str(path)))
        if use_after:
            self.use_model(spec)

    def cancel_download(self) -> bool:
        if self.download_cancel is not None:
            self.download_cancel.set()
            return True
        return False

    def on_download_progress(self, message: DownloadProgress) -> None:
        self.download_state = message
        self._forward(DownloadProgress(message.spec, message.done, message.total))

    def on_download_finished(self, message: DownloadFinished) -> None:
        self.download_state = None
        if message.error:
            self.notify(message.error, title=f"{message.spec} not downloaded",
                        severity="warning", timeout=10)
        else:
            self.notify(f"{message.spec} is ready: {message.path}", title="Downloaded")
        self._forward(DownloadFinished(message.spec, message.path, message.error))

    def _forward(self, message) -> None:
        screen = self.screen  # type: ignore[attr-defined]
        if hasattr(screen, "on_download_progress"):
            screen.post_message(message)
