"""The worker's end of the protocol: cells in, tool calls out, interrupts.

One reader thread sorts the host's frames (cells to run, replies to tool calls,
interrupts); writes are serialized and never cut by an interrupt.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
from typing import Any

from . import protocol
from .connected_files import UNCHANGING_TOOLS
from .state import CELLS_MODULE, WorkerState


class ToolError(Exception):
    """A tool call the host refused or that failed; the message says why."""

    __module__ = CELLS_MODULE


class Channel:
    """Frames on two fds; ``call`` is a tool call that waits for its reply."""

    __module__ = CELLS_MODULE  # named in the signature help(server) shows

    def __init__(self, in_fd: int, out_fd: int, state: WorkerState) -> None:
        self.in_fd, self.out_fd, self.state = in_fd, out_fd, state
        self.jobs: queue.Queue[dict | None] = queue.Queue()
        self.replies: queue.Queue[dict | None] = queue.Queue()
        self._lock = threading.Lock()
        self._next_id = 0
        # Tool calls that may have changed something (any but the file tools' reads and
        # listings): a folder's listing kept by ToolFiles is good until the next one.
        self.changes = 0

    def send(self, message: dict) -> None:
        # An interrupt must not land in the middle of a frame.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            with self._lock:
                protocol.write_frame(self.out_fd, message)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def read_forever(self) -> None:
        while True:
            try:
                message = protocol.read_frame(self.in_fd)
            except (protocol.ProtocolError, OSError):
                self.jobs.put(None)
                self.replies.put(None)
                return
            kind = message["type"]
            if kind == "exec":
                self.jobs.put(message)
            elif kind == "reply":
                self.replies.put(message)
            elif kind == "interrupt" and self.state.in_cell:
                os.kill(self.state.pid, signal.SIGINT)

    def call(self, kind: str, payload: dict) -> Any:  # the reply's JSON value
        if kind == "tool" and payload.get("tool") not in UNCHANGING_TOOLS:
            self.changes += 1
        self._next_id += 1
        call_id = self._next_id
        self.send({"type": "call", "id": call_id, "kind": kind, "payload": payload})
        while True:
            reply = self.replies.get()
            if reply is None:
                raise ToolError("the host closed the tool channel")
            if reply.get("id") == call_id:
                break  # replies to calls abandoned by an interrupt are dropped
        if not reply.get("ok"):
            raise ToolError(reply.get("error") or "tool call failed")
        return reply.get("value")
