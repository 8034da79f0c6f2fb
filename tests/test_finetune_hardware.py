"""What the machine can train: nvidia-smi's answer, the model's shape from its GGUF,
the VRAM estimate and the recommended settings (no torch involved)."""

from __future__ import annotations

import subprocess
import sys

from deskmate.finetune.grpo import GRPOConfig
from deskmate.finetune.hardware import (
    QWEN3_4B,
    Gpu,
    arch_of_gguf,
    describe,
    detect_gpus,
    recommend,
    vram_estimate,
)


def fake_smi(tmp_path, body: str):
    script = tmp_path / "nvidia-smi"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(0o755)
    return str(script)


def test_gpus_from_nvidia_smi(tmp_path):
    smi = fake_smi(tmp_path, 'test "$1" = "--query-gpu=name,memory.total,memory.free" || exit 9\n'
                             'echo "NVIDIA GeForce RTX 4090, 24564, 23012"\n'
                             'echo "NVIDIA A100-SXM4-80GB, 81920, [N/A]"')
    assert detect_gpus(smi) == [Gpu("NVIDIA GeForce RTX 4090", 24.0, 22.5)]
    assert detect_gpus(fake_smi(tmp_path, "echo 'no devices' >&2; exit 6")) == []
    assert detect_gpus(str(tmp_path / "absent")) == []


def test_no_nvidia_smi_here_means_no_gpu():
    found = subprocess.run(["sh", "-c", "command -v nvidia-smi"], capture_output=True)
    if found.returncode != 0:
        assert detect_gpus() == []


def test_shape_read_from_the_tiny_gguf(tiny_model_path):
    arch = arch_of_gguf(tiny_model_path)
    # SmolLM2-135M's config.json: 576 hidden, 30 layers, 9 heads (3 KV), 1536 MLP, 49152 vocab.
    assert (arch.hidden, arch.layers, arch.heads, arch.kv_heads, arch.head_dim,
            arch.intermediate, arch.vocab) == (576, 30, 9, 3, 64, 1536, 49152)
    assert arch_of_gguf(tiny_model_path.parent / "missing.gguf") is None


def test_vram_estimate_of_the_recommended_4b():
    default = GRPOConfig()
    parts = vram_estimate(QWEN3_4B, rank=default.lora_rank, micro_batch=default.micro_batch,
                          completion=default.max_new_tokens)
    assert parts["params_b"] == 4.02  # Qwen3-4B: 4.0 B parameters, embedding tied
    assert 10 < parts["total"] <= 12  # the goal for a 4B on a consumer GPU
    summed = sum(parts[k] for k in ("base_4bit", "lora_and_adam", "activations", "logits",
                                    "cuda_overhead"))
    assert abs(parts["total"] - summed) < 0.05
    # Memory grows with the micro-batch: the knob the recommendation turns.
    assert vram_estimate(QWEN3_4B, micro_batch=1)["total"] < parts["total"]


def test_recommendations():
    roomy = recommend([Gpu("RTX 4090", 24.0, 23.0)], QWEN3_4B, cpu_ok=False)
    assert roomy.device == "cuda" and roomy.grpo == {} and 10 < roomy.vram_gb < 12
    # A 12 GB card fits by halving the micro-batch (gradient accumulation keeps the batch).
    tight = recommend([Gpu("RTX 3060", 12.0, 11.0)], QWEN3_4B, cpu_ok=False)
    assert tight.device == "cuda" and tight.grpo == {"micro_batch": 2}
    assert tight.vram_gb <= 11.0 * 0.9
    small = recommend([Gpu("GTX 1650", 4.0, 3.8)], QWEN3_4B, cpu_ok=False)
    assert small.device is None and "3.8 GB free" in small.reason
    # The largest card decides.
    two = recommend([Gpu("small", 4.0, 3.8), Gpu("big", 24.0, 23.0)], QWEN3_4B, cpu_ok=False)
    assert two.device == "cuda" and "big" in two.reason
    unknown = recommend([Gpu("RTX 4090", 24.0, 23.0)], None, cpu_ok=False)
    assert unknown.device == "cuda" and unknown.vram_gb is None
    assert recommend([], QWEN3_4B, cpu_ok=True).device == "cpu"
    none = recommend([], QWEN3_4B, cpu_ok=False)
    assert none.device is None and "NVIDIA GPU" in none.reason
    assert describe(tight) == ("4 rollouts × 4 tasks a step · LoRA r16 · micro-batch 2 · "
                               f"replies ≤ 512 tokens · ~{tight.vram_gb:.1f} GB VRAM")


def test_importing_it_loads_no_torch():
    code = "import sys, deskmate.finetune.hardware; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
