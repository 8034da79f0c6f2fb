"""The decode thread tuner: timing decides, a very slow count costs one token."""

from __future__ import annotations

from deskmate.app.llm.base import ChatMessage, GenerationParams
from deskmate.app.llm.llamacpp import LlamaCppModel, physical_cores
from deskmate.app.llm.threads import ThreadTuner, candidates


class FakeEngine:
    """Seconds per decoded token for each thread count; records what was applied."""

    def __init__(self, cost: dict[int, float]) -> None:
        self.cost = cost
        self.now = 0.0
        self.applied: list[tuple[int, int]] = []
        self.decode_threads = 0
        self.spent: dict[int, int] = {}

    def apply(self, decode: int, batch: int) -> None:
        self.applied.append((decode, batch))
        self.decode_threads = decode

    def reply(self, tuner: ThreadTuner, tokens: int) -> None:
        tuner.begin()
        tuner.tick(self.now)  # the first token: sampled from the prompt, no decode
        for _ in range(tokens - 1):
            n = self.decode_threads
            self.now += self.cost[n]
            self.spent[n] = self.spent.get(n, 0) + 1
            tuner.tick(self.now)


def test_candidates_halve_down_to_one():
    assert candidates(1) == (1,)
    assert candidates(2) == (1, 2)
    assert candidates(6) == (1, 2, 4, 6)
    assert candidates(16) == (1, 2, 4, 8, 16)


def test_an_idle_machine_keeps_every_core():
    engine = FakeEngine({1: 0.020, 2: 0.012})
    tuner = ThreadTuner(2, engine.apply)
    engine.reply(tuner, 40)
    assert tuner.best == 2
    assert tuner.batch_threads == 2
    assert engine.applied[-1] == (2, 2)


def test_a_busy_core_is_given_up_after_one_slow_token():
    # The reported case: 2 threads on a loaded 2-core machine decode ~100x slower.
    engine = FakeEngine({1: 0.015, 2: 1.5})
    tuner = ThreadTuner(2, engine.apply)
    engine.reply(tuner, 40)
    assert tuner.best == 1
    assert engine.spent[2] == 1, "the slow count must be dropped at its first token"
    assert tuner.batch_threads == 1, "prompts too, when the full count is contended"
    assert engine.applied[-1] == (1, 1)


def test_probing_a_very_slow_count_stays_a_small_share_of_decode_time():
    engine = FakeEngine({1: 0.015, 2: 1.5})
    tuner = ThreadTuner(2, engine.apply)
    for _ in range(20):
        engine.reply(tuner, 100)  # 2,000 tokens in twenty replies
    slow_time = engine.spent[2] * 1.5
    assert slow_time <= 0.1 * engine.now, (engine.spent, engine.now)


def test_memory_bound_slowdown_keeps_prompts_on_every_core():
    # A little slower with more threads is bandwidth, not contention: decode with the
    # faster count, but prompt evaluation still uses every core.
    engine = FakeEngine({1: 0.010, 2: 0.012, 4: 0.013})
    tuner = ThreadTuner(4, engine.apply)
    engine.reply(tuner, 40)
    assert tuner.best == 1
    assert tuner.batch_threads == 4


def test_it_looks_again_less_often_while_the_answer_holds_and_follows_a_change():
    engine = FakeEngine({1: 0.02, 2: 0.01})
    tuner = ThreadTuner(2, engine.apply, probe_tokens=2, reprobe_every=8)
    engine.reply(tuner, 200)
    probes_steady = sum(1 for d, _ in engine.applied if d == 1)
    assert probes_steady <= 5, "probes must back off while 2 threads stay the best"
    engine.cost = {1: 0.02, 2: 2.0}  # another program takes a core
    engine.reply(tuner, 300)
    assert tuner.best == 1


def test_a_reply_that_ends_mid_probe_does_not_leave_it_half_done():
    engine = FakeEngine({1: 0.02, 2: 0.01})
    tuner = ThreadTuner(2, engine.apply)
    engine.reply(tuner, 3)  # ends while timing 1 thread
    engine.reply(tuner, 40)
    assert tuner.best == 2
    assert set(tuner.speeds) == {1, 2}


def test_the_real_model_tunes_its_threads_through_llama_cpp(tiny_model_path):
    model = LlamaCppModel(tiny_model_path, context=1024, seed=0, threads=0)
    params = GenerationParams(max_tokens=40, temperature=0.0)
    list(model.stream([ChatMessage("user", "Count from one to twenty in words.")], params))
    assert model.threads in candidates(physical_cores())
    tuner = model._tuner
    assert tuner is not None and set(tuner.speeds) == set(candidates(physical_cores()))
    assert model.threads == tuner.best


def test_a_configured_thread_count_is_left_alone(tiny_model_path):
    model = LlamaCppModel(tiny_model_path, context=1024, seed=0, threads=1)
    params = GenerationParams(max_tokens=20, temperature=0.0)
    list(model.stream([ChatMessage("user", "Say hello.")], params))
    assert model._tuner is None and model.threads == 1
