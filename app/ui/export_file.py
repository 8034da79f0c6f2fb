"""Writing sessions to a file, for the Sessions screen's ``e`` and the chat's ``/export``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from deskmate.app.store import Database


def export(db: Database, session_id: str, path: Path) -> str:
    """Write a session to ``path``: Markdown for .md/.markdown, else JSONL (the OpenAI
    chat format, for training); returns what was done. ``ValueError`` names the path
    and the reason when it cannot be written."""
    from deskmate.app.files import atomic_writer
    from deskmate.app.store.export import export_jsonl, export_markdown

    writer = export_markdown if path.suffix.lower() in (".md", ".markdown") else export_jsonl
    try:
        with atomic_writer(path) as out:  # a failed export leaves no half-written file
            count = writer(db, out, [session_id])
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror or exc}") from exc
    return f"exported {count} session{'s' if count != 1 else ''} to {path}"
