"""An eval run in SQLite: a ``runs`` row, the suite's ``tasks`` (and ``rubrics``), and
one ``eval_results`` row per task, mode and repeat, linked to the recorded session.

A suite task is stored once and reused by later runs while its prompt and checks stay
the same, so results of different runs (base vs adapter, code vs eager) line up on the
same ``task_id``. Suite tasks are ``heldout``: training never sees them. The SQL is the
store's (``app.store.runs``, ``tasks``, ``evals``); this module says what goes in it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from deskmate.app.store import evals, runs
from deskmate.app.store.tasks import NewTask, save_suite_task
from deskmate.finetune.eval.suite import Suite, Task

if TYPE_CHECKING:
    from deskmate.app.store.db import Database
    from deskmate.finetune.eval.results import TaskRun


def _json(value: Any) -> str:
    # sorted keys: a suite task is found again by comparing its checks as text
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def start_run(db: Database, *, model: str, config: dict[str, Any]) -> int:
    return runs.start_run(db, kind="eval", base_model=model, config_json=_json(config))


def finish_run(db: Database, run_id: int, *, status: str,
               metrics: dict[str, Any]) -> None:
    runs.finish_run(db, run_id, status=status, metrics_json=_json(metrics))


def task_row(db: Database, suite: Suite, task: Task) -> int:
    """The ``tasks`` id of this suite task, inserting it (and its rubric) when new."""
    suite_path = str(suite.path.resolve())
    metadata = {"suite": suite_path, "suite_name": suite.name, "task": task.id,
                "servers": list(task.servers), "git_init": task.git_init,
                "files": sorted(task.files)}
    criteria = _json([item.__dict__ for item in task.rubric]) if task.rubric else None
    return save_suite_task(db, NewTask(
        "suite", task.prompt, "heldout",
        _json({**task.checks.as_dict(), "verify_py": task.verify is not None}),
        _json(metadata), criteria), suite=suite_path, name=task.id)


def add_result(db: Database, run_id: int, task_id: int, result: TaskRun) -> None:
    """One ``eval_results`` row from a ``TaskRun``."""
    details = {"task": result.task, "repeat": result.repeat, "status": result.status,
               "answer": result.answer, "error": result.error,
               "checks": [c.__dict__ for c in result.checks]}
    evals.add_result(db, evals.EvalResult(
        run_id, task_id, result.mode, result.success, result.score, result.model_calls,
        result.tool_calls, result.wall_s, _json(details), session_id=result.session_id,
        prompt_tokens=result.prompt_tokens))
