"""Token-by-token helpers of the training samplers (``PolicyChatModel`` and the llama.cpp
engine): choosing the next token, its text, and the reply it ends or continues."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from deskmate.app.llm.base import FinishReason
from deskmate.app.llm.stops import StopMatcher

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


class Reply:
    """One call's reply as its tokens come: the ids and their log-probs, the text to
    stream (stop strings cut), and whether an end-of-turn token or a stop ended it."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, stop: tuple[str, ...],
                 eos_ids: frozenset[int]) -> None:
        self.stops, self.detok, self.eos_ids = StopMatcher(stop), Detokenizer(tokenizer), eos_ids
        self.ids: list[int] = []
        self.logprobs: list[float] = []
        self.finish: FinishReason = "length"

    def add(self, token: int, logprob: float) -> str:
        """Take a sampled token; the text it adds to the stream ("" for none)."""
        self.ids.append(token)
        self.logprobs.append(logprob)
        if token in self.eos_ids:  # kept in the ids: training also teaches when to stop
            self.finish = "stop"
            return ""
        emit, stopped = self.stops.feed(self.detok.add(token))
        if stopped:
            self.finish = "stop"
        return emit

    @property
    def ended(self) -> bool:
        return self.finish == "stop"

    def tail(self) -> str:
        """Text held back at the end (an incomplete character, a possible stop)."""
        if self.stops.stopped:
            return ""
        return self.stops.feed(self.detok.flush())[0] + self.stops.flush()

    @property
    def text(self) -> str:
        return self.stops.text
