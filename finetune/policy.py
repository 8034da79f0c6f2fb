"""The trainable policy: a base model with LoRA, and a ChatModel that samples from it.

RL rollouts run through the same agent loop as the app (app/agent/loop.py); only the
model underneath changes. ``PolicyChatModel`` renders prompts with the tokenizer's chat
template (the one llama.cpp reads from the GGUF), samples token by token from the
policy, and records per call the exact prompt ids and generated ids. The GRPO loss is
computed on the generated ids only: tool output reaches the model through the prompt of
a later call, so it is never in a completion and is masked by construction.

Two ways to load, one interface:
- CUDA: Unsloth ``FastLanguageModel`` (4-bit base + LoRA, gradient checkpointing) from a
  Hugging Face checkpoint. A GGUF base is refused there: transformers would dequantize
  it to full bf16, far above the 4-bit memory the plan promised.
- CPU: transformers + PEFT ``get_peft_model``; transformers reads a GGUF itself
  (dequantized), which is how the tests load SmolLM2.

Unsloth's patched model differs from transformers where this module touches it
(tests/unsloth_double.py enforces each on the CPU): a decode step with a cache must
carry ``position_ids``; ``for_inference``/``for_training`` switch gradient checkpointing
(``model.train()`` alone does not bring it back); training mode drops the attention
mask, so the loss right-pads (``finetune/logprobs.py``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from deskmate.app.llm.base import (
    ChatMessage,
    Delta,
    Finished,
    FinishReason,
    GenerationParams,
    ModelError,
    ModelInfo,
    StreamEvent,
    TokenClock,
)
from deskmate.app.llm.template_tools import template_input
from deskmate.finetune._sampling import Reply, sample_token

if TYPE_CHECKING:  # torch, peft and transformers load with the first policy
    from peft import PeftModel
    from torch import Generator
    from transformers import PreTrainedTokenizerBase


@dataclass(frozen=True)
class PolicyConfig:
    lora_rank: int = 16  # r of every LoRA pair; 16 fits a 4B model on a 12 GB GPU
    lora_alpha: int = 32  # LoRA scale is alpha / rank (llama.cpp uses the same rule)
    lora_dropout: float = 0.0  # 0 keeps generation and the loss forward identical
    # The linear layers that get a LoRA pair: all attention and MLP projections.
    target_modules: tuple[str, ...] = (
        "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
    device: str = "auto"  # "auto" (cuda if available, else cpu), "cuda" or "cpu"
    # 4-bit base weights (Unsloth + bitsandbytes); None = on CUDA yes, on CPU no.
    load_in_4bit: bool | None = None
    seed: int = 0  # LoRA initialisation, and sampling when a call gives no seed
    # Longest prompt + completion a call or the loss may use. A code-mode rollout at the
    # GRPO defaults (6 calls of ≤ 512 tokens, observations of ≤ 4,000 characters, a
    # ~2k-token system prompt) needs about 10k: GRPOConfig.max_seq_len sets it for runs.
    max_seq_len: int = 4096


class ContextFull(ModelError):
    """The conversation no longer fits in ``max_seq_len``: a rollout ends here, scored
    on what it did so far (``finetune/rollout.py``), rather than failing."""


class ModeSwitch(Protocol):
    """Unsloth's ``FastLanguageModel``: its inference and training switches."""

    @staticmethod
    def for_inference(model: Any) -> Any: ...

    @staticmethod
    def for_training(model: Any, use_gradient_checkpointing: Any = True) -> Any: ...


@dataclass(frozen=True)
class Policy:
    """A loaded policy: the PEFT-wrapped model and what it takes to prompt it."""

    model: PeftModel  # LoRA enabled (unsloth's too); its base is frozen
    tokenizer: PreTrainedTokenizerBase
    device: str  # "cuda" or "cpu"
    config: PolicyConfig
    name: str  # shown in ModelInfo and logs
    backend: str  # "unsloth" or "peft"
    eos_ids: frozenset[int] = field(default_factory=frozenset)  # ids that end a reply
    # The LoRA targets the model has and the exporter can write (the others are dropped).
    targets: tuple[str, ...] = ()
    # Half-precision (fp16) compute, on GPUs without bf16 (T4, V100, RTX 20xx): the loss
    # must be scaled (GradScaler) or small gradients underflow to zero.
    fp16: bool = False
    switch: ModeSwitch | None = None  # Unsloth's mode switches; None: train()/eval()

    @contextlib.contextmanager
    def inference(self) -> Iterator[None]:
        """Sampling mode for the block, then back to the mode the model was in.

        Under Unsloth ``for_inference``/``for_training``: ``model.train()`` would leave
        gradient checkpointing off, and the next backward would keep every activation.
        """
        was_training = self.model.training
        if self.switch is not None:
            self.switch.for_inference(self.model)
        else:
            self.model.eval()
        try:
            yield
        finally:
            if was_training:
                self.training()

    def training(self) -> None:
        """Training mode, gradient checkpointing included where the backend has it."""
        if self.switch is not None:
            self.switch.for_training(self.model)
        else:
            self.model.train()

    def render(self, messages: Sequence[ChatMessage],
               tools: Sequence[dict[str, Any]] = ()) -> str:
        """The prompt text for ``messages``, ending where the assistant's reply starts."""
        # transformers types the template as str | dict (named templates) and the result
        # as str or token ids: a tokenizer loaded here has one template, and tokenize=False
        # returns the text.
        template: str = self.tokenizer.chat_template or ""  # pyright: ignore[reportAssignmentType]
        try:
            chat, schemas = template_input(messages, tools, template)
            return self.tokenizer.apply_chat_template(  # pyright: ignore[reportReturnType]
                chat, tools=schemas,  # pyright: ignore[reportArgumentType]
                add_generation_prompt=True, tokenize=False)
        except Exception as exc:  # jinja raises many types; all mean "template failed"
            raise ModelError(f"the chat template of {self.name} failed to render these "
                             f"messages: {exc}") from exc

    def tokenize(self, text: str) -> list[int]:
        # Templates write BOS themselves where the model wants it (as with llama.cpp).
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def encode(self, messages: Sequence[ChatMessage],
               tools: Sequence[dict[str, Any]] = ()) -> list[int]:
        return self.tokenize(self.render(messages, tools))

    def prompt(self, messages: Sequence[ChatMessage], params: GenerationParams,
               limit: int) -> list[int]:
        """The prompt ids of a training call; ContextFull when they leave no room."""
        if params.grammar or params.json_schema:
            raise ModelError("training samples without grammars or JSON schemas; "
                             "constrained output is for the llama.cpp models")
        prompt = self.encode(messages, params.tools)
        if len(prompt) >= limit:
            raise ContextFull(f"the prompt is {len(prompt):,} tokens but training allows "
                              f"{limit:,} (max_seq_len): the conversation is full")
        return prompt


def resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ModelError("device 'cuda' was asked for but torch sees no CUDA GPU: use "
                         "--device cpu (only for tiny models) or check the NVIDIA driver")
    if device not in ("cuda", "cpu"):
        raise ModelError(f"unknown device {device!r}: use auto, cuda or cpu")
    return device


def load_policy(base: str | Path, config: PolicyConfig = PolicyConfig()) -> Policy:
    """Load ``base`` (a Hugging Face name or folder, or a .gguf file) with fresh LoRA."""
    import torch

    device = resolve_device(config.device)
    four_bit = config.load_in_4bit if config.load_in_4bit is not None else device == "cuda"
    if four_bit and device != "cuda":
        raise ModelError("4-bit loading needs a CUDA GPU (bitsandbytes): set "
                         "load_in_4bit=False to train on the CPU")
    if device == "cuda" and str(base).endswith(".gguf"):
        raise ModelError(gguf_on_gpu(str(base)))
    torch.manual_seed(config.seed)  # LoRA A matrices start random
    if device == "cuda" and four_bit:
        return _load_unsloth(str(base), config)
    return _load_peft(base, config, device)


def gguf_on_gpu(base: str) -> str:
    """Why a GGUF base is not trained on the GPU, and what to give instead."""
    return (f"{Path(base).name}: a GGUF base would be dequantized to full bf16 for training "
            "(several times the 4-bit memory, no Unsloth kernels). Train on the model's "
            "Hugging Face checkpoint: pick a registry model that names one (its `train` "
            "field), e.g. the recommended Qwen3-4B")


def lora_targets(model: Any, wanted: Sequence[str]) -> tuple[str, ...]:
    """The ``wanted`` LoRA targets that ``model`` has and the GGUF exporter can write.

    phi3's fused ``qkv_proj``/``gate_up_proj`` (and any other architecture's own names)
    would otherwise be skipped silently by PEFT, or trained for hours and then refused
    by the exporter.
    """
    from deskmate.finetune.export import TENSOR_NAMES

    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    kept = tuple(t for t in wanted if t in names and t in TENSOR_NAMES)
    if not kept:
        raise ModelError(f"{type(model).__name__} has none of the LoRA targets llama.cpp "
                         f"adapters can carry ({', '.join(TENSOR_NAMES)}): this "
                         "architecture cannot be finetuned for llama.cpp yet")
    return kept


def _load_unsloth(base: str, config: PolicyConfig) -> Policy:
    # Imported first: Unsloth patches transformers and peft as it loads.
    from unsloth import FastLanguageModel

    # dtype None: bf16 where the GPU has it, else fp16 (then the loss is scaled).
    model, tokenizer = FastLanguageModel.from_pretrained(
        model_name=base, max_seq_length=config.max_seq_len, load_in_4bit=True, dtype=None,
        random_state=config.seed)
    targets = lora_targets(model, config.target_modules)
    model = FastLanguageModel.get_peft_model(
        model, r=config.lora_rank, lora_alpha=config.lora_alpha,
        lora_dropout=config.lora_dropout, target_modules=list(targets),
        bias="none", use_gradient_checkpointing="unsloth", random_state=config.seed)
    # Unsloth wraps its static for_inference/for_training in functools.wraps, which
    # hides them from pyright.
    return _policy(model, tokenizer, "cuda", config, base, "unsloth", targets,
                   switch=FastLanguageModel)  # pyright: ignore[reportArgumentType]


def _load_peft(base: str | Path, config: PolicyConfig, device: str) -> Policy:
    # On the CPU we use transformers + PEFT, not Unsloth's CPU fallback: Unsloth takes
    # ~20 s to import there, patches transformers process-wide, and brings no speed-up
    # without its GPU kernels; PEFT's LoRA layers are the same math, saved the same way.
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if str(base).endswith(".gguf"):
        gguf = Path(base).expanduser()
        if not gguf.is_file():
            raise ModelError(f"model file not found: {gguf}")
        where, extra = str(gguf.parent), {"gguf_file": gguf.name}
    else:
        where, extra = str(base), {}
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    try:
        tokenizer = AutoTokenizer.from_pretrained(where, **extra)
        model = AutoModelForCausalLM.from_pretrained(where, dtype=dtype, **extra)
    except (OSError, ValueError) as exc:
        raise ModelError(f"transformers could not load {base}: {exc}") from exc
    model.to(device)  # pyright: ignore[reportArgumentType] - transformers' .to is wrapped
    targets = lora_targets(model, config.target_modules)
    lora = LoraConfig(r=config.lora_rank, lora_alpha=config.lora_alpha,
                      lora_dropout=config.lora_dropout,
                      target_modules=list(targets), bias="none",
                      task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)
    return _policy(model, tokenizer, device, config, str(base), "peft", targets)


def _policy(model: PeftModel, tokenizer: PreTrainedTokenizerBase, device: str,
            config: PolicyConfig, base: str, backend: str, targets: tuple[str, ...],
            switch: ModeSwitch | None = None) -> Policy:
    import torch

    if not tokenizer.chat_template:
        from deskmate.app.llm.llamacpp import CHATML_TEMPLATE  # llama.cpp falls back to it too

        tokenizer.chat_template = CHATML_TEMPLATE
    # The generation config says which tokens end a turn (from the GGUF's
    # tokenizer.ggml.eos_token_id, or the checkpoint's list); the tokenizer's own eos is
    # the fallback (read from a GGUF, transformers may report <|im_start|> there).
    eos = getattr(model.generation_config, "eos_token_id", None)
    if eos is None:
        eos = tokenizer.eos_token_id
    eos = set(eos) if isinstance(eos, list) else {eos}
    fp16 = getattr(model.get_base_model(), "dtype", None) == torch.float16
    if fp16:
        # GradScaler unscales fp32 gradients only; PEFT casts the input to the LoRA
        # weights' dtype and the result back, so fp32 LoRA on an fp16 base just works.
        for p in model.parameters():
            if p.requires_grad:
                p.data = p.data.float()
    return Policy(model=model, tokenizer=tokenizer, device=device, config=config,
                  name=Path(base).name, backend=backend,
                  eos_ids=frozenset(i for i in eos if isinstance(i, int)),
                  targets=targets, fp16=fp16, switch=switch)


# ---------------------------------------------------------------- generation


@dataclass(frozen=True)
class GenerationRecord:
    """One model call as the policy saw it: what the loss is computed on.

    ``completion_ids`` are the tokens the policy sampled, ending with the end-of-turn
    token when the model stopped by itself (so training also teaches when to stop), or
    with the token that completed a stop string. ``text`` is what the stream reported;
    it equals ``decode(completion_ids, skip_special_tokens=True)`` except that a stop
    string and what followed it in its last token are cut from the text.
    """

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    text: str
    finish_reason: FinishReason
    # log p(token) under the distribution it was sampled from at the call's temperature
    # (before top-p; rollouts for training sample at top-p 1, so it is that one), equal
    # to sequence_logprobs(temperature=T) on the same ids while the weights are
    # unchanged. For diagnostics: the GRPO update recomputes its own old log-probs.
    logprobs: tuple[float, ...]


def finish_call(records: list[GenerationRecord], prompt: list[int], reply: Reply,
                cancel: threading.Event, clock: TokenClock, *, reused: int
                ) -> Iterator[StreamEvent]:
    """The end of a training call: the held-back text, the record, ``Finished``."""
    tail = reply.tail()
    if tail:
        yield Delta(tail)
    finish: FinishReason = "cancelled" if cancel.is_set() else reply.finish
    records.append(GenerationRecord(
        prompt_ids=tuple(prompt), completion_ids=tuple(reply.ids), text=reply.text,
        finish_reason=finish, logprobs=tuple(reply.logprobs)))
    usage = clock.usage(time.perf_counter(), prompt_tokens=len(prompt), reused_tokens=reused,
                        evaluated_tokens=len(prompt) - reused)
    yield Finished(reply.text, finish, usage)


class PolicyChatModel:
    """deskmate's ``ChatModel`` protocol over a ``Policy``; one call at a time."""

    def __init__(self, policy: Policy, *, name: str | None = None) -> None:
        self.policy = policy
        self.records: list[GenerationRecord] = []  # every call, in order
        self.info = ModelInfo(
            name=name or policy.name, backend=f"policy ({policy.backend})",
            context_size=policy.config.max_seq_len,
            architecture=getattr(policy.model.config, "model_type", ""), path=policy.name)
        self._lock = threading.Lock()
        self._rng: Generator | None = None  # for calls without a seed, made lazily

    @property
    def last_call(self) -> GenerationRecord | None:
        return self.records[-1] if self.records else None

    def take_records(self) -> list[GenerationRecord]:
        """The records so far, forgetting them (one rollout's calls)."""
        out, self.records = self.records, []
        return out

    def tokenize(self, text: str) -> list[int]:
        return self.policy.tokenize(text)

    def stream(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams = GenerationParams(),
        cancel: threading.Event | None = None,
    ) -> Iterator[StreamEvent]:
        prompt = self.policy.prompt(messages, params, self.policy.config.max_seq_len)
        with self._lock:
            yield from self._generate(prompt, params, cancel or threading.Event())

    def _generate(self, prompt: list[int], params: GenerationParams,
                  cancel: threading.Event) -> Iterator[StreamEvent]:
        import torch

        policy = self.policy
        clock = TokenClock(time.perf_counter())
        reply = Reply(policy.tokenizer, params.stop, policy.eos_ids)
        rng = self._generator(params.seed)
        max_new = min(params.max_tokens, policy.config.max_seq_len - len(prompt))
        # The log-probs are recorded under the sampling temperature (T = 1 when greedy).
        scale = params.temperature if params.temperature > 0 else 1.0
        with policy.inference(), torch.inference_mode():
            step_input = torch.tensor([prompt], device=policy.device)
            cache = None
            while len(reply.ids) < max_new and not cancel.is_set():
                # Positions are explicit: Unsloth's decode step reads them (stock
                # transformers derives them from the cache). Only the last position's
                # logits are projected, in the prefill too. return_dict too: Unsloth's
                # decode step returns a tuple unless asked (seen on an H200).
                at = len(prompt) + len(reply.ids) - step_input.shape[1]
                positions = torch.arange(at, at + step_input.shape[1],
                                         device=policy.device)[None]
                out = policy.model(input_ids=step_input, position_ids=positions,
                                   past_key_values=cache, use_cache=True, logits_to_keep=1,
                                   return_dict=True)
                cache = out.past_key_values
                logits = out.logits[0, -1].float()
                token = sample_token(logits, params.temperature, params.top_p, rng)
                emit = reply.add(token, torch.log_softmax(logits / scale, -1)[token].item())
                clock.tick(time.perf_counter())
                if emit:
                    yield Delta(emit)
                if reply.ended:
                    break
                step_input = torch.tensor([[token]], device=policy.device)
        yield from finish_call(self.records, prompt, reply, cancel, clock, reused=0)

    def _generator(self, seed: int | None) -> Generator:
        import torch

        if seed is not None:
            return torch.Generator(self.policy.device).manual_seed(seed)
        if self._rng is None:  # calls without a seed follow one stream from config.seed
            self._rng = torch.Generator(self.policy.device).manual_seed(
                self.policy.config.seed)
        return self._rng

    def close(self) -> None:
        pass  # the policy belongs to the caller (training goes on after the rollouts)
