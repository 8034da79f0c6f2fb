"""One GRPO step of a Qwen3-4B-shaped model through Unsloth on a CUDA GPU, measured.

    benchmarks/finetune_gpu.sh        # installs the carried wheels, then runs this

Memory and speed depend on the model's shape, not its weights: the model is built from
Qwen3-4B's public config values with random weights, saved as a checkpoint and loaded
the way a run loads it (``finetune.policy._load_unsloth``: 4-bit base, LoRA r16,
Unsloth's gradient checkpointing). Then, measured with ``torch.cuda`` peak statistics:

- rollouts: ``PolicyChatModel.stream`` (the sampling loop the agent calls during a run;
  the agent loop itself is left out: its MCP and sandbox dependencies are not on that
  machine), ``group`` × ``tasks`` calls of ``max_new`` tokens at top-p 1;
- one update on those rollouts (``grpo.update`` with ``logprobs.batch_logprobs``).
  Random weights earn every rollout the same reward, so no group would have variance:
  advantages alternate +1/-1, which costs what a real update costs;
- one update on the longest calls the defaults allow (``hardware.bound_calls``), at
  micro-batch 4 and 1, beside ``hardware.vram_estimate`` for the same calls;
- the export of the adapter to GGUF (against a header-only qwen3 base).

The last line is one JSON object. The tokenizer is SmolLM2's (carried: no network
there); ids it lacks decode to nothing, which changes no shape.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

# Qwen3-4B-Instruct-2507's config.json (the registry's recommended model).
QWEN3_4B = {"hidden_size": 2560, "num_hidden_layers": 36, "num_attention_heads": 32,
            "num_key_value_heads": 8, "head_dim": 128, "intermediate_size": 9728,
            "vocab_size": 151936, "tie_word_embeddings": True, "rope_theta": 5000000.0,
            "max_position_embeddings": 262144, "rms_norm_eps": 1e-6,
            "hidden_act": "silu", "attention_bias": False}


def build_model(folder: Path, tokenizer: Path) -> None:
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(**QWEN3_4B, torch_dtype="bfloat16")
    with torch.device("cuda"):
        model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(str(folder))
    del model
    torch.cuda.empty_cache()
    for f in tokenizer.iterdir():
        shutil.copy(f, folder / f.name)


def gib(n: int) -> float:
    return round(n / 1024**3, 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokenizer", type=Path, required=True)
    parser.add_argument("--work", type=Path, default=Path("/tmp/deskmate-gpu-bench"))
    parser.add_argument("--group", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--max-new", type=int, default=256)
    args = parser.parse_args()

    import torch
    import transformers

    out: dict = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
                 "transformers": transformers.__version__}
    args.work.mkdir(parents=True, exist_ok=True)
    folder = args.work / "qwen3-4b-random"
    t = time.perf_counter()
    if not (folder / "config.json").exists():
        build_model(folder, args.tokenizer)
    out["build_s"] = round(time.perf_counter() - t, 1)

    t = time.perf_counter()
    # Unsloth first: it patches transformers and peft before they load models.
    import unsloth

    from deskmate.app.llm.base import ChatMessage, GenerationParams, complete
    from deskmate.finetune.export import export_gguf_adapter
    from deskmate.finetune.grpo import GRPOConfig, Sample, Trainable, update
    from deskmate.finetune.hardware import QWEN3_4B as ARCH
    from deskmate.finetune.hardware import bound_calls, vram_estimate
    from deskmate.finetune.logprobs import batch_logprobs
    from deskmate.finetune.policy import PolicyChatModel, PolicyConfig, _load_unsloth

    out["unsloth"] = getattr(unsloth, "__version__", "?")
    config = GRPOConfig()
    policy = _load_unsloth(str(folder), PolicyConfig(max_seq_len=config.max_seq_len))
    out["load_s"] = round(time.perf_counter() - t, 1)
    out["fp16"] = policy.fp16
    out["after_load_gb"] = gib(torch.cuda.memory_allocated())

    # rollouts
    torch.cuda.reset_peak_memory_stats()
    chat = PolicyChatModel(policy)
    system = ChatMessage("system", "You are deskmate, a terminal agent. " * 150)
    t = time.perf_counter()
    for task in range(args.tasks):
        for g in range(args.group):
            complete(chat, [system, ChatMessage("user", f"Task {task}: list my files.")],
                     GenerationParams(max_tokens=args.max_new, temperature=1.0, top_p=1.0,
                                      seed=task * 100 + g))
    gen_s = time.perf_counter() - t
    records = chat.take_records()
    generated = sum(len(r.completion_ids) for r in records)
    out["rollout_tokens"] = generated
    out["prompt_tokens"] = len(records[0].prompt_ids)
    out["rollout_tok_s"] = round(generated / gen_s, 1)
    out["peak_vram_gb_rollouts"] = gib(torch.cuda.max_memory_allocated())

    # update on the rollouts
    params = [p for p in policy.model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate)
    scaler = torch.amp.GradScaler("cuda") if policy.fp16 else None

    def logprobs(prompts, completions):
        return batch_logprobs(policy, prompts, completions, temperature=config.temperature)

    def step(batch, micro):
        policy.training()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        stats = update(batch, logprobs, params, optimizer,
                       GRPOConfig(micro_batch=micro), scaler=scaler)
        torch.cuda.synchronize()
        return stats, time.perf_counter() - t0

    batch = [Trainable(Sample(r.prompt_ids, r.completion_ids), 1.0 if i % 2 else -1.0)
             for i, r in enumerate(records)]
    torch.cuda.reset_peak_memory_stats()
    stats, update_s = step(batch, config.micro_batch)
    out["update_s"] = round(update_s, 1)
    out["step_s"] = round(gen_s + update_s, 1)
    out["tokens_trained"] = stats.tokens
    out["peak_vram_gb_step"] = gib(torch.cuda.max_memory_allocated())
    out["peak_vram_reserved_gb_step"] = gib(torch.cuda.max_memory_reserved())

    # the longest calls the defaults allow: the estimate's case, measured
    calls = bound_calls(config)
    vocab = len(policy.tokenizer)
    gen = torch.Generator().manual_seed(0)
    for micro in (1, config.micro_batch):
        longest = sorted(calls, key=sum, reverse=True)[:micro]
        bound = [Trainable(Sample(
            tuple(torch.randint(vocab, (p,), generator=gen).tolist()),
            tuple(torch.randint(vocab, (c,), generator=gen).tolist())), 1.0 if i % 2 else -1.0)
            for i, (p, c) in enumerate(longest)]
        key = f"micro{micro}"
        out[f"vram_estimate_gb_{key}"] = vram_estimate(ARCH, micro_batch=micro,
                                                       calls=calls)["training"]
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        try:
            _, s = step(bound, micro)
            out[f"peak_vram_gb_bound_{key}"] = gib(torch.cuda.max_memory_allocated())
            out[f"peak_vram_reserved_gb_bound_{key}"] = gib(torch.cuda.max_memory_reserved())
            out[f"update_s_bound_{key}"] = round(s, 1)
        except torch.OutOfMemoryError as exc:
            out[f"peak_vram_gb_bound_{key}"] = f"out of memory: {str(exc)[:200]}"
            optimizer.zero_grad(set_to_none=True)

    # export
    import gguf

    base = args.work / "qwen3-header.gguf"
    writer = gguf.GGUFWriter(str(base), "qwen3")
    writer.add_block_count(36)
    writer.add_head_count(32)
    writer.add_head_count_kv(8)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    t = time.perf_counter()
    adapter = export_gguf_adapter(policy.model, args.work / "adapter.gguf", base_gguf=base,
                                  overwrite=True)
    out["export_s"] = round(time.perf_counter() - t, 1)
    out["adapter_mb"] = round(adapter.stat().st_size / 1e6, 1)
    out["peak_vram_gb_any"] = gib(torch.cuda.max_memory_allocated())
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:  # one JSON line either way: the note needs the reason
        import traceback

        traceback.print_exc()
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"[:2000]}))
        sys.exit(1)
