"""GRPO on the agent's own rollouts: generate, score, update — three plain functions.

One step: pick ``tasks_per_step`` tasks, run ``group_size`` rollouts of each through the
agent (``generate``), score every rollout with its rubric and checks (``score``), turn
the rewards of each group into advantages and take one optimizer step on the policy's
own tokens (``update``). ``finetune/train.py`` loops over steps, checkpoints, reports.

Simplifications, on purpose (in the spirit of nanochat's chat_rl.py, which goes further
and uses the mean only):
- Advantages are group-normalised: (r - mean) / std within a group (population std),
  over the rollouts that ran: one that failed for an infrastructure reason (a server
  that did not start) is left out of its group's statistics and of the batch. A group
  whose rewards are all equal carries no signal and is dropped.
- One rollout's advantage is given to every token it generated, in every model call;
  prompt tokens (system, task, tool output, observations) are never trained.
- The loss is token-level (DAPO): summed over all tokens of the step and divided by
  their count, so long rollouts are not down-weighted per token.
- The clipped ratio (PPO) only matters with ``updates_per_batch > 1``: the old
  log-probs are recomputed before the first update (not the ones recorded at sampling),
  so with one update per batch the old policy *is* the current one and the ratio is 1.
- Rollouts sample at top-p 1 and the loss takes log-probs at the same temperature:
  the tokens trained on come from the distribution the loss differentiates.
- Micro-batches group model calls of similar length (padding is to the longest of a
  micro-batch); fp16 GPUs scale the loss (a ``GradScaler``).
- Rollouts sampled by another engine than the trained weights (llama.cpp on the
  quantized base, ``finetune/engine.py``) carry the log-probs they were drawn with; each
  token's loss is weighted by min(π_old / π_engine, ``is_cap``) (truncated importance
  sampling, as TRL and verl do for vLLM).
- Optional KL to the base (the model with the adapter disabled), k3 estimator.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # torch is imported by the functions that need it, not at import time
    from torch import Tensor
    from torch.amp import GradScaler
    from torch.nn import Parameter
    from torch.optim import Optimizer

# Per-token log-probabilities of a batch of completions after their prompts, right-padded:
# (logprobs, mask), both [batch, longest completion]; differentiable through the LoRA.
# finetune/logprobs.py's batch_logprobs is this function for the real policy.
LogprobFn = Callable[[Sequence[Sequence[int]], Sequence[Sequence[int]]],
                     "tuple[Tensor, Tensor]"]

# What the loop carries without looking inside: a task (an id, or the task itself) and
# one rollout of it (whatever rollout_fn returns; samples_of reads its model calls).
TaskT = TypeVar("TaskT")
RolloutT = TypeVar("RolloutT")


ROLLOUT_ENGINES = ("auto", "llamacpp", "policy")  # GRPOConfig.rollout_engine's values


@dataclass(frozen=True)
class GRPOConfig:
    steps: int = 40  # optimizer steps in the run
    group_size: int = 4  # G: rollouts per task; the advantage compares these
    tasks_per_step: int = 4  # groups per step (the batch is tasks_per_step × G rollouts)
    learning_rate: float = 2e-5  # AdamW on the LoRA weights only
    weight_decay: float = 0.0  # AdamW decay; LoRA is small enough not to need it
    clip_eps: float = 0.2  # PPO clip range of the probability ratio
    kl_beta: float = 0.0  # weight of the KL penalty to the base model; 0 turns it off
    updates_per_batch: int = 1  # optimizer steps on the same rollouts (>1 makes clip matter)
    micro_batch: int = 4  # model calls per backward pass (gradient accumulation)
    max_grad_norm: float = 1.0  # gradient clipping
    # Sampling temperature of the rollouts (variety within a group), and the temperature
    # the loss takes log-probs at. Above 0: greedy rollouts have nothing to compare.
    temperature: float = 1.0
    max_new_tokens: int = 512  # most tokens per model reply during rollouts
    max_model_calls: int = 6  # agent steps per rollout
    lora_rank: int = 16  # LoRA r
    lora_alpha: int = 16  # LoRA alpha (scale = alpha / r)
    seed: int = 0  # seeds task order, sampling and initialisation: same seed, same run
    checkpoint_every: int = 10  # steps between checkpoints (and at the end)
    # Longest prompt + completion of one model call. Code-mode rollouts at these
    # defaults: a ~2k-token system prompt and task, 6 replies of ≤ 512 tokens and 5
    # observations of ≤ 4,000 characters (~1.2k tokens each) come to about 10k.
    # A call that would pass it ends its rollout as "context_full" (scored, not failed).
    max_seq_len: int = 12288
    # Who samples the rollouts. "llamacpp": the serving GGUF with this step's adapter
    # (finetune/engine.py), at engine speed, the update corrected by truncated
    # importance sampling; "policy": the trained weights, token by token in torch (exact,
    # many times slower); "auto": llamacpp whenever the run knows its serving GGUF
    # (every run of `deskmate finetune` and the Finetune screen does), else policy.
    rollout_engine: str = "auto"
    # Truncation of the importance weight π_old / π_engine of engine-sampled tokens
    # (TRL's vllm_importance_sampling_cap): bounds the variance a rare token brings.
    is_cap: float = 2.0

    def __post_init__(self) -> None:
        if self.rollout_engine not in ROLLOUT_ENGINES:
            raise ValueError(f"rollout_engine {self.rollout_engine!r}: use "
                             + ", ".join(ROLLOUT_ENGINES))
        if self.temperature <= 0:
            raise ValueError(f"temperature {self.temperature}: GRPO needs sampling "
                             "(a temperature above 0) for its rollouts to differ")


@dataclass(frozen=True)
class Sample:
    """One model call of a rollout: what it saw and what it generated (token ids)."""

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    # log-probs of the completion under the sampler that drew it (the engine); () when
    # the trained weights sampled it themselves, or nobody recorded them.
    logprobs: tuple[float, ...] = ()


@dataclass(frozen=True)
class Trainable:
    """A sample with the advantage of its rollout: what ``update`` trains on."""

    sample: Sample
    advantage: float


@dataclass(frozen=True)
class UpdateStats:
    loss: float
    tokens: int  # completion tokens trained on
    samples: int  # model calls trained on
    kl: float  # mean per-token KL to the base (0 when kl_beta is 0)
    clipped: float  # fraction of tokens whose ratio was clipped
    grad_norm: float


# ---------------------------------------------------------------- the math


def group_advantages(rewards: Sequence[float], eps: float = 1e-6) -> list[float] | None:
    """(r - mean) / std within one group; None when the group has no variance."""
    n = len(rewards)
    if n < 2:
        return None
    mean = sum(rewards) / n
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / n)
    if std < eps:
        return None
    return [(r - mean) / std for r in rewards]


def token_losses(new_logp: Tensor, old_logp: Tensor, advantage: Tensor | float,
                 clip_eps: float, ref_logp: Tensor | None = None,
                 kl_beta: float = 0.0, behaviour_logp: Tensor | None = None,
                 is_cap: float = 2.0) -> tuple[Tensor, Tensor, Tensor]:
    """Per-token loss; returns (loss, kl, clipped) shaped like ``new_logp``.

    ``advantage`` is a number or a tensor that broadcasts (one per row of a batch).
    ``behaviour_logp``: the log-probs the tokens were sampled with, when another engine
    sampled them; the loss is then weighted by min(π_old / π_behaviour, ``is_cap``).
    """
    import torch

    # ratio = π / π_old; take the pessimistic of the plain and the clipped objective,
    # and minimise its negative.
    ratio = torch.exp(new_logp - old_logp)
    plain = ratio * advantage
    clipped = torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * advantage
    loss = -torch.minimum(plain, clipped)
    if behaviour_logp is not None:
        # Truncated importance sampling: the tokens came from the engine's distribution.
        loss = loss * torch.clamp(torch.exp(old_logp - behaviour_logp), max=is_cap).detach()
    kl = torch.zeros_like(loss)
    if ref_logp is not None and kl_beta:
        # k3 estimator of KL(π || π_ref): exp(d) - d - 1 with d = ref - new, always ≥ 0.
        d = ref_logp - new_logp
        kl = torch.exp(d) - d - 1
        loss = loss + kl_beta * kl
    # Clipped: the clipped term won the min, so this token gets no gradient.
    return loss, kl.detach(), (clipped < plain).detach()


# ---------------------------------------------------------------- generate / score / update


def pick_tasks(task_ids: Sequence[TaskT], config: GRPOConfig, step: int) -> list[TaskT]:
    """The tasks of one step: a fixed shuffle per epoch, so a resumed run picks the same."""
    n = len(task_ids)
    if n == 0:
        return []
    out = []
    for i in range(config.tasks_per_step):
        index = (step - 1) * config.tasks_per_step + i
        epoch, offset = divmod(index, n)
        order = list(range(n))
        random.Random(config.seed * 1_000_003 + epoch).shuffle(order)
        out.append(task_ids[order[offset]])
    return out


def generate(tasks: Sequence[TaskT], rollout_fn: Callable[[TaskT, int], RolloutT],
             config: GRPOConfig, step: int) -> list[list[RolloutT]]:
    """``group_size`` rollouts per task; sampling is seeded by (seed, step)."""
    import torch

    torch.manual_seed(config.seed * 7919 + step)
    random.seed(config.seed * 7919 + step)
    return [[rollout_fn(task, g) for g in range(config.group_size)] for task in tasks]


def score(groups: Sequence[Sequence[RolloutT]],
          score_group: Callable[[Sequence[RolloutT]], list[float]]) -> list[list[float]]:
    """A reward for every rollout; scoring sees a whole group at once (judge batching)."""
    return [list(score_group(group)) for group in groups]


def trainables(groups: Sequence[Sequence[RolloutT]], rewards: Sequence[Sequence[float]],
               samples_of: Callable[[RolloutT], Sequence[Sample]],
               failed: Callable[[RolloutT], bool] = lambda rollout: False) -> list[Trainable]:
    """Samples of every rollout in a group with signal, with their advantage.

    Rollouts that ``failed`` (could not run) take no part: their reward says nothing of
    the model, and counting it would shift the others' advantages."""
    out = []
    for group, group_rewards in zip(groups, rewards, strict=True):
        ran = [(r, reward) for r, reward in zip(group, group_rewards, strict=True)
               if not failed(r)]
        advantages = group_advantages([reward for _, reward in ran])
        if advantages is None:
            continue  # zero variance (or one rollout): every rollout as good as the others
        for (rollout, _), advantage in zip(ran, advantages, strict=True):
            for sample in samples_of(rollout):
                if sample.completion_ids:
                    out.append(Trainable(sample, advantage))
    return out


def update(batch: Sequence[Trainable], logprobs: LogprobFn, parameters: Sequence[Parameter],
           optimizer: Optimizer, config: GRPOConfig, ref_logprobs: LogprobFn | None = None,
           *, scaler: GradScaler | None = None) -> UpdateStats:
    """``updates_per_batch`` optimizer steps on ``batch``, accumulating micro-batches.

    Micro-batches hold calls of similar length (sorted), so padding stays small and the
    longest calls meet only each other. ``scaler`` scales the loss (fp16 training).
    """
    import torch

    tokens = sum(len(t.sample.completion_ids) for t in batch)
    if not batch or tokens == 0:
        return UpdateStats(0.0, 0, 0, 0.0, 0.0, 0.0)
    ordered = sorted(batch, key=lambda t: len(t.sample.prompt_ids) + len(t.sample.completion_ids))
    chunks = [ordered[i:i + config.micro_batch]
              for i in range(0, len(ordered), config.micro_batch)]
    with torch.no_grad():
        old = [_logprobs(logprobs, c)[0] for c in chunks] \
            if config.updates_per_batch > 1 else None
        ref = [_logprobs(ref_logprobs, c)[0] for c in chunks] \
            if ref_logprobs is not None and config.kl_beta else None
    total = kl_sum = clipped_sum = grad_norm = 0.0
    for _ in range(config.updates_per_batch):
        optimizer.zero_grad(set_to_none=True)
        total = kl_sum = clipped_sum = 0.0
        for i, chunk in enumerate(chunks):
            new, mask = _logprobs(logprobs, chunk)
            advantages = torch.tensor([[t.advantage] for t in chunk], dtype=new.dtype,
                                      device=new.device)
            per_token, kl, clipped = token_losses(
                new, old[i] if old is not None else new.detach(), advantages,
                config.clip_eps, ref[i] if ref is not None else None, config.kl_beta,
                _behaviour(chunk, new), config.is_cap)
            # Padding masked out; divided by the tokens of the whole batch, so the
            # accumulated gradient is that of one token-level mean over the step.
            loss = (per_token * mask).sum() / tokens
            (scaler.scale(loss) if scaler is not None else loss).backward()
            total += float(loss.detach())
            kl_sum += float((kl * mask).sum())
            clipped_sum += float((clipped.float() * mask).sum())
        if scaler is not None:
            scaler.unscale_(optimizer)  # clip the true gradient, not the scaled one
        grad_norm = float(torch.nn.utils.clip_grad_norm_(parameters, config.max_grad_norm))
        if scaler is not None:
            scaler.step(optimizer)  # skipped when the scaled gradient overflowed
            scaler.update()
        else:
            optimizer.step()
    return UpdateStats(loss=total, tokens=tokens, samples=len(batch), kl=kl_sum / tokens,
                       clipped=clipped_sum / tokens, grad_norm=grad_norm)


def _behaviour(chunk: Sequence[Trainable], like: Tensor) -> Tensor | None:
    """The sampler's log-probs of a micro-batch, padded like ``like``; None unless every
    sample has them (the trained weights sampled it themselves: no correction)."""
    import torch

    if not all(len(t.sample.logprobs) == len(t.sample.completion_ids) for t in chunk):
        return None
    width = like.shape[1]
    return torch.tensor([list(t.sample.logprobs) + [0.0] * (width - len(t.sample.logprobs))
                         for t in chunk], dtype=like.dtype, device=like.device)


def _logprobs(fn: LogprobFn, chunk: Sequence[Trainable]) -> tuple[Tensor, Tensor]:
    return fn([t.sample.prompt_ids for t in chunk], [t.sample.completion_ids for t in chunk])
