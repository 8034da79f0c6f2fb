"""The app's model workers: choose a model, download one with progress and cancel.

A mixin of ``DeskmateApp`` so a download keeps going while the user moves between
screens. The download's worker posts its progress and its end to the app; the app
handles each once and hands it to the screen that shows downloads (``ShowsDownloads``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol, runtime_checkable

from textual import work
from textual.app import App

from deskmate.app.llm.base import ModelError
from deskmate.app.services import models as model_ops
from deskmate.app.ui.messages import ConfigChanged, DownloadFinished, DownloadProgress, Pull

PROGRESS_INTERVAL_S = 0.1  # at most ten progress messages a second


@runtime_checkable
class ShowsDownloads(Protocol):
    """A screen with a download bar (the models screen)."""

    def show_download(self, progress: DownloadProgress | None) -> None: ...

    def download_finished(self) -> None: ...


class ModelWorkers(App[None]):
    config_path: Path | None  # the config file that choosing a model rewrites
    pull: Pull | None = None  # the download that c cancels: the latest one started
    download_state: DownloadProgress | None = None  # the latest progress, for new screens

    @work(thread=True, exclusive=True, group="use-model", exit_on_error=False)
    def use_model(self, spec: str) -> None:
        chosen = model_ops.use_model(spec, self.config_path)  # errors: the app shows
        self.post_message(ConfigChanged(chosen.config, f"active model: {chosen.value}",
                                        reload_model=True))

    def download_model(self, spec: str, use_after: bool = False) -> None:
        """Download ``spec`` with progress; ``use_after``: make it the model when done."""
        self.pull = Pull(spec, use_after)
        self._download(self.pull)

    @work(thread=True, exclusive=True, group="download", exit_on_error=False)
    def _download(self, pull: Pull) -> None:
        from deskmate.app.llm.download import pull as pull_model

        last = 0.0

        def progress(done: int, total: int | None) -> None:
            nonlocal last
            now = time.monotonic()
            if now - last >= PROGRESS_INTERVAL_S or (total and done >= total):
                last = now
                self.post_message(DownloadProgress(pull.spec, done, total))

        self.post_message(DownloadProgress(pull.spec, 0, None))
        try:
            path = pull_model(pull.spec, progress, pull.cancel)
        except ModelError as exc:
            self.post_message(DownloadFinished(pull, error=str(exc)))
            return
        self.post_message(DownloadFinished(pull, path=str(path)))

    def cancel_download(self) -> bool:
        if self.pull is not None:
            self.pull.cancel.set()
            return True
        return False

    def on_download_progress(self, message: DownloadProgress) -> None:
        self.download_state = message
        if isinstance(screen := self.screen, ShowsDownloads):
            screen.show_download(message)

    def on_download_finished(self, message: DownloadFinished) -> None:
        if self.pull is message.pull:  # not a download started since
            self.pull = None
        self.download_state = None
        if message.error:
            self.notify(message.error, title=f"{message.spec} not downloaded",
                        severity="warning", timeout=10)
        else:
            self.notify(f"{message.spec} is ready: {message.path}", title="Downloaded")
        if isinstance(screen := self.screen, ShowsDownloads):
            screen.download_finished()
        if message.pull.use_after and not message.error:
            self.use_model(message.spec)
