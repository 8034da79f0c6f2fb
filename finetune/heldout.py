"""Before and after: the serving GGUF with and without the new adapter, on held-out tasks.

Both run greedy on llama.cpp exactly as the app would serve them, and each is stored as
an ``eval`` run with one ``eval_results`` row per task, so the two line up on ``task_id``:
- tasks from a suite go through the eval harness (``finetune.eval.run_eval``): each in
  a fresh workspace with its own servers, scored by all its checks (file checks and
  verify.py too), as ``deskmate eval`` scores them;
- other tasks (sessions, generated) have no workspace: they run through the same
  agent, tool gate and judge as training, and score their reward.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.finetune.environment import EnvironmentFor, run_in
from deskmate.finetune.hardware import LLAMACPP_CONTEXT
from deskmate.finetune.judge import Judge
from deskmate.finetune.progress import Emit, Heldout
from deskmate.finetune.rollout import RolloutSettings
from deskmate.finetune.tasks import TrainTask

if TYPE_CHECKING:
    from deskmate.app.llm.base import ChatModel
    from deskmate.app.store.db import Database
    from deskmate.finetune.spec import RunSpec

EVAL_TEMPERATURE = 0.0  # greedy: the difference should come from the adapter, not luck


def evaluate_heldout(db: Database, spec: RunSpec, tasks: Sequence[TrainTask], judge: Judge,
                     environment: EnvironmentFor, adapter: Path, adapter_id: int,
                     emit: Emit) -> dict[str, Any]:
    from deskmate.app.llm.llamacpp import LlamaCppModel

    settings = RolloutSettings.of(spec.mode, spec.config(), temperature=EVAL_TEMPERATURE,
                                  top_p=None)  # as the app samples
    out: dict[str, Any] = {}
    for which, adapter_path in (("base", None), ("adapter", adapter)):
        model = LlamaCppModel(spec.serving_gguf, context=LLAMACPP_CONTEXT, seed=0,
                              adapter=adapter_path)
        used = adapter_id if adapter_path else None
        try:
            if (suite := spec.source.suite) is not None:
                run_id, mean = _evaluate_suite(db, spec, suite, which, used, model, tasks,
                                               settings)
            else:
                run_id, mean = _evaluate(db, spec, which, used, model, tasks, judge,
                                         environment, settings)
        finally:
            model.close()
        mean = None if mean is None else round(mean, 4)
        out[which] = {"eval_run": run_id, "reward_mean": mean}
        emit(Heldout(which=which, eval_run=run_id, reward_mean=mean, tasks=len(tasks)))
    return out


def _evaluate_suite(db: Database, spec: RunSpec, suite_dir: Path, which: str,
                    adapter_id: int | None, model: ChatModel, tasks: Sequence[TrainTask],
                    settings: RolloutSettings) -> tuple[int, float | None]:
    """The harness's run, and the mean of its check scores (None: rubric-only tasks)."""
    from deskmate.app.store.evals import tie_to_finetune_run
    from deskmate.finetune.eval import EvalSettings, load_suite, run_eval
    from deskmate.finetune.eval.workspace import bin_folders

    suite = load_suite(suite_dir)
    chosen = [suite.tasks[t.metadata["task"]] for t in tasks]
    outcome = run_eval(suite, chosen, lambda task, mode: model,
                       EvalSettings(modes=(settings.mode,), limits=settings.limits,
                                    bins=tuple(bin_folders())),
                       db=db, model_name=spec.serving_gguf)
    assert outcome.run_id is not None  # given a db, run_eval records its run
    # tie the harness's run to this finetune run
    tie_to_finetune_run(db, outcome.run_id, finetune_run=spec.run_id, which=which,
                        adapter_id=adapter_id)
    return outcome.run_id, outcome.summary["modes"][settings.mode]["mean_score"]


def _evaluate(db: Database, spec: RunSpec, which: str, adapter_id: int | None,
              model: ChatModel, tasks: Sequence[TrainTask], judge: Judge,
              environment: EnvironmentFor,
              settings: RolloutSettings) -> tuple[int, float]:
    from deskmate.app.store.evals import EvalResult, add_result
    from deskmate.finetune.eval.record import finish_run, start_run

    run_id = start_run(db, model=spec.serving_gguf, config={
        "finetune_run": spec.run_id, "which": which, "tasks": [t.id for t in tasks]})
    rewards = []
    for task in tasks:
        rollout = run_in(environment, model, task, settings=settings)
        scored = judge.score_rollouts(task.prompt, task.rubric, [rollout])[0]
        rewards.append(scored.reward)
        details = {"answer": rollout.answer, "status": rollout.status,
                   "criteria": list(scored.criteria), "checks": scored.checks}
        if rollout.error:
            details["error"] = rollout.error
        add_result(db, EvalResult(
            run_id, task.id, settings.mode,
            None if scored.checks is None else scored.checks == 1.0, scored.reward,
            len([m for m in rollout.transcript if m.role == "assistant"]),
            rollout.tool_calls, rollout.wall_s, json.dumps(details), adapter_id=adapter_id))
    mean = sum(rewards) / len(rewards) if rewards else 0.0
    finish_run(db, run_id, status="finished", metrics={"reward_mean": mean,
                                                       "tasks": len(tasks)})
    return run_id, mean
