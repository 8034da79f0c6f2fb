"""The models screen: the registry and local GGUF files, download, context, adapter.

Downloads run in the app's worker (``ModelWorkers``), so one keeps going while you
move around; the app hands this screen its progress (``ShowsDownloads``).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, ProgressBar, Static

from deskmate.app.ui.dialogs import AskScreen
from deskmate.app.ui.host import host
from deskmate.app.ui.messages import ConfigChanged, DownloadProgress
from deskmate.app.ui.tables import TableScreen
from deskmate.app.ui.workers import post_fresh


class ModelsScreen(TableScreen):
    """Models you can run.

    | Key | Action |
    | :- | :- |
    | enter | Use the highlighted model. |
    | p | Download (pull) it. |
    | c | Cancel the download. |
    | l | Use a local .gguf file by path. |
    | x | Context size. |
    | o | LoRA adapter (empty: none). |
    """

    # show=False: kept off the footer, which must fit 140 columns (test_ui_footer.py);
    # F1 help and the command palette still list them.
    BINDINGS = [
        Binding("enter", "use", "Use", id="model_use"),
        Binding("p", "pull", "Download", id="model_pull"),
        Binding("c", "cancel_download", "Cancel download", id="model_cancel"),
        Binding("l", "local", "Local file", id="model_local"),
        Binding("x", "context", "Context", show=False, id="model_context"),
        Binding("o", "adapter", "Adapter", show=False, id="model_adapter"),
    ]

    class Listed(Message):
        def __init__(self, rows: list[tuple[str, str, str, str]]) -> None:
            self.rows = rows  # spec, name, state, description
            super().__init__()

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(classes="screen-body"):
            yield Static("", id="model-active", classes="screen-title")
            with Horizontal(id="download-bar"):
                yield Static("", id="download-label")
                yield ProgressBar(id="download-progress", show_eta=True)
            yield DataTable(id="models-table", cursor_type="row", zebra_stripes=True)
        yield Static("enter use · p download · c cancel download · l local file · x context "
                     "· o adapter", classes="screen-hint")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("model", key="name")
        table.add_column("on this machine", key="state")
        table.add_column("description", key="description")
        table.focus()
        self.show_download(host(self).download_state)
        self.show_active()
        self.load()

    def on_screen_resume(self) -> None:
        self.show_active()
        self.load()

    def show_active(self) -> None:
        app = host(self)
        cfg = app.config.model
        loaded = app.model.info.name if app.model is not None else "none loaded"
        adapter = Path(cfg.adapter).name if cfg.adapter else "no LoRA adapter"
        self.query_one("#model-active", Static).update(Content(
            f"active: {cfg.name or '(none chosen)'} · loaded: {loaded} · context "
            f"{cfg.context:,} tokens · {adapter}"))

    def show_download(self, message: DownloadProgress | None) -> None:
        bar = self.query_one("#download-bar")
        bar.display = message is not None
        if message is None:
            return
        size = f"{message.done / 1e6:,.0f} / {message.total / 1e6:,.0f} MB" if message.total \
            else f"{message.done / 1e6:,.0f} MB"
        self.query_one("#download-label", Static).update(
            Content(f"downloading {message.spec} · {size} · c cancels  "))
        self.query_one(ProgressBar).update(total=message.total, progress=message.done)

    @work(thread=True, exclusive=True, group="models-list", exit_on_error=False)
    def load(self) -> None:
        from deskmate.app.services.models import known_models, local_model_files

        active = host(self).config.model.name
        rows = []
        for model in known_models(active):
            state = "ready" if model.path else (f"{model.size_mb:,} MB to download"
                                                if model.size_mb else "to download")
            mark = "● " if model.active else ""
            rec = " (recommended)" if model.recommended else ""
            rows.append((model.name, mark + model.name, state, model.description + rec))
        for path in local_model_files(active):
            spec = str(path.resolve())
            if spec not in {r[0] for r in rows}:
                mark = "● " if spec == active else ""
                rows.append((spec, mark + path.name, f"local · {path.stat().st_size / 1e6:,.0f}"
                             " MB", str(path.parent)))
        post_fresh(self, self.Listed(rows))

    def on_models_screen_listed(self, message: Listed) -> None:
        self.refill((spec, [Text(c) for c in cells]) for spec, *cells in message.rows)

    def download_finished(self) -> None:
        """Called by the app when a download ended (``ShowsDownloads``)."""
        self.show_download(None)
        self.load()

    def config_changed(self) -> None:
        """Called by the app after the config or the loaded model changed."""
        self.show_active()
        self.load()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_use()

    def action_use(self) -> None:
        if (spec := self.selected) is not None:
            host(self).use_model(spec)

    def action_pull(self) -> None:
        if (spec := self.selected) is not None:
            host(self).download_model(spec)

    def action_cancel_download(self) -> None:
        if host(self).cancel_download():
            self.notify("cancelling the download …")

    def action_local(self) -> None:
        def answered(path: str | None) -> None:
            if path:
                host(self).use_model(path)

        self.app.push_screen(AskScreen("Path of a .gguf model file:",
                                       placeholder="~/models/model.gguf"), answered)

    def action_context(self) -> None:
        current = str(host(self).config.model.context)
        def answered(value: str | None) -> None:
            if value:
                self.set_option("context", value)

        self.app.push_screen(AskScreen("Context size in tokens (the model reloads):",
                                       value=current), answered)

    def action_adapter(self) -> None:
        current = host(self).config.model.adapter
        def answered(value: str | None) -> None:
            if (value or "") != current:  # unchanged: no reload
                self.set_option("adapter", value or "")

        self.app.push_screen(AskScreen("LoRA adapter (.gguf) path; empty for none:",
                                       value=current), answered)

    @work(thread=True, group="models-option", exit_on_error=False)
    def set_option(self, key: str, value: str) -> None:
        from deskmate.app.services.models import set_adapter, set_model_option

        app = host(self)
        if key == "adapter":
            # Checked before it is written: a file that is no adapter would leave the
            # config naming a model that cannot load. BadAdapter reaches the user as is.
            base = app.model.info.architecture if app.model is not None else ""
            config = set_adapter(value, app.config_path, base)
            shown = config.model.adapter or "none"
        else:
            if not value.strip().isdigit():
                raise ValueError(f"{value!r}: the context size is a number of tokens, e.g. 8192")
            # A ConfigError (e.g. below the minimum) reaches the app's worker-failure handler.
            config = set_model_option(key, int(value), app.config_path)
            shown = value
        self.app.post_message(ConfigChanged(config, f"{key} set to {shown}", reload_model=True))
