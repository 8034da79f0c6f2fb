"""The host side: starts the worker, runs cells, answers its tool calls, enforces time.

One worker process per Sandbox. Cells and the worker's tool calls travel as frames on
dedicated pipes (protocol.py); the worker's fd 1 and 2 are a third pipe captured as the
cell's output. The handler runs here, in the host, on the thread that called execute().
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import cast

from deskmate.tools.sandbox.capture import OutputBuffer, truncate_middle
from deskmate.tools.sandbox.gate import CellGate
from deskmate.tools.sandbox.isolation import (
    Plan,
    command,
    plan,
    sandbox_uid,
    scrubbed_env,
    worker_args,
)
from deskmate.tools.sandbox.results import (
    CellResult,
    CellStatus,
    Isolation,
    Limits,
    RequestFiles,
    SandboxError,
    ToolError,
)
from deskmate.tools.sandbox.worker import protocol

# (kind, payload) -> the call's value; what JSON cannot hold is sent as its str.
Handler = Callable[[str, dict], object]
START_TIMEOUT_S = 20.0
CANCEL_GRACE_S = 1.0  # after an interrupt, how long a cell may take to stop
HELPERS = ("search_tools", "tool_help", "read_resource")
DEFAULT_LIMITS = Limits()


class _Worker:
    """One running worker process and its three pipes."""

    def __init__(self, proc: subprocess.Popen, to_worker: int, from_worker: int,
                 output: int) -> None:
        self.proc, self.to_worker, self.from_worker, self.output = (
            proc, to_worker, from_worker, output)
        self.frames = protocol.FrameBuffer()
        self.output_open = True

    def send(self, message: dict | bytes) -> None:
        protocol.write_frame(self.to_worker, message)

    def drain_output(self, into: OutputBuffer) -> None:
        while self.output_open:
            try:
                data = os.read(self.output, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                self.output_open = False
                return
            into.feed(data)

    def poll(self, timeout: float, out: OutputBuffer) -> list[dict] | None:
        """Wait up to ``timeout`` for the worker: its output goes into ``out``; returns the
        frames that arrived ([] for none yet), None when the worker closed its channel."""
        fds = [self.from_worker] + ([self.output] if self.output_open else [])
        readable, _, _ = select.select(fds, [], [], timeout)
        if self.output in readable:
            self.drain_output(out)
        if self.from_worker not in readable:
            return []
        data = os.read(self.from_worker, 1 << 16)
        return self.frames.feed(data) if data else None

    def kill(self, uid: int | None) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if uid is not None:
            _kill_uid(uid)  # children that left the process group (no pid namespace)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(5)
        for fd in (self.to_worker, self.from_worker, self.output):
            with contextlib.suppress(OSError):
                os.close(fd)


def _kill_uid(uid: int) -> None:
    """SIGKILL every process of a throwaway uid (unique to one sandbox)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError):
            if entry.stat().st_uid == uid:
                os.kill(int(entry.name), signal.SIGKILL)


class Sandbox:
    """A persistent, isolated Python worker; see the package docstring."""

    def __init__(self, handler: Handler | None = None, *, namespace: dict | None = None,
                 limits: Limits = DEFAULT_LIMITS, workdir: Path | None = None,
                 gate: CellGate | None = None) -> None:
        """``gate`` decides whether a cell may run where nothing isolates it (rlimits);
        None: it runs (the debugging CLI, tests); the agent always passes one."""
        self._handler = handler
        self._gate = gate
        # Without a handler there is nobody to answer: no servers, no helpers.
        self._namespace = (namespace or {}) if handler is not None else {}
        self._limits = limits
        self._given_workdir = Path(workdir).resolve() if workdir is not None else None
        self._workdir: Path | None = None
        self._owner: tuple[int, int] | None = None  # a given workdir's owner, restored on close
        self._plan: Plan | None = None
        self._uid: int | None = None
        self._worker: _Worker | None = None
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------

    @property
    def isolation(self) -> Isolation:
        if self._plan is None:
            self._plan = plan()
        return self._plan.isolation

    @property
    def limits(self) -> Limits:
        return self._limits

    @property
    def workdir(self) -> Path | None:
        return self._workdir

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the worker (no-op when it runs). Raises SandboxError when it cannot."""
        if self._worker is not None and self._worker.proc.poll() is None:
            return
        if self._plan is None:
            self._plan = plan()
        if self._workdir is None:
            self._prepare_workdir()
        self._spawn()

    def restart(self) -> None:
        """A fresh worker: every variable is gone (the caller asked, so no state_lost)."""
        with self._lock:
            self._stop()
            self.start()

    def close(self) -> None:
        with self._lock:
            self._stop()
            if self._workdir is None:
                return
            if self._given_workdir is None:
                shutil.rmtree(self._workdir, ignore_errors=True)
            elif self._owner is not None:
                _chown_tree(self._workdir, *self._owner)
            self._workdir = None

    def _prepare_workdir(self) -> None:
        if self._given_workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="deskmate-sandbox-"))
        else:
            self._given_workdir.mkdir(parents=True, exist_ok=True)
            self._workdir = self._given_workdir
            st = self._workdir.stat()
            self._owner = (st.st_uid, st.st_gid)
        if self._plan is not None and self._plan.drop_uid:
            # The throwaway uid (unique to this sandbox) must own the only writable place.
            self._uid = sandbox_uid()
            _chown_tree(self._workdir, self._uid, self._uid)

    def _spawn(self) -> None:
        assert self._plan is not None and self._workdir is not None
        level = self._plan.isolation.level
        to_r, to_w = os.pipe()
        from_r, from_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            argv = command(level, self._workdir, worker_args(level, (to_r, from_w)),
                           uid=self._uid, fds=(to_r, from_w))
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w, pass_fds=(to_r, from_w),
                cwd=self._workdir, env=scrubbed_env(self._workdir), start_new_session=True)
        except OSError as exc:
            for fd in (to_r, to_w, from_r, from_w, out_r, out_w):
                os.close(fd)
            raise SandboxError(f"could not start the sandbox worker ({level}): {exc}") from exc
        for fd in (to_r, from_w, out_w):
            os.close(fd)
        os.set_blocking(from_r, False)
        os.set_blocking(out_r, False)
        worker = _Worker(proc, to_w, from_r, out_r)
        output = OutputBuffer(4000)
        try:
            # The unshare jail has dropped to the uid before the worker started.
            uid = None if level == "unshare" else self._uid
            worker.send({"type": "setup", "limits": asdict(self._limits),
                         "namespace": self._namespace, "uid": uid, "gid": uid})
            frame = self._next_frame(worker, time.monotonic() + START_TIMEOUT_S, output)
        except (OSError, protocol.ProtocolError) as exc:
            frame = {"type": f"failure: {exc}"}
        if frame is None or frame.get("type") != "ready":
            worker.drain_output(output)
            worker.kill(self._uid)
            raise SandboxError(
                f"the sandbox worker did not start ({level}, exit code {proc.returncode}): "
                f"{output.text().strip() or 'no output'}. Set DESKMATE_SANDBOX_ISOLATION="
                "rlimits to try without OS isolation.")
        self._worker = worker

    def _stop(self) -> None:
        if self._worker is not None:
            self._worker.kill(self._uid)
            self._worker = None

    def _next_frame(self, worker: _Worker, deadline: float, output: OutputBuffer) -> dict | None:
        """Wait for one frame from the worker (None at the deadline or if it died)."""
        while (left := deadline - time.monotonic()) > 0:
            frames = worker.poll(left, output)
            if frames is None:
                return None
            if frames:
                return frames[0]
        return None

    # -- cells -----------------------------------------------------------------------

    def execute(self, code: str, *, timeout: float | None = None,
                cancel: threading.Event | None = None,
                files: RequestFiles | None = None) -> CellResult:
        """Run one cell; never raises for anything the code does (SandboxError if the
        worker cannot be started at all). ``files``: the user's files the cell's request
        names, where its relative paths to them lead (worker/paths.py)."""
        # Asked before the lock: the user may take a while, and close() must not wait.
        if self._gate is not None and (refusal := self._gate.refusal(code, self.isolation)):
            return CellResult("error", "", refusal, None, 0.0, False, ran=False)
        with self._lock:
            began = time.monotonic()
            lost = False  # the worker died between cells: this result says so
            if self._worker is None or self._worker.proc.poll() is not None:
                lost = self._worker is not None
                self._stop()
                self.start()
            assert self._worker is not None
            limit = self._limits.cell_timeout_s if timeout is None else timeout
            out = OutputBuffer(self._limits.output_chars)
            self._worker.drain_output(out)  # what background processes printed meanwhile
            try:
                job: dict = {"type": "exec", "code": code}
                if files is not None:
                    job |= {"folder": files.folder, "named": dict(files.named)}
                self._worker.send(job)
                status, error, value, died = self._run(self._worker, limit, cancel, out)
            except protocol.ProtocolError as exc:
                status, error, value, died = (
                    "killed", f"the worker broke the protocol ({exc})", None, True)
            except OSError as exc:
                status, error, value, died = ("killed", f"the worker died ({exc})", None, True)
            if died:
                self._worker.drain_output(out)
                rc = self._worker.proc.poll()
                self._stop()
                if status == "killed" and rc is not None and "MemoryError" in out.text():
                    status = "memory"
                error += "; it was restarted and every variable is gone"
                with contextlib.suppress(SandboxError):
                    self.start()
            return CellResult(status, out.text(), error,
                              None if value is None else truncate_middle(
                                  value, self._limits.output_chars),
                              time.monotonic() - began, lost or died)

    def _run(self, worker: _Worker, limit: float, cancel: threading.Event | None,
             out: OutputBuffer) -> tuple[CellStatus, str, str | None, bool]:
        """(status, error, value, worker killed) of the running cell."""
        deadline = time.monotonic() + limit
        interrupted_at: float | None = None
        while True:
            now = time.monotonic()
            if cancel is not None and cancel.is_set() and interrupted_at is None:
                interrupted_at = now
                worker.send({"type": "interrupt"})
            if interrupted_at is not None and now - interrupted_at > CANCEL_GRACE_S:
                return "killed", "cancelled; the cell did not stop when interrupted", None, True
            if now >= deadline:
                return "timeout", f"the cell ran past its {limit:g} s time limit", None, True
            wait = deadline - now if cancel is None else min(deadline - now, 0.05)
            frames = worker.poll(wait, out)
            if frames is None:
                code = worker.proc.wait()
                return "killed", f"the worker died (exit status {code})", None, True
            for frame in frames:
                if frame["type"] == "done":
                    worker.drain_output(out)
                    # The worker's run_cell sends one of CellStatus.
                    status = cast(CellStatus, str(frame.get("status")))
                    error = str(frame.get("error") or "")
                    if interrupted_at is not None and status == "killed":
                        error = "cancelled"
                    # The worker asks to be restarted when it has used its CPU time.
                    return status, error, frame.get("value"), bool(frame.get("restart"))
                if frame["type"] != "call":
                    raise protocol.ProtocolError(f"unexpected {frame['type']!r} frame")
                started = time.monotonic()
                worker.send(self._answer(frame))
                deadline += time.monotonic() - started  # the host's time is not the cell's

    def _answer(self, frame: dict) -> bytes:
        """The encoded reply to a call: the handler's value (what JSON cannot hold becomes
        its str), or the error that the cell raises as ToolError."""
        reply: dict[str, object] = {"type": "reply", "id": frame.get("id")}
        kind, payload = frame.get("kind"), frame.get("payload")
        allowed = ("tool", *(h for h in HELPERS if h in self._namespace.get("helpers", ())))
        if self._handler is None:
            error = "this sandbox has no tools"
        elif kind not in allowed or not isinstance(payload, dict):
            error = f"unknown call {kind!r}"
        else:
            try:
                value = self._handler(kind, payload)
                return protocol.encode({**reply, "ok": True, "value": value}, default=str)
            except ToolError as exc:
                error = str(exc)
            except protocol.ProtocolError as exc:
                error = f"the tool's result is too large for the sandbox: {exc}"
            except Exception as exc:  # the handler's bug must not kill the cell's host
                error = f"the tool call failed in deskmate: {type(exc).__name__}: {exc}"
        return protocol.encode({**reply, "ok": False, "error": error})


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid, follow_symlinks=False)
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            with contextlib.suppress(OSError):
                os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)
