"""End to end on the CPU: SmolLM2-135M from its GGUF into the policy, a few GRPO steps
on a task set it can learn (a deterministic check: the answer says "no") with the
rollouts sampled by the default sampler (llama.cpp on the GGUF with each step's
adapter, importance-corrected), the mean reward rising with a fixed seed, the adapter
exported to GGUF, loaded by llama.cpp on the Q4 base, and shifting its logits the way
it shifts PyTorch's."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_tiny_run_learns_exports_and_is_served(tiny_model_path, tmp_path):
    from deskmate.app.llm.base import ChatMessage, GenerationParams, complete
    from deskmate.app.llm.llamacpp import LlamaCppModel
    from deskmate.finetune.smoke import CONFIG, PROMPTS, tiny_run

    out = tiny_run(tiny_model_path, tmp_path)
    assert out["sampler"] == "llamacpp"  # the default wherever the serving GGUF is known
    assert (tmp_path / "engine" / "adapter.gguf").is_file()  # each step's adapter
    steps = [line for line in out["history"] if line["event"] == "step"]
    assert [s["step"] for s in steps] == list(range(1, CONFIG.steps + 1))
    assert out["reward_last"] > out["reward_first"], steps
    assert all(s["tokens_trained"] > 0 for s in steps[:1])
    assert set(steps[-1]["pass_rates"]) == {"checks"}
    # the adapter moves llama.cpp's logits on the Q4 base as it moves PyTorch's
    assert out["correlation"] > 0.5
    assert sorted(p.name for p in tmp_path.glob("checkpoint-*.pt")) == [
        "checkpoint-2.pt", "checkpoint-4.pt"]
    served = LlamaCppModel(tiny_model_path, adapter=out["adapter"], context=512, seed=0)
    try:
        assert served.info.adapter == str(out["adapter"])
        answer = complete(served, [ChatMessage("user", PROMPTS[0])],
                          GenerationParams(max_tokens=8, temperature=0.0)).text
        assert answer.strip()
    finally:
        served.close()
