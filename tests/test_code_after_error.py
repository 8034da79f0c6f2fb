"""After a code cell that failed, the next reply is held to a code block by a llama.cpp
grammar (actions_code.CODE_REPLY): scripted models for the loop's choices, the real
tiny model for the grammar itself and for a turn through the real path."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from deskmate.app.agent import events as ev
from deskmate.app.agent.actions_code import CODE_REPLY
from deskmate.app.agent.factory import build_agent
from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.parse import CodeAction, parse_reply
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.llm.base import ChatMessage, GenerationParams, StreamEvent, complete
from deskmate.tools.policy import Policy

FAILS = "```python\nprint(1 / 0)\n```"
WORKS = "```python\nprint(6 * 7)\n```"


def run(model, task: str = "What is 6 times 7?", **limits):
    runtime = build_agent(model, policy=Policy(yes_all=True), limits=AgentLimits(**limits))
    try:
        return list(runtime.agent.run(task))
    finally:
        assert runtime.sandbox is not None
        runtime.sandbox.close()


@pytest.mark.slow
def test_the_reply_after_a_failed_cell_is_held_to_code_and_others_are_free():
    model = ScriptedModel([FAILS, WORKS, "Final answer: 42"], grammar=True)
    events = run(model)
    assert [p.grammar for p in model.params] == [None, CODE_REPLY, None]
    assert [e.text for e in events if isinstance(e, ev.FinalAnswer)] == ["42"]


@pytest.mark.slow
def test_the_last_step_a_server_model_and_the_config_leave_the_reply_free():
    # The turn's last step: an answer is still possible after an error there.
    model = ScriptedModel([FAILS, "Final answer: it failed"], grammar=True)
    run(model, max_steps=2)
    assert [p.grammar for p in model.params] == [None, None]
    # A backend that takes no grammar (a server over HTTP) is never sent one.
    model = ScriptedModel([FAILS, WORKS, "Final answer: 42"])
    run(model)
    assert all(p.grammar is None for p in model.params)
    # [agent] code_after_error = false
    model = ScriptedModel([FAILS, WORKS, "Final answer: 42"], grammar=True)
    run(model, code_after_error=False)
    assert all(p.grammar is None for p in model.params)


def test_the_config_turns_it_off():
    from dataclasses import replace

    from deskmate.app.agent.factory import limits_from_config
    from deskmate.app.config import AgentConfig, Config

    assert limits_from_config(Config())[0].code_after_error is True
    off = replace(Config(), agent=AgentConfig(code_after_error=False))
    assert limits_from_config(off)[0].code_after_error is False


def test_the_real_model_under_the_grammar_writes_a_code_block(tiny_model):
    assert tiny_model.info.grammar
    asked = [ChatMessage("user", "Say hello to Ada.")]
    done = complete(tiny_model, asked,
                    GenerationParams(max_tokens=48, temperature=0.0, grammar=CODE_REPLY))
    assert done.text.startswith("```python\n")
    if done.text.endswith("```") and done.text.count("```") == 2:
        assert isinstance(parse_reply(done.text), CodeAction)


def _grammar_allows(model, grammar: str, text: str, token: int) -> bool:
    """Whether llama.cpp's sampler for ``grammar``, having taken ``text``'s tokens, lets
    ``token`` come next."""
    import ctypes
    import math

    import llama_cpp as lc

    llm = model._llm
    sampler = lc.llama_sampler_init_grammar(llm._model.vocab, grammar.encode(), b"root")
    try:
        for taken in llm.tokenize(text.encode(), add_bos=False, special=False):
            lc.llama_sampler_accept(sampler, taken)
        data = (lc.llama_token_data * 1)(lc.llama_token_data(token, 0.0, 0.0))
        candidates = lc.llama_token_data_array(data, 1, -1, False)
        lc.llama_sampler_apply(sampler, ctypes.byref(candidates))
        return data[0].logit != -math.inf
    finally:
        lc.llama_sampler_free(sampler)


def test_the_closing_fence_may_take_its_newline(tiny_model):
    # Qwen writes "```\n" as "``" + "`\n": a grammar that ends right at the fence bans
    # the second token, and the model wrote "``'" instead (then the same reply again).
    [newline] = tiny_model._llm.tokenize(b"\n", add_bos=False, special=False)
    block = "```python\nprint(1)\n```"
    assert _grammar_allows(tiny_model, CODE_REPLY, block, newline)
    ended_at_fence = CODE_REPLY.replace(' "\\n"?', "")
    assert ended_at_fence != CODE_REPLY
    assert not _grammar_allows(tiny_model, ended_at_fence, block, newline)


class FirstScripted:
    """A failing cell scripted first, then the real model: its reply after the error
    goes through the real llama.cpp path under the grammar the loop sends."""

    def __init__(self, real, first: str) -> None:
        self.real, self.first, self.info = real, first, real.info
        self.params: list[GenerationParams] = []

    def stream(self, messages: Sequence[ChatMessage],
               params: GenerationParams = GenerationParams(),
               cancel=None) -> Iterator[StreamEvent]:
        self.params.append(params)
        if len(self.params) == 1:
            return ScriptedModel([self.first]).stream(messages, params, cancel)
        return self.real.stream(messages, params, cancel)

    def close(self) -> None:
        pass


@pytest.mark.slow
def test_a_turn_through_the_real_model_writes_code_after_its_error(tiny_model):
    model = FirstScripted(tiny_model, FAILS)
    events = run(model, max_steps=3, max_tokens=96, temperature=0.0)
    assert model.params[1].grammar == CODE_REPLY
    actions = [e for e in events if isinstance(e, ev.CodeAction)]
    # The real model's second reply was a code block (it ran, whatever it computed).
    assert [a.step for a in actions][:2] == [1, 2]
    replies = [e.text for e in events if isinstance(e, ev.ModelMessage)]
    assert replies[1].startswith("```python\n")
