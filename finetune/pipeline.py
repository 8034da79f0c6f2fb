"""A whole finetuning run: tasks → rubrics → GRPO → GGUF adapter → before/after eval.

Steps: (1) tasks from the spec's source, deduplicated and stored, a held-out split;
(2) a rubric per task (the judge writes missing ones; ``rubrics.toml`` in the run
folder is the editable copy); (3) the policy with fresh LoRA, resumed from the newest
checkpoint when there is one; (4) ``steps`` GRPO steps (``finetune/train.py``); (5) the
adapter exported as GGUF for the serving model; (6) base and adapter evaluated on the
held-out tasks with llama.cpp, both stored as eval runs.

What the user must fix (no GPU for a big model, no tasks) raises ``RunError``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.finetune.environment import EnvironmentFor
from deskmate.finetune.hardware import LLAMACPP_CONTEXT
from deskmate.finetune.judge import Judge
from deskmate.finetune.progress import Emit, Exported, PolicyLoaded, RubricWritten, Tasks
from deskmate.finetune.rollout import RolloutSettings
from deskmate.finetune.spec import RunError, RunSpec, cpu_allowed
from deskmate.finetune.tasks import TrainTask

if TYPE_CHECKING:
    from deskmate.app.llm.base import ChatModel
    from deskmate.app.store.db import Database
    from deskmate.tools.hub import Hub

JudgeModel = Callable[[], "ChatModel"]  # made on first use: many runs never need a judge


def run(spec: RunSpec, run_dir: Path, emit: Emit) -> dict[str, Any]:
    """The whole run; returns its metrics (steps, adapter, history, held-out scores)."""
    from deskmate.app.store import open_db
    from deskmate.finetune.policy import PolicyConfig, load_policy, resolve_device
    from deskmate.finetune.rubrics import load_toml
    from deskmate.finetune.train import train

    config = spec.config()
    device = resolve_device(spec.device)
    # On the CPU the policy is read from the serving GGUF itself (no checkpoint download).
    base = spec.serving_gguf if device == "cpu" else spec.base
    preflight(spec, device, base)
    stack = contextlib.ExitStack()
    try:
        db = stack.enter_context(open_db(Path(spec.db_path) if spec.db_path else None))
        judge_model = _lazy_judge(spec, stack)
        tasks, hub = _prepare_tasks(spec, db, run_dir, judge_model, stack, emit)
        train_tasks = [t for t in tasks if t.split == "train"]
        heldout = [t for t in tasks if t.split == "heldout"]
        if not train_tasks:
            raise RunError("no training tasks: rate some answers up in your sessions, "
                           "or use --tasks generate / --tasks suite:PATH")
        emit(Tasks(train=len(train_tasks), heldout=len(heldout), source=spec.tasks))
        policy = load_policy(base, PolicyConfig(
            lora_rank=config.lora_rank, lora_alpha=config.lora_alpha, device=device,
            seed=config.seed, max_seq_len=config.max_seq_len))
        emit(PolicyLoaded(base=base, device=policy.device, backend=policy.backend))
        settings = RolloutSettings.of(spec.mode, config)
        # The category weights of the run's rubrics.toml (the edited ones, if given).
        weights = load_toml(run_dir / "rubrics.toml").weights
        judge = Judge(judge_model() if _needs_judge(tasks) else None, weights=weights)
        environment = _environment(spec, hub, db, stack)
        result = train(policy, train_tasks, config, judge, run_dir=run_dir,
                       settings=settings, emit=emit, environment=environment,
                       serving_gguf=spec.serving_gguf)
        from deskmate.finetune.export import export_gguf_adapter

        adapter = export_gguf_adapter(policy.model, run_dir / "adapter.gguf",
                                      base_gguf=spec.serving_gguf, overwrite=True)
        adapter_id = _store_adapter(db, spec, adapter)
        emit(Exported(adapter=str(adapter), adapter_id=adapter_id))
        metrics: dict[str, Any] = {"steps": result.steps_done, "adapter": str(adapter),
                                   "adapter_id": adapter_id, "history": result.history}
        del policy
        _release_training_memory(device)
        if heldout:
            from deskmate.finetune.heldout import evaluate_heldout

            metrics["heldout"] = evaluate_heldout(db, spec, heldout, judge, environment,
                                                  adapter, adapter_id, emit)
        return metrics
    finally:
        stack.close()


def preflight(spec: RunSpec, device: str, base: str) -> None:
    """What would fail hours later, refused before anything loads (RunError)."""
    from deskmate.finetune.export import ExportError, read_base
    from deskmate.finetune.policy import gguf_on_gpu

    if device == "cpu" and not cpu_allowed(base):
        raise RunError(f"no CUDA GPU: training {base} on the CPU would take days. "
                       "The CPU path is for tiny models only (a .gguf under 1 GB, e.g. "
                       "`--model tiny`); run on a machine with an NVIDIA GPU.")
    if device == "cuda" and base.endswith(".gguf"):
        raise RunError(gguf_on_gpu(base))
    try:  # the adapter must be writable for the serving model, or training is wasted
        read_base(Path(spec.serving_gguf))
    except ExportError as exc:
        raise RunError(f"{exc}. Pick a model of one of these architectures to finetune.") \
            from exc


def _release_training_memory(device: str) -> None:
    """Hand the policy's GPU memory back before the held-out eval loads llama.cpp: the
    caching allocator keeps freed blocks for torch, which llama.cpp cannot use."""
    import gc

    gc.collect()
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()


def _needs_judge(tasks: Sequence[TrainTask]) -> bool:
    return any(t.rubric.criteria for t in tasks)


def _lazy_judge(spec: RunSpec, stack: contextlib.ExitStack) -> JudgeModel:
    made: list[ChatModel] = []

    def judge_model() -> ChatModel:
        if not made:
            model: ChatModel
            if spec.judge == "openai":
                import os

                from deskmate.app.config import load_config
                from deskmate.app.llm.openai_compat import OpenAICompatibleModel

                oa = load_config().openai
                model = OpenAICompatibleModel(oa.base_url, model=oa.model, timeout=oa.timeout,
                                              api_key=os.environ.get(oa.api_key_env, ""))
            else:
                from deskmate.app.llm.llamacpp import LlamaCppModel
                from deskmate.app.llm.registry import resolve_model

                path = resolve_model(spec.judge) if spec.judge else Path(spec.serving_gguf)
                model = LlamaCppModel(path, context=LLAMACPP_CONTEXT, seed=0)
            stack.callback(model.close)
            made.append(model)
        return made[0]

    return judge_model


def _prepare_tasks(spec: RunSpec, db: Database, run_dir: Path, judge_model: JudgeModel,
                   stack: contextlib.ExitStack, emit: Emit) -> tuple[list[TrainTask], Hub | None]:
    """The run's tasks with rubrics, and the hub of the user's servers (None: none, or
    suite tasks, which bring their own servers to every rollout).

    The first time, tasks are gathered, stored and listed in ``tasks.json``; a resumed
    run reads that list back, so it trains on exactly the same tasks.
    """
    from deskmate.finetune import tasks as T
    from deskmate.finetune.rubrics import (
        RubricEntry,
        RubricSet,
        generate_rubric,
        load_toml,
        write_toml,
    )

    source = spec.source
    hub = None
    if source.kind != "suite":
        from deskmate.app.config import load_config
        from deskmate.app.toolspace import open_hub

        config = load_config()
        if config.mcp.servers:
            hub = stack.enter_context(open_hub(config))
            hub.start()
    listed = run_dir / "tasks.json"
    if listed.exists():
        return T.load_tasks(db, json.loads(listed.read_text())), hub
    if source.suite is not None:
        found = T.from_suite(source.suite)
    elif source.kind == "sessions":
        found = T.from_sessions(db)
    else:
        found = T.generate_tasks(judge_model(), _tool_listing(hub), n=spec.max_tasks)
    found = T.split_heldout(found[: spec.max_tasks], spec.heldout, seed=spec.config().seed)
    rubrics = RubricSet(())
    if spec.rubrics:
        rubrics = load_toml(Path(spec.rubrics))
        edited = {e.key: e.rubric for e in rubrics.entries}
        found = [replace(t, rubric=edited.get(t.key, t.rubric)) for t in found]
    tools = _tool_listing(hub)
    for i, task in enumerate(found):
        if (not task.rubric.criteria and not task.rubric.checks.as_dict()
                and not task.metadata.get("checked")):
            rubric = generate_rubric(judge_model(), task.prompt, tools)
            found[i] = replace(task, rubric=rubric)
            emit(RubricWritten(task=task.key, criteria=len(rubric.criteria)))
    stored = T.save_tasks(db, found)
    write_toml(run_dir / "rubrics.toml",
               RubricSet(tuple(RubricEntry(t.key, t.prompt, t.rubric) for t in stored),
                         rubrics.weights))
    listed.write_text(json.dumps([t.id for t in stored]))
    return stored, hub


def _tool_listing(hub: Hub | None) -> str:
    if hub is None:
        return ""
    from deskmate.tools.signatures import py_identifier, signature

    return "\n".join(f"{py_identifier(s.server)}.{signature(s).def_line()}"
                     for s in hub.tools())


def _environment(spec: RunSpec, hub: Hub | None, db: Database, stack: contextlib.ExitStack
                 ) -> EnvironmentFor:
    """Suite tasks: a fresh workspace per rollout (the suite's site served for the whole
    run, as ``deskmate eval`` does). Others: the user's servers, behind the gate."""
    from deskmate.finetune.environment import suite_environment, user_environment

    source = spec.source
    if source.suite is None:
        return user_environment(hub, db)
    from deskmate.finetune.eval import load_suite
    from deskmate.finetune.eval.site import LocalSite
    from deskmate.finetune.eval.workspace import bin_folders

    suite = load_suite(source.suite)
    site = stack.enter_context(LocalSite(suite.site)) if suite.site is not None else None
    return suite_environment(suite, site_url=site.url if site else "",
                             bins=tuple(bin_folders()))


def _store_adapter(db: Database, spec: RunSpec, path: Path) -> int:
    from deskmate.app.store.runs import store_adapter

    name = f"run-{spec.run_id}" if spec.run_id is not None else path.parent.name
    return store_adapter(db, run_id=spec.run_id, name=name, base_model=spec.serving_gguf,
                         path=path)
