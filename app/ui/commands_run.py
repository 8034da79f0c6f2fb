"""What the chat's slash commands do (``app.ui.commands`` lists and reads them).

A mixin of ``ChatView``, as ``Compacting`` is: each command either acts on the view
(``/export``, ``/retry``, ``/edit``, ``/model`` alone) or asks the app with a message
(``/model NAME``, ``/new``, ``/help``). The messages keep the ``chat_view`` namespace,
so the app's handlers are ``on_chat_view_…`` whichever class declares them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from deskmate.app.ui.commands import Typed, hint, read_command
from deskmate.app.ui.host import host

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from deskmate.app.services.conversation import Conversation
    from deskmate.app.services.retry import Retry
    from deskmate.app.ui.prompt import PromptArea
    from deskmate.app.ui.transcript import Transcript


class RunsCommands(Widget):
    """Needs of the view, besides a widget's: ``conversation``, ``transcript``,
    ``start_turn`` and ``start_compaction``; ``busy`` is the view's. It goes after the
    view's first widget base (which gives the view its CSS type name)."""

    busy = reactive(False)
    conversation: Conversation
    transcript: Transcript

    if TYPE_CHECKING:  # the view's own, declared here for the type checker only
        def start_turn(self, text: str, *, retry: bool = False) -> None: ...

        def start_compaction(self, auto: bool = False) -> None: ...

    class SwitchModel(Message, namespace="chat_view"):
        """The user typed ``/model SPEC``."""

        def __init__(self, spec: str) -> None:
            self.spec = spec
            super().__init__()

    class NewSessionRequested(Message, namespace="chat_view"):
        """A fresh session is wanted: the user typed ``/new``, or deleted the current
        session on the sessions screen."""

    class HelpRequested(Message, namespace="chat_view"):
        """The user typed ``/help``."""

    class ModelsListed(Message, namespace="chat_view"):
        """The models to choose from, one Markdown line each, for ``/model`` alone."""

        def __init__(self, lines: list[str]) -> None:
            self.lines = lines
            super().__init__()

    class Retrying(Message, namespace="chat_view"):
        """``/retry`` set the last turn aside; its prompt runs again."""

        def __init__(self, retry: Retry) -> None:
            self.retry = retry
            super().__init__()

    class Said(Message, namespace="chat_view"):
        """A worker's result for the user: a toast (``severity`` as ``notify``'s)."""

        def __init__(self, text: str, title: str = "",
                     severity: SeverityLevel = "information") -> None:
            self.text, self.title = text, title
            self.severity: SeverityLevel = severity
            super().__init__()

    def run_command(self, command: Typed, area: PromptArea, typed: str) -> None:
        """Do ``command``; ``typed`` is the line as sent from ``area``, put back there
        when the command is unknown (to correct it)."""
        if command.name == "/model":
            if command.argument:
                self.post_message(self.SwitchModel(command.argument))
            else:
                self.list_models(host(self).config.model.name)
        elif command.name in ("/new", "/clear"):
            self.post_message(self.NewSessionRequested())
        elif command.name == "/help":
            self.post_message(self.HelpRequested())
        elif command.name == "/sessions":
            self.app.switch_mode("sessions")
        elif command.name == "/export":
            self.export(command.argument)
        elif command.name == "/retry":
            self.retry()
        elif command.name == "/edit":
            self.edit_last(area)
        elif command.name == "/compact":
            self.start_compaction()
        else:
            if not area.text:  # back in the prompt, to correct
                area.load_text(typed)
            self.notify(f"{command.name} is not a command. {hint()}", title="Not sent",
                        severity="warning", timeout=10)

    def export(self, argument: str) -> None:
        """``/export [PATH]``: this session as Markdown; an existing file is kept."""
        session = self.conversation.session_id
        if session is None:
            self.notify("Nothing is recorded in this session yet: /export writes it once "
                        "a prompt was answered.", title="Not exported", severity="warning")
            return
        path = Path(argument or f"deskmate-{session}.md").expanduser().absolute()
        if path.exists():
            self.notify(f"{path} exists and was left as it is: /export PATH names another "
                        "file.", title="Not exported", severity="warning", timeout=10)
            return
        self.write_export(self.conversation, session, path)

    @work(thread=True, group="store", exit_on_error=False)
    def write_export(self, conversation: Conversation, session: str, path: Path) -> None:
        from deskmate.app.ui.export_file import export

        try:
            said = self.Said(export(conversation.db, session, path).capitalize(), "Exported")
        except ValueError as exc:
            said = self.Said(str(exc), "Not exported", "error")
        self.post_message(said)

    def on_chat_view_said(self, message: Said) -> None:
        message.stop()
        self.notify(message.text, title=message.title, severity=message.severity,
                    timeout=10)

    def retry(self) -> None:
        """``/retry``: the last prompt again, its answer set aside (``services.retry``)."""
        if self.busy:
            self.notify("A turn is running: Esc cancels it, then /retry.", severity="warning")
        elif self.conversation.runtime is None:
            self.notify("No model is ready yet (F4 opens the models).", severity="warning")
        else:
            self.start_turn("", retry=True)

    def on_chat_view_retrying(self, message: Retrying) -> None:
        from deskmate.app.ui.blocks import Notice, UserBlock

        message.stop()
        retry = message.retry
        where = (f" The earlier answer stays in session {retry.kept_in}; this one is "
                 f"recorded in its branch {retry.branch} (\"retry: …\" in Sessions)."
                 if retry.branch else "")
        self.transcript.add(Notice("**Retry:** the last answer is set aside; the model "
                                   "answers the same prompt again." + where, "info"),
                            UserBlock(retry.prompt))

    def edit_last(self, area: PromptArea) -> None:
        """``/edit``: the last prompt back in the input (sent again as a new turn)."""
        last = next((t for t in reversed(area.sent) if read_command(t.strip()) is None), None)
        if last is None:
            self.notify("No prompt to edit yet.", severity="warning")
            return
        area.load_text(last)
        area.move_cursor(area.document.end)
        area.focus()

    @work(thread=True, exclusive=True, group="model-list", exit_on_error=False)
    def list_models(self, active: str) -> None:
        from deskmate.app.services.models import known_models, local_model_files

        lines = []
        for model in known_models(active):
            where = "on this machine" if model.path else (
                f"{model.size_mb:,} MB to download" if model.size_mb else "to download")
            mark = " **(active)**" if model.active else ""
            lines.append(f"- `{model.name}`{mark}: {model.description} · {where}")
        for path in local_model_files(active):
            mark = " **(active)**" if str(path.resolve()) == active else ""
            lines.append(f"- `{path}`{mark}: a local file")
        self.post_message(self.ModelsListed(lines))

    def on_chat_view_models_listed(self, message: ModelsListed) -> None:
        from deskmate.app.ui.blocks import Notice

        message.stop()
        app = host(self)
        loaded = app.model.info.name if app.model is not None else "none"
        chosen = app.config.model.name or "(none chosen)"
        self.transcript.add(Notice(f"**Model:** {chosen} · loaded: {loaded}\n\n"
                                   + "\n".join(message.lines) + "\n\n`/model NAME` or "
                                   "`/model PATH` makes one the model; F4 opens the models "
                                   "screen.", "info"))
