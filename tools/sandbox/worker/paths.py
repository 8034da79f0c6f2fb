"""A cell's file calls on paths the sandbox does not have: the user's files.

When a connected server has file tools, Python's file calls on such a path go through
them (routed.py, over connected_files.py); otherwise the call raises a SandboxPathError
that says where the files are — instead of the silence (``os.walk`` yields nothing) or
bare ENOENT that small models take for "the folder is empty". A relative path the
sandbox does not have may be the request's file (``_request_file``). Paths the sandbox
has (its working folder) keep plain Python.
"""

import os
import stat
import sys

from . import hints, routed
from .connected_files import ToolFiles
from .state import CELL_PREFIX, CELLS_MODULE, WorkerState

PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "glob.glob"})
# Calls that change files: on the user's paths they fail the same way, and the error
# names the tools that write, move and make folders.
WRITE_EVENTS = frozenset({"os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.chmod",
                          "os.truncate", "os.link", "os.symlink", "shutil.copyfile",
                          "shutil.copytree", "shutil.rmtree", "shutil.move"})
# Of those, the deletes (os.unlink audits as os.remove): the error says which connected
# tool deletes, or that none does.
DELETE_EVENTS = frozenset({"os.remove", "os.rmdir", "shutil.rmtree"})
# Python's own, before install() wraps them.
_real_stat = os.stat
_os_walk = os.walk


def _real_isdir(path: str) -> bool:
    # Not os.path.isdir: it calls os.stat, which routed.py replaces with one that asks
    # whether a path is the user's, which asks this.
    try:
        return stat.S_ISDIR(_real_stat(path).st_mode)
    except (OSError, ValueError):
        return False


class SandboxPathError(FileNotFoundError):
    """A path outside what the sandbox can see: the user's files are reached through the
    tools. Raised instead of silence (``os.walk`` would yield nothing) or a bare ENOENT,
    which small models take for "the folder is empty"."""

    __module__ = CELLS_MODULE

    def __str__(self) -> str:
        return self.args[0]


def install(state: WorkerState, files: ToolFiles | None) -> None:
    """Route the file calls of cells (through ``files`` when there are file tools), and
    report the user's paths that nothing routes."""
    if files is not None:
        routed.install(files, state,
                       lambda file, write=False: _user_path(file, state, write),
                       lambda name: _request_file(name, state, True))
    else:
        os.stat = _stat(state)
    os.walk = _walk(state, files)
    sys.addaudithook(_audit_hook(state))


def _unseen(path) -> bool:
    """A path this sandbox does not have, in a folder it does not have either (a new
    file in the sandbox's own folder, or a plain missing one there, is not unseen)."""
    if not isinstance(path, str) or not path or os.path.lexists(path):
        return False
    return not _real_isdir(os.path.dirname(os.path.abspath(path)))


def _user_path(file, state: WorkerState, write: bool = False) -> str | None:
    """``file`` as a path of the user's that a cell reaches for, else None. ``write``:
    the cell writes it (a relative path is then the user's only where the request
    names that file; any other stays the sandbox's own scratch)."""
    if not state.in_cell or isinstance(file, int):
        return None
    try:
        path = os.fspath(file)
    except TypeError:
        return None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if _unseen(path):
        return path
    return _request_file(path, state, write)


def _request_file(path: str, state: WorkerState, write: bool) -> str | None:
    """A relative path the sandbox's folder does not have, as the request's file.

    Asked to "count the lines of poem.txt (in the repository at /r) and write the number
    into LINES.txt", the 1.5B wrote ``open('LINES.txt', 'w')``: the file landed in the
    sandbox's own folder, out of the user's sight, and the commit that followed had
    nothing to add. A name the request gives a file is that file (its full path in the
    request, else in the request's one folder); any other relative name read is looked
    for in the request's folder; written, it stays the sandbox's."""
    if not path or os.path.isabs(path) or os.path.lexists(path):
        return None
    name = os.path.normpath(path)
    user = state.named.get(name)
    if user is None and not write and state.folder and not name.startswith(".."):
        user = f"{state.folder.rstrip('/')}/{name}"
    if user is not None and path not in state.noted:
        state.noted.add(path)
        print(f"({path!r} is taken as the request's file {user}, through the file tools)")
    return user


def _audit_hook(state: WorkerState):
    def _unseen_path(event: str, args: tuple) -> None:
        """Audit hook: code of a cell that reaches for a path this sandbox does not have
        (its parent folder is missing too) gets an error that says where files are."""
        write = event in WRITE_EVENTS
        if not (write or event in PATH_EVENTS) or not state.in_cell or not args:
            return
        paths = [os.fsdecode(p) if isinstance(p, bytes) else p for p in args[:2]]
        path = next((p for p in paths[: 2 if write else 1] if _unseen(p)), None)
        if path is None:
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
        raise SandboxPathError(hints.unseen_path(path, state.toolspace, write,
                                                 delete=event in DELETE_EVENTS))

    return _unseen_path


def _walk(state: WorkerState, files: ToolFiles | None):
    def _walk_reporting_unseen(top, topdown=True, onerror=None, followlinks=False):
        """os.walk, except that a path outside the sandbox is an error, not an empty walk
        (or a walk through the connected file tools, when there are some)."""
        user = _user_path(top, state) if files is not None else None
        if user is not None and files is not None:
            return files.walk(user, topdown, onerror)
        def report(exc: OSError) -> None:
            if isinstance(exc, SandboxPathError):
                raise exc
            if onerror is not None:
                onerror(exc)
        return _os_walk(top, topdown, report, followlinks)

    _walk_reporting_unseen.__module__ = CELLS_MODULE
    return _walk_reporting_unseen


def _stat(state: WorkerState):
    def _stat_reporting_unseen(path, *, dir_fd=None, follow_symlinks=True):
        """os.stat, except that a path outside the sandbox (with no file tools to reach
        it) says where the files are; os.stat raises no audit event to catch."""
        if dir_fd is None and state.in_cell and isinstance(path, str | bytes | os.PathLike):
            shown = os.fsdecode(os.fspath(path))
            if _unseen(shown):  # (a SandboxPathError is a FileNotFoundError: linecache's
                # own probes of missing files still take it for one)
                raise SandboxPathError(hints.unseen_path(shown, state.toolspace, False))
        return _real_stat(path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)

    _stat_reporting_unseen.__module__ = CELLS_MODULE
    return _stat_reporting_unseen
