"""The first look at a request's files and folders (app/agent/first_look.py): through the
code-mode loop with the real MCP filesystem server, and the path parsing on its own."""

from __future__ import annotations

import pytest

from deskmate.app.agent import events as ev
from deskmate.app.agent.factory import build_agent
from deskmate.app.agent.first_look import HEADER
from deskmate.app.agent.loop import AgentLimits
from deskmate.app.agent.parse import is_feedback
from deskmate.app.agent.request import request_paths
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.tools.hub import Hub, ServerConfig
from deskmate.tools.policy import Policy


def test_the_config_turns_the_first_look_off():
    from dataclasses import replace

    from deskmate.app.agent.factory import limits_from_config
    from deskmate.app.config import AgentConfig, Config

    assert limits_from_config(Config())[0].first_look is True
    off = replace(Config(), agent=AgentConfig(first_look=False))
    assert limits_from_config(off)[0].first_look is False


def test_the_paths_of_a_request_come_without_the_sentences_punctuation():
    request = ("Read /home/u/latency.log, then write the median into /home/u/median.txt. "
               "Also list /home/u/reports/ and /home/u/latency.log again; see https://x.org/a.")
    assert request_paths(request) == ["/home/u/latency.log", "/home/u/median.txt",
                                      "/home/u/reports/"]
    assert request_paths("What is 2/3 of 9? And and/or?") == []


@pytest.fixture(scope="module")
def hub(tmp_path_factory, mcp_bin):
    workdir = tmp_path_factory.mktemp("look")
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    (workdir / "latency.log").write_text("".join(f"GET /p{i} {100 + i}ms\n" for i in range(60)))
    (workdir / "expenses").mkdir()
    for name in ("march.csv", "april.csv"):
        (workdir / "expenses" / name).write_text("item,amount\nrent,900\n")
    server = ServerConfig("filesystem", command=str(npm / "mcp-server-filesystem"),
                          args=(str(workdir),))
    with Hub([server], workdir) as hub:
        assert all(s.status == "ready" for s in hub.start())
        yield hub, workdir


def run(hub, task: str, **limits):
    model = ScriptedModel(["Final answer: -"])
    runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True),
                          limits=AgentLimits(**limits))
    try:
        events = list(runtime.agent.run(task))
    finally:
        runtime.sandbox.close()
    return events, model.calls[0]


@pytest.mark.slow
def test_the_requests_files_are_read_and_its_folders_listed_before_step_one(hub):
    hub, workdir = hub
    task = (f"{workdir}/latency.log has one request a line. Write the median latency into "
            f"{workdir}/median.txt, and the totals of the files in {workdir}/expenses.")
    events, seen = run(hub, task)
    note = seen[-1].content
    assert seen[-1].role == "user" and note.startswith(HEADER)
    # The file's first lines, with the call that read them; that there is more.
    assert f"filesystem.read_text_file(path='{workdir}/latency.log'):\nGET /p0 100ms\n" in note
    assert "GET /p11 111ms\n… (more lines)" in note and "GET /p12" not in note
    # The folder's listing; the file still to be written is not mentioned.
    assert f"filesystem.list_directory(path='{workdir}/expenses'):\n" in note
    assert "[FILE] april.csv" in note and "[FILE] march.csv" in note
    assert "median.txt" not in note
    # Real calls, in this turn's count, and none of them failed in front of the user.
    finished = [e for e in events if isinstance(e, ev.ToolCallFinished)]
    assert [e.tool for e in finished] == ["list_directory", "read_text_file", "list_directory"]
    assert not any(e.is_error for e in finished) and events[-1].tool_calls == 3


@pytest.mark.slow
def test_a_file_without_an_extension_is_read_not_listed(hub):
    # "Add an entry to …/hosts": the 1.5B, shown no look, made a folder called hosts.
    hub, workdir = hub
    (workdir / "hosts").write_text("127.0.0.1 localhost\n10.0.0.2 nas.local\n")
    events, seen = run(hub, f"Add printer.local at 192.168.1.40 to {workdir}/hosts.")
    note = seen[-1].content
    assert f"filesystem.read_text_file(path='{workdir}/hosts'):\n127.0.0.1 localhost\n" in note
    assert f"list_directory(path='{workdir}/hosts')" not in note
    # (its listing was tried first, as a folder's; the folder above said it is a file)
    finished = [e.tool for e in events if isinstance(e, ev.ToolCallFinished)]
    assert finished == ["list_directory", "list_directory", "read_text_file"]


@pytest.mark.slow
def test_no_look_without_paths_there_or_when_turned_off(hub):
    hub, workdir = hub
    _, seen = run(hub, f"Write hello into {workdir}/new.txt")
    assert not any(HEADER in m.content for m in seen)  # the only path is still to be made
    _, seen = run(hub, f"What does {workdir}/latency.log say?", first_look=False)
    assert not any(HEADER in m.content for m in seen)


@pytest.mark.slow
def test_an_answer_read_off_the_look_before_any_code_ran_is_checked_once(hub):
    from deskmate.app.agent.parse import FROM_LOOK

    hub, workdir = hub
    model = ScriptedModel(["Final answer: GET /p0 100ms",
                           "Let me compute.\n```python\nprint(len(filesystem.read_text_file("
                           f"path='{workdir}/latency.log').splitlines()))\n```",
                           "Final answer: 60 requests"])
    runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True))
    task = f"How many requests does {workdir}/latency.log hold?"
    try:
        events = list(runtime.agent.run(task))
    finally:
        runtime.sandbox.close()
    # The look's note and the check are the loop's, not the user's: /retry and /compact
    # find the turn's start by this (they took the note for the request before).
    users = [m.content for m in runtime.agent.transcript
             if m.role == "user" and not is_feedback(m.content)]
    assert users == [task]
    observations = [e.content for e in events if isinstance(e, ev.Observation)]
    assert observations[0] == FROM_LOOK and observations[1].strip() == "Output:\n60"
    assert [e.text for e in events if isinstance(e, ev.FinalAnswer)] == ["60 requests"]


@pytest.mark.slow
def test_a_cell_that_only_makes_the_looks_calls_again_is_not_run(hub):
    from deskmate.app.agent.parse import LOOKED_AGAIN

    hub, workdir = hub
    task = f"Which files are in {workdir}/expenses, and what does {workdir}/latency.log hold?"
    again = (f"print(filesystem.list_directory(path='{workdir}/expenses'))\n"
             f"filesystem.list_directory(path='{workdir}/expenses')")
    # The look showed the log's first 12 lines of 60: reading it whole is not a repeat.
    rest = f"print(filesystem.read_text_file(path='{workdir}/latency.log'))"
    model = ScriptedModel([f"```python\n{again}\n```", f"```python\n{rest}\n```",
                           "Final answer: -"])
    runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True))
    try:
        events = list(runtime.agent.run(task))
    finally:
        runtime.sandbox.close()
    observations = [e.content for e in events if isinstance(e, ev.Observation)]
    assert observations[0] == LOOKED_AGAIN + task
    assert "GET /p19 119ms" in observations[1]
    finished = [e.tool for e in events if isinstance(e, ev.ToolCallFinished)]
    assert finished == ["list_directory", "list_directory", "read_text_file", "read_text_file"]


def test_only_calls_compares_whole_calls_bare_or_printed():
    from deskmate.app.agent.actions_code import call_form, only_calls

    looked = {call_form("fs.ls(path='/a')")}
    assert only_calls("fs.ls(path='/a')\nprint(fs.ls(path='/a'))", looked)
    assert not only_calls("print(fs.ls(path='/b'))", looked)
    assert not only_calls("x = fs.ls(path='/a')\nprint(x)", looked)
    assert not only_calls("print(fs.ls(path='/a'), 1)", looked)
    assert call_form("not a call") is None and call_form("fs.ls(") is None


@pytest.mark.slow
def test_the_first_reply_after_the_look_is_held_to_code(hub):
    from deskmate.app.agent.actions_code import CODE_REPLY

    hub, workdir = hub
    cell = ("```python\nprint(len(filesystem.read_text_file("
            f"path='{workdir}/latency.log').splitlines()))\n```")

    def grammars(task: str, **limits) -> list[str | None]:
        model = ScriptedModel([cell, "Final answer: 20 requests"], grammar=True)
        runtime = build_agent(model, hub=hub, policy=Policy(yes_all=True),
                              limits=AgentLimits(**limits))
        try:
            list(runtime.agent.run(task))
        finally:
            runtime.sandbox.close()
        return [p.grammar for p in model.params]

    # Answers read off the look's few lines are sent back (above): code comes first.
    assert grammars(f"How many requests does {workdir}/latency.log hold?") == [CODE_REPLY, None]
    # No look shown (no path there), or the config off: the first reply is free.
    assert grammars("How many requests are there?") == [None, None]
    assert grammars(f"How many requests does {workdir}/latency.log hold?",
                    code_after_error=False) == [None, None]


@pytest.mark.slow
def test_a_small_file_is_shown_whole(hub):
    # The clashing port sat on line 20 of a 27-line compose file, below a 12-line look.
    hub, workdir = hub
    lines = [f"  svc{i}:\n    ports: ['{8000 + i}:80']" for i in range(14)]
    (workdir / "compose.yml").write_text("services:\n" + "\n".join(lines) + "\n")
    _, seen = run(hub, f"Which services in {workdir}/compose.yml share a port?")
    note = seen[-1].content
    assert "ports: ['8013:80']" in note and "more lines" not in note


@pytest.mark.slow
def test_the_files_a_request_names_in_a_folder_it_lists_are_read(hub):
    # "… the project at /x, following the steps in its RELEASING.md": listed alone, the
    # folder showed the name, and the model committed before it had read the steps.
    hub, workdir = hub
    repo = workdir / "repo"
    repo.mkdir()
    (repo / "RELEASING.md").write_text("1. Set the version in VERSION.\n2. Commit.\n")
    (repo / "Makefile").write_text("all:\n\techo hi\n")
    (repo / "VERSION").write_text("1.0.0\n")
    (repo / "notes.txt").write_text("unrelated\n")
    events, seen = run(hub, f"Fix the Makefile, then cut the next release of the project at "
                            f"{repo}, following the steps in its RELEASING.md.")
    note = seen[-1].content
    assert f"filesystem.list_directory(path='{repo}'):\n" in note
    assert f"filesystem.read_text_file(path='{repo}/Makefile'):\nall:\n\techo hi" in note
    assert (f"filesystem.read_text_file(path='{repo}/RELEASING.md'):\n"
            "1. Set the version in VERSION.\n2. Commit." in note)
    assert "unrelated" not in note and "1.0.0" not in note  # named by no word of the request
    # Read in the order the request names them, after the folder's listing.
    started = [(e.tool, e.arguments.get("path")) for e in events
               if isinstance(e, ev.ToolCallStarted)]
    assert started == [("list_directory", str(repo)),
                        ("read_text_file", f"{repo}/Makefile"),
                        ("read_text_file", f"{repo}/RELEASING.md")]


def test_a_name_counts_as_a_word_of_its_own():
    from deskmate.app.agent.first_look import named_in

    request = ("The repository at /w pins its dependencies in requirements.txt, and "
               "advisories.md lists the advisories. Fix the Makefile.")
    assert named_in(request, ["Makefile", "advisories.md", "requirements.txt", "README.md",
                              "make"]) == ["requirements.txt", "advisories.md", "Makefile"]
    # Part of a path or of a longer name, or one letter, is not the name.
    assert named_in("Read /w/a.csv and a.csv.bak, then a", ["a.csv", "a"]) == []


def file_tools():
    from deskmate.tools.signatures import signature
    from deskmate.tools.spec import ToolSpec

    tools = {}
    for name, params in (("read_text_file", {"path": {"type": "string"},
                                             "head": {"type": "number"}}),
                         ("list_directory", {"path": {"type": "string"}})):
        spec = ToolSpec("filesystem", name, "", {"type": "object", "properties": params})
        tools[("filesystem", name)] = (spec, signature(spec))
    return tools


def test_a_folder_the_look_listed_is_not_listed_again_for_a_path_inside_it():
    from deskmate.app.agent.first_look import first_look

    calls = []

    def call(server, tool, arguments):
        calls.append((tool, arguments["path"]))
        if tool == "list_directory" and arguments["path"] == "/w":
            return "[FILE] notes.txt\n[DIR] old"
        if tool == "read_text_file" and arguments["path"] == "/w/notes.txt":
            return "buy milk\n"
        raise ValueError("ENOENT: no such file or directory")

    note = first_look("Tidy /w: add a line to /w/notes.txt and write /w/done.txt",
                      file_tools(), call).note
    assert "buy milk" in note
    assert calls == [("list_directory", "/w"), ("read_text_file", "/w/notes.txt")]


def test_the_look_shows_files_whole_within_its_budget():
    from deskmate.app.agent.first_look import LOOK_BUDGET, WHOLE_CHARS, first_look

    text = "".join(f"row {i:02d} " + "x" * 40 + "\n" for i in range(30))  # about 1,500 chars
    assert len(text) <= WHOLE_CHARS and 3 * len(text) > LOOK_BUDGET
    listing = "\n".join(f"[FILE] {n}.txt" for n in ("a1", "b2", "c3"))

    def call(server, tool, arguments):
        if tool == "list_directory":
            return listing
        lines = text.splitlines(keepends=True)
        return "".join(lines[:arguments.get("head", len(lines))])

    note = first_look("Sum a1.txt, b2.txt and c3.txt in /w/", file_tools(), call).note
    shown = note.split("filesystem.read_text_file")
    assert len(shown) == 4
    assert "row 29" in shown[1] and "row 29" in shown[2]  # whole, while they fit
    assert "row 29" not in shown[3] and "more lines" in shown[3]  # then cut
