"""Fit tool search's query adapter (``QueryAdapter`` in tools/search.py), and check it.

    python benchmarks/search_adapter.py [--catalog DIR] [--queries FILE ...] [--rank 32]
                                        [--weight-decay 0.01] [--epochs 200]
                                        [--out FILE] [--check]

The adapter is a low-rank map added to a request's all-MiniLM-L6-v2 vector, fitted so that
the request's vector lands nearest the tools labelled for it: a softmax over every tool of
the catalog (cosine × 30), the labelled tools (``also`` included) as the answer, Adam,
weight decay pulling the map toward nothing. Trained on ``benchmarks/queries.jsonl`` (272
requests), ``benchmarks/queries_train.jsonl`` (857 requests for other tools, written for
this) and ``benchmarks/queries_train3.jsonl`` (945, one more for each tool no held-out
request names, in other styles; benchmarks/RESULTS.md says how), over the recorded toolspace
(``shared/toolspace``); never on ``benchmarks/queries_heldout.jsonl``, which
``benchmarks/toolspace.py`` reports.

Without ``--check`` it writes the adapter (default: the file the product ships,
``assets/search/query_adapter.npz``) and prints the hybrid's recall on the requests it
was trained on, before and after. With ``--check`` it writes nothing and measures what the
settings give on requests kept out of training: 5 folds of the last ``--queries`` file at
random (other requests, other tools of the same servers), 5 folds by tool (tools never
seen in training, their requests in every file left out: the fair comparison when another
file holds requests for the same tools), and 5 folds by server (servers never seen in
training, their requests in every file left out). Runs on a CPU in minutes.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from toolspace import load_queries, rank_of, recalls  # noqa: E402

from deskmate.app import paths  # noqa: E402
from deskmate.tools.catalog import Catalog  # noqa: E402
from deskmate.tools.search import (  # noqa: E402
    ADAPTER_FILE,
    EMBEDDER_ID,
    DenseIndex,
    QueryAdapter,
    ToolSearch,
    load_embedder,
)

SCALE = 30.0  # cosine → logit: sharp enough that the nearest few tools compete
FOLDS = 5


def fit(queries: Any, tools: Any, answers: list[list[int]], *, rank: int,
        weight_decay: float, epochs: int, seed: int = 0) -> tuple[Any, Any]:
    """The map's two factors, ``up`` (dimension × rank) and ``down`` (rank × dimension)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    q = torch.tensor(queries, dtype=torch.float32)
    t = torch.tensor(tools, dtype=torch.float32)
    answer = torch.zeros(len(q), len(t), dtype=torch.bool)
    for row, labelled in enumerate(answers):
        answer[row, labelled] = True
    dimension = q.shape[1]
    # One factor at zero: the map starts as nothing, and training moves it.
    up = torch.zeros(dimension, rank, requires_grad=True)
    down = (torch.randn(rank, dimension, generator=generator) * 0.01).requires_grad_()
    optimizer = torch.optim.Adam([up, down], lr=1e-2)
    for _ in range(epochs):
        moved = q + q @ up @ down
        logits = SCALE * (moved / moved.norm(dim=1, keepdim=True)) @ t.T
        right = torch.logsumexp(logits.masked_fill(~answer, -1e9), dim=1)
        loss = (torch.logsumexp(logits, dim=1) - right).mean()
        penalty = weight_decay * ((up ** 2).sum() + (down ** 2).sum())
        optimizer.zero_grad()
        (loss + penalty).backward()
        optimizer.step()
    return up.detach().numpy(), down.detach().numpy()


def ranks(search: ToolSearch, dense: DenseIndex, rows: list[dict[str, Any]],
          adapter: tuple[Any, Any] | None) -> list[int | None]:
    """Each request's labelled tool's place in the hybrid's top 20 (None: not there)."""
    dense.use_adapter(QueryAdapter(*adapter) if adapter else None)
    return [rank_of(search.search(row["query"], k=20), row["accept"]) for row in rows]


def folds(rows: list[dict[str, Any]], checked: Any) -> dict[str, list[tuple[Any, Any]]]:
    """(training rows, tested rows) pairs: ``FOLDS`` random parts of ``checked``;
    ``FOLDS`` groups of its tools, whose requests in every file leave training; and
    ``FOLDS`` groups of its servers, whose requests in every file leave training."""
    import numpy as np

    # a request's server is its own labelled tool's (``server``), not ``accept``'s first:
    # that is a set, whose order changes from one process to the next
    server = np.array([row["server"] for row in rows])
    shuffled = np.random.default_rng(0).permutation(checked)
    servers = np.random.default_rng(1).permutation(sorted(set(server[checked])))
    # by tool: every request labelled with a left-out tool (its own or an equivalent)
    # leaves training, whichever file it is in; what the held-out set measures (tools
    # never trained on, of servers that were), and the fold that stays fair when two
    # files hold requests for the same tools
    own = sorted({(rows[i]["server"], rows[i]["tool"]) for i in checked})
    order = np.random.default_rng(2).permutation(len(own))
    by_tool = []
    for part in np.array_split(order, FOLDS):
        out = {own[i] for i in part}
        left = np.array([bool(row["accept"] & out) for row in rows])
        tested = [i for i in checked if (rows[i]["server"], rows[i]["tool"]) in out]
        by_tool.append((np.flatnonzero(~left), np.array(tested, dtype=int)))
    return {
        "random": [(np.setdiff1d(np.arange(len(rows)), part), part)
                   for part in np.array_split(shuffled, FOLDS)],
        "by_tool": by_tool,
        "by_server": [(np.flatnonzero(~np.isin(server, group)),
                       checked[np.isin(server[checked], group)])
                      for group in np.array_split(servers, FOLDS)],
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--catalog", type=Path, default=ROOT.parent / "shared" / "toolspace")
    parser.add_argument("--queries", type=Path, nargs="+",
                        default=[ROOT / "benchmarks" / "queries.jsonl",
                                 ROOT / "benchmarks" / "queries_train3.jsonl",
                                 ROOT / "benchmarks" / "queries_train.jsonl"])
    parser.add_argument("--rank", type=int, default=32)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--out", type=Path, default=ROOT / "assets" / "search" / ADAPTER_FILE)
    parser.add_argument("--check", action="store_true",
                        help="cross-validate the settings; write nothing")
    args = parser.parse_args(argv)

    import numpy as np

    started = time.perf_counter()
    catalog = Catalog.from_snapshots(args.catalog)
    tools = list(catalog)
    position = {(tool.server, tool.name): i for i, tool in enumerate(tools)}
    embedder = load_embedder()
    dense = DenseIndex(tools, model=embedder, cache_dir=paths.embeddings_cache(), adapt=False)
    search = ToolSearch(catalog, dense=dense)
    tool_vectors = dense.vectors
    sets = {path.name: load_queries(path, catalog) for path in args.queries}
    rows = [row for loaded in sets.values() for row in loaded]
    vectors = embedder.encode([row["query"] for row in rows], batch_size=64,
                              normalize_embeddings=True, convert_to_numpy=True)
    answers = [[position[pair] for pair in row["accept"]] for row in rows]
    settings = {"rank": args.rank, "weight_decay": args.weight_decay, "epochs": args.epochs}
    result: dict[str, Any] = {"catalog": str(args.catalog), "tools": len(tools),
                              "trained_on": {name: len(r) for name, r in sets.items()},
                              **settings}

    if args.check:
        last = list(sets)[-1]
        first = len(rows) - len(sets[last])  # the checked file's rows come last
        checked = np.arange(first, len(rows))
        splits = folds(rows, checked)
        result["checked"] = last
        base = ranks(search, dense, sets[last], None)
        result["unadapted"] = recalls(base)
        for name, parts in splits.items():
            found: list[int | None] = [None] * len(rows)
            for train, test in parts:
                adapter = fit(vectors[train], tool_vectors, [answers[i] for i in train],
                              **settings)
                for i, r in zip(test, ranks(search, dense, [rows[i] for i in test], adapter),
                                strict=True):
                    found[i] = r
            result[name] = recalls([found[i] for i in checked])
    else:
        up, down = fit(vectors, tool_vectors, answers, **settings)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        partial = args.out.with_suffix(".tmp.npz")
        np.savez_compressed(partial, embedder=np.array(EMBEDDER_ID),
                            up=up.astype(np.float32), down=down.astype(np.float32))
        partial.replace(args.out)
        result["out"] = str(args.out)
        for name, loaded in sets.items():
            result[name] = {"before": recalls(ranks(search, dense, loaded, None)),
                            "after": recalls(ranks(search, dense, loaded, (up, down)))}
    result["seconds"] = round(time.perf_counter() - started, 1)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
