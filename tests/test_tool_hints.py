"""What an error or an empty result adds, through the code-mode loop with real servers:
the time server refusing 'New York', the memory server finding nothing for a sentence or
given the wrong shape, the file server given a wildcard, git's text log read as JSON."""

from __future__ import annotations

import re
import subprocess

import pytest
from conftest import toy_server

from deskmate.app.agent import events as ev
from deskmate.app.agent.factory import build_agent
from deskmate.app.agent.parse import LACKS_VALUE
from deskmate.app.agent.scripted import ScriptedModel
from deskmate.app.agent.self_replace import close_words, same_replaces
from deskmate.tools.hub import Hub, ServerConfig
from deskmate.tools.policy import Policy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hub(tmp_path_factory, mcp_bin):
    workdir = tmp_path_factory.mktemp("hints")
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    servers = [ServerConfig("time", command=str(mcp_bin / "py" / "bin" / "mcp-server-time")),
               ServerConfig("memory", command=str(npm / "mcp-server-memory"),
                            env={"MEMORY_FILE_PATH": str(workdir / "memory.json")}),
               ServerConfig("filesystem", command=str(npm / "mcp-server-filesystem"),
                            args=(str(workdir),)),
               ServerConfig("git", command=str(mcp_bin / "py" / "bin" / "mcp-server-git"))]
    repo = workdir / "repo"
    repo.mkdir()
    (repo / "notes.md").write_text("# Notes\n")
    git = ["git", "-C", str(repo), "-c", "user.name=Ann", "-c", "user.email=ann@example.org"]
    for args in (["init", "-q"], ["add", "notes.md"], ["commit", "-q", "-m", "Start the notes"]):
        subprocess.run(git + args, check=True)
    (workdir / "logs").mkdir()
    for name in ("a.log", "b.log"):
        (workdir / name).write_text("x")
    with Hub(servers, workdir) as hub:
        assert all(s.status == "ready" for s in hub.start())
        yield hub, workdir


def observations(hub, *cells: str, task: str = "") -> list[str]:
    hub = hub[0]
    replies = [f"Let me check.\n```python\n{cell}\n```" for cell in cells] + ["Final answer: -"]
    runtime = build_agent(ScriptedModel(replies), hub=hub, policy=Policy(yes_all=True))
    try:
        events = list(runtime.agent.run(task or "What time is it in Tokyo when it is "
                                        "09:30 in New York, and where does Marta live?"))
    finally:
        runtime.sandbox.close()
    # (the default task asks "what time": its answer "-" is sent back once, asked_value.py)
    return [e.content for e in events if isinstance(e, ev.Observation)
            and not e.content.startswith(LACKS_VALUE)]


def test_a_timezone_written_as_a_city_runs_as_the_call_with_the_examples_form(hub):
    seen = observations(hub, 'print(time.convert_time(source_timezone="New York", '
                               'time="09:30", target_timezone="Tokyo"))')[0]
    assert "'timezone': 'Asia/Tokyo'" in seen  # the call ran, corrected
    assert seen.split("\n")[1].endswith(
        "Note: source_timezone='New York' was refused (Error executing tool convert_time: "
        "Invalid timezone: 'No time zone found with key New York'); it is not written the "
        "way the documentation's examples are. "
        "time.convert_time(source_timezone='America/New_York', time='09:30', "
        "target_timezone='Asia/Tokyo') ran in its place, and the code went on with its "
        "result.")
    # A city with its country: the zone is the city's, which names no country.
    abroad = observations(hub, 'print(time.get_current_time(timezone="Auckland, New Zealand"))')[0]
    assert "time.get_current_time(timezone='Pacific/Auckland') ran in its place" in abroad
    assert "'timezone': 'Pacific/Auckland'" in abroad


def test_a_csv_headers_time_zone_column_given_as_a_zone_is_told_to_skip_the_header(hub):
    # The 1.5B looped over every line of team.csv, the header first.
    team = hub[1] / "team.csv"
    team.write_text("name,timezone\nAna,America/Sao_Paulo\nMei,Asia/Singapore\n")
    seen = observations(hub, f"text = filesystem.read_text_file(path='{team}')\n"
                             "for line in text.splitlines():\n"
                             "    name, zone = line.split(',')\n"
                             "    print(time.convert_time(source_timezone='Asia/Singapore', "
                             "time='09:30', target_timezone=zone))",
                        task=f"When is 09:30 in Singapore for each member of {team}?")[0]
    assert "No time zone found with key timezone" in seen
    assert ("\nHint: target_timezone='timezone' is a column name: the line 'name,timezone' is "
            "the CSV's header, not a record.") in seen


def test_a_corrected_call_that_fails_too_shows_both_errors(hub):
    # The zone is corrected; the time is in no form the documentation names.
    seen = observations(hub, 'print(time.convert_time(source_timezone="New York", '
                               'time="9:30am", target_timezone="Asia/Tokyo"))')[0]
    assert "No time zone found with key New York" in seen
    assert ("Run again as time.convert_time(source_timezone='America/New_York', "
            "time='9:30am', target_timezone='Asia/Tokyo')") in seen
    assert "it failed too: time.convert_time failed:" in seen and "Invalid time" in seen


def test_a_search_with_a_sentence_that_found_nothing_is_told_to_try_a_word(hub):
    create = ('memory.create_entities(entities=[{"name": "Marta", "entityType": "person", '
              '"observations": ["lives in Porto"]}])')
    first, second = observations(
        hub, f'{create}\nprint(memory.search_nodes(query="Marta lives in a city"))',
        'print(memory.search_nodes(query="Marta"))')
    assert first.endswith(
        "Note: memory.search_nodes(query='Marta lives in a city') found nothing. Searches "
        "often match single words or names, not sentences: before answering that nothing "
        "exists, search again with one name or word from the request, such as "
        "memory.search_nodes(query='Marta'), or read everything with memory.read_graph().")
    assert "Porto" in second and "Note:" not in second


def test_objects_for_another_tool_and_a_text_for_a_list_get_named(hub):
    people = 'people = [{"name": "Ada", "entityType": "person", "observations": ["CTO"]}]'
    wrong_tool, text_for_list, *_ = observations(
        hub, f"{people}\nprint(memory.add_observations(observations=people))",
        'print(memory.create_entities(entities=[{"name": "service", "entityType": "code", '
        '"observations": "app.py\\nroutes.py"}]))')
    assert "'entityName' is a required property" in wrong_tool
    assert "Hint: objects with name, entityType, observations are what " \
           "memory.create_entities takes, as entities: memory.create_entities(entities: " \
           in wrong_tool
    assert text_for_list.rstrip().endswith(
        "Hint: that value is a str of 2 lines where a list is expected: text.splitlines() "
        "gives the list of its lines.")


def test_a_wildcard_given_for_one_path_gets_the_search_then_a_loop(hub):
    workdir = hub[1]
    search = f"filesystem.search_files(path='{workdir}', pattern='*.log')"
    seen, found = observations(hub, f'filesystem.move_file(source="{workdir}/*.log", '
                                    f'destination="{workdir}/logs")', f"print({search})")
    assert f"Hint: source='{workdir}/*.log' is a wildcard pattern, and move_file takes one " \
           f"path: nothing expands the pattern, so get the names with {search} (print " \
           "them), then call move_file once for each name in a for loop." in seen
    assert (workdir / "a.log").exists()
    # The search the hint names, as written, finds the files.
    assert f"{workdir}/a.log" in found


def test_an_edit_whose_text_is_not_in_the_file_gets_the_closest_lines(hub):
    workdir = hub[1]
    (workdir / "mail.py").write_text("import smtplib\n\n\ndef recieve(box):\n"
                                     "    return box.pop()\n")
    seen = observations(hub, f'filesystem.edit_file(path="{workdir}/mail.py", '
                             'edits=[{"oldText": "receive", "newText": "receive"}])')[0]
    assert "Could not find exact match" in seen
    assert seen.rstrip().endswith(
        f"The lines of {workdir}/mail.py closest to the text to replace (copy it from here, "
        "as the file writes it):\n4: def recieve(box):\n"
        f"Likely meant: filesystem.edit_file(path='{workdir}/mail.py', "
        "edits=[{'oldText': 'recieve', 'newText': 'receive'}])")
    # Each occurrence, in its own case, and the suggested call does the fix.
    (workdir / "mail.py").write_text('def recieve(box):\n    """Recieve all. recieve!"""\n')
    seen = observations(hub, f'filesystem.edit_file(path="{workdir}/mail.py", '
                             'edits=[{"oldText": "receive", "newText": "receive"}])')[0]
    meant = seen.rstrip().splitlines()[-1].removeprefix("Likely meant: ")
    assert meant == (f"filesystem.edit_file(path='{workdir}/mail.py', edits=["
                     "{'oldText': 'recieve', 'newText': 'receive'}, "
                     "{'oldText': 'recieve', 'newText': 'receive'}, "
                     "{'oldText': 'Recieve', 'newText': 'Receive'}])")
    observations(hub, meant)
    assert (workdir / "mail.py").read_text() == ('def receive(box):\n'
                                                 '    """Receive all. receive!"""\n')


def test_a_text_replaced_by_itself_gets_the_close_words_as_the_replace_to_write(hub):
    workdir = hub[1]
    (workdir / "post.py").write_text('def recieve(box):\n    """Recieve all. Received."""\n')
    cell = (f"content = filesystem.read_text_file(path='{workdir}/post.py')\n"
            "fixed = content.replace('receive', 'receive')\n"
            f"filesystem.write_file(path='{workdir}/post.py', content=fixed)")
    seen = observations(hub, cell)[0]
    note = next(line for line in seen.splitlines() if ".replace('receive', 'receive')" in line)
    assert note == ("Note: content.replace('receive', 'receive') replaces 'receive' with "
                    "itself: it gives the text back as it was. The text has 'recieve', "
                    "'Recieve', close to 'receive': write content.replace('recieve', "
                    "'receive').replace('Recieve', 'Receive')")
    fix = note.rpartition("write ")[2]
    # A later cell of the turn that replaces in the text read before gets the words too.
    later = observations(hub, f"content = filesystem.read_text_file(path='{workdir}/post.py')",
                         "fixed = content.replace('receive', 'receive')")[1]
    assert later.endswith(note)
    observations(hub, f"content = filesystem.read_text_file(path='{workdir}/post.py')\n"
                      f"filesystem.write_file(path='{workdir}/post.py', content={fix})")
    assert (workdir / "post.py").read_text() == ('def receive(box):\n'
                                                 '    """Receive all. Received."""\n')
    # A replace that changes something, or one of a text the code built: no note.
    assert "with itself" not in observations(hub, "'ab'.replace('a', 'b')")[0]
    assert same_replaces("t.replace(a, a)\nt.replace('x', 'y')") == []
    assert close_words("receive", ["received receives receipt"]) == []


def test_a_path_named_after_the_requests_web_address_gets_the_fetch_call(tmp_path, mcp_bin):
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    servers = [ServerConfig("filesystem", command=str(npm / "mcp-server-filesystem"),
                            args=(str(tmp_path),)), toy_server("notes", "annotated.py")]
    task = f"Look up the shoes on http://127.0.0.1:9/products.html and write {tmp_path}/c.txt."
    with Hub(servers, tmp_path) as hub:
        assert all(s.status == "ready" for s in hub.start())
        seen = observations((hub, tmp_path), f"filesystem.list_directory(path='{tmp_path}/"
                            "products')", f"filesystem.list_directory(path='{tmp_path}/shoes')",
                            task=task)
    assert ("Hint: products is part of the web address http://127.0.0.1:9/products.html in "
            "the request: a web page is not a file here; read it with "
            "notes.fetch_page(url='http://127.0.0.1:9/products.html')") in seen[0]
    assert "see what its folder holds" not in seen[0]  # (the path hint's listing)
    # A missing path the request's addresses do not name: no such hint.
    assert "web address" not in seen[1]


def test_an_import_of_a_servers_name_is_taken_out(hub):
    # `import time` would hide the time server behind Python's module, and `import
    # filesystem` fails the cell before its calls.
    workdir = hub[1]
    seen = observations(hub, f'import json, time\nimport filesystem\n'
                             'from filesystem import list_directory as ls\n'
                             'print(time.get_current_time(timezone="UTC")["timezone"])\n'
                             f'print(json.dumps(ls(path="{workdir}").count("a.log")))')[0]
    assert seen.splitlines()[1:] == [
        "(`import json, time`: time is a server object here, already defined: no import "
        "needed)",
        "(`import filesystem`: filesystem is a server object here, already defined: no "
        "import needed)",
        "(`from filesystem import list_directory as ls`: filesystem is a server object "
        "here, already defined: no import needed)",
        "UTC", "1"]


def test_a_file_written_into_a_folder_not_made_yet_says_to_make_it(hub):
    workdir = hub[1]
    seen = observations(hub, f'filesystem.write_file(path="{workdir}/docs/intro.md", '
                             'content="# Intro")')[0]
    assert "ENOENT" in seen and "holds:" not in seen
    assert seen.rstrip().endswith(
        f"Hint: the folder {workdir}/docs does not exist yet: make it first with "
        f"filesystem.create_directory(path='{workdir}/docs'), then write the file.")



def test_a_text_result_indexed_like_a_dict_gets_the_line_that_holds_the_field(hub):
    # git's log is text ("Message: …" lines); small models index it as the JSON expected.
    repo = hub[1] / "repo"
    seen = observations(hub, f'print(git.git_log(repo_path="{repo}", max_count=1)'
                             '[0]["message"])')[0]
    assert "string indices must be integers" in seen
    assert seen.rstrip().endswith(
        "Hint: git.git_log returns text, not a dict; its line 'Message: Start the notes' "
        "holds the 'message' value: write the line that failed as\nimport re\n"
        f"print(re.search(r'^Message: (.*)$', git.git_log(repo_path=\"{repo}\", "
        "max_count=1), re.M).group(1))")
    # A statement over several lines is not rewritten: the recipe instead.
    spread = observations(hub, f'print(\n    git.git_log(repo_path="{repo}")[0]["message"])')[0]
    assert spread.rstrip().endswith(
        "holds the 'message' value: text = git.git_log(...), then "
        "re.search(r'^Message: (.*)$', text, re.M).group(1)")


def test_records_whose_values_no_tool_returned_get_a_note(hub):
    # The model read the team, then stored people it made up ("a simplified example").
    workdir = hub[1]
    (workdir / "team.md").write_text("## Owen Price\n\nSite Reliability Engineer\n")
    read = f'team = filesystem.read_text_file(path="{workdir}/team.md")\n'
    invented, copied = observations(
        hub, read + 'memory.create_entities(entities=[{"name": "Alice Stone", '
        '"entityType": "person", "observations": ["Data Scientist"]}])',
        'memory.create_entities(entities=[{"name": "Owen Price", "entityType": "person", '
        '"observations": ["Site Reliability Engineer"]}])')
    assert invented.rstrip().endswith(
        "Note: memory.create_entities was given 'Alice Stone', 'Data Scientist', found in "
        "no tool's result this turn nor in the request. If they were to come from the "
        "data, they are made up: take them from what filesystem.read_text_file returned.")
    assert "Note:" not in copied


def test_a_text_written_as_one_character_gets_a_note(hub):
    # git's log indexed like a list of lines: its last character (a newline) was written.
    workdir, repo = hub[1], hub[1] / "repo"
    seen = observations(hub, f'log = git.git_log(repo_path="{repo}", max_count=1)\n'
                             f'filesystem.write_file(path="{workdir}/LAST.txt", '
                             'content=log[-1])')[0]
    assert seen.rstrip().endswith(
        "Note: filesystem.write_file was given content='\\n', a single character or none. "
        "Indexing a text (text[-1]) gives one character, not a line: for its lines use "
        "text.splitlines() (the last: text.strip().splitlines()[-1]).")
    # A one-digit count is a text of its own.
    counted = observations(hub, f'filesystem.write_file(path="{workdir}/COUNT.txt", '
                                'content="5")')[0]
    assert "Note:" not in counted


def test_a_move_into_a_folder_gets_the_items_own_new_path(hub):
    workdir = hub[1]
    (workdir / "c.log").write_text("x")
    seen = observations(hub, f'filesystem.move_file(source="{workdir}/c.log", '
                             f'destination="{workdir}/logs/")')[0]
    assert "Destination already exists" in seen
    assert seen.rstrip().endswith(
        f"Hint: destination is the new path of what moves, not the folder it goes into: "
        f"destination='{workdir}/logs/c.log'")


def test_a_value_made_for_a_tool_and_never_given_gets_a_note(hub):
    seen = observations(
        hub, 'ann = {"name": "Ann Lee", "entityType": "person", "observations": []}\n'
             'entities = [ann]\n'
             'relations = [{"from": ann["name"], "to": "Ann Lee", "relationType": "knows"}]\n'
             'print(memory.create_relations(relations=relations))')[0]
    assert seen.rstrip().splitlines()[-1].startswith(
        "Note: entities was made and not given to any call; memory.create_entities(entities: "
        "list[")
    assert seen.rstrip().endswith("takes it.")


def test_adding_to_an_entity_never_created_names_the_tool_that_creates_it(hub):
    seen = observations(hub, 'memory.add_observations(observations=[{"entityName": "Zed Q", '
                             '"contents": ["tech lead"]}])')[0]
    assert "Entity with name Zed Q not found" in seen
    assert seen.rstrip().endswith(
        "Hint: that entity is not there yet: create it first with memory.create_entities("
        'entities: list[{"name": str, "entityType": str, "observations": list[str]}]), '
        "then call add_observations again.")


def test_an_answer_right_after_the_made_up_note_is_checked_once(hub):
    from deskmate.app.agent.parse import AFTER_NOTE

    workdir = hub[1]
    (workdir / "crew.md").write_text("## Nia Holt\n\nQA lead\n")
    cell = (f'crew = filesystem.read_text_file(path="{workdir}/crew.md")\n'
            'memory.create_entities(entities=[{"name": "Bob Ray", "entityType": "person", '
            '"observations": ["Designer"]}])')
    replies = [f"```python\n{cell}\n```", "Final answer: No one was added.",
               "Final answer: Done."]
    runtime = build_agent(ScriptedModel(replies), hub=hub[0], policy=Policy(yes_all=True))
    try:
        events = list(runtime.agent.run("Store the people of crew.md in memory."))
    finally:
        runtime.sandbox.close()
    seen = [e.content for e in events if isinstance(e, ev.Observation)]
    assert "Note: memory.create_entities was given 'Bob Ray', 'Designer'," in seen[0]
    assert seen[1] == AFTER_NOTE
    assert [e.text for e in events if isinstance(e, ev.FinalAnswer)] == ["Done."]


def test_a_servers_name_that_hides_a_python_module_says_how_to_reach_it(hub):
    # The time server's object is named like Python's time module: time.datetime(...) and
    # time.sleep(...) meant Python's, and "did you mean convert_time" led nowhere.
    made, slept = observations(hub, "print(time.datetime(2026, 1, 1))",
                               "import importlib\npy_time = importlib.import_module('time')\n"
                               "print(py_time.sleep(0))")[:2]
    assert ("Here time is the time server, not Python's time module; datetime is a module "
            "of Python's own: import datetime and use it.") in made
    assert slept.strip() == "Output:\nNone"
    sleep = observations(hub, "time.sleep(0)")[0]
    assert ("for Python's time.sleep write import importlib; py_time = "
            "importlib.import_module('time') and call py_time.sleep.") in sleep


def test_a_missing_import_of_pythons_module_for_values_is_named(hub):
    # The 1.5B wrote a hint's json.loads(...) without its `import json`; the hint after
    # that said the tools are methods of the servers, and it searched the tools for json.
    missing, loads, files = observations(hub, "print(list(itertools.chain([1], [2])))",
                                         "data = json.loads('[1]')",
                                         "print(os.listdir('/tmp'))")[:3]
    assert "Hint: itertools is Python's module: add `import itertools` at the top of the " \
           "cell" in missing
    assert "Hint: json is Python's module: add `import json`" in loads
    # os without its import: the import (its plain file calls on the user's paths go
    # through the file tools), and the tools that change those files, which it cannot.
    assert "Hint: os is Python's module: add `import os` at the top of the cell; the " \
           "user's files change through the tools: filesystem.move_file(" in files
    assert "The tools are methods of the servers" not in files


def test_the_module_hint_never_imports_a_module_to_look_into_it():
    import sys

    # `this` prints the Zen of Python when imported: a server named so must not.
    code = ("import sys\nfrom deskmate.app.agent.bridge import module_hint\n"
            "print(repr(module_hint('this', 's')), 'this' in sys.modules)")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout
    assert shown.strip() == "'' False"


def committed_repo(repo, files: dict[str, str]):
    """A git repository at ``repo`` whose one commit holds ``files`` (name: text)."""
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=Ann", "-c", "user.email=ann@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    for name, text in files.items():
        (repo / name).write_text(text)
        subprocess.run([*git, "add", name], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "Start"], check=True)
    return repo


def test_an_error_that_names_a_tool_to_call_first_gets_that_call(hub):
    # git_commit before git_add: "Use git_add to stage changes first" → the git_add call,
    # with the repository and the file this turn wrote there; run as told, it commits.
    repo = committed_repo(hub[1] / "staged", {})
    change = f'CHANGELOG = "{repo}/CHANGELOG.md"'
    write = 'filesystem.write_file(path=CHANGELOG, content="## 0.2.0\\n")'
    commit = f'print(git.git_commit(repo_path="{repo}", message="Add changelog"))'
    add = f"git.git_add(repo_path='{repo}', files=['{repo}/CHANGELOG.md'])"
    seen, done = observations(hub, f"{change}\n{write}\n{commit}", f"{add}\n{commit}")
    assert "No changes staged for commit" in seen
    assert (f"Hint: the error names git_add: call it first, {add}, then call git_commit "
            "again.\n") in seen
    assert "Changes committed successfully" in done


def test_a_commit_after_a_write_that_changed_nothing_is_told_so_not_to_stage(hub):
    # The fix replaced a word the file does not hold: the write gave it its own text,
    # and git_add would stage nothing. The hint says what happened, not "call git_add".
    repo = committed_repo(hub[1] / "typo", {"mail.py": "def recieve(inbox):\n    return inbox\n"})
    cell = (f'text = filesystem.read_text_file(path="{repo}/mail.py")\n'
            f'filesystem.write_file(path="{repo}/mail.py", '
            "content=text.replace('receive', 'receive'))\n"
            f'print(git.git_commit(repo_path="{repo}", message="Fix typo"))')
    seen = observations(hub, cell, task=f"Fix the typo in {repo}/mail.py and commit.")[0]
    assert "No changes staged for commit" in seen
    assert (f"Hint: nothing changed for git_add to take: the write to {repo}/mail.py this "
            "turn gave it the text it already held.") in seen
    assert "Hint: the error names git_add" not in seen


def test_a_commit_before_any_change_told_again_to_stage_is_told_to_make_the_change(hub):
    # Nothing edited yet: git_add as the hint said stages nothing, the commit fails
    # again, and the hint now names the missing change, not git_add once more.
    repo = committed_repo(hub[1] / "unedited", {"cart.py": "TAX_RATE = 0.2\n"})
    commit = f'print(git.git_commit(repo_path="{repo}", message="Raise tax rate"))'
    add = f"git.git_add(repo_path='{repo}', files=['{repo}/cart.py'])"
    first, again = observations(hub, commit, f"{add}\n{commit}",
                                task=f"Set TAX_RATE to 0.21 in {repo}/cart.py and commit it.")[:2]
    assert "Hint: the error names git_add: call it first" in first
    assert ("Hint: git_add already ran this turn and git_commit still fails: no file there "
            "has changed, so there is nothing for git_add to take. Make the change the "
            "request asks for first") in again
    assert "call it first" not in again


def test_a_look_cut_off_in_a_graphs_first_list_names_every_key_and_what_it_holds(hub):
    # The 1.5B looked for the relations inside the entities: the look's 300 characters
    # ended there, and nothing said a 'relations' list followed. (A graph too large to
    # be shown whole: a short one is, unprinted.WHOLE_CHARS.)
    people = ", ".join(f'{{"name": "P{i}", "entityType": "person", "observations": '
                       f'["works on the platform team since 20{i:02d}"]}}' for i in range(20))
    links = '[{"from": "P1", "to": "P0", "relationType": "reports_to"}]'
    seen = observations(
        hub, f"memory.create_entities(entities=[{people}])\n"
             f"memory.create_relations(relations={links})\n"
             "graph = memory.read_graph()\n"
             "print([n for n in graph['entities'] if n.get('relationType')])")[0]
    assert "memory.read_graph returned a dict of 2 keys: {'entities': [" in seen
    # (the module's other tests put their own people and relations in the same graph)
    assert re.search(r"\n  its keys: 'entities': a list of \d+ dicts with keys 'name', "
                     r"'entityType', 'observations'; 'relations': a list of \d+ dicts? with "
                     r"keys 'from', 'to', 'relationType'$", seen, re.M)


def test_a_timestamp_where_the_documentation_asks_hh_mm_runs_with_the_part_that_fits(hub):
    # A result's datetime passed on whole; the call with its HH:MM runs in its place.
    given = ('time.convert_time(source_timezone="Asia/Tokyo", '
             'time="2026-12-03T17:19:30+09:00", target_timezone="UTC")')
    meant = ("time.convert_time(source_timezone='Asia/Tokyo', time='17:19', "
             "target_timezone='UTC')")
    seen = observations(hub, f"print({given}['target']['datetime'])")[0]
    assert "T08:19:00+00:00" in seen and "Invalid time format" in seen
    assert seen.split("\n")[1].endswith("); it holds '17:19', the form its documentation asks "
                                  f"for. {meant} ran in its place, and the code went on "
                                  "with its result.")


def test_the_requests_path_without_its_leading_slash_runs_with_it(hub):
    workdir = hub[1]
    relative = str(workdir).lstrip("/")
    seen = observations(hub, f'print(filesystem.list_directory(path="{relative}"))',
                        task=f"Which .log files are in {workdir}?")[0]
    assert "a.log" in seen and "ENOENT" in seen
    assert seen.split("\n")[1].endswith(
        "); it lacks the leading '/' of the path the request gives, so it was read inside "
        f"the server's folder. filesystem.list_directory(path='{workdir}') ran in its "
        "place, and the code went on with its result.")


def test_a_move_of_one_character_from_a_loop_over_text_says_to_split_lines(hub):
    # A loop over a plain str (here made one with str(); a tool's own text iterates by
    # line) moves '/', then 't', …
    workdir = hub[1]
    seen = observations(hub, f"files = str(filesystem.search_files(path='{workdir}', "
                             "pattern='*.log'))\nfor name in files:\n"
                             f"    filesystem.move_file(source=name, destination='{workdir}/x')")[0]
    assert "source='/' is a single character. A for loop over a str goes character by " \
           "character; for a text's lines use .splitlines()." in seen
    assert (workdir / "a.log").exists()


def test_a_path_beside_the_servers_folder_gets_the_path_inside_it(hub):
    from deskmate.app.agent.path_errors import outside_hint

    workdir = hub[1]
    beside = f"{workdir.parent}/logs"
    # As a tool call and as plain Python routed through the tools: the same hint.
    called, made, *_ = observations(
        hub, f'filesystem.create_directory(path="{beside}")',
        f"import os\nos.makedirs('{beside}', exist_ok=True)")
    for seen in (called, made):
        assert "outside allowed directories" in seen
        assert (f"Hint: the server reaches only what is inside {workdir}; {beside} is "
                f"outside it. Inside it, that path is '{workdir}/logs': use that.") in seen
    far = observations(hub, 'filesystem.list_directory(path="/etc")')[0]
    assert far.rstrip().endswith(
        f"Hint: the server reaches only what is inside {workdir}; /etc is outside.")
    # The root itself (a loop's first character): said as the root, no crash.
    assert outside_hint("Access denied - path outside allowed directories: / not in "
                        "/w/a, /w/b").endswith("inside /w/a, /w/b; / is outside.")


def test_a_hint_that_fails_leaves_the_servers_error_as_it_is(hub, monkeypatch):
    from deskmate.app.agent import failure_hints

    def broken(*args, **kwargs):
        raise ValueError("a bug in a hint")

    monkeypatch.setattr(failure_hints, "outside_hint", broken)
    seen = observations(hub, 'filesystem.list_directory(path="/etc")')[0]
    assert "outside allowed directories" in seen and "a bug in a hint" not in seen
