"""The CUDA path's code on the CPU: the policy loaded through ``_load_unsloth`` with a
double of Unsloth that enforces its contracts (tests/unsloth_double.py), then sampled,
trained one GRPO step and exported, as a GPU run would."""

from __future__ import annotations

import dataclasses

import pytest
from unsloth_double import checkpointing_on, install

from deskmate.app.llm.base import ChatMessage, GenerationParams, complete

pytestmark = pytest.mark.slow

QUESTION = [ChatMessage("user", "What is the capital of France?")]


@pytest.fixture(scope="module")
def unsloth(tiny_model_path):
    """(policy, the double's class): the tiny model through the CUDA loading path."""
    from deskmate.finetune import policy as P

    with pytest.MonkeyPatch.context() as mp:
        fast = install(mp)
        loaded = P._load_unsloth(str(tiny_model_path), P.PolicyConfig(max_seq_len=512))
        # Everything but the device is what a GPU run gets; the tensors stay on the CPU.
        yield dataclasses.replace(loaded, device="cpu"), fast


def test_loads_as_unsloth_with_checkpointing(unsloth):
    policy, _ = unsloth
    assert policy.backend == "unsloth" and policy.model.training
    assert checkpointing_on(policy.model)
    trainable = [n for n, p in policy.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)


def test_decoding_passes_position_ids_and_goes_back_to_training(unsloth):
    from deskmate.finetune.policy import PolicyChatModel

    policy, fast = unsloth
    model = policy.model.get_base_model()
    model.calls.clear()
    before = fast.training_calls
    chat = PolicyChatModel(policy)
    finished = complete(chat, QUESTION, GenerationParams(max_tokens=12, temperature=0))
    # The double raises on a decode step without position_ids, as Unsloth does; wrong
    # positions would change the greedy answer (RoPE reads them).
    assert finished.text == "The capital of France is Paris."
    assert model.calls.count("decode") == len(chat.last_call.completion_ids) - 1
    # for_inference turned checkpointing off; for_training (not train()) brings it back.
    assert fast.training_calls == before + 1
    assert policy.model.training and checkpointing_on(policy.model)


def test_right_padding_survives_the_dropped_mask_and_left_padding_would_not(unsloth):
    import torch

    from deskmate.finetune.logprobs import batch_logprobs

    policy, _ = unsloth
    tok = policy.tokenizer
    prompts = [policy.encode(QUESTION), policy.encode([ChatMessage("user", "Hi")])]
    completions = [tok(" Paris.", add_special_tokens=False)["input_ids"],
                   tok(" Hello there, friend.", add_special_tokens=False)["input_ids"]]
    policy.model.train()  # Unsloth drops the attention mask in this mode
    trained, mask = batch_logprobs(policy, prompts, completions)
    policy.model.eval()  # the mask is honoured here
    with torch.no_grad():
        honoured, _ = batch_logprobs(policy, prompts, completions)
    policy.model.train()
    assert torch.allclose(trained.detach() * mask, honoured * mask, atol=1e-4)

    # The double does bite: left-padding the shorter sequence changes its log-probs.
    seq = prompts[0] + completions[0]
    pad = [0] * 7
    with torch.no_grad():
        plain = policy.model(input_ids=torch.tensor([seq])).logits[0, -1]
        left = policy.model(input_ids=torch.tensor([pad + seq]),
                            attention_mask=torch.tensor([[0] * 7 + [1] * len(seq)])).logits[0, -1]
    assert not torch.allclose(plain, left, atol=1e-3)


def test_one_grpo_step_and_export(unsloth, tiny_model_path, tmp_path):
    import torch

    from deskmate.finetune.export import export_gguf_adapter
    from deskmate.finetune.grpo import GRPOConfig, Sample, Trainable, update
    from deskmate.finetune.logprobs import batch_logprobs
    from deskmate.finetune.policy import PolicyChatModel

    policy, _ = unsloth
    chat = PolicyChatModel(policy)
    for seed in (1, 2):
        complete(chat, QUESTION, GenerationParams(max_tokens=8, temperature=1.0, seed=seed))
    records = chat.take_records()
    batch = [Trainable(Sample(r.prompt_ids, r.completion_ids), a)
             for r, a in zip(records, (1.0, -1.0), strict=True)]
    params = [p for p in policy.model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in params]
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    stats = update(batch, lambda p, c: batch_logprobs(policy, p, c), params, optimizer,
                   GRPOConfig(micro_batch=1))
    assert stats.samples == 2 and stats.grad_norm > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, params, strict=True))
    try:
        out = export_gguf_adapter(policy.model, tmp_path / "adapter.gguf",
                                  base_gguf=tiny_model_path)
        from deskmate.app.llm.gguf_file import inspect_gguf

        assert inspect_gguf(out).file_type == "adapter"
    finally:
        with torch.no_grad():
            for p, b in zip(params, before, strict=True):
                p.copy_(b)


def test_an_fp16_gpu_trains_fp32_lora_with_a_loss_scaler(tiny_model_path, monkeypatch):
    """A T4 has no bf16: Unsloth loads in fp16, where unscaled gradients underflow."""
    import torch

    from deskmate.finetune import policy as P

    fast = install(monkeypatch)
    fast.gpu_dtype = torch.float16
    fp16 = P._load_unsloth(str(tiny_model_path), P.PolicyConfig(max_seq_len=512))
    assert fp16.fp16
    assert fp16.model.get_base_model().dtype == torch.float16
    # GradScaler unscales fp32 gradients only: the LoRA weights are fp32.
    assert {p.dtype for p in fp16.model.parameters() if p.requires_grad} == {torch.float32}


def test_a_training_step_samples_with_the_engine_by_default(unsloth, tiny_model_path,
                                                             tmp_path):
    """The default sampler on the CUDA path: llama.cpp with the adapter exported from the
    Unsloth model at the step, its log-probs weighting the update; the model is back in
    training mode (checkpointing on) for the update and after it."""
    import torch

    from deskmate.finetune.judge import Judge
    from deskmate.finetune.progress import Sampler, Step
    from deskmate.finetune.rollout import RolloutSettings
    from deskmate.finetune.smoke import CONFIG, tiny_tasks
    from deskmate.finetune.train import train

    policy, _ = unsloth
    config = dataclasses.replace(CONFIG, steps=1, checkpoint_every=100)
    assert config.rollout_engine == "auto"
    params = [p for p in policy.model.parameters() if p.requires_grad]
    before = [p.detach().clone() for p in params]
    events = []
    try:
        train(policy, tiny_tasks(), config, Judge(None), run_dir=tmp_path,
              settings=RolloutSettings.of("eager", config), emit=events.append,
              serving_gguf=tiny_model_path)
        changed = any(not torch.equal(a, b) for a, b in zip(before, params, strict=True))
    finally:
        with torch.no_grad():
            for p, b in zip(params, before, strict=True):
                p.copy_(b)
    sampler = next(e for e in events if isinstance(e, Sampler))
    assert sampler.engine == "llamacpp" and tiny_model_path.name in sampler.reason
    assert (tmp_path / "engine" / "adapter.gguf").is_file()  # exported for the engine
    step = next(e for e in events if isinstance(e, Step))
    assert step.tokens_generated > 0 and step.tokens_trained > 0 and changed
    assert policy.model.training and checkpointing_on(policy.model)
