"""Writing user files safely: a crash or a full disk leaves the old file or the new one,
never half of either."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO


@contextmanager
def atomic_writer(path: Path) -> Iterator[TextIO]:
    """A text handle on a temp file beside ``path``, renamed over it on success.

    For outputs written piece by piece (exports of any size); the file keeps the mode of
    the one it replaces, and an exception leaves ``path`` untouched.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write(path: Path, text: str) -> None:
    with atomic_writer(path) as handle:
        handle.write(text)
