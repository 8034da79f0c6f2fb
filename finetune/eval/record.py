"""An eval run in SQLite: a ``runs`` row, the suite's ``tasks`` (and ``rubrics``), and
one ``eval_results`` row per task, mode and repeat, linked to the recorded session.

A suite task is stored once and reused by later runs while its prompt and checks stay
the same, so results of different runs (base vs adapter, code vs eager) line up on the
same ``task_id``. Suite tasks are ``heldout``: training never sees them.
"""

from __future__ import annotations

import json
import time
from typing import Any

from deskmate.app.store.db import Database, transaction
from deskmate.finetune.eval.suite import Suite, Task


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def start_run(db: Database, *, model: str, config: dict[str, Any]) -> int:
    with transaction(db) as conn:
        cursor = conn.execute("INSERT INTO runs (kind, base_model, config, status, started_at) "
                              "VALUES ('eval', ?, ?, 'running', ?)",
                              (model, _json(config), time.time()))
        return int(cursor.lastrowid)


def finish_run(db: Database, run_id: int, *, status: str,
               metrics: dict[str, Any]) -> None:
    with transaction(db) as conn:
        conn.execute("UPDATE runs SET status = ?, metrics = ?, finished_at = ? WHERE id = ?",
                     (status, _json(metrics), time.time(), run_id))


def task_row(db: Database, suite: Suite, task: Task) -> int:
    """The ``tasks`` id of this suite task, inserting it (and its rubric) when new."""
    suite_path = str(suite.path.resolve())
    checks = _json({**task.checks.as_dict(), "verify_py": task.verify is not None})
    with transaction(db) as conn:
        row = conn.execute(
            "SELECT id FROM tasks WHERE source = 'suite' AND prompt = ? AND checks = ? "
            "AND json_extract(metadata, '$.suite') = ? AND json_extract(metadata, '$.task') = ? "
            "ORDER BY id DESC LIMIT 1", (task.prompt, checks, suite_path, task.id)).fetchone()
        if row:
            task_id = int(row[0])
        else:
            metadata = {"suite": suite_path, "suite_name": suite.name, "task": task.id,
                        "servers": list(task.servers), "git_init": task.git_init,
                        "files": sorted(task.files)}
            task_id = int(conn.execute(
                "INSERT INTO tasks (source, prompt, split, checks, metadata, created_at) "
                "VALUES ('suite', ?, 'heldout', ?, ?, ?)",
                (task.prompt, checks, _json(metadata), time.time())).lastrowid)
        if task.rubric:
            criteria = _json([item.__dict__ for item in task.rubric])
            latest = conn.execute("SELECT version, criteria FROM rubrics WHERE task_id = ? "
                                  "ORDER BY version DESC LIMIT 1", (task_id,)).fetchone()
            if latest is None or latest[1] != criteria:
                conn.execute("INSERT INTO rubrics (task_id, version, criteria, created_by, "
                             "created_at) VALUES (?, ?, ?, 'suite', ?)",
                             (task_id, (latest[0] + 1) if latest else 1, criteria, time.time()))
    return task_id


def add_result(db: Database, run_id: int, task_id: int, result: Any) -> None:
    """One ``eval_results`` row from a ``TaskRun``."""
    details = {"task": result.task, "repeat": result.repeat, "status": result.status,
               "answer": result.answer, "error": result.error,
               "checks": [c.__dict__ for c in result.checks]}
    with transaction(db) as conn:
        conn.execute("INSERT INTO eval_results (run_id, task_id, session_id, mode, success, "
                     "score, prompt_tokens, model_calls, tool_calls, wall_s, details) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (run_id, task_id, result.session_id, result.mode,
                      None if result.success is None else int(result.success), result.score,
                      result.prompt_tokens, result.model_calls, result.tool_calls,
                      result.wall_s, _json(details)))
