"""The sandbox worker: runs cells in one persistent namespace, like a notebook.

Started by the host as ``python -I -S worker.py IN_FD OUT_FD`` inside whatever
isolation the OS offers (see isolation.py). Stdlib only: no site-packages are visible.
The two fds carry protocol frames; fd 1 and 2 are a pipe the host captures as the
cell's output. Tool calls leave only through the ``call`` frame; the host decides.
"""

import ast
import contextlib
import importlib.util
import linecache
import math
import os
import queue
import resource
import signal
import sys
import threading
import traceback
from pathlib import Path

# -I leaves this file's folder out of sys.path, so `import protocol` would not find it.
_spec = importlib.util.spec_from_file_location(
    "_deskmate_protocol", Path(__file__).with_name("protocol.py"))
protocol = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(protocol)
_spec = importlib.util.spec_from_file_location(
    "_deskmate_connected_files", Path(__file__).with_name("connected_files.py"))
connected_files = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(connected_files)

CELL_PREFIX = "<cell "
CPU_GRACE_S = 2  # RLIMIT_CPU's hard limit above the soft one: SIGXCPU before SIGKILL
WORKER_PID = os.getpid()


class ToolError(Exception):
    """A tool call the host refused or that failed; the message says why."""


class SandboxPathError(FileNotFoundError):
    """A path outside what the sandbox can see: the user's files are reached through the
    tools. Raised instead of silence (``os.walk`` would yield nothing) or a bare ENOENT,
    which small models take for "the folder is empty"."""

    def __str__(self) -> str:
        return self.args[0]


class CPULimitExceeded(BaseException):
    """RLIMIT_CPU's soft limit was reached (SIGXCPU)."""


class Channel:
    """The worker's end of the protocol: one reader thread, serialized writes."""

    def __init__(self, in_fd: int, out_fd: int) -> None:
        self.in_fd, self.out_fd = in_fd, out_fd
        self.jobs: queue.Queue = queue.Queue()
        self.replies: queue.Queue = queue.Queue()
        self.running = False
        self._lock = threading.Lock()
        self._next_id = 0

    def send(self, message: dict) -> None:
        # An interrupt must not land in the middle of a frame.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            with self._lock:
                protocol.write_frame(self.out_fd, message)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def read_forever(self) -> None:
        while True:
            try:
                message = protocol.read_frame(self.in_fd)
            except (protocol.ProtocolError, OSError):
                self.jobs.put(None)
                self.replies.put(None)
                return
            kind = message["type"]
            if kind == "exec":
                self.jobs.put(message)
            elif kind == "reply":
                self.replies.put(message)
            elif kind == "interrupt" and self.running:
                os.kill(WORKER_PID, signal.SIGINT)

    def call(self, kind: str, payload: dict):
        self._next_id += 1
        call_id = self._next_id
        self.send({"type": "call", "id": call_id, "kind": kind, "payload": payload})
        while True:
            reply = self.replies.get()
            if reply is None:
                raise ToolError("the host closed the tool channel")
            if reply.get("id") == call_id:
                break  # replies to calls abandoned by an interrupt are dropped
        if not reply.get("ok"):
            raise ToolError(reply.get("error") or "tool call failed")
        return reply.get("value")


def _check_json(value, what: str) -> None:
    if value is None or isinstance(value, (str, int, float, bool)):
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_json(item, what)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{what}: dict keys must be strings, got {key!r}")
            _check_json(item, what)
        return
    raise TypeError(f"{what} must be JSON values (str, int, float, bool, None, list, "
                    f"dict), got {type(value).__name__}")


class Server:
    """One MCP server: its tools are methods; unknown names still ask the host."""

    def __init__(self, channel: Channel, name: str, tools: list[str]) -> None:
        object.__setattr__(self, "_channel", channel)
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_tools", list(tools))

    def __getattr__(self, tool: str):
        if tool.startswith("_"):
            raise AttributeError(tool)
        channel, server = self._channel, self._name

        def call(*args, **kwargs):
            _check_json(args, "tool arguments")
            _check_json(kwargs, "tool arguments")
            return channel.call("tool", {"server": server, "tool": tool,
                                         "args": list(args), "kwargs": kwargs})

        call.__name__ = call.__qualname__ = tool
        call.__doc__ = f"Tool {server}.{tool}; tool_help({server!r}, {tool!r}) describes it."
        return call

    def __setattr__(self, name: str, value) -> None:
        raise AttributeError(f"server {self._name!r} is read-only")

    def __dir__(self) -> list[str]:
        return list(self._tools)

    def __repr__(self) -> str:
        return f"<server {self._name}: {len(self._tools)} tools; dir() lists them>"


# tool name -> the servers that have it, for a hint when code calls a tool bare.
TOOL_SERVERS: dict[str, list[str]] = {}
SERVER_NAMES: list[str] = []  # for a hint when code misspells a server


def build_namespace(channel: Channel, spec: dict) -> dict:
    ns: dict = {"__name__": "__main__", "__builtins__": __builtins__, "ToolError": ToolError}
    for name, tools in (spec.get("servers") or {}).items():
        ns[name] = Server(channel, name, tools)
        SERVER_NAMES.append(name)
        for tool in tools:
            TOOL_SERVERS.setdefault(tool, []).append(name)
    # Small models often call a tool bare (`read_file(...)`): a tool name that only one
    # server has is also a plain function, unless the name is taken.
    for tool, servers in TOOL_SERVERS.items():
        if len(servers) == 1 and tool not in ns:
            ns[tool] = getattr(ns[servers[0]], tool)
    helpers = spec.get("helpers") or []
    if "search_tools" in helpers:
        def search_tools(query: str, k: int = 5):
            """Search all connected tools by what they do; returns the best k matches."""
            return channel.call("search_tools", {"query": query, "k": k})
        ns["search_tools"] = search_tools
    if "tool_help" in helpers:
        def tool_help(server: str, *names: str) -> str:
            """Python signatures and docs of a server's tools (all of them if no names)."""
            return channel.call("tool_help", {"server": server, "names": list(names)})
        ns["tool_help"] = tool_help
    return ns


def drop_privileges(uid: int | None, gid: int | None) -> None:
    if uid is None:
        return
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


def apply_limits(limits: dict) -> None:
    def cap(which: int, value: int) -> None:
        resource.setrlimit(which, (value, value))

    mb = 1024 * 1024
    cap(resource.RLIMIT_AS, limits["memory_mb"] * mb)
    cap(resource.RLIMIT_FSIZE, limits["file_size_mb"] * mb)
    cap(resource.RLIMIT_NPROC, limits["max_processes"])
    cap(resource.RLIMIT_CORE, 0)
    # The hard limit too, or a cell could lift its own CPU budget. It sits a little above
    # the soft one, so that SIGXCPU (a clean "CPU time limit exceeded") comes first.
    life = max(limits.get("worker_cpu_s", 600), limits["cpu_s"])
    resource.setrlimit(resource.RLIMIT_CPU, (life, life + CPU_GRACE_S))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises OSError


def _on_xcpu(signum, frame):
    raise CPULimitExceeded


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cpu_life() -> int | None:
    """The CPU seconds the worker may use in all (below the hard limit), None: no end."""
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    return None if hard == resource.RLIM_INFINITY else max(hard - CPU_GRACE_S, 0)


def set_cpu_budget(seconds: int | None) -> None:
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    life = _cpu_life()
    soft = (hard if life is None else life) if seconds is None else (
        math.ceil(_cpu_used()) + seconds)
    if life is not None:
        soft = min(soft, life)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def cpu_spent(cell_s: int) -> bool:
    """Less than one cell's CPU budget is left of the worker's: it must be restarted."""
    life = _cpu_life()
    return life is not None and _cpu_used() + cell_s > life


def format_error(exc: BaseException) -> str:
    """The traceback trimmed to the frames of the user's cells."""
    if isinstance(exc, SyntaxError) and str(exc.filename).startswith(CELL_PREFIX):
        return "".join(traceback.format_exception_only(exc)).rstrip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if f.filename.startswith(CELL_PREFIX)]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(exc)
    name = getattr(exc, "name", None)
    if isinstance(exc, NameError) and name in TOOL_SERVERS:
        calls = " or ".join(f"{server}.{name}(...)" for server in TOOL_SERVERS[name])
        lines.append(f"Hint: {name} is a tool; call it as {calls}\n")
    elif isinstance(exc, NameError) and name and (hint := _misspelled_server_hint(name)):
        lines.append(hint)
    elif isinstance(exc, ModuleNotFoundError) and name:
        lines.append(_missing_module_hint(name.partition(".")[0]))
    return "".join(lines).rstrip()


def _misspelled_server_hint(name: str) -> str:
    """``tooy.add(...)``: a name close to a server's (case aside) gets its right spelling."""
    import difflib

    by_lower = {server.lower(): server for server in SERVER_NAMES}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.6)
    if not close:
        return ""
    server = by_lower[close[0]]
    return f"Hint: did you mean {server!r}? It is a server: dir({server}) lists its tools\n"


# Modules small models reach for to get at the web: the sandbox has no network.
_WEB_MODULES = frozenset({"requests", "httpx", "urllib3", "aiohttp", "bs4", "selenium",
                          "playwright", "scrapy", "lxml", "mechanize"})


def _missing_module_hint(module: str) -> str:
    hint = "Hint: only Python's standard library is installed in this sandbox"
    if module in _WEB_MODULES:
        web = [f"{server}.{tool}(url=...)" for tool, servers in TOOL_SERVERS.items()
               if "fetch" in tool or "url" in tool for server in servers][:2]
        how = " or ".join(web) if web else 'search_tools("fetch a web page")'
        hint += f", and it has no network: get web pages through the tools: {how}"
    return hint + "\n"


_PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir"})
_FILE_TOOLS = ("list_directory", "read_text_file", "read_file", "search_files",
               "directory_tree")
IN_CELL = False


def _unseen_path(event: str, args: tuple) -> None:
    """Audit hook: code of a cell that reaches for a path this sandbox does not have (its
    parent folder is missing too) gets an error that says where files are."""
    if event not in _PATH_EVENTS or not IN_CELL or not args:
        return
    path = args[0]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not _unseen(path):
        return
    frame = sys._getframe(1)
    while frame is not None:  # imports probe missing paths on their own: not ours
        name = frame.f_code.co_filename
        if name.startswith("<frozen importlib"):
            return
        if name.startswith(CELL_PREFIX):
            break
        frame = frame.f_back
    else:
        return
    tools = [f"{server}.{tool}(path=...)" for tool in _FILE_TOOLS
             for server in TOOL_SERVERS.get(tool, [])][:3]
    how = ", ".join(tools) if tools else 'search_tools("read a file")'
    raise SandboxPathError(f"{path} is not in this sandbox: code here cannot see the "
                           f"user's files. Reach them through the tools: {how}")


def _walk_reporting_unseen(top, topdown=True, onerror=None, followlinks=False):
    """os.walk, except that a path outside the sandbox is an error, not an empty walk
    (or a walk through the connected file tools, when there are some)."""
    user = _user_path(top) if _FILES is not None else None
    if user is not None:
        return _FILES.walk(user, topdown, onerror)
    def report(exc: OSError) -> None:
        if isinstance(exc, SandboxPathError):
            raise exc
        if onerror is not None:
            onerror(exc)
    return _os_walk(top, topdown, report, followlinks)


_os_walk = os.walk
_FILES = None  # connected_files.ToolFiles, once install_connected_files() ran
# The originals, before install_connected_files() wraps them.
_real = {"open": open, "isdir": os.path.isdir, "isfile": os.path.isfile,
         "exists": os.path.exists, "listdir": os.listdir}


def _unseen(path) -> bool:
    """A path this sandbox does not have, in a folder it does not have either (a new
    file in the sandbox's own folder, or a plain missing one there, is not unseen)."""
    if not isinstance(path, str) or not path or os.path.lexists(path):
        return False
    return not _real["isdir"](os.path.dirname(os.path.abspath(path)))


def _user_path(file) -> str | None:
    """``file`` as a path of the user's that a cell reaches for, else None."""
    if not IN_CELL or isinstance(file, int):
        return None
    try:
        path = os.fspath(file)
    except TypeError:
        return None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return path if _unseen(path) else None


def install_connected_files(files) -> None:
    """Route a cell's plain file calls on the user's paths through ``files`` (a
    connected_files.ToolFiles); every other path keeps Python's own behaviour."""
    import builtins
    import io

    global _FILES
    _FILES = files

    def routed_open(file, mode="r", buffering=-1, encoding=None, *args, **kwargs):
        path = _user_path(file)
        if path is None:
            return _real["open"](file, mode, buffering, encoding, *args, **kwargs)
        return files.open(path, mode, encoding)

    def routed_listdir(path="."):
        user = _user_path(path)
        return files.listdir(user) if user is not None else _real["listdir"](path)

    def routed(name: str, kind: str | None):
        def check(path) -> bool:
            user = _user_path(path)
            if user is None:
                return _real[name](path)
            found = files.kind(user)
            return found is not None if kind is None else found == kind
        check.__name__ = name
        return check

    builtins.open = io.open = routed_open
    os.listdir = routed_listdir
    os.path.exists = routed("exists", None)
    os.path.isfile = routed("isfile", "file")
    os.path.isdir = routed("isdir", "dir")


def run_cell(code: str, number: int, ns: dict, limits: dict, channel: Channel) -> dict:
    filename = f"{CELL_PREFIX}{number}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    status, error, value = "ok", "", None
    global IN_CELL
    channel.running = IN_CELL = True
    try:
        set_cpu_budget(limits["cpu_s"])
        tree = ast.parse(code, filename, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, filename, "exec"), ns)
        if last is not None:
            result = eval(compile(last, filename, "eval"), ns)
            if result is not None:
                ns["_"] = result
                value = repr(result)
    except MemoryError as exc:
        status, error = "memory", _safe_format(exc, "MemoryError: out of memory")
    except CPULimitExceeded:
        status = "timeout"
        error = f"CPU time limit exceeded ({limits['cpu_s']} s of CPU for one cell)"
    except KeyboardInterrupt:
        status, error = "killed", "interrupted"
    except BaseException as exc:
        status, error = "error", _safe_format(exc, repr(exc))
    finally:
        channel.running = IN_CELL = False
        set_cpu_budget(None)
    done = {"type": "done", "status": status, "error": error, "value": value}
    if cpu_spent(limits["cpu_s"]):
        done["restart"] = True
        done["error"] = "; ".join(filter(None, [error, "the sandbox used the CPU time it "
                                                f"may use in all ({_cpu_life()} s)"]))
    return done


def _safe_format(exc: BaseException, fallback: str) -> str:
    try:
        return format_error(exc)
    except MemoryError:
        return fallback


def _in_forked_child(in_fd: int, out_fd: int) -> None:
    # A process forked by a cell must not speak the protocol: only the worker does.
    for fd in (in_fd, out_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


def main(argv: list[str]) -> int:
    in_fd, out_fd = int(argv[1]), int(argv[2])
    setup = protocol.read_frame(in_fd)
    drop_privileges(setup.get("uid"), setup.get("gid"))
    limits = setup["limits"]
    apply_limits(limits)
    signal.signal(signal.SIGXCPU, _on_xcpu)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.register_at_fork(after_in_child=lambda: _in_forked_child(in_fd, out_fd))
    sys.stdout.reconfigure(write_through=True)
    channel = Channel(in_fd, out_fd)
    ns = build_namespace(channel, setup.get("namespace") or {})
    servers = (setup.get("namespace") or {}).get("servers") or {}
    files = connected_files.ToolFiles.find(
        servers, lambda server: lambda tool, **kwargs: getattr(ns[server], tool)(**kwargs))
    if files is not None:
        install_connected_files(files)
    os.walk = _walk_reporting_unseen
    sys.addaudithook(_unseen_path)
    threading.Thread(target=channel.read_forever, name="protocol", daemon=True).start()
    channel.send({"type": "ready"})
    number = 0
    while True:
        try:
            job = channel.jobs.get()
        except KeyboardInterrupt:
            continue  # an interrupt that arrived just after its cell ended
        if job is None:
            return 0
        number += 1
        result = run_cell(job["code"], number, ns, limits, channel)
        if os.getpid() != WORKER_PID:
            os._exit(0)  # a child the cell forked has finished the cell's code
        sys.stdout.flush()
        sys.stderr.flush()
        # SIGINT is blocked while writing: one raised here comes after the whole frame.
        with contextlib.suppress(KeyboardInterrupt):
            channel.send(result)
        if result.get("restart"):
            return 0  # the host starts a fresh worker, with a fresh CPU allowance


if __name__ == "__main__":
    sys.exit(main(sys.argv))
