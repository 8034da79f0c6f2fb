"""``LlamaCppModel``: a GGUF model run in-process by llama-cpp-python.

Why we drive llama.cpp a level below ``create_completion``: we evaluate the prompt
ourselves, batch by batch, so that (1) usage reports exactly how many prompt tokens
came from the KV cache and how many were evaluated, and (2) cancel works between
batches of a long prompt, not only between generated tokens. Generation then starts
on a fully cached prompt. The agent keeps its transcript append-only, so each call's
prompt extends the previous one and only the new tokens are evaluated.
"""

from __future__ import annotations

import codecs
import ctypes
import json
import os
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.app.llm.base import (
    ChatMessage,
    Delta,
    Finished,
    GenerationParams,
    ModelError,
    ModelInfo,
    StreamEvent,
    TokenClock,
)
from deskmate.app.llm.gguf_file import (
    GGUFError,
    GGUFInfo,
    NotAnAdapter,
    check_adapter,
    inspect_gguf,
)
from deskmate.app.llm.llamacpp_open import open_llama
from deskmate.app.llm.stops import StopMatcher
from deskmate.app.llm.template_tools import template_input
from deskmate.app.llm.threads import ThreadTuner

if TYPE_CHECKING:  # llama_cpp loads its shared library on import: only when a model loads
    from llama_cpp import LlamaGrammar
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

# Used when a GGUF carries no chat template (llama.cpp falls back to ChatML too).
CHATML_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n"
    "{{ message.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

# A prompt that leaves another conversation's cache reuses a multiple of this many tokens.
# llama.cpp's repacked CPU matrix kernels quantize prompt rows in groups of 4 counted from
# the batch's first row, so a batch starting at an odd place gives the same prompt other
# logits (0.28 apart for Qwen2.5-Coder Q4_K_M; benchmarks/kv_order.py): a greedy reply then
# depended on what the model had read before (the eval's task order). 16 keeps the groups
# where a prompt evaluated from the start has them, for 4-, 8- and 16-row kernels alike.
KV_ALIGN = 16


def physical_cores() -> int:
    """Physical cores available to us: llama.cpp decodes slower on hyperthreads."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    try:
        pairs = set()
        core = phys = ""
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("physical id"):
                phys = line.split(":")[1].strip()
            elif line.startswith("core id"):
                core = line.split(":")[1].strip()
                pairs.add((phys, core))
        if pairs:
            return max(1, min(available, len(pairs)))
    except OSError:
        pass
    return max(1, available)


def _placement(offload: bool, n_gpu: int, gguf: GGUFInfo) -> str:
    """How many of the model's layers llama.cpp puts on the GPU (blocks + output)."""
    if not offload:
        return ""
    blocks = gguf.metadata.get(f"{gguf.architecture}.block_count")
    if not isinstance(blocks, int):
        return "GPU" if n_gpu else "CPU (gpu_layers = 0)"
    total = blocks + 1
    on_gpu = total if n_gpu < 0 else min(n_gpu, total)
    return f"GPU {on_gpu}/{total} layers" if on_gpu else "CPU (gpu_layers = 0)"


def _parameters(llama_cpp: Any, llm: Any) -> int:
    """The loaded model's weight count; 0 where this llama-cpp-python lacks the call."""
    n_params = getattr(llama_cpp, "llama_model_n_params", None)
    if n_params is None:
        return 0
    try:
        return int(n_params(llm.model))
    except (AttributeError, TypeError, ValueError):
        return 0


class LlamaCppModel:
    """A chat model on llama.cpp. One generation at a time (calls are serialised)."""

    def __init__(
        self,
        path: str | Path,
        *,
        context: int = 8192,
        threads: int = 0,
        gpu_layers: int = -1,
        batch: int = 512,
        adapter: str | Path | None = None,
        adapter_scale: float = 1.0,
        seed: int = -1,
        name: str | None = None,
        verbose: bool = False,
    ) -> None:
        try:
            gguf = inspect_gguf(path)
        except GGUFError as exc:
            raise ModelError(str(exc)) from exc
        if gguf.file_type == "adapter":
            raise ModelError(f"{gguf.path} is a LoRA adapter, not a model: set it as "
                             "[model] adapter and pick its base model as [model] name")
        if adapter:
            _check_adapter(Path(adapter), gguf.architecture)

        import llama_cpp  # heavy: loads the shared library

        offload = bool(llama_cpp.llama_supports_gpu_offload())
        n_gpu = (-1 if gpu_layers < 0 else gpu_layers) if offload else 0
        cores = physical_cores()
        n_threads = threads or cores
        train_ctx = gguf.context_length or context
        try:
            self._llm = open_llama(
                str(gguf.path),
                n_ctx=min(context, train_ctx) if train_ctx else context,
                n_batch=batch,
                n_ubatch=batch,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                n_gpu_layers=n_gpu,
                lora_path=str(adapter) if adapter else None,
                lora_scale=adapter_scale,
                seed=seed if seed >= 0 else llama_cpp.LLAMA_DEFAULT_SEED,
                verbose=verbose,
            )
        except (ValueError, RuntimeError, OSError) as exc:
            raise ModelError(
                f"llama.cpp could not load {gguf.path}"
                + (f" with adapter {adapter}" if adapter else "")
                + f": {str(exc).rstrip('.')}. The file may be for an architecture this "
                f"llama.cpp build does not know ({gguf.architecture}), or the machine may "
                "lack the memory."
            ) from exc
        self._llama_cpp = llama_cpp
        # llama-cpp-python reads a seed of 0 as "random" (`seed or DEFAULT`): set the
        # configured one after loading. Calls without their own seed return to it.
        self._seed = seed if seed >= 0 else llama_cpp.LLAMA_DEFAULT_SEED
        self._llm.set_seed(self._seed)
        self._lock = threading.Lock()
        self._prompt_len = 0  # tokens of the last prompt put into the cache
        # threads = 0: chosen by timing while decoding (graceful when the CPU is busy).
        self._tuner = None if threads else ThreadTuner(cores, self._set_threads)
        self._gguf = gguf
        self._adapter = str(adapter or "")
        self._adapter_scale = adapter_scale
        self._formatter = self._make_formatter()
        self.info = ModelInfo(
            name=name or gguf.name,
            backend="llama.cpp",
            grammar=True,
            context_size=self._llm.n_ctx(),
            architecture=gguf.architecture,
            path=str(gguf.path),
            adapter=self._adapter,
            gpu_offload=offload and n_gpu != 0,
            placement=_placement(offload, n_gpu, gguf),
            parameters=_parameters(llama_cpp, self._llm),
        )

    # ------------------------------------------------------------ prompt

    def _make_formatter(self) -> Jinja2ChatFormatter:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llm = self._llm
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        self._template = self._gguf.chat_template or CHATML_TEMPLATE
        return Jinja2ChatFormatter(
            template=self._template,
            eos_token=eos,
            bos_token=bos,
            stop_token_ids=[eos_id] if eos_id != -1 else None,
        )

    def render(self, messages: Sequence[ChatMessage],
               tools: Sequence[dict[str, Any]] = ()) -> str:
        """The prompt text the chat template makes of ``messages``."""
        try:
            chat, schemas = template_input(messages, tools, self._template)
            # llama_cpp types both as its OpenAI TypedDicts: ours are those JSON shapes as
            # plain dicts, which is what the template reads.
            result = self._formatter(messages=chat, tools=schemas)  # pyright: ignore[reportArgumentType]
        except Exception as exc:  # jinja raises many types; all mean "template failed"
            raise ModelError(f"the chat template of {self.info.name} failed to render "
                             f"these messages: {exc}") from exc
        return result.prompt

    def tokenize(self, text: str) -> list[int]:
        # Templates write BOS themselves where the model wants it.
        return self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def count_tokens(self, messages: Sequence[ChatMessage],
                     tools: Sequence[dict[str, Any]] = ()) -> int:
        return len(self.tokenize(self.render(messages, tools)))

    # ------------------------------------------------------------ generation

    def stream(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams = GenerationParams(),
        cancel: threading.Event | None = None,
    ) -> Iterator[StreamEvent]:
        cancel = cancel or threading.Event()
        tokens = self.tokenize(self.render(messages, params.tools))
        n_ctx = self._llm.n_ctx()
        if len(tokens) >= n_ctx:
            raise ModelError(
                f"the prompt is {len(tokens):,} tokens but {self.info.name} runs with a "
                f"context of {n_ctx:,}: raise [model] context or start a new session"
            )
        grammar = self._grammar(params)
        with self._lock:
            clock = TokenClock(time.perf_counter())
            if self._tuner:
                self._tuner.begin()
            reused = self._load_prompt(tokens, cancel)
            counts = {"prompt_tokens": len(tokens), "reused_tokens": reused,
                      "evaluated_tokens": len(tokens) - reused if reused >= 0 else 0}
            if reused < 0:  # cancelled during prompt evaluation
                counts["reused_tokens"] = 0
                yield Finished("", "cancelled", clock.usage(time.perf_counter(), **counts))
                return
            yield from self._generate(tokens, params, grammar, cancel, clock, counts)

    def _load_prompt(self, tokens: list[int], cancel: threading.Event) -> int:
        """Put ``tokens`` into the KV cache, evaluating only what is not there yet.

        Returns the number of tokens reused from the cache, or -1 when cancelled.
        """
        llm = self._llm
        cached = llm._input_ids  # tokens whose KV entries are live
        prefix = 0
        for a, b in zip(cached, tokens, strict=False):
            if a != b:
                break
            prefix += 1
        exact = prefix == len(tokens) == llm.n_tokens and not llm._requires_eval
        if not exact:
            # The last prompt token must be evaluated to get the logits to sample from.
            prefix = min(prefix, len(tokens) - 1)
            if prefix < self._prompt_len:
                # Not this conversation's next step (that extends the last prompt) but
                # another one, or an earlier point of it: keep its batches aligned.
                prefix -= prefix % KV_ALIGN
            if not llm._ctx.kv_cache_seq_rm(-1, prefix, -1):
                prefix = 0  # this model's cache cannot be cut: start over
                llm.reset()
            llm.n_tokens = prefix
            for start in range(prefix, len(tokens), llm.n_batch):
                if cancel.is_set():
                    return -1
                llm.eval(tokens[start : start + llm.n_batch])
        self._prompt_len = len(tokens)
        return prefix

    def _generate(
        self,
        tokens: list[int],
        params: GenerationParams,
        grammar: LlamaGrammar | None,
        cancel: threading.Event,
        clock: TokenClock,
        counts: dict[str, int],
    ) -> Iterator[StreamEvent]:
        llm = self._llm
        vocab = llm._model.vocab
        is_eog = self._llama_cpp.llama_vocab_is_eog
        # A call's own seed holds for that call only, not for the ones after it.
        llm.set_seed(params.seed if params.seed is not None else self._seed)
        max_new = min(params.max_tokens, llm.n_ctx() - len(tokens))
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        stops = StopMatcher(params.stop)
        finish = "length"
        generated: list[int] = []
        # Cached prompt + reset=True: generate() sees an exact cache hit and samples at once.
        gen = llm.generate(
            tokens, temp=params.temperature, top_p=params.top_p, top_k=40, min_p=0.05,
            repeat_penalty=1.0, grammar=grammar, reset=True,
        )
        try:
            for token in gen:
                if cancel.is_set():
                    finish = "cancelled"
                    break
                if is_eog(vocab, token):
                    finish = "stop"
                    break
                now = time.perf_counter()
                clock.tick(now)
                if self._tuner:
                    self._tuner.tick(now)
                piece = decoder.decode(llm.detokenize([token], prev_tokens=tokens + generated))
                generated.append(token)
                emit, stopped = stops.feed(piece)
                if emit:
                    yield Delta(emit)
                if stopped:
                    finish = "stop"
                    break
                if len(generated) >= max_new:
                    break
        finally:
            gen.close()
        if finish != "stop" or not stops.stopped:
            tail, _ = stops.feed(decoder.decode(b"", final=True))
            tail += stops.flush()
            if tail:
                yield Delta(tail)
        if cancel.is_set():
            finish = "cancelled"
        yield Finished(stops.text, finish, clock.usage(time.perf_counter(), **counts))

    def _set_threads(self, decode: int, batch: int) -> None:
        self._llama_cpp.llama_set_n_threads(self._llm._ctx.ctx, decode, batch)

    @property
    def threads(self) -> int:
        """The thread count decoding uses now (the tuner's pick, or the configured one)."""
        return int(self._llama_cpp.llama_n_threads(self._llm._ctx.ctx))

    def _grammar(self, params: GenerationParams) -> LlamaGrammar | None:
        if params.grammar and params.json_schema:
            raise ModelError("give either a grammar or a JSON schema, not both")
        if not (params.grammar or params.json_schema):
            return None
        from llama_cpp import LlamaGrammar

        try:
            if params.grammar:
                grammar = LlamaGrammar.from_string(params.grammar, verbose=False)
            else:
                grammar = LlamaGrammar.from_json_schema(json.dumps(params.json_schema),
                                                        verbose=False)
        except Exception as exc:
            raise ModelError(f"invalid grammar or JSON schema: {exc}") from exc
        # llama.cpp parses the grammar only when the sampler is built, and a NULL
        # sampler from a bad grammar crashes the process: try it here first.
        lib = self._llama_cpp
        probe = lib.llama_sampler_init_grammar(
            self._llm._model.vocab, grammar._grammar.encode(), grammar._root.encode())
        if not probe:
            raise ModelError("invalid grammar: llama.cpp could not parse it (GBNF syntax, "
                             "with a `root` rule)")
        lib.llama_sampler_free(probe)
        return grammar

    # ------------------------------------------------------------ KV state

    def _identity(self) -> dict[str, Any]:
        stat = self._gguf.path.stat()
        return {"model": str(self._gguf.path.resolve()), "size": stat.st_size,
                "mtime": int(stat.st_mtime), "adapter": self._adapter,
                "adapter_scale": self._adapter_scale, "n_ctx": self._llm.n_ctx()}

    def save_state(self, path: str | Path) -> int:
        """Write the KV cache (and its tokens) to ``path``; returns the token count.

        Resuming a session then restores it instead of evaluating the transcript again.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        llm = self._llm
        with self._lock:
            n = llm.n_tokens
            tokens = (self._llama_cpp.llama_token * n)(*llm._input_ids.tolist())
            tmp = path.with_suffix(path.suffix + ".tmp")
            if not self._llama_cpp.llama_state_save_file(llm._ctx.ctx, str(tmp).encode(),
                                                         tokens, n):
                tmp.unlink(missing_ok=True)
                raise ModelError(f"llama.cpp could not save the KV state to {path}")
            os.replace(tmp, path)
        Path(str(path) + ".json").write_text(json.dumps({**self._identity(), "tokens": n}))
        return n

    def load_state(self, path: str | Path) -> int:
        """Restore a KV state saved by ``save_state`` for this same model.

        Returns the number of tokens restored; 0 when the file is missing or was made by
        another model, adapter or context size (the prompt is then simply evaluated).
        """
        path = Path(path)
        try:
            meta = json.loads(Path(str(path) + ".json").read_text())
        except (OSError, ValueError):
            return 0
        if {k: meta.get(k) for k in self._identity()} != self._identity():
            return 0
        llm = self._llm
        capacity = llm.n_ctx()
        tokens = (self._llama_cpp.llama_token * capacity)()
        count = ctypes.c_size_t(0)
        with self._lock:
            ok = self._llama_cpp.llama_state_load_file(
                llm._ctx.ctx, str(path).encode(), tokens, capacity, ctypes.pointer(count))
            if not ok:
                llm.reset()
                return 0
            n = count.value
            llm.input_ids[:n] = tokens[:n]
            llm.n_tokens = n
            llm._requires_eval = True  # logits are not part of the state
            self._prompt_len = n
        return n

    def reset(self) -> None:
        """Forget the KV cache (the next call evaluates its whole prompt)."""
        with self._lock:
            self._llm.reset()

    def close(self) -> None:
        # Popped, not set to None, so that ``_llm`` is a Llama wherever the model is open;
        # a failed __init__ never set it, and a second close finds nothing to close.
        llm = self.__dict__.pop("_llm", None)
        if llm is not None:
            llm.close()


def _check_adapter(path: Path, base_arch: str) -> None:
    try:
        check_adapter(path, base_arch)
    except NotAnAdapter as exc:
        raise ModelError(str(exc)) from exc
    except GGUFError as exc:
        raise ModelError(f"LoRA adapter: {exc}") from exc
