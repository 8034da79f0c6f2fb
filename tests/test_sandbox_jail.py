"""The unshare level's jail (tools/sandbox/jail.py) for an ordinary user: it enters a
user namespace to mount, and the code inside sees what it sees as root's jail.

The security tests run the jail as this test run's user (root in CI); this one starts
it as ``nobody`` with the system's Python (root's pyenv is not readable by nobody).
"""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from deskmate.tools.sandbox.isolation import JAIL, SYSTEM_LIBS

NOBODY = 65534
SYSTEM_PYTHON = Path(os.path.realpath("/usr/bin/python3"))
PROBE = """
import os, json
status = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines()
              if ':\\t' in l)
try:
    open('/etc/shadow')
    shadow = 'read'
except OSError as exc:
    shadow = type(exc).__name__
open('made.txt', 'w').write('x')
print(json.dumps({'uid': os.getuid(), 'pid': os.getpid(), 'root': sorted(os.listdir('/')),
                  'caps': status['CapEff'].strip(), 'nnp': status['NoNewPrivs'].strip(),
                  'shadow': shadow}))
"""


@pytest.fixture
def open_tmp():
    """A folder nobody can reach (pytest's own are root's, 0700)."""
    folder = Path(tempfile.mkdtemp(prefix="deskmate-jail-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_an_ordinary_user_gets_the_same_jail(open_tmp):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("starts the jail as nobody: needs root and setpriv (util-linux)")
    if not SYSTEM_PYTHON.is_file() or not SYSTEM_PYTHON.is_relative_to("/usr"):
        pytest.skip("needs the system's Python under /usr (python3)")
    tmp_path = open_tmp
    work = tmp_path / "work"
    work.mkdir()
    os.chown(work, NOBODY, NOBODY)
    jail = tmp_path / "jail.py"  # a copy nobody can read (the checkout may be private)
    shutil.copy(JAIL, jail)
    jail.chmod(0o644)
    links = [[lib, os.readlink(lib)] for lib in SYSTEM_LIBS if os.path.islink(lib)]
    binds = [[lib, lib, False] for lib in SYSTEM_LIBS
             if os.path.isdir(lib) and not os.path.islink(lib)]
    binds += [[str(SYSTEM_PYTHON), str(SYSTEM_PYTHON), False], [str(work), str(work), True]]
    spec = {"links": links, "binds": binds, "hidden": [], "workdir": str(work), "uid": None,
            "argv": [str(SYSTEM_PYTHON), "-I", "-S", "-c", PROBE], "fds": []}
    done = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                           "--clear-groups", str(SYSTEM_PYTHON), "-I", "-S", str(jail),
                           marshal.dumps(spec).hex()], capture_output=True, text=True, timeout=60,
                          cwd="/")
    if done.returncode == 126 and "unshare" in done.stderr:
        pytest.skip(f"user namespaces are not allowed here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["uid"] == NOBODY and seen["pid"] == 2  # pid 1 is the jail's init
    assert seen["caps"] == "0" * 16 and seen["nnp"] == "1"
    assert seen["shadow"] == "FileNotFoundError"
    assert set(seen["root"]) <= {"dev", "proc", "usr", "lib", "lib64", "tmp", "bin"}
    assert (work / "made.txt").read_text() == "x"
