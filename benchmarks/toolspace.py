"""What the toolspace costs in context, and how well search finds the right tool.

    python benchmarks/toolspace.py [--catalog DIR] [--model tiny] [--queries FILE]
                                   [--heldout FILE] [--budget TOKENS] [--no-dense]

Token counts use the model's own tokenizer, for the first 100 and 1,000 tools of the
catalog (catalog order), all of it, and 2,000 tools: past the recorded catalog's size its
servers are copied, in order, as ``<server>-2``, ``<server>-3``… until the size is
reached (``Catalog.scaled``), so the index meets more servers than the budget can name:
- eager_tokens: every tool's JSON schema as the eager baseline sends it. A chat template
  that renders tools is used as is; one that ignores them (SmolLM2's) gets the Qwen/Hermes
  tool block (``<tools>`` with one JSON object per line), as Qwen's template writes it.
- index_tokens: the system-prompt server index (tools/index.py) at ``--budget``.
- loaded_tokens_p50: what a typical task has in context about tools, median over the
  queries: the index, plus one ``search_tools(query, k=5)`` answer as the agent's bridge
  prints it (one signature line and summary per hit), plus ``tool_help`` of the tool it
  then calls (the top hit's full signature and docstring).
- loaded_5sigs_p50: index + the full signatures of all top-5 hits: a task that reads
  the help of every hit (an upper bound).
Search quality on ``benchmarks/queries.jsonl`` (goals phrased as a user would, each
labelled with its tool; ``also`` lists other tools that do the same job): recall@1/5/10
and MRR over the whole catalog, for BM25 and, when the ``search`` extra is installed,
for the hybrid with all-MiniLM-L6-v2. ``recall_at_5`` and ``mrr`` are the hybrid's when
it ran, else BM25's (``search_mode`` says which). The same figures (and recall@20) on
``benchmarks/queries_heldout.jsonl`` go under ``heldout``: requests written by another
method, for tools drawn at random, that no ranker decision was taken on
(benchmarks/RESULTS.md says how they were made). The hybrid moves each query through the
shipped query adapter (tools/search.py), which was fitted on ``queries.jsonl``,
``queries_train.jsonl`` and ``queries_train3.jsonl``: the first set's figures are of
requests trained on; the held-out
ones are the figures that count.
``query_ms`` is a mode's search once the request is embedded (``query_encode_ms``, the
embedder's time a request, is measured apart: every request is embedded once).
The last line printed is one JSON object. Goals: index + loaded ≤ 1.5k tokens at the full
toolspace, recall@5 ≥ 0.95.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deskmate.app import paths  # noqa: E402
from deskmate.app.agent.actions_eager import tool_schemas  # noqa: E402
from deskmate.app.agent.bridge import ToolBridge  # noqa: E402
from deskmate.app.llm import ChatMessage, ModelError  # noqa: E402
from deskmate.app.llm.llamacpp import LlamaCppModel  # noqa: E402
from deskmate.app.llm.registry import resolve_model  # noqa: E402
from deskmate.tools.catalog import Catalog  # noqa: E402
from deskmate.tools.index import build_index, signature_listing  # noqa: E402
from deskmate.tools.policy import Policy  # noqa: E402
from deskmate.tools.search import DenseIndex, DenseUnavailable, ToolSearch, load_embedder  # noqa: E402
from deskmate.tools.signatures import signature  # noqa: E402

SIZES = (100, 1000, None, 2000)  # None: the whole catalog
HERMES_HEAD = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
HERMES_TAIL = (
    "</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


class _QueryCache:
    """The embedder, remembering single-query encodings across the catalog sizes."""

    def __init__(self, model: Any) -> None:
        self.model, self.memo = model, {}

    def encode(self, texts: list[str], **kwargs: Any) -> Any:
        if len(texts) != 1:
            return self.model.encode(texts, **kwargs)
        if texts[0] not in self.memo:
            self.memo[texts[0]] = self.model.encode(texts, **kwargs)
        return self.memo[texts[0]]


def load_queries(path: Path, catalog: Catalog) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        row["accept"] = {(row["server"], row["tool"])} | {
            (a["server"], a["tool"]) for a in row.get("also", [])}
        missing = [pair for pair in row["accept"] if pair not in catalog]
        if missing:
            raise SystemExit(f"{path}:{n}: {missing} not in the catalog")
        rows.append(row)
    return rows


def eager_tokens(model: LlamaCppModel, catalog: Catalog) -> int:
    messages = [ChatMessage("system", "You are a helpful assistant."),
                ChatMessage("user", "Hello")]
    schemas = tool_schemas(catalog)
    bare = model.count_tokens(messages)
    with_tools = model.count_tokens(messages, schemas)
    if with_tools > bare:  # the template renders tools itself
        return with_tools - bare
    block = "\n".join([HERMES_HEAD, *(json.dumps(s, ensure_ascii=False) for s in schemas),
                       HERMES_TAIL])
    return len(model.tokenize(block))


def rank_of(hits: list[Any], accept: set[tuple[str, str]]) -> int | None:
    return next((i for i, h in enumerate(hits, 1) if (h.server, h.tool) in accept), None)


def recalls(ranks: list[int | None]) -> dict[str, float]:
    """The share of requests whose tool is within the first 1, 5, 10 and 20 hits."""
    n = max(len(ranks), 1)
    return {f"recall_at_{k}": round(sum(1 for r in ranks if r is not None and r <= k) / n, 3)
            for k in (1, 5, 10, 20)}


def quality(search: ToolSearch, queries: list[dict[str, Any]]) -> dict[str, Any]:
    ranks = []
    started = time.perf_counter()
    for row in queries:
        ranks.append(rank_of(search.search(row["query"], k=20), row["accept"]))
    elapsed = time.perf_counter() - started
    n = len(queries)
    return {**recalls(ranks),
            "mrr": round(sum(1 / r for r in ranks if r) / n, 3),
            "query_ms": round(1000 * elapsed / n, 2),
            "misses_at_5": [row["query"] for row, r in zip(queries, ranks, strict=True)
                            if r is None or r > 5]}


def costs(catalog: Catalog, search: ToolSearch, queries: list[dict[str, Any]],
          count: Callable[[str], int], budget: int) -> dict[str, int]:
    index = build_index(catalog, count, budget)
    index_tokens = count(index)
    # The agent's own bridge writes the search_tools answer, so its format is measured.
    bridge = ToolBridge(catalog, _no_calls, Policy(), search=search)
    help_tokens: dict[tuple[str, str], int] = {}

    def help_of(hit: Any) -> int:
        key = (hit.server, hit.tool)
        if key not in help_tokens:
            help_tokens[key] = count(signature(catalog.get(*key)).text())
        return help_tokens[key]

    typical, every = [], []
    for row in queries:
        hits = search.search(row["query"], k=5)
        # The sandbox prints the list search_tools returns.
        found = count(repr(bridge.search_tools(row["query"], k=5))) if hits else 0
        typical.append(index_tokens + found + (help_of(hits[0]) if hits else 0))
        every.append(index_tokens + sum(help_of(hit) for hit in hits))
    # Every signature listed instead of the index: the agent does so up to 1,000 tokens.
    return {"index": index_tokens, "signature_listing": count(signature_listing(catalog)),
            "loaded_p50": int(statistics.median(typical)),
            "loaded_p90": int(statistics.quantiles(typical, n=10)[-1]),
            "loaded_5sigs_p50": int(statistics.median(every))}


def _no_calls(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the benchmark never calls a tool")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--catalog", type=Path, default=ROOT.parent / "shared" / "toolspace")
    parser.add_argument("--model", default="tiny", help="model whose tokenizer counts")
    parser.add_argument("--queries", type=Path, default=ROOT / "benchmarks" / "queries.jsonl")
    parser.add_argument("--heldout", type=Path,
                        default=ROOT / "benchmarks" / "queries_heldout.jsonl",
                        help="requests never tuned on, reported apart ('' to skip)")
    parser.add_argument("--budget", type=int, default=600, help="index budget in tokens "
                        "(the agent's default)")
    parser.add_argument("--no-dense", action="store_true", help="BM25 only")
    args = parser.parse_args(argv)

    catalog = Catalog.from_snapshots(args.catalog)
    queries = load_queries(args.queries, catalog)
    heldout = load_queries(args.heldout, catalog) if str(args.heldout) not in ("", ".") else []
    try:
        model = LlamaCppModel(resolve_model(args.model), context=2048)
    except ModelError as exc:  # not downloaded, not a GGUF, …: say so, no traceback
        parser.exit(1, f"{parser.prog}: {exc}\n")

    def count(text: str) -> int:
        return len(model.tokenize(text))

    started = time.perf_counter()
    modes = {"bm25": ToolSearch(catalog)}
    build_s = time.perf_counter() - started
    embedder: Any = None  # a _QueryCache: SentenceTransformer.encode is all it needs
    cache = paths.embeddings_cache()
    if not args.no_dense:
        try:
            embedder = _QueryCache(load_embedder())
            dense = DenseIndex(list(catalog), model=embedder, cache_dir=cache)
            modes["hybrid"] = ToolSearch(catalog, dense=dense)
            # side by side: the same vectors without the query adapter
            unadapted = DenseIndex(list(catalog), model=embedder, cache_dir=cache, adapt=False)
            modes["hybrid_unadapted"] = ToolSearch(catalog, dense=unadapted)
        except DenseUnavailable as exc:
            print(f"hybrid search skipped: {exc}", file=sys.stderr)
    search_mode = "hybrid" if "hybrid" in modes else "bm25"

    def search_over(sub: Catalog) -> ToolSearch:
        if sub is catalog:
            return modes[search_mode]
        if embedder is None:
            return ToolSearch(sub)
        return ToolSearch(sub, dense=DenseIndex(list(sub), model=embedder, cache_dir=cache))
    encode_ms = None
    if embedder is not None:  # encode every request once: query_ms is then each mode's own
        texts = [row["query"] for row in queries + heldout]
        started = time.perf_counter()
        for text in texts:
            embedder.encode([text], batch_size=1, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)
        encode_ms = round(1000 * (time.perf_counter() - started) / max(len(texts), 1), 2)
    results = {name: quality(search, queries) for name, search in modes.items()}
    held = {name: quality(search, heldout) for name, search in modes.items()} if heldout else {}

    result: dict[str, Any] = {"catalog": str(args.catalog), "model": model.info.name,
                              "tools": len(catalog), "servers": len(catalog.servers()),
                              "queries": len(queries), "index_budget": args.budget,
                              "servers_at": {}, "eager_tokens": {}, "index_tokens": {},
                              "loaded_tokens_p50": {}, "loaded_tokens_p90": {},
                              "loaded_5sigs_p50": {}, "signature_listing_tokens": {}}
    for size in SIZES:
        sub = catalog if size is None else catalog.scaled(size)
        key = "all" if size is None else str(size)
        c = costs(sub, search_over(sub), queries, count, args.budget)
        result["servers_at"][key] = len(sub.servers())
        result["eager_tokens"][key] = eager_tokens(model, sub)
        result["index_tokens"][key] = c["index"]
        result["loaded_tokens_p50"][key] = c["loaded_p50"]
        result["loaded_tokens_p90"][key] = c["loaded_p90"]
        result["loaded_5sigs_p50"][key] = c["loaded_5sigs_p50"]
        result["signature_listing_tokens"][key] = c["signature_listing"]
    best = results[search_mode]
    result.update(search_mode=search_mode, recall_at_1=best["recall_at_1"],
                  recall_at_5=best["recall_at_5"], recall_at_10=best["recall_at_10"],
                  mrr=best["mrr"], bm25_build_s=round(build_s, 3), query_encode_ms=encode_ms,
                  search={name: {k: v for k, v in r.items() if k != "misses_at_5"}
                          for name, r in results.items()},
                  heldout={name: {k: v for k, v in r.items() if k != "misses_at_5"}
                           for name, r in held.items()})
    for name, r in results.items():
        print(f"{name}: recall@5 {r['recall_at_5']}, mrr {r['mrr']}; misses at 5:",
              file=sys.stderr)
        for miss in r["misses_at_5"]:
            print(f"  {miss}", file=sys.stderr)
    model.close()
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
