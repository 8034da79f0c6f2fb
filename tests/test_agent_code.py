"""The agent loop in code mode: scripted model, the real sandbox, real MCP servers."""

from __future__ import annotations

import os
import threading

import pytest
from conftest import run_scripted, toy_server

from deskmate.app.agent import events as ev
from deskmate.app.agent.factory import build_agent
from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.prompt import EXAMPLE_ANSWER
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.tools.hub import Hub
from deskmate.tools.index import shows_signatures
from deskmate.tools.policy import Policy

pytestmark = pytest.mark.slow


def py(code: str, thought: str = "Let me check.") -> str:
    return f"{thought}\n```python\n{code}\n```"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    with Hub([toy_server(call_timeout=5)], tmp_path_factory.mktemp("logs")) as hub:
        assert hub.start()[0].status == "ready"
        yield hub


def run(hub, replies, task="task", policy=None, signature_tokens=1000, experience=None,
        parameters=0, **limits):
    model = ScriptedModel(replies, parameters=parameters)
    runtime = build_agent(model, hub=hub, policy=policy or Policy(yes_all=True),
                          limits=AgentLimits(**limits), signature_tokens=signature_tokens,
                          experience=experience)
    try:
        events = list(runtime.agent.run(task))
    finally:
        runtime.sandbox.close()
    return events, model, runtime


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_the_example_is_text_in_the_system_prompt_by_default(hub):
    _, model, _ = run(hub, ["Final answer: nothing to do"], task="Say hi")
    seen = model.calls[0]
    assert "Example (a made-up server" in seen[0].content and "Oslo" in seen[0].content
    assert seen[1].content == "Say hi"


def test_the_config_chooses_the_examples_form():
    from dataclasses import replace

    from deskmate.app.agent.factory import limits_from_config
    from deskmate.app.config import AgentConfig, Config

    assert limits_from_config(Config())[0].example == "auto"
    turns = replace(Config(), agent=AgentConfig(example="turns"))
    assert limits_from_config(turns)[0].example == "turns"


@pytest.mark.parametrize(("parameters", "example", "as_turns"), [
    (630_000_000, "auto", True),  # a 0.5B: turns
    (1_780_000_000, "auto", False),  # a 1.5B: text
    (0, "auto", False),  # size unknown (a server): text
    (1_780_000_000, "turns", True),  # the setting wins over the size
    (630_000_000, "text", False),
])
def test_auto_picks_the_examples_form_by_the_models_size(hub, parameters, example,
                                                         as_turns):
    _, model, runtime = run(hub, ["Final answer: nothing to do"], task="Say hi",
                            parameters=parameters, example=example)
    seen = model.calls[0]
    assert runtime.agent.example_turns is as_turns
    assert ("Oslo" in seen[0].content) is not as_turns  # the text example, or none
    assert (seen[1].content != "Say hi") is as_turns  # the exchange before the request


def test_the_model_sees_the_example_as_turns_which_are_not_recorded(hub):
    events, model, runtime = run(hub, ["Final answer: nothing to do"], task="Say hi",
                                 example="turns")
    seen = model.calls[0]
    assert seen[0].role == "system" and "Oslo" not in seen[0].content
    assert [m.role for m in seen[1:6]] == ["user", "user", "assistant", "user", "assistant"]
    assert "```python" in seen[3].content and seen[5].content == EXAMPLE_ANSWER
    assert seen[6].content == "Say hi"
    # The transcript (what sessions record and the judge reads) holds the conversation.
    assert runtime.agent.transcript[1].content == "Say hi"
    assert all("Oslo" not in m.content for m in runtime.agent.transcript)
    recorded = [e for e in events if isinstance(e, ev.MessageAppended)]
    assert all("Oslo" not in e.content for e in recorded)


def test_an_answer_that_copies_the_examples_answer_is_sent_back(hub):
    events, model, _ = run(hub, [EXAMPLE_ANSWER, py("print(toy.add(a=2, b=3))"),
                                 "Final answer: 5"], task="Add 2 and 3 with the tool",
                           example="turns")
    assert events[-1].status == "answered" and events[-1].steps == 3
    told = model.calls[1][-1].content
    assert told.startswith("That answer is the example's") and "this request" in told
    assert of(events, ev.FinalAnswer)[-1].text == "5"


def test_an_answer_is_a_copy_of_the_examples_with_a_word_changed_but_not_when_longer():
    from deskmate.app.agent.prompt import copies_example

    assert copies_example(EXAMPLE_ANSWER)
    assert copies_example("Final answer: Yes, about 4 mm of rain is forecast in Tokyo tomorrow.")
    assert copies_example("No, about 4 mm of rain is forecast in Oslo tomorrow.")
    assert not copies_example("Final answer: 23:30")
    # A real answer about rain, in words of its own.
    assert not copies_example("Final answer: Tokyo expects 4 mm of rain tomorrow, mostly in "
                              "the afternoon; take an umbrella to the 15:00 meeting.")


def test_system_prompt_lists_servers_not_signatures(hub):
    _, model, _ = run(hub, ["Final answer: nothing to do"], signature_tokens=0)
    system = model.calls[0][0].content
    assert "toy" in system and "echo" in system
    assert "add(a: int" not in system  # signatures load on demand


def test_a_small_catalog_is_listed_with_every_signature(hub):
    _, model, _ = run(hub, ["Final answer: 5"], task="Add 2 and 3 with the tool")
    system = model.calls[0][0].content
    assert shows_signatures(system.split("\n\n")[-1]) and "  add(a: int, b: int)" in system
    # Over the budget, the index names the tools and signatures load on demand.
    _, model, _ = run(hub, ["Final answer: 5"], task="Add 2 and 3 with the tool",
                      signature_tokens=20)
    assert "add(a: int" not in model.calls[0][0].content


def test_code_calls_tools_and_only_printed_output_returns(hub):
    events, model, _ = run(hub, [
        py("total = toy.add(a=2, b=3)\nbig = toy.echo(text='x' * 10_000)\nprint(total)"),
        "Final answer: 5",
    ])
    observation = of(events, ev.Observation)[0]
    assert observation.status == "ok" and observation.content == "Output:\n5"
    assert "xxxxxxxxxx" not in model.calls[1][-1].content  # stayed in program state
    finished = of(events, ev.ToolCallFinished)
    assert [(f.tool, f.is_error) for f in finished] == [("add", False), ("echo", False)]
    assert of(events, ev.FinalAnswer)[0].text == "5"
    assert events[-1].status == "answered" and events[-1].tool_calls == 2


def test_a_cell_that_came_to_nothing_sees_what_the_tools_returned(hub):
    # Code written against a guessed shape (HTML rows in a plain text) finds nothing:
    # the start of the result it never printed follows its output, once per tool.
    code = ("import re\npage = toy.echo(text='| Ada | CTO |\\n| Bo | CEO |')\n"
            "again = toy.echo(text='| Ada | CTO |')\n"
            "print(re.findall(r'<td>(.*?)</td>', page))")
    events, _, _ = run(hub, [py(code), "Final answer: none"])
    assert of(events, ev.Observation)[0].content == (
        "Output:\n[]\nNot printed by your code (a look at what the tools returned):\n"
        "toy.echo returned a str of 26 characters: | Ada | CTO |\n| Bo | CEO |")
    # Printed, a result is not shown again; a failed cell shows those it did not print.
    code = "page = toy.echo(text='abc')\nprint(page)\nprint(toy.add(a=400, b=2) + 'x')"
    events, _, _ = run(hub, [py(code), "Final answer: none"])
    content = of(events, ev.Observation)[0].content
    assert "TypeError" in content and "toy.echo returned" not in content
    assert content.endswith("toy.add returned an int: 402")


def test_state_persists_between_cells(hub):
    events, _, _ = run(hub, [py("x = toy.add(a=1, b=1)"), py("print(x * 10)"), "Final answer: 20"])
    assert of(events, ev.Observation)[1].content == "Output:\n20"


def test_help_search_and_helpful_errors(hub):
    events, _, _ = run(hub, [
        py("print(tool_help('toy', 'add'))"),
        py("print(search_tools('sum two numbers', k=2))"),
        py("toy.ad(a=1, b=2)"),
        py("toy.add(a='one', b=2)"),
        "Final answer: done",
    ])
    contents = [o.content for o in of(events, ev.Observation)]
    assert "def add(a: int, b: int)" in contents[0]
    assert "toy.add(" in contents[1]
    assert "ToolError" in contents[2] and "did you mean 'add'" in contents[2]
    assert "bad arguments for add" in contents[3] and "Signature:" in contents[3]


def test_tracebacks_and_malformed_replies(hub):
    events, _, _ = run(hub, ["", py("1/0"), "Final answer: ok"])
    contents = [o.content for o in of(events, ev.Observation)]
    assert "empty" in contents[0]
    assert "ZeroDivisionError" in contents[1]


def test_generation_stops_at_the_end_of_the_code_block(hub):
    invented = "\nOutput:\nmade-up output\nFinal answer: fake"
    events, _, runtime = run(hub, [py("print('real')") + invented, "Final answer: real"])
    assistant = next(m for m in runtime.agent.transcript if m.role == "assistant")
    assert assistant.content.endswith("```") and "made-up" not in assistant.content
    assert of(events, ev.FinalAnswer)[0].text == "real"


def test_repeated_cell_ends_the_turn(hub):
    # The second time, the cell is not run: the model is told so, with the request
    # again; the third time, on the turn's last step, ends the turn (with a step left
    # the answer is asked for first: tests/test_repeat_answer.py).
    events, model, _ = run(hub, [py("print(1)")] * 3, task="Print one.", max_steps=3)
    assert events[-1].status == "repetition" and len(model.calls) == 3
    observations = [o.content for o in of(events, ev.Observation)]
    assert observations[0] == "Output:\n1" and len(observations) == 2
    assert observations[1].startswith("Not run: ") and observations[1].endswith("Print one.")


def test_a_repeated_cell_that_failed_is_answered_with_its_error_and_hint(hub):
    # The hint was skipped once; it comes again, last, with the error it was for.
    cell = py("totals = {'sum': 3}\nprint(totals['Sum'])")
    events, _, _ = run(hub, [cell, cell, "Final answer: 3"], task="Print the sum.")
    repeated = [o.content for o in of(events, ev.Observation)][1]
    assert repeated.startswith("Not run: ")
    assert repeated.endswith("The request: Print the sum.\nThat code failed: KeyError: "
                             "'Sum'\nHint: totals has no key 'Sum'; its keys are 'sum' (3); "
                             "likely meant totals['sum']")


def test_tool_call_limit(hub):
    # Refused calls (here: repeats) do not count; going over the limit ends the turn.
    code = ("for i in [0, 0, 0, 0, 1, 2, 3]:\n    try:\n        toy.echo(text=str(i))\n"
            "    except Exception as exc:\n        print(exc)")
    events, _, _ = run(hub, [py(code), "Final answer: x"], max_tool_calls=4)
    content = of(events, ev.Observation)[0].content
    assert "already called 3 times" in content and "tool call limit reached" in content
    assert len(of(events, ev.ToolCallFinished)) == 4
    assert events[-1].status == "max_tool_calls" and events[-1].tool_calls == 4


def test_a_call_made_again_in_each_new_cell_is_not_a_runaway_loop(hub):
    # A small model rewrites the whole cell, its reads included, after each error.
    cells = [py(f"print(toy.echo(text='a'))\nprint({n})") for n in range(4)]
    events, _, _ = run(hub, [*cells, "Final answer: a"], max_steps=6)
    outputs = [o.content for o in of(events, ev.Observation)]
    assert len(outputs) == 4 and not any("already called" in o for o in outputs)
    assert events[-1].status == "answered"


def test_approval_callback_is_asked_and_obeyed(hub):
    asked = []

    def approver(request):
        asked.append((request.tool.name, request.arguments))
        return "deny" if request.tool.name == "echo" else "allow_once"

    events, _, _ = run(hub, [py("print(toy.add(a=1, b=2))\nprint(toy.echo(text='no'))"),
                             "Final answer: 3"], policy=Policy(approver=approver))
    assert asked == [("add", {"a": 1, "b": 2}), ("echo", {"text": "no"})]
    decisions = [(e.decision, e.decided_by) for e in of(events, ev.ToolApprovalDecided)]
    assert decisions == [("allow_once", "user"), ("deny", "user")]
    assert len(of(events, ev.ToolApprovalNeeded)) == 2
    content = of(events, ev.Observation)[0].content
    assert "3" in content and "the user denied this call" in content


def test_cancel_during_a_long_tool_call(hub):
    model = ScriptedModel([py("toy.slow(seconds=10)"), "Final answer: never"])
    runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True))
    cancel = threading.Event()
    try:
        events = []
        for event in runtime.agent.run("wait", cancel):
            events.append(event)
            if isinstance(event, ev.ToolCallStarted):
                threading.Timer(0.5, cancel.set).start()
    finally:
        runtime.sandbox.close()
    assert events[-1].status == "cancelled" and events[-1].wall_s < 8


def test_unique_tool_names_also_work_bare(hub):
    events, _, _ = run(hub, [py("print(add(a=40, b=2))"), "Final answer: 42"])
    assert of(events, ev.Observation)[0].content == "Output:\n42"
    assert of(events, ev.ToolCallFinished)[0].tool == "add"


def test_bare_call_of_a_shadowed_tool_gets_a_hint(hub):
    # A tool name with no bare alias (here: deleted by the code) gets a NameError that
    # says how to call it.
    events, _, _ = run(hub, [py("del add\nadd(a=1, b=2)"), "Final answer: x"])
    content = of(events, ev.Observation)[0].content
    assert "NameError" in content and "call it as toy.add(a: int, b: int)" in content


def test_a_made_up_name_gets_the_closest_tool_or_the_servers(hub):
    events, _, _ = run(hub, [py("print(adds(a=1, b=2))"), py("calculator.calculate('1+2')"),
                             "Final answer: x", "Final answer: x"])
    close, unknown, _check = (o.content for o in of(events, ev.Observation))
    assert "did you mean toy.add(a: int, b: int)?" in close
    assert "calculator is not defined" in unknown and "servers toy" in unknown
    assert "search_tools(" in unknown


def test_a_failed_call_with_positional_arguments_shows_their_binding(hub):
    # Positional arguments bind in signature order; when the call fails, the model sees
    # which parameter got which value and the call written with names.
    events, _, _ = run(hub, [py("toy.add('2', 3)"), py("toy.echo('hi')"), "Final answer: x"])
    failed, one_param = (o.content for o in of(events, ev.Observation))
    assert "bound in signature order: a='2', b=3" in failed
    assert "Signature: def add(a: int, b: int)" in failed
    assert "e.g. toy.add(a=0, b=0)" in failed
    assert "bound" not in one_param  # one parameter cannot bind wrongly


def test_resumed_turns_count_the_users_messages_not_observations(hub):
    # A resumed agent counts its turns from the transcript; cell outputs and corrections
    # are user-role messages too, but not turns.
    _, _, first = run(hub, ["", py("print(1)"), py("print(2)"), "Final answer: done"])
    model = ScriptedModel([py("print(3)"), "Final answer: again"])
    runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True),
                          transcript=first.agent.transcript)
    try:
        events = list(runtime.agent.run("next"))
    finally:
        runtime.sandbox.close()
    assert events[0].turn == 2 and events[-1].turn == 2


def test_a_long_cell_stops_at_the_turn_deadline(hub):
    events, _, _ = run(hub, [py("import time\ntime.sleep(30)"), "Final answer: late"],
                       wall_s=2.0)
    assert events[-1].status == "timeout" and events[-1].wall_s < 8
    assert of(events, ev.Observation)[0].status in {"timeout", "killed"}


class SlowModel(ScriptedModel):
    """Streams its reply one piece every 0.2 s, stopping when asked."""

    def stream(self, messages, params=None, cancel=None):
        import time

        for event in super().stream(messages, params, cancel):
            time.sleep(0.2)
            if cancel is not None and cancel.is_set():
                from deskmate.app.llm.base import Finished, Usage

                yield Finished("", "cancelled", Usage())
                return
            yield event


def test_a_long_model_call_stops_at_the_turn_deadline(hub):
    model = SlowModel(["x" * 600], chunk=1)  # 600 pieces: two minutes
    runtime = build_agent(model, hub=hub, limits=AgentLimits(wall_s=1.5))
    try:
        events = list(runtime.agent.run("talk"))
    finally:
        runtime.sandbox.close()
    assert events[-1].status == "timeout" and events[-1].wall_s < 6
    assert not of(events, ev.FinalAnswer)


def test_an_answer_about_the_users_data_before_any_tool_ran_is_checked_once(hub):
    from deskmate.app.agent.parse import UNREAD_DATA

    events, _, runtime = run(hub, [
        "Final answer: 42", py("print(toy.add(a=40, b=2))"), "Final answer: 42"],
        task="Add the two numbers in /data/pair.txt")
    assert of(events, ev.Observation)[0].content == UNREAD_DATA
    assert events[-1].status == "answered" and events[-1].tool_calls == 1
    assert runtime.agent.turns == 1  # the check is feedback, not a user's turn
    # Once per turn: a second answer without tools is taken; no check where no data is named.
    events, _, _ = run(hub, ["Final answer: a", "Final answer: b"], task="Sum the file a.csv")
    assert of(events, ev.FinalAnswer)[0].text == "b" and events[-1].steps == 2
    events, _, _ = run(hub, ["Final answer: 4"], task="What is 2 + 2?")
    assert events[-1].status == "answered" and events[-1].steps == 1


def test_a_change_reported_done_when_no_tool_changed_anything_is_checked_once(tmp_path):
    from deskmate.app.agent.parse import UNCHANGED

    with Hub([toy_server("notes", "annotated.py")], tmp_path) as notes:
        assert notes.start()[0].status == "ready"
        events, _, runtime = run(notes, [
            py("print(notes.read_note(key='a'))"), "Final answer: The note is deleted.",
            py("print(notes.delete_note(key='a'))"), "Final answer: Deleted."],
            task="Read note a, then remove it.", head_start=0)
        checks = [o.content for o in of(events, ev.Observation) if o.content == UNCHANGED]
        assert len(checks) == 1 and runtime.agent.turns == 1
        assert of(events, ev.FinalAnswer)[0].text == "Deleted." and events[-1].tool_calls == 2
        # Once a turn; and a question, or an answer after the change, is taken as it is.
        events, _, _ = run(notes, [py("print(notes.read_note(key='a'))"), "Final answer: a",
                                   "Final answer: b"], task="Remove note a.", head_start=0)
        assert of(events, ev.FinalAnswer)[0].text == "b" and events[-1].steps == 3
        # After the check for unread data asked for a tool and none ran, no second check.
        events, _, _ = run(notes, ["Final answer: a", "Final answer: b"],
                           task="Delete note a.", head_start=0)
        assert of(events, ev.FinalAnswer)[0].text == "b" and events[-1].steps == 2
        events, _, _ = run(notes, [py("print(notes.read_note(key='a'))"), "Final answer: x"],
                           task="What does note a say?", head_start=0)
        assert events[-1].steps == 2
        # With one step left the change is still checked (the last step can make it,
        # where an answer's other checks need two), and the step after is the last.
        events, _, _ = run(notes, [py("print(notes.read_note(key='a'))"), "Final answer: x",
                                   py("print(notes.delete_note(key='a'))")],
                           task="Remove note a.", head_start=0, max_steps=3)
        assert [o.content for o in of(events, ev.Observation)][1] == UNCHANGED
        assert events[-1].status == "max_steps" and events[-1].tool_calls == 2


def test_an_answer_naming_files_nothing_showed_is_checked_once(hub):
    from deskmate.app.agent.parse import UNSEEN_NAMES

    events, _, runtime = run(hub, [
        py("print(toy.echo(text='commit 1: Initial commit'))"),
        "Final answer: It added README.md and notes.txt.",
        py("print(toy.echo(text='main.go notes.txt'))"),
        "Final answer: It added main.go and notes.txt.",
    ], task="Which files did the first commit in /repo add?", head_start=0)
    checks = [o.content for o in of(events, ev.Observation)
              if o.content.startswith(UNSEEN_NAMES)]
    assert len(checks) == 1 and "README.md, notes.txt. Run the code" in checks[0]
    assert of(events, ev.FinalAnswer)[0].text == "It added main.go and notes.txt."
    assert runtime.agent.turns == 1
    # Names the request or a tool's output gave are seen; once a turn; none without calls.
    events, _, _ = run(hub, [py("print(toy.echo(text='done'))"),
                             "Final answer: a.csv now holds the total."],
                       task="Write the total to a.csv", head_start=0)
    assert events[-1].steps == 2
    events, _, _ = run(hub, [py("print(toy.echo(text='x'))"), "Final answer: b.md",
                             "Final answer: c.md"], task="Which file?", head_start=0)
    assert of(events, ev.FinalAnswer)[0].text == "c.md" and events[-1].steps == 3


def test_an_answer_still_naming_unseen_files_after_the_code_ran_gets_the_files_shown(hub):
    from deskmate.app.agent.parse import UNSEEN_AGAIN

    events, _, _ = run(hub, [
        py("print(toy.echo(text='Message: Initial commit'))"),
        "Final answer: README.md",
        py("print(toy.echo(text='--- /dev/null\\n+++ b/go.mod\\n+++ b/cmd/main.go'))"),
        "Final answer: README.md",
        "Final answer: go.mod and cmd/main.go",
    ], task="Which files did the first commit in /repo add?", head_start=0)
    again = [o.content for o in of(events, ev.Observation) if UNSEEN_AGAIN in o.content]
    assert again == ["README.md" + UNSEEN_AGAIN + " The files this task's outputs name: "
                     "go.mod, cmd/main.go, main.go. Answer with the ones the request asks "
                     "for, written as the output writes them."]
    assert of(events, ev.FinalAnswer)[0].text == "go.mod and cmd/main.go"
    # Twice a turn at most: a third guess is taken.
    events, _, _ = run(hub, [
        py("print(toy.echo(text='x'))"), "Final answer: a.md", py("print(toy.echo(text='y'))"),
        "Final answer: a.md", py("print(toy.echo(text='z'))"), "Final answer: a.md",
    ], task="Which file?", head_start=0)
    assert of(events, ev.FinalAnswer)[0].text == "a.md" and events[-1].steps == 6


def test_an_answer_before_the_requests_web_address_was_opened_is_checked_once(tmp_path):
    from deskmate.app.agent.parse import UNOPENED

    task = "Save the text at http://127.0.0.1:9/license.txt, as note lic."
    with Hub([toy_server("notes", "annotated.py")], tmp_path) as notes:
        assert notes.start()[0].status == "ready"
        events, _, _ = run(notes, [
            py("print(notes.touch(key='lic'))"), "Final answer: Saved.",
            py("print(notes.fetch_page(url='http://127.0.0.1:9/license.txt'))"),
            "Final answer: Saved it."], task=task, head_start=0)
        checks = [o.content for o in of(events, ev.Observation) if UNOPENED in o.content]
        assert checks == ["http://127.0.0.1:9/license.txt" + UNOPENED + " Call "
                          "notes.fetch_page(url: str) with it and use what it returns for "
                          "what the request asks; then answer."]
        assert of(events, ev.FinalAnswer)[0].text == "Saved it."
        # Once a turn; and not before any tool ran (that is the unread-data check's).
        events, _, _ = run(notes, [py("print(notes.touch(key='lic'))"), "Final answer: a",
                                   "Final answer: b"], task=task, head_start=0)
        assert of(events, ev.FinalAnswer)[0].text == "b"


def test_an_answer_about_what_a_file_holds_from_a_listing_is_checked_once(hub):
    from deskmate.app.agent.parse import UNREAD_FILES

    task = "Which Python file in /src contains a TODO, and what does it say?"
    # (a listing from a call whose arguments do not name the files, as a folder's does)
    listing = py("names = ['main.py', 'util.py']\nprint(toy.add(a=1, b=1))\n"
                 "print('\\n'.join('[FILE] ' + name for name in names))")
    events, _, _ = run(hub, [listing, "Final answer: main.py has the TODO.",
                             py("print(toy.echo(text='/src/util.py: # TODO: cache'))"),
                             "Final answer: main.py"], task=task, head_start=0)
    checks = [o.content for o in of(events, ev.Observation) if UNREAD_FILES in o.content]
    assert checks == ["main.py" + UNREAD_FILES + " Read the files the request is about with "
                      "the tool that reads a file (each of them, in a for loop) and print "
                      "what they hold; then answer from it."]
    assert of(events, ev.FinalAnswer)[0].text == "main.py"
    # A file a call was given was read; a question that is not about contents is not held.
    read = py("print(toy.echo(text='/src/main.py'))")
    events, _, _ = run(hub, [listing, read, "Final answer: main.py"], task=task, head_start=0)
    assert events[-1].steps == 3
    events, _, _ = run(hub, [listing, "Final answer: main.py"],
                       task="Which file in /src is the largest?", head_start=0)
    assert events[-1].steps == 2


def test_an_answer_with_a_requested_change_no_tool_made_is_checked_once(hub):
    from deskmate.app.agent.parse import MISSING_STEP

    task = "Echo the word hi, and add 2 and 3."
    events, _, _ = run(hub, [py("print(toy.echo(text='hi'))"), "Final answer: hi",
                             py("print(toy.add(a=2, b=3))"), "Final answer: hi, 5"],
                       task=task, head_start=0)
    checks = [o.content for o in of(events, ev.Observation)
              if o.content.startswith(MISSING_STEP)]
    assert checks == [MISSING_STEP + "add, and no tool that does that has run in this task: "
                      "toy.add(a: int, b: int). Call it with the request's values and print "
                      "what it returns; then answer."]
    assert of(events, ev.FinalAnswer)[0].text == "hi, 5"
    # Done, or "add" not a change the request asks for (a noun, not a clause's verb).
    for task, code in (("Echo hi, then add 2 and 3.", "toy.add(a=2, b=3)\nprint('hi')"),
                       ("Echo the add of the day.", "print(toy.echo(text='x'))")):
        events, _, _ = run(hub, [py(code), "Final answer: ok"], task=task, head_start=0)
        assert events[-1].steps == 2


def test_a_printing_cell_written_again_while_a_change_is_undone_names_the_step(hub):
    from deskmate.app.agent.parse import MISSING_STEP, REPEATED, REPEATED_HEAD, is_feedback

    task = "Echo the word hi, and add 2 and 3."
    echo = py("print(toy.echo(text='hi'))")
    events, _, _ = run(hub, [echo, echo, py("print(toy.add(a=2, b=3))"), "Final answer: 5"],
                       task=task, head_start=0)
    seen = [o.content for o in of(events, ev.Observation)]
    assert seen[1] == (REPEATED_HEAD + MISSING_STEP + "add, and no tool that does that has "
                       "run in this task: toy.add(a: int, b: int). Call it with the "
                       "request's values and print what it returns; then answer.")
    assert is_feedback(seen[1]) and events[-1].status == "answered"
    # Every change made, or a cell that printed nothing: the request, read again.
    for request, cell in (("Echo the word hi.", echo), (task, py("said = toy.echo(text='hi')"))):
        events, _, _ = run(hub, [cell, cell, "Final answer: ok"], task=request, head_start=0)
        assert of(events, ev.Observation)[1].content.startswith(REPEATED + request)


def test_a_step_the_request_rules_out_is_neither_offered_nor_run(hub):
    task = "Echo the word hi, but do not add anything."
    events, model, _ = run(hub, [py("print(toy.echo(text='hi'))\nprint(toy.add(a=2, b=3))"),
                                 "Final answer: hi"], task=task, signature_tokens=0)
    offered = model.calls[0][2].content
    assert "toy.echo(text: str)" in offered and "toy.add" not in offered
    seen = of(events, ev.Observation)[0].content
    assert seen.startswith("Output:\nhi\n")
    assert ('toy.add was not run: the request says "do not add". Leave that step out and '
            "do the rest of what it asks.") in seen
    assert [c.tool for c in of(events, ev.ToolCallStarted)] == ["echo"]
    # Another turn that does not rule it out runs it.
    events, _, _ = run(hub, [py("print(toy.add(a=2, b=3))"), "Final answer: 5"],
                       task="Add 2 and 3, and do not echo it.")
    assert of(events, ev.Observation)[0].content == "Output:\n5"


def test_without_read_only_marks_no_answer_is_held_for_a_missing_change(hub):
    # The toy server marks nothing read-only: no call can be told to have changed nothing.
    events, _, _ = run(hub, [py("print(toy.add(a=1, b=2))"), "Final answer: saved"],
                       task="Add 1 and 2 and save the sum.")
    assert events[-1].status == "answered" and events[-1].steps == 2


def test_the_head_start_shows_the_best_matching_tools_before_step_one(hub):
    events, model, runtime = run(hub, ["Final answer: 5"], task="Add 2 and 3 with the tool",
                                 signature_tokens=0)
    first = model.calls[0]
    assert first[2].role == "user" and "toy.add(a: int, b: int)" in first[2].content
    assert len(first) == 3
    assert runtime.agent.turns == 1 and events[-1].tool_calls == 0
    _, model, _ = run(hub, ["Final answer: 5"], task="Add 2 and 3", head_start=0,
                      signature_tokens=0)
    assert [m.role for m in model.calls[0]] == ["system", "user"]


def test_the_head_start_finds_a_tool_for_each_step_of_the_request(tmp_path):
    # Each step's words find its own tool: the note reader for the first, the deleter for
    # the second, where one search for the whole request could show either alone.
    with Hub([toy_server("notes", "annotated.py")], tmp_path) as notes:
        assert notes.start()[0].status == "ready"
        _, model, _ = run(notes, ["Final answer: done"], signature_tokens=0, head_start=2,
                          task="Read the note called a, and then delete the note called a.")
        found = model.calls[0][2].content
        assert "notes.read_note(key: str)" in found and "notes.delete_note(key: str)" in found


def test_an_answer_read_from_a_failed_cells_look_at_its_results_is_taken(hub):
    # The cell indexed a text result like a dict and failed; the error shows the value
    # the failing line held (a result shown there needs no look of its own), and the
    # answer that gives it is from the data.
    events, _, _ = run(hub, [py("r = toy.echo(text='Author: Robin Quill')\nprint(r['author'])"),
                             "Final answer: Robin Quill"], task="Who is the author?")
    observations = of(events, ev.Observation)
    assert [o.status for o in observations] == ["error"]
    assert "The values on that line: r = 'Author: Robin Quill'" in observations[0].content
    assert "Not printed by your code" not in observations[0].content
    assert of(events, ev.FinalAnswer)[0].text == "Robin Quill" and events[-1].steps == 2
    # An answer that gives nothing the look showed is still checked.
    events, _, _ = run(hub, [py("r = toy.echo(text='Author: Robin Quill')\nprint(r['author'])"),
                             "Final answer: Nobody.", "Final answer: Robin Quill"],
                       task="Who is the author?")
    assert "right after an error" in of(events, ev.Observation)[-1].content
    # ... and so is one that gives a number the value does not hold (its length).
    events, _, _ = run(hub, [py("r = toy.echo(text='Author: Robin Quill')\nprint(r['author'])"),
                             "Final answer: 19", "Final answer: Robin Quill"],
                       task="Who is the author?")
    assert "right after an error" in of(events, ev.Observation)[-1].content


def test_an_answer_right_after_a_failed_cell_is_checked_twice(hub):
    # Small models restate the error as the answer; once a turn the loop asks for the fix.
    events, _, runtime = run(hub, [
        py("toy.add(a='one', b=2)"), "Final answer: the call failed.",
        py("print(toy.add(a=1, b=2))"), "Final answer: 3"])
    observations = of(events, ev.Observation)
    assert [o.status for o in observations] == ["error", "error", "ok"]
    assert "right after an error" in observations[1].content
    assert of(events, ev.FinalAnswer)[0].text == "3" and runtime.agent.turns == 1
    # An answer that reads like an error's report (not word for word a failed output)
    # is checked the same way, once.
    events, _, _ = run(hub, [
        py("toy.add(a='one', b=2)"), py("print(1)"),
        "Final answer: Error: Traceback (most recent call last): ...", "Final answer: 1"])
    assert "right after an error" in of(events, ev.Observation)[-1].content
    assert of(events, ev.FinalAnswer)[0].text == "1"
    # Twice a turn (a fix that failed again is checked too); the third answer is taken.
    events, _, _ = run(hub, [py("toy.add(a='x', b=2)"), "Final answer: a",
                             py("toy.add(a='y', b=2)"), "Final answer: b",
                             py("toy.add(a='z', b=2)"), "Final answer: c"], max_steps=8)
    assert of(events, ev.FinalAnswer)[0].text == "c" and events[-1].steps == 6
    # No check with fewer than two steps left (code, then an answer): the answer is taken.
    events, _, _ = run(hub, [py("toy.add(a='x', b=2)"), "Final answer: a"], max_steps=3)
    assert of(events, ev.FinalAnswer)[0].text == "a" and events[-1].steps == 2


def test_a_failed_cells_output_written_back_as_the_answer_is_sent_back_twice(hub):
    # Told to fix the error, small models write the failed output back (its look at the
    # tools' results would pass it as read): that is never the answer, twice a turn.
    failed = py("page = toy.echo(text='Ada Lovelace')\nprint(page['author'])")
    echo = ("Error: Traceback (most recent call last):\n  File \"<cell 1>\", line 2\n"
            "TypeError: string indices must be integers\n"
            "toy.echo returned a str of 12 characters: Ada Lovelace")
    events, _, _ = run(hub, [failed, "Final answer: " + echo, echo, echo, "Final answer: x"],
                       task="Who is the author?")
    checks = [o.content for o in of(events, ev.Observation)][1:]
    assert [c[:26] for c in checks] == ["That reply copies the erro"] * 2 + [
        "That answer came right aft"]
    assert of(events, ev.FinalAnswer)[0].text == "x" and events[-1].steps == 5
    # An error read from the user's data is an answer: no failed output holds it.
    events, _, _ = run(hub, [py("print(toy.echo(text='12:00 Error: disk full on /var'))"),
                             "Final answer: Error: disk full on /var"],
                       task="What does the log's last line say?")
    assert of(events, ev.FinalAnswer)[0].text == "Error: disk full on /var"


def test_an_answer_followed_by_the_tool_calls_of_its_fix_runs_them(hub):
    events, _, _ = run(hub, [
        "Final answer: add them with the tool:\n```python\nprint(toy.add(a=2, b=3))\n```",
        "Final answer: 5"])
    assert of(events, ev.CodeAction)[0].code == "print(toy.add(a=2, b=3))"
    assert of(events, ev.FinalAnswer)[0].text == "5" and events[-1].tool_calls == 1


def test_a_call_without_a_fence_runs_as_code(hub):
    events, _, _ = run(hub, ["I will add them.\ntoy.add(a=2, b=3)", "Final answer: 5"])
    assert of(events, ev.CodeAction)[0].code == "toy.add(a=2, b=3)"
    assert of(events, ev.Observation)[0].content == "Output:\n5"


def test_a_solved_request_rated_up_comes_back_as_an_example_for_a_similar_one(hub, tmp_path):
    from deskmate.app.agent.factory import load_experience
    from deskmate.app.store import Recorder, open_db
    from deskmate.app.store.sessions import rate

    path = tmp_path / "sessions.db"
    assert load_experience(path) is None  # no database yet: nothing to recall
    with open_db(path) as db:
        for task, cells, rating in (
                ("Add 2 and 3 in /home/ann/sums with the tool",
                 [py("print(toy.add(a=2, b='x'))"), py("print(toy.add(a=2, b=3))")], "up"),
                ("Echo the word hello back", [py("print(toy.echo(text='hello'))")], "down")):
            events, _, _ = run(hub, [*cells, "Final answer: done"], task=task)
            recorder = Recorder.new(db, model="scripted", mode="code", title="t")
            for event in events:
                recorder.record(event)
            rate(db, recorder.session_id, rating)
    experience = load_experience(path)
    assert experience is not None and len(experience) == 1  # the one rated up
    _, model, _ = run(hub, ["Final answer: 9"], task="Add 4 and 5 in /home/bo/more with the tool",
                      experience=experience)
    example = model.calls[0][2].content
    assert example.startswith("An earlier request like this one was solved by this code")
    # Only the cell that ran without an error, the folder made this request's.
    assert "toy.add(a=2, b=3)" in example and "b='x'" not in example
    assert "Request: Add 2 and 3 in /home/bo/sums with the tool" in example
    assert "Final answer" not in example  # never the earlier answer
    # Unlike requests, and the same request in an eval, recall nothing.
    assert experience.recall("What is the weather in Oslo?", ["toy"]) is None
    assert experience.recall("Add 2 and 3 in /x/y with the tool", ["other"]) is None
    same = load_experience(path, skip_same=True)
    assert same is not None and same.recall("Add 2 and 3 in /x/sums with the tool", ["toy"]) is None


def test_a_relative_path_to_a_file_the_request_names_is_that_file(file_hub):
    hub, folder = file_hub
    (folder / "poem.txt").write_text("one\ntwo\nthree\n")
    task = (f"In the folder {folder}, count the lines of poem.txt and write the number "
            "into LINES.txt.")
    cell = ("```python\nn = len(open('poem.txt').read().splitlines())\n"
            "with open('LINES.txt', 'w') as f:\n    f.write(str(n))\nprint(n)\n```")
    events = run_scripted(hub, [cell, "Final answer: 3 lines, written."], task)
    assert (folder / "LINES.txt").read_text() == "3"
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert f"the request's file {folder}/LINES.txt" in output
    assert [e.tool for e in events if isinstance(e, ev.ToolCallStarted)] == [
        "read_text_file", "write_file"]


def test_folders_made_files_moved_and_globbed_by_plain_python_are_the_users(file_hub):
    hub, folder = file_hub
    for name in ("a.log", "b.log"):
        (folder / name).write_text(name)
    task = f"Move the .log files in {folder} into a new folder {folder}/logs."
    cell = ("```python\nimport os, shutil\n"
            f"os.makedirs('{folder}/logs', exist_ok=True)\n"
            "for name in ('a.log', 'b.log'):\n"
            f"    shutil.move('{folder}/' + name, '{folder}/logs')\n"
            "import glob, pathlib\n"
            f"print(sorted(glob.glob('{folder}/logs/*.log')), "
            f"pathlib.Path('{folder}/logs/a.log').exists(), "
            f"os.path.getsize('{folder}/logs/a.log'))\n```")
    events = run_scripted(hub, [cell, "Final answer: moved."], task)
    # The real server made the folder and moved the files: real calls, on the disk.
    assert sorted(p.name for p in (folder / "logs").iterdir()) == ["a.log", "b.log"]
    assert not (folder / "a.log").exists() and (folder / "logs" / "b.log").read_text() == "b.log"
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert f"['{folder}/logs/a.log', '{folder}/logs/b.log'] True 5" in output
    started = [e.tool for e in events if isinstance(e, ev.ToolCallStarted)]
    assert started.count("create_directory") == 1 and started.count("move_file") == 2


def test_stat_and_scandir_on_the_users_files_ask_the_file_tools(file_hub):
    # "Which file is the newest / the largest": os.stat, os.path.getmtime, Path.stat and
    # os.scandir on the user's paths go through list_directory and get_file_info.
    hub, folder = file_hub
    reports = folder / "reports"
    reports.mkdir()
    for name, text, when in (("old.txt", "a" * 300, 1_600_000_000),
                             ("new.txt", "b" * 20, 1_700_000_000)):
        (reports / name).write_text(text)
        os.utime(reports / name, (when, when))
    (reports / "archive").mkdir()
    task = f"Which file in {reports} was changed last, and which is the largest?"
    cell = ("```python\nimport os, pathlib\n"
            f"top = '{reports}'\n"
            "with os.scandir(top) as scan:\n"
            "    files = sorted(e.name for e in scan if e.is_file())\n"
            "sizes = {n: os.stat(os.path.join(top, n)).st_size for n in files}\n"
            "times = {n: os.path.getmtime(os.path.join(top, n)) for n in files}\n"
            "mode = pathlib.Path(top, 'archive').stat().st_mode\n"
            "entry = next(e for e in os.scandir(top) if e.name == 'new.txt')\n"
            "print(files, sizes, max(times, key=times.get), int(times['new.txt']),\n"
            "      __import__('stat').S_ISDIR(mode), entry.stat().st_size, entry.path)\n```")
    events = run_scripted(hub, [cell, "Final answer: new.txt, old.txt."], task)
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert (f"['new.txt', 'old.txt'] {{'new.txt': 20, 'old.txt': 300}} new.txt 1700000000 "
            f"True 20 {reports}/new.txt") in output
    started = [e.tool for e in events if isinstance(e, ev.ToolCallStarted)]
    assert set(started) == {"list_directory", "get_file_info"}
    # A missing user's file is still a missing file, as plain Python says it.
    events = run_scripted(hub, [py(f"import os\nos.stat('{reports}/gone.txt')"),
                                "Final answer: gone."], task)
    output = next(e.content for e in events if isinstance(e, ev.Observation))
    assert "FileNotFoundError" in output


def test_a_reply_cut_off_mid_cell_is_not_run_and_says_why(hub):
    # The reply ran out of tokens before its block closed: run, it was a syntax error at
    # its last line, which the 1.5B answered with the same cut-off cell.
    cut = "Adding them.\n```python\n# add the two numbers\ntotal = toy.add(a=2,"
    events, _, _ = run(hub, [cut, py("print(toy.add(a=2, b=3))"), "Final answer: 5"])
    first, second = of(events, ev.Observation)[:2]
    assert first.content.startswith("Not run: your reply reached its length limit before "
                                    "the code ended") and first.status == "error"
    assert second.content == "Output:\n5" and events[-1].tool_calls == 1
    # An unclosed block that parses (a model without the grammar, or its EOS) still runs.
    events, _, _ = run(hub, ["```python\nprint(toy.add(a=1, b=1))", "Final answer: 2"])
    assert of(events, ev.Observation)[0].content == "Output:\n2"
