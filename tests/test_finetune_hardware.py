"""What the machine can train: nvidia-smi's answer, the model's shape from its GGUF,
the VRAM estimate and the recommended settings (no torch involved)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from deskmate.finetune.grpo import GRPOConfig
from deskmate.finetune.hardware import (
    OBSERVATION_TOKENS,
    QWEN3_4B,
    SYSTEM_TOKENS,
    Gpu,
    arch_of_gguf,
    bound_calls,
    describe,
    detect_gpus,
    recommend,
    trainable_calls,
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


def test_vram_estimate_is_the_sum_of_parts_computed_from_the_calls():
    """Each part by hand for Qwen3-4B and a recorded length distribution."""
    calls = [(2000, 400), (6000, 500), (9000, 512), (1000, 100), (4000, 300)]
    parts = vram_estimate(QWEN3_4B, rank=16, micro_batch=2, calls=calls, judge_gb=2.0,
                          eval_gb=3.0)
    gb = 1024**3
    # The update groups calls by length: the worst micro-batch is the two longest
    # (9512 and 6500 tokens), right-padded to 9512.
    tokens = 2 * 9512
    checkpoints = tokens * 2560 * 2 * 36  # a bf16 hidden state per layer boundary
    one_layer = tokens * 2 * (4096 + 2 * 1024 + 4096 + 2 * 2560 + 3 * 9728)  # recomputed
    assert parts["activations"] == pytest.approx((checkpoints + one_layer) / gb, abs=0.01)
    # Only completion positions reach the head, 512 at a time (1012 in that micro-batch).
    assert parts["logits"] == pytest.approx(512 * 151936 * 14 / gb, abs=0.01)
    proj = 36 * (2560 * 4096 + 2 * 2560 * 1024 + 4096 * 2560 + 3 * 2560 * 9728)
    assert parts["base_4bit"] == pytest.approx((proj * (0.5 + 0.127 / 8)
                                                + 151936 * 2560 * 2) / gb, abs=0.01)
    lora = 36 * 16 * (2560 + 4096 + 2 * (2560 + 1024) + 4096 + 2560 + 3 * (2560 + 9728))
    assert parts["lora_and_adam"] == pytest.approx(lora * 16 / gb, abs=0.01)
    assert parts["params_b"] == 4.02  # Qwen3-4B: 4.0 B parameters, embedding tied
    training = sum(parts[k] for k in ("base_4bit", "lora_and_adam", "activations", "logits",
                                      "cuda_overhead"))
    assert parts["training"] == pytest.approx(training, abs=0.05)
    # The judge stays on the GPU through training; the held-out eval comes after it.
    assert parts["total"] == pytest.approx(max(parts["training"], 3.0) + 2.0, abs=0.01)
    assert vram_estimate(QWEN3_4B, micro_batch=2, calls=calls, eval_gb=30.0)["total"] == 30.0
    # The rollout engine samples beside the idle policy (no activations), not beside the
    # update: a phase of its own, which a smaller micro-batch does not shrink.
    idle = parts["base_4bit"] + parts["lora_and_adam"] + parts["cuda_overhead"]
    sampled = vram_estimate(QWEN3_4B, micro_batch=2, calls=calls, engine_gb=20.0)
    assert sampled["rollouts"] == pytest.approx(idle + 20.0, abs=0.02)
    assert sampled["total"] == sampled["rollouts"]
    assert parts["rollouts"] == 0.0  # no engine counted
    # Memory grows with the micro-batch: the knob the recommendation turns.
    assert vram_estimate(QWEN3_4B, micro_batch=1, calls=calls)["total"] < \
        vram_estimate(QWEN3_4B, micro_batch=2, calls=calls)["total"]


def test_the_default_limits_fit_a_code_mode_rollout(tiny_model):
    """max_seq_len holds every call of a rollout at the defaults (defect: 4096 did not)."""
    from deskmate.app.agent.factory import build_agent

    config = GRPOConfig()
    runtime = build_agent(tiny_model, mode="code")
    try:
        system = tiny_model.tokenize(tiny_model.render(runtime.agent.transcript[:1]))
    finally:
        runtime.close()
    assert len(system) + 200 <= SYSTEM_TOKENS  # room for the task itself
    assert 4000 / OBSERVATION_TOKENS < 3.4  # an observation's cap in tokens, ≥ 3.4 chars each
    calls = bound_calls(config)
    assert len(calls) == config.max_model_calls
    assert max(p + c for p, c in calls) <= config.max_seq_len
    # Recorded calls count as they would train: cut replies, no room = no training.
    assert trainable_calls([(12000, 900), (13000, 10), (100, 50)], config) == [
        (12000, 288), (100, 50)]


def test_recommendations():
    calls = [(6000, 500)] * 8
    roomy = recommend([Gpu("RTX 4090", 24.0, 23.0)], QWEN3_4B, cpu_ok=False, calls=calls)
    assert roomy.device == "cuda" and roomy.grpo == {}
    assert roomy.vram_gb == vram_estimate(QWEN3_4B, calls=calls)["total"]
    # A 12 GB card fits by halving the micro-batch (gradient accumulation keeps the batch).
    tight = recommend([Gpu("RTX 3060", 12.0, 11.0)], QWEN3_4B, cpu_ok=False, calls=calls)
    assert tight.device == "cuda" and tight.grpo == {"micro_batch": 2}
    assert tight.vram_gb <= 11.0 * 0.9
    # The judge on the same GPU takes its share: one rollout at a time, or not at all.
    judged = recommend([Gpu("RTX 3060", 12.0, 11.0)], QWEN3_4B, cpu_ok=False, calls=calls,
                       judge_gb=2.0, eval_gb=2.0)
    assert judged.grpo == {"micro_batch": 1}
    # When the rollout engine's phase is the largest, halving the micro-batch is no help.
    engine_bound = recommend([Gpu("RTX 4090", 24.0, 23.0)], QWEN3_4B, cpu_ok=False,
                             calls=calls, engine_gb=30.0)
    assert engine_bound.device is None and engine_bound.grpo == {}
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


def test_the_plan_reads_call_lengths_from_recorded_sessions(home, tiny_model_path):
    """The worst micro-batch comes from the user's own recorded model calls."""
    from deskmate.app.agent import events as ev
    from deskmate.app.llm.base import Usage
    from deskmate.app.store import Recorder, open_db
    from deskmate.finetune.hardware import LLAMACPP_CONTEXT, llamacpp_gb
    from deskmate.finetune.survey import plan_for, recorded_calls

    with open_db() as db:
        rec = Recorder.new(db, model="m")
        rec.record(ev.TurnStarted(turn=1, user_message="list my files"))
        for step, (p, c) in enumerate([(1500, 120), (2600, 300)], start=1):
            rec.record(ev.ModelMessage(step=step, text="x", finish_reason="stop",
                                       usage=Usage(prompt_tokens=p, completion_tokens=c)))
    assert recorded_calls() == [(1500, 120), (2600, 300)]
    gpu = [Gpu("RTX 4090", 24.0, 23.0)]
    plan = plan_for(gpu, tiny_model_path, db_calls=True)
    arch = arch_of_gguf(tiny_model_path)
    judge = llamacpp_gb(tiny_model_path.stat().st_size, arch, LLAMACPP_CONTEXT)
    # The rollout engine: the served model at the longest call a rollout may make.
    engine = llamacpp_gb(tiny_model_path.stat().st_size, arch, GRPOConfig().max_seq_len)
    assert engine > judge
    assert plan.vram_gb == vram_estimate(arch, calls=[(1500, 120), (2600, 300)],
                                         judge_gb=judge, eval_gb=judge,
                                         engine_gb=engine)["total"]
    assert plan_for(gpu, tiny_model_path, db_calls=False).vram_gb == vram_estimate(
        arch, calls=bound_calls(GRPOConfig()), judge_gb=judge, eval_gb=judge,
        engine_gb=engine)["total"]
    # A model with only a GGUF gets no GPU plan (it would train as full bf16).
    gguf_only = plan_for(gpu, tiny_model_path, db_calls=False, base=str(tiny_model_path))
    assert gguf_only.device is None and "Hugging Face checkpoint" in gguf_only.reason
