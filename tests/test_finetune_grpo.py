"""GRPO math against hand-computed values; update, accumulation and checkpoints on a toy
model whose log-probabilities are a real differentiable function."""

from __future__ import annotations

import json
import math

import pytest

torch = pytest.importorskip("torch")

from deskmate.finetune.checkpoint import (  # noqa: E402
    TrainState,
    list_checkpoints,
    load_checkpoint,
    save_checkpoint,
)
from deskmate.finetune.grpo import (  # noqa: E402
    GRPOConfig,
    Sample,
    Trainable,
    group_advantages,
    pick_tasks,
    token_losses,
    trainables,
    update,
)


def test_advantages_hand_computed():
    assert group_advantages([1.0, 0.0, 0.0, 1.0]) == [1.0, -1.0, -1.0, 1.0]
    assert group_advantages([3.0, 1.0]) == [1.0, -1.0]
    # mean 2.5, population std sqrt(1.25)
    got = group_advantages([1.0, 2.0, 3.0, 4.0])
    s = math.sqrt(1.25)
    assert got == pytest.approx([-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s])
    assert sum(got) == pytest.approx(0.0)


def test_zero_variance_and_single_groups_carry_no_signal():
    assert group_advantages([0.7, 0.7, 0.7]) is None
    assert group_advantages([1.0]) is None


def test_token_loss_clipping_hand_computed():
    new = torch.log(torch.tensor([0.5, 0.2, 0.4]))
    old = torch.log(torch.tensor([0.4, 0.4, 0.4]))
    # ratios 1.25, 0.5, 1.0
    loss, kl, clipped = token_losses(new, old, advantage=1.0, clip_eps=0.2)
    # A > 0: min(1.25, 1.2) = 1.2 (clipped); min(0.5, 0.8) = 0.5; 1.0
    assert loss.tolist() == pytest.approx([-1.2, -0.5, -1.0])
    assert clipped.tolist() == [True, False, False]
    assert kl.tolist() == [0.0, 0.0, 0.0]
    loss, _, clipped = token_losses(new, old, advantage=-2.0, clip_eps=0.2)
    # A < 0: min(-2.5, -2.4) = -2.5 (not clipped); min(-1.0, -1.6) = -1.6 (clipped)
    assert loss.tolist() == pytest.approx([2.5, 1.6, 2.0])
    assert clipped.tolist() == [False, True, False]


def test_kl_penalty_k3_hand_computed():
    new = torch.log(torch.tensor([0.25, 0.5]))
    ref = torch.log(torch.tensor([0.5, 0.5]))
    loss, kl, _ = token_losses(new, new.detach(), advantage=0.0, clip_eps=0.2,
                               ref_logp=ref, kl_beta=0.1)
    d = math.log(2.0)
    assert kl.tolist() == pytest.approx([math.exp(d) - d - 1, 0.0])
    assert loss.tolist() == pytest.approx([0.1 * (math.exp(d) - d - 1), 0.0])


def test_trainables_drop_flat_groups_and_keep_every_call():
    a = [Sample((1, 2), (3,)), Sample((1, 2, 3, 9), (4, 5))]  # two model calls
    b = [Sample((1, 2), (6,))]
    flat = [Sample((7,), (8,))]
    out = trainables([["a", "b"], ["f1", "f2"]], [[1.0, 0.0], [0.5, 0.5]],
                     {"a": a, "b": b, "f1": flat, "f2": flat}.get)
    assert [(t.sample, t.advantage) for t in out] == [(a[0], 1.0), (a[1], 1.0), (b[0], -1.0)]


def test_pick_tasks_covers_every_task_per_epoch_and_is_seeded():
    config = GRPOConfig(tasks_per_step=2, seed=3)
    ids = list("abcde")
    first_epoch = [t for step in (1, 2) for t in pick_tasks(ids, config, step)] + \
        pick_tasks(ids, config, 3)[:1]
    assert sorted(first_epoch) == ids
    assert pick_tasks(ids, config, 4) == pick_tasks(ids, GRPOConfig(tasks_per_step=2, seed=3), 4)
    assert pick_tasks(ids, config, 1) != pick_tasks(ids, GRPOConfig(tasks_per_step=2, seed=4), 1)


class Bigram(torch.nn.Module):
    """log p(token | previous token): a table of logits, trained like a policy."""

    def __init__(self, vocab: int = 6) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.logits = torch.nn.Parameter(torch.randn(vocab, vocab) * 0.1)

    def one(self, prompt, completion):
        ids = list(prompt) + list(completion)
        prev = torch.tensor(ids[len(prompt) - 1 : -1])
        nxt = torch.tensor(list(completion))
        return torch.log_softmax(self.logits[prev], dim=-1).gather(1, nxt[:, None])[:, 0]

    def logprobs(self, prompts, completions):
        """Right-padded batch, like policy.batch_logprobs; padding is garbage on purpose."""
        width = max(len(c) for c in completions)
        rows, mask = [], []
        for p, c in zip(prompts, completions, strict=True):
            row = self.one(p, c)
            rows.append(torch.cat([row, torch.full((width - len(c),), -50.0)]))
            mask.append([1.0] * len(c) + [0.0] * (width - len(c)))
        return torch.stack(rows), torch.tensor(mask)


def _batch():
    return [Trainable(Sample((0, 1), (2, 3)), 1.0), Trainable(Sample((0, 1), (4, 5)), -1.0),
            Trainable(Sample((0, 4), (3, 3, 3)), 0.5)]


def test_update_moves_probability_towards_positive_advantage():
    model = Bigram()
    before_good = model.one((0, 1), (2, 3)).sum().item()
    before_bad = model.one((0, 1), (4, 5)).sum().item()
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    stats = update(_batch(), model.logprobs, list(model.parameters()), opt,
                   GRPOConfig(max_grad_norm=100.0))
    assert stats.tokens == 7 and stats.samples == 3
    # with ratio 1, loss = -Σ A / tokens over tokens: -(2·1 - 2·1 + 3·0.5) / 7
    assert stats.loss == pytest.approx(-1.5 / 7)
    assert model.one((0, 1), (2, 3)).sum().item() > before_good
    assert model.one((0, 1), (4, 5)).sum().item() < before_bad


@pytest.mark.parametrize("micro", [1, 2])
def test_gradient_accumulation_equals_one_big_batch(micro):
    # micro-batches of 1 have no padding; the big batch pads two of three rows: equal
    # results also show that padding is masked out of the loss.
    one, acc = Bigram(), Bigram()
    for model, mb in ((one, 16), (acc, micro)):
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        update(_batch(), model.logprobs, list(model.parameters()), opt,
               GRPOConfig(micro_batch=mb, max_grad_norm=100.0))
    assert torch.allclose(one.logits, acc.logits, atol=1e-6)


def test_several_updates_per_batch_clip_the_ratio():
    model = Bigram()
    opt = torch.optim.SGD(model.parameters(), lr=5.0)
    stats = update(_batch(), model.logprobs, list(model.parameters()), opt,
                   GRPOConfig(updates_per_batch=3, max_grad_norm=100.0))
    assert stats.clipped > 0  # the later passes moved past 1 ± eps on some tokens


def test_kl_to_reference_is_reported_and_pulls_back():
    model, ref = Bigram(), Bigram()
    with torch.no_grad():
        model.logits[1, 2] += 2.0
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    batch = [Trainable(Sample((0, 1), (2,)), 0.0)]  # no advantage: only the KL acts
    stats = update(batch, model.logprobs, list(model.parameters()), opt,
                   GRPOConfig(kl_beta=1.0, max_grad_norm=100.0), ref_logprobs=ref.logprobs)
    assert stats.kl > 0
    assert model.logits[1, 2].item() < ref.logits[1, 2].item() + 2.0


def test_checkpoint_round_trip_and_resume(tmp_path):
    model = Bigram()
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    update(_batch(), model.logprobs, list(model.parameters()), opt, GRPOConfig())
    for step in (1, 2, 3):
        save_checkpoint(tmp_path, model, opt, TrainState(step, [{"step": step}]))
    assert [p.name for p in list_checkpoints(tmp_path)] == ["checkpoint-2.pt", "checkpoint-3.pt"]
    fresh = Bigram()
    fresh_opt = torch.optim.AdamW(fresh.parameters(), lr=0.1)
    state = load_checkpoint(tmp_path, fresh, fresh_opt)
    assert state.step == 3 and state.history[-1] == {"step": 3}
    assert torch.equal(fresh.logits, model.logits)
    # the optimizer continues where it was: the next update is identical
    update(_batch(), model.logprobs, list(model.parameters()), opt, GRPOConfig())
    update(_batch(), fresh.logprobs, list(fresh.parameters()), fresh_opt, GRPOConfig())
    assert torch.allclose(fresh.logits, model.logits)
    assert load_checkpoint(tmp_path / "none", Bigram(), fresh_opt).step == 0


def test_failed_rollouts_stay_out_of_their_group_statistics():
    # "x" could not run (its server did not start): it scores 0 but says nothing of the
    # model. The healthy two are compared with each other only: [1, 0] → [+1, -1]
    # (with "x" counted the mean would be 1/3 and "b" would look better than it is).
    a, b, x = [Sample((1,), (2,))], [Sample((1,), (3,))], [Sample((1,), (4,))]
    out = trainables([["a", "b", "x"]], [[1.0, 0.0, 0.0]],
                     {"a": a, "b": b, "x": x}.get, failed=lambda r: r == "x")
    assert [(t.sample, t.advantage) for t in out] == [(a[0], 1.0), (b[0], -1.0)]
    # One healthy rollout left has nothing to be compared with.
    assert trainables([["a", "x"]], [[1.0, 0.0]], {"a": a, "x": x}.get,
                      failed=lambda r: r == "x") == []


def test_micro_batches_group_samples_of_similar_length():
    seen = []
    model = Bigram()

    def logprobs(prompts, completions):
        seen.append(sorted(len(p) + len(c) for p, c in zip(prompts, completions, strict=True)))
        return model.logprobs(prompts, completions)

    lengths = [9, 2, 8, 3, 7, 2]
    batch = [Trainable(Sample(tuple([0] * (n - 1)), (1,)), 1.0 if i % 2 else -1.0)
             for i, n in enumerate(lengths)]
    update(batch, logprobs, list(model.parameters()), torch.optim.SGD(model.parameters(), lr=0.1),
           GRPOConfig(micro_batch=2))
    # Padding is to the longest of a micro-batch: long calls go together.
    assert seen == [[2, 2], [3, 7], [8, 9]]


def test_loss_scaling_takes_the_same_step():
    """fp16 GPUs scale the loss (GradScaler); the step it takes is the unscaled one."""
    plain, scaled = Bigram(), Bigram()
    for model, scaler in ((plain, None), (scaled, torch.amp.GradScaler("cpu", init_scale=2.0**12))):
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        stats = update(_batch(), model.logprobs, list(model.parameters()), opt,
                       GRPOConfig(max_grad_norm=0.05), scaler=scaler)
        assert stats.grad_norm > 0.05  # clipping acted on the unscaled gradient
    assert torch.allclose(plain.logits, scaled.logits, atol=1e-6)


def test_engine_sampled_tokens_are_importance_weighted_hand_computed():
    """Tokens drawn by llama.cpp: loss × min(π_old / π_engine, cap)."""
    new = torch.log(torch.tensor([0.5, 0.5, 0.5]))
    engine = torch.log(torch.tensor([0.5, 0.25, 0.1]))  # weights 1, 2, 5 → capped at 2
    loss, _, _ = token_losses(new, new.detach(), advantage=1.0, clip_eps=0.2,
                              behaviour_logp=engine, is_cap=2.0)
    assert loss.tolist() == pytest.approx([-1.0, -2.0, -2.0])


def test_samples_with_their_own_logprobs_update_as_without():
    plain, weighted = Bigram(), Bigram()
    with torch.no_grad():
        own = [Trainable(Sample(t.sample.prompt_ids, t.sample.completion_ids,
                                tuple(plain.one(t.sample.prompt_ids,
                                                t.sample.completion_ids).tolist())),
                         t.advantage) for t in _batch()]
    for model, batch in ((plain, _batch()), (weighted, own)):
        update(batch, model.logprobs, list(model.parameters()),
               torch.optim.SGD(model.parameters(), lr=0.5), GRPOConfig(max_grad_norm=100.0))
    assert torch.allclose(plain.logits, weighted.logits, atol=1e-6)
    # An engine that thought the tokens twice as likely halves their weight.
    halved = Bigram()
    off = [Trainable(Sample(t.sample.prompt_ids, t.sample.completion_ids,
                            tuple(x + math.log(2) for x in t.sample.logprobs)), t.advantage)
           for t in own]
    stats = update(off, halved.logprobs, list(halved.parameters()),
                   torch.optim.SGD(halved.parameters(), lr=0.5), GRPOConfig(max_grad_norm=100.0))
    assert stats.loss == pytest.approx(-1.5 / 7 / 2)


def test_the_engine_samples_wherever_the_serving_gguf_is_known():
    from deskmate.finetune.progress import describe, parse_progress
    from deskmate.finetune.train import rollout_sampler

    assert GRPOConfig().rollout_engine == "auto"
    engine = rollout_sampler(GRPOConfig(), "/models/served.gguf")
    assert engine.engine == "llamacpp" and "served.gguf" in engine.reason
    # No GGUF (a library caller that passes none): the torch loop, and the log says why.
    fallback = rollout_sampler(GRPOConfig())
    assert fallback.engine == "policy" and "no serving GGUF" in fallback.reason
    chosen = rollout_sampler(GRPOConfig(rollout_engine="policy"), "/models/served.gguf")
    assert chosen.engine == "policy" and "rollout_engine = policy" in chosen.reason
    with pytest.raises(ValueError, match="serving GGUF"):
        rollout_sampler(GRPOConfig(rollout_engine="llamacpp"))
    with pytest.raises(ValueError, match="auto, llamacpp, policy"):
        GRPOConfig(rollout_engine="vllm")
    # On the wire and in the log (the CLI's text, the Finetune screen's log line).
    assert parse_progress(json.dumps(engine.to_json())) == engine
    assert describe(fallback).startswith("rollouts sampled by the trained weights in torch")
