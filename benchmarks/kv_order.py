"""Does a prompt's reply depend on what the model read before it? KV reuse, aligned or not.

    python benchmarks/kv_order.py [--model NAME|PATH] [--threads 1] [--tokens 32]

A prompt that shares a prefix with the cached conversation (the same system prompt,
another request) evaluates only the rest. Where that rest begins decides how llama.cpp's
CPU kernels group the prompt's rows, and with it the logits' last bits. The runtime now
reuses a multiple of ``KV_ALIGN`` tokens when it leaves another conversation; with
``KV_ALIGN = 1`` it reuses the whole shared prefix, as before.

Each request is answered from an empty cache, then after each other request, both ways.
Reported per way: how many of those pairs gave other logits than the empty cache (and
the largest difference), how many gave another greedy reply, and the prompt tokens
evaluated (what the alignment costs). The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from deskmate.app.llm import ChatMessage, GenerationParams, complete, llamacpp
from deskmate.app.llm.llamacpp import LlamaCppModel
from deskmate.app.llm.registry import resolve_model

ROOT = Path(__file__).resolve().parent.parent
# Requests of different lengths, so that the shared prefix ends at different offsets.
REQUESTS = [
    "What time is it in Tokyo?",
    "Sum the numbers in /data/expenses.csv and write the total to total.txt.",
    "Who made the last commit in my repository?",
    "List the files in /home/me/notes.",
    "Convert 16:00 London time to Los Angeles time.",
    "Which product in prices.json is the most expensive, and what does it cost?",
]


def system_prompt() -> str:
    """A long, fixed system prompt like the agent's: README's section on the agent."""
    text = (ROOT / "README.md").read_text()
    start = text.find("## The agent")
    return text[start if start >= 0 else 0:][:3500]


def logits(model: LlamaCppModel) -> np.ndarray:
    llm = model._llm
    ptr = model._llama_cpp.llama_get_logits_ith(llm._ctx.ctx, -1)
    n_vocab = llm.n_vocab()
    return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)),
                                 shape=(n_vocab,)).copy()


def answer(model: LlamaCppModel, messages: list[ChatMessage], tokens: int):
    """The prompt's last logits and its greedy reply; the tokens it evaluated."""
    prompt = model.tokenize(model.render(messages))
    evaluated = len(prompt) - model._load_prompt(prompt, threading.Event())
    first = logits(model)
    done = complete(model, messages, GenerationParams(max_tokens=tokens, temperature=0.0))
    return first, done.text, evaluated


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="tiny", help="registry name or .gguf path")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=32)
    args = parser.parse_args()
    started = time.perf_counter()
    path = resolve_model(args.model)
    model = LlamaCppModel(path, context=4096, seed=0, threads=args.threads)
    system = ChatMessage("system", system_prompt())
    chats = [[system, ChatMessage("user", r)] for r in REQUESTS]
    system_tokens = len(model.tokenize(model.render([system])))
    aligned = llamacpp.KV_ALIGN
    report: dict[str, dict[str, float]] = {}
    try:
        fresh = []
        for chat in chats:
            model.reset()
            fresh.append(answer(model, chat, args.tokens))
        for way, align in (("whole_prefix", 1), ("aligned", aligned)):
            llamacpp.KV_ALIGN = align
            other_logits = other_reply = evaluated = pairs = 0
            largest = 0.0
            for i, chat in enumerate(chats):
                for j, before in enumerate(chats):
                    if i == j:
                        continue
                    # No reset: the system prompt stays cached, as in a run of requests.
                    complete(model, before, GenerationParams(max_tokens=8, temperature=0.0))
                    got, text, n = answer(model, chat, args.tokens)
                    diff = float(np.abs(got - fresh[i][0]).max())
                    largest = max(largest, diff)
                    other_logits += diff > 0
                    other_reply += text != fresh[i][1]
                    evaluated += n
                    pairs += 1
            report[way] = {"pairs": pairs, "other_logits": other_logits,
                           "largest_logit_diff": round(largest, 4),
                           "other_greedy_reply": other_reply,
                           "mean_evaluated_tokens": round(evaluated / pairs, 1)}
    finally:
        llamacpp.KV_ALIGN = aligned
        model.close()
    for way, row in report.items():
        print(f"{way:13s} {row}")
    print(json.dumps({"model": Path(path).name, "kv_align": aligned,
                      "system_prompt_tokens": system_tokens,
                      **{f"{way}_{k}": v for way, row in report.items() for k, v in row.items()},
                      "wall_s": round(time.perf_counter() - started, 1)}))


if __name__ == "__main__":
    main()
