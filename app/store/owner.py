"""Which process runs a session's turn, and whether that process is gone.

A session is ``active`` while a turn runs. A process killed mid-turn (kill -9, a power
cut, an OOM kill) leaves it so, and the next deskmate to start closes it as
``interrupted`` — but only when it is sure the owner is dead: the TUI and a
``deskmate run`` may each hold an active session at once. A pid alone could be reused
by an unrelated process, so on Linux the process's start time (``/proc/PID/stat``)
is kept beside it; a session recorded on another host is never judged from here.
"""

from __future__ import annotations

import os
import socket
import sys
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Owner:
    host: str
    pid: int
    started: str  # the process's start time in clock ticks since boot; "" where unknown


@cache
def this_process() -> Owner:
    pid = os.getpid()
    stat = _proc_stat(pid)
    return Owner(socket.gethostname(), pid, stat[1] if stat is not None else "")


def is_gone(owner: Owner) -> bool:
    """True only when the owner process has certainly ended."""
    if owner.host != this_process().host or sys.platform == "win32":
        return False  # Windows' os.kill(pid, 0) would send the process a Ctrl-C
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, as another user's process
    except OSError:
        return False
    stat = _proc_stat(owner.pid)
    if stat is None:
        return False  # no /proc (macOS): the pid is alive, and trusted
    state, started = stat
    # A zombie is dead, only not yet reaped by its parent; another start time means
    # the pid now belongs to a different process.
    return state in ("Z", "X") or bool(owner.started and started != owner.started)


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time) from ``/proc/PID/stat``, or None where there is none."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: fields after the last
    # ')' are fixed. The state is field 3, the start time field 22.
    fields = text[text.rfind(")") + 2:].split()
    return (fields[0], fields[19]) if len(fields) > 19 else None
