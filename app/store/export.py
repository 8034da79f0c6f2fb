"""Exporting sessions: JSONL for training, Markdown for reading.

JSONL: one line per session, ``{"messages": [...]}`` in the OpenAI chat format, the
exact transcript the model saw. Assistant tool calls are ``{"id", "type": "function",
"function": {"name", "arguments": "<JSON text>"}}`` and tool replies carry
``tool_call_id``: TRL's SFTTrainer, Unsloth and ``datasets.load_dataset("json")`` read
it as is. Sessions with an empty transcript are skipped (nothing to train on).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any, TextIO

from deskmate.app.store.db import Database
from deskmate.app.store.records import MessageRecord, SessionDetail
from deskmate.app.store.sessions import MESSAGE_COLUMNS, get_session, message_record, resolve_id

BATCH = 500


def openai_tool_call(call: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    """Normalise a recorded tool call (OpenAI-shaped or flat name/arguments)."""
    function = call.get("function") or {"name": call.get("name", ""),
                                        "arguments": call.get("arguments", {})}
    arguments = function.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call.get("id") or fallback_id, "type": "function",
            "function": {"name": function.get("name", ""), "arguments": arguments}}


def openai_message(message: MessageRecord) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["tool_calls"] = [openai_tool_call(call, f"call_{message.position}_{i}")
                             for i, call in enumerate(message.tool_calls)]
    if message.tool_call_id:
        out["tool_call_id"] = message.tool_call_id
    return out


def session_ids(db: Database, ids: Iterable[str] = ()) -> list[str]:
    """The full ids of ``ids`` (prefixes allowed), or of every session, oldest first."""
    wanted = [resolve_id(db, i) for i in ids]
    if wanted:
        return list(dict.fromkeys(wanted))
    return [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY created_at, id")]


def _transcripts(db: Database,
                 ids: list[str]) -> Iterator[tuple[str, list[MessageRecord]]]:
    """(id, transcript) for each id in order, fetching messages a batch of sessions at once."""
    for start in range(0, len(ids), BATCH):
        chunk = ids[start:start + BATCH]
        grouped: dict[str, list[MessageRecord]] = {i: [] for i in chunk}
        marks = ",".join("?" * len(chunk))
        rows = db.execute(f"SELECT session_id, {MESSAGE_COLUMNS} FROM messages "
                          f"WHERE session_id IN ({marks}) ORDER BY session_id, position", chunk)
        for sid, *row in rows:
            grouped[sid].append(message_record(*row))
        yield from grouped.items()


def export_jsonl(db: Database, out: TextIO, ids: Iterable[str] = ()) -> int:
    """Write one training example per session; returns how many were written."""
    written = 0
    for _, messages in _transcripts(db, session_ids(db, ids)):
        if messages:
            record = {"messages": [openai_message(m) for m in messages]}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return written


def export_markdown(db: Database, out: TextIO, ids: Iterable[str] = ()) -> int:
    """Write each session as a readable Markdown document; returns how many."""
    count = 0
    for sid in session_ids(db, ids):
        if count:
            out.write("\n---\n\n")
        out.write(session_markdown(get_session(db, sid)))
        count += 1
    return count


def _fence(text: str, lang: str = "") -> str:
    """A code fence longer than any run of backticks inside ``text``."""
    ticks = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}\n"


def _longest_backtick_run(text: str) -> int:
    best = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    return best


def when(at: float) -> str:
    """Local date and minute, as the CLI and the Markdown export show times."""
    return datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M")


def session_markdown(detail: SessionDetail, *, fold_system: bool = False) -> str:
    """The session as Markdown; ``fold_system`` puts a line in place of the system
    prompt (a preview starts with the conversation, not with forty lines of it)."""
    s = detail.summary
    rating = {1: "up", -1: "down"}.get(s.rating or 0, "unrated")
    lines = [f"# {s.title or '(untitled session)'}", "",
             f"- session `{s.id}` · {when(s.created_at)} · status {s.status} · "
             f"rated {rating}",
             f"- model {s.model or '?'}" + (f" + adapter {s.adapter}" if s.adapter else "")
             + (f" · mode {s.mode}" if s.mode else ""), ""]
    for m in detail.messages:
        label = m.role + (f" (turn {m.turn})" if m.turn else "")
        lines += [f"## {label}", ""]
        if m.role == "system" and fold_system:
            count = len(m.content.splitlines())
            lines[-2:] = [f"*(system prompt, {count} line{'s' if count != 1 else ''}: in "
                          "the export)*", ""]
            continue
        if m.role == "tool":
            lines += [f"Reply to `{m.tool_call_id}`:", "", _fence(m.content)]
        else:
            lines += [m.content, ""]
        for call in m.tool_calls:
            function = openai_tool_call(call, "")["function"]
            lines += [f"Tool call `{function['name']}`:", "", _fence(function["arguments"],
                                                                    "json")]
    if detail.tool_calls:
        lines += ["## Tool calls", "", "| server.tool | approval | by | error | seconds |",
                  "|---|---|---|---|---|"]
        for c in detail.tool_calls:
            seconds = f"{c.duration_s:.2f}" if c.duration_s is not None else ""
            error = "" if c.is_error is None else ("yes" if c.is_error else "no")
            lines.append(f"| {c.server}.{c.tool} | {c.approval or ''} | {c.decided_by or ''} "
                         f"| {error} | {seconds} |")
        lines.append("")
    if detail.questions:
        lines += ["## Questions from servers", "", "| server.tool | asked | answer | by |",
                  "|---|---|---|---|"]
        for q in detail.questions:
            asked = " ".join(q.message.split()) + (f" (open {q.requested})" if q.mode == "url"
                                                   else "")
            answer = (q.action or "unanswered") + (
                f": {json.dumps(q.content, ensure_ascii=False)}" if q.content else "")
            lines.append(f"| {q.server}.{q.tool} | {asked.replace('|', '∣')} "
                         f"| {answer.replace('|', '∣')} | {q.decided_by or ''} |")
        lines.append("")
    return "\n".join(lines) + "\n"
