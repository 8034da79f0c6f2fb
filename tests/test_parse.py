"""Lenient parsing of model replies."""

from __future__ import annotations

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
    # Written inside a code block, as the cells before it were (an unclosed one too).
    assert parse_reply("```python\nFinal answer: Switched to branch 'docs'") == FinalAnswer(
        "Switched to branch 'docs'")
    assert parse_reply("Done.\n```\nFinal answer: 3\n```") == FinalAnswer("3")
    assert isinstance(parse_reply("```python\nx = 1\nFinal answer: 1\n```"), CodeAction)
    # Sentences in a code block (a reply held to code after an error, meant as an answer).
    assert parse_reply("```python\nThe TODO is in parser.py.\nIt says: fix dates.\n```") == \
        FinalAnswer("The TODO is in parser.py.\nIt says: fix dates.")
    for code in ("print(1)", "total = 3", "Path('a').exists()", "Data", "import os"):
        assert isinstance(parse_reply(f"```python\n{code}\n```"), CodeAction), code


def test_final_answer_after_code_is_not_taken_early():
    parsed = parse_reply("```python\nprint(1)\n```\nFinal answer: 1")
    assert isinstance(parsed, CodeAction)


def test_a_call_without_a_fence_is_code_and_answers_stay_answers():
    call = 'git.git_log(repo_path="/r")'
    assert parse_reply(call) == CodeAction("", call)
    assert parse_reply("I will search.\nprint(search_tools('weather'))") == CodeAction(
        "I will search.", "print(search_tools('weather'))")
    bare = 'search_nodes(query="Marta")'  # a tool called bare: tools are functions too
    assert parse_reply(bare) == CodeAction("", bare)
    # Values and prose that happen to parse as Python call nothing: they are answers.
    for answer in ("42", "q3-sales.csv", "Alice", "os.path", "It is Paris.\nParis",
                   "The result is f(x) for x > 1."):
        assert parse_reply(answer) == FinalAnswer(answer)
    # A call before the answer: the answer was made up before the call ran.
    assert parse_reply('fs.move(a="x")\nFinal answer: moved.') == CodeAction("", 'fs.move(a="x")')
    assert parse_reply("I checked.\nFinal answer: 3") == FinalAnswer("3")
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



def test_a_failed_cell_is_told_by_its_error_line_even_after_printed_output():
    from deskmate.app.agent.parse import failed_output

    assert failed_output("Output:\nError: Traceback ...")
    assert failed_output("Output:\npartial\nError: KeyError: 'city'")
    assert not failed_output("Output:\n{'content': 'ok'}")
    assert not failed_output("Error: not a cell's output")


def test_code_before_a_closing_fence_whose_opening_was_dropped_runs():
    # After an error, small models restate it, then write the fix and close a fence they
    # never opened; the fix runs (a signature copied from the error's documentation does
    # not), and text with a stray fence and no call stays the answer.
    reply = ("Error: Traceback (most recent call last):\n  File \"<cell 1>\", line 2\n"
             "ToolError: git.git_commit failed: No changes staged for commit.\n"
             "The tool's documentation:\ndef git_commit(repo_path: str, message: str) -> Any:\n"
             "    \"\"\"Records changes to the repository\"\"\"\n\n# Stage first\n"
             "git.git_add(repo_path=\"/r\", files=[\"a.md\"])\n"
             "git.git_commit(repo_path=\"/r\", message=\"Add a\")\n```")
    parsed = parse_reply(reply)
    assert isinstance(parsed, CodeAction)
    assert parsed.code.startswith('"""Records') and parsed.code.endswith('message="Add a")')
    assert "def git_commit" not in parsed.code and "ToolError" in parsed.thought
    assert isinstance(parse_reply("The answer is 42.\n```"), FinalAnswer)


def test_an_answer_that_writes_tool_calls_for_its_fix_runs_them():
    reply = ("Final answer: The file is not staged yet. Stage it first, then commit:\n\n"
             "```python\ngit.git_add(repo_path=\"/r\", files=[\"a.md\"])\n"
             "git.git_commit(repo_path=\"/r\", message=\"Add a\")\n```")
    parsed = parse_reply(reply, objects={"git", "filesystem"})
    assert isinstance(parsed, CodeAction) and parsed.code.startswith("git.git_add(")
    assert parsed.thought.startswith("Final answer: The file is not staged")
    # Without the session's servers, or with a snippet that calls none of them, it is the
    # answer (code written for the user).
    assert isinstance(parse_reply(reply), FinalAnswer)
    snippet = "Final answer: Use this:\n```python\nimport os\nprint(os.listdir('.'))\n```"
    assert isinstance(parse_reply(snippet, objects={"git"}), FinalAnswer)
