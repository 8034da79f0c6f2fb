"""How many threads llama.cpp decodes with: chosen by timing, while it decodes.

llama.cpp's threads meet at a barrier after every layer. When another program keeps a
core busy, the thread on that core is descheduled and every barrier waits for it: on a
loaded 2-core machine the tiny model decoded at 0.67 tok/s with 2 threads and at
68 tok/s with 1. No load figure predicts this reliably (a container sees its host's
load average; affinity and cgroup quotas hide the rest), so the tuner measures what
matters: it times a few tokens at each candidate count, keeps the fastest, and looks
again now and then: less often while the answer stays the same, and never so often
that probing takes more than a twentieth of the decoding time.

A probe costs little even when a count is very slow: a candidate is dropped at its
first token that takes far longer than the best one so far.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

# A candidate whose token takes this many times the best one's is dropped at once.
_GIVE_UP = 3.0
# Probing may cost at most this share of decode time: a count that is very slow now
# is tried again only after enough tokens to pay for it.
_PROBE_SHARE = 0.05
# The full count must be at least this much slower than the best before prompts are
# evaluated with fewer threads: prompt evaluation uses cores better than decoding does,
# so only contention, not memory bandwidth, is a reason to give them up.
_CONTENDED = 1.5


def candidates(cores: int) -> tuple[int, ...]:
    """1, 2, 4, … up to ``cores`` (always included), ascending."""
    counts, n = [], 1
    while n < cores:
        counts.append(n)
        n *= 2
    counts.append(max(1, cores))
    return tuple(counts)


@dataclass
class ThreadTuner:
    """Picks the decode thread count per stretch of tokens; ``apply(decode, batch)``
    hands the choice to llama.cpp (it takes effect at the next evaluation)."""

    cores: int
    apply: Callable[[int, int], None]
    probe_tokens: int = 4
    reprobe_every: int = 64
    reprobe_max: int = 1024
    best: int = 0
    speeds: dict[int, float] = field(default_factory=dict)  # s a token, last whole probe
    _round: dict[int, float] = field(default_factory=dict)  # the probe under way
    _queue: list[int] = field(default_factory=list)  # candidates still to time
    _current: int = 0
    _times: list[float] = field(default_factory=list)
    _spent: float = 0.0  # seconds this probe spent on counts other than the winner
    _probing: bool = False
    _last: float | None = None
    _until_probe: int = 0
    _interval: int = 0

    def __post_init__(self) -> None:
        self.best = self.best or max(1, self.cores)
        self._interval = self.reprobe_every
        self._current = self.best

    @property
    def batch_threads(self) -> int:
        full = self.speeds.get(max(1, self.cores))
        fastest = self.speeds.get(self.best)
        if full is None or fastest is None or full <= fastest * _CONTENDED:
            return max(1, self.cores)
        return self.best

    def begin(self) -> None:
        """A new prompt: evaluate it with the counts chosen so far."""
        self._last = None
        if self._probing:  # the last reply ended mid-probe: start this one afresh
            self._probing = False
            self._round = {}
        self._use(self.best)
        if not self.speeds:  # never measured: probe from the first decoded token
            self._start_probe()

    def tick(self, now: float) -> None:
        """One token came out at ``now``; the time since the last one was a decode."""
        last, self._last = self._last, now
        if last is None:  # the first token is sampled from the prompt's logits
            return
        if self._probing:
            self._probe_step(now - last)
            return
        self._until_probe -= 1
        if self._until_probe <= 0:
            self._start_probe()

    def _start_probe(self) -> None:
        self._probing = True
        self._round = {}
        self._spent = 0.0
        self._queue = list(candidates(self.cores))
        self._next_candidate()

    def _next_candidate(self) -> None:
        if not self._queue:
            self._finish_probe()
            return
        self._times = []
        self._use(self._queue.pop(0))

    def _probe_step(self, took: float) -> None:
        self._times.append(took)
        best_so_far = min(self._round.values(), default=None)
        hopeless = best_so_far is not None and took > _GIVE_UP * best_so_far
        if hopeless or len(self._times) >= self.probe_tokens:
            self._round[self._current] = sum(self._times) / len(self._times)
            self._spent += sum(self._times)
            self._next_candidate()

    def _finish_probe(self) -> None:
        self._probing = False
        self.speeds = self._round
        winner = min(self.speeds, key=lambda n: self.speeds[n])
        # The same answer again: look less often; a new one: look again soon.
        self._interval = (min(self._interval * 2, self.reprobe_max) if winner == self.best
                          else self.reprobe_every)
        self.best = winner
        # What the losers cost, paid back by enough tokens at the winner's speed.
        fast = self.speeds[winner]
        lost = self._spent - fast * self.probe_tokens
        payback = int(lost / (_PROBE_SHARE * fast)) if fast > 0 else 0
        self._until_probe = max(self._interval, min(payback, self.reprobe_max * 8))
        self._use(winner)

    def _use(self, n: int) -> None:
        self._current = n
        self.apply(n, self.batch_threads)
