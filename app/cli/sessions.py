"""``deskmate sessions``: list, show, search, export, delete and rate recorded sessions.

The store is imported inside each command so ``deskmate --help`` stays fast. Reading
commands never create the database: with none yet, they say so.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

import click

from deskmate.app.cli.common import EXIT_FAILURE, EXIT_USAGE, fail

if TYPE_CHECKING:
    from deskmate.app.store.db import Database


class _StoreGroup(click.Group):
    """Reports store errors (missing session, unusable file) as one line, exit 1."""

    def invoke(self, ctx: click.Context) -> Any:
        from deskmate.app.store.errors import StoreError

        try:
            return super().invoke(ctx)
        except StoreError as exc:
            fail(str(exc), EXIT_FAILURE)


def _open() -> Database | None:
    from deskmate.app.store.db import db_path, open_db
    from deskmate.app.store.sessions import close_interrupted

    path = db_path()
    if not path.exists():
        return None
    db = open_db(path)
    close_interrupted(db)  # a session a killed process left mid-turn lists as interrupted
    return db


def _require() -> Database:
    from deskmate.app.store.db import db_path
    from deskmate.app.store.errors import StoreError

    db = _open()
    if db is None:
        raise StoreError(f"no sessions recorded yet (the database will be {db_path()})")
    return db


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=str))


@click.group(cls=_StoreGroup, invoke_without_command=True)
@click.pass_context
def sessions(ctx: click.Context) -> None:
    """List, search, export and rate recorded sessions."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_cmd)


@sessions.command("list")
@click.option("--limit", "-n", default=30, show_default=True, help="How many, newest first.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_cmd(limit: int = 30, as_json: bool = False) -> None:
    """The most recently updated sessions."""
    from deskmate.app.store.db import db_path
    from deskmate.app.store.export import when
    from deskmate.app.store.sessions import list_sessions

    db = _open()
    rows = list_sessions(db, limit) if db is not None else []
    if as_json:
        _echo_json([asdict(r) for r in rows])
        return
    if not rows:
        click.echo(f"No sessions recorded yet (they are kept in {db_path()}).")
        return
    for r in rows:
        rating = {1: "+", -1: "-"}.get(r.rating or 0, " ")
        click.echo(f"{r.id}  {when(r.updated_at)}  {r.status:<14} {rating} "
                   f"{r.turns:>3} turns {r.messages:>4} msgs  {r.title}")


@sessions.command()
@click.argument("session_id")
@click.option("--json", "as_json", is_flag=True, help="Everything recorded, as JSON.")
def show(session_id: str, as_json: bool) -> None:
    """Show one session: transcript, tool calls, approvals (ID or a unique prefix)."""
    from deskmate.app.store.export import session_markdown
    from deskmate.app.store.sessions import get_session

    detail = get_session(_require(), session_id)
    if as_json:
        _echo_json(asdict(detail))
    else:
        click.echo(session_markdown(detail), nl=False)


@sessions.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--limit", "-n", default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of lines.")
def search(query: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Full-text search over messages and tool calls (words must all match; word* = prefix)."""
    from deskmate.app.store.fts import search as run_search

    db = _open()
    hits = run_search(db, " ".join(query), limit) if db is not None else []
    if as_json:
        _echo_json([asdict(h) for h in hits])
        return
    if not hits:
        click.echo("No matches.")
    for h in hits:
        snippet = " ".join(h.snippet.split())
        click.echo(f"{h.session_id}  {h.kind}:{h.ref:<6} {h.label:<16} {snippet}")


@sessions.command()
@click.argument("ids", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["jsonl", "md"]), default="jsonl",
              show_default=True, help="jsonl: OpenAI chat format for training; md: reading.")
@click.option("--out", "-o", type=click.Path(path_type=Path, dir_okay=False),
              help="Write to FILE instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def export(ids: tuple[str, ...], fmt: str, out: Path | None, force: bool) -> None:
    """Export the sessions IDS (default: all) as JSONL or Markdown."""
    from deskmate.app.store.export import export_jsonl, export_markdown, session_ids

    if out is not None and out.exists() and not force:
        fail(f"{out} exists; pass --force to overwrite it, or choose another --out",
             EXIT_USAGE)
    db = _require()
    chosen = session_ids(db, ids)  # resolved first: an unknown id writes nothing
    writer = export_jsonl if fmt == "jsonl" else export_markdown
    if out is None:
        count = writer(db, sys.stdout, chosen)
    else:
        count = _write_atomically(out, lambda f: writer(db, f, chosen))
    click.echo(f"exported {count} session{'s' * (count != 1)}"
               + (f" to {out}" if out else ""), err=True)


def _write_atomically(out: Path, write: Callable[[TextIO], int]) -> int:
    """Export into a temp file renamed over ``out``: never a half-written file."""
    from deskmate.app.files import atomic_writer

    try:
        with atomic_writer(out) as f:
            return write(f)
    except OSError as exc:
        fail(f"cannot write {out}: {exc}", EXIT_FAILURE)


@sessions.command()
@click.argument("session_id")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
def delete(session_id: str, yes: bool) -> None:
    """Delete a session and everything recorded with it (and its saved KV state)."""
    from deskmate.app.store.sessions import delete_session, get_summary

    db = _require()
    summary = get_summary(db, session_id)
    if not yes:
        click.confirm(f"Delete session {summary.id} ({summary.title or 'untitled'})?",
                      abort=True)
    click.echo(f"deleted {delete_session(db, summary.id)}")


@sessions.command()
@click.argument("session_id")
@click.argument("rating", type=click.Choice(["up", "down"]))
@click.option("--turn", type=int, default=0, help="Rate one answer instead of the session.")
@click.option("--comment", "-c", default="", help="Why; kept with the rating.")
def rate(session_id: str, rating: Literal["up", "down"], turn: int, comment: str) -> None:
    """Thumbs up or down for a session (or one answer); finetuning learns from these."""
    from deskmate.app.store.sessions import rate as do_rate

    full_id = do_rate(_require(), session_id, rating, turn=turn, comment=comment)
    target = f"turn {turn} of {full_id}" if turn else full_id
    click.echo(f"rated {target} {rating}")
