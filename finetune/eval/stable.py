"""What a ``--stable`` task holds while it runs: its workspace folder, the same path in
every run, and the local site's port.

Two runs compare task by task only where the model saw the same prompt, and the
workspace path and site address are in the prompt. Two ``deskmate eval --stable``
processes side by side (two harnesses on one split, or a second run resumed beside the
first) used to give the second a random folder whenever both reached a task at once,
and a folder left by a killed run did the same in every later run: half of a split ran
off-stable without anyone asking. So each task's folder and the site are held with a
lock the OS releases when its process ends: a second run waits for the first to finish
that task, and a folder whose lock nobody holds was left behind and is moved aside.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def lock_path(name: str) -> Path:
    return Path(tempfile.gettempdir()) / f"deskmate-eval-{name}.lock"


@contextmanager
def held(name: str) -> Iterator[None]:
    """``<tmp>/deskmate-eval-<name>.lock`` held for the block, across processes; while
    another eval holds it, this one says so and waits."""
    path = lock_path(name)
    with open(path, "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            warnings.warn(f"another --stable eval holds {path}: waiting for it to finish "
                          "that task, so this run sees the same paths", RuntimeWarning,
                          stacklevel=3)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def stable_root(task_id: str) -> Iterator[Path]:
    """``<tmp>/deskmate-eval-<task_id>-stable``, made empty for this run and held
    until the block ends (the caller removes it, or keeps it for inspection)."""
    with held(f"{task_id}-stable"):
        root = Path(tempfile.gettempdir()) / f"deskmate-eval-{task_id}-stable"
        if root.exists():
            # Nobody holds its lock: a killed run or --keep-workspaces left it. Moved,
            # not deleted: a kept workspace may be what someone is looking at.
            aside = tempfile.mkdtemp(prefix=f"deskmate-eval-{task_id}-left-")
            os.rename(root, aside)  # onto the empty folder mkdtemp made
            warnings.warn(f"{root} was left by an earlier run: moved to {aside}",
                          RuntimeWarning, stacklevel=3)
        root.mkdir()
        yield root
