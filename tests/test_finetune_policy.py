"""The trainable policy on a real model: SmolLM2-135M loaded from its GGUF, on the CPU."""

from __future__ import annotations

import threading

import pytest

from deskmate.app.llm.base import (
    ChatMessage,
    ChatModel,
    Delta,
    Finished,
    GenerationParams,
    ModelError,
    complete,
)

QUESTION = [ChatMessage("user", "What is the capital of France?")]
CONVERSATION = [
    ChatMessage("system", "You are terse."),
    ChatMessage("user", "List two colours."),
    ChatMessage("assistant", "Red and blue."),
    ChatMessage("user", "Another one, with an é?"),
]


@pytest.fixture
def policy(tiny_policy):
    return tiny_policy


@pytest.fixture
def chat(policy):
    from deskmate.finetune.policy import PolicyChatModel

    return PolicyChatModel(policy)


def test_config_defaults_and_cpu_refuses_4bit():
    from deskmate.finetune.policy import PolicyConfig, load_policy

    config = PolicyConfig()
    assert (config.lora_rank, config.lora_alpha, config.lora_dropout) == (16, 32, 0.0)
    assert config.target_modules == ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj",
                                     "up_proj", "down_proj")
    with pytest.raises(ModelError, match="4-bit loading needs a CUDA GPU"):
        load_policy("any", PolicyConfig(device="cpu", load_in_4bit=True))
    with pytest.raises(ModelError, match="unknown device"):
        load_policy("any", PolicyConfig(device="tpu"))


def test_missing_gguf_is_named(tmp_path):
    from deskmate.finetune.policy import PolicyConfig, load_policy

    with pytest.raises(ModelError, match=r"model file not found: .*missing\.gguf"):
        load_policy(tmp_path / "missing.gguf", PolicyConfig(device="cpu"))


def test_sample_token_greedy_temperature_and_top_p():
    import torch

    from deskmate.finetune._sampling import sample_token

    logits = torch.tensor([0.0, 3.0, 2.9, -5.0])
    rng = torch.Generator().manual_seed(0)
    assert sample_token(logits, 0.0, 1.0, rng) == 1
    # top_p below the best token's mass leaves only that token.
    assert {sample_token(logits, 1.0, 0.3, rng) for _ in range(50)} == {1}
    # Without top-p both likely tokens come up, the unlikely ones (almost) never.
    drawn = [sample_token(logits, 1.0, 1.0, rng) for _ in range(200)]
    assert {1, 2} <= set(drawn) and drawn.count(3) == 0


@pytest.mark.slow
def test_detokenizer_streams_whole_characters(policy):
    from deskmate.finetune._sampling import Detokenizer

    text = "naïve café — 東京 🙂 done"
    ids = policy.tokenizer(text, add_special_tokens=False)["input_ids"]
    detok = Detokenizer(policy.tokenizer)
    pieces = [detok.add(i) for i in ids] + [detok.flush()]
    assert "".join(pieces) == text
    assert not any("\ufffd" in p for p in pieces)


@pytest.mark.slow
def test_policy_is_lora_on_every_projection(policy):
    assert policy.device == "cpu" and policy.backend == "peft"
    trainable = [n for n, p in policy.model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    layers = policy.model.config.num_hidden_layers
    assert len(trainable) == 2 * 7 * layers  # A and B on 7 projections per layer
    assert policy.eos_ids == {policy.tokenizer.convert_tokens_to_ids("<|im_end|>")}


@pytest.mark.slow
def test_prompt_is_what_llamacpp_renders(policy, tiny_model):
    """Same template, same token ids as llama.cpp gets from the GGUF."""
    for messages in (QUESTION, CONVERSATION):
        text = policy.render(messages)
        assert text == tiny_model.render(messages)
        assert text.endswith("<|im_start|>assistant\n")
        assert policy.encode(messages) == tiny_model.tokenize(text)
    tools = [{"type": "function", "function": {"name": "t__echo", "description": "Echo.",
                                               "parameters": {"type": "object"}}}]
    text = policy.render(QUESTION, tools)
    assert text == tiny_model.render(QUESTION, tools) and '"name": "t__echo"' in text


@pytest.mark.slow
def test_stream_follows_the_protocol_and_records_ids(policy, chat):
    assert isinstance(chat, ChatModel)
    events = list(chat.stream(QUESTION, GenerationParams(max_tokens=40, temperature=0)))
    assert all(isinstance(e, Delta) for e in events[:-1]) and len(events) > 2
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.finish_reason == "stop"
    assert "".join(e.text for e in events[:-1]) == finished.text
    assert "Paris" in finished.text
    record = chat.last_call
    assert list(record.prompt_ids) == policy.encode(QUESTION)
    # The end-of-turn token is the policy's own choice: it is part of the completion.
    assert record.completion_ids[-1] in policy.eos_ids
    decoded = policy.tokenizer.decode(list(record.completion_ids), skip_special_tokens=True)
    assert decoded == record.text == finished.text
    usage = finished.usage
    assert usage.prompt_tokens == len(record.prompt_ids)
    assert usage.completion_tokens == len(record.completion_ids)
    assert chat.take_records() == [record] and chat.records == []


@pytest.mark.slow
def test_greedy_matches_transformers_generate(policy, chat):
    import torch

    params = GenerationParams(max_tokens=12, temperature=0)
    finished = complete(chat, CONVERSATION, params)
    prompt = policy.encode(CONVERSATION)
    with torch.no_grad():
        out = policy.model.generate(input_ids=torch.tensor([prompt]), do_sample=False,
                                    max_new_tokens=12, attention_mask=torch.ones(1, len(prompt)))
    expected = out[0, len(prompt):].tolist()
    assert list(chat.last_call.completion_ids) == expected
    assert finished.text == policy.tokenizer.decode(expected, skip_special_tokens=True)


@pytest.mark.slow
def test_sampling_is_seeded_and_logprobs_match_the_loss(policy, chat):
    from deskmate.finetune.logprobs import sequence_logprobs

    params = GenerationParams(max_tokens=8, temperature=1.0, top_p=0.95, seed=7)
    first = complete(chat, CONVERSATION, params).text
    again = complete(chat, CONVERSATION, params).text
    other = [complete(chat, CONVERSATION, GenerationParams(
        max_tokens=8, temperature=1.0, seed=s)).text for s in (1,)]
    assert first == again
    assert len({first, *other}) > 1  # sampling, not greedy
    record = chat.records[0]
    recomputed = sequence_logprobs(policy, record.prompt_ids, record.completion_ids)
    assert recomputed.shape == (len(record.completion_ids),)
    assert recomputed.detach().tolist() == pytest.approx(list(record.logprobs), abs=1e-4)


@pytest.mark.slow
def test_stop_strings_max_tokens_and_cancel(policy, chat):
    stopped = complete(chat, QUESTION, GenerationParams(temperature=0, stop=(" Paris",)))
    assert stopped.finish_reason == "stop" and stopped.text == "The capital of France is"
    ids = chat.last_call.completion_ids
    assert policy.tokenizer.decode(list(ids)).startswith(stopped.text + " Paris")

    short = complete(chat, QUESTION, GenerationParams(temperature=0, max_tokens=3))
    assert short.finish_reason == "length" and len(chat.last_call.completion_ids) == 3

    cancel = threading.Event()
    texts = []
    for event in chat.stream(QUESTION, GenerationParams(temperature=0), cancel):
        if isinstance(event, Delta):
            texts.append(event.text)
            cancel.set()
    assert event.finish_reason == "cancelled" and event.text == "".join(texts)
    assert 1 <= len(chat.last_call.completion_ids) <= 2


@pytest.mark.slow
def test_refuses_grammars_and_overlong_prompts(chat):
    with pytest.raises(ModelError, match="without grammars"):
        list(chat.stream(QUESTION, GenerationParams(grammar='root ::= "a"')))
    with pytest.raises(ModelError, match="max_seq_len"):
        list(chat.stream([ChatMessage("user", "word " * 600)]))


@pytest.mark.slow
def test_sequence_logprobs_by_hand_and_batched(policy):
    import torch

    from deskmate.finetune.logprobs import batch_logprobs, sequence_logprobs

    tok = policy.tokenizer
    prompt = policy.encode(QUESTION)
    completion = tok("The capital of France is Paris.", add_special_tokens=False)["input_ids"]
    got = sequence_logprobs(policy, prompt, completion)
    assert got.requires_grad  # the loss differentiates through it
    with torch.no_grad():
        logits = policy.model(input_ids=torch.tensor([prompt + completion])).logits[0]
    logp = torch.log_softmax(logits.float(), -1)
    by_hand = [logp[len(prompt) - 1 + i, t].item() for i, t in enumerate(completion)]
    assert got.tolist() == pytest.approx(by_hand, abs=1e-4)
    assert max(by_hand) > -0.5  # the greedy answer is likely under the model

    other_prompt = policy.encode(CONVERSATION)
    other = tok(" Green.", add_special_tokens=False)["input_ids"]
    batch, mask = batch_logprobs(policy, [prompt, other_prompt], [completion, other])
    assert batch.shape == mask.shape == (2, len(completion))
    assert mask[1].tolist() == [1.0] * len(other) + [0.0] * (len(completion) - len(other))
    assert batch[0].tolist() == pytest.approx(by_hand, abs=1e-4)
    alone = sequence_logprobs(policy, other_prompt, other)
    assert batch[1, : len(other)].tolist() == pytest.approx(alone.tolist(), abs=1e-4)
    assert batch[1, len(other):].abs().sum().item() == 0.0


@pytest.mark.slow
def test_rollout_through_the_agent_loop(policy, chat):
    from deskmate.app.agent import events as ev
    from deskmate.app.agent.factory import build_agent
    from deskmate.app.agent.loop import AgentLimits

    runtime = build_agent(chat, mode="eager",
                          limits=AgentLimits(max_steps=2, max_tokens=24, temperature=0.7))
    events = list(runtime.agent.run("Say hello in French."))
    runtime.close()
    replies = [e for e in events if isinstance(e, ev.ModelMessage)]
    records = chat.take_records()
    assert replies and len(records) == len(replies)
    for reply, record in zip(replies, records, strict=True):
        assert reply.text == record.text
    # The system prompt and the task are prompt ids, never completion ids.
    assert list(records[0].prompt_ids) == policy.encode(runtime.agent.transcript[:2])


def _head_rows(policy):
    """Rows the vocabulary projection computes, call by call (a forward hook)."""
    rows: list[int] = []
    head = policy.model.get_output_embeddings()
    handle = head.register_forward_hook(lambda m, args, out: rows.append(
        args[0].shape[:-1].numel()))
    return rows, handle


@pytest.mark.slow
def test_prefill_and_decode_project_only_the_last_position(policy, chat):
    rows, handle = _head_rows(policy)
    try:
        complete(chat, CONVERSATION, GenerationParams(max_tokens=5, temperature=0))
    finally:
        handle.remove()
    # One row per forward: the prompt's other positions never reach the vocabulary.
    assert rows == [1] * len(chat.last_call.completion_ids)


@pytest.mark.slow
def test_logprobs_project_only_completion_positions(policy):
    import torch

    from deskmate.finetune.logprobs import batch_logprobs

    tok = policy.tokenizer
    prompts = [policy.encode(QUESTION), policy.encode(CONVERSATION) + [42] * 150]
    completions = [tok(" Paris.", add_special_tokens=False)["input_ids"],
                   tok(" Green, and a long tail.", add_special_tokens=False)["input_ids"]]
    rows, handle = _head_rows(policy)
    try:
        with torch.no_grad():
            batch_logprobs(policy, prompts, completions)
    finally:
        handle.remove()
    assert sum(rows) == sum(len(c) for c in completions)


@pytest.mark.slow
def test_the_loss_takes_log_probs_at_the_sampling_temperature(policy, chat):
    """Rollouts sample at T with top-p 1: the loss must score tokens under that same
    distribution (at T = 1 it scored them under another one, off-policy)."""
    from deskmate.finetune.grpo import GRPOConfig
    from deskmate.finetune.train import loss_logprobs

    complete(chat, CONVERSATION, GenerationParams(max_tokens=6, temperature=0.6, top_p=1.0,
                                                  seed=3))
    record = chat.last_call
    logprobs, _ = loss_logprobs(policy, GRPOConfig(temperature=0.6))
    got, _ = logprobs([record.prompt_ids], [record.completion_ids])
    assert got[0].detach().tolist() == pytest.approx(list(record.logprobs), abs=1e-4)
    at_one, _ = loss_logprobs(policy, GRPOConfig(temperature=1.0))
    assert at_one([record.prompt_ids], [record.completion_ids])[0][0].tolist() != \
        pytest.approx(list(record.logprobs), abs=1e-3)
