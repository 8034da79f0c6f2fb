"""Attacks a prompt-injected or mistaken cell might try: each must fail, and the worker
must keep working. Every test runs at each jail this machine offers (bwrap, and
deskmate's own at ``unshare``), so a machine without bubblewrap runs them all too; a
level the machine cannot start is skipped with the reason. At ``rlimits`` nothing is
contained: the app asks before each cell instead (tests/test_sandbox_approval.py)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from deskmate.tools.sandbox import Limits, Sandbox
from deskmate.tools.sandbox.isolation import OVERRIDE_ENV, plan, python_paths, unavailable

ROOT = Path(__file__).resolve().parent.parent
SECRET = "sk-deskmate-test-7f3a9c1e"
FAKE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nfake-key-for-deskmate-tests\n"

# How a read of something the sandbox must not see fails: no permission, not there, or
# (for a path whose folder is not in the sandbox either) the sandbox's own error.
DENIED = ("PermissionError", "FileNotFoundError", "SandboxPathError")


@pytest.fixture(autouse=True, params=["bwrap", "unshare"])
def level(request, monkeypatch) -> str:
    """The jail this test runs in (the override caps the level; the cap is the level
    when this machine can start it)."""
    monkeypatch.setenv(OVERRIDE_ENV, request.param)
    if reason := unavailable(request.param):
        pytest.skip(reason)
    assert plan().isolation.level == request.param
    return request.param


@pytest.fixture
def box():
    with Sandbox(limits=Limits(cell_timeout_s=15)) as sandbox:
        yield sandbox


def assert_recovers(box: Sandbox) -> None:
    result = box.execute("print('alive')")
    assert (result.status, result.stdout) == ("ok", "alive\n"), result


def world_readable_dir() -> Path:
    """A host folder any uid could read if nothing isolated it (not under pytest's 0700
    tmp dirs, which would make the tests pass for the wrong reason)."""
    folder = Path(tempfile.mkdtemp(prefix="deskmate-sec-"))
    folder.chmod(0o755)
    return folder


@pytest.fixture
def fake_home(monkeypatch):
    """The user's home, for this test process: HOME points at a folder holding a key."""
    home = world_readable_dir()
    (home / ".ssh").mkdir(mode=0o755)
    key = home / ".ssh" / "id_ed25519"
    key.write_text(FAKE_KEY)
    key.chmod(0o644)
    monkeypatch.setenv("HOME", str(home))
    yield home
    subprocess.run(["rm", "-rf", str(home)], check=False)


def test_home_and_ssh_keys_are_not_readable(fake_home):
    key = fake_home / ".ssh" / "id_ed25519"
    assert key.read_text() == FAKE_KEY  # the host can read it
    with Sandbox() as box:
        (box.workdir / "control.txt").write_text("control")
        (box.workdir / "control.txt").chmod(0o644)
        code = f"""
import os, pwd
found = []
for path in [{str(key)!r}, os.path.expanduser('~/.ssh/id_ed25519'),
             os.path.join({str(fake_home)!r}, '.ssh')]:
    try:
        found.append(open(path).read() if not os.path.isdir(path) else os.listdir(path))
    except OSError as exc:
        found.append(type(exc).__name__)
print(found)
print(open('control.txt').read())
"""
        result = box.execute(code)
        assert result.status == "ok", result
        assert "control" in result.stdout  # the reading code itself works
        assert not box.isolation.home_visible
        assert "fake-key" not in result.stdout and "id_ed25519" not in result.stdout
        real_home = box.execute(f"import os\nos.listdir({os.path.expanduser('~root')!r})")
        assert real_home.status == "error" and "Error" in real_home.error
        assert_recovers(box)


def test_etc_shadow_is_not_readable(box):
    result = box.execute("open('/etc/shadow').read()")
    assert result.status == "error"
    assert any(name in result.error for name in DENIED)
    assert_recovers(box)


def test_cannot_write_outside_the_workdir(box):
    open_dir = world_readable_dir()
    open_dir.chmod(0o777)  # even a folder anyone may write to
    targets = [open_dir / "planted.txt", ROOT / "planted.txt", Path("/etc/planted.txt"),
               Path("/planted.txt"), Path("/tmp/planted.txt")]
    code = f"""
outcomes = {{}}
for path in {[str(t) for t in targets]!r} + ['inside.txt']:
    try:
        open(path, 'w').write('x')
        outcomes[path] = 'written'
    except OSError as exc:
        outcomes[path] = type(exc).__name__
outcomes
"""
    result = box.execute(code)
    assert result.status == "ok", result
    outcomes = eval(result.value)
    assert outcomes["inside.txt"] == "written" and (box.workdir / "inside.txt").exists()
    for target in targets:
        assert outcomes[str(target)] != "written" and not target.exists(), target
    subprocess.run(["rm", "-rf", str(open_dir)], check=False)
    assert_recovers(box)


@pytest.fixture
def loopback_server():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    accepted: list[str] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append("connection")
            conn.sendall(b"hello from the host\n")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join(2)
    server.close()


def test_no_network_to_a_loopback_server(box, loopback_server):
    port, accepted = loopback_server
    code = f"""
import socket
try:
    s = socket.create_connection(('127.0.0.1', {port}), timeout=3)
    print('connected', s.recv(100))
except OSError as exc:
    print('refused', type(exc).__name__)
"""
    result = box.execute(code)
    assert result.status == "ok", result
    assert not box.isolation.network
    assert "refused" in result.stdout and "hello" not in result.stdout and not accepted
    assert_recovers(box)


def test_subprocess_and_os_system_cannot_reach_the_host(box, fake_home):
    key = fake_home / ".ssh" / "id_ed25519"
    code = f"""
import os, subprocess, sys
try:
    print('system', os.system('cat {key} > stolen.txt'))
except OSError as exc:  # no shell here: the cell is told so (programs.py)
    print('system refused', type(exc).__name__)
try:
    out = subprocess.run(['cat', {str(key)!r}], capture_output=True, text=True).stdout
    print('cat', out)
except OSError as exc:
    print('cat failed', type(exc).__name__)
child = subprocess.run([sys.executable, '-c', 'import sys; print(open(sys.argv[1]).read())',
                        {str(key)!r}], capture_output=True, text=True)
print('child', child.returncode, child.stdout)
"""
    result = box.execute(code)
    assert result.status == "ok", result
    # no shell, no binaries but the interpreter
    assert "system 0" not in result.stdout and "cat failed" in result.stdout
    assert "fake-key" not in result.stdout
    stolen = box.workdir / "stolen.txt"
    assert not stolen.exists() or "fake-key" not in stolen.read_text()
    assert_recovers(box)


def test_ctypes_cannot_regain_privileges_or_reach_the_host(box):
    code = f"""
import ctypes, ctypes.util, os
libc = ctypes.CDLL(None, use_errno=True)
print('setuid', libc.setuid(0))
print('uid', os.getuid())
print('kill-host', libc.kill({os.getpid()}, 0))
print('open-shadow', libc.open(b'/etc/shadow', 0))
"""
    result = box.execute(code)
    assert result.status == "ok", result
    if plan().drop_uid:  # we are root: the cell runs as a throwaway uid
        assert "setuid -1" in result.stdout and "uid 0\n" not in result.stdout
    assert "kill-host -1" in result.stdout
    assert "open-shadow -1" in result.stdout
    crash = box.execute("import ctypes\nctypes.string_at(0)")
    assert crash.status == "killed" and crash.state_lost
    assert_recovers(box)


def test_parent_environment_secrets_do_not_leak(monkeypatch):
    monkeypatch.setenv("DESKMATE_TEST_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with Sandbox() as box:
        code = f"""
import os
print(dict(os.environ))
for pid in [p for p in os.listdir('/proc') if p.isdigit()] + [{str(os.getpid())!r}]:
    try:
        print(pid, open(f'/proc/{{pid}}/environ', 'rb').read())
    except OSError as exc:
        print(pid, type(exc).__name__)
"""
        result = box.execute(code)
        assert result.status == "ok", result
        assert "PATH" in result.stdout  # the dump itself worked
        assert SECRET not in result.stdout
        assert_recovers(box)


def test_memory_bomb_is_reported_and_survived(box):
    result = box.execute("hog = []\nwhile True:\n    hog.append(bytearray(10 ** 7))")
    assert result.status == "memory" and not result.state_lost, result
    assert box.execute("del hog\nprint('alive')").stdout == "alive\n"
    huge = box.execute("bytearray(10 ** 11)")
    assert huge.status == "memory" and "MemoryError" in huge.error
    assert_recovers(box)


def test_infinite_loop_times_out_and_recovers(box):
    result = box.execute("while True:\n    pass", timeout=1)
    assert result.status == "timeout" and result.state_lost
    assert_recovers(box)


def _processes_in(workdir: Path) -> list[int]:
    """Host processes whose working directory is this sandbox's work dir."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(workdir):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_a_cell_cannot_lift_its_cpu_limit(box):
    """RLIMIT_CPU's hard limit is set, so the per-cell CPU budget cannot be raised."""
    result = box.execute("import resource\n"
                         "resource.setrlimit(resource.RLIMIT_CPU, "
                         "(resource.RLIM_INFINITY, resource.RLIM_INFINITY))")
    assert result.status == "error" and "ValueError" in result.error, result
    ok = box.execute("import resource\nresource.getrlimit(resource.RLIMIT_CPU)[1]")
    assert ok.status == "ok" and ok.value != str(-1)  # -1 is RLIM_INFINITY
    assert_recovers(box)


@pytest.mark.slow
def test_fork_bomb_is_contained_and_the_host_survives():
    assert plan().processes_bounded
    limits = Limits(max_processes=16)
    with Sandbox(limits=limits) as box:
        counted = box.execute("""
import os, time
children = []
try:
    for _ in range(500):
        pid = os.fork()
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
except OSError as exc:
    print('fork refused:', type(exc).__name__)
for pid in children:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
len(children)
""")
        assert counted.status == "ok", counted
        assert "fork refused" in counted.stdout and int(counted.value) < limits.max_processes
        bomb = box.execute("import os\nwhile True:\n    os.fork()", timeout=5)
        assert bomb.status in ("error", "timeout"), bomb
        assert len(_processes_in(box.workdir)) <= limits.max_processes + 2
        # the classic bomb that keeps forking from every child until the wall timeout
        bomb = box.execute("import os\nwhile True:\n    try:\n        os.fork()\n"
                           "    except OSError:\n        pass", timeout=3)
        assert bomb.status == "timeout" and bomb.state_lost
        assert subprocess.run(["true"], timeout=10).returncode == 0  # the host can still fork
        assert_recovers(box)
        workdir = box.workdir
    assert _processes_in(workdir) == []


def test_cli_exec_runs_attacks_without_leaking(monkeypatch):
    monkeypatch.setenv("DESKMATE_TEST_API_KEY", SECRET)
    code = ("import os\nprint(os.environ.get('DESKMATE_TEST_API_KEY'))\n"
            "open('/etc/shadow').read()")
    done = subprocess.run([sys.executable, "-m", "deskmate.app.cli", "sandbox", "exec", "-",
                           "--json"],
                          input=code, text=True, capture_output=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["status"] == "error" and out["stdout"] == "None\n"
    assert SECRET not in done.stdout
    assert any(name in out["error"] for name in DENIED)


def test_workdir_is_private_to_the_sandbox(box):
    mode = box.workdir.stat().st_mode
    assert not mode & (stat.S_IRWXG | stat.S_IRWXO)


def test_no_capability_and_none_to_gain(box):
    status = box.execute("print(open('/proc/self/status').read())")
    fields = dict(line.split(":\t", 1) for line in status.stdout.splitlines() if ":\t" in line)
    assert fields["CapEff"].strip() == fields["CapPrm"].strip() == "0" * 16, status.stdout
    assert fields["CapAmb"].strip() == "0" * 16 and fields["NoNewPrivs"].strip() == "1"
    if os.geteuid() == 0:
        assert fields["Uid"].split()[0] != "0"


def test_only_the_jail_is_visible(box):
    seen = box.execute("import os\nsorted(os.listdir('/'))")
    bound = [*python_paths(), box.workdir, Path("/usr/lib"), Path("/opt")]
    expected = {"dev", "proc", "lib", "lib64"} | {p.parts[1] for p in bound}
    assert set(eval(seen.value)) <= expected, seen
    missing = box.execute("import os\n[p for p in ('/usr/bin', '/etc/passwd', '/var', "
                          "'/root/.bashrc', '/usr/local/lib/python3') if os.path.exists(p)]")
    assert missing.value == "[]", missing


def test_stray_processes_end_with_the_worker():
    with Sandbox(limits=Limits(cell_timeout_s=15)) as box:
        started = box.execute("import os, time\nif os.fork() == 0:\n    os.setsid()\n"
                              "    time.sleep(120)\n    os._exit(0)\nprint('forked')")
        assert started.stdout == "forked\n", started
        workdir = box.workdir
        assert len(_processes_in(workdir)) >= 2
    assert _processes_in(workdir) == []


def test_a_cell_cannot_signal_processes_outside(box):
    """Not even a host process of the worker's own uid: the jail has its own pids. (The
    pid is named, not kill(-1): were the jail broken, the test must not kill the
    user's other processes.)"""
    uid = box.workdir.stat().st_uid  # the worker's (a throwaway one when we are root)
    outside = subprocess.Popen(["sleep", "60"], user=uid if os.geteuid() == 0 else None)
    try:
        result = box.execute(f"import os, signal\nos.kill({outside.pid}, signal.SIGKILL)")
        assert result.status == "error" and "ProcessLookupError" in result.error, result
        assert outside.poll() is None
    finally:
        outside.kill()
        outside.wait()
    assert_recovers(box)
