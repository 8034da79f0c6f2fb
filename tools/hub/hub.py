"""``Hub``: all the user's MCP servers behind one thread-safe, synchronous API.

An asyncio loop on a background thread owns every connection; callers (the agent's
threads, the CLI, Textual workers) block on futures. Servers start in parallel, each
with its own timeout, so a slow or broken one never holds up the others.
"""

from __future__ import annotations

import asyncio
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from concurrent.futures import Future
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from deskmate.tools.hub.calls import ActiveCall, CallClock, CallHooks, Progress
from deskmate.tools.hub.connection import Connection, ServerState, describe_exception
from deskmate.tools.hub.elicitation import Asker, LinkRefused, decline
from deskmate.tools.hub.published import (
    PromptSpec,
    PromptText,
    ResourceContents,
    ResourceSpec,
    TemplateSpec,
    owner,
)
from deskmate.tools.hub.reading import get_prompt, read_resource
from deskmate.tools.hub.results import (
    ServerUnavailable,
    ToolCancelled,
    ToolDisabled,
    ToolResult,
    ToolTimeout,
    from_mcp,
    schema_mismatch,
)
from deskmate.tools.hub.sampling import Sampler
from deskmate.tools.hub.servers import ServerConfig

if TYPE_CHECKING:
    from deskmate.tools.hub.oauth import OAuthSetup, OpenUrl
from deskmate.tools.spec import ToolSpec

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.shared.dispatcher import ProgressFnT
    from mcp.types import CallToolResult

_T = TypeVar("_T")


class Hub:
    def __init__(self, servers: Iterable[ServerConfig], log_dir: Path,
                 on_change: Callable[[ServerState], None] | None = None,
                 asker: Asker = decline, oauth: OAuthSetup | None = None,
                 sampler: Sampler | None = None) -> None:
        """``asker`` answers the servers' questions asked outside a call with hooks of
        its own (by default they are declined). ``oauth``: where HTTP/SSE servers'
        sign-ins are kept (without it, no OAuth), and who may answer a new one.
        ``sampler``: who lets servers use the model (MCP sampling); without one,
        sampling is not declared."""
        self._on_change = on_change or (lambda state: None)
        self._oauth = oauth
        self._asker = asker
        self._sampler = sampler
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
        self._conns[cfg.name] = conn = Connection(cfg, log_path, self._on_change,
                                                  oauth=self._oauth)
        conn.callbacks.asker = self._asker
        conn.callbacks.sampler = self._sampler

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

    def sign_in(self, name: str, answer: OpenUrl, timeout: float = 300.0) -> ServerState:
        """Sign in to an HTTP/SSE server (``answer`` shows the authorization URL), then
        restart it with its new tokens. ``timeout``: how long the person may take."""
        if self._oauth is None:
            raise ServerUnavailable("this hub keeps no sign-ins (it was opened without oauth)")
        conn = self._conn(name)
        # A connection of its own, allowed to wait for a person; the hub's own one never
        # opens a browser by itself later.
        cfg = replace(conn.config, startup_timeout=max(conn.config.startup_timeout, timeout))
        signing = Connection(cfg, conn.log_path, lambda state: None,
                             oauth=replace(self._oauth, answer=answer))

        async def sign_in() -> ServerState:
            await conn.shutdown()
            state = await signing.start()
            await signing.shutdown()
            if state.status != "ready":
                conn.set(status=state.status, error=state.error)
                return conn.state
            return await conn.start()

        return self._run(sign_in())

    def states(self) -> list[ServerState]:
        return [c.state for c in self._conns.values()]

    def state(self, name: str) -> ServerState:
        return self._conn(name).state

    def tools(self) -> list[ToolSpec]:
        """The tools the agent may use: the ready servers' tools but those turned off.
        (Each server's ``state.tools`` still lists them all, for the servers screen.)"""
        return [t for c in self._conns.values() if c.state.status == "ready"
                for t in c.state.tools if t.name not in c.config.disabled_tools]

    def disabled_tools(self) -> frozenset[tuple[str, str]]:
        """(server, tool) of every tool turned off in the config."""
        return frozenset((c.config.name, t) for c in self._conns.values()
                         for t in c.config.disabled_tools)

    def set_disabled_tools(self, name: str, tools: Iterable[str]) -> ServerState:
        """Turn off exactly ``tools`` of ``name`` now, without restarting it (the config
        file is the caller's); ``tools()`` and ``call`` follow at once."""
        conn = self._conn(name)
        conn.config = replace(conn.config, disabled_tools=tuple(dict.fromkeys(tools)))
        self._on_change(conn.state)
        return conn.state

    # ---------------------------------------------------------------- prompts, resources

    def prompts(self) -> list[PromptSpec]:
        return [p for c in self._ready() for p in c.state.prompt_specs]

    def resources(self) -> list[ResourceSpec]:
        return [r for c in self._ready() for r in c.state.resource_specs]

    def templates(self) -> list[TemplateSpec]:
        return [t for c in self._ready() for t in c.state.templates]

    def read_resource(self, uri: str, server: str | None = None) -> ResourceContents:
        """Read ``uri`` from ``server``, or from the server that lists it (or whose
        template matches it)."""
        if server is None:
            server = owner(uri, self.resources(), self.templates())
            if server is None:
                known = ", ".join(r.uri for r in self.resources()[:8]) or "none"
                raise ServerUnavailable(f"no connected server lists the resource {uri!r} "
                                        f"(resources: {known}); name the server as "
                                        "@server:uri")
        conn = self._conn(server)
        return self._run(read_resource(conn, uri, conn.config.call_timeout))

    def get_prompt(self, server: str, name: str,
                   arguments: dict[str, str] | None = None) -> PromptText:
        conn = self._conn(server)
        return self._run(get_prompt(conn, name, arguments or {}, conn.config.call_timeout))

    def _ready(self) -> list[Connection]:
        return [c for c in self._conns.values() if c.state.status == "ready"]

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
             timeout: float | None = None, cancel: threading.Event | None = None,
             hooks: CallHooks | None = None) -> ToolResult:
        """Call a tool; raise ToolCallError subclasses when no result could be had.

        ``timeout`` (default: the server's ``call_timeout``) is how long the server may
        go without news: progress notifications start it again, and it stands still
        while a question the server asked waits for an answer (``hooks.asker``).
        A stdio server that crashed is restarted once, here, before the call.
        """
        conn = self._conn(server)
        if tool in conn.config.disabled_tools:
            raise ToolDisabled(f"{server}.{tool} is turned off in deskmate's config "
                               f"(`deskmate mcp enable-tool {server} {tool}` turns it on)")
        timeout = timeout or conn.config.call_timeout
        future: Future = asyncio.run_coroutine_threadsafe(
            self._call(conn, tool, arguments or {}, timeout, hooks or CallHooks()), self._loop)
        while True:
            try:
                return future.result(timeout=0.05)
            except TimeoutError:
                if cancel is not None and cancel.is_set():
                    future.cancel()
                    raise ToolCancelled(f"{server}.{tool} was cancelled") from None

    async def _call(self, conn: Connection, tool: str, arguments: dict[str, Any],
                    timeout: float, hooks: CallHooks) -> ToolResult:
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
        call = ActiveCall(tool, hooks, CallClock(timeout))
        try:
            result = await self._call_asking(conn, call, session, arguments)
        except TimeoutError:
            raise ToolTimeout(f"{name}.{tool} did not answer within {timeout:g} s") from None
        except (asyncio.CancelledError, LinkRefused):
            raise
        except Exception as exc:
            if (refused := schema_mismatch(name, tool, exc)) is not None:
                return refused  # the server answered, wrongly: a tool error, not a crash
            if await conn.lost_sign_in():
                raise ServerUnavailable(f"{name}.{tool} failed: MCP server {name} needs "
                                        f"sign-in: {conn.state.error}") from exc
            if conn.config.transport == "stdio" and not await conn.alive():
                await conn.mark_crashed(f"exited during a call to {tool}")
                raise ServerUnavailable(f"MCP server {name!r} crashed during {tool} "
                                        "(it restarts on the next call):\n"
                                        + conn.stderr_tail(8)) from exc
            if "timed out" in str(exc).lower() or "timeout" in type(exc).__name__.lower():
                raise ToolTimeout(f"{name}.{tool} did not answer within {timeout:g} s") from exc
            raise ServerUnavailable(f"{name}.{tool} failed: {describe_exception(exc)}") from exc
        return from_mcp(name, tool, result, time.perf_counter() - started)

    async def _call_asking(self, conn: Connection, call: ActiveCall, session: ClientSession,
                           arguments: dict[str, Any]) -> CallToolResult:
        """The call; when the server first needs the user to open a link (a -32042
        error: URL elicitation required), ask, and on accept call once more."""
        def attempt() -> Awaitable[CallToolResult]:
            return self._watched(conn, call, session.call_tool(
                call.tool, arguments, read_timeout_seconds=math.inf,
                progress_callback=self._progress(call)))

        try:
            return await attempt()
        except Exception as exc:
            links = conn.callbacks.required_links(exc, call.tool)
            if not links:
                raise
            for link in links:
                answer = await conn.callbacks.ask(link, call)
                if answer.action != "accept":
                    raise LinkRefused(
                        f"{conn.config.name}.{call.tool} needs the user to open {link.url} "
                        f"first ({link.message}); the user did not ({answer.action}"
                        + (f": {answer.reason}" if answer.reason else "") + ")") from exc
            return await attempt()

    @staticmethod
    async def _watched(conn: Connection, call: ActiveCall, request: Awaitable[_T]) -> _T:
        """Await ``request`` while ``call``'s clock runs; TimeoutError when it runs out.

        The SDK's own read timeout is off (it would count the time a person takes to
        answer the server's question); this clock stops then, and restarts on progress.
        """
        task = asyncio.ensure_future(request)
        clock = call.clock
        conn.callbacks.calls.append(call)
        try:
            while True:
                clock.changed.clear()
                left = clock.remaining()
                if left is not None and left <= 0:
                    raise TimeoutError
                news = asyncio.ensure_future(clock.changed.wait())
                done, _ = await asyncio.wait({task, news}, timeout=left,
                                             return_when=asyncio.FIRST_COMPLETED)
                news.cancel()
                if task in done:
                    return task.result()
        finally:
            conn.callbacks.calls.remove(call)
            if not task.done():
                task.cancel()
                with suppress(BaseException):
                    await task

    @staticmethod
    def _progress(call: ActiveCall) -> ProgressFnT:
        async def on_progress(progress: float, total: float | None, message: str | None
                              ) -> None:
            call.clock.touch()
            if call.hooks.on_progress is not None:
                call.hooks.on_progress(Progress(progress, total, message or ""))

        return on_progress

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
