"""Which isolation this machine offers, and the command line that starts a worker in it.

Levels, strongest first (set DESKMATE_SANDBOX_ISOLATION to cap the level):
- ``bwrap``: bubblewrap namespaces — no network, own pids, a read-only view of the
  system libraries and the Python stdlib only, no home, only the work dir writable.
- ``unshare``: the same view built by deskmate itself (jail.py) where namespaces may be
  created (root, or user namespaces for an ordinary user) but bubblewrap is missing.
- ``rlimits``: resource limits only; the app asks before each cell (see README).
At every level the worker gets a scrubbed environment and rlimits, and as root it runs
as a throwaway uid so that RLIMIT_NPROC (not enforced for root) bounds fork bombs.
"""

from __future__ import annotations

import functools
import marshal
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from deskmate.tools.sandbox.results import Isolation

LEVELS = ("bwrap", "unshare", "rlimits")
OVERRIDE_ENV = "DESKMATE_SANDBOX_ISOLATION"
# The worker's folder: all that runs inside, and the only part of deskmate bound there.
WORKER = Path(__file__).resolve().parent / "worker"
INSIDE = Path("/opt/deskmate-sandbox")  # where the jail shows the worker's folder
JAIL = Path(__file__).resolve().parent / "jail.py"
SYSTEM_LIBS = ("/usr/lib", "/usr/lib64", "/lib", "/lib64")
# Throwaway uids for root's sandboxes: outside any distribution's range, so no file
# or process of a real user shares them.
UID_BASE, UID_SPAN = 1_500_000_000, 100_000_000


@dataclass(frozen=True)
class Plan:
    """How a worker is started at one level."""

    isolation: Isolation
    drop_uid: bool          # run as a throwaway uid (we are root)
    processes_bounded: bool  # RLIMIT_NPROC applies (not root, or the uid is dropped)


def interpreter() -> Path:
    """The real (non-venv) Python binary: no site-packages of ours come with it."""
    return Path(os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable))


def python_paths() -> list[Path]:
    """What the interpreter needs to run the stdlib: binary, stdlib, libpython."""
    paths = [interpreter(), Path(os.path.realpath(sysconfig.get_paths()["stdlib"]))]
    dynload = sysconfig.get_config_var("DESTSHARED")
    if dynload and not Path(os.path.realpath(dynload)).is_relative_to(paths[1]):
        paths.append(Path(os.path.realpath(dynload)))
    libdir = sysconfig.get_config_var("LIBDIR")
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and libdir:
        version = f"{sys.version_info[0]}.{sys.version_info[1]}"
        paths += sorted(Path(libdir).glob(f"libpython{version}*.so*"))
    return [p for p in paths if p.exists()]


def worker_args(level: str, fds: tuple[int, int]) -> list[str]:
    """The interpreter's arguments that run the worker speaking on these fds."""
    folder = WORKER if level == "rlimits" else INSIDE
    return [str(folder / "boot.py"), *(str(fd) for fd in fds)]


def scrubbed_env(workdir: Path) -> dict[str, str]:
    """Built from nothing: no token, key or proxy of the user's reaches the sandbox."""
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "HOME": str(workdir), "TMPDIR": str(workdir)}


def _ancestors(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if p != Path("/")]


def _binds(workdir: Path) -> list[tuple[str, str, str]]:
    """What a jail shows, shallowest first: (option, source, destination)."""
    binds = [("--ro-bind", lib, lib) for lib in SYSTEM_LIBS if os.path.exists(lib)]
    binds += [("--ro-bind", str(p), str(p)) for p in python_paths()]
    binds.append(("--ro-bind", str(WORKER), str(INSIDE)))
    binds.append(("--bind", str(workdir), str(workdir)))
    return sorted(binds, key=lambda b: len(Path(b[2]).parts))


def _site_packages() -> str | None:
    """The stdlib's site-packages, hidden by an empty folder in the jail."""
    site = Path(os.path.realpath(sysconfig.get_paths()["stdlib"])) / "site-packages"
    return str(site) if site.is_dir() else None


def jail_spec(workdir: Path, program: list[str], uid: int | None,
              fds: tuple[int, ...]) -> dict:
    """What jail.py builds: the binds of bwrap's view (a symlinked system folder, as
    Debian's /lib, stays a symlink), the program to exec and as which uid."""
    links, binds, bound = [], [], []
    for option, source, dest in _binds(workdir):
        if source in SYSTEM_LIBS and os.path.islink(source):
            links.append([dest, os.readlink(source)])
        elif not any(Path(dest).is_relative_to(b) for b in bound):
            binds.append([source, dest, option == "--bind"])
            bound.append(dest)
    site = _site_packages()
    return {"links": links, "binds": binds, "hidden": [site] if site else [],
            "workdir": str(workdir), "uid": uid, "argv": program, "fds": list(fds)}


def bwrap_args(workdir: Path, root: bool) -> list[str]:
    binds = _binds(workdir)
    args = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session",
            "--hostname", "sandbox"]
    if root:  # the worker drops to a throwaway uid itself, before any cell runs
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        args += ["--unshare-user"]
    # bwrap creates missing parents with their source's mode (e.g. /root 0700), which a
    # throwaway uid could not traverse: create them first, traversable and unlistable.
    mounted: list[Path] = []
    made: set[Path] = set()
    for _, _, dest in binds:
        for parent in _ancestors(Path(dest)):
            if parent not in made and not any(parent.is_relative_to(m) for m in mounted):
                args += ["--perms", "0711", "--dir", str(parent)]
                made.add(parent)
        mounted.append(Path(dest))
    for option, source, dest in binds:
        args += [option, source, dest]
    if site := _site_packages():  # hide every installed package
        args += ["--perms", "0555", "--tmpfs", site, "--remount-ro", site]
    args += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/", "--chdir", str(workdir)]
    return args


def command(level: str, workdir: Path, args: list[str], *, uid: int | None = None,
            fds: tuple[int, ...] = ()) -> list[str]:
    """argv that runs ``python -I -S -B -u ARGS`` at this level. At ``unshare`` the
    jail drops to ``uid`` itself; ``fds`` are the worker's, which the jail's own
    processes close."""
    program = [str(interpreter()), "-I", "-S", "-B", "-u", *args]
    if level == "bwrap":
        return [*bwrap_args(workdir, os.geteuid() == 0), "--", *program]
    if level == "unshare":
        spec = marshal.dumps(jail_spec(workdir, program, uid, fds)).hex()
        return [str(interpreter()), "-I", "-S", "-B", str(JAIL), spec]
    return program


def _readable_by_others(path: Path) -> bool:
    try:
        if not all(os.stat(p).st_mode & 0o001 for p in [*_ancestors(path)]):
            return False
        return bool(os.stat(path).st_mode & (0o005 if path.is_dir() else 0o004))
    except OSError:
        return False


@functools.cache
def unavailable(level: str) -> str | None:
    """Why this level cannot run here (None: it can), from starting a real (trivial)
    interpreter in it once per process."""
    if sys.platform != "linux" and level != "rlimits":
        return f"{level} needs Linux namespaces"
    if level == "bwrap" and not shutil.which("bwrap"):
        return "bubblewrap is not installed (apt install bubblewrap)"
    with tempfile.TemporaryDirectory(prefix="deskmate-probe-") as tmp:
        uid = sandbox_uid() if os.geteuid() == 0 else None
        if uid is not None:
            os.chown(tmp, uid, uid)
        argv = command(level, Path(tmp), ["-c", "import json, socket"], uid=uid)
        try:
            done = subprocess.run(argv, cwd=tmp, env=scrubbed_env(Path(tmp)), text=True,
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{level} did not start: {exc}"
    if done.returncode == 0:
        return None
    said = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return f"{level} did not start here ({said}); namespaces may be forbidden"


def _bwrap_version() -> str:
    try:
        out = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, timeout=5)
        return out.stdout.strip() or "bubblewrap"
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"


def _plan(level: str) -> Plan:
    root = os.geteuid() == 0
    if level == "rlimits":  # the throwaway uid must reach the interpreter on the host
        drop = root and all(_readable_by_others(p) for p in [
            *python_paths(), WORKER, *WORKER.glob("*.py")])
    else:  # the jail binds the interpreter in: any uid reaches it
        drop = root
    bounded = drop or not root
    procs = ("processes bounded by RLIMIT_NPROC" if bounded else
             "processes NOT bounded (root, and the interpreter is not reachable by an "
             "unprivileged uid)")
    who = "a throwaway uid" if drop else ("root" if root else "your uid")
    limits = "rlimits on CPU, memory, file size, processes; scrubbed environment"
    view = ("no network, own pid namespace, read-only system libraries and Python stdlib "
            "only, no home, only the work dir writable")
    if level == "bwrap":
        details = f"{_bwrap_version()}: {view}; runs as {who}, {procs}; {limits}"
        return Plan(Isolation("bwrap", False, False, details), drop, bounded)
    if level == "unshare":
        details = (f"deskmate's own jail (namespaces, no bubblewrap): {view}; runs as {who} "
                   f"with no capabilities and no_new_privs, {procs}; {limits}")
        return Plan(Isolation("unshare", False, False, details), drop, bounded)
    home_visible = not drop or _readable_by_others(Path(os.path.expanduser("~")))
    details = (f"rlimits only: network reachable, the host file system as {who}; {procs}; "
               f"{limits}. Each cell needs your approval")
    return Plan(Isolation("rlimits", True, home_visible, details), drop, bounded)


@functools.cache
def _plan_for(cap: str) -> Plan:
    for level in LEVELS[LEVELS.index(cap):-1]:
        if unavailable(level) is None:
            return _plan(level)
    return _plan("rlimits")


def plan() -> Plan:
    cap = os.environ.get(OVERRIDE_ENV, "").strip().lower()
    return _plan_for(cap if cap in LEVELS else LEVELS[0])


def install_hint() -> str | None:
    """What one package install would improve here (None: nothing would): bubblewrap,
    where it is missing and the level in force is below it."""
    level = plan().isolation.level
    if level == "bwrap" or sys.platform != "linux" or shutil.which("bwrap"):
        return None
    now = ("deskmate's own jail" if level == "unshare" else
           "no isolation, so each cell of the model's code needs your approval")
    return (f"the code sandbox runs at level {level} ({now}); `sudo apt install "
            "bubblewrap` gives it bubblewrap's jail (level bwrap)")


def detect_isolation() -> Isolation:
    """The strongest isolation that works here (probed once per process)."""
    return plan().isolation


def sandbox_uid() -> int:
    return UID_BASE + int.from_bytes(os.urandom(4), "big") % UID_SPAN
