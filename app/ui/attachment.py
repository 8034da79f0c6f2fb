"""The chat's ``@path`` attachments: one block per file under the prompt that names it.

The file's text goes to the model with the message (``services.mcp_input.expand``,
recorded with it); the block shows what was attached: the path, the size, and whether
the text was cut or the file left out as binary.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class AttachmentBlock(Static):
    """One attached file: its path and what of it the model gets."""

    def __init__(self, summary: str, *, problem: bool = False) -> None:
        super().__init__(Content(summary), classes="attachment" + (" -cut" if problem
                                                                   else ""))


def attachment_blocks(text: str) -> list[AttachmentBlock]:
    """A block for each ``@path`` in ``text`` (each file is read again, as the turn
    will: a file changed since is shown as the model gets it)."""
    from deskmate.app.services.mcp_input import InputError, path_mentions, read_file

    blocks = []
    for typed in path_mentions(text):
        try:
            found = read_file(typed)
        except InputError as exc:  # gone since it was checked: the turn will say so
            blocks.append(AttachmentBlock(f"📎 {exc}", problem=True))
            continue
        said = f"{len(found.text):,} characters" if found.text else ""
        summary = f"📎 {found.path} · {found.size:,} bytes" + (f" · {said}" if said else "")
        blocks.append(AttachmentBlock(summary + (f" · {found.note}" if found.note else ""),
                                      problem=bool(found.note)))
    return blocks


def file_problem(text: str) -> str:
    """Why an ``@path`` in ``text`` cannot be attached (missing, a folder, unreadable);
    "" when every one can."""
    from deskmate.app.services.mcp_input import InputError, path_mentions, read_file

    for typed in path_mentions(text):
        try:
            read_file(typed, limit=1)
        except InputError as exc:
            return str(exc)
    return ""
