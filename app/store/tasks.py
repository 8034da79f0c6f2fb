"""Training and eval tasks: ``tasks`` with versioned ``rubrics``, the user's
``task_choices``, and the rated turns session tasks are chosen from.

JSON columns arrive as text: the caller's format is kept byte for byte, because a task
is found again by comparing it (a suite task by its checks, a rubric by its criteria).
A rubric is versioned: storing criteria that differ from the newest version adds one.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

from deskmate.app.store.db import Database, transaction
from deskmate.app.store.records import RatedTurn, StoredTask


@dataclass(frozen=True)
class NewTask:
    """A task to store (or to find again) with its rubric."""

    source: str  # session, generated, suite, user
    prompt: str
    split: str  # train or heldout
    checks_json: str
    metadata_json: str
    criteria_json: str | None  # the rubric's criteria; None: store no rubric
    session_id: str | None = None
    key: str = ""  # save_tasks finds a task again by source and key (its metadata.key)


_RATED_TURNS = """
SELECT t.session_id, t.turn, t.user_message, t.final_answer,
       ft.rating AS turn_rating, fs.rating AS session_rating
FROM turns t JOIN sessions s ON s.id = t.session_id
LEFT JOIN feedback ft ON ft.session_id = t.session_id AND ft.turn = t.turn
LEFT JOIN feedback fs ON fs.session_id = t.session_id AND fs.turn = 0
WHERE s.title NOT LIKE 'eval %' AND s.title NOT LIKE 'finetune %'
ORDER BY t.started_at
"""


def rated_turns(db: Database) -> list[RatedTurn]:
    """Every turn of the user's own sessions (eval and finetune sessions are not the
    user's: their titles start with ``eval`` / ``finetune``), oldest first."""
    return [RatedTurn(*row) for row in db.execute(_RATED_TURNS).fetchall()]


def task_choices(db: Database) -> dict[str, bool]:
    """The user's choices: task key → included."""
    return {key: bool(included) for key, included in
            db.execute("SELECT key, included FROM task_choices").fetchall()}


def set_task_choice(db: Database, key: str, included: bool) -> None:
    with transaction(db) as conn:
        conn.execute("INSERT INTO task_choices (key, included, updated_at) VALUES (?, ?, ?) "
                     "ON CONFLICT(key) DO UPDATE SET included = excluded.included, "
                     "updated_at = excluded.updated_at", (key, int(included), time.time()))


def save_tasks(db: Database, tasks: Sequence[NewTask], created_by: str = "judge"
               ) -> list[int]:
    """Store the tasks in one transaction; their ids, in order.

    A task with the same source and key (``metadata.key``) is reused, taking the new
    split and checks; its rubric gets a new version when the criteria changed.
    """
    ids = []
    with transaction(db) as conn:
        for task in tasks:
            row = conn.execute("SELECT id FROM tasks WHERE source = ? AND "
                               "json_extract(metadata, '$.key') = ? ORDER BY id DESC LIMIT 1",
                               (task.source, task.key)).fetchone()
            if row:
                task_id = int(row[0])
                conn.execute("UPDATE tasks SET split = ?, checks = ? WHERE id = ?",
                             (task.split, task.checks_json, task_id))
            else:
                task_id = _insert(conn, task)
            if task.criteria_json is not None:
                _add_rubric(conn, task_id, task.criteria_json, created_by)
            ids.append(task_id)
    return ids


def save_suite_task(db: Database, task: NewTask, *, suite: str, name: str) -> int:
    """The id of suite ``suite``'s task ``name``, inserting it (and its rubric) unless a
    task with the same prompt and checks is stored already; results of different runs
    then line up on one id."""
    with transaction(db) as conn:
        row = conn.execute(
            "SELECT id FROM tasks WHERE source = 'suite' AND prompt = ? AND checks = ? "
            "AND json_extract(metadata, '$.suite') = ? AND json_extract(metadata, '$.task') = ? "
            "ORDER BY id DESC LIMIT 1", (task.prompt, task.checks_json, suite, name)).fetchone()
        task_id = int(row[0]) if row else _insert(conn, task)
        if task.criteria_json is not None:
            _add_rubric(conn, task_id, task.criteria_json, "suite")
    return task_id


def load_task(db: Database, task_id: int) -> StoredTask | None:
    """A stored task with its newest rubric; None when there is no such task."""
    row = db.execute(
        "SELECT t.prompt, t.source, t.split, t.session_id, t.checks, t.metadata, "
        "(SELECT criteria FROM rubrics r WHERE r.task_id = t.id ORDER BY version DESC "
        "LIMIT 1) FROM tasks t WHERE t.id = ?", [task_id]).fetchone()
    if row is None:
        return None
    prompt, source, split, session_id, checks, metadata, criteria = row
    return StoredTask(task_id, prompt, source, split, session_id, json.loads(checks or "{}"),
                      json.loads(metadata or "{}"), criteria)


def _insert(conn: sqlite3.Connection, task: NewTask) -> int:
    cursor = conn.execute(
        "INSERT INTO tasks (source, session_id, prompt, split, checks, metadata, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (task.source, task.session_id, task.prompt, task.split, task.checks_json,
         task.metadata_json, time.time()))
    return int(cursor.lastrowid or 0)


def _add_rubric(conn: sqlite3.Connection, task_id: int, criteria_json: str,
                created_by: str) -> None:
    """The next rubric version of the task, unless its newest already has these criteria."""
    latest = conn.execute("SELECT version, criteria FROM rubrics WHERE task_id = ? "
                          "ORDER BY version DESC LIMIT 1", (task_id,)).fetchone()
    if latest is None or latest[1] != criteria_json:
        conn.execute("INSERT INTO rubrics (task_id, version, criteria, created_by, created_at) "
                     "VALUES (?, ?, ?, ?, ?)",
                     (task_id, (latest[0] + 1) if latest else 1, criteria_json, created_by,
                      time.time()))
