"""Finetuning benchmark: the tiny end-to-end run on the CPU, and a VRAM estimate for 4B.

    .venv/bin/python benchmarks/finetune.py

Runs ``finetune.smoke.tiny_run`` (SmolLM2-135M from its Q4 GGUF, GRPO on a checks-only
task set, adapter exported to GGUF and loaded by llama.cpp) twice, side by side: with
the default sampler (the llama.cpp engine, finetune/engine.py: the GGUF with each
step's adapter, importance-corrected) and with the policy's own torch loop
(``rollout_engine="policy"``). Then it times both samplers on the same group of calls.
It prints one JSON object as its last line: cpu_e2e_s (goal ≤ 300), reward_first /
reward_last and step_s (mean) of the default run; the same of the torch-sampler run
(``*_per_token_loop``); rollout_tok_s (the engine) and rollout_tok_s_per_token_loop on
the same group of calls, and rollout_speedup; tokens_per_s_train, peak_rss_gb, and
vram_estimate_gb_qwen3_4b: the training-phase peak for the registry's recommended model
(Qwen3-4B) at the default config, with the longest calls the defaults allow
(``hardware.bound_calls``; recorded sessions give a real distribution on the user's
machine), and vram_estimate_gb_qwen3_4b_rollouts, the phase where the engine (its Q4_K_M
GGUF at max_seq_len) samples beside the idle policy. No CUDA machine was at hand: the 4B
figures are computed from the architecture and the lengths (finetune/hardware.py,
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
    from deskmate.finetune.hardware import QWEN3_4B, bound_calls, llamacpp_gb, vram_estimate
    from deskmate.finetune.smoke import CONFIG, tiny_run
    from tests.conftest import _tiny_model_file

    gguf = _tiny_model_file()
    runs, elapsed = {}, {}
    # The torch loop first, then the default (the engine), as the two halves of one run.
    for name, config in (("per_token_loop", replace(CONFIG, rollout_engine="policy")),
                         ("default", CONFIG)):
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="deskmate-bench-ft-") as tmp:
            runs[name] = tiny_run(gguf, Path(tmp), config, emit=lambda event: print(
                json.dumps(event.to_json()), flush=True))
        elapsed[name] = time.perf_counter() - started
    speeds = rollout_speeds(gguf)
    default = GRPOConfig()
    # Qwen3-4B-Instruct-2507 Q4_K_M (assets/models.toml: 2,500 MB) as the engine serves it.
    engine_gb = llamacpp_gb(2500 * 1024**2, QWEN3_4B, default.max_seq_len)
    estimate = vram_estimate(rank=default.lora_rank, micro_batch=default.micro_batch,
                             calls=bound_calls(default), engine_gb=engine_gb)
    print(json.dumps({"vram_estimate_parts_gb": estimate}))

    def step_s(result: dict) -> float:
        steps = [line["step_s"] for line in result["history"] if line.get("event") == "step"]
        return round(sum(steps) / len(steps), 1)

    result, loop = runs["default"], runs["per_token_loop"]
    print(json.dumps({
        "sampler": result["sampler"],
        "cpu_e2e_s": round(elapsed["default"], 1),
        "reward_first": result["reward_first"],
        "reward_last": result["reward_last"],
        "step_s": step_s(result),
        "rollout_tok_s": speeds["engine"],
        "rollout_tok_s_per_token_loop": speeds["per_token_loop"],
        "rollout_speedup": round(speeds["engine"] / speeds["per_token_loop"], 1),
        "cpu_e2e_s_per_token_loop": round(elapsed["per_token_loop"], 1),
        "reward_first_per_token_loop": loop["reward_first"],
        "reward_last_per_token_loop": loop["reward_last"],
        "step_s_per_token_loop": step_s(loop),
        "tokens_per_s_train": result["tokens_per_s_train"],
        "logit_shift_correlation": round(result["correlation"], 3),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 2),
        "vram_estimate_gb_qwen3_4b": estimate["training"],
        "vram_estimate_gb_qwen3_4b_rollouts": estimate["rollouts"],
    }))


if __name__ == "__main__":
    main()
