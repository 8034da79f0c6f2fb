"""The repeat that would end a turn, with a step left, asks for the answer instead: the
reply after it is held to "Final answer: …" (actions_code.ANSWER_REPLY) where the backend
takes a grammar. Scripted models for the loop's choices; the real tiny model for the
grammar and for a turn through the real path."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from test_code_after_error import run as run_turn

from deskmate.app.agent import events as ev
from deskmate.app.agent.actions_code import ANSWER_REPLY, CODE_REPLY, prints_only
from deskmate.app.agent.parse import (
    PRINTS_AFTER_ERROR,
    PRINTS_DONE,
    PRINTS_ONLY,
    REPEATED_ANSWER,
    FinalAnswer,
    is_feedback,
    parse_reply,
    repeated_answer,
)
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.llm.base import ChatMessage, GenerationParams, StreamEvent, complete

CELL = "```python\nprint(6 * 7)\n```"
TASK = "Print 6 times 7."  # not a question: a question's first repeat asks at once (below)


def run(model, **limits):
    return run_turn(model, TASK, **limits)


def observations(events):
    return [e.content for e in events if isinstance(e, ev.Observation)]


@pytest.mark.slow
def test_the_third_repeat_asks_for_the_answer_and_holds_the_reply_to_it():
    model = ScriptedModel([CELL, CELL, CELL, "Final answer: 42"], grammar=True)
    events = run(model, max_steps=5)
    assert events[-1].status == "answered"
    assert [e.text for e in events if isinstance(e, ev.FinalAnswer)] == ["42"]
    seen = observations(events)
    assert seen[0] == "Output:\n42" and seen[1].startswith("Not run: ")
    assert seen[2] == repeated_answer(3, TASK) and is_feedback(seen[2])
    assert "for the third time. Answer the request now" in seen[2]
    assert [p.grammar for p in model.params] == [None, None, None, ANSWER_REPLY]


@pytest.mark.slow
def test_the_answer_is_asked_for_on_the_last_step_too_and_once_a_turn():
    # Asked at step 4 of 5: the last step's reply is held to the answer as well.
    model = ScriptedModel([CELL, CELL, "```python\nprint(1)\n```", CELL,
                           "Final answer: 42"], grammar=True)
    events = run(model, max_steps=5)
    assert events[-1].status == "answered" and model.params[-1].grammar == ANSWER_REPLY
    # A model that takes no grammar (a server over HTTP) may write the code once more:
    # that ends the turn.
    model = ScriptedModel([CELL] * 4)
    events = run(model, max_steps=6)
    assert events[-1].status == "repetition" and len(model.params) == 4
    assert all(p.grammar is None for p in model.params)


@pytest.mark.slow
def test_a_repeat_on_the_last_step_still_ends_the_turn():
    model = ScriptedModel([CELL] * 3, grammar=True)
    events = run(model, max_steps=3)
    assert events[-1].status == "repetition"
    assert not any(REPEATED_ANSWER in o for o in observations(events))


def test_the_answer_grammar_takes_inline_code_but_no_fence(tiny_model):
    from test_code_after_error import _grammar_allows

    tokenize = tiny_model._llm.tokenize
    answer = "Final answer: Lisbon, from `read_graph`.\n"
    [dot] = tokenize(b".", add_bos=False, special=False)
    assert _grammar_allows(tiny_model, ANSWER_REPLY, answer, dot)
    fence = tokenize(b"```", add_bos=False, special=False)
    refused = [not _grammar_allows(tiny_model, ANSWER_REPLY,
                                   answer + tiny_model._llm.detokenize(fence[:i]).decode(), t)
               for i, t in enumerate(fence)]
    assert any(refused)


def test_the_real_model_under_the_grammar_writes_an_answer(tiny_model):
    asked = [ChatMessage("user", "What is 6 times 7? Answer now.")]
    done = complete(tiny_model, asked,
                    GenerationParams(max_tokens=24, temperature=0.0, grammar=ANSWER_REPLY))
    assert done.text.startswith("Final answer: ")
    assert isinstance(parse_reply(done.text), FinalAnswer)


class ScriptedThenReal:
    """Scripted replies first, then the real model: its reply after the ask goes through
    the real llama.cpp path under the grammar the loop sends."""

    def __init__(self, real, first: Sequence[str]) -> None:
        self.real, self.first, self.info = real, list(first), real.info
        self.params: list[GenerationParams] = []

    def stream(self, messages: Sequence[ChatMessage],
               params: GenerationParams = GenerationParams(),
               cancel=None) -> Iterator[StreamEvent]:
        self.params.append(params)
        if len(self.params) <= len(self.first):
            scripted = ScriptedModel(self.first[len(self.params) - 1:])
            return scripted.stream(messages, params, cancel)
        return self.real.stream(messages, params, cancel)

    def close(self) -> None:
        pass


@pytest.mark.slow
def test_a_turn_through_the_real_model_ends_with_an_answer_after_its_repeats(tiny_model):
    model = ScriptedThenReal(tiny_model, [CELL, CELL, CELL])
    events = run(model, max_steps=5, max_tokens=48, temperature=0.0)
    assert model.params[3].grammar == ANSWER_REPLY
    assert events[-1].status == "answered"
    answers = [e.text for e in events if isinstance(e, ev.FinalAnswer)]
    assert len(answers) == 1 and answers[0].strip()


@pytest.mark.slow
def test_a_questions_printed_cell_written_again_asks_for_the_answer_at_once():
    question = "What is 6 times 7?"
    model = ScriptedModel([CELL, CELL, "Final answer: 42"], grammar=True)
    events = run_turn(model, question, max_steps=5)
    assert observations(events)[1] == repeated_answer(2, question)
    assert "for the second time" in observations(events)[1]
    assert [p.grammar for p in model.params] == [None, None, ANSWER_REPLY]
    assert events[-1].status == "answered"
    # Once a turn: a later repeat gets the guard's usual answer.
    model = ScriptedModel([CELL, CELL, "```python\nprint(1)\n```", "```python\nprint(1)\n```",
                           "Final answer: 42"], grammar=True)
    events = run_turn(model, question, max_steps=6)
    assert [REPEATED_ANSWER in o for o in observations(events)] == [
        False, True, False, False]
    # Not for a cell that printed nothing or an empty result (a search that found
    # nothing is nothing to answer from), nor for a request to change something.
    silent = "```python\nx = 6 * 7\n```"
    empty = "```python\nprint({'entities': [], 'relations': []})\n```"
    for task, cell in ((question, silent), (question, empty),
                       ("Write 6 times 7 to /tmp/p.txt.", CELL)):
        model = ScriptedModel([cell, cell, "Final answer: 42"], grammar=True)
        events = run_turn(model, task, max_steps=5)
        assert observations(events)[1].startswith("Not run: ")
        assert all(p.grammar != ANSWER_REPLY for p in model.params)


def test_code_that_only_prints_text_written_in_it():
    assert prints_only("print('Changes committed successfully with hash 93fe')")
    assert prints_only("print(\"Error: nothing staged\")\n'done'")
    assert prints_only("print(f'all done')")
    assert not prints_only("print(f'{n} lines')")
    assert not prints_only("print('a', total)")
    assert not prints_only("x = 'a'\nprint(x)")
    assert not prints_only("print(open('/w/a.txt').read())")
    assert not prints_only("print('x', file=sys.stderr)")
    assert not prints_only("")


@pytest.mark.slow
def test_a_cell_that_prints_its_own_text_is_not_run_and_the_answer_is_asked_for():
    echo = "```python\nprint('42')\n```"
    model = ScriptedModel([CELL, echo, "Final answer: 42"], grammar=True)
    events = run(model, max_steps=5)
    assert events[-1].status == "answered"
    seen = observations(events)
    assert seen[1] == PRINTS_ONLY + PRINTS_DONE + TASK and is_feedback(seen[1])
    # Not held to the answer: a step the request's words do not name may be left.
    assert [p.grammar for p in model.params] == [None, None, None]
    # As the turn's first cell it runs (nothing ran before it to print again).
    events = run(ScriptedModel([echo, "Final answer: 42"]), max_steps=5)
    assert observations(events)[0] == "Output:\n42"


@pytest.mark.slow
def test_a_cell_that_prints_an_errors_text_gets_what_the_failed_cell_was_told():
    fails = "```python\nprint(int('GET /home 120ms'))\n```"
    echo = "```python\nprint(\"Error: invalid literal for int()\")\n```"
    model = ScriptedModel([fails, echo, CELL, "Final answer: 42"], grammar=True)
    events = run(model, max_steps=5)
    seen = observations(events)
    assert seen[1].startswith(PRINTS_ONLY + PRINTS_AFTER_ERROR + "\nThat code failed: "
                              "ValueError: invalid literal for int()")
    # The failed cell's next reply is code; the one after the echo is free.
    assert [p.grammar for p in model.params] == [None, CODE_REPLY, None, None]
