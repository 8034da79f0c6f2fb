"""Finetuning benchmark: the tiny end-to-end run on the CPU, and a VRAM estimate for 4B.

    .venv/bin/python benchmarks/finetune.py

Runs ``finetune.smoke.tiny_run`` (SmolLM2-135M from its Q4 GGUF, GRPO on a checks-only
task set, adapter exported to GGUF and loaded by llama.cpp) and prints one JSON object
as its last line: cpu_e2e_s (goal ≤ 300), reward_first / reward_last, step_s (mean),
rollout_tok_s (the llama.cpp engine, finetune/engine.py) and
rollout_tok_s_per_token_loop (the policy's own torch loop) on the same group of calls,
rollout_speedup, the same run with the engine (cpu_e2e_s_engine, reward_*_engine),
tokens_per_s_train, peak_rss_gb, and vram_estimate_gb_qwen3_4b: the training-phase
peak for the registry's recommended model (Qwen3-4B) at the default config, with the
longest calls the defaults allow (``hardware.bound_calls``; recorded sessions give a
real distribution on the user's machine). No CUDA machine was at hand: the 4B figure is
computed from the architecture and the lengths (finetune/hardware.py,
``vram_estimate``), not measured; benchmarks/finetune_gpu.sh measures it on a GPU.
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


def rollout_speeds(gguf: Path, group: int = 6, max_tokens: int = 48) -> dict[str, float]:
    """Tokens/s of the same group of rollout calls (the eager system prompt and a task, at
    temperature 1, top-p 1) sampled by the policy's torch loop and by the llama.cpp
    engine, on the same threads."""
    import torch

    from deskmate.app.agent.prompt import EAGER_PROMPT
    from deskmate.app.llm.base import ChatMessage, GenerationParams, complete
    from deskmate.finetune.engine import LlamaCppEngine
    from deskmate.finetune.policy import PolicyChatModel, PolicyConfig, load_policy
    from deskmate.finetune.smoke import PROMPTS, cpu_threads

    threads = cpu_threads()
    torch.set_num_threads(threads)
    policy = load_policy(gguf, PolicyConfig(device="cpu", max_seq_len=1024))
    messages = [ChatMessage("system", EAGER_PROMPT), ChatMessage("user", PROMPTS[0])]
    out = {}
    for name, model in (("per_token_loop", PolicyChatModel(policy)),
                        ("engine", LlamaCppEngine(policy, gguf, context=1024,
                                                  threads=threads))):
        started = time.perf_counter()
        for seed in range(group):
            complete(model, messages, GenerationParams(max_tokens=max_tokens, temperature=1.0,
                                                       top_p=1.0, seed=seed))
        tokens = sum(len(r.completion_ids) for r in model.take_records())
        out[name] = round(tokens / (time.perf_counter() - started), 1)
        model.close()
    return out


def main() -> None:
    from dataclasses import replace

    from deskmate.finetune.grpo import GRPOConfig
    from deskmate.finetune.hardware import bound_calls, vram_estimate
    from deskmate.finetune.smoke import CONFIG, tiny_run
    from tests.conftest import _tiny_model_file

    gguf = _tiny_model_file()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="deskmate-bench-ft-") as tmp:
        result = tiny_run(gguf, Path(tmp), emit=lambda event: print(
            json.dumps(event.to_json()), flush=True))
    elapsed = time.perf_counter() - started
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="deskmate-bench-ft-") as tmp:
        engine = tiny_run(gguf, Path(tmp), replace(CONFIG, rollout_engine="llamacpp"),
                          emit=lambda event: print(json.dumps(event.to_json()), flush=True))
    elapsed_engine = time.perf_counter() - started
    speeds = rollout_speeds(gguf)
    default = GRPOConfig()
    estimate = vram_estimate(rank=default.lora_rank, micro_batch=default.micro_batch,
                             calls=bound_calls(default))
    print(json.dumps({"vram_estimate_parts_gb": estimate}))
    steps = [line["step_s"] for line in result["history"] if line.get("event") == "step"]
    print(json.dumps({
        "cpu_e2e_s": round(elapsed, 1),
        "reward_first": result["reward_first"],
        "reward_last": result["reward_last"],
        "step_s": round(sum(steps) / len(steps), 1),
        "rollout_tok_s": speeds["engine"],
        "rollout_tok_s_per_token_loop": speeds["per_token_loop"],
        "rollout_speedup": round(speeds["engine"] / speeds["per_token_loop"], 1),
        "cpu_e2e_s_engine": round(elapsed_engine, 1),
        "reward_first_engine": engine["reward_first"],
        "reward_last_engine": engine["reward_last"],
        "step_s_engine": round(sum(s["step_s"] for s in engine["history"]
                                   if s.get("event") == "step") / CONFIG.steps, 1),
        "tokens_per_s_train": result["tokens_per_s_train"],
        "logit_shift_correlation": round(result["correlation"], 3),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 2),
        "vram_estimate_gb_qwen3_4b": estimate["training"],
    }))


if __name__ == "__main__":
    main()
