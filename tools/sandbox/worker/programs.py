"""A program a cell runs that the sandbox does not have (``os.system("git commit -m
…")``, ``subprocess.run(["ls", path])``): an error that names the connected tools for
the job, instead of os.system's bare 32512 (the shell's "not found", which the 1.5B gave
as its final answer) or subprocess's "No such file or directory: 'git'".

The jail has no programs but the interpreter, and no program here could see the user's
files anyway: the tools do that work. A program the sandbox has still runs (the jail,
not this check, is what keeps it away from the host).
"""

from __future__ import annotations

import errno
import os
import re
import sys

from .hints import name_words, tool_call
from .state import CELL_PREFIX, CELLS_MODULE, Toolspace, WorkerState

# The audit events of running a program, and where each carries its command line.
# os.popen and subprocess.run raise subprocess.Popen (a shell's is ["/bin/sh", "-c", cmd]).
PROGRAM_EVENTS = frozenset({"os.system", "subprocess.Popen", "os.exec", "os.posix_spawn"})
SHELL = "/bin/sh"
# The stdlib frames between a cell and the audit event.
RUNNER_FILES = frozenset({"subprocess.py", "os.py", "<frozen os>"})
# A shell command's separators; its words that only prefix the program.
SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
PREFIXES = frozenset({"sudo", "env", "exec", "command", "nohup", "time"})
# What a common program does, in the words tool names use for it (``ls`` lists).
PROGRAM_WORDS = {
    "ls": {"list"}, "dir": {"list"}, "tree": {"tree"}, "cat": {"read"}, "head": {"read"},
    "tail": {"read"}, "less": {"read"}, "more": {"read"}, "mv": {"move"}, "cp": {"copy"},
    "rm": {"delete", "remove"}, "rmdir": {"delete", "remove"}, "mkdir": {"create", "directory"},
    "touch": {"write", "create"}, "find": {"search", "find"}, "grep": {"search"},
    "date": {"time"}, "curl": {"fetch"}, "wget": {"fetch"}, "stat": {"info"},
}
SHOWN = 3


class ProgramError(FileNotFoundError):
    """A program the sandbox does not have; the message says which tools do the job."""

    __module__ = CELLS_MODULE

    def __str__(self) -> str:
        return self.args[1]


def install(state: WorkerState) -> None:
    sys.addaudithook(_audit_hook(state))


def _audit_hook(state: WorkerState):
    def _missing_program(event: str, args: tuple) -> None:
        if event not in PROGRAM_EVENTS or not state.in_cell or not _from_cell():
            return
        command, programs = _command(event, args)
        missing = next((p for p in programs if not _found(p)), None)
        if missing is not None:
            # With no shell, nothing of the command runs: name its own program.
            named = programs[0] if missing == programs[-1] and len(programs) > 1 else missing
            raise ProgramError(errno.ENOENT, message(command, named, state.toolspace), named)

    return _missing_program


def _from_cell() -> bool:
    """Whether the cell's own code runs the program (directly, or through subprocess and
    os.popen), not a module it called (ctypes.util probing for a compiler)."""
    frame = sys._getframe(2)
    while frame is not None and os.path.basename(frame.f_code.co_filename) in RUNNER_FILES:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(CELL_PREFIX)


def _command(event: str, args: tuple) -> tuple[str, list[str]]:
    """The command line as written, and the programs it runs, in order."""
    import shlex  # (here, not at the worker's start: only a cell that runs a program needs it)

    # os.system: (command,); the others: (executable, argv, ...).
    if event == "os.system":
        text = os.fsdecode(args[0])
        return text, [*_shell_programs(text), SHELL]
    argv = args[1]
    if isinstance(argv, str | bytes | os.PathLike):
        argv = [argv]
    argv = [os.fsdecode(a) if isinstance(a, bytes | os.PathLike) else str(a) for a in argv]
    if len(argv) >= 3 and argv[1] == "-c" and os.path.basename(argv[0]) in ("sh", "bash"):
        return argv[2], [*_shell_programs(argv[2]), argv[0]]  # shell=True, os.popen
    executable = os.fsdecode(args[0]) if args[0] is not None else ""
    return shlex.join(argv), [executable or (argv[:1] or [""])[0]]


def _shell_programs(text: str) -> list[str]:
    """The programs of a shell command (``cd repo && git commit -m x`` runs git)."""
    import shlex

    programs = []
    for part in SEPARATORS.split(text):
        try:
            words = shlex.split(part)
        except ValueError:
            words = part.split()
        while words and (words[0] in PREFIXES or re.match(r"\w+=", words[0])):
            words = words[1:]
        if words and words[0] != "cd":
            programs.append(words[0])
    return programs


def _found(program: str) -> bool:
    # os.access, not shutil.which: which() stats each candidate, and routed.py's stat asks
    # whether a path is the user's.
    if "/" in program:
        return os.access(program, os.X_OK)
    return any(os.access(os.path.join(folder, program), os.X_OK)
               for folder in os.environ.get("PATH", os.defpath).split(os.pathsep) if folder)


def message(command: str, program: str, toolspace: Toolspace) -> str:
    """The error's text: what did not run, and the tools that do its job."""
    shown = command if len(command) <= 120 else command[:117] + "..."
    name = os.path.basename(program)
    head = (f"{shown!r} was not run: there is no {name} in this sandbox (programs do not "
            "run here, and code here cannot see the user's files).")
    calls = tool_calls(command, name, toolspace)
    if calls:
        return f"{head} Do it with the tools: {'; '.join(calls)}"
    return f"{head} Find the tool that does it: search_tools({_search_text(command, name)!r})"


def tool_calls(command: str, program: str, toolspace: Toolspace) -> list[str]:
    """The connected tools whose names say what ``command`` (running ``program``) does:
    ``git commit -m x`` -> git.git_commit (a server named like the program, a tool named
    by its subcommand); ``ls /data`` -> list_directory."""
    own = next((s for s in toolspace.server_names
                if program and program.rstrip("0123456789") == s.rstrip("0123456789")), None)
    words = set(_words_of(command)) | PROGRAM_WORDS.get(program, set())
    if own is not None:
        words.discard(program)
        words.discard(own)
    scored = []
    for tool, servers in toolspace.tool_servers.items():
        for server in servers:
            hits = len(words & name_words(tool))
            if hits and (own is None or server == own):
                scored.append((-hits, tool_call(server, tool, toolspace)))
    scored.sort(key=lambda pair: pair[0])  # stable: the servers' own order among ties
    return [call for _, call in scored[:SHOWN]]


def _words_of(command: str) -> list[str]:
    """The command's plain words, once each: no options, paths, values with spaces,
    numbers, ``cd`` or ``sudo``."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    plain = [w.lower() for w in words if re.fullmatch(r"[A-Za-z][\w-]{0,19}", w)]
    return [w for w in dict.fromkeys(plain) if w != "cd" and w not in PREFIXES][:6]


def _search_text(command: str, program: str) -> str:
    """What to search the tools for: what the program does (``ls``: list) and the
    command's words."""
    said = sorted(PROGRAM_WORDS.get(program, set()))
    return " ".join(said + [w for w in _words_of(command) if w not in said])
