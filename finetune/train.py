"""The GRPO training loop: ``config.steps`` steps of generate, score, update.

Each step picks ``tasks_per_step`` tasks, lets the model attempt each ``group_size``
times through the agent (``generate``; sampled by llama.cpp from the serving GGUF with
the step's adapter, ``finetune/engine.py``, or by the policy itself in torch where no
GGUF is given), scores every attempt with the task's rubric
and checks (``score``), keeps the groups whose rewards differ and takes one clipped
policy-gradient step on the model's own tokens (``update``; all three in
``finetune/grpo.py``). Progress goes out as one ``Step`` event per step; a checkpoint
every ``checkpoint_every`` steps lets a stopped run resume where it was.

Called by the run pipeline (``finetune/pipeline.py``), the smoke run and the tests.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.finetune.environment import EnvironmentFor, no_tools, run_in
from deskmate.finetune.grpo import (
    GRPOConfig,
    LogprobFn,
    generate,
    pick_tasks,
    score,
    trainables,
    update,
)
from deskmate.finetune.judge import Judge, Scored, pass_rates
from deskmate.finetune.progress import Emit, Resumed, RolloutError, Sampler, Step
from deskmate.finetune.rollout import Rollout, RolloutSettings, rollout_seed
from deskmate.finetune.tasks import TrainTask

if TYPE_CHECKING:
    from deskmate.finetune.policy import Policy


@dataclass
class TrainResult:
    history: list[dict[str, Any]]  # the Step events so far, as on the wire
    steps_done: int


def train(policy: Policy, tasks: Sequence[TrainTask], config: GRPOConfig, judge: Judge, *,
          run_dir: Path, settings: RolloutSettings, emit: Emit,
          environment: EnvironmentFor | None = None, serving_gguf: str | Path = ""
          ) -> TrainResult:
    """``config.steps`` GRPO steps on ``tasks``, resuming from ``run_dir``'s checkpoints.

    Each rollout runs in ``environment(task)`` (``finetune.environment``; default: no
    tools); one whose world could not be set up scores 0 and is reported. Who samples
    the rollouts is ``rollout_sampler``'s choice, announced as a ``Sampler`` event: by
    default llama.cpp, from ``serving_gguf`` with the adapter as it stands at each step.
    """
    import torch

    from deskmate.finetune.checkpoint import load_checkpoint, save_checkpoint
    from deskmate.finetune.policy import PolicyChatModel

    environment = environment or no_tools
    sampler = rollout_sampler(config, serving_gguf)
    emit(sampler)
    engine = None
    if sampler.engine == "llamacpp":
        from deskmate.finetune.engine import LlamaCppEngine

        engine = LlamaCppEngine(policy, serving_gguf)
    chat = engine or PolicyChatModel(policy)
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate,
                                  weight_decay=config.weight_decay)
    state = load_checkpoint(run_dir, policy.model, optimizer)
    if state.step:
        emit(Resumed(step=state.step))
    by_key = {t.key: t for t in tasks}

    logprobs, ref_logprobs = loss_logprobs(policy, config)
    # fp16-only GPUs (no bf16): scale the loss, or small gradients flush to zero.
    scaler = torch.amp.GradScaler(policy.device) if policy.fp16 else None

    started, first = time.perf_counter(), state.step
    for step in range(first + 1, config.steps + 1):
        t0 = time.perf_counter()
        if engine is not None:  # the adapter as it stands, as the user will serve it
            from deskmate.finetune.export import export_gguf_adapter

            if policy.device == "cuda":
                # The last update's activations sit in torch's cache, where llama.cpp
                # (loading the engine on the same GPU) cannot have them.
                torch.cuda.empty_cache()
            engine.load_adapter(export_gguf_adapter(
                policy.model, run_dir / "engine" / "adapter.gguf", base_gguf=engine.gguf,
                overwrite=True))
        chosen = [by_key[k] for k in pick_tasks(list(by_key), config, step)]

        def rollout(task: TrainTask, g: int, step: int = step) -> Rollout:
            done = run_in(environment, chat, task, settings=settings,
                          seed=rollout_seed(config.seed, step, task.key, g))
            if done.error:
                emit(RolloutError(step=step, task=task.key, message=done.error))
            return done

        # generate
        groups = generate(chosen, rollout, config, step)
        if engine is not None:
            # Unloaded until the next step (which loads the new adapter anyway): on a GPU
            # its weights and KV cache would otherwise sit beside the update's activations.
            engine.close()
        t1 = time.perf_counter()
        # score
        scored: list[list[Scored]] = []  # filled group by group, for the pass rates
        rewards = score(groups, functools.partial(_score, judge, by_key, sink=scored))
        batch = trainables(groups, rewards, lambda r: r.samples, failed=lambda r: bool(r.error))
        t2 = time.perf_counter()
        # update
        policy.training()
        stats = update(batch, logprobs, params, optimizer, config,
                       ref_logprobs if config.kl_beta else None, scaler=scaler)
        t3 = time.perf_counter()

        flat = [r for group in rewards for r in group]
        mean = sum(flat) / len(flat)
        gen_tokens = sum(r.completion_tokens for group in groups for r in group)
        line = Step(
            step=step, steps=config.steps,
            reward_mean=round(mean, 4),
            reward_std=round((sum((r - mean) ** 2 for r in flat) / len(flat)) ** 0.5, 4),
            # of the rollouts that ran: a server that would not start says nothing of the model
            pass_rates=pass_rates([(by_key[g[0].task_key].rubric, s)
                                   for g, ss in zip(groups, scored, strict=True)
                                   for r, s in zip(g, ss, strict=True) if not r.error]),
            rollout_errors=sum(1 for g in groups for r in g if r.error),
            groups_used=sum(1 for g, rs in zip(groups, rewards, strict=True)
                            if len({x for r, x in zip(g, rs, strict=True) if not r.error}) > 1),
            loss=round(stats.loss, 5), kl=round(stats.kl, 5),
            tokens_generated=gen_tokens, tokens_trained=stats.tokens,
            tokens_per_s=round((gen_tokens + stats.tokens) / (t3 - t0), 1),
            tokens_per_s_generate=round(gen_tokens / max(t1 - t0, 1e-9), 1),
            tokens_per_s_train=round(stats.tokens / max(t3 - t2, 1e-9), 1),
            step_s=round(t3 - t0, 2),
            eta_s=round((time.perf_counter() - started) / (step - first)
                        * (config.steps - step), 1),
        )
        state.history.append(line.to_json())
        state.step = step
        emit(line)
        if step % config.checkpoint_every == 0 or step == config.steps:
            save_checkpoint(run_dir, policy.model, optimizer, state)
    if engine is not None:
        engine.close()
    return TrainResult(state.history, state.step)


def rollout_sampler(config: GRPOConfig, serving_gguf: str | Path = "") -> Sampler:
    """Who samples the rollouts: ``config.rollout_engine``, "auto" resolved to llama.cpp
    when the serving GGUF is known, else to the trained weights in torch."""
    engine = config.rollout_engine
    if engine == "auto":
        engine = "llamacpp" if serving_gguf else "policy"
    if engine == "policy":
        why = ("no serving GGUF was given" if config.rollout_engine == "auto"
               else "rollout_engine = policy")
        return Sampler(engine="policy", reason=f"the trained weights in torch, token by "
                       f"token ({why}; many times slower than llama.cpp)")
    if not serving_gguf:
        raise ValueError("rollout_engine llamacpp needs the serving GGUF")
    return Sampler(engine="llamacpp", reason=f"llama.cpp on {Path(serving_gguf).name} "
                   "with each step's adapter (importance-corrected to the trained weights)")


def loss_logprobs(policy: Policy, config: GRPOConfig) -> tuple[LogprobFn, LogprobFn]:
    """The policy's log-probs for the loss, and the base model's (LoRA off) for the KL,
    both at the rollouts' sampling temperature: the loss is taken under the distribution
    the tokens were drawn from (rollouts sample at top-p 1, so that is all of it)."""
    from deskmate.finetune.logprobs import batch_logprobs

    def logprobs(prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]]):
        return batch_logprobs(policy, prompts, completions, temperature=config.temperature)

    def ref_logprobs(prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]]):
        with policy.model.disable_adapter():
            return logprobs(prompts, completions)

    return logprobs, ref_logprobs


def _score(judge: Judge, by_key: dict[str, TrainTask], group: Sequence[Rollout], *,
           sink: list[list[Scored]]) -> list[float]:
    task = by_key[group[0].task_key]
    scored = judge.score_rollouts(task.prompt, task.rubric, group)
    sink.append(scored)
    return [s.reward for s in scored]
