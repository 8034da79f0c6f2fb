"""Token-by-token helpers of ``PolicyChatModel``: choosing the next token, and its text."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch and transformers load with the policy that calls these
    from torch import Generator, Tensor
    from transformers import PreTrainedTokenizerBase


def sample_token(logits: Tensor, temperature: float, top_p: float,
                 rng: Generator | None) -> int:
    """Greedy at temperature 0; else temperature, then nucleus (top-p) sampling."""
    import torch

    if temperature <= 0:
        return int(logits.argmax())
    probs = torch.softmax(logits / temperature, -1)
    if 0 < top_p < 1:
        sorted_probs, order = probs.sort(descending=True)
        # Keep the smallest head whose mass reaches top_p (always at least one token).
        outside = sorted_probs.cumsum(-1) - sorted_probs >= top_p
        sorted_probs[outside] = 0.0
        probs = torch.zeros_like(probs).scatter_(-1, order, sorted_probs)
    return int(torch.multinomial(probs, 1, generator=rng))


class Detokenizer:
    """Text of a growing token list, piece by piece.

    A character can span tokens (UTF-8 bytes, merged spaces), so each new piece is the
    difference between decoding a short window with and without the newest tokens,
    held back while it ends in an incomplete character.
    """

    def __init__(self, tokenizer: PreTrainedTokenizerBase) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.prefix = 0  # window start
        self.read = 0  # tokens already turned into text

    def add(self, token: int) -> str:
        self.ids.append(token)
        return self._advance(final=False)

    def flush(self) -> str:
        return self._advance(final=True)

    def _advance(self, final: bool) -> str:
        # transformers types decode as str | list[str] (the list for batches); one list of
        # ids always decodes to one str.
        decode: Callable[..., str] = self.tokenizer.decode  # pyright: ignore[reportAssignmentType]
        before = decode(self.ids[self.prefix:self.read], skip_special_tokens=True)
        after = decode(self.ids[self.prefix:], skip_special_tokens=True)
        if len(after) <= len(before) or (after.endswith("\ufffd") and not final):
            return ""
        self.prefix, self.read = self.read, len(self.ids)
        return after[len(before):]
