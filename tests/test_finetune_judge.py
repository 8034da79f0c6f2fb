"""The judge: grammar-constrained scores from the real tiny model, strict parsing,
retries on a JSON-schema endpoint, and rewards assembled from rubric and checks."""

from __future__ import annotations

import json

import pytest

from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.llm.base import ChatMessage
from deskmate.finetune.judge import (
    Judge,
    JudgeError,
    Scored,
    parse_scores,
    pass_rates,
    render_trajectory,
    scores_grammar,
)
from deskmate.finetune.rubrics import Checks, Criterion, Rubric

TF, TG = "task_fulfillment", "tool_grounding"


def _transcript(answer: str, tool_output: str = "") -> list[ChatMessage]:
    out = [ChatMessage("system", "You are deskmate."), ChatMessage("user", "What is 2+2?")]
    if tool_output:
        out += [ChatMessage("assistant", "```python\nprint(calc.add(a=2, b=2))\n```"),
                ChatMessage("user", f"Output:\n{tool_output}")]
    return [*out, ChatMessage("assistant", f"Final answer: {answer}")]


def test_render_skips_system_and_task_and_labels_tool_output():
    text = render_trajectory(_transcript("4", "4"), 1000)
    assert "You are deskmate" not in text and "What is 2+2" not in text
    assert text.splitlines()[0].startswith("AGENT: ```python")
    assert "TOOL OUTPUT: Output:\n4" in text and text.endswith("AGENT: Final answer: 4")
    assert len(render_trajectory(_transcript("x" * 5000), 300)) < 400


def test_parse_scores_strict_shape_and_clamping():
    text = json.dumps({"rollout_1": {"c1": 1, "c2": 0.25}, "rollout_2": {"c1": 1.5, "c2": -1}})
    assert parse_scores(text, 2, 2) == [[1.0, 0.25], [1.0, 0.0]]
    for bad in ('{"rollout_1": {"c1": 1}}', '{"rollout_1": {"c1": "high", "c2": 1}, '
                '"rollout_2": {"c1": 1, "c2": 1}}', "{not json", '{"rollout_1": {"c1": true, '
                '"c2": 1}, "rollout_2": {"c1": 1, "c2": 1}}'):
        with pytest.raises(JudgeError):
            parse_scores(bad, 2, 2)


def test_grammar_names_every_cell():
    grammar = scores_grammar(3, 2)
    for i in (1, 2, 3):
        assert f'\\"rollout_{i}\\"' in grammar
    assert grammar.count('\\"c2\\"') == 3 and "c3" not in grammar


CRITERIA = (Criterion(TF, "The answer is 4", 2.0), Criterion(TG, "Uses the tool's result"))


def test_schema_endpoint_retries_once_then_fails():
    good = json.dumps({"rollout_1": {"c1": 1, "c2": 0.5}, "rollout_2": {"c1": 0, "c2": 0}})
    judge = Judge(ScriptedModel(["sorry, I cannot", good]))
    got = judge.score_criteria("What is 2+2?", CRITERIA, [_transcript("4", "4"), _transcript("5")])
    assert got == [[1.0, 0.5], [0.0, 0.0]]
    params = judge.model.params[0]
    assert params.grammar is None and params.json_schema["required"] == ["rollout_1", "rollout_2"]
    assert "rollout_2" in judge.model.calls[0][1].content
    with pytest.raises(JudgeError, match="not the scores"):
        Judge(ScriptedModel(["no", "still no"])).score_criteria(
            "q", CRITERIA, [_transcript("4"), _transcript("5")])


def test_score_group_combines_rubric_and_checks():
    reply = json.dumps({"rollout_1": {"c1": 1, "c2": 1}, "rollout_2": {"c1": 0.5, "c2": 0}})
    rubric = Rubric(CRITERIA, Checks(answer_contains=("4",)))
    scored = Judge(ScriptedModel([reply])).score_group(
        "What is 2+2?", rubric, [(_transcript("4", "4"), "4"), (_transcript("5"), "5")])
    # rollout 2: TF 0.5 (weight 0.4), TG 0 (0.2) → 0.4/0.6·0.5 = 1/3; checks 0
    assert scored[0] == Scored(2.0, (1.0, 1.0), 1.0)
    assert scored[1].reward == pytest.approx(1 / 3) and scored[1].checks == 0.0
    rates = pass_rates([(rubric, s) for s in scored])
    assert rates == {TF: 1.0, TG: 0.5, "checks": 0.5}


def test_checks_only_tasks_need_no_judge_and_criteria_do():
    scored = Judge(None).score_group("Say hi", Rubric(checks=Checks(("hi",))),
                                     [([], "hi there"), ([], "hello")])
    assert [s.reward for s in scored] == [1.0, 0.0]
    with pytest.raises(JudgeError, match="no judge"):
        Judge(None).score_group("Say hi", Rubric(CRITERIA), [([], "hi")])


def test_rollouts_bring_their_own_checks_and_one_that_could_not_run_scores_zero():
    from deskmate.finetune.rollout import Rollout

    def rollout(answer, checks=None, error=""):
        return Rollout("k", answer, "error" if error else "answered",
                       tuple(_transcript(answer)), (), 0, 0.0, checks, error)

    reply = json.dumps({"rollout_1": {"c1": 1, "c2": 1}, "rollout_2": {"c1": 1, "c2": 1}})
    judge = Judge(ScriptedModel([reply]))
    rubric = Rubric(CRITERIA, Checks(answer_contains=("4",)))
    group = [rollout("4", checks=0.5), rollout("4"), rollout("", error="server down")]
    scored = judge.score_rollouts("What is 2+2?", rubric, group)
    # its workspace's checks in place of the answer's; the broken one never judged
    assert scored == [Scored(1.5, (1.0, 1.0), 0.5), Scored(2.0, (1.0, 1.0), 1.0),
                      Scored(0.0, (0.0, 0.0), None)]
    assert "rollout_3" not in judge.model.calls[0][1].content
    assert Judge(None).score_rollouts("q", Rubric(CRITERIA), [group[2]])[0].reward == 0.0


@pytest.mark.slow
def test_real_tiny_model_scores_under_grammar(tiny_model):
    judge = Judge(tiny_model)
    assert judge.grammar
    transcripts = [_transcript("4", "4"), _transcript("The answer is 5."), _transcript("")]
    got = judge.score_criteria("What is 2+2?", CRITERIA, transcripts)
    assert len(got) == 3 and all(len(row) == 2 for row in got)
    assert all(0.0 <= v <= 1.0 for row in got for v in row)


def test_trajectory_shows_native_tool_calls():
    call = {"id": "call_a", "type": "function",
            "function": {"name": "toy__add", "arguments": '{"a": 2, "b": 3}'}}
    text = render_trajectory([ChatMessage("user", "add"),
                              ChatMessage("assistant", "", tool_calls=(call,)),
                              ChatMessage("tool", "5", tool_call_id="call_a")], 2000)
    assert 'AGENT: calls toy__add({"a": 2, "b": 3})' in text and "TOOL OUTPUT: 5" in text
