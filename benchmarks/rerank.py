"""Does the serving model rerank tool search's top hits better than the hybrid search?

    python benchmarks/rerank.py [--model tiny] [--top 20] [--stride 1] [--catalog DIR]
                                [--queries FILE] [--heldout FILE]

The second stage the tool-search goal points at (recall@5 ≥ 0.95 on requests nobody
tuned on), tried with the one model every install has: the chat model itself, listwise.
For each request the hybrid search (BM25 + all-MiniLM-L6-v2) gives its top ``--top``
tools; the model reads them as a lettered list (server, call line, summary) with the
request and the next token's log-probability of each letter is the model's score, from
one forward pass (no sampling, no parsing). The final order fuses both: reciprocal rank
of the hybrid order plus ``a`` × the model's probability; ``a`` is chosen on
``--queries`` (the set the search was tuned on) and only reported on ``--heldout``
(requests no ranker decision was taken on). ``--stride N`` takes every Nth request of
each set, for slow machines. The last line printed is one JSON object: recall@1/5/10 of
the hybrid alone, of the model alone and of the fusion, on both sets, and the tokens the
model evaluated a request (the prompt past the prefix it shares with the previous one:
what one search would cost the agent).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from toolspace import load_queries  # noqa: E402

from deskmate.app import paths  # noqa: E402
from deskmate.app.llm.registry import resolve_model  # noqa: E402
from deskmate.tools.catalog import Catalog  # noqa: E402
from deskmate.tools.search import DenseIndex, DenseUnavailable, ToolSearch, load_embedder  # noqa: E402
from deskmate.tools.signatures import signature  # noqa: E402

SUMMARY_CHARS, CALL_CHARS = 110, 90  # one line per candidate: ~35 tokens
WEIGHTS = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 100.0)  # a: the model's share in the fusion
RRF_K = 10


def prompt(request: str, lines: list[str]) -> str:
    """ChatML (Qwen, SmolLM2): the list, the request, the question; the reply's first
    token is the letter."""
    return ("<|im_start|>system\nYou choose the tool that does what a user asks.<|im_end|>\n"
            "<|im_start|>user\nTools:\n" + "\n".join(lines)
            + f"\n\nRequest: {request}\nWhich tool does exactly this? Answer with its "
            "letter only.<|im_end|>\n<|im_start|>assistant\n")


class LetterScorer:
    """Next-token log-probabilities of the letters A, B, … after a prompt, reusing the
    KV cache of the prompt prefix the previous request shared."""

    def __init__(self, model_path: Path, top: int) -> None:
        import numpy as np

        from deskmate.app.llm.llamacpp_open import open_llama

        self.np = np
        self.llm = open_llama(str(model_path), n_ctx=4096, n_batch=512, verbose=False)
        self.letters = [chr(ord("A") + i) for i in range(top)]
        self.ids = [self.llm.tokenize(letter.encode(), add_bos=False)[0]
                    for letter in self.letters]
        if len(set(self.ids)) != top:
            raise SystemExit(f"{model_path.name}: the letters A..{self.letters[-1]} are not "
                             "single distinct tokens; try a smaller --top")
        self.tokens = 0

    def __call__(self, text: str, n: int) -> list[float]:
        llm, np = self.llm, self.np
        tokens = llm.tokenize(text.encode(), add_bos=False, special=True)
        shared = 0
        for old, new in zip(llm._input_ids[:llm.n_tokens], tokens, strict=False):
            if old != new:
                break
            shared += 1
        llm.n_tokens = min(shared, len(tokens) - 1)  # eval() drops the KV cache past it
        self.tokens += len(tokens) - llm.n_tokens
        llm.eval(tokens[llm.n_tokens:])
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
        logits = logits.astype(np.float64)
        top = logits.max()
        norm = top + math.log(float(np.exp(logits - top).sum()))
        return [float(logits[i] - norm) for i in self.ids[:n]]


def rank(order: list[tuple[str, str]], accept: set[tuple[str, str]]) -> int | None:
    return next((i for i, pair in enumerate(order, 1) if pair in accept), None)


def fused(hits: list[tuple[str, str]], logprobs: list[float], a: float) -> list[tuple[str, str]]:
    score = {pair: 1 / (RRF_K + i + 1) + a * math.exp(lp) / RRF_K
             for i, (pair, lp) in enumerate(zip(hits, logprobs, strict=True))}
    return sorted(hits, key=lambda pair: -score[pair])


def recall(ranks: list[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    return {f"recall_at_{k}": round(sum(1 for r in ranks if r and r <= k) / n, 3)
            for k in (1, 5, 10)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="tiny", help="model that reranks")
    parser.add_argument("--top", type=int, default=20, help="hits the model reranks")
    parser.add_argument("--stride", type=int, default=1, help="every Nth request")
    parser.add_argument("--catalog", type=Path, default=ROOT.parent / "shared" / "toolspace")
    parser.add_argument("--queries", type=Path, default=ROOT / "benchmarks" / "queries.jsonl")
    parser.add_argument("--heldout", type=Path,
                        default=ROOT / "benchmarks" / "queries_heldout.jsonl")
    args = parser.parse_args(argv)
    if not 2 <= args.top <= 26:
        parser.error("--top takes 2 to 26 (one letter a hit)")

    catalog = Catalog.from_snapshots(args.catalog)
    try:
        search = ToolSearch(catalog, dense=DenseIndex(list(catalog), model=load_embedder(),
                                                      cache_dir=paths.embeddings_cache()))
    except DenseUnavailable as exc:
        parser.exit(1, f"{parser.prog}: {exc}\n")
    scorer = LetterScorer(resolve_model(args.model), args.top)

    def score_set(path: Path) -> list[tuple[list[tuple[str, str]], list[float], set]]:
        rows = []
        for row in load_queries(path, catalog)[::args.stride]:
            hits = [(h.server, h.tool) for h in search.search(row["query"], k=args.top)]
            lines = []
            for letter, (server, tool) in zip(scorer.letters, hits, strict=False):
                sig = signature(catalog.get(server, tool))
                summary = f" — {sig.summary[:SUMMARY_CHARS]}" if sig.summary else ""
                lines.append(f"{letter}. {server}: {sig.call_text()[:CALL_CHARS]}{summary}")
            rows.append((hits, scorer(prompt(row["query"], lines), len(hits)), row["accept"]))
        return rows

    started = time.perf_counter()
    tune = score_set(args.queries)
    held = score_set(args.heldout)
    requests = len(tune) + len(held)

    def figures(rows: list, a: float | None) -> dict[str, float]:
        if a is None:  # the model alone
            return recall([rank([h for _, h in sorted(zip(lp, hits, strict=True),
                                                      key=lambda x: -x[0])], accept)
                           for hits, lp, accept in rows])
        return recall([rank(fused(hits, lp, a), accept) for hits, lp, accept in rows])

    # a = 0 is the hybrid's own order; the best a on the tuning set, ties to the smaller.
    best = max(WEIGHTS, key=lambda a: (figures(tune, a)["recall_at_5"],
                                       figures(tune, a)["recall_at_1"], -a))
    result = {
        "model": resolve_model(args.model).name, "top": args.top, "stride": args.stride,
        "fusion_weight": best,
        "queries": {"n": len(tune), "hybrid": figures(tune, 0.0),
                    "model": figures(tune, None), "fused": figures(tune, best)},
        "heldout": {"n": len(held), "hybrid": figures(held, 0.0),
                    "model": figures(held, None), "fused": figures(held, best)},
        "evaluated_tokens_per_request": round(scorer.tokens / max(1, requests)),
        "seconds_per_request": round((time.perf_counter() - started) / max(1, requests), 2),
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
