"""The llama.cpp rollout engine on the tiny model: what it samples and the log-probs it
records, against llama.cpp's own generation and the trainer's log-probs."""

from __future__ import annotations

import pytest

from deskmate.app.llm.base import ChatMessage, GenerationParams, complete

pytestmark = pytest.mark.slow

QUESTION = [ChatMessage("user", "What is the capital of France?")]
CONVERSATION = [
    ChatMessage("system", "You are terse."),
    ChatMessage("user", "List two colours."),
    ChatMessage("assistant", "Red and blue."),
    ChatMessage("user", "Another one?"),
]


@pytest.fixture(scope="module")
def engine(tiny_policy, tiny_model_path):
    from deskmate.finetune.engine import LlamaCppEngine

    made = LlamaCppEngine(tiny_policy, tiny_model_path, context=512, threads=2)
    yield made
    made.close()


def test_greedy_is_llamacpps_answer_and_the_prefix_is_reused(engine, tiny_model):
    finished = complete(engine, QUESTION, GenerationParams(max_tokens=16, temperature=0))
    expected = complete(tiny_model, QUESTION, GenerationParams(max_tokens=16, temperature=0))
    # llama.cpp's Q4_1 answer ("L'Étoile, …"), not the dequantized torch model's
    # ("The capital of France is Paris."): the mismatch engine rollouts remove.
    assert finished.text == expected.text
    # The next call of a conversation starts from the cached prefix.
    follow_up = [*QUESTION, ChatMessage("assistant", finished.text),
                 ChatMessage("user", "And of Spain?")]
    again = complete(engine, follow_up, GenerationParams(max_tokens=8, temperature=0))
    assert again.usage.reused_tokens >= len(engine.policy.encode(QUESTION)) - 1
    engine.take_records()


def test_sampling_is_seeded_and_its_logprobs_are_the_trainers_up_to_quantization(
        engine, tiny_policy):
    import torch

    from deskmate.finetune.logprobs import sequence_logprobs

    params = GenerationParams(max_tokens=12, temperature=0.8, top_p=1.0, seed=5)
    first = complete(engine, CONVERSATION, params).text
    assert complete(engine, CONVERSATION, params).text == first
    record = engine.take_records()[0]
    with torch.no_grad():
        trainer = sequence_logprobs(tiny_policy, record.prompt_ids, record.completion_ids,
                                    temperature=0.8)
    gap = (trainer - torch.tensor(record.logprobs)).abs()
    # Same weights (transformers dequantizes the same Q4_1 file); llama.cpp computes with
    # quantized activations: close, not equal — what the importance weights correct.
    print("engine vs trainer log-prob gap", gap.tolist())
    assert 0 < gap.mean().item() < 0.5, gap.tolist()
    assert engine.off_policy


def test_an_adapter_changes_what_it_samples(engine, tiny_model_path, tmp_path):
    from lora import write_random_lora

    from deskmate.app.llm.gguf_file import inspect_gguf

    before = complete(engine, QUESTION, GenerationParams(max_tokens=8, temperature=0)).text
    adapter = write_random_lora(tmp_path / "a.gguf", inspect_gguf(tiny_model_path))
    engine.load_adapter(adapter)
    try:
        after = complete(engine, QUESTION, GenerationParams(max_tokens=8, temperature=0)).text
    finally:
        engine.load_adapter(None)
    assert after != before
    engine.take_records()
