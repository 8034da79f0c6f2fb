"""What the reply grammar after a failed cell costs: decode speed with and without it.

    python benchmarks/grammar.py [--model NAME|PATH] [--tokens 64] [--repeats 5]

Code mode holds the reply after a failed cell to one Python block
(``actions_code.CODE_REPLY``, a llama.cpp grammar). The grammar is checked against the
candidates at every token, so a constrained reply decodes more slowly. The same
conversation (a request, a cell, its traceback) is answered with and without the
grammar, interleaved in one model object so that both see the same machine load.
Reported: median decode tok/s of each, their ratio, and whether the free replies and
the constrained ones were code. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deskmate.app.agent.actions_code import CODE_REPLY
from deskmate.app.llm import ChatMessage, GenerationParams, complete
from deskmate.app.llm.llamacpp import LlamaCppModel
from deskmate.app.llm.registry import resolve_model

CONVERSATION = [
    ChatMessage("system", "You answer by writing one ```python block; the tools are "
                          "functions, e.g. filesystem.read_text_file(path). When done, "
                          "reply 'Final answer: ...'."),
    ChatMessage("user", "What is the median latency in /data/latency.log?"),
    ChatMessage("assistant", "```python\nlines = filesystem.read_text_file(path="
                             "'/data/latency.log').splitlines()\nvalues = sorted(int(l) "
                             "for l in lines)\nprint(values[len(values) // 2])\n```"),
    ChatMessage("user", "Output:\nError: Traceback (most recent call last):\n  File "
                        "\"<cell 1>\", line 2, in <module>\nValueError: invalid literal for "
                        "int() with base 10: 'GET /home 120ms'"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="registry name or .gguf path")
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    path = resolve_model(args.model)
    model = LlamaCppModel(path, context=2048, seed=0)
    speeds: dict[str, list[float]] = {"free": [], "grammar": []}
    code: dict[str, list[bool]] = {"free": [], "grammar": []}
    try:
        for _ in range(args.repeats):
            for name, grammar in (("free", None), ("grammar", CODE_REPLY)):
                params = GenerationParams(max_tokens=args.tokens, temperature=0.0,
                                          grammar=grammar)
                done = complete(model, CONVERSATION, params)
                speeds[name].append(done.usage.decode_tps)
                code[name].append(done.text.lstrip().startswith("```python"))
    finally:
        model.close()
    free, held = (statistics.median(speeds[n]) for n in ("free", "grammar"))
    print(json.dumps({
        "model": Path(path).name, "tokens": args.tokens, "repeats": args.repeats,
        "decode_tps_free": round(free, 1), "decode_tps_grammar": round(held, 1),
        "grammar_vs_free": round(held / free, 3) if free else 0,
        "free_replies_code": sum(code["free"]), "grammar_replies_code": sum(code["grammar"]),
        "wall_s": round(time.perf_counter() - started, 1),
    }))


if __name__ == "__main__":
    main()
