"""Finetuning benchmark: the tiny end-to-end run on the CPU, and a VRAM estimate for 4B.

    .venv/bin/python benchmarks/finetune.py

Runs ``finetune.smoke.tiny_run`` (SmolLM2-135M from its Q4 GGUF, GRPO on a checks-only
task set, adapter exported to GGUF and loaded by llama.cpp) and prints one JSON object
as its last line: cpu_e2e_s (goal ≤ 300), reward_first / reward_last, tokens_per_s_train,
peak_rss_gb, and peak_vram_gb_estimate for the registry's recommended model (Qwen3-4B)
under the default config (goal ≤ 12). No CUDA machine was at hand: the 4B figure is
computed from the architecture (below), not measured.
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GB = 1024**3

# Qwen3-4B-Instruct-2507, from its public config.json.
QWEN3_4B = {"hidden": 2560, "layers": 36, "heads": 32, "kv_heads": 8, "head_dim": 128,
            "intermediate": 9728, "vocab": 151936, "tied_embeddings": True}


def vram_estimate(arch: dict = QWEN3_4B, *, rank: int = 16, seq_len: int = 4096,
                  micro_batch: int = 4, completion: int = 512) -> dict[str, float]:
    """Peak training memory in GiB for a 4-bit base + LoRA on every projection.

    The parts at the peak (the backward pass of one micro-batch):
    - base weights: the 7 projections of each layer in NF4 (0.5 byte/param, plus ~0.13
      bit/param of double-quantized block scales); the embedding (tied with the output
      head) stays bf16, as Unsloth/bitsandbytes leave it;
    - LoRA: r·(in + out) per projection; weights, gradients and AdamW's two moments in
      fp32 (16 bytes/param);
    - activations with gradient checkpointing: one bf16 hidden state per layer boundary
      for every token of the micro-batch, plus one layer recomputed in full during
      backward (q/k/v/o and the MLP's gate/up/product, bf16; SDPA keeps no T×T matrix);
    - logits: only over the completion (``batch_logprobs`` keeps logits from the first
      completion token on), bf16 from the head + fp32 upcast + fp32 log-softmax;
    - CUDA context and allocator slack: a flat 1 GiB.
    """
    h, n_layer = arch["hidden"], arch["layers"]
    q_out, kv_out = arch["heads"] * arch["head_dim"], arch["kv_heads"] * arch["head_dim"]
    ff = arch["intermediate"]
    shapes = [(h, q_out), (h, kv_out), (h, kv_out), (q_out, h), (h, ff), (h, ff), (ff, h)]
    proj_params = n_layer * sum(i * o for i, o in shapes)
    embed_params = arch["vocab"] * h * (1 if arch["tied_embeddings"] else 2)
    base = proj_params * (0.5 + 0.127 / 8) + embed_params * 2
    lora_params = n_layer * sum(rank * (i + o) for i, o in shapes)
    lora = lora_params * 16
    tokens = micro_batch * seq_len
    checkpoints = tokens * h * 2 * n_layer
    one_layer = tokens * 2 * (q_out + 2 * kv_out + q_out + h * 2 + 3 * ff)
    logits = micro_batch * completion * arch["vocab"] * (2 + 4 + 4)
    overhead = 1 * GB
    parts = {"base_4bit": base, "lora_and_adam": lora, "activations": checkpoints + one_layer,
             "logits": logits, "cuda_overhead": overhead}
    out = {k: round(v / GB, 2) for k, v in parts.items()}
    out["total"] = round(sum(parts.values()) / GB, 2)
    out["params_b"] = round((proj_params + embed_params) / 1e9, 2)
    out["lora_params_m"] = round(lora_params / 1e6, 1)
    return out


def main() -> None:
    from finetune.grpo import GRPOConfig
    from finetune.smoke import tiny_run
    from tests.conftest import _tiny_model_file

    gguf = _tiny_model_file()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="deskmate-bench-ft-") as tmp:
        result = tiny_run(gguf, Path(tmp), emit=lambda line: print(json.dumps(line),
                                                                   flush=True))
    elapsed = time.perf_counter() - started
    default = GRPOConfig()
    estimate = vram_estimate(rank=default.lora_rank, micro_batch=default.micro_batch,
                             completion=default.max_new_tokens)
    print(json.dumps({"vram_estimate_parts_gb": estimate}))
    print(json.dumps({
        "cpu_e2e_s": round(elapsed, 1),
        "reward_first": result["reward_first"],
        "reward_last": result["reward_last"],
        "tokens_per_s_train": result["tokens_per_s_train"],
        "tokens_per_s_generate": result["tokens_per_s_generate"],
        "logit_shift_correlation": round(result["correlation"], 3),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 2),
        "peak_vram_gb_estimate": estimate["total"],
    }))


if __name__ == "__main__":
    main()
