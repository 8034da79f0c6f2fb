"""Python's file calls, replaced by ones that reach the user's paths through the file
tools (``ToolFiles``, connected_files.py): ``open``, ``os.listdir``, ``os.scandir``, the
existence checks of ``os.path`` and ``pathlib``, ``os.stat`` (and with it
``os.path.getsize``, ``os.path.getmtime`` and ``Path.stat``), ``glob`` and ``pathlib``'s
glob, making folders and moving. Each replacement keeps Python's behaviour for every other
path (the sandbox's own folder) and raises what Python would (``FileNotFoundError``,
``FileExistsError``).

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
from collections.abc import Callable

from .connected_files import ToolFiles
from .state import CELLS_MODULE, WorkerState

# Python's own, before install() replaces them.
_real = {"open": open, "isdir": os.path.isdir, "isfile": os.path.isfile,
         "exists": os.path.exists, "listdir": os.listdir, "mkdir": os.mkdir,
         "makedirs": os.makedirs, "rename": os.rename, "replace": os.replace,
         "move": shutil.move, "glob": glob.glob, "iglob": glob.iglob,
         "stat": os.stat, "scandir": os.scandir}


def install(files: ToolFiles, state: WorkerState, user_path: Callable[..., str | None],
            request_file: Callable[[str], str | None]) -> None:
    """Route a cell's plain file calls on the user's paths through ``files``; every
    other path keeps Python's own behaviour. ``user_path(file, write=False)``: the
    user's path a cell reaches for, else None; ``request_file(name)``: the request's
    file a relative name written stands for, else None (paths.py)."""

    def routed_open(file, mode="r", buffering=-1, encoding=None, *args, **kwargs):
        path = user_path(file, write=bool(set(str(mode)) & set("wax+")))
        if path is None:
            return _real["open"](file, mode, buffering, encoding, *args, **kwargs)
        return files.open(path, mode, encoding)

    def routed_listdir(path="."):
        user = user_path(path)
        return files.listdir(user) if user is not None else _real["listdir"](path)

    def is_kind(user: str, kind: str | None) -> bool:
        """Whether the user's path is there (``kind`` None), or a "file" or a "dir"."""
        found = files.kind(user)
        return found is not None if kind is None else found == kind

    def routed(name: str, kind: str | None):
        def check(path) -> bool:
            user = user_path(path)
            return _real[name](path) if user is None else is_kind(user, kind)
        check.__name__ = name
        check.__module__ = CELLS_MODULE
        return check

    def routed_stat(path, *, dir_fd=None, follow_symlinks=True):
        # "Which file is the newest / the largest": the 1.5B writes os.stat(p).st_mtime
        # or os.path.getmtime(p) (which calls os.stat, as os.path.getsize does), and on
        # the user's paths got a bare "No such file". The file info tool knows size,
        # kind and times.
        user = None if dir_fd is not None else user_path(path)
        if user is None:
            return _real["stat"](path, dir_fd=dir_fd, follow_symlinks=follow_symlinks)
        return files.info(user).stat()

    def routed_scandir(path="."):
        user = None if isinstance(path, int) else user_path(path)
        if user is None:
            return _real["scandir"](path)
        return _Entries(files, user, os.fspath(path))

    def made(path) -> str | None:
        """A folder or a move's destination to make as the user's: a relative one only
        where the request names it (its parents are missing by nature, which would
        make any new relative path look like the user's)."""
        if isinstance(path, str | bytes | os.PathLike) and not os.path.isabs(path):
            return request_file(os.fsdecode(path)) if state.in_cell else None
        return user_path(path, write=True)

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
        source, destination = user_path(src), made(dst)
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
            user = user_path(self)
            return real(self, *args, **kwargs) if user is None else is_kind(user, kind)
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
            user = user_path(self)
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

    def globbing_of(name: str):
        def globbing(pathname, *, root_dir=None, dir_fd=None, recursive=False,
                     include_hidden=False):
            found = _user_glob(pathname, root_dir, recursive, include_hidden)
            if found is None:
                return _real[name](pathname, root_dir=root_dir, dir_fd=dir_fd,
                                   recursive=recursive, include_hidden=include_hidden)
            return found if name == "glob" else iter(found)
        globbing.__name__ = name
        globbing.__module__ = CELLS_MODULE
        return globbing

    def _user_glob(pathname, root_dir, recursive, hidden) -> list[str] | None:
        """The matches of an absolute pattern whose folder before its first wildcard is
        the user's, through the listings; None for any other pattern."""
        pattern = os.fsdecode(pathname)
        if root_dir is not None or not os.path.isabs(pattern) or not glob.has_magic(pattern):
            return None
        parts = pattern.split("/")
        fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
        top = "/".join(parts[:fixed]) or "/"
        user = user_path(top)
        if user is None:
            return None
        return files.glob(user, [p for p in parts[fixed:] if p], recursive, hidden)

    for function in (routed_open, routed_listdir, routed_mkdir,
                     routed_makedirs, routed_move, routed_stat, routed_scandir):
        function.__module__ = CELLS_MODULE
    builtins.open = io.open = routed_open
    os.listdir = routed_listdir
    os.stat, os.scandir = routed_stat, routed_scandir
    os.mkdir, os.makedirs = routed_mkdir, routed_makedirs
    os.rename, os.replace = renaming("rename"), renaming("replace")
    shutil.move = routed_move
    glob.glob, glob.iglob = globbing_of("glob"), globbing_of("iglob")
    os.path.exists = routed("exists", None)
    os.path.isfile = routed("isfile", "file")
    os.path.isdir = routed("isdir", "dir")


class _Entry:
    """One entry of a user's folder, as os.scandir gives it (``os.DirEntry``): the
    listing says file or folder; ``stat()`` asks the file info tool."""

    __module__ = CELLS_MODULE

    def __init__(self, files: ToolFiles, folder: str, name: str, is_dir: bool,
                 shown: str) -> None:
        self._files, self._is_dir = files, is_dir
        self.name = name
        self.path = os.path.join(shown, name)
        self._user = f"{folder.rstrip('/')}/{name}"

    def is_dir(self, *, follow_symlinks=True) -> bool:
        return self._is_dir

    def is_file(self, *, follow_symlinks=True) -> bool:
        return not self._is_dir

    def is_symlink(self) -> bool:
        return False

    def inode(self) -> int:
        return 0

    def stat(self, *, follow_symlinks=True) -> os.stat_result:
        return self._files.info(self._user).stat()

    def __fspath__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"<DirEntry {self.name!r}>"


class _Entries:
    """os.scandir's iterator over a user's folder: one list_directory call, made when
    the scan starts (a missing folder raises there, as os.scandir does)."""

    __module__ = CELLS_MODULE

    def __init__(self, files: ToolFiles, folder: str, shown: str) -> None:
        self._entries = iter([_Entry(files, folder, name, is_dir, shown)
                              for name, is_dir in files.entries(folder)])

    def __iter__(self):
        return self

    def __next__(self) -> _Entry:
        return next(self._entries)

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._entries = iter(())
