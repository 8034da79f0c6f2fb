"""The sessions screen: list, full-text search, resume, rename, delete, export.

Every SQLite call runs in a thread worker on its own connection and posts a typed
message back; the screen only draws what arrives.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Footer, Header, Input, Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from deskmate.app.ui.chat import ChatView
from deskmate.app.ui.dialogs import AskScreen, ConfirmScreen
from deskmate.app.ui.export_file import export
from deskmate.app.ui.host import host
from deskmate.app.ui.messages import SessionResumed
from deskmate.app.ui.sessions_table import SessionsTable, cells
from deskmate.app.ui.tables import TableScreen
from deskmate.app.ui.workers import post_fresh

if TYPE_CHECKING:
    from deskmate.app.llm.base import ChatModel
    from deskmate.app.services.conversation import Conversation
    from deskmate.app.store import SearchHit, SessionSummary

PREVIEW_CHARS = 6000
LIST_LIMIT = 500
INTERRUPTED = "(interrupted) "  # before the title of a session whose process died mid-turn


class SessionsScreen(TableScreen):
    """Recorded sessions, newest first.

    | Key | Action |
    | :- | :- |
    | enter | Resume the highlighted session. |
    | / | Search the text of every session. |
    | r | Rename. |
    | d | Delete (asks first). |
    | e | Export as JSONL (training format) or Markdown. |
    """

    BINDINGS = [
        Binding("enter", "resume", "Resume", id="session_resume"),
        Binding("slash", "search", "Search", id="session_search"),
        Binding("r", "rename", "Rename", id="session_rename"),
        Binding("d", "delete", "Delete", id="session_delete"),
        Binding("e", "export", "Export", id="session_export"),
    ]

    class Listed(Message):
        def __init__(self, rows: list[tuple[str, str, str, str, str, str]], query: str) -> None:
            self.rows = rows  # id, updated, title, model, turns, rating-or-snippet
            self.query = query
            super().__init__()

    class Previewed(Message):
        def __init__(self, session_id: str, markdown: str) -> None:
            self.session_id = session_id
            self.markdown = markdown
            super().__init__()

    class Changed(Message):
        """A session was renamed, deleted or exported."""

        def __init__(self, note: str, deleted: str = "") -> None:
            self.note = note
            self.deleted = deleted
            super().__init__()

    listed: list[tuple[str, str, str, str, str, str]] = []  # the rows drawn, as read

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="Search every session (full text) · Enter searches, empty "
                    "lists all", id="session-query")
        with Horizontal(classes="screen-body"):
            yield SessionsTable(id="sessions-table", cursor_type="row", zebra_stripes=True,
                                classes="screen-list")
            with VerticalScroll(classes="screen-detail"):
                yield Markdown("", id="session-preview")
        yield Static("", id="sessions-hint", classes="screen-hint")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.reload()

    def on_screen_resume(self) -> None:
        self.reload()

    def reload(self) -> None:
        self.load(self.query_one("#session-query", Input).value.strip())

    # ---------------------------------------------------------------- workers

    @work(thread=True, exclusive=True, group="sessions-list", exit_on_error=False)
    def load(self, query: str) -> None:
        from deskmate.app.store import (
            close_interrupted,
            get_summary,
            list_sessions,
            open_db,
            search,
        )
        from deskmate.app.store.export import when

        with open_db() as db:
            close_interrupted(db)  # a session a killed process left mid-turn says so
            if query:
                seen: dict[str, SearchHit] = {}  # each session once: its best hit
                for hit in search(db, query, limit=100):
                    seen.setdefault(hit.session_id, hit)
                rows = []
                for sid, hit in seen.items():
                    s = get_summary(db, sid)  # not get_session: that reads every message
                    rows.append((sid, when(s.updated_at), _title(s), s.model,
                                 str(s.turns), hit.snippet))
            else:
                rows = [(s.id, when(s.updated_at), _title(s), s.model,
                         str(s.turns), {1: "▲", -1: "▼"}.get(s.rating or 0, ""))
                        for s in list_sessions(db, limit=LIST_LIMIT)]
        post_fresh(self, self.Listed(rows, query))

    @work(thread=True, exclusive=True, group="sessions-preview", exit_on_error=False)
    def preview(self, session_id: str) -> None:
        from deskmate.app.store import get_session, open_db
        from deskmate.app.store.export import session_markdown

        with open_db() as db:
            text = session_markdown(get_session(db, session_id), fold_system=True)
        if len(text) > PREVIEW_CHARS:
            text = text[:PREVIEW_CHARS] + "\n\n… (export the session for the rest)"
        self.post_message(self.Previewed(session_id, text))

    @work(thread=True, exclusive=True, group="sessions-change", exit_on_error=False)
    def resume_session(self, conversation: Conversation, session_id: str,
                       model: ChatModel | None) -> None:
        """Read the session; the app goes on with it when ``SessionResumed`` arrives."""
        from deskmate.app.store import get_session

        resumed = conversation.load_session(session_id, model)
        detail = get_session(conversation.db, resumed.summary.id)
        self.app.post_message(SessionResumed(resumed, detail))

    @work(thread=True, exclusive=True, group="sessions-change", exit_on_error=False)
    def change(self, what: str, session_id: str, value: str = "") -> None:
        from deskmate.app.store import delete_session, open_db, rename_session

        with open_db() as db:
            if what == "rename":
                rename_session(db, session_id, value)
                note = f"renamed to {value}"
            elif what == "delete":
                delete_session(db, session_id)
                self.post_message(self.Changed(f"deleted {session_id}", deleted=session_id))
                return
            else:
                note = export(db, session_id, Path(value).expanduser())
        self.post_message(self.Changed(note))

    # ---------------------------------------------------------------- handlers

    def on_sessions_screen_listed(self, message: Listed) -> None:
        self.listed = message.rows
        self.query_one(SessionsTable).fit(self.listed)
        self.draw_rows()
        count = len(message.rows)
        what = f"{count} session{'s' if count != 1 else ''}"
        self.query_one("#sessions-hint", Static).update(
            f"{what} matching {message.query!r}" if message.query else
            f"{what} · Enter resumes · / searches · r renames · d deletes · e exports")
        if count == 0:
            self.query_one("#session-preview", Markdown).update("")

    def draw_rows(self) -> None:
        self.refill((row[0], cells(row)) for row in self.listed)

    def on_sessions_table_resized(self, _: SessionsTable.Resized) -> None:
        if self.query_one(SessionsTable).fit(self.listed):  # another width: drawn again
            self.draw_rows()

    @on(DataTable.RowHighlighted)
    def highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.preview(event.row_key.value)

    @on(DataTable.RowSelected)
    def selected_row(self, event: DataTable.RowSelected) -> None:
        self.action_resume()

    async def on_sessions_screen_previewed(self, message: Previewed) -> None:
        if message.session_id == self.selected:
            preview = self.query_one("#session-preview", Markdown)
            await preview.update(message.markdown)
            self.show_hit(preview)

    def show_hit(self, preview: Markdown) -> None:
        """Scroll the preview to the first block holding a searched word (the top when
        there is no search)."""
        words = [w.lower() for w in re.findall(r"\w+", self.query_one(
            "#session-query", Input).value) if w.upper() not in ("AND", "OR", "NOT", "NEAR")]
        for block in preview.query(MarkdownBlock) if words else ():
            text = (block.source or "").lower()
            if any(w in text for w in words):
                block.scroll_visible(top=True, animate=False)
                return
        self.query_one(".screen-detail", VerticalScroll).scroll_home(animate=False)

    def on_sessions_screen_changed(self, message: Changed) -> None:
        self.notify(message.note)
        if message.deleted and message.deleted == host(self).conversation.session_id:
            self.app.post_message(ChatView.NewSessionRequested())  # the app starts one
        self.reload()

    @on(Input.Submitted, "#session-query")
    def searched(self, event: Input.Submitted) -> None:
        self.load(event.value.strip())
        self.query_one(DataTable).focus()

    def action_search(self) -> None:
        self.query_one("#session-query", Input).focus()

    def action_resume(self) -> None:
        app = host(self)
        if (sid := self.selected) is None:
            return
        if app.chat.busy:
            self.notify("A turn is running: Esc cancels it first.", severity="warning")
            return
        self.resume_session(app.conversation, sid, app.model)

    def action_rename(self) -> None:
        if (sid := self.selected) is None:
            return
        title = str(self.query_one(DataTable).get_cell(sid, "title")).removeprefix(INTERRUPTED)

        def answered(value: str | None) -> None:
            if value:
                self.change("rename", sid, value)

        self.app.push_screen(AskScreen("New title:", value=title), answered)

    def action_delete(self) -> None:
        if (sid := self.selected) is None:
            return
        title = str(self.query_one(DataTable).get_cell(sid, "title"))

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.change("delete", sid)

        self.app.push_screen(
            ConfirmScreen(f"Delete the session “{title}” and everything recorded with it?",
                          yes="Delete"), confirmed)

    def action_export(self) -> None:
        if (sid := self.selected) is None:
            return

        def chosen(path: str | None) -> None:
            if not path:
                return
            if Path(path).expanduser().exists():  # a user's file is replaced only on a yes
                def replace(yes: bool | None) -> None:
                    if yes:
                        self.change("export", sid, path)

                self.app.push_screen(
                    ConfirmScreen(f"{path} exists. Replace it with this export?", yes="Replace"),
                    replace)
            else:
                self.change("export", sid, path)

        self.app.push_screen(
            AskScreen("Export to (.jsonl: OpenAI chat format for training; .md: readable):",
                      value=f"deskmate-{sid[:8]}.jsonl"), chosen)


def _title(summary: SessionSummary) -> str:
    title = summary.title or "(untitled)"
    return INTERRUPTED + title if summary.status == "interrupted" else title
