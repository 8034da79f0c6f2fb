"""Runtime overhead and KV reuse, measured side by side in one run.

    python benchmarks/runtime.py [--model NAME|PATH] [--tokens 128] [--repeats 5]

- overhead_ratio: decode tok/s of LlamaCppModel.stream ÷ decode tok/s of raw
  llama-cpp-python ``create_completion(stream=True)``, same Llama object, prompt and
  greedy settings, runs interleaved; medians. Goal ≥ 0.95.
- reeval_ratio: in a 10-turn append-only conversation, tokens evaluated on turn 10 ÷
  tokens new on turn 10 (prompt minus the previous prompt and reply). Goal ≤ 1.05.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deskmate.app.llm import ChatMessage, GenerationParams, ModelError, complete
from deskmate.app.llm.llamacpp import LlamaCppModel
from deskmate.app.llm.registry import resolve_model

PROMPT = "Write a long, detailed essay about the history of sailing ships."


def raw_decode_tps(model: LlamaCppModel, tokens: list[int], n: int) -> tuple[float, int]:
    llm = model._llm
    llm.reset()
    times = []
    for _ in llm.create_completion(tokens, max_tokens=n, temperature=0.0, top_k=40, top_p=0.95,
                                   min_p=0.05, repeat_penalty=1.0, stream=True):
        times.append(time.perf_counter())
    count = len(times)
    return ((count - 1) / (times[-1] - times[0]) if count > 1 else 0.0), count


def ours_decode_tps(model: LlamaCppModel, messages: list[ChatMessage], n: int) -> tuple[float, int]:
    model.reset()
    done = complete(model, messages, GenerationParams(max_tokens=n, temperature=0.0))
    return done.usage.decode_tps, done.usage.completion_tokens


def conversation(model: LlamaCppModel, turns: int = 10) -> dict:
    model.reset()
    messages = [ChatMessage("system", "You are a helpful assistant. Answer in one sentence.")]
    rows = []
    for turn in range(1, turns + 1):
        messages.append(ChatMessage("user", f"Turn {turn}: name a fact about the number {turn}."))
        done = complete(model, messages, GenerationParams(max_tokens=24, temperature=0.0))
        rows.append(done.usage)
        messages.append(ChatMessage("assistant", done.text))
    last, prev = rows[-1], rows[-2]
    new = last.prompt_tokens - prev.prompt_tokens - prev.completion_tokens
    return {
        "reeval_ratio": round(last.evaluated_tokens / new, 3),
        "turn10_prompt_tokens": last.prompt_tokens,
        "turn10_new_tokens": new,
        "turn10_evaluated_tokens": last.evaluated_tokens,
        "turn10_ttft_s": round(last.ttft_s, 4),
        "turn1_ttft_s": round(rows[0].ttft_s, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="tiny", help="registry name, hf:… or .gguf path")
    parser.add_argument("--tokens", type=int, default=128, help="tokens generated per run")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved runs per side")
    parser.add_argument("--context", type=int, default=4096)
    args = parser.parse_args()

    try:
        model = LlamaCppModel(resolve_model(args.model), context=args.context, seed=0)
    except ModelError as exc:  # not downloaded, not a GGUF, …: say so, no traceback
        parser.exit(1, f"{parser.prog}: {exc}\n")
    messages = [ChatMessage("user", PROMPT)]
    tokens = model.tokenize(model.render(messages))
    ours_runs, raw_runs, counts = [], [], set()
    raw_decode_tps(model, tokens, 8)  # warm-up: page the weights in
    for _ in range(args.repeats):
        tps, n = ours_decode_tps(model, messages, args.tokens)
        ours_runs.append(tps)
        counts.add(("ours", n))
        tps, n = raw_decode_tps(model, tokens, args.tokens)
        raw_runs.append(tps)
        counts.add(("raw", n))
    ours, raw = statistics.median(ours_runs), statistics.median(raw_runs)
    cold = time.perf_counter()
    model.reset()
    prompt_done = complete(model, messages, GenerationParams(max_tokens=1, temperature=0.0))
    prompt_tps = prompt_done.usage.prompt_tokens / max(time.perf_counter() - cold, 1e-9)
    result = {
        "model": model.info.name,
        "overhead_ratio": round(ours / raw, 3),
        "ours_decode_tps": round(ours, 1),
        "raw_decode_tps": round(raw, 1),
        "tokens_per_run": sorted(n for _, n in counts),
        "prompt_tps": round(prompt_tps, 1),
        **conversation(model),
    }
    model.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
