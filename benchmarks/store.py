"""Sessions store: recording latency, full-text search and export, on real SQLite files.

    python benchmarks/store.py [--messages 1000000] [--export-sessions 10000] [--events 3000]

- record_ms_per_event_p50: ``Recorder.record`` per stored event (each its own committed
  transaction, WAL), over a realistic stream of turns; ModelDelta is not stored and not
  counted. Goal ≤ 1 ms.
- fts_ms_p50: ``app.store.fts.search`` (messages and tool calls, best 20, with snippets) over
  a synthetic database of 1M messages in 100k sessions; queries are one or two words
  drawn across the vocabulary, prefixes and odd input. Goal ≤ 100 ms. The database is
  built in a temp dir on the real schema with executemany in large transactions and one
  FTS 'rebuild' (see ``build``); its build time is reported as build_s.
- export_s: ``export_jsonl`` of 10k sessions (100k messages) to a file.
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from deskmate.app.agent import events as ev
from deskmate.app.llm.base import Usage
from deskmate.app.store import Recorder, open_db, search
from deskmate.app.store.export import export_jsonl

MESSAGES_PER_SESSION = 10
WORDS_PER_MESSAGE = 24
VOCABULARY = 30_000
BATCH = 50_000


def turn_events(turn: int, position: int) -> list[ev.AgentEvent]:
    call = f"t{turn}"
    return [
        ev.TurnStarted(turn=turn, user_message=f"question {turn} about the repository"),
        ev.MessageAppended(position=position, role="user", content=f"question {turn}"),
        ev.ModelMessage(step=1, text="Let me look.\n```python\nprint(git.status())\n```",
                        finish_reason="stop", usage=Usage(prompt_tokens=800, reused_tokens=700,
                                                          evaluated_tokens=100,
                                                          completion_tokens=40)),
        ev.MessageAppended(position=position + 1, role="assistant",
                           content="Let me look.\n```python\nprint(git.status())\n```"),
        ev.CodeAction(step=1, thought="Let me look.", code="print(git.status())"),
        ev.ToolCallStarted(call_id=call, step=1, server="git", tool="git_status",
                           arguments={"repo_path": "."}),
        ev.ToolApprovalNeeded(call_id=call, server="git", tool="git_status",
                              arguments={"repo_path": "."}),
        ev.ToolApprovalDecided(call_id=call, decision="allow_once", decided_by="user"),
        ev.ToolCallFinished(call_id=call, server="git", tool="git_status",
                            result="On branch main\n" + "modified: file.py\n" * 20,
                            is_error=False, duration_s=0.05),
        ev.Observation(step=1, content="On branch main\n" + "modified: file.py\n" * 20,
                       status="ok", duration_s=0.06),
        ev.MessageAppended(position=position + 2, role="user",
                           content="Output:\n" + "modified: file.py\n" * 20),
        ev.FinalAnswer(step=2, text="Twenty files are modified."),
        ev.MessageAppended(position=position + 3, role="assistant",
                           content="Twenty files are modified."),
        ev.TurnFinished(turn=turn, status="answered", steps=2, model_calls=2, tool_calls=1,
                        prompt_tokens=1600, completion_tokens=60, wall_s=2.0),
    ]


def bench_record(folder: Path, events: int) -> dict[str, float]:
    db = open_db(folder / "record.db")
    times: list[float] = []
    recorder, turn, position = Recorder.new(db, model="bench"), 0, 0
    while len(times) < events:
        turn += 1
        if turn % 20 == 0:
            recorder, turn, position = Recorder.new(db, model="bench"), 1, 0
        for event in turn_events(turn, position):
            start = time.perf_counter()
            recorder.record(event)
            times.append((time.perf_counter() - start) * 1000)
        position += 4
    db.close()
    return {"record_ms_per_event_p50": round(statistics.median(times), 3),
            "record_ms_per_event_p95": round(statistics.quantiles(times, n=20)[-1], 3),
            "record_events": len(times)}


def vocabulary(rng: random.Random) -> list[str]:
    """Pronounceable synthetic words; index i is drawn as the i-th most frequent (Zipf)."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    vocab: set[str] = set()
    while len(vocab) < VOCABULARY:
        vocab.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(vocab)


def texts(vocab: list[str], count: int, words: int, seed: list[int]) -> list[str]:
    import numpy as np  # llama-cpp-python's dependency; here only to draw 24M words fast

    gen = np.random.default_rng(seed)
    cumulative = np.cumsum(1 / np.arange(1, len(vocab) + 1))
    picks = np.searchsorted(cumulative, gen.random((count, words)) * cumulative[-1])
    table = np.array(vocab, dtype=object)
    return [" ".join(row) for row in table[picks].tolist()]


def build(path: Path, messages: int, rng: random.Random) -> tuple[float, list[str]]:
    """Bulk-load the real schema: rows with executemany in large transactions while the
    FTS insert triggers are set aside, then one FTS 'rebuild' (about twice as fast as
    indexing row by row), then the triggers back exactly as they were."""
    vocab = vocabulary(rng)
    db = open_db(path)
    conn = db.conn
    conn.execute("PRAGMA synchronous = OFF")  # a throwaway benchmark file
    conn.execute("PRAGMA cache_size = -262144")
    triggers = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
                            "AND name LIKE '%fts_insert'").fetchall()
    start = time.perf_counter()
    for name, _ in triggers:
        conn.execute(f"DROP TRIGGER {name}")
    sessions = messages // MESSAGES_PER_SESSION
    per_batch = BATCH // MESSAGES_PER_SESSION
    now = time.time() - sessions
    for first in range(0, sessions, per_batch):
        ids = range(first, min(sessions, first + per_batch))
        contents = iter(texts(vocab, len(ids) * MESSAGES_PER_SESSION, WORDS_PER_MESSAGE,
                              seed=[first, 0]))
        results = iter(texts(vocab, len(ids), 12, seed=[first, 1]))
        message_rows, call_rows = [], []
        for i in ids:
            sid = f"s{i:07d}"
            for position in range(MESSAGES_PER_SESSION):
                text = next(contents)
                calls = None
                if position == 1:  # one native tool call per session, as eager mode has
                    calls = json.dumps([{"id": f"c{i}", "type": "function", "function": {
                        "name": "lookup", "arguments": json.dumps({"q": text[:20]})}}])
                message_rows.append((sid, position, ("user", "assistant")[position % 2], text,
                                     calls, now + i))
            call_rows.append((sid, f"c{i}", "kb", "lookup",
                              json.dumps({"q": vocab[i % len(vocab)]}), next(results), now + i))
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO sessions (id, title, model, created_at, updated_at) "
                         "VALUES (?, ?, 'bench', ?, ?)",
                         [(f"s{i:07d}", f"session {i}", now + i, now + i) for i in ids])
        conn.executemany("INSERT INTO messages (session_id, position, role, content, "
                         "tool_calls, created_at) VALUES (?, ?, ?, ?, ?, ?)", message_rows)
        conn.executemany("INSERT INTO tool_calls (session_id, call_id, server, tool, arguments, "
                         "result, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)", call_rows)
        conn.execute("COMMIT")
    conn.execute("BEGIN")
    conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')")
    conn.execute("INSERT INTO tool_calls_fts(tool_calls_fts) VALUES ('rebuild')")
    for _, sql in triggers:
        conn.execute(sql)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return time.perf_counter() - start, vocab


def bench_search(path: Path, vocab: list[str], rng: random.Random,
                 queries: int) -> dict[str, float]:
    db = open_db(path)
    picks = [vocab[int(len(vocab) * rng.random() ** 2)] for _ in range(queries)]  # favour
    texts = []                                                                  # frequent
    for i, word in enumerate(picks):
        kind = i % 5
        texts.append(word if kind < 2 else
                     f"{word} {rng.choice(vocab)}" if kind == 2 else
                     f"{word[:4]}*" if kind == 3 else f'"{word} (NEAR OR')
    search(db, vocab[0])  # warm the page cache once
    times, hits = [], 0
    for text in texts:
        start = time.perf_counter()
        hits += len(search(db, text, limit=20))
        times.append((time.perf_counter() - start) * 1000)
    common = []
    for word in vocab[:5]:  # the worst case: words in most messages
        start = time.perf_counter()
        search(db, word, limit=20)
        common.append((time.perf_counter() - start) * 1000)
    db.close()
    return {"fts_ms_p50": round(statistics.median(times), 2),
            "fts_ms_p95": round(statistics.quantiles(times, n=20)[-1], 2),
            "fts_ms_most_common_words_max": round(max(common), 1),
            "fts_queries": len(texts), "fts_hits_mean": round(hits / len(texts), 1)}


def bench_export(path: Path, folder: Path, sessions: int) -> dict[str, float]:
    db = open_db(path)
    ids = [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY created_at LIMIT ?",
                                    [sessions])]
    out = folder / "export.jsonl"
    start = time.perf_counter()
    with out.open("w", encoding="utf-8") as f:
        written = export_jsonl(db, f, ids)
    elapsed = time.perf_counter() - start
    db.close()
    return {"export_s": round(elapsed, 2), "export_sessions": written,
            "export_mb": round(out.stat().st_size / 1e6, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--export-sessions", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(0)
    result: dict[str, float | int | str] = {}
    with tempfile.TemporaryDirectory(prefix="deskmate-bench-") as tmp:
        folder = Path(tmp)
        result.update(bench_record(folder, args.events))
        print(f"record: {result['record_ms_per_event_p50']} ms/event p50", file=sys.stderr)
        print(f"building a {args.messages:,}-message database …", file=sys.stderr)
        build_s, vocab = build(folder / "big.db", args.messages, rng)
        size = (folder / "big.db").stat().st_size
        result.update({"messages": args.messages, "build_s": round(build_s, 1),
                       "db_mb": round(size / 1e6)})
        print(f"built in {build_s:.0f} s, {size / 1e6:.0f} MB", file=sys.stderr)
        result.update(bench_search(folder / "big.db", vocab, rng, args.queries))
        result.update(bench_export(folder / "big.db", folder, args.export_sessions))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
