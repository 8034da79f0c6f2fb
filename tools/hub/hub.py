"""``Hub``: all the user's MCP servers behind one thread-safe, synchronous API.

An asyncio loop on a background thread owns every connection; callers (the agent's
threads, the CLI, Textual workers) block on futures. Servers start in parallel, each
with its own timeout, so a slow or broken one never holds up the others.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from deskmate.tools.hub.connection import Connection, ServerState, describe_exception
from deskmate.tools.hub.results import (
    ServerUnavailable,
    ToolCancelled,
    ToolResult,
    ToolTimeout,
    from_mcp,
)
from deskmate.tools.hub.servers import ServerConfig
from deskmate.tools.spec import ToolSpec

_T = TypeVar("_T")


class Hub:
    def __init__(self, servers: Iterable[ServerConfig], log_dir: Path,
                 on_change: Callable[[ServerState], None] | None = None) -> None:
        self._on_change = on_change or (lambda state: None)
        # The SDK logs transport errors with tracebacks; we report them in each server's
        # state instead, and must not print over a Textual screen.
        logging.getLogger("mcp").setLevel(logging.CRITICAL)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-hub",
                                        daemon=True)
        self._thread.start()
        self._conns: dict[str, Connection] = {}
        self._closed = False
        for cfg in servers:
            self._run(self._add(cfg, log_dir / f"{cfg.name}.log"))

    async def _add(self, cfg: ServerConfig, log_path: Path) -> None:
        self._conns[cfg.name] = Connection(cfg, log_path, self._on_change)

    def _run(self, coro: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # ---------------------------------------------------------------- servers

    def start(self, names: Iterable[str] | None = None) -> list[ServerState]:
        """Connect the enabled servers (all, or ``names``) in parallel; wait for each."""
        conns = [self._conn(n) for n in names] if names is not None else [
            c for c in self._conns.values() if c.config.enabled]

        async def start_all() -> list[ServerState]:
            return list(await asyncio.gather(*(c.start() for c in conns)))

        return self._run(start_all())

    def restart(self, name: str) -> ServerState:
        return self.start([name])[0]

    def stop(self, name: str) -> None:
        self._run(self._conn(name).shutdown())

    def states(self) -> list[ServerState]:
        return [c.state for c in self._conns.values()]

    def state(self, name: str) -> ServerState:
        return self._conn(name).state

    def tools(self) -> list[ToolSpec]:
        return [t for c in self._conns.values() if c.state.status == "ready"
                for t in c.state.tools]

    def stderr(self, name: str, lines: int = 50) -> str:
        return self._conn(name).stderr_tail(lines)

    def _conn(self, name: str) -> Connection:
        try:
            return self._conns[name]
        except KeyError:
            known = ", ".join(self._conns) or "none configured"
            raise ServerUnavailable(f"no MCP server named {name!r} (servers: {known})") from None

    # ---------------------------------------------------------------- calls

    def call(self, server: str, tool: str, arguments: dict[str, Any] | None = None, *,
             timeout: float | None = None, cancel: threading.Event | None = None) -> ToolResult:
        """Call a tool; raise ToolCallError subclasses when no result could be had.

        A stdio server that crashed is restarted once, here, before the call.
        """
        conn = self._conn(server)
        timeout = timeout or conn.config.call_timeout
        future: Future = asyncio.run_coroutine_threadsafe(
            self._call(conn, tool, arguments or {}, timeout), self._loop)
        while True:
            try:
                return future.result(timeout=0.05)
            except TimeoutError:
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    raise ToolCancelled(f"{server}.{tool} was cancelled") from None

    async def _call(self, conn: Connection, tool: str, arguments: dict[str, Any],
                    timeout: float) -> ToolResult:
        name = conn.config.name
        if conn.state.status == "disabled":
            raise ServerUnavailable(f"MCP server {name!r} is disabled in the config")
        session = conn.session
        if session is None:
            state = await conn.start()
            session = conn.session
            if state.status != "ready" or session is None:
                raise ServerUnavailable(f"MCP server {name!r} is not available: {state.error}")
        started = time.perf_counter()
        try:
            result = await asyncio.wait_for(
                session.call_tool(tool, arguments, read_timeout_seconds=timeout),
                timeout + 1)
        except TimeoutError:
            raise ToolTimeout(f"{name}.{tool} did not answer within {timeout:g} s") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if conn.config.transport == "stdio" and not await conn.alive():
                await conn.mark_crashed(f"exited during a call to {tool}")
                raise ServerUnavailable(f"MCP server {name!r} crashed during {tool} "
                                        "(it restarts on the next call):\n"
                                        + conn.stderr_tail(8)) from exc
            if "timed out" in str(exc).lower() or "timeout" in type(exc).__name__.lower():
                raise ToolTimeout(f"{name}.{tool} did not answer within {timeout:g} s") from exc
            raise ServerUnavailable(f"{name}.{tool} failed: {describe_exception(exc)}") from exc
        return from_mcp(name, tool, result, time.perf_counter() - started)

    # ---------------------------------------------------------------- shutdown

    def close(self) -> None:
        """Stop every server (their process trees too) and the loop thread."""
        if self._closed:
            return
        self._closed = True

        async def stop_all() -> None:
            await asyncio.gather(*(c.shutdown() for c in self._conns.values()),
                                 return_exceptions=True)

        try:
            self._run(stop_all(), timeout=30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    def __enter__(self) -> Hub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
