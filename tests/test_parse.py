"""Lenient parsing of model replies."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deskmate.app.agent.parse import (
    CodeAction,
    FinalAnswer,
    Malformed,
    closed_code_block,
    parse_reply,
)


def test_code_action_with_thought():
    parsed = parse_reply("I will list files.\n```python\nprint(fs.list('.'))\n```")
    assert parsed == CodeAction("I will list files.", "print(fs.list('.'))")


def test_fence_variants():
    assert parse_reply("```py\nx = 1\n```").code == "x = 1"
    assert parse_reply("```\nx = 1\n```").code == "x = 1"
    assert parse_reply("```Python\nx = 1\n```").code == "x = 1"
    assert parse_reply("Let me check\n```python\nx = 1\nprint(x)").code == "x = 1\nprint(x)"


def test_only_the_first_block_runs():
    parsed = parse_reply("```python\na = 1\n```\nthen\n```python\nb = 2\n```")
    assert parsed.code == "a = 1"


def test_final_answer_forms():
    assert parse_reply("Final answer: 42") == FinalAnswer("42")
    assert parse_reply("Thought: done.\n**Final Answer:** Paris") == FinalAnswer("Paris")
    assert parse_reply("final_answer: yes") == FinalAnswer("yes")
    assert parse_reply("The capital is Paris.") == FinalAnswer("The capital is Paris.")


def test_final_answer_after_code_is_not_taken_early():
    parsed = parse_reply("```python\nprint(1)\n```\nFinal answer: 1")
    assert isinstance(parsed, CodeAction)


def test_a_call_without_a_fence_is_code_and_answers_stay_answers():
    assert parse_reply('git.git_log(repo_path="/r")') == CodeAction("", 'git.git_log(repo_path="/r")')
    assert parse_reply("I will search.\nprint(search_tools('weather'))") == CodeAction(
        "I will search.", "print(search_tools('weather'))")
    # Values and prose that happen to parse as Python call nothing: they are answers.
    for answer in ("42", "q3-sales.csv", "Alice", "os.path", "It is Paris.\nParis",
                   "The result is f(x) for x > 1."):
        assert parse_reply(answer) == FinalAnswer(answer)
    # A marked answer wins even when it holds a call.
    assert parse_reply("Final answer: call git.log()") == FinalAnswer("call git.log()")


def test_malformed():
    assert isinstance(parse_reply("   "), Malformed)
    assert isinstance(parse_reply("```python\n\n```"), Malformed)


def test_closed_code_block():
    text = "Thought\n```python\nprint(1)\n```\nObservation: made up"
    assert text[: closed_code_block(text)].endswith("```")
    assert closed_code_block("```python\nprint(1)") is None


@given(st.text())
def test_never_raises(text):
    assert isinstance(parse_reply(text), CodeAction | FinalAnswer | Malformed)


def test_a_tool_named_after_its_server_is_found_without_the_prefix():
    # git.log means git.git_log: many servers prefix their tools with their own name.
    from deskmate.app.agent.bridge import BridgeError, ToolBridge
    from deskmate.tools.catalog import Catalog
    from deskmate.tools.policy import Policy
    from deskmate.tools.spec import ToolSpec

    schema = {"type": "object", "properties": {"repo_path": {"type": "string"}}}
    catalog = Catalog.from_specs([ToolSpec("git", "git_log", "", schema),
                                  ToolSpec("git", "git_status", "", schema)])
    bridge = ToolBridge(catalog, lambda *args, **kwargs: None, Policy(yes_all=True))
    assert bridge._tool("git", "log")[0].name == "git_log"
    assert bridge._tool("git", "git_status")[0].name == "git_status"
    with pytest.raises(BridgeError, match="has no tool 'diff'"):
        bridge._tool("git", "diff")
