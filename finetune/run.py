"""A finetuning run, in its own process: tasks → rubrics → GRPO → GGUF adapter → eval.

    python -m finetune.run RUN_DIR/spec.json [--json-progress]

``deskmate finetune`` writes the spec and starts this (GPU memory and crashes stay out
of the app); progress is one line per event on stdout — JSON with ``--json-progress``
(what the TUI draws), else a readable line. ``train`` is the loop itself, also called
directly by the tests and the benchmark.

Steps: (1) tasks from the chosen source, deduplicated and stored, a held-out split;
(2) a rubric per task (the judge writes missing ones; ``rubrics.toml`` in the run
folder is the editable copy); (3) the policy with fresh LoRA, resumed from the newest
checkpoint when there is one; (4) ``steps`` GRPO steps; (5) the adapter exported as
GGUF for the serving model; (6) base and adapter evaluated on the held-out tasks with
llama.cpp, both stored as eval runs.
"""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from deskmate.finetune.environment import EnvironmentFor, no_tools, run_in
from deskmate.finetune.grpo import GRPOConfig, generate, pick_tasks, score, trainables, update
from deskmate.finetune.judge import Judge, Scored, pass_rates
from deskmate.finetune.rollout import Rollout, RolloutSettings, rollout_seed
from deskmate.finetune.tasks import TrainTask

Emit = Callable[[dict[str, Any]], None]
CPU_MAX_GGUF_BYTES = 1_000_000_000  # the CPU path is for tiny models only


@dataclass(frozen=True)
class RunSpec:
    base: str  # what the policy loads: a Hugging Face checkpoint, or a .gguf (dequantized)
    serving_gguf: str  # the GGUF llama.cpp serves: the adapter is made for it, eval runs it
    tasks: str = "sessions"  # sessions | suite:PATH | generate
    judge: str = ""  # judge: a .gguf path, "openai" (the configured endpoint), "" = serving
    device: str = "auto"  # auto | cuda | cpu
    mode: str = "code"  # agent mode of the rollouts
    heldout: float = 0.2  # fraction of tasks kept for the before/after evaluation
    max_tasks: int = 64  # most tasks in the run (generated or taken)
    rubrics: str = ""  # a rubrics TOML to apply (edited by the user); "" = none
    db_path: str = ""  # sessions database; "" = the default one
    run_id: int | None = None  # runs.id (set when the run is created)
    grpo: dict[str, Any] = field(default_factory=dict)  # GRPOConfig fields to override

    def config(self) -> GRPOConfig:
        return GRPOConfig(**self.grpo)


def cpu_allowed(base: str) -> bool:
    path = Path(base)
    return path.suffix == ".gguf" and path.is_file() and path.stat().st_size <= CPU_MAX_GGUF_BYTES


# ---------------------------------------------------------------- the loop


@dataclass
class TrainResult:
    history: list[dict[str, Any]]
    steps_done: int


def train(policy: Any, tasks: Sequence[TrainTask], config: GRPOConfig, judge: Judge, *,
          run_dir: Path, settings: RolloutSettings, emit: Emit,
          environment: EnvironmentFor | None = None) -> TrainResult:
    """``config.steps`` GRPO steps on ``tasks``, resuming from ``run_dir``'s checkpoints.

    Each rollout runs in ``environment(task)`` (``finetune.environment``; default: no
    tools); one whose world could not be set up scores 0 and is reported.
    """
    import torch

    from deskmate.finetune.checkpoint import load_checkpoint, save_checkpoint
    from deskmate.finetune.policy import PolicyChatModel, batch_logprobs

    environment = environment or no_tools
    chat = PolicyChatModel(policy)
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate,
                                  weight_decay=config.weight_decay)
    state = load_checkpoint(run_dir, policy.model, optimizer)
    if state.step:
        emit({"event": "resumed", "step": state.step})
    by_key = {t.key: t for t in tasks}

    def logprobs(prompts, completions):
        return batch_logprobs(policy, prompts, completions)

    def ref_logprobs(prompts, completions):
        with policy.model.disable_adapter():
            return batch_logprobs(policy, prompts, completions)

    started, first = time.perf_counter(), state.step
    for step in range(first + 1, config.steps + 1):
        t0 = time.perf_counter()
        chosen = [by_key[k] for k in pick_tasks(list(by_key), config, step)]

        def rollout(task: TrainTask, g: int, step: int = step) -> Rollout:
            done = run_in(environment, chat, task, settings=settings,
                          seed=rollout_seed(config.seed, step, task.key, g))
            if done.error:
                emit({"event": "rollout_error", "step": step, "task": task.key,
                      "message": done.error})
            return done

        groups = generate(chosen, rollout, config, step)
        t1 = time.perf_counter()
        scored: list[list[Scored]] = []  # filled group by group, for the pass rates
        rewards = score(groups, functools.partial(_score, judge, by_key, sink=scored))
        batch = trainables(groups, rewards, lambda r: r.samples)
        t2 = time.perf_counter()
        policy.model.train()
        stats = update(batch, logprobs, params, optimizer, config,
                       ref_logprobs if config.kl_beta else None)
        t3 = time.perf_counter()
        flat = [r for group in rewards for r in group]
        mean = sum(flat) / len(flat)
        gen_tokens = sum(r.completion_tokens for group in groups for r in group)
        line = {
            "event": "step", "step": step, "steps": config.steps,
            "reward_mean": round(mean, 4),
            "reward_std": round((sum((r - mean) ** 2 for r in flat) / len(flat)) ** 0.5, 4),
            # of the rollouts that ran: a server that would not start says nothing of the model
            "pass_rates": pass_rates([(by_key[g[0].task_key].rubric, s)
                                      for g, ss in zip(groups, scored, strict=True)
                                      for r, s in zip(g, ss, strict=True) if not r.error]),
            "rollout_errors": sum(1 for g in groups for r in g if r.error),
            "groups_used": sum(1 for g in rewards if len(set(g)) > 1),
            "loss": round(stats.loss, 5), "kl": round(stats.kl, 5),
            "tokens_generated": gen_tokens, "tokens_trained": stats.tokens,
            "tokens_per_s": round((gen_tokens + stats.tokens) / (t3 - t0), 1),
            "tokens_per_s_generate": round(gen_tokens / max(t1 - t0, 1e-9), 1),
            "tokens_per_s_train": round(stats.tokens / max(t3 - t2, 1e-9), 1),
            "step_s": round(t3 - t0, 2),
            "eta_s": round((time.perf_counter() - started) / (step - first)
                           * (config.steps - step), 1),
        }
        state.history.append(line)
        state.step = step
        emit(line)
        if step % config.checkpoint_every == 0 or step == config.steps:
            save_checkpoint(run_dir, policy.model, optimizer, state)
    return TrainResult(state.history, state.step)


def _score(judge: Judge, by_key: dict[str, TrainTask], group: Sequence[Rollout], *,
           sink: list[list[Scored]]) -> list[float]:
    task = by_key[group[0].task_key]
    scored = judge.score_rollouts(task.prompt, task.rubric, group)
    sink.append(scored)
    return [s.reward for s in scored]


# ---------------------------------------------------------------- the whole run


def run(spec: RunSpec, run_dir: Path, emit: Emit) -> dict[str, Any]:
    from deskmate.app.store import open_db
    from deskmate.finetune.policy import PolicyConfig, load_policy, resolve_device
    from deskmate.finetune.rubrics import load_toml

    config = spec.config()
    device = resolve_device(spec.device)
    # On the CPU the policy is read from the serving GGUF itself (no checkpoint download).
    base = spec.serving_gguf if device == "cpu" else spec.base
    if device == "cpu" and not cpu_allowed(base):
        raise SystemExit(f"no CUDA GPU: training {base} on the CPU would take days. "
                         "The CPU path is for tiny models only (a .gguf under 1 GB, e.g. "
                         "`--model tiny`); run on a machine with an NVIDIA GPU.")
    db = open_db(Path(spec.db_path) if spec.db_path else None)
    stack = contextlib.ExitStack()
    try:
        judge_model = _lazy_judge(spec, stack)
        tasks, hub = _prepare_tasks(spec, db, run_dir, judge_model, stack, emit)
        train_tasks = [t for t in tasks if t.split == "train"]
        heldout = [t for t in tasks if t.split == "heldout"]
        if not train_tasks:
            raise SystemExit("no training tasks: rate some answers up in your sessions, "
                             "or use --tasks generate / --tasks suite:PATH")
        emit({"event": "tasks", "train": len(train_tasks), "heldout": len(heldout),
              "source": spec.tasks})
        policy = load_policy(base, PolicyConfig(
            lora_rank=config.lora_rank, lora_alpha=config.lora_alpha, device=device,
            seed=config.seed))
        emit({"event": "policy", "base": base, "device": policy.device,
              "backend": policy.backend})
        settings = RolloutSettings.of(spec.mode, config)
        # The category weights of the run's rubrics.toml (the edited ones, if given).
        weights = load_toml(run_dir / "rubrics.toml").weights
        judge = Judge(judge_model() if _needs_judge(tasks) else None, weights=weights)
        environment = _environment(spec, hub, db, stack)
        result = train(policy, train_tasks, config, judge, run_dir=run_dir,
                       settings=settings, emit=emit, environment=environment)
        from deskmate.finetune.export import export_gguf_adapter

        adapter = export_gguf_adapter(policy.model, run_dir / "adapter.gguf",
                                      base_gguf=spec.serving_gguf, overwrite=True)
        adapter_id = _store_adapter(db, spec, adapter)
        emit({"event": "exported", "adapter": str(adapter), "adapter_id": adapter_id})
        del policy
        metrics = {"steps": result.steps_done, "adapter": str(adapter),
                   "adapter_id": adapter_id, "history": result.history}
        if heldout:
            from deskmate.finetune.heldout import evaluate_heldout

            metrics["heldout"] = evaluate_heldout(db, spec, heldout, judge, environment,
                                                  adapter, adapter_id, emit)
        return metrics
    finally:
        stack.close()


def _needs_judge(tasks: Sequence[TrainTask]) -> bool:
    return any(t.rubric.criteria for t in tasks)


def _lazy_judge(spec: RunSpec, stack: contextlib.ExitStack) -> Callable[[], Any]:
    made: list[Any] = []

    def judge_model():
        if not made:
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
                model = LlamaCppModel(path, context=8192, seed=0)
            stack.callback(model.close)
            made.append(model)
        return made[0]

    return judge_model


def _prepare_tasks(spec: RunSpec, db: Any, run_dir: Path, judge_model: Callable[[], Any],
                   stack: contextlib.ExitStack, emit: Emit) -> tuple[list[TrainTask], Any]:
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

    hub = None
    if not spec.tasks.startswith("suite:"):
        from deskmate.app.config import load_config
        from deskmate.app.toolspace import open_hub

        config = load_config()
        if config.mcp.servers:
            hub = stack.enter_context(open_hub(config))
            hub.start()
    listed = run_dir / "tasks.json"
    if listed.exists():
        return T.load_tasks(db, json.loads(listed.read_text())), hub
    if spec.tasks.startswith("suite:"):
        found = T.from_suite(Path(spec.tasks.removeprefix("suite:")))
    elif spec.tasks == "sessions":
        found = T.from_sessions(db)
    elif spec.tasks == "generate":
        found = T.generate_tasks(judge_model(), _tool_listing(hub), n=spec.max_tasks)
    else:
        raise SystemExit(f"unknown task source {spec.tasks!r}: sessions, suite:PATH or "
                         "generate")
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
            emit({"event": "rubric", "task": task.key, "criteria": len(rubric.criteria)})
    stored = T.save_tasks(db, found)
    write_toml(run_dir / "rubrics.toml",
               RubricSet(tuple(RubricEntry(t.key, t.prompt, t.rubric) for t in stored),
                         rubrics.weights))
    listed.write_text(json.dumps([t.id for t in stored]))
    return stored, hub


def _tool_listing(hub: Any) -> str:
    if hub is None:
        return ""
    from deskmate.tools.signatures import py_identifier, signature

    return "\n".join(f"{py_identifier(s.server)}.{signature(s).def_line()}"
                     for s in hub.tools())


def _environment(spec: RunSpec, hub: Any, db: Any, stack: contextlib.ExitStack
                 ) -> EnvironmentFor:
    """Suite tasks: a fresh workspace per rollout (the suite's site served for the whole
    run, as ``deskmate eval`` does). Others: the user's servers, behind the gate."""
    from deskmate.finetune.environment import suite_environment, user_environment

    if not spec.tasks.startswith("suite:"):
        return user_environment(hub, db)
    from deskmate.finetune.eval import load_suite
    from deskmate.finetune.eval.site import LocalSite
    from deskmate.finetune.eval.workspace import bin_folders

    suite = load_suite(Path(spec.tasks.removeprefix("suite:")))
    site = stack.enter_context(LocalSite(suite.site)) if suite.site is not None else None
    return suite_environment(suite, site_url=site.url if site else "",
                             bins=tuple(bin_folders()))


def _store_adapter(db: Any, spec: RunSpec, path: Path) -> int:
    from deskmate.app.store.db import transaction

    name = f"run-{spec.run_id}" if spec.run_id is not None else path.parent.name
    with transaction(db) as conn:
        conn.execute("DELETE FROM adapters WHERE name = ?", (name,))
        return int(conn.execute(
            "INSERT INTO adapters (run_id, name, base_model, path, active, created_at) "
            "VALUES (?, ?, ?, ?, 0, ?)",
            (spec.run_id, name, spec.serving_gguf, str(path), time.time())).lastrowid)


# ---------------------------------------------------------------- process entry


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    as_json = "--json-progress" in args
    spec_path = Path(next(a for a in args if not a.startswith("--")))
    spec = RunSpec(**json.loads(spec_path.read_text()))
    run_dir = spec_path.parent

    # A stop (SIGINT) can land inside a library's import that catches every exception
    # and goes on (torchao's kernel loader does: it logs "Failed to load" and carries
    # on); the run then ignored it. Remembered here, it is raised again at the next
    # progress line at the latest.
    stop_asked = threading.Event()

    def on_sigint(signum: int, frame: Any) -> None:
        stop_asked.set()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)

    def emit(line: dict[str, Any]) -> None:
        if as_json:
            print(json.dumps(line), flush=True)
        else:
            print(_human(line), flush=True)
        if stop_asked.is_set() and line.get("event") not in ("interrupted", "error"):
            raise KeyboardInterrupt

    from deskmate.finetune.runs import finish_run

    status = "failed"
    metrics: dict[str, Any] = {}
    try:
        metrics = run(spec, run_dir, emit)
        status = "finished"
        emit({"event": "done", "run_id": spec.run_id, **{k: v for k, v in metrics.items()
                                                         if k != "history"}})
        return 0
    except KeyboardInterrupt:
        status = "interrupted"
        emit({"event": "interrupted", "run_id": spec.run_id})
        return 130
    except SystemExit as exc:
        emit({"event": "error", "message": str(exc)})
        return 2
    finally:
        finish_run(spec, status, metrics)


def _human(line: dict[str, Any]) -> str:
    if line.get("event") == "step":
        rates = " ".join(f"{k}={v:.0%}" for k, v in line["pass_rates"].items())
        return (f"step {line['step']}/{line['steps']}  reward {line['reward_mean']:.3f} ± "
                f"{line['reward_std']:.3f}  {rates}  {line['tokens_per_s']:.0f} tok/s  "
                f"ETA {line['eta_s'] / 60:.1f} min")
    return " ".join(f"{k}={v}" for k, v in line.items() if k != "history")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

