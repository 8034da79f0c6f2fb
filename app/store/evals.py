"""Per-task eval results (``eval_results``), one row per task, mode and repeat of an
eval run, linked to the task, the recorded session and the adapter served."""

from __future__ import annotations

from dataclasses import dataclass

from deskmate.app.store.db import Database, transaction


@dataclass(frozen=True)
class EvalResult:
    run_id: int
    task_id: int | None
    mode: str  # code or eager
    success: bool | None  # None: the task has no deterministic checks
    score: float | None
    model_calls: int | None
    tool_calls: int | None
    wall_s: float | None
    details_json: str  # the caller's JSON: answer, status, checks, error...
    session_id: str | None = None  # the recorded session of the run
    adapter_id: int | None = None  # the adapter served; None: the base model
    prompt_tokens: int | None = None


def add_result(db: Database, result: EvalResult) -> None:
    with transaction(db) as conn:
        conn.execute(
            "INSERT INTO eval_results (run_id, task_id, session_id, mode, adapter_id, "
            "success, score, prompt_tokens, model_calls, tool_calls, wall_s, details) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (result.run_id, result.task_id, result.session_id, result.mode,
             result.adapter_id, None if result.success is None else int(result.success),
             result.score, result.prompt_tokens, result.model_calls, result.tool_calls,
             result.wall_s, result.details_json))


def tie_to_finetune_run(db: Database, eval_run: int, *, finetune_run: int | None,
                        which: str, adapter_id: int | None) -> None:
    """Mark eval run ``eval_run`` as finetune run ``finetune_run``'s ``which`` side
    (base or adapter) of its before/after, served with ``adapter_id``."""
    with transaction(db) as conn:
        conn.execute("UPDATE runs SET config = json_set(config, '$.finetune_run', ?, "
                     "'$.which', ?) WHERE id = ?", (finetune_run, which, eval_run))
        conn.execute("UPDATE eval_results SET adapter_id = ? WHERE run_id = ?",
                     (adapter_id, eval_run))
