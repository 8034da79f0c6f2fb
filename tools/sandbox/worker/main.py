"""The sandbox worker: runs cells in one persistent namespace, like a notebook.

Started by the host through boot.py (``python -I -S boot.py IN_FD OUT_FD``) inside
whatever isolation the OS offers (see isolation.py). Stdlib only: no site-packages are
visible. The two fds carry protocol frames; fd 1 and 2 are a pipe the host captures as
the cell's output. Tool calls leave only through the ``call`` frame; the host decides.

``main`` wires the parts: limits, the channel, the cells' namespace, the routing of
file calls; then runs each cell the host sends and answers with its ``done`` frame.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import threading
from typing import cast

from . import paths, programs, protocol, rlimits
from .cell import run_cell
from .channel import Channel
from .connected_files import ToolFiles
from .namespace import build_namespace
from .state import Toolspace, WorkerState


def _in_forked_child(in_fd: int, out_fd: int) -> None:
    # A process forked by a cell must not speak the protocol: only the worker does.
    for fd in (in_fd, out_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


def main(argv: list[str]) -> int:
    in_fd, out_fd = int(argv[1]), int(argv[2])
    setup = protocol.read_frame(in_fd)
    rlimits.drop_privileges(setup.get("uid"), setup.get("gid"))
    limits = setup["limits"]
    rlimits.apply_limits(limits)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.register_at_fork(after_in_child=lambda: _in_forked_child(in_fd, out_fd))
    # Every print reaches the pipe at once (stdout is a TextIOWrapper here, as always).
    cast(io.TextIOWrapper, sys.stdout).reconfigure(write_through=True)
    spec = setup.get("namespace") or {}
    servers = spec.get("servers") or {}
    state = WorkerState(Toolspace.of(servers, spec.get("signatures")), os.getpid())
    channel = Channel(in_fd, out_fd, state)
    ns = build_namespace(channel, spec, state.toolspace)
    files = ToolFiles.find(
        servers, lambda server: lambda tool, **kwargs: getattr(ns[server], tool)(**kwargs),
        lambda: channel.changes)
    paths.install(state, files)
    programs.install(state)
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
        state.folder = job.get("folder") or None
        state.named = dict(job.get("named") or {})
        state.noted = set()
        if files is not None:
            files.forget()
        result = run_cell(job["code"], number, ns, limits, state)
        if os.getpid() != state.pid:
            os._exit(0)  # a child the cell forked has finished the cell's code
        sys.stdout.flush()
        sys.stderr.flush()
        # SIGINT is blocked while writing: one raised here comes after the whole frame.
        with contextlib.suppress(KeyboardInterrupt):
            channel.send(result)
        if result.get("restart"):
            return 0  # the host starts a fresh worker, with a fresh CPU allowance
