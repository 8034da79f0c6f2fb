"""The prompt history on disk: what was sent, kept across restarts (the app's prompt
and `deskmate chat`'s terminal chat share it).

One JSON string a line in ``prompt_history.jsonl`` in the data folder (a prompt may
hold new lines), oldest first. Only what the user typed and sent is written; delete
the file to forget it. Appending keeps writes cheap; the file is rewritten with the
newest ``LIMIT`` entries once it holds twice as many.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

LIMIT = 500  # prompts kept
FILE_NAME = "prompt_history.jsonl"


def history_path() -> Path:
    from deskmate.app import paths

    return paths.data_dir() / FILE_NAME


class PromptHistory:
    """The prompts of ``path``: ``load`` them, ``add`` one. Errors are ``OSError``s."""

    def __init__(self, path: Path, limit: int = LIMIT) -> None:
        self.path = path
        self.limit = limit
        self._lines = 0  # in the file, as last read or written

    def load(self) -> list[str]:
        """The newest ``limit`` prompts, oldest first ([] when there is no file yet);
        a line that is not a JSON string (a hand edit, a cut write) is skipped."""
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        self._lines = len(lines)
        found = []
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, str) and entry.strip():
                found.append(entry)
        return found[-self.limit:]

    def add(self, text: str, kept: list[str]) -> None:
        """Append ``text``; ``kept`` is the history with it, written in full when the
        file has grown to twice the limit."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._lines + 1 >= 2 * self.limit:
            tmp = self.path.with_name(self.path.name + ".tmp")
            tmp.write_text("".join(json.dumps(t) + "\n" for t in kept[-self.limit:]),
                           encoding="utf-8")
            os.replace(tmp, self.path)
            self._lines = min(len(kept), self.limit)
            return
        with self.path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(text) + "\n")
        self._lines += 1
