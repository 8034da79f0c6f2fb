"""The sandbox's public value types: limits, the isolation we got, a cell's result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox; each applies to the worker and its children."""

    cell_timeout_s: float = 30.0  # wall clock per cell (host time in tool calls excluded)
    cpu_s: int = 30               # CPU seconds per cell (RLIMIT_CPU, reset before each cell)
    # CPU seconds over the worker's life: RLIMIT_CPU's hard limit, which code in the
    # sandbox cannot raise (an unprivileged process only ever lowers it). The worker is
    # restarted once less than cpu_s of it is left, so each cell gets its full cpu_s.
    worker_cpu_s: int = 600
    memory_mb: int = 1024         # address space per process (RLIMIT_AS)
    file_size_mb: int = 64        # largest file a cell may write (RLIMIT_FSIZE)
    max_processes: int = 32       # processes and threads of the sandbox user (RLIMIT_NPROC)
    output_chars: int = 200_000   # printed output kept per cell, head + tail


@dataclass(frozen=True)
class Isolation:
    """What the OS gave us, reported as is to the UI and the README."""

    level: Literal["bwrap", "unshare", "rlimits"]
    network: bool        # True = the sandbox can reach the network
    home_visible: bool   # True = the sandbox can read the user's home directory
    details: str


CellStatus = Literal["ok", "error", "timeout", "memory", "killed"]


@dataclass(frozen=True)
class CellResult:
    status: CellStatus
    stdout: str
    error: str               # traceback trimmed to the cell's frames, or the reason
    value: str | None        # repr of the cell's last expression, None if none
    duration_s: float
    state_lost: bool         # the worker was restarted: variables are gone
    ran: bool = True         # False: refused before it ran (the user said no)


@dataclass(frozen=True)
class RequestFiles:
    """The user's files a cell's request names, for its relative paths: the one folder
    of the user's the request names (None: none, or several that no one holds), and the
    file names it gives mapped to their full paths ("LINES.txt" -> "/r/LINES.txt")."""

    folder: str | None
    named: tuple[tuple[str, str], ...] = ()


class ToolError(Exception):
    """A tool call the host refused or that failed.

    Host-side, a handler raises it to send a helpful message into the sandbox; inside
    the sandbox the same name is raised by the failing call.
    """


class SandboxError(RuntimeError):
    """The sandbox could not be started (the message says what to do)."""
