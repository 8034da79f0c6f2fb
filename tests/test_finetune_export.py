"""LoRA → GGUF adapter: the layout llama.cpp reads, checked against llama.cpp itself.

The fast tests use a tiny random Llama and a header-only base GGUF; the slow ones export
a LoRA of SmolLM2 (loaded from its Q4 GGUF) and compare how the adapter moves llama.cpp's
logits with how it moves the PyTorch model's.
"""

from __future__ import annotations

import numpy as np
import pytest

PROMPT = "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n"


def write_base(path, arch="llama", *, layers=2, heads=4, kv_heads=2):
    """A GGUF header with the metadata the exporter reads (no tensors needed)."""
    import gguf

    writer = gguf.GGUFWriter(str(path), arch)
    writer.add_block_count(layers)
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def tiny_peft(**lora):
    """A random 2-layer Llama (4 heads of 16, 2 kv heads) with LoRA on every projection."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, vocab_size=128)
    options = dict(r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj",
                                                      "gate_proj", "up_proj", "down_proj"])
    model = get_peft_model(LlamaForCausalLM(config), LoraConfig(**{**options, **lora}))
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                param.normal_()
    return model


def read_adapter(path):
    import gguf

    reader = gguf.GGUFReader(str(path))
    fields = {name: field.contents() for name, field in reader.fields.items()}
    tensors = {t.name: np.array(t.data) for t in reader.tensors}
    return fields, tensors


def test_adapter_layout(tmp_path):
    from deskmate.finetune.export import export_gguf_adapter, permute_rows

    model = tiny_peft()
    out = export_gguf_adapter(model, tmp_path / "a.gguf", base_gguf=write_base(tmp_path / "b"))
    assert out == tmp_path / "a.gguf"
    fields, tensors = read_adapter(out)
    assert fields["general.architecture"] == "llama"
    assert fields["general.type"] == "adapter" and fields["adapter.type"] == "lora"
    assert fields["adapter.lora.alpha"] == 8.0
    names = {f"blk.{n}.{t}.weight.lora_{ab}" for n in (0, 1)
             for t in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up",
                       "ffn_down") for ab in "ab"}
    assert set(tensors) == names
    layer = model.base_model.model.model.layers[1]
    a, b = (layer.mlp.down_proj.lora_A["default"].weight.detach().numpy(),
            layer.mlp.down_proj.lora_B["default"].weight.detach().numpy())
    assert tensors["blk.1.ffn_down.weight.lora_a"].shape == (4, 96)  # [r, in]
    assert tensors["blk.1.ffn_down.weight.lora_b"].shape == (64, 4)  # [out, r]
    np.testing.assert_array_equal(tensors["blk.1.ffn_down.weight.lora_a"], a)
    np.testing.assert_array_equal(tensors["blk.1.ffn_down.weight.lora_b"], b)
    # q and k B rows are reordered per head (4 query heads, 2 kv heads); A is not.
    q_b = layer.self_attn.q_proj.lora_B["default"].weight.detach().numpy()
    k_b = layer.self_attn.k_proj.lora_B["default"].weight.detach().numpy()
    np.testing.assert_array_equal(tensors["blk.1.attn_q.weight.lora_b"], permute_rows(q_b, 4))
    np.testing.assert_array_equal(tensors["blk.1.attn_k.weight.lora_b"], permute_rows(k_b, 2))
    assert not np.array_equal(permute_rows(q_b, 4), q_b)
    # The PEFT folder is kept beside the adapter.
    assert (tmp_path / "a-peft" / "adapter_config.json").exists()
    assert (tmp_path / "a-peft" / "adapter_model.safetensors").exists()


def test_permute_rows_interleaves_rotary_halves_per_head():
    from deskmate.finetune.export import permute_rows

    # 2 heads of 4 dims: HF keeps each head's halves apart (0 1 | 2 3), llama.cpp pairs them.
    rows = np.arange(8)[:, None]
    assert permute_rows(rows, 2)[:, 0].tolist() == [0, 2, 1, 3, 4, 6, 5, 7]


def test_qwen2_keeps_rows_and_rslora_alpha(tmp_path):
    from deskmate.finetune.export import export_gguf_adapter

    model = tiny_peft(use_rslora=True)
    out = export_gguf_adapter(model, tmp_path / "q.gguf",
                              base_gguf=write_base(tmp_path / "b", "qwen2"))
    fields, tensors = read_adapter(out)
    assert fields["general.architecture"] == "qwen2"
    # rsLoRA scales by alpha/√r, llama.cpp by alpha/r: written as alpha·√r.
    assert fields["adapter.lora.alpha"] == pytest.approx(8.0 * 2)
    q_b = model.base_model.model.model.layers[0].self_attn.q_proj.lora_B["default"].weight
    np.testing.assert_array_equal(tensors["blk.0.attn_q.weight.lora_b"], q_b.detach().numpy())


def test_unsupported_architecture_is_named(tmp_path):
    from deskmate.finetune.export import ExportError, export_gguf_adapter

    with pytest.raises(ExportError, match="architecture 'gpt2'"):
        export_gguf_adapter(tiny_peft(), tmp_path / "a.gguf",
                            base_gguf=write_base(tmp_path / "b", "gpt2"))
    assert not (tmp_path / "a.gguf").exists() and not (tmp_path / "a-peft").exists()


def test_refuses_to_overwrite(tmp_path):
    from deskmate.finetune.export import export_gguf_adapter

    model, base = tiny_peft(), write_base(tmp_path / "b")
    out = tmp_path / "a.gguf"
    out.write_bytes(b"precious")
    with pytest.raises(FileExistsError, match="already exists"):
        export_gguf_adapter(model, out, base_gguf=base)
    assert out.read_bytes() == b"precious"
    out.unlink()
    (tmp_path / "a-peft").mkdir()
    with pytest.raises(FileExistsError, match="a-peft"):
        export_gguf_adapter(model, out, base_gguf=base)
    assert export_gguf_adapter(model, out, base_gguf=base, overwrite=True).stat().st_size > 0


def test_refuses_what_llamacpp_cannot_apply(tmp_path):
    from deskmate.finetune.export import ExportError, export_gguf_adapter

    base = write_base(tmp_path / "b")
    with pytest.raises(ExportError, match="DoRA"):
        export_gguf_adapter(tiny_peft(use_dora=True), tmp_path / "d.gguf", base_gguf=base)
    with pytest.raises(ExportError, match="embed_tokens"):
        export_gguf_adapter(tiny_peft(target_modules=["q_proj", "embed_tokens"]),
                            tmp_path / "e.gguf", base_gguf=base)
    with pytest.raises(ExportError, match="beyond the base model's 1-layer"):
        export_gguf_adapter(tiny_peft(), tmp_path / "l.gguf",
                            base_gguf=write_base(tmp_path / "one", layers=1))


# ---------------------------------------------------------------- against llama.cpp


@pytest.fixture
def policy(tiny_policy):
    """The session's policy; the LoRA a test randomizes is zero again after it."""
    yield tiny_policy
    randomize_lora(tiny_policy.model, std=0.0)


@pytest.fixture(scope="module")
def llama_logits(tiny_model_path):
    """logits(adapter or None) -> llama.cpp's logits at every prompt position."""
    from deskmate.app.llm.llamacpp_open import open_llama

    def run(adapter=None):
        llm = open_llama(str(tiny_model_path), n_ctx=256, n_threads=2,
                              logits_all=True, lora_path=str(adapter) if adapter else None,
                              verbose=False)
        try:
            tokens = llm.tokenize(PROMPT.encode(), add_bos=False, special=True)
            llm.eval(tokens)
            return np.array(llm.scores[: len(tokens)]), tokens
        finally:
            llm.close()

    base, tokens = run()

    def logits(adapter=None):
        return run(adapter)[0] if adapter else base

    return logits, tokens


def randomize_lora(model, std, only=(), seed=0):
    """A clearly non-zero adapter: B ~ N(0, std) on ``only`` (all if empty), else 0."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "lora_B" in name:
                keep = not only or any(f".{m}." in name for m in only)
                param.copy_(torch.randn(param.shape, generator=gen) * std if keep else 0)


def torch_delta(policy, tokens):
    import torch

    ids = torch.tensor([tokens])
    with torch.no_grad():
        tuned = policy.model(input_ids=ids).logits[0]
        with policy.model.disable_adapter():
            base = policy.model(input_ids=ids).logits[0]
    return (tuned - base).float().numpy()


def correlation(a, b):
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


@pytest.mark.slow
def test_permutation_is_the_one_in_the_base_gguf(policy, tiny_model_path):
    """transformers un-permuted q/k when it read the GGUF; ours must permute them back."""
    import gguf

    from deskmate.finetune.export import permute_rows

    reader = gguf.GGUFReader(str(tiny_model_path))
    stored = {t.name: t for t in reader.tensors}
    attn = policy.model.base_model.model.model.layers[3].self_attn
    for name, module, heads in (("attn_q", attn.q_proj, 9), ("attn_k", attn.k_proj, 3)):
        hf = module.base_layer.weight.detach().numpy()
        tensor = stored[f"blk.3.{name}.weight"]
        in_gguf = gguf.dequantize(tensor.data, tensor.tensor_type).reshape(hf.shape)
        assert not np.allclose(hf, in_gguf)
        np.testing.assert_array_equal(permute_rows(hf, heads), in_gguf)


@pytest.mark.slow
def test_llamacpp_moves_logits_like_pytorch(policy, llama_logits, tiny_model_path, tmp_path):
    from deskmate.app.llm.base import ChatMessage, GenerationParams, complete
    from deskmate.app.llm.llamacpp import LlamaCppModel
    from deskmate.finetune.export import export_gguf_adapter

    logits, tokens = llama_logits
    randomize_lora(policy.model, std=0.05)
    adapter = export_gguf_adapter(policy.model, tmp_path / "all.gguf",
                                  base_gguf=tiny_model_path)
    expected = torch_delta(policy, tokens)
    got = logits(adapter) - logits()
    corr = correlation(expected, got)
    print(f"logit-delta correlation, all projections: {corr:.3f}")
    assert corr >= 0.9
    assert np.abs(got).mean() > 0.5  # a real effect, not quantization noise

    # The app's own loader accepts it on the Q4 base, and it changes what the model says.
    question = [ChatMessage("user", "What is the capital of France?")]
    params = GenerationParams(max_tokens=12, temperature=0)
    tuned = LlamaCppModel(tiny_model_path, context=256, adapter=adapter, seed=0)
    try:
        assert tuned.info.adapter == str(adapter)
        text = complete(tuned, question, params).text
    finally:
        tuned.close()
    plain = LlamaCppModel(tiny_model_path, context=256, seed=0)
    try:
        assert complete(plain, question, params).text != text
    finally:
        plain.close()


@pytest.mark.slow
def test_qk_only_adapter_needs_the_permutation(policy, llama_logits, tiny_model_path,
                                               tmp_path, monkeypatch):
    from deskmate.finetune import export

    logits, tokens = llama_logits
    randomize_lora(policy.model, std=0.2, only=("q_proj", "k_proj"), seed=1)
    expected = torch_delta(policy, tokens)
    adapter = export.export_gguf_adapter(policy.model, tmp_path / "qk.gguf",
                                         base_gguf=tiny_model_path)
    corr = correlation(expected, logits(adapter) - logits())
    monkeypatch.setitem(export.ARCHITECTURES, "llama", False)
    wrong = export.export_gguf_adapter(policy.model, tmp_path / "qk-unpermuted.gguf",
                                       base_gguf=tiny_model_path)
    corr_wrong = correlation(expected, logits(wrong) - logits())
    print(f"logit-delta correlation, q/k only: {corr:.3f} (unpermuted: {corr_wrong:.3f})")
    assert corr >= 0.9
    assert corr_wrong < corr - 0.3
