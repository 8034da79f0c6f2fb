"""Opening the sessions database: one SQLite file, WAL, foreign keys, migrated.

WAL lets another process (a finetune run, ``deskmate sessions`` in a second terminal)
read while the app writes. ``synchronous=NORMAL`` is what WAL is designed for: a
committed transaction survives the process being killed (the OS holds the pages); only
a power cut can lose the last few commits, never corrupt the file.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deskmate.app import paths
from deskmate.app.store.errors import StoreError
from deskmate.app.store.migrate import migrate, read_version
from deskmate.app.store.schema import SCHEMA_VERSION

BUSY_TIMEOUT_MS = 10_000


@dataclass(frozen=True)
class Database:
    """An open sessions database: one connection in autocommit mode, written to only
    inside ``transaction``. ``with open_db() as db:`` closes it at the end of the block.

    Our own few lines rather than sqlite_utils.Database, whose import pulls in pandas
    (seconds at start-up) for features the store does not use.
    """

    conn: sqlite3.Connection

    def execute(self, sql: str,
                parameters: Sequence[Any] | Mapping[str, Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, parameters)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def db_path() -> Path:
    return paths.data_dir() / "deskmate.db"


def open_db(path: Path | None = None, *, readonly: bool = False) -> Database:
    """Open (creating and migrating when needed) the database at ``path``.

    ``readonly`` opens an existing file without ever writing to it (another process's
    view); it refuses a missing file or one at another schema version.
    """
    path = Path(path) if path is not None else db_path()
    try:
        if readonly:
            if not path.exists():
                raise StoreError(f"{path}: no sessions database here yet")
            conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True,
                                   timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                   check_same_thread=False)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000,
                                   isolation_level=None, check_same_thread=False)
        try:
            _configure(conn, readonly)
            if readonly:
                _check_version(conn, path)
            else:
                migrate(conn, path)
        except BaseException:
            conn.close()
            raise
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{path}: cannot open the sessions database ({exc}). If the file "
                         "is damaged, move it away and deskmate starts a new one.") from exc
    except OSError as exc:
        raise StoreError(f"{path}: cannot create the sessions database ({exc}); "
                         "check the folder's permissions or set DESKMATE_HOME") from exc
    return Database(conn)


def _configure(conn: sqlite3.Connection, readonly: bool) -> None:
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys = ON")
    # A REPLACE that deletes a row then fires its delete trigger, so the FTS index stays
    # in step (sqlite_utils, which opened the file before, turned this on too).
    conn.execute("PRAGMA recursive_triggers = ON")
    if not readonly:
        mode = _enable_wal(conn)
        if mode.lower() != "wal":
            raise sqlite3.DatabaseError(f"journal mode is {mode}, WAL could not be enabled")
        conn.execute("PRAGMA synchronous = NORMAL")


def _enable_wal(conn: sqlite3.Connection) -> str:
    """Switch to WAL, waiting out other connections as busy_timeout would.

    The switch needs the file to itself, and SQLite answers "database is locked" at once
    instead of calling the busy handler: two threads (the app and a screen's worker)
    opening a new database together failed about one time in ten.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def _check_version(conn: sqlite3.Connection, path: Path) -> None:
    version = read_version(conn)
    if version != SCHEMA_VERSION:
        raise StoreError(f"{path}: schema version {version}, this deskmate reads "
                         f"{SCHEMA_VERSION}; open it once with this deskmate (not read-only) "
                         "to upgrade it, or upgrade deskmate")


@contextmanager
def transaction(db: Database) -> Iterator[sqlite3.Connection]:
    """A short write transaction; IMMEDIATE takes the write lock up front so two writers
    wait on busy_timeout instead of failing on a lock upgrade."""
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
