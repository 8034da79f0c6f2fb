"""The database schema, as an ordered list of migrations.

``PRAGMA user_version`` holds the number of migrations applied. A migration is never
edited once released: change the schema by appending one. Each runs in its own
transaction (see ``migrate.py``), so a file is always at exactly one version.

Times are seconds since the epoch (REAL); JSON columns hold ``json.dumps`` text.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Migration:
    version: int  # user_version after this migration
    summary: str
    sql: str


_V1_SESSIONS = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    title TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    adapter TEXT NOT NULL DEFAULT '',
    mode TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'active',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX sessions_updated ON sessions(updated_at);

CREATE TABLE turns (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn INTEGER NOT NULL,
    user_message TEXT NOT NULL,
    started_at REAL NOT NULL,
    final_answer TEXT,
    answer_step INTEGER,
    status TEXT,
    steps INTEGER,
    model_calls INTEGER,
    tool_calls INTEGER,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    wall_s REAL,
    finished_at REAL,
    PRIMARY KEY (session_id, turn)
);

-- The exact transcript the model saw, append-only.
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content TEXT NOT NULL,
    tool_call_id TEXT,
    tool_calls TEXT,
    turn INTEGER,
    created_at REAL NOT NULL,
    UNIQUE (session_id, position)
);

-- One model call: its raw text and what it cost.
CREATE TABLE usage (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn INTEGER,
    step INTEGER NOT NULL,
    text TEXT NOT NULL,
    finish_reason TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    reused_tokens INTEGER,
    evaluated_tokens INTEGER,
    completion_tokens INTEGER NOT NULL,
    ttft_s REAL NOT NULL,
    decode_tps REAL NOT NULL,
    total_s REAL NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX usage_session ON usage(session_id);

-- A code cell and what it printed.
CREATE TABLE steps (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn INTEGER NOT NULL,
    step INTEGER NOT NULL,
    thought TEXT NOT NULL DEFAULT '',
    code TEXT NOT NULL DEFAULT '',
    output TEXT,
    status TEXT,
    duration_s REAL,
    started_at REAL NOT NULL,
    finished_at REAL,
    UNIQUE (session_id, turn, step)
);

CREATE TABLE tool_calls (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    call_id TEXT NOT NULL,
    turn INTEGER,
    step INTEGER,
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL DEFAULT '{}',
    annotations TEXT,
    approval TEXT,
    decided_by TEXT,
    decided_at REAL,
    result TEXT,
    structured TEXT,
    is_error INTEGER,
    duration_s REAL,
    started_at REAL NOT NULL,
    finished_at REAL,
    UNIQUE (session_id, call_id)
);

CREATE TABLE errors (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn INTEGER,
    kind TEXT NOT NULL,
    message TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX errors_session ON errors(session_id);

-- turn 0 rates the whole session; turn N rates the answer of turn N.
CREATE TABLE feedback (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn INTEGER NOT NULL DEFAULT 0,
    rating INTEGER NOT NULL CHECK (rating IN (-1, 1)),
    comment TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    PRIMARY KEY (session_id, turn)
);
"""

# External-content FTS5 tables: the text lives once, in messages / tool_calls; the
# triggers keep the index in step. 'rebuild' indexes rows written before this version.
# prefix='3' indexes 3-letter prefixes, so `fob*` does not merge the lists of every word
# starting with "fob" at query time (fts.py makes shorter prefixes whole words).
_V2_SEARCH = """
CREATE VIRTUAL TABLE messages_fts USING fts5(
    content, content='messages', content_rowid='id', tokenize='porter unicode61',
    prefix='3');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');

CREATE VIRTUAL TABLE tool_calls_fts USING fts5(
    server, tool, arguments, result, content='tool_calls', content_rowid='id',
    tokenize='porter unicode61', prefix='3');
CREATE TRIGGER tool_calls_fts_insert AFTER INSERT ON tool_calls BEGIN
    INSERT INTO tool_calls_fts(rowid, server, tool, arguments, result)
    VALUES (new.id, new.server, new.tool, new.arguments, coalesce(new.result, ''));
END;
CREATE TRIGGER tool_calls_fts_delete AFTER DELETE ON tool_calls BEGIN
    INSERT INTO tool_calls_fts(tool_calls_fts, rowid, server, tool, arguments, result)
    VALUES ('delete', old.id, old.server, old.tool, old.arguments, coalesce(old.result, ''));
END;
CREATE TRIGGER tool_calls_fts_update
AFTER UPDATE OF server, tool, arguments, result ON tool_calls BEGIN
    INSERT INTO tool_calls_fts(tool_calls_fts, rowid, server, tool, arguments, result)
    VALUES ('delete', old.id, old.server, old.tool, old.arguments, coalesce(old.result, ''));
    INSERT INTO tool_calls_fts(rowid, server, tool, arguments, result)
    VALUES (new.id, new.server, new.tool, new.arguments, coalesce(new.result, ''));
END;
INSERT INTO tool_calls_fts(tool_calls_fts) VALUES ('rebuild');
"""

# What finetune/ and eval need: tasks with rubrics, training and eval runs, the
# adapters they produce, and per-task results (linked to the session of the rollout).
_V3_LEARNING = """
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL CHECK (source IN ('session', 'generated', 'suite', 'user')),
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    prompt TEXT NOT NULL,
    split TEXT NOT NULL DEFAULT 'train' CHECK (split IN ('train', 'heldout')),
    checks TEXT,
    metadata TEXT,
    created_at REAL NOT NULL
);

CREATE TABLE rubrics (
    id INTEGER PRIMARY KEY,
    task_id INTEGER NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    version INTEGER NOT NULL DEFAULT 1,
    criteria TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT 'judge',
    created_at REAL NOT NULL,
    UNIQUE (task_id, version)
);

CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('finetune', 'eval')),
    base_model TEXT NOT NULL,
    config TEXT,
    status TEXT NOT NULL DEFAULT 'running',
    metrics TEXT,
    log_path TEXT,
    started_at REAL NOT NULL,
    finished_at REAL
);

CREATE TABLE adapters (
    id INTEGER PRIMARY KEY,
    run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL,
    name TEXT NOT NULL UNIQUE,
    base_model TEXT NOT NULL,
    path TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL
);

CREATE TABLE eval_results (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    task_id INTEGER REFERENCES tasks(id) ON DELETE SET NULL,
    session_id TEXT REFERENCES sessions(id) ON DELETE SET NULL,
    mode TEXT NOT NULL,
    adapter_id INTEGER REFERENCES adapters(id) ON DELETE SET NULL,
    success INTEGER,
    score REAL,
    prompt_tokens INTEGER,
    model_calls INTEGER,
    tool_calls INTEGER,
    wall_s REAL,
    details TEXT
);
CREATE INDEX eval_results_run ON eval_results(run_id);
"""

_V4_TASK_CHOICES = """
-- The user's own choice of which session prompts finetuning may train on, by the
-- task's key (finetune.tasks.task_key); a task with no row follows the default rule.
CREATE TABLE task_choices (
    key TEXT PRIMARY KEY,
    included INTEGER NOT NULL CHECK (included IN (0, 1)),
    updated_at REAL NOT NULL
);
"""

# The process that runs a session's turn (see owner.py): a session still 'active'
# whose process has ended was interrupted mid-turn, and the next start closes it
# (sessions.close_interrupted); one whose process lives is another deskmate's running
# turn, left alone. Sessions left active by a deskmate before this version name no
# process: they are closed here, the same way.
_V5_SESSION_OWNER = """
ALTER TABLE sessions ADD COLUMN owner_host TEXT;
ALTER TABLE sessions ADD COLUMN owner_pid INTEGER;
ALTER TABLE sessions ADD COLUMN owner_started TEXT;
INSERT INTO messages (session_id, position, role, content, turn, created_at)
SELECT s.id, m.position + 1, 'assistant',
       '[interrupted: deskmate stopped during this turn]', m.turn, s.updated_at
FROM sessions s JOIN messages m ON m.session_id = s.id
WHERE s.status = 'active' AND m.role != 'assistant'
  AND m.position = (SELECT max(position) FROM messages WHERE session_id = s.id);
UPDATE turns SET status = 'interrupted' WHERE status IS NULL
  AND session_id IN (SELECT id FROM sessions WHERE status = 'active');
UPDATE sessions SET status = 'interrupted' WHERE status = 'active';
"""

# Questions MCP servers asked the user during a tool call (elicitation), and the
# answers: recorded like approvals. `requested` is the form's JSON Schema, or the URL
# the user was asked to open; `action` stays NULL until answered.
_V6_ELICITATIONS = """
CREATE TABLE elicitations (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    call_id TEXT NOT NULL,
    turn INTEGER,
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('form', 'url')),
    message TEXT NOT NULL,
    requested TEXT NOT NULL,
    action TEXT CHECK (action IN ('accept', 'decline', 'cancel')),
    content TEXT,
    decided_by TEXT,
    reason TEXT,
    asked_at REAL NOT NULL,
    answered_at REAL
);
CREATE INDEX elicitations_call ON elicitations(session_id, call_id);
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions, transcript, steps, tool calls, usage, feedback", _V1_SESSIONS),
    Migration(2, "full-text search over messages and tool calls", _V2_SEARCH),
    Migration(3, "tasks, rubrics, runs, adapters, eval results", _V3_LEARNING),
    Migration(4, "the user's choice of training tasks", _V4_TASK_CHOICES),
    Migration(5, "the process that runs a session's turn", _V5_SESSION_OWNER),
    Migration(6, "questions servers asked during tool calls", _V6_ELICITATIONS),
)

SCHEMA_VERSION = MIGRATIONS[-1].version
