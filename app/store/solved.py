"""Turns that solved their request, for the agent to learn from by example.

A turn counts when the user rated it up (F2's thumbs, ``deskmate sessions rate``) or when
it is the recorded session of an eval task that passed its checks. Only code-mode turns
that ended with an answer are taken, and of their cells only the ones that ran without
an error: what a similar request later sees is the code that worked.
"""

from __future__ import annotations

from dataclasses import dataclass

from deskmate.app.store.db import Database


@dataclass(frozen=True)
class SolvedTurn:
    session_id: str
    turn: int
    request: str
    cells: tuple[str, ...]  # the code that ran without an error, in order
    answer: str


def solved_turns(db: Database, limit: int = 2000) -> list[SolvedTurn]:
    """The most recent solved code-mode turns, newest first."""
    from deskmate.app.agent.parse import CodeAction, failed_output, parse_reply

    rows = db.execute(
        "SELECT t.session_id, t.turn, t.user_message, t.final_answer FROM turns t "
        "JOIN sessions s ON s.id = t.session_id "
        "WHERE s.mode = 'code' AND t.status = 'answered' AND t.final_answer IS NOT NULL "
        # The turn's own rating, else the session's (the latest of each wins).
        "AND (COALESCE((SELECT rating FROM feedback f WHERE f.session_id = t.session_id "
        "               AND f.turn = t.turn), "
        "              (SELECT rating FROM feedback f WHERE f.session_id = t.session_id "
        "               AND f.turn = 0)) = 1 "
        "  OR EXISTS (SELECT 1 FROM eval_results e WHERE e.session_id = t.session_id "
        "             AND e.success = 1)) "
        "ORDER BY t.started_at DESC LIMIT ?", (limit,)).fetchall()
    solved = []
    for session_id, turn, request, answer in rows:
        messages = db.execute(
            "SELECT role, content FROM messages WHERE session_id = ? AND turn = ? "
            "ORDER BY position", (session_id, turn)).fetchall()
        cells = []
        for (role, content), after in zip(messages, [*messages[1:], None], strict=False):
            if role != "assistant" or after is None:
                continue
            parsed = parse_reply(content)
            # (a cell that printed, then failed, is not clean either)
            if isinstance(parsed, CodeAction) and not failed_output(after[1]):
                cells.append(parsed.code)
        if cells:
            solved.append(SolvedTurn(session_id, turn, request, tuple(cells), answer))
    return solved
