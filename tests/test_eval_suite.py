"""Eval suites: loading, validation errors that name the file, selections, the real suite."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from deskmate.finetune.eval.suite import SuiteError, load_suite

ROOT = Path(__file__).resolve().parent.parent
LOCAL = ROOT / "assets" / "eval" / "local"

SERVERS = {"mcpServers": {
    "filesystem": {"command": "npx",
                   "args": ["-y", "@modelcontextprotocol/server-filesystem", "${WORKSPACE}"]},
    "time": {"command": "uvx", "args": ["mcp-server-time"]},
}}


def make_suite(root: Path, tasks: dict[str, str], servers=SERVERS, files=None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "servers.json").write_text(
        servers if isinstance(servers, str) else json.dumps(servers))
    for task_id, toml in tasks.items():
        (root / task_id).mkdir()
        (root / task_id / "task.toml").write_text(textwrap.dedent(toml))
    for rel, text in (files or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


GOOD = """
    prompt = "What is in ${WORKSPACE}/a.txt?"
    servers = ["filesystem"]
    [setup]
    files = { "a.txt" = "hello", "sub/b.txt" = "b" }
    git_init = true
    [check]
    answer_contains = ["hello"]
    answer_regex = "h.llo"
    file_exists = ["a.txt"]
    file_contains = { "sub/b.txt" = ["b"] }
    file_absent = ["c.txt"]
    [[rubric]]
    criterion = "reads the file"
    category = "tool_grounding"
    weight = 2
"""


def test_a_full_task_loads_into_typed_fields(tmp_path):
    suite = load_suite(make_suite(tmp_path / "s", {"read-a": GOOD}))
    task = suite.tasks["read-a"]
    assert task.prompt.startswith("What is in ${WORKSPACE}")
    assert task.servers == ("filesystem",)
    assert task.files == {"a.txt": "hello", "sub/b.txt": "b"} and task.git_init
    assert task.checks.answer_contains == ("hello",) and task.checks.answer_regex == "h.llo"
    assert task.checks.file_contains == {"sub/b.txt": ("b",)}
    assert task.checks.count() == 5 and task.scored and task.verify is None
    assert task.rubric[0].category == "tool_grounding" and task.rubric[0].weight == 2.0
    assert suite.site is None and suite.selections == {}


@pytest.mark.parametrize("toml, message", [
    ('servers = ["filesystem"]', "prompt: a non-empty string is required"),
    ('prompt = "  "', "prompt: a non-empty string is required"),
    ('prompt = "x"\nservers = ["git"]', "servers: 'git' is not in servers.json"),
    ('prompt = "x"\nservers = "filesystem"', "servers: expected a list of strings"),
    ('prompt = "x"\nchecks = {}', "checks: unknown key"),
    ('prompt = "x"\n[check]\nanswer_has = ["a"]', "check.answer_has: unknown check"),
    ('prompt = "x"\n[check]\nanswer_regex = "(unclosed"', "not a valid regular expression"),
    ('prompt = "x"\n[check]\nfile_exists = ["../outside"]', "must be a relative path"),
    ('prompt = "x"\n[check]\nfile_contains = { "/etc/passwd" = ["root"] }',
     "must be a relative path"),
    ('prompt = "x"\n[check]\nfile_contains = { "a" = "b" }', "expected a list of strings"),
    ('prompt = "x"\n[setup]\nfiles = { "a" = 3 }', "the content must be a string"),
    ('prompt = "x"\n[setup]\ngit_init = "yes"', "expected true or false"),
    ('prompt = "x"\n[setup]\ngit = true', "setup.git: unknown key"),
    ('prompt = "x"\n[[rubric]]\ncriterion = "c"\ncategory = "vibes"',
     "'vibes' is not one of task_fulfillment"),
    ('prompt = "x"\n[[rubric]]\ncriterion = "c"\ncategory = "task_fulfillment"\nweight = -1',
     "weight: expected a positive number"),
    ('prompt = "x"\n[[rubric]]\ncategory = "task_fulfillment"', "criterion: a non-empty"),
    ('prompt = "x\nbroken', "not valid TOML"),
])
def test_task_errors_name_the_file_and_key(tmp_path, toml, message):
    root = make_suite(tmp_path / "s", {"t1": toml})
    with pytest.raises(SuiteError) as err:
        load_suite(root)
    assert str(root / "t1" / "task.toml") in str(err.value)
    assert message in str(err.value)


@pytest.mark.parametrize("servers, message", [
    (None, "servers.json: missing"),
    ("{not json", "servers.json:1: not valid JSON"),
    ({"servers": []}, 'expected {"mcpServers"'),
    ({"mcpServers": {"bad": {"args": ["x"]}}}, "bad: skipped"),
])
def test_servers_json_errors(tmp_path, servers, message):
    root = make_suite(tmp_path / "s", {"t1": 'prompt = "x"\n[check]\nanswer_contains = ["a"]'},
                      servers=servers if servers is not None else "")
    if servers is None:
        (root / "servers.json").unlink()
    with pytest.raises(SuiteError, match=r"servers\.json") as err:
        load_suite(root)
    assert message in str(err.value)


def test_verify_py_is_loaded_and_checked(tmp_path):
    task = 'prompt = "x"'
    root = make_suite(tmp_path / "ok", {"t1": task}, files={
        "t1/verify.py": "def verify(workspace, answer):\n    return 1.0\n"})
    assert load_suite(root).tasks["t1"].verify(Path("."), "") == 1.0
    for body, message in [("x = 1\n", "defines no function verify"),
                          ("def verify(workspace):\n    return 1\n", "must take (workspace"),
                          ("import not_a_module_anywhere\n", "fails to import")]:
        root = make_suite(tmp_path / f"bad{len(message)}", {"t1": task},
                          files={"t1/verify.py": body})
        with pytest.raises(SuiteError) as err:
            load_suite(root)
        assert message in str(err.value) and str(root / "t1" / "verify.py") in str(err.value)


def test_a_suites_helpers_py_is_importable_from_its_verify_py_only(tmp_path):
    verify = "from helpers import VALUE\n\ndef verify(workspace, answer):\n    return VALUE\n"
    suites = [make_suite(tmp_path / name, {"t1": 'prompt = "x"'}, files={
        "helpers.py": f"VALUE = {value}\n", "t1/verify.py": verify})
        for name, value in (("half", 0.5), ("one", 1.0))]
    assert [load_suite(s).tasks["t1"].verify(Path("."), "") for s in suites] == [0.5, 1.0]
    assert "helpers" not in sys.modules  # there only while a verify.py is loaded
    # a suite without helpers.py: its verify.py cannot import another suite's
    root = make_suite(tmp_path / "none", {"t1": 'prompt = "x"'}, files={"t1/verify.py": verify})
    with pytest.raises(SuiteError, match="fails to import: ModuleNotFoundError"):
        load_suite(root)
    (suites[0] / "helpers.py").write_text("import not_a_module_anywhere\n")
    with pytest.raises(SuiteError, match=r"half/helpers\.py: fails to import"):
        load_suite(suites[0])


def test_suites_load_at_once_in_threads_each_with_its_own_helpers(tmp_path):
    # The Finetune screen's surveys load the bundled suite in worker threads; two at
    # once once took `helpers` out of sys.modules under the other's verify.py.
    verify = ("import time\ntime.sleep(0.02)\nfrom helpers import VALUE\n\n"
              "def verify(workspace, answer):\n    return VALUE\n")
    suites = [make_suite(tmp_path / f"s{i}", {f"t{j}": 'prompt = "x"' for j in range(3)},
                         files={"helpers.py": f"VALUE = {i}\n",
                                **{f"t{j}/verify.py": verify for j in range(3)}})
              for i in range(4)]
    with ThreadPoolExecutor(4) as pool:
        loaded = list(pool.map(load_suite, suites * 2))
    assert [{t.verify(Path("."), "") for t in s.tasks.values()} for s in loaded] == \
        [{i} for i in range(4)] * 2
    assert "helpers" not in sys.modules


def test_selections_and_task_choice(tmp_path):
    tasks = {name: 'prompt = "x"\n[check]\nanswer_contains = ["a"]' for name in "abc"}
    root = make_suite(tmp_path / "s", tasks, files={
        "suite.toml": '[selections]\nsmoke = ["c", "a"]\n'})
    suite = load_suite(root)
    assert [t.id for t in suite.select(None)] == ["a", "b", "c"]
    assert [t.id for t in suite.select(["smoke"])] == ["c", "a"]
    assert [t.id for t in suite.select(["b", "smoke", "a"])] == ["b", "c", "a"]
    with pytest.raises(SuiteError, match="no task or selection 'd'"):
        suite.select(["d"])
    (root / "suite.toml").write_text('[selections]\nsmoke = ["zzz"]\n')
    with pytest.raises(SuiteError, match=r"suite.toml: selections.smoke: no task 'zzz'"):
        load_suite(root)


def test_not_a_suite(tmp_path):
    with pytest.raises(SuiteError, match="not a folder"):
        load_suite(tmp_path / "nowhere")
    make_suite(tmp_path / "empty", {})
    with pytest.raises(SuiteError, match="no tasks"):
        load_suite(tmp_path / "empty")


def test_the_local_suite_is_valid_and_honest():
    suite = load_suite(LOCAL)
    assert len(suite.tasks) >= 40
    assert len(suite.selections["smoke"]) == 3
    assert suite.site is not None and (suite.site / "products.html").exists()
    servers_used = {name for task in suite.tasks.values() for name in task.servers}
    assert servers_used == {"filesystem", "git", "memory", "time", "everything", "fetch"}
    assert sum(len(t.servers) > 1 for t in suite.tasks.values()) >= 10  # cross-server
    for task in suite.tasks.values():
        assert task.scored, f"{task.id} has no deterministic check"
        # No task gives its expected answer away in the prompt.
        for needle in task.checks.answer_contains:
            assert needle.lower() not in task.prompt.lower(), (task.id, needle)
        if task.checks.answer_regex:
            assert not re.search(task.checks.answer_regex, task.prompt), task.id


def test_the_local_suites_verify_py_read_the_memory_graph_and_git(tmp_path):
    tasks = load_suite(LOCAL).tasks
    relation = tasks["mem-relation"].verify
    assert relation(tmp_path, "") == 0.0  # no memory file yet
    (tmp_path / ".memory.jsonl").write_text("\n".join(json.dumps(item) for item in [
        {"type": "entity", "name": "Alice", "entityType": "person", "observations": []},
        {"type": "entity", "name": "Bob", "entityType": "person", "observations": []},
        {"type": "relation", "from": "Alice", "relationType": "manages", "to": "Bob"}]))
    assert relation(tmp_path, "") == 1.0
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], cwd=tmp_path, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert tasks["git-head-hash"].verify(tmp_path, f"HEAD is {head}") == 1.0
    assert tasks["git-head-hash"].verify(tmp_path, "HEAD is 0000000") == 0.0
