"""The sandbox as the agent uses it: notebook state, output, errors, tool calls, limits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from deskmate.tools.sandbox import (
    CellResult,
    Limits,
    RequestFiles,
    Sandbox,
    ToolError,
    detect_isolation,
)
from deskmate.tools.sandbox.capture import OutputBuffer, truncate_middle
from deskmate.tools.sandbox.worker import protocol

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def box():
    with Sandbox() as sandbox:
        yield sandbox


class Recorder:
    """A real host handler: records calls, answers like the bridge would."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def __call__(self, kind: str, payload: dict):
        self.calls.append((kind, payload))
        if kind == "search_tools":
            return [{"server": "git", "tool": "git_log", "score": 1.5}][: payload["k"]]
        if kind == "tool_help":
            return f"def {payload['names'][0]}(repo_path: str) -> dict: ..."
        tool = payload["tool"]
        if tool == "echo":
            return {"args": payload["args"], "kwargs": payload["kwargs"]}
        if tool == "slow":
            time.sleep(1.5)
            return "done"
        if tool == "broken":
            raise RuntimeError("database is locked")
        raise ToolError(f"unknown tool {payload['server']}.{tool}; did you mean git_status?")


@pytest.fixture
def tools():
    handler = Recorder()
    namespace = {"servers": {"git": ["git_status", "echo", "slow", "broken"]},
                 "helpers": ["search_tools", "tool_help"]}
    with Sandbox(handler, namespace=namespace) as sandbox:
        yield sandbox, handler


def ok(result: CellResult) -> CellResult:
    assert result.status == "ok", result
    return result


def test_state_persists_across_cells(box):
    ok(box.execute("x = 40\ndef add(a):\n    return a + x"))
    assert ok(box.execute("add(2)")).value == "42"
    assert ok(box.execute("x = 1")).value is None
    assert ok(box.execute("add(2)")).value == "3"


def test_last_expression_value_like_a_notebook(box):
    assert ok(box.execute("[1, 'a'] * 2")).value == "[1, 'a', 1, 'a']"
    assert ok(box.execute("y = 3\ny * 2")).value == "6"
    assert ok(box.execute("None")).value is None
    assert ok(box.execute("print('p')")).value is None
    assert ok(box.execute("_")).value == "6"
    assert ok(box.execute("'one'")).value == "'one'"
    assert ok(box.execute("'[FILE] a.py\\n[FILE] b.py'")).value == "[FILE] a.py\n[FILE] b.py"


def test_an_unused_import_of_a_missing_module_is_skipped(box):
    # Small models open cells with `import requests` out of habit, then call the tools.
    result = ok(box.execute("import requests\nfrom bs4 import BeautifulSoup as B\n"
                            "import json\nprint(json.dumps([1]))"))
    assert result.stdout.splitlines() == [
        "(skipped `import requests`: not installed here, and nothing in this code uses it)",
        "(skipped `from bs4 import BeautifulSoup as B`: not installed here, and nothing in "
        "this code uses it)", "[1]"]
    # Used, it fails as it would anywhere, with the hint that says what to use instead.
    used = box.execute("import requests\nrequests.get('http://example.com')")
    assert used.status == "error" and "No module named 'requests'" in used.error
    assert ok(box.execute("import os.path")).stdout == ""


def test_stdout_is_captured_from_print_stderr_and_the_fd(box):
    result = ok(box.execute(
        "import os, sys\nprint('one')\nprint('two', file=sys.stderr)\nos.write(1, b'three\\n')"))
    assert result.stdout.splitlines() == ["one", "two", "three"]
    assert ok(box.execute("print('next')")).stdout == "next\n"


def test_output_is_truncated_head_and_tail():
    with Sandbox(limits=Limits(output_chars=1000)) as box:
        result = ok(box.execute("print('HEAD' + 'x' * 300_000 + 'TAIL')"))
    assert result.stdout.startswith("HEAD") and result.stdout.rstrip().endswith("TAIL")
    assert "characters of output omitted" in result.stdout
    assert len(result.stdout) < 1100


def test_truncation_helpers_count_what_was_cut():
    assert truncate_middle("abcdef", 10) == "abcdef"
    cut = truncate_middle("a" * 50 + "b" * 50, 10)
    assert cut.startswith("aaaaa\n") and cut.endswith("\nbbbbb") and "90 characters" in cut
    buffer = OutputBuffer(10)
    for _ in range(1000):
        buffer.feed(b"0123456789")
    text = buffer.text()
    assert text.startswith("01234\n") and text.endswith("\n56789")
    assert "9990 characters" in text


def test_printed_frames_cannot_forge_messages(box):
    forged = json.dumps({"type": "done", "status": "ok", "error": "", "value": "'forged'"})
    code = ("import os, struct\n"
            f"body = {forged!r}.encode()\n"
            "os.write(1, struct.pack('>I', len(body)) + body)\n"
            f"print({forged!r})\n"
            "'real'")
    result = ok(box.execute(code))
    assert result.value == "'real'"
    assert '"forged"' not in result.stdout and "'forged'" in result.stdout
    assert ok(box.execute("1 + 1")).value == "2"


def test_traceback_is_trimmed_to_the_cells(box):
    ok(box.execute("def inner(v):\n    return 1 / v"))
    result = box.execute("data = [0]\ninner(data[0])")
    assert result.status == "error"
    assert result.error.startswith("Traceback (most recent call last):")
    assert '"<cell 2>", line 2' in result.error and '"<cell 1>", line 2, in inner' in result.error
    assert "return 1 / v" in result.error
    assert result.error.endswith("ZeroDivisionError: division by zero\n"
                                 "The values on that line: v = 0")
    assert "worker.py" not in result.error and "exec(" not in result.error


def test_syntax_error_and_exit_are_errors_not_crashes(box):
    result = box.execute("def f(:\n  pass")
    assert result.status == "error" and "SyntaxError" in result.error
    assert '"<cell 1>"' in result.error
    result = box.execute("import sys\nsys.exit(3)")
    assert result.status == "error" and "SystemExit: 3" in result.error
    assert not result.state_lost
    assert ok(box.execute("'still here'")).value == "'still here'"


def test_tool_calls_round_trip_values(tools):
    box, handler = tools
    result = ok(box.execute(
        "r = git.echo('.', 3, flag=True, opts={'n': [1, 2.5, None]}, name='é✓')\nr"))
    assert handler.calls == [("tool", {"server": "git", "tool": "echo", "args": [".", 3],
                                       "kwargs": {"flag": True, "opts": {"n": [1, 2.5, None]},
                                                  "name": "é✓"}})]
    assert eval(result.value) == {"args": [".", 3], "kwargs": {
        "flag": True, "opts": {"n": [1, 2.5, None]}, "name": "é✓"}}
    assert ok(box.execute("type(r['kwargs']['opts']['n'][1]).__name__")).value == "'float'"


def test_tool_error_carries_the_hosts_message(tools):
    box, handler = tools
    result = box.execute("git.git_log(max_count=1)")
    assert result.status == "error"
    assert "ToolError: unknown tool git.git_log; did you mean git_status?" in result.error
    assert handler.calls[-1] == ("tool", {"server": "git", "tool": "git_log", "args": [],
                                          "kwargs": {"max_count": 1}})
    caught = ok(box.execute(
        "try:\n    git.nope()\nexcept ToolError as exc:\n    message = str(exc)\nmessage"))
    assert "did you mean git_status" in caught.value
    broken = box.execute("git.broken()")
    assert broken.status == "error" and "RuntimeError: database is locked" in broken.error


def test_server_objects_list_their_tools_and_helpers_call_the_host(tools):
    box, handler = tools
    assert eval(ok(box.execute("sorted(dir(git))")).value) == [
        "broken", "echo", "git_status", "slow"]
    assert "git_log" in ok(box.execute("search_tools('history of commits', k=1)")).value
    assert handler.calls[-1] == ("search_tools", {"query": "history of commits", "k": 1})
    assert "def git_status(" in ok(box.execute("print(tool_help('git', 'git_status'))")).stdout
    assert handler.calls[-1] == ("tool_help", {"server": "git", "names": ["git_status"]})


def test_a_server_object_the_code_assigned_is_put_back(tools):
    box, _ = tools
    shadowed = box.execute("for git in ['a', 'b']:\n    pass\ngit.upper()")
    assert shadowed.status == "ok" and shadowed.stdout.rstrip() == (
        "(`git` is the git server's object; this code set it to a str, so it is the server "
        "again: give your own variables other names)")
    assert "echo" in ok(box.execute("dir(git)")).value
    deleted = box.execute("del git\n1 / 0")
    assert "ZeroDivisionError" in deleted.error and "set it to nothing" in deleted.stdout
    assert ok(box.execute("print(git)")).stdout.startswith("<server git")


def test_a_servers_tool_called_through_its_name_reused_for_a_value_reaches_the_server(tools):
    """``for git in repos: git.echo(git)``: the name is the loop's str, the call the
    server's; other attributes of the name are the value's own."""
    box, handler = tools
    looped = ok(box.execute("out = []\nfor git in ['a', 'b']:\n"
                            "    out.append(git.echo(git.upper())['args'])\nout"))
    assert eval(looped.value) == [["A"], ["B"]]
    assert handler.calls[-2:] == [
        ("tool", {"server": "git", "tool": "echo", "args": ["A"], "kwargs": {}}),
        ("tool", {"server": "git", "tool": "echo", "args": ["B"], "kwargs": {}})]
    assert looped.stdout.rstrip() == (
        "(`git` is the git server's object; this code set it to a str, so its calls "
        "git.<tool>(…) still went to the server, and it is the server again: give your "
        "own variables other names)")
    # In a function whose parameter has the server's name, and after a failing line.
    ok(box.execute("def f(git):\n    return git.echo(git)['args']\nresult = f('x')"))
    assert eval(ok(box.execute("result")).value) == ["x"]
    failed = box.execute("git = 'y'\ngit.echo(1)\n1 / 0")
    assert "ZeroDivisionError" in failed.error and "line 3" in failed.error
    assert handler.calls[-1][1]["args"] == [1]
    # A cell that binds no server name is run as written.
    assert "AttributeError" in box.execute("text = 'a'\ntext.echo()").error


def test_handler_values_are_sent_as_json_and_too_large_ones_are_tool_errors(monkeypatch):
    monkeypatch.setattr(protocol, "MAX_FRAME", 10_000)  # the host's side only
    answers = {"when": lambda: {"at": frozenset([1])}, "dump": lambda: "x" * 20_000}
    namespace = {"servers": {"data": list(answers)}}
    with Sandbox(lambda kind, payload: answers[payload["tool"]](), namespace=namespace) as box:
        ok(box.execute("kept = 1"))
        assert ok(box.execute("data.when()")).value == repr({"at": "frozenset({1})"})
        result = box.execute("data.dump()")
        assert result.status == "error" and not result.state_lost, result
        assert "ToolError" in result.error and "exceeds" in result.error
        assert ok(box.execute("kept")).value == "1"


def test_non_json_arguments_are_refused_inside(tools):
    box, handler = tools
    result = box.execute("git.echo(object())")
    assert result.status == "error" and "TypeError: tool arguments must be JSON" in result.error
    assert handler.calls == []


def test_time_in_the_host_handler_is_not_the_cells(tools):
    box, _ = tools
    assert ok(box.execute("git.slow()", timeout=1.0)).value == "'done'"


def test_paths_outside_the_sandbox_say_where_files_are():
    # A server that lists but cannot read: plain file calls are not carried by it.
    namespace = {"servers": {"filesystem": ["list_directory", "search_files", "move_file"]},
                 "signatures": {"filesystem.move_file": "move_file(source: str, destination: str)"}}
    with Sandbox(lambda kind, payload: None, namespace=namespace) as box:
        # os.walk would otherwise yield nothing: the model read "0 files" and answered.
        for code in ("import os\nlist(os.walk('/nowhere/workspace/docs'))",
                     "open('/nowhere/workspace/notes.md').read()",
                     "import os\nos.listdir('/nowhere/workspace')",
                     "import pathlib\nlist(pathlib.Path('/nowhere/ws').iterdir())"):
            result = box.execute(code)
            assert result.status == "error", code
            assert "SandboxPathError: /nowhere/" in result.error
            assert "filesystem.list_directory(...)" in result.error
        # Renames, deletes and globs: the same error, naming the tools that change files.
        for code in ("import os\nos.rename('/nowhere/ws/a.txt', '/nowhere/ws/b.txt')",
                     "import shutil\nshutil.copyfile('/nowhere/ws/a', 'copy')",
                     "import glob\nglob.glob('/nowhere/ws/*.csv')"):
            result = box.execute(code)
            assert "SandboxPathError: /nowhere/ws/" in result.error, code
            if "glob" not in code:
                assert "filesystem.move_file(source: str, destination: str)" in result.error
        # A delete: no connected tool deletes a file, and the error says so (told the
        # move tool, the 1.5B moved the file and reported it deleted).
        for code in ("import os\nos.remove('/nowhere/ws/a.txt')",
                     "import shutil\nshutil.rmtree('/nowhere/ws/old')"):
            error = box.execute(code).error
            assert "no connected tool deletes a file" in error, code
            assert "move_file" not in error
        ok(box.execute("import os\nopen('a.txt', 'w').close()\nos.rename('a.txt', 'b.txt')"))
        # What the sandbox has keeps its usual behaviour.
        assert "FileNotFoundError" in box.execute("open('missing.txt').read()").error
        ok(box.execute("open('new.txt', 'w').write('x')\nimport json, csv"))
        caught = ok(box.execute("try:\n    open('/nowhere/a')\nexcept OSError as e:\n"
                                "    print(type(e).__name__)"))
        assert caught.stdout.strip() == "SandboxPathError"


class FakeFiles:
    """The MCP filesystem server's answers over dicts: ``disk`` (path -> text) and the
    ``folders`` made; ``calls`` records (tool, path) of each call."""

    def __init__(self, disk: dict[str, str], folders: set[str] | None = None) -> None:
        self.disk, self.folders = disk, folders if folders is not None else set()
        self.calls: list[tuple[str, str]] = []

    def __call__(self, kind, payload):
        tool, kwargs = payload["tool"], payload["kwargs"]
        path = kwargs.get("path", kwargs.get("source", ""))
        self.calls.append((tool, path))
        if tool == "read_text_file":
            if path not in self.disk:
                raise ToolError(f"ENOENT: no such file or directory, open '{path}'")
            return {"content": self.disk[path]}
        if tool == "write_file":
            self.disk[path] = kwargs["content"]
            return {"content": f"Successfully wrote to {path}"}
        if tool == "create_directory":
            while path not in self.folders:
                self.folders.add(path)
                path = path.rpartition("/")[0]
            return {"content": f"Successfully created directory {kwargs['path']}"}
        if tool == "move_file":
            destination = kwargs["destination"]
            if destination in self.disk or destination in self.folders:
                raise ToolError(f"Destination already exists: {destination}")
            self.disk[destination] = self.disk.pop(path)
            return {"content": f"Successfully moved {path} to {destination}"}
        below = {p[len(path) + 1:] for p in [*self.disk, *self.folders]
                 if p.startswith(path + "/")}
        entries = sorted({(f"[DIR] {b.split('/')[0]}" if "/" in b or f"{path}/{b}" in self.folders
                           else f"[FILE] {b}") for b in below})
        return {"content": "\n".join(entries)}


def test_plain_file_calls_on_the_users_paths_go_through_the_file_tools():
    filesystem = FakeFiles({"/home/u/notes/a.txt": "1\n2\n"})
    disk, calls = filesystem.disk, filesystem.calls

    namespace = {"servers": {"filesystem": ["list_directory", "read_text_file", "write_file"]}}
    with Sandbox(filesystem, namespace=namespace) as box:
        out = ok(box.execute(
            "import os, pathlib\n"
            "with open('/home/u/notes/a.txt') as f:\n"
            "    total = sum(int(line) for line in f)\n"
            "with open('/home/u/notes/total.txt', 'w') as f:\n"
            "    f.write(str(total))\n"
            "with open('/home/u/notes/a.txt', 'a') as f:\n"
            "    f.write('3\\n')\n"
            "print(total, os.listdir('/home/u/notes'),\n"
            "      os.path.exists('/home/u/notes/total.txt'),\n"
            "      os.path.isfile('/home/u/notes/none'),\n"
            "      pathlib.Path('/home/u/notes/a.txt').read_text().split())"))
        assert out.stdout.strip() == ("3 ['a.txt', 'total.txt'] True False ['1', '2', '3']")
        # pathlib's checks ask the tools too (they stat the path, and said False).
        checked = ok(box.execute(
            "p = pathlib.Path('/home/u/notes')\n"
            "print(p.exists(), p.is_dir(), (p / 'a.txt').is_file(), (p / 'a.txt').is_dir(),"
            " (p / 'none').exists(), pathlib.Path('.').exists())"))
        assert checked.stdout.strip() == "True True True False False True"
        # glob over the listings: a pattern's matches as glob.glob gives them.
        ok(box.execute("open('/home/u/notes/sub/c.txt', 'w').write('4')"))
        globbed = ok(box.execute(
            "import glob\n"
            "print(sorted(glob.glob('/home/u/notes/*.txt')))\n"
            "print(sorted(glob.glob('/home/u/**/*.txt', recursive=True)))\n"
            "print(glob.glob('/home/u/*/none*'), list(glob.iglob('/home/u/n*s')))"))
        assert globbed.stdout.splitlines() == [
            "['/home/u/notes/a.txt', '/home/u/notes/total.txt']",
            "['/home/u/notes/a.txt', '/home/u/notes/sub/c.txt', '/home/u/notes/total.txt']",
            "[] ['/home/u/notes']"]
        paths = ok(box.execute(
            "print(sorted(str(p) for p in pathlib.Path('/home/u/notes').glob('*.txt')))\n"
            "print(sorted(p.name for p in pathlib.Path('/home/u').rglob('*.txt')))"))
        assert paths.stdout.splitlines() == [
            "['/home/u/notes/a.txt', '/home/u/notes/total.txt']",
            "['a.txt', 'c.txt', 'total.txt']"]
        del disk["/home/u/notes/sub/c.txt"]
        assert disk == {"/home/u/notes/a.txt": "1\n2\n3\n", "/home/u/notes/total.txt": "3"}
        missing = ok(box.execute("try:\n    open('/home/u/notes/gone.txt')\n"
                                 "except FileNotFoundError as e:\n"
                                 "    print('missing:', e.filename)"))
        assert missing.stdout.strip() == "missing: /home/u/notes/gone.txt"
        ok(box.execute("with open('/home/u/notes/b.bin', 'wb') as f:\n"
                       "    f.write(b'caf\\xc3\\xa9')"))
        assert disk.pop("/home/u/notes/b.bin") == "café"
        # A with-block that fails halfway leaves the user's file as it was (no write
        # call at all), where plain Python would have emptied it at open().
        before = len(calls)
        failed = box.execute("with open('/home/u/notes/total.txt', 'w') as f:\n"
                             "    f.write('partial')\n"
                             "    f.write(str(int('GET /home 120ms')))").error
        assert "ValueError" in failed
        assert disk["/home/u/notes/total.txt"] == "3" and len(calls) == before
        walked = ok(box.execute("print([(r, d, f) for r, d, f in os.walk('/home/u')])"))
        assert walked.stdout.strip() == ("[('/home/u', ['notes'], []), "
                                         "('/home/u/notes', [], ['a.txt', 'total.txt'])]")
        # The sandbox's own folder is still plain Python, with no tool call.
        before = len(calls)
        ok(box.execute("open('local.txt', 'w').write('x')\nprint(open('local.txt').read())"))
        assert len(calls) == before


class RefusesRepeats(FakeFiles):
    """FakeFiles that refuses a fourth identical call, as the bridge does (REPEAT_LIMIT)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.seen: dict[str, int] = {}

    def __call__(self, kind, payload):
        key = repr((payload["tool"], sorted(payload["kwargs"].items())))
        self.seen[key] = self.seen.get(key, 0) + 1
        if self.seen[key] > 3:
            raise ToolError(f"filesystem.{payload['tool']} was already called 3 times with "
                            "these exact arguments; use the result you already have")
        return super().__call__(kind, payload)

    def new_step(self) -> None:
        self.seen.clear()


def test_a_cells_checks_on_many_files_of_one_folder_list_it_once_until_something_changes():
    # os.path.isfile(join(folder, name)) over a listing lists the folder once a name: the
    # bridge refused the fourth call as a runaway, and the refusal read as "not a file"
    # (five files, one printed).
    names = [".env", "README.md", "app.log", "pyproject.toml", "setup.cfg"]
    filesystem = RefusesRepeats({f"/home/u/w/{n}": "x" for n in names} | {"/home/u/w/src/a.py": ""})
    namespace = {"servers": {"filesystem": ["list_directory", "read_text_file", "write_file"]}}
    with Sandbox(filesystem, namespace=namespace) as box:
        out = ok(box.execute(
            "import os\n"
            "w = '/home/u/w'\n"
            "print([f for f in os.listdir(w) if os.path.isfile(os.path.join(w, f))],\n"
            "      [f for f in os.listdir(w) if os.path.isdir(os.path.join(w, f))])"))
        assert out.stdout.strip() == f"{sorted(names)} ['src']"
        assert filesystem.calls == [("list_directory", "/home/u/w")]
        # A write (or any call that may change things) and the folder is listed again.
        out = ok(box.execute(
            "print(os.path.exists('/home/u/w/new.txt'))\n"
            "filesystem.write_file(path='/home/u/w/new.txt', content='1')\n"
            "print(os.path.exists('/home/u/w/new.txt'), os.path.isfile('/home/u/w/app.log'))"))
        assert out.stdout.split() == ["False", "True", "True"]
        assert [c for c in filesystem.calls if c[0] == "list_directory"] == \
            [("list_directory", "/home/u/w")] * 3
        # The next cell lists afresh: the user may have changed the folder meanwhile.
        filesystem.new_step()
        filesystem.disk["/home/u/w/later.txt"] = "2"
        out = ok(box.execute("print(os.path.isfile('/home/u/w/later.txt'))"))
        assert out.stdout.strip() == "True"


def test_folders_made_and_files_moved_on_the_users_paths_go_through_the_file_tools():
    filesystem = FakeFiles({"/home/u/a.log": "x", "/home/u/b.log": "y", "/home/u/c.log": "z"},
                           {"/home/u"})
    disk, folders, calls = filesystem.disk, filesystem.folders, filesystem.calls

    namespace = {"servers": {"filesystem": ["list_directory", "create_directory",
                                            "move_file", "read_text_file"]}}
    with Sandbox(filesystem, namespace=namespace) as box:
        out = ok(box.execute(
            "import os, shutil, pathlib\n"
            "os.makedirs('/home/u/logs/old', exist_ok=True)\n"
            "os.makedirs('/home/u/logs', exist_ok=True)\n"
            "print(shutil.move('/home/u/a.log', '/home/u/logs'))\n"
            "os.rename('/home/u/b.log', '/home/u/logs/old/b.log')\n"
            "pathlib.Path('/home/u/new').mkdir()\n"
            "print(sorted(os.listdir('/home/u')), os.path.isdir('/home/u/new'))"))
        assert out.stdout.splitlines() == ["/home/u/logs/a.log",
                                           "['c.log', 'logs', 'new'] True"]
        assert set(disk) == {"/home/u/logs/a.log", "/home/u/logs/old/b.log", "/home/u/c.log"}
        assert {"/home/u/logs/old", "/home/u/new"} <= folders
        # What plain Python raises: an existing folder, a taken destination.
        taken = box.execute("os.mkdir('/home/u/logs')").error
        assert "FileExistsError" in taken
        over = box.execute("os.rename('/home/u/c.log', '/home/u/logs/a.log')").error
        assert "FileExistsError" in over and "Destination already exists" in over
        # One path the sandbox's, one the user's: said, and nothing moved.
        across = box.execute("open('here.txt', 'w').write('1')\n"
                             "shutil.move('here.txt', '/home/u/here.txt')").error
        assert "one path is the user's and the other the sandbox's" in across
        assert "/home/u/here.txt" not in disk
        # The sandbox's own folder keeps plain Python, with no tool call.
        before = len(calls)
        ok(box.execute("os.makedirs('tmp/x', exist_ok=True)\nos.rename('here.txt', 'tmp/x/h')\n"
                       "shutil.move('tmp/x/h', 'h2')\nprint(open('h2').read())"))
        assert len(calls) == before


def test_a_glob_that_runs_out_of_tool_calls_says_so_instead_of_matching_less():
    listings = {"/home/u": "[DIR] a\n[DIR] b", "/home/u/a": "[FILE] x.txt",
                "/home/u/b": "[FILE] y.txt"}
    calls = []

    def filesystem(kind, payload):
        calls.append(payload["kwargs"]["path"])
        if len(calls) > 2:
            raise ToolError("tool call limit reached (2 per turn): work with the results "
                            "you have")
        return {"content": listings[payload["kwargs"]["path"]]}

    namespace = {"servers": {"filesystem": ["list_directory", "read_text_file"]}}
    with Sandbox(filesystem, namespace=namespace) as box:
        error = box.execute("import glob\nprint(glob.glob('/home/u/**/*.txt', "
                            "recursive=True))").error
        assert "tool call limit reached" in error


def test_a_hint_that_fails_costs_the_hint_not_the_cells_error(monkeypatch):
    # What the worker sends back for a failed cell (cell.format_error): a hint that
    # raised had ended the worker, and the session's variables with it.
    from deskmate.tools.sandbox.worker import cell, hints

    def broken(exc, toolspace):
        raise TypeError("a bug in a hint")

    monkeypatch.setattr(hints, "_by_kind", broken)
    try:
        {}["city"]
    except KeyError as exc:
        error = cell.format_error(exc, None)  # type: ignore[arg-type]
    assert error.endswith("KeyError: 'city'") and "a bug in a hint" not in error


def test_relative_paths_to_the_requests_files_lead_to_them():
    disk = {"/home/u/repo/poem.txt": "a\nb\nc\n"}

    def filesystem(kind, payload):
        tool, path = payload["tool"], payload["kwargs"].get("path", "")
        if tool == "read_text_file":
            if path not in disk:
                raise ToolError(f"ENOENT: no such file or directory, open '{path}'")
            return {"content": disk[path]}
        disk[path] = payload["kwargs"]["content"]
        return {"content": f"Successfully wrote to {path}"}

    namespace = {"servers": {"filesystem": ["read_text_file", "write_file"]}}
    files = RequestFiles("/home/u/repo", (("LINES.txt", "/home/u/repo/LINES.txt"),))
    with Sandbox(filesystem, namespace=namespace) as box:
        out = ok(box.execute("n = len(open('poem.txt').read().splitlines())\n"
                             "with open('LINES.txt', 'w') as f:\n    f.write(str(n))\n"
                             "open('scratch.txt', 'w').write('kept here')\nprint(n)",
                             files=files))
        # Each path the request's is said once; the cell's own output is as it was.
        assert out.stdout.splitlines() == [
            "('poem.txt' is taken as the request's file /home/u/repo/poem.txt, through "
            "the file tools)",
            "('LINES.txt' is taken as the request's file /home/u/repo/LINES.txt, through "
            "the file tools)", "3"]
        # The named file is the user's; a name the request does not give stays the
        # sandbox's own scratch file, and one the sandbox has is read from there.
        assert disk["/home/u/repo/LINES.txt"] == "3"
        assert "/home/u/repo/scratch.txt" not in disk
        assert ok(box.execute("print(open('scratch.txt').read())", files=files)
                  ).stdout.strip() == "kept here"
        missing = box.execute("open('gone.txt').read()", files=files).error
        assert "FileNotFoundError" in missing and "/home/u/repo/gone.txt" in missing
        # Without the request's files a relative path is the sandbox's, as in Python.
        assert "FileNotFoundError" in box.execute("open('poem.txt')").error
        ok(box.execute("open('LINES.txt', 'w').write('x')"))
        assert disk["/home/u/repo/LINES.txt"] == "3"


def test_a_folder_made_on_the_sandboxs_read_only_view_names_the_tools():
    import errno

    from deskmate.tools.sandbox.worker import hints
    from deskmate.tools.sandbox.worker.state import Toolspace

    # os.makedirs('/r/logs') with /r missing here too: its first mkdir is of /r, on the
    # jail's read-only view, where the path checks do not look (a parent exists).
    space = Toolspace.of({"filesystem": ["create_directory", "move_file"]},
                         {"filesystem.create_directory": "create_directory(path: str)"})
    exc = OSError(errno.EROFS, "Read-only file system", "/r")
    assert hints.hint(exc, space) == (
        "Hint: /r is not in this sandbox: code here cannot see the user's files. Reach "
        "them through the tools: filesystem.move_file(...); "
        "filesystem.create_directory(path: str)\n")
    assert hints.hint(OSError(errno.EACCES, "Permission denied", "/r"), space) == ""
    if detect_isolation().level == "bwrap":  # its view of / is read-only (checked there)
        with Sandbox(lambda kind, payload: None, namespace={
                "servers": {"filesystem": ["create_directory"]}}) as box:
            made = box.execute("import os\nos.makedirs('/tmp/none-here/logs')").error
            assert "Read-only file system" in made and made.rstrip().endswith(
                "Reach them through the tools: filesystem.create_directory(...)")


def test_missing_modules_point_to_the_standard_library_and_the_tools():
    namespace = {"servers": {"fetch": ["fetch"]}}
    with Sandbox(lambda kind, payload: None, namespace=namespace) as box:
        web = box.execute("import requests\nrequests.get('http://example.com')").error
        assert "ModuleNotFoundError" in web and "no network" in web
        assert "fetch.fetch(url=...)" in web
        other = box.execute("import numpy").error
        assert "only Python's standard library" in other and "network" not in other


def test_a_misspelled_server_or_a_bare_shared_tool_gets_a_hint():
    namespace = {"servers": {"toy": ["add"], "git": ["status"], "files": ["status"]}}
    with Sandbox(lambda kind, payload: None, namespace=namespace) as box:
        typo = box.execute("tooy.add(a=1, b=2)").error
        assert "NameError" in typo and "did you mean 'toy'?" in typo
        assert "did you mean 'git'?" in box.execute("Gti.status()").error
        assert "did you mean 'git'?" in box.execute("git_server.status()").error
        assert "did you mean 'toy'?" in box.execute("toyServer.add(a=1, b=2)").error
        # A value named with a server's word (a loop's name the loop no longer sets) is
        # no server: told "did you mean 'git'?", the 1.5B passed the server as the value.
        assert "did you mean" not in box.execute("print(local_git, 1)").error
        bare = box.execute("status()").error
        assert "call it as git.status(...) or files.status(...)" in bare
        unrelated = box.execute("undefined_thing + 1").error
        made_up = box.execute("calculator.calculate('1+2')").error
        assert "methods of the servers toy, git, files" in made_up
        assert "NameError" in unrelated and "Hint" not in unrelated
        # Code written against a guessed shape of a result: look at the shape first.
        key = box.execute("{'name': 'Marta'}['city']").error
        assert "KeyError: 'city'" in key and "print() the value to see the keys" in key
        box.execute("graph = {'entities': [{'name': 'Marta', 'entityType': 'person'}]}")
        named = box.execute("for node in graph['entities']:\n    print(node['city'])").error
        assert named.endswith("Hint: node has no key 'city'; its keys are 'name' "
                              "('Marta'), 'entityType' ('person')")
        # The dict the line indexed with the missing key, not the first name on the line;
        # the key likely meant, written as the index to copy.
        box.execute("result = {'target': {'timezone': 'Asia/Tokyo', 'datetime': "
                    "'2026-12-03T23:30:00+09:00'}, 'time_difference': '+14.0h'}")
        nested = box.execute('print(result["target"]["time"])').error
        # ('time' is part of both 'timezone' and 'datetime': the slice of the datetime.)
        assert nested.endswith("Hint: result['target'] has no key 'time'; its keys are "
                               "'timezone' ('Asia/Tokyo'), 'datetime' "
                               "('2026-12-03T23:30:00+09:00'); the time is part of "
                               "result['target']['datetime']: result['target']['datetime']"
                               "[11:16] gives '23:30'")
        dated = box.execute('print(result["target"]["date"])').error
        assert dated.endswith("result['target']['datetime'][0:10] gives '2026-12-03'")
        cased = box.execute('print(result["target"]["Date Time"])').error
        assert cased.endswith("likely meant result['target']['datetime']")
        below = box.execute('print(result["datetime"])').error
        assert below.endswith("likely meant result['target']['datetime']")
        # A text result used as an open file: the line to write instead.
        box.execute("def read_text(path):\n    return 'Europe/Paris\\nAsia/Tokyo\\n'")
        opened = box.execute('with read_text("/w/z.txt") as f:\n    zones = f.readlines()').error
        assert opened.endswith('Hint: read_text("/w/z.txt") returns the text itself (a str), '
                               'not a file to open: write f = read_text("/w/z.txt") (no '
                               'with), and use f as the text: f.splitlines() gives its lines')
        box.execute("zones = 'earlier text'")
        lines = box.execute('text = read_text("/w/z.txt")\nzones = text.readlines()').error
        assert lines.endswith("Hint: text is a str, the text itself, not a file: write "
                              "text.splitlines() where you wrote text.readlines()")
        assert "Hint" not in box.execute("with open('/nowhere') as f:\n    pass").error
        # Raised inside a library: its variables are not the model's (string.py's
        # `mapping` here), so the general hint, not a name the code never wrote.
        inside = box.execute("import string\nstring.Template('$x').substitute({})").error
        assert "print() the value to see the keys" in inside and "mapping" not in inside
        added = box.execute("{'content': 'a'} + {'content': 'b'}").error
        assert "TypeError" in added and "that value is a dict" in added
        # A dict in a variable, used as a str: its plain values, as indexes to copy.
        joined = box.execute("line = result + ' standup'").error
        assert joined.endswith(
            "Hint: result is a dict, not a single value; its values are "
            "result['target']['timezone'] ('Asia/Tokyo'), result['target']['datetime'] "
            "('2026-12-03T23:30:00+09:00'), result['time_difference'] ('+14.0h'): use the "
            "index of the one you need")
        assert "Hint" not in box.execute("[1][0] + 'x'").error
        indexed = box.execute("for d in 'Allowed:\\n/tmp':\n    d['path']").error
        assert "that value is a str, not a dict" in indexed and ".splitlines()" in indexed
        # Text that holds JSON (a file's, or a web API's after a line about it): parse it.
        box.execute("page = 'Contents of http://h/s.json:\\n{\"open\": [1, 2]}'")
        api = box.execute("count = len(page['open'])").error
        assert api.endswith("Hint: page is a str that holds a JSON document after a line of "
                            "text; parse it and index what that returns: import json; "
                            "data = json.loads(page[page.index('{'):])")
        unpacked = box.execute("for line in ['08:00 standup', '13:30 design review']:\n"
                               "    at, title = line.strip().split()").error
        assert unpacked.endswith("Hint: the text splits into more parts than the 2 names; "
                                 ".split(maxsplit=1) splits once and keeps the rest of the "
                                 "text in title")
        # Rows with more keys than the DictWriter's fieldnames: leave the others out.
        extra = box.execute(
            "import csv, io\nrows = [{'student': 'Amara', 'exam': '70', 'final': 81.0}]\n"
            "w = csv.DictWriter(io.StringIO(), fieldnames=['student', 'final'])\n"
            "w.writerows(rows)").error
        assert "ValueError: dict contains fields not in fieldnames: 'exam'" in extra
        assert extra.endswith(
            "Hint: csv.DictWriter writes only the fieldnames it was given, and the rows hold "
            "other keys too ('exam'): create it with extrasaction='ignore' (csv.DictWriter("
            "file, fieldnames=fieldnames, extrasaction='ignore')) to leave them out, or write "
            "rows that hold only the fieldnames' keys")
        # Rows zipped with a data row (the header cut off first): keyed by their values.
        keyed = box.execute(
            "text = 'date,category,amount\\n2025-06-02,groceries,92.40\\n'\n"
            "rows = [line.split(',') for line in text.split('\\n')[1:]]\n"
            "rows = [dict(zip(rows[0], row)) for row in rows]\n"
            "total = sum(float(r['amount']) for r in rows if r['category'] == 'groceries')"
        ).error
        assert keyed.endswith(
            "Hint: r has no key 'category': its keys are its own values ('2025-06-02', "
            "'groceries', '92.40'), so the rows were zipped with a data row, not with the "
            "header line's names (a [1:] that cut the header off before it was taken?). Let "
            "csv take the names from the first line: rows = list(csv.DictReader(io.StringIO("
            "text))) (import csv, io), then row['category'] for each row")
        mixed = box.execute("d = {'a': 'a', 'b': 'c'}\nd['x']").error
        assert "Hint: d has no key 'x'; its keys are 'a' ('a'), 'b' ('c')" in mixed
        # A CSV file's text unpacked by the loop as if it were rows.
        box.execute("csv_text = 'city,local_time\\nNew York,07:00\\nBerlin,08:30\\n'")
        rows = box.execute("for city, at in csv_text:\n    print(city)").error
        assert rows.endswith(
            "Hint: csv_text is text, so the loop takes its characters, each one str, not 2 "
            "values; split each line on ',': for line in csv_text.splitlines()[1:]: city, at "
            "= line.split(',') (the [1:] leaves out its header line)")
        listed = box.execute("pairs = [(c, a) for c, a, z in csv_text]").error
        assert "Hint" not in listed  # two values a line, three names: no split gives them
        # A text split on "\n" ends with an empty line: indexing its parts fails.
        box.execute("events = '2025-03-14 deploy\\n2024-11-02 migrate\\n'.split('\\n')")
        empty = box.execute("first = min(events, key=lambda x: x.split()[0])").error
        assert "IndexError" in empty and empty.endswith(
            "Hint: events[2] is '', an empty line (a text split on '\\n' ends with one when "
            "it ends with a newline): keep the lines that have text, "
            "[line for line in text.splitlines() if line.strip()]")
        assert "Hint" not in box.execute("[1, 2][5]").error
        # ... or used like a dict, or like a web response.
        got = box.execute("n = len(page.get('open', []))").error
        assert "AttributeError" in got and got.endswith(
            "data = json.loads(page[page.index('{'):])")
        assert box.execute("'a\\nb'.items()").error.endswith(
            "Hint: that value is a str, not a dict or a list (a tool's result is often "
            "text): print() it first; for its lines use .splitlines()")
        parsed = box.execute("import json\ndata = json.loads(page)").error
        assert "JSONDecodeError" in parsed and parsed.endswith(
            "data = json.loads(page[page.index('{'):])")
        box.execute("text = '[{\"id\": 1}]'")
        assert "data = json.loads(text)\n" in box.execute("text['id']").error + "\n"


def test_an_error_on_a_value_shows_what_the_failing_line_held(box):
    # A table's header row split as a data row: the error named the count, not the row.
    error = box.execute("rows = ['| Days | First hour | Further |', '| Mon | 2.50 | 1.80 |']\n"
                        "for row in rows:\n"
                        "    days, first, further = row.strip('|').split('|')\n"
                        "    total = float(first)").error
    assert ("ValueError: could not convert string to float: ' First hour '\n"
            "The values on that line: first = ' First hour '") in error
    # a datetime split on a space it does not have
    error = box.execute("t = '2026-12-06T05:31:05+00:00'\nhour = t.split(' ')[1]").error
    assert error.endswith("IndexError: list index out of range\n"
                          "The values on that line: t = '2026-12-06T05:31:05+00:00'")
    # long text and containers cut short, with their size; modules and functions left out
    error = box.execute("import json\nnotes = {'founded': 'in 2014', 'staff': list(range(50))}\n"
                        "big = 'x' * 500\nprint(json.dumps(notes['founded']['year']), big)").error
    assert ("The values on that line: notes = {'founded': 'in 2014', 'staff': [0, 1, 2, 3, "
            "4, 5, ...]} (dict of 2); big = 'xxx") in error and "(str of 500 characters)" in error
    assert "json =" not in error and "print =" not in error
    # Not for an error about a name, a module or a path: those name what to fix.
    assert "The values on that line" not in box.execute("x = 1\ny = x + undefined_name").error
    assert "The values on that line" not in box.execute("p = '/nowhere'\nopen(p)").error


def test_a_pattern_that_matched_nothing_shows_the_texts_own_lines(box):
    # The fetch server returns a page as markdown; the model's pattern was for HTML.
    box.execute("page = 'Contents of http://h/p.html:\\n| Model | Price |\\n| --- | --- |\\n"
                "| Trail Runner | $129.90 |\\n| City Walker | $74.50 |\\nPrices include VAT.'")
    error = box.execute("import re\n"
                        "prices = re.findall(r'<span class=\"price\">\\$(\\d+)</span>', page)\n"
                        "cheapest = min(prices, key=float)").error
    assert "ValueError" in error
    assert ("Hint: re.findall(r'<span class=\"price\">\\$(\\d+)</span>', page) matches "
            "nothing (page has no HTML tags: it is text); write the pattern for page's own "
            "lines, such as:\n  | Model | Price |\n  | Trail Runner | $129.90 |\n"
            "  | City Walker | $74.50 |\n  Prices include VAT.") in error
    # None.group(1) after a search over an indexed result; any case and multi-line
    # are tried before a pattern is called a miss.
    box.execute("log = {'text': 'commit abc\\nauthor: Ana <ana@x>\\ndate: today'}")
    missed = box.execute("import re\nwho = re.search(r'Writer: (.*)', log['text']).group(1)")
    assert "Hint: re.search(r'Writer: (.*)', log['text']) matches nothing;" in missed.error
    assert "  author: Ana <ana@x>" in missed.error
    flagged = box.execute("re.search(r'^AUTHOR: (\\w+)', log['text'], re.I | re.M)\n1 / 0")
    assert "ZeroDivisionError" in flagged.error and "Hint" not in flagged.error
    # A pattern that matched, or one after the failing line, is not blamed.
    other = box.execute("m = re.search(r'author', log['text'])\nx = 1 / 0\n"
                        "re.findall(r'zzz', log['text'])").error
    assert "ZeroDivisionError" in other and "Hint" not in other


def test_no_handler_means_no_servers(box):
    result = box.execute("git")
    assert result.status == "error" and "NameError" in result.error
    assert box.execute("search_tools('x')").status == "error"
    assert ok(box.execute("ToolError.__name__")).value == "'ToolError'"


def test_timeout_kills_and_restarts_with_state_lost(box):
    ok(box.execute("kept = 1"))
    started = time.monotonic()
    result = box.execute("while True:\n    pass", timeout=1.0)
    assert result.status == "timeout" and result.state_lost
    assert "1 s time limit" in result.error
    assert time.monotonic() - started < 5
    after = box.execute("kept")
    assert after.status == "error" and "NameError" in after.error and not after.state_lost
    assert ok(box.execute("2 * 21")).value == "42"


def test_cancel_from_another_thread_interrupts_the_cell(box):
    ok(box.execute("kept = 'yes'"))
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    result = box.execute("import time\ntime.sleep(30)", cancel=cancel)
    assert result.status == "killed" and result.error == "cancelled"
    assert not result.state_lost and result.duration_s < 3
    assert ok(box.execute("kept")).value == "'yes'"


@pytest.mark.slow
def test_cancel_kills_a_cell_that_ignores_the_interrupt(box):
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    code = ("import time\nwhile True:\n    try:\n        time.sleep(5)\n"
            "    except KeyboardInterrupt:\n        pass")
    result = box.execute(code, cancel=cancel)
    assert result.status == "killed" and result.state_lost and "cancelled" in result.error
    assert ok(box.execute("'back'")).value == "'back'"


@pytest.mark.slow
def test_cpu_limit_stops_the_cell_and_keeps_state():
    with Sandbox(limits=Limits(cpu_s=1)) as box:
        ok(box.execute("kept = 7"))
        result = box.execute("while True:\n    pass", timeout=20)
        assert result.status == "timeout" and "CPU time limit" in result.error
        # Well before the 20 s wall limit, with room for a busy machine (one CPU second
        # took 7 s of wall time on 2 cores at load 11).
        assert not result.state_lost and result.duration_s < 15
        assert ok(box.execute("kept")).value == "7"


def test_only_the_first_cpu_signal_of_a_cell_ends_it(box):
    # Past the soft limit the kernel sends SIGXCPU every CPU second; one that came after
    # the cell had ended killed the worker. The first ends the cell, the rest are ignored.
    hit = box.execute("import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)")
    assert hit.status == "timeout" and "CPU time limit exceeded" in hit.error
    code = ("import os, signal\ntry:\n    os.kill(os.getpid(), signal.SIGXCPU)\n"
            "except BaseException as exc:\n    print(type(exc).__name__)\n"
            "os.kill(os.getpid(), signal.SIGXCPU)\nprint('alive')")
    assert ok(box.execute(code)).stdout == "CPULimitExceeded\nalive\n"
    # The next cell's budget arms it again.
    assert box.execute("os.kill(os.getpid(), signal.SIGXCPU)").status == "timeout"


@pytest.mark.slow
def test_a_worker_that_used_its_cpu_time_is_restarted():
    with Sandbox(limits=Limits(cpu_s=1, worker_cpu_s=2)) as box:
        ok(box.execute("kept = 7"))
        result = box.execute("while True:\n    pass", timeout=20)
        assert result.status == "timeout" and result.state_lost
        assert "CPU time it may use in all (2 s)" in result.error
        assert box.execute("kept").status == "error"  # a fresh worker
        assert ok(box.execute("'fresh'")).value == "'fresh'"


def test_worker_death_is_reported_and_recovered(box):
    ok(box.execute("kept = 1"))
    result = box.execute("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)")
    assert result.status == "killed" and result.state_lost and "died" in result.error
    assert box.execute("kept").status == "error"
    assert ok(box.execute("'fine'")).value == "'fine'"


def test_restart_forgets_variables(box):
    ok(box.execute("kept = 1"))
    box.restart()
    result = box.execute("kept")
    assert result.status == "error" and not result.state_lost


def test_private_workdir_is_the_home_and_removed_on_close():
    box = Sandbox()
    box.start()
    workdir = box.workdir
    result = ok(box.execute(
        "import os\nopen('made.txt', 'w').write('hi')\n(os.getcwd(), os.environ['HOME'])"))
    assert eval(result.value) == (str(workdir), str(workdir))
    assert (workdir / "made.txt").read_text() == "hi"
    box.close()
    assert not workdir.exists()


def test_given_workdir_is_kept_and_given_back(tmp_path):
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "input.txt").write_text("data")
    owner = workdir.stat().st_uid
    with Sandbox(workdir=workdir) as box:
        assert ok(box.execute("open('input.txt').read()")).value == "'data'"
        ok(box.execute("open('output.txt', 'w').write('out')"))
    assert (workdir / "output.txt").read_text() == "out"
    assert workdir.stat().st_uid == owner and (workdir / "output.txt").stat().st_uid == owner


def test_isolation_is_reported():
    isolation = detect_isolation()
    assert isolation.level in ("bwrap", "unshare", "rlimits") and isolation.details
    if isolation.level == "rlimits":
        assert isolation.network
    else:
        assert not isolation.network


def test_rlimits_level_can_be_forced(monkeypatch):
    monkeypatch.setenv("DESKMATE_SANDBOX_ISOLATION", "rlimits")
    with Sandbox() as box:
        assert box.isolation.level == "rlimits" and box.isolation.network
        ok(box.execute("a = 2"))
        assert ok(box.execute("a ** 10")).value == "1024"
        assert box.execute("while True: pass", timeout=0.5).status == "timeout"
        assert ok(box.execute("'up'")).value == "'up'"


def cli(*args: str, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "deskmate.app.cli", *args], input=stdin, text=True,
                          capture_output=True, cwd=ROOT, timeout=60)


def test_cli_exec_json_reports_each_outcome():
    done = cli("sandbox", "exec", "-", "--json", stdin="print('hello')\n6 * 7")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert (out["status"], out["stdout"], out["error"]) == ("ok", "hello\n", "")
    assert out["value"] == "42" and out["isolation"]["level"] == detect_isolation().level
    failed = json.loads(cli("sandbox", "exec", "-", "--json", stdin="1/0").stdout)
    assert failed["status"] == "error" and "ZeroDivisionError" in failed["error"]
    slow = cli("sandbox", "exec", "-", "--json", "--timeout", "0.5", stdin="while True: pass")
    assert slow.returncode == 0 and json.loads(slow.stdout)["status"] == "timeout"


def test_cli_exec_file_plain_output_and_info(tmp_path):
    script = tmp_path / "cell.py"
    script.write_text("print('from a file')\nraise ValueError('bad value')\n")
    done = cli("sandbox", "exec", str(script), stdin="")
    assert done.returncode == 0
    assert done.stdout == "from a file\n"
    assert "ValueError: bad value" in done.stderr and "[error]" in done.stderr
    info = cli("sandbox", "info", "--json", stdin="")
    assert json.loads(info.stdout)["level"] == detect_isolation().level


def test_env_override_is_read_before_detection_is_cached():
    env = {**os.environ, "DESKMATE_SANDBOX_ISOLATION": "rlimits"}
    done = subprocess.run([sys.executable, "-m", "deskmate.app.cli", "sandbox", "info", "--json"],
                          env=env, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert json.loads(done.stdout)["level"] == "rlimits"


def test_a_delete_of_a_users_file_names_the_tools_that_delete():
    # A tool that deletes and takes a path is named; the memory server's
    # delete_entities (no path) is not a file's delete.
    namespace = {"servers": {"files": ["delete_file", "move_file"],
                             "memory": ["delete_entities"], "trash": ["remove_file"]},
                 "signatures": {"files.delete_file": "delete_file(path: str)",
                                "memory.delete_entities": "delete_entities(entityNames: list)"}}
    with Sandbox(lambda kind, payload: None, namespace=namespace) as box:
        error = box.execute("import os\nos.unlink('/nowhere/ws/a.txt')").error
        assert ("Delete it through a tool: files.delete_file(path: str); "
                "trash.remove_file(...)") in error
        assert "delete_entities" not in error


def test_a_stat_of_a_users_path_without_file_tools_says_where_files_are():
    # os.stat raises no audit event: it would have said a bare "No such file".
    namespace = {"servers": {"notes": ["add_note"]}}
    with Sandbox(lambda kind, payload: None, namespace=namespace) as box:
        error = box.execute("import os\nos.path.getmtime('/nowhere/ws/a.txt')").error
        assert "/nowhere/ws/a.txt is not in this sandbox" in error
        # The sandbox's own files keep plain Python.
        done = box.execute("open('mine.txt', 'w').write('hey')\nimport os\n"
                           "print(os.stat('mine.txt').st_size, os.path.exists('gone.txt'))")
        assert done.error == "" and done.stdout == "3 False\n"
