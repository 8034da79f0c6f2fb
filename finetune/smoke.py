"""A tiny run that must learn: SmolLM2-135M from its GGUF, a checks-only rubric, CPU.

The end-to-end test and ``benchmarks/finetune.py`` both run this: the policy is loaded
from the Q4 GGUF (transformers dequantizes it), asked yes-or-no questions — the
rollouts sampled by llama.cpp from that GGUF with each step's adapter (the default;
``rollout_engine="policy"`` samples with the torch policy instead) — and rewarded
by a deterministic check when its answer says "no" — which the base model rarely does
(about 1 in 6), so groups have variance and a few steps at a high LoRA learning rate
move it. Then the adapter is exported to GGUF and loaded by llama.cpp on the Q4 base,
and the logit shift it causes there is compared with the shift in PyTorch.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.finetune.grpo import GRPOConfig
from deskmate.finetune.judge import Judge
from deskmate.finetune.progress import Emit, ProgressEvent, Sampler
from deskmate.finetune.rollout import RolloutSettings
from deskmate.finetune.rubrics import Checks, Rubric
from deskmate.finetune.tasks import TrainTask

if TYPE_CHECKING:
    from deskmate.finetune.policy import Policy

PROMPTS = ("Say yes or no.", "Answer with one word, yes or no.")
CHECK = Checks(answer_regex=r"(?i)\bno\b")
CONFIG = GRPOConfig(steps=4, group_size=6, tasks_per_step=2, learning_rate=3e-3,
                    micro_batch=12, temperature=1.0, max_new_tokens=8, max_model_calls=1,
                    lora_rank=8, lora_alpha=16, seed=0, checkpoint_every=2)


def tiny_tasks() -> list[TrainTask]:
    return [TrainTask(p, "user", Rubric(checks=CHECK)) for p in PROMPTS]


def tiny_run(gguf: Path, run_dir: Path, config: GRPOConfig = CONFIG,
             emit: Emit | None = None) -> dict[str, Any]:
    """Train, export, compare; returns the figures the test and the benchmark report."""
    import torch

    from deskmate.finetune.export import export_gguf_adapter
    from deskmate.finetune.policy import PolicyConfig, load_policy
    from deskmate.finetune.train import train

    torch.set_num_threads(cpu_threads())
    started = time.perf_counter()
    policy = load_policy(gguf, PolicyConfig(device="cpu", lora_rank=config.lora_rank,
                                            lora_alpha=config.lora_alpha, seed=config.seed,
                                            max_seq_len=512))
    loaded = time.perf_counter()
    samplers: list[str] = []

    def sink(event: ProgressEvent) -> None:
        if isinstance(event, Sampler):
            samplers.append(event.engine)
        if emit is not None:
            emit(event)

    result = train(policy, tiny_tasks(), config, Judge(None), run_dir=run_dir,
                   settings=RolloutSettings.of("eager", config), emit=sink,
                   serving_gguf=gguf)
    trained = time.perf_counter()
    adapter = export_gguf_adapter(policy.model, run_dir / "adapter.gguf", base_gguf=gguf,
                                  overwrite=True)
    correlation = logit_shift_correlation(policy, gguf, adapter)
    steps = [line for line in result.history if line.get("event") == "step"]
    return {
        "history": result.history, "adapter": adapter, "correlation": correlation,
        "sampler": samplers[0],  # who sampled the rollouts: llamacpp | policy
        "reward_first": steps[0]["reward_mean"], "reward_last": steps[-1]["reward_mean"],
        "load_s": loaded - started, "train_s": trained - loaded,
        # steps whose groups all lacked variance trained nothing: not a speed
        "tokens_per_s_train": _mean([s["tokens_per_s_train"] for s in steps
                                     if s["tokens_trained"]]),
        "tokens_per_s_generate": _mean([s["tokens_per_s_generate"] for s in steps]),
        "total_s": time.perf_counter() - started,
    }


def cpu_threads() -> int:
    """Threads for torch: the idle cores, as the rollout engine counts them. On
    oversubscribed cores OpenMP threads spin waiting for each other too (measured here:
    0.4 s/token with one thread, 1.1 s with two, under a load of 10 on 2 cores)."""
    from deskmate.finetune.engine import idle_threads

    return idle_threads()


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 1) if values else 0.0


def logit_shift_correlation(policy: Policy, gguf: Path, adapter: Path) -> float:
    """Correlation of (adapter - base) next-token logits: PyTorch vs llama.cpp on Q4."""
    import numpy as np
    import torch

    from deskmate.app.agent.prompt import EAGER_PROMPT
    from deskmate.app.llm.base import ChatMessage
    from deskmate.app.llm.llamacpp_open import open_llama

    ids = policy.encode([ChatMessage("system", EAGER_PROMPT), ChatMessage("user", PROMPTS[0])])
    with torch.no_grad():
        x = torch.tensor([ids])
        tuned = policy.model(input_ids=x).logits[0, -1].float().numpy()
        with policy.model.disable_adapter():
            base = policy.model(input_ids=x).logits[0, -1].float().numpy()

    def last_logits(lora: Path | None) -> np.ndarray:
        llm = open_llama(str(gguf), lora_path=str(lora) if lora else None, n_ctx=512,
                              logits_all=True, verbose=False, n_threads=2)
        try:
            llm.eval(ids)
            return np.array(llm.scores[len(ids) - 1], dtype=np.float64)
        finally:
            llm.close()

    served = last_logits(adapter) - last_logits(None)
    n = min(len(served), len(tuned))
    return float(np.corrcoef(served[:n], (tuned - base)[:n])[0, 1])
