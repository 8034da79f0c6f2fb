"""Training rollouts at engine speed: llama.cpp samples them, torch trains on them.

The trainer (``policy.py``, ``logprobs.py``) and the engine meet at one small interface:
an engine is a ``ChatModel`` that keeps ``records`` (``GenerationRecord``: prompt ids,
completion ids, and the log-probability under which it sampled every token) and takes
``load_adapter(path)`` between steps. ``LlamaCppEngine`` runs the serving GGUF with the
current step's adapter, exported as the user will run it: rollouts see the served
quantization, and the calls of a rollout share their prompt prefix in llama.cpp's KV
cache. Its weights (Q4 + adapter) are not the trainer's (dequantized + LoRA): the
update corrects the difference with truncated importance sampling
(``grpo.token_losses``' ``behaviour_logp``), as TRL and verl do for vLLM.

Prompts are rendered and tokenized by the policy's tokenizer (the GGUF's own template;
tests check the ids equal llama.cpp's), and sampling is this module's: numpy, seeded per
call, temperature, top-p (training uses 1), so the recorded log-probability is exactly
the one the token was drawn with.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.app.llm.base import (
    ChatMessage,
    Delta,
    GenerationParams,
    ModelInfo,
    StreamEvent,
    TokenClock,
)
from deskmate.finetune._sampling import Reply
from deskmate.finetune.policy import GenerationRecord, finish_call

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from deskmate.finetune.policy import Policy


def sample(logits: NDArray[np.float32], temperature: float, top_p: float,
           rng: np.random.Generator) -> tuple[int, float]:
    """A token and its log-probability at ``temperature`` (before top-p, as the loss
    reads it); greedy at temperature 0 (log-probability at temperature 1)."""
    import numpy as np

    scaled = logits.astype(np.float64) / (temperature if temperature > 0 else 1.0)
    logp = scaled - scaled.max()
    logp -= np.log(np.exp(logp).sum())
    if temperature <= 0:
        token = int(np.argmax(logits))
        return token, float(logp[token])
    probs = np.exp(logp)
    if 0 < top_p < 1:
        order = np.argsort(-probs)
        sorted_probs = probs[order]
        outside = np.cumsum(sorted_probs) - sorted_probs >= top_p
        probs = probs.copy()
        probs[order[outside]] = 0.0
    probs /= probs.sum()
    token = int(rng.choice(len(probs), p=probs))
    return token, float(logp[token])


def idle_threads() -> int:
    """Threads for a CPU decoder: the idle cores. Token-by-token decoding is latency-bound
    and on oversubscribed cores the threads wait for each other at every layer (measured
    on the tiny model, 2 cores under a load of 8: 17 tok/s with one thread, 2 with two)."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    idle = cores - os.getloadavg()[0] + 1
    return max(1, min(cores, int(idle)))


class LlamaCppEngine:
    """deskmate's ``ChatModel`` over llama.cpp for training rollouts; one call at a time."""

    def __init__(self, policy: Policy, gguf: str | Path, *, context: int | None = None,
                 threads: int | None = None) -> None:
        self.policy, self.gguf = policy, Path(gguf)
        self.context = context or policy.config.max_seq_len
        self.threads = threads
        self.records: list[GenerationRecord] = []
        self.info = ModelInfo(name=self.gguf.name, backend="llama.cpp (training engine)",
                              context_size=self.context,
                              architecture=getattr(policy.model.config, "model_type", ""),
                              path=str(self.gguf))
        self.off_policy = True  # its records' log-probs are not the trained weights'
        self._adapter: Path | None = None
        self._llm: Any = None
        self._lock = threading.Lock()

    def load_adapter(self, adapter: str | Path | None) -> None:
        """Sample with ``adapter`` (a GGUF LoRA) from the next call on."""
        with self._lock:
            self._adapter = Path(adapter) if adapter else None
            self._close()

    def take_records(self) -> list[GenerationRecord]:
        out, self.records = self.records, []
        return out

    @property
    def last_call(self) -> GenerationRecord | None:
        return self.records[-1] if self.records else None

    def tokenize(self, text: str) -> list[int]:
        return self.policy.tokenize(text)

    def stream(self, messages: Sequence[ChatMessage],
               params: GenerationParams = GenerationParams(),
               cancel: threading.Event | None = None) -> Iterator[StreamEvent]:
        limit = min(self.context, self.policy.config.max_seq_len)
        prompt = self.policy.prompt(messages, params, limit)
        with self._lock:
            yield from self._generate(prompt, params, cancel or threading.Event(), limit)

    def _model(self) -> Any:
        if self._llm is None:
            from deskmate.app.llm.llamacpp_open import open_llama

            # Counted at every load (once a step): the load changes while a run goes.
            threads = self.threads or idle_threads()
            self._llm = open_llama(
                str(self.gguf), lora_path=str(self._adapter) if self._adapter else None,
                n_ctx=self.context, n_threads=threads, n_threads_batch=threads,
                n_gpu_layers=-1, logits_all=False, verbose=False)
        return self._llm

    def _generate(self, prompt: list[int], params: GenerationParams,
                  cancel: threading.Event, limit: int) -> Iterator[StreamEvent]:
        import llama_cpp
        import numpy as np

        llm = self._model()
        n_vocab = llm.n_vocab()
        clock = TokenClock(time.perf_counter())
        reply = Reply(self.policy.tokenizer, params.stop, self.policy.eos_ids)
        rng = np.random.default_rng(params.seed if params.seed is not None
                                    else self.policy.config.seed)
        # Keep the cached prefix this prompt shares with the last call (at least one
        # token is evaluated: its logits start the reply).
        cached = llm.input_ids[:llm.n_tokens].tolist()
        keep = 0
        for a, b in zip(cached, prompt[:-1], strict=False):
            if a != b:
                break
            keep += 1
        llm.n_tokens = keep
        reused = keep
        llm.eval(prompt[keep:])
        max_new = min(params.max_tokens, limit - len(prompt))
        while len(reply.ids) < max_new and not cancel.is_set():
            # The last evaluated position's logits (llama.cpp keeps only those here).
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1),
                                           shape=(n_vocab,))
            token, logp = sample(logits, params.temperature, params.top_p, rng)
            emit = reply.add(token, logp)
            clock.tick(time.perf_counter())
            if emit:
                yield Delta(emit)
            if reply.ended:
                break
            if len(reply.ids) < max_new:
                llm.eval([token])
        yield from finish_call(self.records, prompt, reply, cancel, clock, reused=reused)

    def _close(self) -> None:
        if self._llm is not None:
            self._llm.close()
            self._llm = None

    def close(self) -> None:
        with self._lock:
            self._close()
