"""Schema migrations on real files: an old file is backed up, upgraded, and loses nothing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from deskmate.app.store import StoreError, get_session, open_db, search
from deskmate.app.store.migrate import split_statements
from deskmate.app.store.schema import MIGRATIONS, SCHEMA_VERSION

# A file as the first release wrote it (schema version 1), frozen here on purpose: if
# anyone edits migration 1 instead of appending a migration, the upgraded file and a
# fresh one stop matching and test_upgraded_schema_equals_a_fresh_one fails.
V1_FIXTURE = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, title TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '', adapter TEXT NOT NULL DEFAULT '',
  mode TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT 'active',
  created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE INDEX sessions_updated ON sessions(updated_at);
CREATE TABLE turns (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn INTEGER NOT NULL, user_message TEXT NOT NULL, started_at REAL NOT NULL,
  final_answer TEXT, answer_step INTEGER, status TEXT, steps INTEGER, model_calls INTEGER,
  tool_calls INTEGER, prompt_tokens INTEGER, completion_tokens INTEGER, wall_s REAL,
  finished_at REAL, PRIMARY KEY (session_id, turn));
CREATE TABLE messages (id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
  content TEXT NOT NULL, tool_call_id TEXT, tool_calls TEXT, turn INTEGER,
  created_at REAL NOT NULL, UNIQUE (session_id, position));
CREATE TABLE usage (id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, turn INTEGER,
  step INTEGER NOT NULL, text TEXT NOT NULL, finish_reason TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, reused_tokens INTEGER, evaluated_tokens INTEGER,
  completion_tokens INTEGER NOT NULL, ttft_s REAL NOT NULL, decode_tps REAL NOT NULL,
  total_s REAL NOT NULL, at REAL NOT NULL);
CREATE INDEX usage_session ON usage(session_id);
CREATE TABLE steps (id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn INTEGER NOT NULL, step INTEGER NOT NULL, thought TEXT NOT NULL DEFAULT '',
  code TEXT NOT NULL DEFAULT '', output TEXT, status TEXT, duration_s REAL,
  started_at REAL NOT NULL, finished_at REAL, UNIQUE (session_id, turn, step));
CREATE TABLE tool_calls (id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  call_id TEXT NOT NULL, turn INTEGER, step INTEGER, server TEXT NOT NULL,
  tool TEXT NOT NULL, arguments TEXT NOT NULL DEFAULT '{}', annotations TEXT,
  approval TEXT, decided_by TEXT, decided_at REAL, result TEXT, structured TEXT,
  is_error INTEGER, duration_s REAL, started_at REAL NOT NULL, finished_at REAL,
  UNIQUE (session_id, call_id));
CREATE TABLE errors (id INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, turn INTEGER,
  kind TEXT NOT NULL, message TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX errors_session ON errors(session_id);
CREATE TABLE feedback (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  turn INTEGER NOT NULL DEFAULT 0, rating INTEGER NOT NULL CHECK (rating IN (-1, 1)),
  comment TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL, PRIMARY KEY (session_id, turn));

INSERT INTO sessions VALUES ('old1', 'an old session', 'tiny', '', 'code', 'answered', 1, 2);
INSERT INTO messages (session_id, position, role, content, created_at) VALUES
  ('old1', 0, 'user', 'where is the giraffe file?', 1),
  ('old1', 1, 'assistant', 'in the zoo folder', 2);
INSERT INTO tool_calls (session_id, call_id, server, tool, arguments, result, started_at)
  VALUES ('old1', 'c1', 'fs', 'find', '{"name": "giraffe"}', 'zoo/giraffe.txt', 1);
INSERT INTO feedback VALUES ('old1', 0, 1, '', 3);
PRAGMA user_version = 1;
"""


def write_v1(path):
    conn = sqlite3.connect(path)
    conn.executescript(V1_FIXTURE)
    conn.close()


def schema_of(conn) -> dict[str, list[tuple]]:
    tables = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")]
    shape = {t: conn.execute(f"PRAGMA table_xinfo('{t}')").fetchall() for t in tables}
    shape["__indexes_triggers"] = conn.execute(
        "SELECT type, name, tbl_name FROM sqlite_master WHERE type IN ('index', 'trigger') "
        "ORDER BY name").fetchall()
    return shape


def test_v1_file_is_backed_up_then_upgraded(tmp_path):
    path = tmp_path / "deskmate.db"
    write_v1(path)
    db = open_db(path)

    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    (backup,) = tmp_path.glob("deskmate.db.bak-v1-*")
    old = sqlite3.connect(backup)
    assert old.execute("PRAGMA user_version").fetchone()[0] == 1
    assert old.execute("SELECT count(*) FROM messages").fetchone()[0] == 2
    assert old.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    old.close()

    d = get_session(db, "old1")
    assert [m.content for m in d.messages] == ["where is the giraffe file?",
                                               "in the zoo folder"]
    assert d.summary.rating == 1 and d.tool_calls[0].result == "zoo/giraffe.txt"
    # rows written before search existed are indexed by the upgrade
    assert {h.kind for h in search(db, "giraffe")} == {"message", "tool_call"}
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    db.close()
    open_db(path).close()  # already current: no second backup
    assert len(list(tmp_path.glob("deskmate.db.bak-*"))) == 1


def test_upgraded_schema_equals_a_fresh_one(tmp_path):
    write_v1(tmp_path / "old.db")
    upgraded, fresh = open_db(tmp_path / "old.db"), open_db(tmp_path / "new.db")
    assert schema_of(upgraded.conn) == schema_of(fresh.conn)


def test_a_failed_migration_leaves_the_old_version(tmp_path):
    path = tmp_path / "deskmate.db"
    write_v1(path)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE messages_fts (x)")  # blocks migration 2
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=str(path)):
        open_db(path)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 2
    assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'tool_calls_fts%'"
                        ).fetchone()[0] == 0
    assert list(tmp_path.glob("deskmate.db.bak-v1-*"))


def test_two_processes_upgrading_at_once_apply_each_migration_once(tmp_path):
    path = tmp_path / "deskmate.db"
    write_v1(path)
    code = ("import sys; from deskmate.app.store import open_db; "
            "db = open_db(sys.argv[1]); print(db.execute('PRAGMA user_version').fetchone()[0])")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert {o.strip() for o, _ in outs} == {str(SCHEMA_VERSION)}
    db = open_db(path)
    assert db.execute("SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'giraffe'"
                      ).fetchone()[0] == 1


def test_threads_creating_a_new_file_at_once_all_open_it(tmp_path):
    # The app and its screens' workers open the database in threads; on a first start
    # they create it together. Before, about one trial in ten failed: "database is
    # locked" from the switch to WAL, or "not a deskmate database" from a half-read state.
    def open_close(path):
        open_db(path).close()
        return read_version_of(path)

    for trial in range(40):
        path = tmp_path / f"{trial}.db"
        with ThreadPoolExecutor(8) as pool:
            assert list(pool.map(open_close, [path] * 8)) == [SCHEMA_VERSION] * 8
        assert not list(tmp_path.glob(f"{trial}.db.bak-*"))  # a new file needs no backup


def read_version_of(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA user_version").fetchone()[0]
    finally:
        conn.close()


def test_migrations_are_numbered_in_order():
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_split_statements_keeps_triggers_whole():
    sql = ("-- a comment; with a semicolon\nCREATE TABLE a (x);\n"
           "CREATE TRIGGER t AFTER INSERT ON a BEGIN\n  SELECT 1;\n  SELECT 2;\nEND;\n")
    parts = split_statements(sql)
    assert len(parts) == 2 and parts[1].startswith("CREATE TRIGGER") and "SELECT 2" in parts[1]
