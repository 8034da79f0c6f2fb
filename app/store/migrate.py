"""Bringing a database file to the current schema version.

Before the first migration of a file that already holds data, the whole file is copied
(SQLite's online backup, so a concurrent writer cannot tear it) next to it as
``deskmate.db.bak-v<old>-<time>``. The pending migrations then run in one IMMEDIATE
transaction that re-reads the version under the write lock, so two processes opening an
old file at once apply every migration exactly once, and a failed one leaves the file
at the version it had.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from deskmate.app.store.errors import StoreError
from deskmate.app.store.schema import MIGRATIONS, SCHEMA_VERSION


def read_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, path: Path) -> Path | None:
    """Apply the pending migrations; returns the backup written, if any."""
    if _checked(read_version(conn), path) == SCHEMA_VERSION:
        return None
    # Everything below decides on what it read, so it all runs under the write lock:
    # read outside it, a second connection creating the same new file saw version 0
    # beside the first one's tables ("not a deskmate database"), or version 1 of 4.
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _checked(read_version(conn), path)
        if version == 0 and _user_tables(conn):
            raise StoreError(f"{path} is a SQLite file but not a deskmate database; move "
                             "it away or set DESKMATE_HOME to use another data folder.")
        backup = backup_file(path, version) if 0 < version < SCHEMA_VERSION else None
        for migration in MIGRATIONS:
            if migration.version > version:
                for statement in split_statements(migration.sql):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {migration.version}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return backup


def _checked(version: int, path: Path) -> int:
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} was written by a newer deskmate (schema version {version}; this one "
            f"knows up to {SCHEMA_VERSION}). Upgrade deskmate, or set DESKMATE_HOME to "
            "use another data folder.")
    return version


def backup_file(path: Path, version: int) -> Path:
    """Copy the file as last committed, through a connection of its own: SQLite refuses
    a backup from the connection that holds the write lock (and Python then waits
    forever), while in WAL a reader beside the writer sees the file as it was."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bak-v{version}-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.bak-v{version}-{stamp}-{n}")
    source, dest = sqlite3.connect(path, timeout=10), sqlite3.connect(target)
    try:
        source.backup(dest)
        dest.execute("PRAGMA journal_mode = DELETE")  # one self-contained file, no -wal
    except sqlite3.Error as exc:
        target.unlink(missing_ok=True)
        raise StoreError(f"{path}: could not back up to {target} before upgrading ({exc}); "
                         "free some disk space and try again") from exc
    finally:
        source.close()
        dest.close()
    return target


def split_statements(sql: str) -> list[str]:
    """Split a script into statements (triggers keep their inner semicolons).

    ``executescript`` would do this, but it commits first and so cannot run inside our
    transaction.
    """
    statements, buffer = [], ""
    for piece in sql.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if _strip_comments(buffer).strip(" \n;"):
                statements.append(buffer.strip())
            buffer = ""
    if _strip_comments(buffer).strip(" \n;"):
        statements.append(buffer.strip())
    return statements


def _strip_comments(sql: str) -> str:
    return "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))


def _user_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                        "AND name NOT LIKE 'sqlite_%'").fetchall()
    return [r[0] for r in rows]
