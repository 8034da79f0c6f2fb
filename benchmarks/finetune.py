"""Finetuning benchmark: the tiny end-to-end run on the CPU, and a VRAM estimate for 4B.

    .venv/bin/python benchmarks/finetune.py

Runs ``finetune.smoke.tiny_run`` (SmolLM2-135M from its Q4 GGUF, GRPO on a checks-only
task set, adapter exported to GGUF and loaded by llama.cpp) and prints one JSON object
as its last line: cpu_e2e_s (goal ≤ 300), reward_first / reward_last, tokens_per_s_train,
peak_rss_gb, and peak_vram_gb_estimate for the registry's recommended model (Qwen3-4B)
under the default config (goal ≤ 12). No CUDA machine was at hand: the 4B figure is
computed from the architecture (finetune/hardware.py, ``vram_estimate``), not measured.
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
    from deskmate.finetune.hardware import vram_estimate
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
