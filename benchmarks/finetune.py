"""Finetuning benchmark: the tiny end-to-end run on the CPU, and a VRAM estimate for 4B.

    .venv/bin/python benchmarks/finetune.py

Runs ``finetune.smoke.tiny_run`` (SmolLM2-135M from its Q4 GGUF, GRPO on a checks-only
task set, adapter exported to GGUF and loaded by llama.cpp) and prints one JSON object
as its last line: cpu_e2e_s (goal ≤ 300), reward_first / reward_last, step_s (mean),
rollout_tok_s_per_token_loop (the policy's own token-by-token sampling loop),
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


def main() -> None:
    from deskmate.finetune.grpo import GRPOConfig
    from deskmate.finetune.hardware import bound_calls, vram_estimate
    from deskmate.finetune.smoke import tiny_run
    from tests.conftest import _tiny_model_file

    gguf = _tiny_model_file()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="deskmate-bench-ft-") as tmp:
        result = tiny_run(gguf, Path(tmp), emit=lambda event: print(
            json.dumps(event.to_json()), flush=True))
    elapsed = time.perf_counter() - started
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
        "rollout_tok_s_per_token_loop": result["tokens_per_s_generate"],
        "tokens_per_s_train": result["tokens_per_s_train"],
        "logit_shift_correlation": round(result["correlation"], 3),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 2),
        "vram_estimate_gb_qwen3_4b": estimate["training"],
    }))


if __name__ == "__main__":
    main()
