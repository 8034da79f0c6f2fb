"""The worker's resource limits: set once at start, plus each cell's CPU budget.

RLIMIT_CPU's soft limit is moved before each cell to "used so far + the cell's budget"
(SIGXCPU ends the cell, the worker lives on); its hard limit is the worker's CPU life,
which code in the sandbox cannot raise. Once less than a cell's budget is left of it,
the worker asks the host for a fresh one.
"""

from __future__ import annotations

import math
import os
import resource
import signal
from types import FrameType

CPU_GRACE_S = 2  # RLIMIT_CPU's hard limit above the soft one: SIGXCPU before SIGKILL


class CPULimitExceeded(BaseException):
    """RLIMIT_CPU's soft limit was reached (SIGXCPU)."""


def drop_privileges(uid: int | None, gid: int | None) -> None:
    if uid is None or gid is None:
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
    signal.signal(signal.SIGXCPU, _on_xcpu)


# Whether SIGXCPU ends the running cell. Once past the soft limit the kernel sends it
# again every CPU second, and one that landed after the cell had ended (while the
# worker sent its result) killed the worker: the first one ends the cell, the rest
# are ignored until the next cell's budget is set. The hard limit still kills.
_armed = False


def _on_xcpu(signum: int, frame: FrameType | None) -> None:
    global _armed
    if _armed:
        _armed = False
        raise CPULimitExceeded


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_life() -> int | None:
    """The CPU seconds the worker may use in all (below the hard limit), None: no end."""
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    return None if hard == resource.RLIM_INFINITY else max(hard - CPU_GRACE_S, 0)


def set_cpu_budget(seconds: int | None) -> None:
    """The running cell may use ``seconds`` more of CPU; None: lift the cell's budget."""
    global _armed
    _armed = seconds is not None
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    life = cpu_life()
    soft = (hard if life is None else life) if seconds is None else (
        math.ceil(_cpu_used()) + seconds)
    if life is not None:
        soft = min(soft, life)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def cpu_spent(cell_s: int) -> bool:
    """Less than one cell's CPU budget is left of the worker's: it must be restarted."""
    life = cpu_life()
    return life is not None and _cpu_used() + cell_s > life
