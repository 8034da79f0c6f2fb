"""What this machine can train, before anything heavy is imported.

The Finetune screen and ``deskmate finetune`` use it: the NVIDIA GPUs ``nvidia-smi``
reports, the memory a GRPO run of the configured model needs (estimated — never measured
here — from the model's shape in its GGUF header, the lengths of the model calls in
recorded sessions, the judge and the held-out eval), and the settings for that pair.
No torch here: importing it takes seconds and the screen must open at once.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deskmate.finetune.grpo import GRPOConfig

GB = 1024**3
# Headroom left on the card: the allocator fragments, and the desktop may hold some.
VRAM_USABLE = 0.9
# Rollouts on the CPU are token-by-token transformers decoding: keep them short.
CPU_SETTINGS = {"group_size": 4, "tasks_per_step": 1, "steps": 10, "max_new_tokens": 64,
                "max_model_calls": 2, "micro_batch": 8}


@dataclass(frozen=True)
class Gpu:
    name: str
    total_gb: float
    free_gb: float


@dataclass(frozen=True)
class Arch:
    """The shape of a decoder-only transformer: all that training memory depends on."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied_embeddings: bool = True


# The context the judge and the held-out eval load llama.cpp models with.
LLAMACPP_CONTEXT = 8192

# Qwen3-4B-Instruct-2507, from its public config.json (the registry's recommended model).
QWEN3_4B = Arch(hidden=2560, layers=36, heads=32, kv_heads=8, head_dim=128,
                intermediate=9728, vocab=151936)


@dataclass(frozen=True)
class Plan:
    """What a run here should look like; ``device`` is None when none can train."""

    device: str | None
    reason: str  # one line for the user: why this device and these settings
    grpo: dict[str, Any] = field(default_factory=dict)  # GRPOConfig overrides
    vram_gb: float | None = None  # estimated peak on the GPU (None: CPU, or unknown shape)


def detect_gpus(nvidia_smi: str | None = None, timeout: float = 10.0) -> list[Gpu]:
    """The NVIDIA GPUs of this machine; [] when there is no driver or no card."""
    exe = nvidia_smi or shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run(
            [exe, "--query-gpu=name,memory.total,memory.free", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=timeout, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []  # a driver that does not answer is no GPU to train on
    gpus = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3:
            continue
        try:
            total, free = float(parts[1]) / 1024, float(parts[2]) / 1024  # MiB -> GiB
        except ValueError:
            continue  # "[N/A]" on some cards
        gpus.append(Gpu(parts[0], round(total, 1), round(free, 1)))
    return gpus


def arch_of_gguf(path: Path) -> Arch | None:
    """The model's shape from its GGUF header (None when a key is missing)."""
    from deskmate.app.llm.gguf_file import GGUFError, inspect_gguf

    try:
        meta = inspect_gguf(path, check_data=False).metadata
    except GGUFError:
        return None
    arch = meta.get("general.architecture")

    def get(key: str) -> int | None:
        value = meta.get(f"{arch}.{key}")
        return int(value) if isinstance(value, int | float) else None

    hidden, heads = get("embedding_length"), get("attention.head_count")
    tokens = re.fullmatch(r"<array of (\d+)>", str(meta.get("tokenizer.ggml.tokens", "")))
    vocab = get("vocab_size") or (int(tokens.group(1)) if tokens else None)
    layers, intermediate = get("block_count"), get("feed_forward_length")
    if hidden is None or layers is None or intermediate is None or vocab is None or not heads:
        return None
    head_dim = get("attention.key_length") or hidden // heads
    return Arch(hidden=hidden, layers=layers, heads=heads,
                kv_heads=get("attention.head_count_kv") or heads, head_dim=head_dim,
                intermediate=intermediate, vocab=vocab)


# (prompt tokens, completion tokens) of one model call.
Call = tuple[int, int]
# What the bound below assumes a rollout's first prompt is (system prompt with the tool
# index, and the task), and what one observation of ≤ 4,000 characters adds in tokens.
# tests/test_finetune_hardware.py measures the real code-mode system prompt against it.
SYSTEM_TOKENS = 2048
OBSERVATION_TOKENS = 1200
# finetune/logprobs.py's chunk of completion tokens per vocabulary projection.
LOGIT_CHUNK_TOKENS = 512
# llama.cpp's compute buffers beside weights and KV cache (the logits of a 512-token
# batch at a 152k vocabulary alone are 0.3 GiB).
LLAMACPP_BUFFERS = 0.5 * GB


def bound_calls(config: GRPOConfig) -> list[Call]:
    """The model calls of a rollout that uses every call ``config`` allows, each reply
    and each observation at its cap: the longest calls a step can hold, for when no
    rollouts were recorded yet."""
    calls = []
    for k in range(config.max_model_calls):
        prompt = SYSTEM_TOKENS + k * (config.max_new_tokens + OBSERVATION_TOKENS)
        calls.append((prompt, config.max_new_tokens))
    return calls


def llamacpp_gb(gguf_bytes: int, arch: Arch, context: int) -> float:
    """GPU memory of a llama.cpp model fully offloaded: weights, f16 KV cache, buffers."""
    kv = 2 * arch.layers * arch.kv_heads * arch.head_dim * context * 2
    return round((gguf_bytes + kv + LLAMACPP_BUFFERS) / GB, 2)


def vram_estimate(arch: Arch = QWEN3_4B, *, rank: int = 16, micro_batch: int = 4,
                  calls: Sequence[Call] | None = None, judge_gb: float = 0.0,
                  eval_gb: float = 0.0, engine_gb: float = 0.0) -> dict[str, float]:
    """Peak GPU memory in GiB of a run: 4-bit base + LoRA on every projection.

    ``calls`` are the (prompt, completion) lengths of model calls as rollouts recorded
    them (default: ``bound_calls`` of the default config). The update groups calls by
    length, so the worst micro-batch is the ``micro_batch`` longest, padded to the
    longest of them. The parts at the training peak (its backward pass):
    - base weights: the 7 projections of each layer in NF4 (0.5 byte/param, plus ~0.13
      bit/param of double-quantized block scales); the embedding (tied with the output
      head) stays bf16, as Unsloth/bitsandbytes leave it;
    - LoRA: r·(in + out) per projection; weights, gradients and AdamW's two moments in
      fp32 (16 bytes/param);
    - activations with gradient checkpointing: one bf16 hidden state per layer boundary
      for every token of the micro-batch, plus one layer recomputed in full during
      backward (q/k/v/o and the MLP's gate/up/product, bf16; SDPA keeps no T×T matrix);
    - logits: only completion positions reach the head, in checkpointed chunks of
      ``LOGIT_CHUNK_TOKENS`` (finetune/logprobs.py): one chunk at a time in bf16, its
      fp32 copy, the fp32 log-softmax and its gradient (14 bytes an entry);
    - CUDA context and allocator slack: a flat 1 GiB.
    Beside training the judge (``judge_gb``, a llama.cpp model on the GPU) stays loaded.
    Before each update the rollout engine (``engine_gb``: the served model with the
    step's adapter, ``finetune/engine.py``) samples beside the idle policy (base, LoRA,
    AdamW, CUDA context), and is unloaded before the update; after training, the
    held-out eval loads the served model with the adapter (``eval_gb``) once training
    memory is released. ``total`` is the largest of the three phases, plus the judge.
    """
    h, n_layer = arch.hidden, arch.layers
    q_out, kv_out = arch.heads * arch.head_dim, arch.kv_heads * arch.head_dim
    ff = arch.intermediate
    shapes = [(h, q_out), (h, kv_out), (h, kv_out), (q_out, h), (h, ff), (h, ff), (ff, h)]
    proj_params = n_layer * sum(i * o for i, o in shapes)
    embed_params = arch.vocab * h * (1 if arch.tied_embeddings else 2)
    base = proj_params * (0.5 + 0.127 / 8) + embed_params * 2
    lora_params = n_layer * sum(rank * (i + o) for i, o in shapes)
    lora = lora_params * 16
    worst = sorted(calls if calls is not None else bound_calls(GRPOConfig()),
                   key=sum, reverse=True)[:micro_batch]
    tokens = len(worst) * (sum(worst[0]) if worst else 0)  # right-padded to the longest
    checkpoints = tokens * h * 2 * n_layer
    one_layer = tokens * 2 * (q_out + 2 * kv_out + q_out + h * 2 + 3 * ff)
    logits = min(LOGIT_CHUNK_TOKENS, sum(c for _, c in worst)) * arch.vocab * 14
    overhead = 1 * GB
    parts = {"base_4bit": base, "lora_and_adam": lora, "activations": checkpoints + one_layer,
             "logits": logits, "cuda_overhead": overhead}
    out = {k: round(v / GB, 2) for k, v in parts.items()}
    out["training"] = round(sum(parts.values()) / GB, 2)
    out["judge"], out["heldout_eval"] = judge_gb, eval_gb
    out["rollouts"] = round((base + lora + overhead) / GB + engine_gb, 2) if engine_gb else 0.0
    out["total"] = round(max(out["training"], out["rollouts"], eval_gb) + judge_gb, 2)
    out["longest_call"] = sum(worst[0]) if worst else 0
    out["params_b"] = round((proj_params + embed_params) / 1e9, 2)
    out["lora_params_m"] = round(lora_params / 1e6, 1)
    return out


def trainable_calls(calls: Sequence[Call], config: GRPOConfig) -> list[Call]:
    """Recorded calls as a run would train them: replies cut at ``max_new_tokens`` and
    at ``max_seq_len``; a prompt that does not fit ends its rollout untrained."""
    return [(p, min(c, config.max_new_tokens, config.max_seq_len - p))
            for p, c in calls if p < config.max_seq_len]


def recommend(gpus: list[Gpu], arch: Arch | None, *, cpu_ok: bool,
              default: GRPOConfig | None = None, calls: Sequence[Call] | None = None,
              judge_gb: float = 0.0, eval_gb: float = 0.0, engine_gb: float = 0.0) -> Plan:
    """Settings for a run of a model shaped ``arch`` on these GPUs (or the CPU).

    On a GPU the default micro-batch is halved until the estimate (with the judge and
    the held-out eval, from the recorded ``calls`` when given) fits the free memory of
    the largest card; gradient accumulation keeps the batch, so only speed changes.
    """
    default = default or GRPOConfig()
    if gpus:
        gpu = max(gpus, key=lambda g: g.free_gb)
        if arch is None:
            return Plan("cuda", f"{gpu.name}: the model's shape is unknown (download its "
                        "GGUF first), so its memory need is not estimated; default settings",
                        {})
        calls = trainable_calls(calls, default) if calls else bound_calls(default)
        micro = default.micro_batch
        while True:
            parts = vram_estimate(arch, rank=default.lora_rank, micro_batch=micro,
                                  calls=calls, judge_gb=judge_gb, eval_gb=eval_gb,
                                  engine_gb=engine_gb)
            need = parts["total"]
            # A smaller micro-batch shrinks the update only, not the rollouts or the eval.
            if (need <= gpu.free_gb * VRAM_USABLE or micro == 1
                    or parts["training"] < max(parts["rollouts"], eval_gb)):
                break
            micro //= 2
        if need > gpu.free_gb * VRAM_USABLE:
            return Plan(None, f"{gpu.name} has {gpu.free_gb:.1f} GB free; this model needs "
                        f"about {need:.1f} GB to train even one rollout at a time. Close "
                        "what holds GPU memory, or pick a smaller model.", {}, need)
        return Plan("cuda", f"trains on the {gpu.name}, in about {need:.1f} of its "
                    f"{gpu.free_gb:.1f} GB free",
                    {"micro_batch": micro} if micro != default.micro_batch else {}, need)
    if cpu_ok:
        return Plan("cpu", "a tiny model trains on the CPU, with short rollouts: slow, "
                    "for trying the feature", dict(CPU_SETTINGS))
    return Plan(None, "training this model needs an NVIDIA GPU (none found by "
                "nvidia-smi); the CPU trains tiny models only (`tiny` in the models screen)")


def describe(plan: Plan, default: GRPOConfig | None = None) -> str:
    """The run settings of ``plan`` in one line, for the user to see before starting."""
    c = default or GRPOConfig()
    g = {**{k: getattr(c, k) for k in ("group_size", "tasks_per_step", "lora_rank",
                                       "micro_batch", "max_new_tokens")}, **plan.grpo}
    memory = f" · ~{plan.vram_gb:.1f} GB VRAM" if plan.vram_gb else ""
    tasks = f"{g['tasks_per_step']} task{'s' if g['tasks_per_step'] != 1 else ''}"
    return (f"{g['group_size']} rollouts × {tasks} a step · LoRA "
            f"r{g['lora_rank']} · micro-batch {g['micro_batch']} · replies ≤ "
            f"{g['max_new_tokens']} tokens{memory}")
