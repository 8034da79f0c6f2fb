"""A CPU stand-in for Unsloth's ``FastLanguageModel``, where it differs from transformers.

Unsloth needs a CUDA GPU for its kernels; its patched model behaves differently from
stock transformers in ways that a hand-written decode loop and a GRPO step run into.
This double loads the tiny model with transformers and adds exactly those differences,
as read in ``unsloth/models/llama.py`` (2026.10.9):

- decoding with a cache (one input token and ``past_key_values``) takes Unsloth's fast
  inference branch, which reads ``int(position_ids.max().item())``: without
  ``position_ids`` it raises ``AttributeError`` (``LlamaModel_fast_forward_inference``),
  and it returns a tuple ``(logits, past_key_values, …)`` unless ``return_dict=True``
  is passed (``_CausalLM_fast_forward`` reads the config's default only in its other
  branch; first seen on an H200, where ``out.past_key_values`` failed);
- in training mode the backbone drops the 2-D attention mask and runs causal-only
  (``LlamaModel_fast_forward``): right padding is safe, left padding is not;
- ``for_inference`` turns gradient checkpointing off on every module and leaves
  training mode; ``for_training`` turns both back on. ``model.train()`` alone does not
  bring checkpointing back.

Install it with ``install(monkeypatch)``: ``import unsloth`` then finds this module's
``FastLanguageModel`` (``finetune.policy._load_unsloth`` imports it that way).
"""

from __future__ import annotations

import copy
import functools
import sys
import types
from pathlib import Path
from typing import Any


@functools.cache
def _base(path: str):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = Path(path)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    return model, tokenizer


def _patch(model) -> None:
    """Give ``model`` (a transformers CausalLM) Unsloth's forward contracts."""
    causal_forward, backbone = model.forward, model.model
    backbone_forward = backbone.forward

    def forward(input_ids=None, attention_mask=None, position_ids=None,
                past_key_values=None, **kwargs):
        if past_key_values is not None and input_ids is not None and input_ids.shape[1] == 1:
            model.calls.append("decode")
            # Unsloth's fast decode branch: rotary_seq_len = max(kv_seq_len,
            # int(position_ids.max().item()) + 1)
            int(position_ids.max().item())
            out = causal_forward(input_ids=input_ids, attention_mask=attention_mask,
                                 position_ids=position_ids, past_key_values=past_key_values,
                                 **kwargs)
            # `if not return_dict: output = (logits,) + outputs[1:]`, with return_dict None
            return out if kwargs.get("return_dict") is True else (
                out.logits, out.past_key_values, [], [])
        return causal_forward(input_ids=input_ids, attention_mask=attention_mask,
                              position_ids=position_ids, past_key_values=past_key_values,
                              **kwargs)

    def backbone_call(*args, attention_mask=None, past_key_values=None, **kwargs):
        if backbone.training and attention_mask is not None and attention_mask.ndim == 2:
            attention_mask = None  # causal-only, as Unsloth's training path runs
        return backbone_forward(*args, attention_mask=attention_mask,
                                past_key_values=past_key_values, **kwargs)

    model.forward = forward
    backbone.forward = backbone_call
    model.calls = []


def _checkpointing(model, on: bool) -> None:
    for module in model.modules():
        if hasattr(module, "gradient_checkpointing"):
            module.gradient_checkpointing = on


class FastLanguageModel:
    """The three calls deskmate makes, with Unsloth's signatures and behaviour."""

    inference_calls = 0
    training_calls = 0
    # What ``dtype=None`` resolves to: bf16 on most GPUs, fp16 on a T4/V100 (a test sets
    # it); float32 stands in for bf16 on the CPU.
    gpu_dtype: Any = None

    @staticmethod
    def from_pretrained(model_name: str, max_seq_length: int, load_in_4bit: bool,
                        dtype: Any, random_state: int = 0, **kwargs: Any):
        # Real Unsloth takes a Hugging Face checkpoint; here the tiny GGUF stands in.
        model, tokenizer = _base(model_name)
        model = copy.deepcopy(model)
        if dtype is None and FastLanguageModel.gpu_dtype is not None:
            model.to(FastLanguageModel.gpu_dtype)
        model.max_seq_length = max_seq_length
        _patch(model)
        return model, tokenizer

    @staticmethod
    def get_peft_model(model, r: int, lora_alpha: int, lora_dropout: float,
                       target_modules: list[str], bias: str,
                       use_gradient_checkpointing: Any, random_state: int = 0, **kwargs: Any):
        from peft import LoraConfig, get_peft_model

        missing = [t for t in target_modules
                   if not any(n.endswith("." + t) for n, _ in model.named_modules())]
        if missing:  # Unsloth refuses targets the model does not have
            raise ValueError(f"Unsloth: {missing} are not modules of this model")
        if use_gradient_checkpointing:
            model.gradient_checkpointing_enable(
                gradient_checkpointing_kwargs={"use_reentrant": False})
        peft = get_peft_model(model, LoraConfig(
            r=r, lora_alpha=lora_alpha, lora_dropout=lora_dropout,
            target_modules=target_modules, bias=bias, task_type="CAUSAL_LM"))
        peft.train()
        return peft

    @staticmethod
    def for_inference(model):
        FastLanguageModel.inference_calls += 1
        _checkpointing(model, False)
        model.eval()
        return model

    @staticmethod
    def for_training(model, use_gradient_checkpointing: Any = True):
        FastLanguageModel.training_calls += 1
        _checkpointing(model, bool(use_gradient_checkpointing))
        model.train()
        return model


def install(monkeypatch) -> type[FastLanguageModel]:
    """Make ``from unsloth import FastLanguageModel`` give the double."""
    module = types.ModuleType("unsloth")
    module.FastLanguageModel = FastLanguageModel  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "unsloth", module)
    FastLanguageModel.inference_calls = FastLanguageModel.training_calls = 0
    FastLanguageModel.gpu_dtype = None
    return FastLanguageModel


def checkpointing_on(model) -> bool:
    flags = [m.gradient_checkpointing for m in model.modules()
             if hasattr(m, "gradient_checkpointing")]
    return bool(flags) and all(flags)
