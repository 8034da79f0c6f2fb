"""Before and after: the serving GGUF with and without the new adapter, on held-out tasks.

Both run on llama.cpp exactly as the app would serve them, through the same agent,
tool gate and judge as training, at a low temperature; each is stored as an ``eval``
run with one ``eval_results`` row per task, so the two line up on ``task_id``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from finetune.judge import Judge
from finetune.rollout import RolloutSettings, run_rollout
from finetune.tasks import TrainTask

EVAL_TEMPERATURE = 0.0  # greedy: the difference should come from the adapter, not luck


def evaluate_heldout(db: Any, spec: Any, tasks: Sequence[TrainTask], judge: Judge,
                     environment: Callable, adapter: Path, adapter_id: int,
                     emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    from app.llm.llamacpp import LlamaCppModel

    settings = RolloutSettings.of(spec.mode, spec.config(), temperature=EVAL_TEMPERATURE)
    out: dict[str, Any] = {}
    for which, adapter_path in (("base", None), ("adapter", adapter)):
        model = LlamaCppModel(spec.serving_gguf, context=8192, seed=0, adapter=adapter_path)
        try:
            run_id, mean = _evaluate(db, spec, which, model, tasks, judge, environment,
                                     settings, adapter_id if adapter_path else None)
        finally:
            model.close()
        out[which] = {"eval_run": run_id, "reward_mean": round(mean, 4)}
        emit({"event": "heldout", "which": which, "eval_run": run_id,
              "reward_mean": round(mean, 4), "tasks": len(tasks)})
    return out


def _evaluate(db: Any, spec: Any, which: str, model: Any, tasks: Sequence[TrainTask],
              judge: Judge, environment: Callable, settings: RolloutSettings,
              adapter_id: int | None) -> tuple[int, float]:
    from app.store.db import transaction
    from finetune.eval.record import finish_run, start_run

    run_id = start_run(db, model=spec.serving_gguf, config={
        "finetune_run": spec.run_id, "which": which, "tasks": [t.id for t in tasks]})
    rewards = []
    for task in tasks:
        with environment(task) as (hub, gate):
            rollout = run_rollout(model, task.key, task.prompt, gate, hub=hub,
                                  settings=settings)
        scored = judge.score_group(task.prompt, task.rubric,
                                   [(rollout.transcript, rollout.answer)])[0]
        rewards.append(scored.reward)
        details = {"answer": rollout.answer, "status": rollout.status,
                   "criteria": list(scored.criteria), "checks": scored.checks}
        with transaction(db) as conn:
            conn.execute(
                "INSERT INTO eval_results (run_id, task_id, mode, adapter_id, success, score, "
                "model_calls, tool_calls, wall_s, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, task.id, settings.mode, adapter_id,
                 None if scored.checks is None else int(scored.checks == 1.0), scored.reward,
                 len([m for m in rollout.transcript if m.role == "assistant"]),
                 rollout.tool_calls, rollout.wall_s, json.dumps(details)))
    mean = sum(rewards) / len(rewards) if rewards else 0.0
    finish_run(db, run_id, status="finished", metrics={"reward_mean": mean,
                                                       "tasks": len(tasks)})
    return run_id, mean
