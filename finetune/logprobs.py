"""Per-token log-probabilities of completions under the policy: what the GRPO loss reads.

Only the completion tokens are trained, so only their positions go through the
vocabulary projection: the backbone runs over prompt and completion (right-padded, one
forward for the micro-batch), its last hidden states are gathered at the positions that
predict completion tokens, and ``lm_head`` + log-softmax run over those rows in chunks
of ``CHUNK_TOKENS``. Under autograd each chunk is checkpointed: it keeps only the one
log-prob per token it returns and recomputes its logits in the backward pass, so the
memory for logits is one chunk's (``CHUNK_TOKENS`` × vocabulary), whatever the prompt
lengths. (The whole-sequence logits of a 4k-token prompt at Qwen3's 152k vocabulary are
1.2 GiB in bf16 alone, before the fp32 copies.)

Right padding needs no position correction and survives Unsloth's training mode, which
drops the attention mask and runs causal-only (real tokens never see the padding after
them). ``temperature`` divides the logits as sampling did: the loss is taken under the
distribution the rollouts were drawn from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # torch loads with the policy
    from torch import Tensor
    from torch.nn import Module
    from transformers import PreTrainedModel

    from deskmate.finetune.policy import Policy

# Completion tokens per vocabulary-projection chunk: 512 × 152k vocabulary × 14 bytes
# (bf16 logits, their fp32 copy, the fp32 log-softmax and its gradient) is 1 GiB.
CHUNK_TOKENS = 512


def sequence_logprobs(policy: Policy, prompt_ids: Sequence[int],
                      completion_ids: Sequence[int], *, temperature: float = 1.0) -> Tensor:
    """log p(completion token | everything before it), one value per completion token.

    Differentiable (call it with grad enabled for the loss); shape ``[len(completion)]``.
    """
    logprobs, mask = batch_logprobs(policy, [prompt_ids], [completion_ids],
                                    temperature=temperature)
    return logprobs[0, : int(mask[0].sum())]


def batch_logprobs(policy: Policy, prompts: Sequence[Sequence[int]],
                   completions: Sequence[Sequence[int]], *,
                   temperature: float = 1.0) -> tuple[Tensor, Tensor]:
    """Per-token log-probs of several completions in one backbone forward.

    Returns ``(logprobs, mask)``, both ``[batch, longest completion]``; ``mask`` is 1.0
    on real completion tokens, 0.0 on padding (where the log-prob is 0).
    """
    import torch

    if len(prompts) != len(completions) or not prompts:
        raise ValueError("give one completion per prompt, at least one of each")
    if any(len(p) == 0 for p in prompts):
        raise ValueError("every prompt needs at least one token")
    if temperature <= 0:
        raise ValueError(f"temperature {temperature} has no distribution to take "
                         "log-probs under: train with a sampling temperature above 0")
    device = policy.device
    pad = next(iter(policy.eos_ids), 0)
    seqs = [list(p) + list(c) for p, c in zip(prompts, completions, strict=True)]
    width = max(len(s) for s in seqs)
    if width > policy.config.max_seq_len:
        raise ValueError(f"a sequence of {width} tokens is longer than max_seq_len "
                         f"({policy.config.max_seq_len})")
    input_ids = torch.tensor([s + [pad] * (width - len(s)) for s in seqs], device=device)
    attention = torch.tensor([[1] * len(s) + [0] * (width - len(s)) for s in seqs],
                             device=device)
    # PEFT types the wrapped model as a plain Module; it is the transformers CausalLM.
    causal_lm = cast("PreTrainedModel", policy.model.get_base_model())
    hidden = causal_lm.get_decoder()(input_ids=input_ids, attention_mask=attention,
                                     use_cache=False).last_hidden_state
    # Position t predicts token t + 1: completion i of row r is predicted at len(p) - 1 + i.
    rows = torch.tensor([r for r, c in enumerate(completions) for _ in c], device=device)
    cols = torch.tensor([len(p) - 1 + i for p, c in zip(prompts, completions, strict=True)
                         for i in range(len(c))], device=device)
    targets = torch.tensor([t for c in completions for t in c], device=device)
    head = causal_lm.get_output_embeddings()
    if head is None:
        raise ValueError(f"{type(causal_lm).__name__} has no output head to score tokens with")
    picked = _project(head, hidden[rows, cols], targets, temperature)
    longest = max(len(c) for c in completions)
    mask = torch.tensor([[1.0] * len(c) + [0.0] * (longest - len(c)) for c in completions],
                        device=device)
    out = torch.zeros(mask.shape, dtype=picked.dtype, device=device)
    out = out.index_put((rows, torch.cat([torch.arange(len(c), device=device)
                                          for c in completions])), picked)
    return out, mask


def _project(head: Module, hidden: Tensor, targets: Tensor, temperature: float) -> Tensor:
    """log-softmax(head(hidden) / T)[target] row by row, CHUNK_TOKENS rows at a time."""
    import torch
    from torch.utils.checkpoint import checkpoint

    def chunk(h: Tensor, t: Tensor) -> Tensor:
        logits = head(h).float() / temperature
        return torch.log_softmax(logits, -1).gather(-1, t[:, None])[:, 0]

    parts = []
    for start in range(0, len(targets), CHUNK_TOKENS):
        h, t = hidden[start:start + CHUNK_TOKENS], targets[start:start + CHUNK_TOKENS]
        if torch.is_grad_enabled() and h.requires_grad:
            parts.append(checkpoint(chunk, h, t, use_reentrant=False))
        else:
            parts.append(chunk(h, t))
    return torch.cat(parts)
