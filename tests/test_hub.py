"""The MCP hub against real servers: PyPI and npm ones, and broken ones of our own."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import TEST_SERVERS, toy_server

from deskmate.tools.hub import Hub, ServerConfig, ServerUnavailable, ToolCancelled, ToolTimeout
from deskmate.tools.hub.results import ContentItem, ToolResult

pytestmark = pytest.mark.slow


def real_servers(mcp_bin: Path, workdir: Path) -> list[ServerConfig]:
    npm = mcp_bin / "npm" / "node_modules" / ".bin"
    return [
        ServerConfig("time", command=str(mcp_bin / "py" / "bin" / "mcp-server-time")),
        ServerConfig("git", command=str(mcp_bin / "py" / "bin" / "mcp-server-git")),
        ServerConfig("filesystem", command=str(npm / "mcp-server-filesystem"),
                     args=(str(workdir),)),
        ServerConfig("everything", command=str(npm / "mcp-server-everything"), args=("stdio",)),
        ServerConfig("memory", command=str(npm / "mcp-server-memory"),
                     env={"MEMORY_FILE_PATH": str(workdir / "memory.json")}),
    ]


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid``, from the process table."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                state, ppid = (entry / "stat").read_text().rsplit(")", 1)[1].split()[:2]
            except (OSError, IndexError, ValueError):
                continue
            if state == "Z":
                continue  # exited; only its parent's bookkeeping remains
            ppid = int(ppid)
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def start_time(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot); None once it has exited."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else int(fields[19])


def record(pids: set[int]) -> dict[int, int]:
    """Live ``pids`` with their start times, so a reused pid is not taken for them."""
    return {pid: t for pid in pids if (t := start_time(pid)) is not None}


def still_alive(recorded: dict[int, int]) -> set[int]:
    """The recorded processes that still run anywhere, reparented to init or not."""
    return {pid for pid, started in recorded.items() if start_time(pid) == started}


@pytest.fixture(scope="module")
def hub(mcp_bin, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("work")
    (workdir / "notes.txt").write_text("hello from the filesystem server\n")
    hub = Hub([*real_servers(mcp_bin, workdir), toy_server(call_timeout=5)],
              tmp_path_factory.mktemp("logs"))
    hub.workdir = workdir
    yield hub
    hub.close()


def test_real_servers_start_in_parallel(hub):
    started = time.perf_counter()
    states = {s.name: s for s in hub.start()}
    elapsed = time.perf_counter() - started
    assert all(s.status == "ready" for s in states.values()), {
        n: s.error for n, s in states.items()}
    counts = {n: len(s.tools) for n, s in states.items()}
    assert counts["everything"] >= 10 and counts["filesystem"] >= 10 and counts["git"] >= 10
    assert counts["time"] == 2 and counts["memory"] >= 5
    # Parallel: the whole start costs about the slowest server, not their sum.
    assert elapsed < sum(s.connect_s for s in states.values())
    names = {(t.server, t.name) for t in hub.tools()}
    assert ("time", "get_current_time") in names
    read_only = [t for t in hub.tools() if t.server == "filesystem" and t.read_only]
    assert read_only, "filesystem tools carry readOnlyHint annotations"


def test_calls_return_text_and_structured_values(hub):
    assert hub.call("everything", "echo", {"message": "hi"}).value() == "Echo: hi"
    now = hub.call("time", "get_current_time", {"timezone": "Europe/Paris"})
    assert now.value()["timezone"] == "Europe/Paris" and not now.is_error
    path = str(hub.workdir / "notes.txt")
    read = hub.call("filesystem", "read_text_file", {"path": path})
    assert "hello from the filesystem server" in read.text
    # The server's {"content": text} comes back as the text itself.
    assert isinstance(read.value(), str) and read.value() == read.text
    assert hub.call("toy", "add", {"a": 2, "b": 40}).value() == 42


@pytest.mark.parametrize(("structured", "text", "expected"), [
    (None, '{"a": 1}', {"a": 1}),  # JSON text decodes
    (None, "plain words", "plain words"),
    ({"result": [1, 2]}, "[1, 2]", [1, 2]),  # FastMCP's wrapper comes off
    ({"content": "line 1\nline 2"}, "line 1\nline 2", "line 1\nline 2"),  # one string field
    ({"content": '{"k": 2}'}, '{"k": 2}', '{"k": 2}'),  # a file's JSON text stays text
    ({"entities": []}, "{}", {"entities": []}),  # one field that is not text stays
    ({"path": "a", "size": 3}, "", {"path": "a", "size": 3}),
])
def test_value_unwraps_wrappers(structured, text, expected):
    result = ToolResult("s", "t", content=(ContentItem("text", text=text),),
                        structured=structured)
    assert result.value() == expected


def test_tool_errors_are_results(hub):
    result = hub.call("filesystem", "read_text_file", {"path": "/etc/shadow"})
    assert result.is_error and "denied" in result.text.lower()
    unknown = hub.call("everything", "no-such-tool", {})
    assert unknown.is_error


def test_images_become_descriptors(hub):
    result = hub.call("everything", "get-tiny-image", {})
    kinds = {item.kind for item in result.content}
    assert "image" in kinds
    image = next(i for i in result.content if i.kind == "image")
    assert image.mime_type == "image/png" and image.size > 0
    assert "[image" in result.text


def test_stdio_servers_get_a_scrubbed_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    monkeypatch.setenv("TOY_REGION", "eu")
    config = toy_server(env={"GIVEN": "yes", "REGION": "${TOY_REGION}",
                             "FALLBACK": "${TOY_UNSET:-default}"})
    with Hub([config], tmp_path) as hub:
        assert hub.start()[0].status == "ready"
        value = lambda name: hub.call("toy", "env", {"name": name}).value()  # noqa: E731
        assert value("OPENAI_API_KEY") == "<unset>"
        assert value("GIVEN") == "yes" and value("REGION") == "eu"
        assert value("FALLBACK") == "default"
        assert value("HOME") == os.environ["HOME"] and value("PATH") == os.environ["PATH"]


def test_timeout_and_cancel(hub):
    with pytest.raises(ToolTimeout, match="within 1 s"):
        hub.call("toy", "slow", {"seconds": 5}, timeout=1)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.perf_counter()
    with pytest.raises(ToolCancelled):
        hub.call("toy", "slow", {"seconds": 5}, cancel=cancel)
    assert time.perf_counter() - started < 2
    assert hub.call("toy", "echo", {"text": "still fine"}).value() == "still fine"


def test_crash_mid_call_then_restart_on_next_use(hub):
    with pytest.raises(ServerUnavailable, match="crashed during crash") as err:
        hub.call("toy", "crash", {})
    assert "crashing on purpose" in str(err.value)
    assert hub.state("toy").status == "failed"
    # Others are unaffected, and the next call restarts the server.
    assert hub.call("everything", "echo", {"message": "ok"}).value() == "Echo: ok"
    assert hub.call("toy", "echo", {"text": "back"}).value() == "back"
    assert hub.state("toy").status == "ready"


def test_idle_crash_is_noticed_and_the_next_call_restarts(tmp_path):
    before = descendants(os.getpid())
    with Hub([toy_server()], tmp_path) as hub:
        assert hub.start()[0].status == "ready"
        for pid in descendants(os.getpid()) - before:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while hub.state("toy").status == "ready" and time.monotonic() < deadline:
            time.sleep(0.05)
        state = hub.state("toy")
        assert state.status == "failed" and "exited" in state.error
        assert hub.call("toy", "echo", {"text": "back"}).value() == "back"
        assert hub.state("toy").status == "ready"


def test_concurrent_first_calls_share_one_start(tmp_path):
    with Hub([toy_server()], tmp_path) as hub:
        results: dict[int, object] = {}

        def call(i: int) -> None:
            try:
                results[i] = hub.call("toy", "echo", {"text": str(i)}).value()
            except Exception as exc:  # recorded, so the assert below shows it
                results[i] = exc

        threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=180)
        assert results == {i: str(i) for i in range(4)}


def test_unknown_server():
    with Hub([], Path("/tmp")) as empty, pytest.raises(ServerUnavailable, match="no MCP server"):
        empty.call("nope", "x", {})


def test_broken_servers_fail_clearly_and_do_not_block_others(tmp_path):
    servers = [
        toy_server(),
        toy_server("exits", "exits_at_start.py"),
        toy_server("garbage", "garbage_stdout.py", startup_timeout=4),
        toy_server("hangs", "hangs.py", startup_timeout=4),
        ServerConfig("missing", command="/no/such/mcp-server"),
    ]
    with Hub(servers, tmp_path) as hub:
        started = time.perf_counter()
        states = {s.name: s for s in hub.start()}
        elapsed = time.perf_counter() - started
        assert states["toy"].status == "ready"
        assert elapsed < 12  # bounded by the slowest timeout, not the sum
        assert "exited before completing the MCP handshake" in states["exits"].error
        assert "missing API key" in states["exits"].error  # its stderr is shown
        assert "not JSON-RPC" in states["garbage"].error
        assert "within 4 s" in states["hangs"].error
        assert "command not found" in states["missing"].error
        assert "missing API key" in hub.stderr("exits")
        assert hub.call("toy", "echo", {"text": "fine"}).value() == "fine"
        with pytest.raises(ServerUnavailable, match="not available"):
            hub.call("exits", "anything", {})


def test_a_failure_shows_only_the_latest_runs_stderr(tmp_path):
    (tmp_path / "exits.log").write_text("stale: a failure of an earlier run\n")
    with Hub([toy_server("exits", "exits_at_start.py")], tmp_path) as hub:
        hub.start()
        error = hub.restart("exits").error
        assert error.count("missing API key") == 1 and "stale" not in error
        assert hub.stderr("exits").count("missing API key") == 1
    log = (tmp_path / "exits.log").read_text()
    assert log.count("deskmate started this server at") == 2 and "stale" in log


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(("mode", "path"), [("http", "/mcp"), ("sse", "/sse")])
def test_remote_transports(tmp_path, mode, path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(TEST_SERVERS / "toy.py"), mode, str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        config = ServerConfig("remote", transport=mode, url=f"http://127.0.0.1:{port}{path}")
        with Hub([config], tmp_path) as hub:
            state = hub.start()[0]
            assert state.status == "ready", state.error
            assert hub.call("remote", "add", {"a": 1, "b": 2}).value() == 3
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_orphan_check_sees_reparented_processes():
    # A shell that leaves a background child behind: the child is reparented away from
    # us, so it is no descendant any more, yet it runs.
    shell = subprocess.Popen(["sh", "-c", "sleep 30 >/dev/null & echo $!; read _"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    orphan = int(shell.stdout.readline())
    recorded = record({shell.pid, orphan})
    shell.communicate("\n", timeout=10)
    try:
        assert orphan not in descendants(os.getpid())
        assert still_alive(recorded) == {orphan}
    finally:
        os.kill(orphan, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while still_alive(recorded) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not still_alive(recorded)


def test_close_leaves_no_orphan_processes(mcp_bin, tmp_path):
    before = descendants(os.getpid())  # e.g. the servers of this module's shared hub
    with Hub([*real_servers(mcp_bin, tmp_path), toy_server()], tmp_path / "logs") as hub:
        hub.start()
        running = record(descendants(os.getpid()) - before)
        assert len(running) >= 6  # each server, plus npm shims and node children
    # Checked by pid, not as our descendants: an orphan is reparented to init.
    deadline = time.monotonic() + 10
    while still_alive(running) and time.monotonic() < deadline:
        time.sleep(0.1)
    leftover = still_alive(running)
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    assert not leftover
