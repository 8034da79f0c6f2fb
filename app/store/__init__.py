"""Sessions in SQLite: the recorder, reads, search, resume and export; and the tables
of the learning loop. Every SQL statement of deskmate is in this package.

The modules, each with one job: ``schema`` (the ordered migrations), ``migrate``
(applying them, with a backup), ``db`` (opening the file), ``recorder`` (agent events
→ rows), ``sessions`` (read, rename, rate, delete, resume; close the sessions a killed
process left active; the tool calls training may replay), ``owner`` (which process
runs a turn, and whether it is gone), ``fts`` (search), ``export`` (JSONL, Markdown),
``tasks`` (training and eval tasks, versioned rubrics, the user's task choices),
``runs`` (finetune and eval runs, adapters), ``evals`` (per-task eval results),
``records`` (the typed results).
"""

from deskmate.app.store.db import Database, db_path, open_db, transaction
from deskmate.app.store.errors import SessionNotFound, StoreError
from deskmate.app.store.fts import search
from deskmate.app.store.recorder import Recorder
from deskmate.app.store.records import ResumedSession, SearchHit, SessionDetail, SessionSummary
from deskmate.app.store.sessions import (
    close_interrupted,
    delete_session,
    get_session,
    get_summary,
    list_sessions,
    rate,
    rename_session,
    resolve_id,
    resume,
)

__all__ = [
    "Database",
    "Recorder",
    "ResumedSession",
    "SearchHit",
    "SessionDetail",
    "SessionNotFound",
    "SessionSummary",
    "StoreError",
    "close_interrupted",
    "db_path",
    "delete_session",
    "get_session",
    "get_summary",
    "list_sessions",
    "open_db",
    "rate",
    "rename_session",
    "resolve_id",
    "resume",
    "search",
    "transaction",
]
