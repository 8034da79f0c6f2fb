"""The cell's printed output, kept head + tail within a character budget."""

from __future__ import annotations


def _join(head: str, tail: str, omitted: int) -> str:
    return f"{head}\n[... {omitted} characters of output omitted ...]\n{tail}"


def _last(text: str, n: int) -> str:
    return text[len(text) - n:] if n > 0 else ""


def truncate_middle(text: str, limit: int) -> str:
    """Keep the first and last halves of ``limit`` characters, saying what was cut."""
    if len(text) <= limit:
        return text
    return _join(text[: limit // 2], _last(text, limit - limit // 2), len(text) - limit)


class OutputBuffer:
    """Bounded memory whatever the cell prints: head and tail bytes, and a count."""

    def __init__(self, limit_chars: int) -> None:
        self.limit = limit_chars
        self._half = 2 * limit_chars  # bytes enough for limit/2 characters of UTF-8
        self._head = bytearray()
        self._tail = bytearray()
        self._total = 0

    def feed(self, data: bytes) -> None:
        self._total += len(data)
        room = self._half - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > self._half:
                del self._tail[:len(self._tail) - self._half]

    def text(self) -> str:
        dropped = self._total - len(self._head) - len(self._tail)
        if not dropped:
            return truncate_middle((self._head + self._tail).decode(errors="replace"),
                                   self.limit)
        # Bytes were dropped: the count mixes bytes and characters (equal for ASCII).
        head_full = self._head.decode(errors="replace")
        tail_full = self._tail.decode(errors="replace")
        head = head_full[: self.limit // 2]
        tail = _last(tail_full, self.limit - self.limit // 2)
        omitted = dropped + len(head_full) - len(head) + len(tail_full) - len(tail)
        return _join(head, tail, omitted)
