"""The app's model workers: load the model, choose one (F4, ``/model``), download one with
progress and cancel.

A mixin of ``DeskmateApp`` so a download keeps going while the user moves between
screens. Loading posts ``ModelReady`` or ``ModelFailed``, which the app takes on (a new
model means a new agent over the hub). The download's worker posts its progress and
its end to the app; the app handles each once and hands it to the screen that shows
downloads (``ShowsDownloads``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from textual import on, work
from textual.app import App
from textual.message import Message

from deskmate.app.config import Config
from deskmate.app.llm import ChatModel, ModelError, NoModelConfigured
from deskmate.app.services import models as model_ops
from deskmate.app.ui.messages import (
    ConfigChanged,
    DownloadFinished,
    DownloadProgress,
    ModelFailed,
    ModelReady,
    Pull,
)

ModelFactory = Callable[[Config, str | None], ChatModel]

PROGRESS_INTERVAL_S = 0.1  # at most ten progress messages a second


@runtime_checkable
class ShowsDownloads(Protocol):
    """A screen with a download bar (the models screen)."""

    def show_download(self, progress: DownloadProgress | None) -> None: ...

    def download_finished(self) -> None: ...


class ModelWorkers(App[None]):
    config: Config
    config_path: Path | None  # the config file that choosing a model rewrites
    model_factory: ModelFactory  # opens the model a spec (or the config) names
    pull: Pull | None = None  # the download that c cancels: the latest one started
    download_state: DownloadProgress | None = None  # the latest progress, for new screens

    class ModelPicked(Message):
        """``/model SPEC`` was written to the config."""

        def __init__(self, chosen: model_ops.ModelChosen) -> None:
            self.chosen = chosen
            super().__init__()

    def _set_status(self, text: str) -> None:
        """The chat's status line (the app draws it)."""
        raise NotImplementedError

    @work(thread=True, exclusive=True, group="model", exit_on_error=False)
    def load_model(self, spec: str | None) -> None:
        try:
            model = self.model_factory(self.config, spec)
        except NoModelConfigured as exc:
            self.post_message(ModelFailed(str(exc), first_run=True))
            return
        except ModelError as exc:
            self.post_message(ModelFailed(str(exc)))
            return
        self.post_message(ModelReady(model, spec))

    @work(thread=True, exclusive=True, group="use-model", exit_on_error=False)
    def choose_model(self, spec: str) -> None:
        """``/model SPEC``: make it the configured model, as F4 does (it lasts)."""
        try:
            chosen = model_ops.use_model(spec, self.config_path)
        except ModelError as exc:
            self.post_message(ModelFailed(str(exc)))
            return
        self.post_message(self.ModelPicked(chosen))

    @on(ModelPicked)
    def model_picked(self, message: ModelPicked) -> None:
        chosen = message.chosen
        note = f"active model: {chosen.value}"
        if chosen.downloaded:
            self.post_message(ConfigChanged(chosen.config, note, reload_model=True))
            return
        # Not on this machine yet: download it, then use it (as the first-run dialog does).
        self.post_message(ConfigChanged(chosen.config, f"{note} (downloading it first)"))
        self._set_status(f"downloading {chosen.value} … (F4 shows the progress)")
        self.download_model(chosen.value, use_after=True)

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
