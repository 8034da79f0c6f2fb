"""Write a small GGUF LoRA adapter for the tiny model (the layout llama.cpp accepts).

A test helper until finetune/ exports real adapters: random low-rank deltas on the
FFN projections, strong enough to change what the model says.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_random_lora(path: Path, base_info, rank: int = 8, alpha: float = 16.0,
                      scale: float = 0.5, arch: str | None = None, seed: int = 0) -> Path:
    import gguf

    meta = base_info.metadata
    arch = arch or base_info.architecture
    n_layer = int(meta[f"{base_info.architecture}.block_count"])
    n_embd = int(meta[f"{base_info.architecture}.embedding_length"])
    n_ff = int(meta[f"{base_info.architecture}.feed_forward_length"])
    rng = np.random.default_rng(seed)
    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", alpha)
    for layer in range(n_layer):
        for name, n_in, n_out in (("ffn_up", n_embd, n_ff), ("ffn_down", n_ff, n_embd)):
            a = rng.normal(0, scale, size=(rank, n_in)).astype(np.float32)
            b = rng.normal(0, scale, size=(n_out, rank)).astype(np.float32)
            writer.add_tensor(f"blk.{layer}.{name}.weight.lora_a", a)
            writer.add_tensor(f"blk.{layer}.{name}.weight.lora_b", b)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
