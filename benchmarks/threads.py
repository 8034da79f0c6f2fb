"""Decode speed under CPU load: every core, one thread, and the timing tuner (threads = 0).

    python benchmarks/threads.py [--model NAME|PATH] [--tokens 96] [--repeats 3]

For each load (no other work, one busy process, a busy process on every core) the
three settings run interleaved, each in its own model object (the tuner carries what it
learned from one reply to the next, as it does in the app). Reported: median decode
tok/s per setting and load, prompt tok/s, and ``auto_vs_best``: the tuner's speed ÷ the
better fixed setting's, per load (goal ≥ 0.8 everywhere: never far from the right fixed
choice, which differs by load). The busy processes are plain Python spin loops.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deskmate.app.llm import ChatMessage, GenerationParams, ModelError, complete
from deskmate.app.llm.llamacpp import LlamaCppModel, physical_cores
from deskmate.app.llm.registry import resolve_model

PROMPT = ("Here are some notes about sailing ships. " * 20
          + "\nWrite a long, detailed essay about the history of sailing ships.")


def _spin(stop) -> None:  # a process that keeps one core busy
    while not stop.is_set():
        for _ in range(100_000):
            pass


def _reply(model: LlamaCppModel, tokens: int) -> tuple[float, float]:
    model.reset()  # the prompt is evaluated each time: prompt speed is measured too
    done = complete(model, [ChatMessage("user", PROMPT)],
                    GenerationParams(max_tokens=tokens, temperature=0.0))
    usage = done.usage
    prompt_tps = usage.evaluated_tokens / usage.ttft_s if usage.ttft_s > 0 else 0.0
    return usage.decode_tps, prompt_tps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny", help="registry name or .gguf path")
    parser.add_argument("--tokens", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    try:
        path = resolve_model(args.model)
    except (ModelError, ValueError) as exc:
        sys.exit(f"threads.py: {exc}")
    cores = physical_cores()
    settings = {"all_cores": cores, "one": 1, "auto": 0}
    models = {name: LlamaCppModel(path, context=2048, seed=0, threads=n)
              for name, n in settings.items()}
    loads = {"idle": 0, "one_busy": 1, "all_busy": cores}
    started = time.perf_counter()
    result: dict[str, dict[str, float]] = {}
    for load_name, busy in loads.items():
        stop = multiprocessing.Event()
        spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True)
                    for _ in range(busy)]
        for p in spinners:
            p.start()
        time.sleep(0.5 if busy else 0)
        decode: dict[str, list[float]] = {name: [] for name in settings}
        prompt: dict[str, list[float]] = {name: [] for name in settings}
        try:
            for _ in range(args.repeats):
                for name, model in models.items():
                    d, p = _reply(model, args.tokens)
                    decode[name].append(d)
                    prompt[name].append(p)
        finally:
            stop.set()
            for p in spinners:
                p.join(5)
        row = {f"decode_tps_{n}": round(statistics.median(v), 1) for n, v in decode.items()}
        row |= {f"prompt_tps_{n}": round(statistics.median(v), 1) for n, v in prompt.items()}
        best_fixed = max(row["decode_tps_all_cores"], row["decode_tps_one"])
        row["auto_vs_best"] = round(row["decode_tps_auto"] / best_fixed, 3) if best_fixed else 0
        result[load_name] = row
        print(f"{load_name:9s} " + "  ".join(f"{k}={v}" for k, v in row.items()),
              file=sys.stderr, flush=True)
    tuner = models["auto"]._tuner
    print(json.dumps({
        "model": Path(path).name, "cores": cores, "tokens": args.tokens,
        "repeats": args.repeats, **result,
        "auto_vs_best_min": min(r["auto_vs_best"] for r in result.values()),
        "auto_threads_last": tuner.best if tuner else None,
        "wall_s": round(time.perf_counter() - started, 1),
    }))


if __name__ == "__main__":
    main()
