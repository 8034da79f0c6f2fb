"""Write a trained LoRA as a GGUF adapter that llama.cpp loads on the quantized base.

llama.cpp reads an adapter as: metadata ``general.type = adapter``, ``adapter.type =
lora``, ``adapter.lora.alpha`` (float32) and the base's architecture name; then per
adapted matrix two tensors named after the base tensor, ``blk.N.attn_q.weight.lora_a``
(PEFT's ``lora_A.weight``, ``[r, in]``) and ``.lora_b`` (``lora_B.weight``, ``[out, r]``).
It applies ``W x + alpha / r * B A x``, the same scale as PEFT.

One trap: for ``llama`` models, llama.cpp's HF→GGUF converter reorders the rows of the
q and k projections (rotary halves interleaved per head). The base GGUF holds them
reordered, so the adapter's ``B`` rows must be reordered the same way, or the q/k part
of the adapter lands on the wrong rows and is noise.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deskmate.app.llm.gguf_file import GGUFError, inspect_gguf

if TYPE_CHECKING:  # peft and numpy come with the finetune extra, loaded when exporting
    import numpy as np
    from numpy.typing import NDArray
    from peft import PeftModel

    Weights = NDArray[np.float32]

# HF module name -> llama.cpp tensor name (the part after "blk.N.").
TENSOR_NAMES = {
    "q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
    "gate_proj": "ffn_gate", "up_proj": "ffn_up", "down_proj": "ffn_down",
}
# Architectures (as the base GGUF names them) whose tensors use the names above, and
# whether their converter permutes q/k rows (llama.cpp convert_hf_to_gguf.py: LlamaModel
# does; Qwen2Model and Qwen3Model, which subclasses it, copy the weights as they are).
# llama and qwen2 were checked against llama.cpp (SmolLM2, Qwen2.5-Coder-0.5B: logit
# deltas correlate 0.96–0.99); qwen3 follows from the converter's code alone.
ARCHITECTURES = {"llama": True, "qwen2": False, "qwen3": False}

_LORA_KEY = re.compile(
    r"\.layers\.(\d+)\.(?:self_attn|mlp)\.(" + "|".join(TENSOR_NAMES) + r")\.lora_([AB])\.weight$")


class ExportError(Exception):
    """The adapter cannot be written in a form llama.cpp would use; says why."""


@dataclass(frozen=True)
class _Base:
    arch: str
    n_layer: int
    n_head: int
    n_head_kv: int
    permute_qk: bool


def export_gguf_adapter(model: PeftModel, out_path: str | Path, *, base_gguf: str | Path,
                        overwrite: bool = False) -> Path:
    """Write ``model``'s LoRA (a PEFT model) to ``out_path`` for the base ``base_gguf``.

    The PEFT folder (``save_pretrained``) is kept beside it as ``<stem>-peft/``, to go on
    training or to merge later. Refuses to replace existing files unless ``overwrite``.
    """
    import gguf

    out_path = Path(out_path)
    peft_dir = out_path.with_name(out_path.stem + "-peft")
    if not overwrite:
        for existing in (out_path, peft_dir):
            if existing.exists():
                raise FileExistsError(f"{existing} already exists: pick another name or "
                                      "export with overwrite=True")
    base = read_base(Path(base_gguf))
    alpha, tensors = _lora_tensors(model, base)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_name(out_path.name + ".tmp")
    writer = gguf.GGUFWriter(str(tmp), base.arch)
    writer.add_string("general.type", "adapter")
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", alpha)
    for name, array in tensors:
        writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp.replace(out_path)
    model.save_pretrained(str(peft_dir))
    return out_path


def read_base(path: Path) -> _Base:
    """What the adapter needs of the base GGUF; ExportError when it cannot be made for it
    (the run checks this before its first step)."""
    try:
        info = inspect_gguf(path)
    except GGUFError as exc:
        raise ExportError(f"base model for the adapter: {exc}") from exc
    arch = info.architecture
    if info.file_type == "adapter":
        raise ExportError(f"{path} is itself an adapter; give the base model's .gguf")
    if arch not in ARCHITECTURES:
        raise ExportError(f"cannot export a LoRA for architecture {arch!r} ({path}): the "
                          f"exporter knows {', '.join(sorted(ARCHITECTURES))}; its tensor "
                          "names and q/k layout must be checked against llama.cpp's converter")
    meta = info.metadata
    try:
        n_layer = int(meta[f"{arch}.block_count"])
        n_head = int(meta[f"{arch}.attention.head_count"])
        n_head_kv = int(meta.get(f"{arch}.attention.head_count_kv", n_head))
    except (KeyError, TypeError) as exc:
        raise ExportError(f"{path} lacks the layer/head counts of a {arch} model "
                          f"({exc}); is it a complete GGUF model?") from exc
    return _Base(arch, n_layer, n_head, n_head_kv, ARCHITECTURES[arch])


def _lora_tensors(model: PeftModel, base: _Base) -> tuple[float, list[tuple[str, Weights]]]:
    """alpha for llama.cpp, and the (gguf name, float32 array) pairs in a stable order."""
    from peft import LoraConfig, get_peft_model_state_dict

    config = model.active_peft_config
    if not isinstance(config, LoraConfig):
        raise ExportError(f"{type(config).__name__} has no llama.cpp adapter form: train "
                          "with plain LoRA")
    for flag, what in ((getattr(config, "use_dora", False), "DoRA"),
                       (config.alpha_pattern, "per-module alpha (alpha_pattern)"),
                       (config.rank_pattern, "per-module rank (rank_pattern)"),
                       (config.bias != "none", f"bias={config.bias!r}")):
        if flag:
            raise ExportError(f"{what} has no llama.cpp adapter form: train with plain LoRA")
    # llama.cpp scales by alpha / r; rsLoRA scales by alpha / sqrt(r).
    alpha = config.lora_alpha * (math.sqrt(config.r) if config.use_rslora else 1.0)

    pairs: dict[tuple[int, str], dict[str, Weights]] = {}
    for key, value in get_peft_model_state_dict(model).items():
        match = _LORA_KEY.search(key)
        if match is None:
            raise ExportError(f"{key}: only LoRA on the attention and MLP projections can "
                              "be written for llama.cpp (not embeddings or other modules)")
        layer, module, part = int(match[1]), match[2], match[3]
        if layer >= base.n_layer:
            raise ExportError(f"{key}: layer {layer} is beyond the base model's "
                              f"{base.n_layer}-layer stack; export against the GGUF of the "
                              "model you trained")
        pairs.setdefault((layer, module), {})[part] = value.detach().float().cpu().numpy()
    if not pairs:
        raise ExportError("the model has no LoRA weights to export")

    tensors = []
    for (layer, module), ab in sorted(pairs.items()):
        lora_a, lora_b = ab["A"], ab["B"]
        if base.permute_qk and module in ("q_proj", "k_proj"):
            heads = base.n_head if module == "q_proj" else base.n_head_kv
            lora_b = permute_rows(lora_b, heads)
        name = f"blk.{layer}.{TENSOR_NAMES[module]}.weight"
        tensors += [(name + ".lora_a", lora_a), (name + ".lora_b", lora_b)]
    return float(alpha), tensors


def permute_rows(weights: Weights, n_head: int) -> Weights:
    """llama.cpp's q/k row order: within each head, interleave the two rotary halves.

    The same reshape as ``LlamaModel.permute`` in llama.cpp's convert_hf_to_gguf.py.
    """
    rows = weights.shape[0]
    if rows % (2 * n_head):
        raise ExportError(f"{rows} rows cannot be split into {n_head} heads of rotary pairs")
    return (weights.reshape(n_head, 2, rows // n_head // 2, *weights.shape[1:])
            .swapaxes(1, 2).reshape(weights.shape))
