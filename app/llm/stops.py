"""Stop strings over a stream of text pieces.

A stop string can arrive split across pieces, so the tail that could still become
one is held back until the next piece decides it.
"""

from __future__ import annotations


class StopMatcher:
    def __init__(self, stops: tuple[str, ...] | list[str]) -> None:
        self.stops = tuple(s for s in stops if s)
        self.text = ""  # everything released (and, at a stop, the text before it)
        self.stopped = False
        self._held = ""

    def feed(self, piece: str) -> tuple[str, bool]:
        """Add ``piece``; return (text safe to release, whether a stop string was hit)."""
        if self.stopped:
            return "", True
        pending = self._held + piece
        hits = [i for i in (pending.find(s) for s in self.stops) if i >= 0]
        if hits:
            out = pending[: min(hits)]
            self._held, self.stopped = "", True
            self.text += out
            return out, True
        keep = self._longest_partial(pending)
        out, self._held = pending[: len(pending) - keep], pending[len(pending) - keep :]
        self.text += out
        return out, False

    def flush(self) -> str:
        """Release what was held back (the stream ended without completing a stop)."""
        out, self._held = self._held, ""
        self.text += out
        return out

    def _longest_partial(self, text: str) -> int:
        best = 0
        for stop in self.stops:
            for n in range(min(len(stop) - 1, len(text)), best, -1):
                if text.endswith(stop[:n]):
                    best = n
                    break
        return best
