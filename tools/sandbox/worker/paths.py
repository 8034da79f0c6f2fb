"""A cell's file calls on paths the sandbox does not have: the user's files.

When a connected server has file tools, ``open``, ``os.listdir``, ``os.path.exists``/
``isfile``/``isdir`` (and ``pathlib``'s ``exists``/``is_file``/``is_dir``), ``os.walk``,
``glob.glob``/``iglob`` (an absolute pattern; ``pathlib``'s ``glob``/``rglob``),
``os.mkdir``/``makedirs`` and
``os.rename``/``replace``/``shutil.move`` on such a path go through them
(connected_files.py); otherwise the call raises a SandboxPathError that says where the
files are — instead of the silence (``os.walk`` yields nothing) or bare ENOENT that
small models take for "the folder is empty". A relative path the sandbox does not have
may be the request's file (``_request_file``). Paths the sandbox has (its working
folder) keep plain Python.

The functions that replace Python's keep their plain signatures and no postponed
annotations: ``help(open)`` in a cell shows them.
"""

import builtins
import errno
import glob
import io
import os
import pathlib
import shutil
import sys

from . import hints
from .connected_files import ToolFiles
from .state import CELL_PREFIX, CELLS_MODULE, WorkerState

PATH_EVENTS = frozenset({"open", "os.listdir", "os.scandir", "glob.glob"})
# Calls that change files: on the user's paths they fail the same way, and the error
# names the tools that write, move and make folders.
WRITE_EVENTS = frozenset({"os.rename", "os.remove", "os.rmdir", "os.mkdir", "os.chmod",
                          "os.truncate", "os.link", "os.symlink", "shutil.copyfile",
                          "shutil.copytree", "shutil.rmtree", "shutil.move"})
# Python's own, before install() wraps them.
_real = {"open": open, "isdir": os.path.isdir, "isfile": os.path.isfile,
         "exists": os.path.exists, "listdir": os.listdir, "mkdir": os.mkdir,
         "makedirs": os.makedirs, "rename": os.rename, "replace": os.replace,
         "move": shutil.move, "glob": glob.glob, "iglob": glob.iglob}
_os_walk = os.walk


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
        install_connected_files(files, state)
    os.walk = _walk(state, files)
    sys.addaudithook(_audit_hook(state))


def _unseen(path) -> bool:
    """A path this sandbox does not have, in a folder it does not have either (a new
    file in the sandbox's own folder, or a plain missing one there, is not unseen)."""
    if not isinstance(path, str) or not path or os.path.lexists(path):
        return False
    return not _real["isdir"](os.path.dirname(os.path.abspath(path)))


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
        raise SandboxPathError(hints.unseen_path(path, state.toolspace, write))

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


def install_connected_files(files: ToolFiles, state: WorkerState) -> None:
    """Route a cell's plain file calls on the user's paths through ``files``; every
    other path keeps Python's own behaviour."""

    def routed_open(file, mode="r", buffering=-1, encoding=None, *args, **kwargs):
        path = _user_path(file, state, write=bool(set(str(mode)) & set("wax+")))
        if path is None:
            return _real["open"](file, mode, buffering, encoding, *args, **kwargs)
        return files.open(path, mode, encoding)

    def routed_listdir(path="."):
        user = _user_path(path, state)
        return files.listdir(user) if user is not None else _real["listdir"](path)

    def routed(name: str, kind: str | None):
        def check(path) -> bool:
            user = _user_path(path, state)
            if user is None:
                return _real[name](path)
            found = files.kind(user)
            return found is not None if kind is None else found == kind
        check.__name__ = name
        check.__module__ = CELLS_MODULE
        return check

    def made(path) -> str | None:
        """A folder or a move's destination to make as the user's: a relative one only
        where the request names it (its parents are missing by nature, which would
        make any new relative path look like the user's)."""
        if isinstance(path, str | bytes | os.PathLike) and not os.path.isabs(path):
            return _request_file(os.fsdecode(path), state, True) if state.in_cell else None
        return _user_path(path, state, write=True)

    def routed_mkdir(path, mode=0o777, *, dir_fd=None):
        user = made(path)
        if user is None:
            return _real["mkdir"](path, mode, dir_fd=dir_fd)
        files.mkdir(user)

    def routed_makedirs(name, mode=0o777, exist_ok=False):
        user = made(name)
        if user is None:
            return _real["makedirs"](name, mode, exist_ok)
        files.mkdir(user, exist_ok=exist_ok)

    def renaming(name: str):
        def rename(src, dst, *, src_dir_fd=None, dst_dir_fd=None):
            moved = _moved(src, dst)
            if moved is None:
                return _real[name](src, dst, src_dir_fd=src_dir_fd, dst_dir_fd=dst_dir_fd)
            files.move(*moved)
        rename.__name__ = name
        rename.__module__ = CELLS_MODULE
        return rename

    def routed_move(src, dst, copy_function=shutil.copy2):
        moved = _moved(src, dst)
        if moved is None:
            return _real["move"](src, dst, copy_function)
        source, destination = moved
        if files.kind(destination) == "dir":  # into the folder, as shutil.move does
            destination = f"{destination.rstrip('/')}/{source.rstrip('/').rpartition('/')[2]}"
        files.move(source, destination)
        return destination

    def _moved(src, dst) -> tuple[str, str] | None:
        """(source, destination) as the user's paths; None when both are the sandbox's.
        One of each cannot move through the tools: that is said, not half done."""
        source, destination = _user_path(src, state), made(dst)
        if source is None and destination is None:
            return None
        if source is None or destination is None:
            raise OSError(errno.EXDEV, "one path is the user's and the other the sandbox's "
                          "own: read the file and write it where it belongs instead",
                          os.fspath(src if source is None else dst))
        return source, destination

    def path_check(name: str, kind: str | None):
        # pathlib's exists/is_file/is_dir stat the path, which no tool does: on the
        # user's paths they said False (a file the model had just been shown "did not
        # exist"); they ask the tools as os.path's do.
        real = getattr(pathlib.Path, name)

        def check(self, *args, **kwargs):
            user = _user_path(self, state)
            if user is None:
                return real(self, *args, **kwargs)
            found = files.kind(user)
            return found is not None if kind is None else found == kind
        check.__name__ = name
        check.__module__ = CELLS_MODULE
        setattr(pathlib.Path, name, check)

    for name, kind in (("exists", None), ("is_file", "file"), ("is_dir", "dir")):
        path_check(name, kind)

    def path_glob(name: str):
        # pathlib's glob scans the folder itself, and on the user's paths it found
        # nothing without a word; through the listings it matches as it would there
        # ("**" any number of folders, hidden names too).
        real = getattr(pathlib.Path, name)

        def globbing(self, pattern, *args, **kwargs):
            user = _user_path(self, state)
            if user is None:
                return real(self, pattern, *args, **kwargs)
            parts = [part for part in str(pattern).split("/") if part]
            if name == "rglob":
                parts = ["**", *parts]
            return (type(self)(found) for found in files.glob(user, parts, True, True))
        globbing.__name__ = name
        globbing.__module__ = CELLS_MODULE
        setattr(pathlib.Path, name, globbing)

    path_glob("glob")
    path_glob("rglob")

    def routed_glob(pathname, *, root_dir=None, dir_fd=None, recursive=False,
                    include_hidden=False):
        found = _user_glob(pathname, root_dir, recursive, include_hidden)
        if found is None:
            return _real["glob"](pathname, root_dir=root_dir, dir_fd=dir_fd,
                                 recursive=recursive, include_hidden=include_hidden)
        return found

    def routed_iglob(pathname, *, root_dir=None, dir_fd=None, recursive=False,
                     include_hidden=False):
        found = _user_glob(pathname, root_dir, recursive, include_hidden)
        if found is None:
            return _real["iglob"](pathname, root_dir=root_dir, dir_fd=dir_fd,
                                  recursive=recursive, include_hidden=include_hidden)
        return iter(found)

    def _user_glob(pathname, root_dir, recursive, hidden) -> list[str] | None:
        """The matches of an absolute pattern whose folder before its first wildcard is
        the user's, through the listings; None for any other pattern."""
        pattern = os.fsdecode(pathname)
        if root_dir is not None or not os.path.isabs(pattern) or not glob.has_magic(pattern):
            return None
        parts = pattern.split("/")
        fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
        top = "/".join(parts[:fixed]) or "/"
        user = _user_path(top, state)
        if user is None:
            return None
        return files.glob(user, [p for p in parts[fixed:] if p], recursive, hidden)

    for function in (routed_open, routed_listdir, routed_mkdir, routed_makedirs, routed_move):
        function.__module__ = CELLS_MODULE
    builtins.open = io.open = routed_open
    os.listdir = routed_listdir
    os.mkdir, os.makedirs = routed_mkdir, routed_makedirs
    os.rename, os.replace = renaming("rename"), renaming("replace")
    shutil.move = routed_move
    routed_glob.__module__ = routed_iglob.__module__ = CELLS_MODULE
    glob.glob, glob.iglob = routed_glob, routed_iglob
    os.path.exists = routed("exists", None)
    os.path.isfile = routed("isfile", "file")
    os.path.isdir = routed("isdir", "dir")
